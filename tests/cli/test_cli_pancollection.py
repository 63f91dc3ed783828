"""``pansharp-eval evaluate`` on PanCollection-shaped ``.h5`` test sets (built in tmp from the real
WorldView-2 scene): results as networks write them, a method's own scale, dataset-wide mistakes
refused once before anything is written, and the fair comparison of an incomplete method."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from cli_helpers import make_scene, noisy, one_error_line, write_toml
from pancollection_data import PEAK, RATIO, full_h5, nchw, reduced_h5, write_network_results, write_toml_for
from pansharp_iqa import evaluate_full, evaluate_reduced
from pansharp_iqa.cli.main import main

INDEXES = ("Q2n", "Q", "SAM", "ERGAS", "SCC")


def _run(capsys, *argv):
    code = main([str(a) for a in argv] + ["--no-progress"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def rr(tmp_path_factory):
    """A 4-scene reduced-resolution h5 (96 x 96 gt) and each scene's GSA-like fusion (DN)."""
    from pansharp_iqa.baselines import gsa

    root = tmp_path_factory.mktemp("pancollection")
    h5, scenes = reduced_h5(root / "data")
    fused = [gsa(s["ms"], s["pan"], sensor="WV2", ratio=RATIO) for s in scenes]
    return root, h5, scenes, fused


def _dataset(tmp_path: Path, h5: Path, **toml: object) -> Path:
    """A copy of the h5 in its own folder with a dataset.toml (WV2, 4, 11 bits, reduced)."""
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(h5, folder / h5.name)
    write_toml_for(folder / h5.name, "reduced", **toml)
    return folder / h5.name


def _scene_values(doc, method):
    return [doc["scenes"][s][method]["metrics"] for s in doc["dataset"]["scenes"]]


def test_network_names_a_stack_and_a_method_scale_give_the_librarys_numbers(tmp_path, capsys, rr):
    _, h5, scenes, fused = rr
    data = _dataset(tmp_path, h5, result_scale="dn")
    res = tmp_path / "res"
    write_network_results(res / "GSA", fused)                                  # GSA/results/output_mulExm_<i>.mat
    write_network_results(res / "PNN", fused, sub="", scale=1 / PEAK)         # PNN/output_mulExm_<i>.mat in [0, 1]
    (res / "PNN" / "method.toml").write_text('result_scale = "unit"\n')
    (res / "STK").mkdir()
    np.save(res / "STK" / "all.npy", nchw(fused))                            # one N x C x H x W stack
    np.save(res / "STK" / "notes.npy", fused[0])                             # matches no scene
    out = tmp_path / "out"
    code, stdout, stderr = _run(capsys, "evaluate", data, res / "GSA", res / "PNN", res / "STK", "--out", out)
    assert code == 0, stdout + stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["method_result_scales"] == {"PNN": "unit"}
    assert doc["summary"]["PNN"]["complete"] and not doc["failures"]
    unmatched = [line for line in stderr.splitlines() if "notes.npy" in line]
    assert len(unmatched) == 1 and "STK" in unmatched[0] and "output_mulExm_0.mat" in unmatched[0]
    for i, scene in enumerate(scenes):  # item i of the file is output_mulExm_<i> (from 0), to the last bit
        direct = evaluate_reduced(fused[i], scene["gt"], ratio=RATIO, bits=11)
        unit = evaluate_reduced(scipy.io.loadmat(res / "PNN" / f"output_mulExm_{i}.mat")["sr"] * float(PEAK),
                                scene["gt"], ratio=RATIO, bits=11)
        for method, expected in (("GSA", direct), ("STK", direct), ("PNN", unit)):
            got = _scene_values(doc, method)[i]
            assert {k: got[k] for k in INDEXES} == {k: float(expected[k]) for k in INDEXES}, (method, i)


def test_results_numbered_from_1_are_refused_unless_method_toml_says_so(tmp_path, capsys, rr):
    _, h5, scenes, fused = rr
    data = _dataset(tmp_path, h5, result_scale="dn")
    method = tmp_path / "ONE"
    method.mkdir()
    for i, image in enumerate(fused, start=1):  # numbered from 1: each would be scored against the next scene
        scipy.io.savemat(method / f"output_mulExm_{i}.mat", {"sr": image})
    out = tmp_path / "out"
    code, _, stderr = _run(capsys, "evaluate", data, method, "--out", out)
    assert code == 2 and not out.exists()  # refused before any work, naming the likely shift and the declaration
    one_error_line(stderr, "ONE", "output_mulExm_1..4 number the 4 items", "from 1, not from 0", "next",
                   "first_index = 1 in ONE/method.toml")
    (method / "method.toml").write_text("first_index = 1\n")  # declared: paired item i with output_mulExm_<i + 1>
    code, _, stderr = _run(capsys, "evaluate", data, method, "--out", out, "--format", "json")
    assert code == 0, stderr
    doc = json.loads((out / "results.json").read_text())
    for i, scene in enumerate(scenes):
        expected = evaluate_reduced(fused[i], scene["gt"], ratio=RATIO, bits=11)
        assert {k: _scene_values(doc, "ONE")[i][k] for k in INDEXES} == {k: float(expected[k]) for k in INDEXES}
    # the other side: a method.toml saying 1 for results numbered from 0 is refused too
    zero = tmp_path / "ZERO"
    write_network_results(zero, fused, sub="")
    (zero / "method.toml").write_text("first_index = 1\n")
    code, _, stderr = _run(capsys, "evaluate", data, zero, "--out", tmp_path / "o2")
    assert code == 2
    one_error_line(stderr, "output_mulExm_0..3", "from 0, not from 1", "first_index = 0")


def test_a_folder_with_no_result_for_any_scene_is_refused_once(tmp_path, capsys, rr):
    _, h5, _, fused = rr
    data = _dataset(tmp_path, h5, result_scale="dn")
    method = tmp_path / "GSA"
    method.mkdir()
    np.save(method / "fused.npy", fused[0])
    out = tmp_path / "out"
    code, _, stderr = _run(capsys, "evaluate", data, method, "--out", out)
    assert code == 2
    one_error_line(stderr, "GSA", "fused.npy", "output_mulExm_0.mat")
    assert not out.exists()


def test_unit_results_on_a_dn_dataset_advise_method_toml_and_cost_the_others_nothing(tmp_path, capsys, rr):
    _, h5, _, fused = rr
    data = _dataset(tmp_path, h5, result_scale="dn")
    res = tmp_path / "res"
    write_network_results(res / "GSA", fused)
    write_network_results(res / "PNN", fused, scale=1 / PEAK)  # [0, 1], no method.toml
    out = tmp_path / "out"
    code, _, _ = _run(capsys, "evaluate", data, res / "GSA", res / "PNN", "--out", out)
    assert code == 1
    doc = json.loads((out / "results.json").read_text())
    reasons = {f["reason"] for f in doc["failures"]}
    assert {f["method"] for f in doc["failures"]} == {"PNN"} and len(doc["failures"]) == 4
    assert all("result_scale = 'unit' in PNN/method.toml" in r and "declared scale 1 (dataset.toml result_scale)" in r
               for r in reasons), reasons  # the declaration the data contradict, and where it comes from
    assert doc["summary"]["GSA"]["complete"] and doc["summary"]["GSA"]["scenes_ok"] == 4


def test_an_undeclared_result_scale_names_method_toml_and_writes_nothing(tmp_path, capsys, rr):
    _, h5, _, fused = rr
    data = _dataset(tmp_path, h5)
    res = tmp_path / "res"
    write_network_results(res / "GSA", fused)
    write_network_results(res / "PNN", fused, scale=1 / PEAK)
    (res / "PNN" / "method.toml").write_text('result_scale = "unit"\n')
    out = tmp_path / "out"
    code, _, stderr = _run(capsys, "evaluate", data, res / "GSA", res / "PNN", "--out", out)
    assert code == 2
    one_error_line(stderr, "GSA", "method.toml")
    assert "PNN" not in stderr and not out.exists()
    (res / "GSA" / "method.toml").write_text('result_scal = "dn"\n')  # a typo must not pass unnoticed
    code, _, stderr = _run(capsys, "evaluate", data, res / "GSA", res / "PNN", "--out", out)
    assert code == 2 and not out.exists()
    one_error_line(stderr, "method.toml", "unknown key", "result_scal")
    (res / "GSA" / "method.toml").write_text('result_scale = "dn"\n')  # each team declares its own: runs
    assert _run(capsys, "evaluate", data, res / "GSA", res / "PNN", "--out", out)[0] == 0


def test_an_h5_in_unit_scale_declared_dn_fails_once_before_anything_is_written(tmp_path, capsys, rr):
    root, _, _, fused = rr
    h5, _ = reduced_h5(root / "unit", scale=1 / PEAK)  # the data stored in [0, 1]
    data = _dataset(tmp_path, h5, result_scale="dn")
    res = tmp_path / "res"
    write_network_results(res / "GSA", fused)
    write_network_results(res / "PNN", fused)
    out = tmp_path / "out"
    code, stdout, stderr = _run(capsys, "evaluate", data, res / "GSA", res / "PNN", "--out", out)
    assert code == 2 and stdout == ""
    one_error_line(stderr, "every scene", "4 of 4", "scale = 'unit'")
    assert not out.exists()  # the retry needs no --force
    (data.parent / "dataset.toml").write_text((data.parent / "dataset.toml").read_text() + 'scale = "unit"\n')
    assert _run(capsys, "evaluate", data, res / "GSA", res / "PNN", "--out", out)[0] == 0


def test_a_copy_without_its_worst_scene_gets_no_best_mark(tmp_path, capsys, rr):
    _, h5, scenes, fused = rr
    data = _dataset(tmp_path, h5, result_scale="dn")
    res = tmp_path / "res"
    write_network_results(res / "GSA", fused)
    worse = [noisy(s["gt"], 300, i) for i, s in enumerate(scenes)]
    write_network_results(res / "NOISY", worse)
    shutil.copytree(res / "GSA", res / "COPY")
    q2n = [float(evaluate_reduced(f, s["gt"], ratio=RATIO, bits=11)["Q2n"]) for f, s in zip(fused, scenes, strict=True)]
    worst = int(np.argmin(q2n))
    (res / "COPY" / "results" / f"output_mulExm_{worst}.mat").unlink()
    out = tmp_path / "out"
    code, stdout, _ = _run(capsys, "evaluate", data, res / "GSA", res / "COPY", res / "NOISY", "--out", out)
    assert code == 1
    doc = json.loads((out / "results.json").read_text())
    summary = doc["summary"]
    assert summary["COPY"]["Q2n"]["mean"] > summary["GSA"]["Q2n"]["mean"]  # the higher mean, over 3 scenes ...
    assert summary["COPY"]["complete"] is False and summary["GSA"]["complete"] is True
    for index in INDEXES:  # ... never marked best, never ranked
        assert "COPY" not in summary["best"][index]
    assert summary["COPY"]["ranks"] == {}
    assert summary["best"]["Q2n"] == ["GSA"] and summary["GSA"]["ranks"]["Q2n"] == 1
    assert "COPY (incomplete 3/4)" in (out / "results.md").read_text()
    assert "COPY (incomplete 3/4)" in stdout


def test_one_incomplete_method_keeps_the_others_p_values(tmp_path, capsys):
    """8 synthetic scenes: the tests of the complete methods are those of a run without the
    incomplete one."""
    folder, res = tmp_path / "rr", tmp_path / "res"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=11, resolution="reduced", result_scale="dn")
    for i in range(8):
        scene = make_scene(40 + i, size=96)
        np.savez(folder / f"s{i}.npz", **scene)
        for method, sigma in (("good", 8.0), ("bad", 30.0), ("part", 4.0)):
            (res / method).mkdir(parents=True, exist_ok=True)
            if not (method == "part" and i == 3):
                np.save(res / method / f"s{i}.npy", noisy(scene["gt"], sigma, 100 * i + int(sigma)))
    alone, with_part = tmp_path / "alone", tmp_path / "with_part"
    assert _run(capsys, "evaluate", folder, res / "good", res / "bad", "--out", alone, "--format", "json")[0] == 0
    assert _run(capsys, "evaluate", folder, res / "good", res / "bad", res / "part", "--out", with_part,
                "--format", "json")[0] == 1
    a = json.loads((alone / "results.json").read_text())["statistics"]["indexes"]
    b = json.loads((with_part / "results.json").read_text())["statistics"]["indexes"]
    assert a["Q2n"]["tested"] is True and a["Q2n"]["versus_best"]["bad"]["p"] is not None
    assert b == a  # 'part' (7 of 8 scenes, the best mean) removes no p-value of the others


@pytest.fixture(scope="module")
def fr(tmp_path_factory):
    """A 2-scene full-resolution h5 (MS 32 x 32, PAN 128 x 128) and EXP's results (DN)."""
    from pansharp_iqa.baselines import exp

    root = tmp_path_factory.mktemp("pancollection_fr")
    h5, scenes = full_h5(root / "data")
    return h5, scenes, [exp(s["ms"], s["pan"], sensor="WV2", ratio=RATIO) for s in scenes]


def test_full_resolution_h5_with_network_names(tmp_path, capsys, fr):
    h5, scenes, fused = fr
    write_toml_for(h5, "full", result_scale="dn")
    method = write_network_results(tmp_path / "EXP", fused)
    out = tmp_path / "out"
    code, stdout, stderr = _run(capsys, "evaluate", h5, method, "--out", out)
    assert code == 0, stdout + stderr
    doc = json.loads((out / "results.json").read_text())
    for i, s in enumerate(scenes):
        expected = evaluate_full(fused[i], s["ms"], s["pan"], sensor="WV2", ratio=RATIO, bits=11)
        got = _scene_values(doc, "EXP")[i]
        assert {k: got[k] for k in ("D_lambda", "D_s", "QNR")} == {k: float(expected[k]) for k in
                                                                   ("D_lambda", "D_s", "QNR")}

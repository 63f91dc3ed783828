"""The PanCollection presets end to end, as a user types them: ``pansharp-eval evaluate FILE.h5
METHOD... --preset NAME`` at both resolutions, then ``pansharp-eval table RR FR``, on
PanCollection-shaped files built in tmp from the real WorldView-2 scene (never the published set)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import one_error_line
from pancollection_data import RATIO, full_h5, reduced_h5, write_network_results
from pansharp_iqa import evaluate, get_preset, presets
from pansharp_iqa.cli.main import main
from pansharp_iqa.io import sha256_file

RR_TABLE = ["Q2n", "Q", "SAM", "ERGAS", "SCC", "MPSNR", "SSIM"]
FR_TABLE = ["D_s", "D_lambda_K", "HQNR"]


def _run(capsys, *argv):
    code = main([str(a) for a in argv] + (["--no-progress"] if argv[0] == "evaluate" else []))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """``test_wv3_*`` files (8-band WV2 crops: not the published WV3 set) and two methods' results,
    ``output_mulExm_<i>.mat`` at each resolution (GSA; NOISY = GSA + 20 DN noise)."""
    from pansharp_iqa.baselines import gsa

    root = tmp_path_factory.mktemp("preset")
    rr_h5, rr_scenes = reduced_h5(root / "build_rr")
    fr_h5, fr_scenes = full_h5(root / "build_fr")
    files = {}
    for res, h5, name, scenes in (("rr", rr_h5, "test_wv3_multiExm1.h5", rr_scenes),
                                  ("fr", fr_h5, "test_wv3_OrigScale_multiExm1.h5", fr_scenes)):
        (root / res).mkdir()
        files[res] = Path(shutil.copy(h5, root / res / name))
        fused = [gsa(s["ms"], s["pan"], sensor="WV2", ratio=RATIO) for s in scenes]
        noisy = [f + np.random.default_rng(i).normal(0, 20, f.shape) for i, f in enumerate(fused)]
        write_network_results(root / f"methods_{res}" / "GSA", fused)
        write_network_results(root / f"methods_{res}" / "NOISY", noisy)
        files[f"{res}_fused"] = {"GSA": fused, "NOISY": noisy}
    return root, files


def _methods(root: Path, res: str) -> list[Path]:
    return [root / f"methods_{res}" / m for m in ("GSA", "NOISY")]


def _h5(path: Path, key: str, i: int) -> np.ndarray:
    import h5py

    with h5py.File(path, "r") as f:
        item = np.asarray(f[key][i], dtype=np.float64)
    return item[0] if key == "pan" else np.moveaxis(item, 0, -1)


def test_forced_preset_on_both_resolutions_then_one_table(tmp_path, capsys, bench):
    root, files = bench
    preset = get_preset("pancollection-wv3")
    # another hash than the published test_wv3_multiExm1.h5: refused in one line, nothing written
    code, _, err = _run(capsys, "evaluate", files["rr"], *_methods(root, "rr"), "--preset", "pancollection-wv3",
                        "--out", tmp_path / "rr")
    assert code == 2 and not (tmp_path / "rr").exists()
    one_error_line(err, "pancollection-wv3", "differs from the published", "--preset-force")
    code, out, err = _run(capsys, "evaluate", files["rr"], *_methods(root, "rr"), "--preset", "pancollection-wv3",
                          "--preset-force", "--out", tmp_path / "rr")
    assert code == 0, out + err
    code, out, err = _run(capsys, "evaluate", files["fr"], *_methods(root, "fr"), "--preset", "pancollection-wv3",
                          "--out", tmp_path / "fr")
    assert code == 0, out + err  # no published hash for the full-resolution file: evaluated, marked unverified
    rr, fr = (json.loads((tmp_path / r / "results.json").read_text()) for r in ("rr", "fr"))
    assert rr["dataset"]["preset"]["published_test_set"] is False and rr["metrics"] == RR_TABLE
    assert rr["dataset"]["preset"]["sha256"] == sha256_file(files["rr"])
    assert "NOT the published PanCollection test set" in (tmp_path / "rr" / "results.md").read_text()
    assert "NOT the published test set" in (tmp_path / "rr" / "results.tex").read_text()
    assert fr["dataset"]["preset"]["published_test_set"] is None and fr["metrics"] == FR_TABLE
    assert (rr["protocol"]["name"], rr["protocol"]["dim_cut"], fr["protocol"]["sensor"]["name"]) == \
        ("pancollection", None, "WV3")
    # the runner adds no formula: each scene's numbers are the library's with the preset's settings
    for i, scene in enumerate(rr["dataset"]["scenes"]):
        gt = _h5(files["rr"], "gt", i)
        for method, fused in files["rr_fused"].items():
            want = evaluate({"fused": fused[i], "reference": gt}, preset.settings("reduced"))
            assert rr["scenes"][scene][method]["metrics"] == {k: float(want[k]) for k in RR_TABLE}
    for i, scene in enumerate(fr["dataset"]["scenes"]):
        ms, pan, lms = (_h5(files["fr"], k, i) for k in ("ms", "pan", "lms"))
        for method, fused in files["fr_fused"].items():
            want = evaluate({"fused": fused[i], "ms": ms, "pan": pan, "ms_exp": lms}, preset.settings("full"))
            assert fr["scenes"][scene][method]["metrics"] == {k: float(want[k]) for k in FR_TABLE}
        own_exp = evaluate({"fused": files["fr_fused"]["GSA"][i], "ms": ms, "pan": pan},
                           preset.settings("full", upsampled="interp23tap"))
        assert fr["scenes"][scene]["GSA"]["metrics"]["D_lambda_K"] != own_exp["D_lambda_K"]  # the file's lms
    # one table: both resolutions' columns, one row per method, a caption naming preset and data
    code, out, err = _run(capsys, "table", tmp_path / "rr", tmp_path / "fr", "--out", tmp_path / "table")
    assert code == 0, out + err
    caption = out.splitlines()[0]
    assert "preset pancollection-wv3" in caption and "NOT the published test set" in caption
    assert "protocol pancollection" in caption
    with open(tmp_path / "table" / "table.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["method"] for r in rows] == ["GSA", "NOISY"] and all(r["complete"] == "true" for r in rows)
    for index in RR_TABLE + FR_TABLE:
        values = [json.loads((tmp_path / ("rr" if index in RR_TABLE else "fr") / "results.json").read_text())
                  ["summary"][m][index]["mean"] for m in ("GSA", "NOISY")]
        assert [float(r[index]) for r in rows] == pytest.approx(values, rel=1e-12), index
    assert "NOT the published test set" in (tmp_path / "table" / "table.tex").read_text()


def test_published_hash_needs_no_flag_and_two_presets_do_not_merge(tmp_path, capsys, bench, monkeypatch):
    root, files = bench
    # the file is taken for the published one (hash table patched): no flag, and the card says so
    monkeypatch.setitem(presets.PUBLISHED_SHA256, "test_wv3_multiExm1.h5", sha256_file(files["rr"]))
    code, out, err = _run(capsys, "evaluate", files["rr"], root / "methods_rr" / "GSA", "--preset",
                          "pancollection-wv3", "--out", tmp_path / "rr", "--format", "json,md")
    assert code == 0, out + err
    doc = json.loads((tmp_path / "rr" / "results.json").read_text())
    assert doc["dataset"]["preset"]["published_test_set"] is True
    assert "the published PanCollection test file (SHA-256 matches)" in (tmp_path / "rr" / "results.md").read_text()
    # the same full-resolution file under the WV2 preset: its runs do not share a table with WV3's
    wv2 = tmp_path / "wv2" / "test_wv2_OrigScale_multiExm1.h5"
    wv2.parent.mkdir()
    shutil.copy(files["fr"], wv2)
    code, out, err = _run(capsys, "evaluate", wv2, root / "methods_fr" / "GSA", "--preset", "pancollection-wv2",
                          "--out", tmp_path / "fr", "--format", "json")
    assert code == 0, out + err
    code, _, err = _run(capsys, "table", tmp_path / "rr", tmp_path / "fr", "--out", tmp_path / "table")
    assert code == 2 and not (tmp_path / "table").exists()
    one_error_line(err, "differ in preset", "pancollection-wv3", "pancollection-wv2")


def test_full_resolution_needs_no_bits_reduced_does(tmp_path, capsys, bench):
    root, files = bench
    data = tmp_path / "fr"
    data.mkdir()
    h5 = Path(shutil.copy(files["fr"], data / "scenes.h5"))
    (data / "dataset.toml").write_text('sensor = "WV2"\nratio = 4\nresolution = "full"\nresult_scale = "dn"\n')
    code, out, err = _run(capsys, "evaluate", h5, root / "methods_fr" / "GSA", "--out", tmp_path / "o", "--format",
                          "json")
    assert code == 0, out + err
    doc = json.loads((tmp_path / "o" / "results.json").read_text())
    assert doc["summary"]["GSA"]["complete"]  # the card says where the bits come from: not from a setting
    assert doc["protocol"]["declared"]["all"]["bits"] == {"value": 11, "source": "sensor registry (WV2)"}
    # 'unit' is 2**bits - 1: then bits is needed, and at reduced resolution always
    (data / "dataset.toml").write_text('sensor = "WV2"\nratio = 4\nresolution = "full"\nresult_scale = "unit"\n')
    code, _, err = _run(capsys, "evaluate", h5, root / "methods_fr" / "GSA", "--out", tmp_path / "o2")
    assert code == 2
    one_error_line(err, "needs the bit depth", "--bits")
    (data / "dataset.toml").write_text('sensor = "WV2"\nratio = 4\nresolution = "reduced"\nresult_scale = "dn"\n')
    code, _, err = _run(capsys, "evaluate", h5, root / "methods_fr" / "GSA", "--out", tmp_path / "o3")
    assert code == 2
    one_error_line(err, "missing dataset setting", "bits")

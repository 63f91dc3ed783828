"""Failure isolation (exit 1, reason reported, other scenes evaluated) and usage errors (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import BITS, RATIO, full_resolution_dataset, noisy, write_toml
from pansharp_iqa.cli.main import main


def _run(capsys, argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _failures(out: Path) -> dict[tuple[str, str], str]:
    doc = json.loads((out / "results.json").read_text())
    return {(f["scene"], f["method"]): f["reason"] for f in doc["failures"]}, doc


@pytest.mark.parametrize(
    "case, expected",
    [
        ("unreadable", "cannot read"),
        ("missing", "missing result"),
        ("wrong_shape", "wrong shape"),
        ("wrong_bands", "wrong band count"),
        ("nan", "NaN"),
        ("unit_declared_dn", "contradicts the data"),
        ("ambiguous", "several result files"),
    ],
)
def test_result_failure_is_isolated(tmp_path, capsys, reduced_dataset, rr_methods, case, expected):
    folder, scenes = reduced_dataset
    method = rr_methods["good"]
    target = method / "s2.npy"
    gt = scenes["s2"]["gt"]
    if case == "unreadable":
        target.write_bytes(b"this is not a numpy file")
    elif case == "missing":
        target.unlink()
    elif case == "wrong_shape":
        np.save(target, noisy(gt[:96, :96], 5, 0))
    elif case == "wrong_bands":
        np.save(target, noisy(gt[:, :, :3], 5, 0))
    elif case == "nan":
        bad = noisy(gt, 5, 0)
        bad[3, 4, 1] = np.nan
        np.save(target, bad)
    elif case == "unit_declared_dn":
        np.save(target, noisy(gt, 5, 0) / (2**BITS - 1))
    elif case == "ambiguous":
        shutil.copy(target, method / "s2.npz")
    out = tmp_path / "out"
    code, stdout, stderr = _run(capsys, ["evaluate", folder, method, rr_methods["bad"], "--out", out])
    assert code == 1
    failures, doc = _failures(out)
    assert list(failures) == [("s2", "good")]
    assert expected in failures[("s2", "good")]
    assert expected in stdout  # reported in the terminal too
    assert "FAILED" in stdout and "failed" in stderr
    ok = [(s, m) for s in doc["scenes"] for m in doc["scenes"][s] if doc["scenes"][s][m]["status"] == "ok"]
    assert len(ok) == 5  # every other (scene, method) pair was evaluated
    assert doc["summary"]["good"]["scenes_failed"] == 1 and doc["summary"]["good"]["Q2n"]["n"] == 2
    csv_rows = (out / "results.csv").read_text().strip().splitlines()
    assert len(csv_rows) == 1 + 6 and any(",failed," in r for r in csv_rows)


@pytest.mark.parametrize(
    "case, expected",
    [
        ("gt_nan", "NaN"),
        # one rule application on the pair blames the GT, the image the evidence points to (fractions, or beyond
        # its bits, next to DN), and says which setting brings it to DN
        ("gt_unit_declared_dn", "Bring s1.npz:gt to the scale of s1."),
        ("gt_over_bits", "s1.npz:gt is on another scale than s1."),
        ("gt_missing", "no gt array"),
        ("unreadable_input", "cannot read"),
    ],
)
def test_input_failure_is_isolated(tmp_path, capsys, reduced_dataset, rr_methods, case, expected):
    folder, scenes = reduced_dataset
    sc = dict(scenes["s1"])
    if case == "gt_nan":
        sc["gt"] = sc["gt"].astype(float)
        sc["gt"][0, 0, 0] = np.nan
    elif case == "gt_unit_declared_dn":
        sc["gt"] = sc["gt"] / 4096.0
    elif case == "gt_over_bits":
        sc["gt"] = sc["gt"].astype(np.uint16) * 4
    elif case == "gt_missing":
        del sc["gt"]
    if case == "unreadable_input":
        (folder / "s1.npz").write_bytes(b"garbage")
    else:
        np.savez(folder / "s1.npz", **sc)
    out = tmp_path / "out"
    code, stdout, _ = _run(capsys, ["evaluate", folder, *rr_methods.values(), "--out", out])
    assert code == 1
    failures, doc = _failures(out)
    assert set(failures) == {("s1", "good"), ("s1", "bad")}
    assert all(expected in r for r in failures.values()), failures
    assert doc["scenes"]["s3"]["bad"]["status"] == "ok"


def test_full_resolution_wrong_pan_size_is_isolated(tmp_path, capsys):
    folder, res = full_resolution_dataset(tmp_path, 60, short_pan="a")
    out = tmp_path / "out"
    code, stdout, _ = _run(capsys, ["evaluate", folder, res, "--out", out])
    assert code == 1
    failures, doc = _failures(out)
    assert list(failures) == [("a", "m")] and "ratio=4 times the MS size" in failures[("a", "m")]
    assert doc["scenes"]["b"]["m"]["status"] == "ok"


def _usage(tmp_path, capsys, argv, message):
    code, _, err = _run(capsys, argv)
    assert code == 2, err
    assert message in err
    return err


def test_usage_errors_exit_2(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    good = rr_methods["good"]
    out = tmp_path / "out"
    # results folder that does not exist
    _usage(tmp_path, capsys, ["evaluate", folder, tmp_path / "nope", "--out", out], "does not exist")
    # dataset that does not exist
    _usage(tmp_path, capsys, ["evaluate", tmp_path / "nodata", good, "--out", out], "does not exist")
    # unknown format, bad --jobs, --force with --resume, unknown protocol, unknown sensor flag
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--format", "pdf"], "unknown format")
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--jobs", "0"], "positive integer")
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--force", "--resume"], "not allowed with")
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--out", out, "--protocol", "nonsense"], "unknown protocol")
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--out", out, "--sensor", "WV9"], "unknown sensor")
    # no RESULTS at all
    _usage(tmp_path, capsys, ["evaluate", folder], "required")
    assert not out.exists()  # nothing was written by a usage error


def test_missing_settings_are_usage_errors(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    good = rr_methods["good"]
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced")  # no result_scale
    err = _usage(tmp_path, capsys, ["evaluate", folder, good, "--out", tmp_path / "o1"], "result")
    assert "--result-scale" in err
    # the flag supplies it
    assert main(["evaluate", str(folder), str(good), "--out", str(tmp_path / "o2"), "--result-scale", "dn"]) == 0
    write_toml(folder, ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")  # no sensor
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--out", tmp_path / "o3"], "sensor")
    # one ratio rule (library and CLI): any integer >= 2 at reduced resolution, where it only
    # scales ERGAS, but it must fit every scene (here the data are ratio 4: each scene fails)
    write_toml(folder, sensor="none", ratio=3, bits=BITS, resolution="reduced", result_scale="dn")
    code, stdout, _ = _run(capsys, ["evaluate", folder, good, "--out", tmp_path / "o4"])
    assert code == 1 and "ratio=3 times the MS size" in stdout and "the sizes say ratio 4" in stdout
    # full resolution runs the 23-tap EXP: a power of two, refused before anything runs
    write_toml(folder, sensor="none", ratio=3, bits=BITS, resolution="full", result_scale="dn")
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--out", tmp_path / "o4b"], "power of two")
    write_toml(folder, sensor="none", ratio=4, bits=BITS, resolution="reduced", result_scale="dn", sensro="x")
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--out", tmp_path / "o5"], "unknown key")
    (folder / "dataset.toml").unlink()
    _usage(tmp_path, capsys, ["evaluate", folder, good, "--out", tmp_path / "o6"], "missing dataset setting")


def test_existing_outputs_need_force_or_resume(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", folder, *rr_methods.values(), "--out", out]
    assert _run(capsys, args)[0] == 0
    before = (out / "results.json").read_bytes()
    _usage(tmp_path, capsys, args, "--force")
    assert (out / "results.json").read_bytes() == before  # untouched
    assert _run(capsys, [*args, "--force"])[0] == 0


def test_subprocess_exit_statuses(tmp_path, reduced_dataset, rr_methods):
    import subprocess
    import sys

    folder, _ = reduced_dataset
    cmd = [sys.executable, "-m", "pansharp_iqa.cli.main"]
    ok = subprocess.run([*cmd, "evaluate", str(folder), str(rr_methods["good"]), "--out", str(tmp_path / "o")],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "Q2n" in ok.stdout
    bad = subprocess.run([*cmd, "evaluate", str(folder)], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "usage:" not in bad.stderr
    assert "required: RESULTS" in bad.stderr
    help_ = subprocess.run([*cmd, "--help"], capture_output=True, text=True)
    assert help_.returncode == 0 and all(c in help_.stdout for c in ("evaluate", "demo", "baselines", "degrade"))
    version = subprocess.run([*cmd, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("pansharp-eval ")


def test_unreadable_h5_result_with_undeclared_scale_is_a_usage_error(tmp_path, capsys, reduced_dataset, rr_methods):
    """A result ``.h5`` that is not HDF5 cannot record a scale: the scale stays undeclared (one
    usage error line), not a traceback."""
    folder, _ = reduced_dataset
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced")  # no result_scale
    method = tmp_path / "res" / "h5method"
    method.mkdir(parents=True)
    (method / "s1.h5").write_bytes(b"not an HDF5 file")
    out = tmp_path / "out"
    err = _usage(tmp_path, capsys, ["evaluate", folder, method, "--out", out],
                 "the scale of the results is not declared")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_tiled_always_on_whole_scene_files_is_one_usage_error_before_any_work(tmp_path, capsys):
    """Every scene an .npz (one file, the whole scene): --tiled always is refused once, OUT untouched; with one
    scene in split files beside it, that one is evaluated tile-wise and the .npz scene's pairs fail alone."""
    rng = np.random.default_rng(5)
    data, method, out = tmp_path / "data", tmp_path / "m", tmp_path / "out"
    data.mkdir()
    method.mkdir()
    gt = rng.uniform(200, 1800, (96, 96, 4))
    np.savez(data / "a.npz", gt=gt, ms=gt[::4, ::4], pan=gt.mean(axis=2))
    np.save(method / "a.npy", gt + rng.normal(0, 5, gt.shape))
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    code, _, err = _run(capsys, ["evaluate", data, method, "--out", out, "--tiled", "always"])
    assert code == 2 and "--tiled always: every scene is a .npz file" in err and err.count("\n") == 1
    assert not out.exists()
    np.save(data / "b_gt.npy", gt)
    np.save(method / "b.npy", gt + rng.normal(0, 5, gt.shape))
    code, _, _ = _run(capsys, ["evaluate", data, method, "--out", out, "--tiled", "always", "--format", "json"])
    failures, doc = _failures(out)
    assert code == 1 and list(failures) == [("a", "m")] and "holds the whole scene" in failures[("a", "m")]
    assert doc["scenes"]["b"]["m"]["protocol"]["evaluation_path"] == "tile-wise"

"""``pansharp-eval baselines`` in bounded memory (issue 20 item 18): each scene is fused strip by
strip into a temporary file renamed when complete, with the library's in-memory numbers; expected
failures are one line each and exit status 1."""

from __future__ import annotations

import os

import numpy as np
import pytest

from baselines_helpers import scene, write_dataset
from pansharp_iqa.baselines import BASELINES
from pansharp_iqa.baselines import strips as strips_module
from pansharp_iqa.cli.main import main


@pytest.fixture
def dataset(tmp_path):
    scenes = {"a": scene(11, 32, 24, 4, 4), "b": scene(12, 24, 32, 4, 4)}
    folder = write_dataset(tmp_path / "data", scenes, sensor="QB", ratio=4, bits=11, resolution="full",
                           result_scale="unit")
    return folder, scenes


def test_written_results_are_the_in_memory_ones_strip_by_strip(dataset, tmp_path, monkeypatch, capsys):
    folder, scenes = dataset
    monkeypatch.setattr(strips_module, "STRIP_BYTES", 16 * 96 * 4 * 8)  # 16-row strips: 8 and 6 per scene
    assert main(["baselines", str(folder), "--out", str(tmp_path / "out")]) == 0
    assert "wrote EXP (2/2), BT-H (2/2), GSA (2/2), MTF-GLP-HPM (2/2)" in capsys.readouterr().out
    for method, fuse in BASELINES.items():
        assert sorted(os.listdir(tmp_path / "out" / method)) == ["a.npy", "b.npy"]  # no temporary files
        for name, (ms, pan) in scenes.items():
            ref = fuse(ms, pan, sensor="QB", ratio=4)  # one strip, in memory, DN
            got = np.load(tmp_path / "out" / method / f"{name}.npy") * 2047.0  # result_scale "unit", 11 bits
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max(), err_msg=f"{method} {name}")


def test_expected_failures_are_one_line_and_exit_1(dataset, tmp_path, capsys):
    folder, scenes = dataset
    bad = scenes["b"][1].astype(np.float64)
    bad[3, 3] = np.inf
    np.save(folder / "b_pan.npy", bad)
    assert main(["baselines", str(folder), "--out", str(tmp_path / "out"), "--methods", "GSA,MTF-GLP-HPM"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    failed = [line for line in err.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "b" in failed[0] and "non-finite" in failed[0]
    assert sorted(os.listdir(tmp_path / "out" / "GSA")) == ["a.npy"]
    assert main(["baselines", str(folder), "--out", str(tmp_path / "o2"), "--methods", "GSA,NOPE"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown baseline" in err[0]


def test_windowed_inputs_are_held_to_the_in_memory_rules(tmp_path, capsys):
    # a full-resolution PAN above 2**bits - 1 (e.g. resampled by the Wald protocol) is legitimate, as
    # when the scene is read whole; unit-scale data declared as DN is not
    ms, pan = scene(13, 16, 16, 4, 4)
    overshoot = pan.astype(np.float64)
    overshoot[:4, :4] = 2100.0
    hot = write_dataset(tmp_path / "hot", {"s": (ms, overshoot)}, sensor="QB", ratio=4,
                        bits=11, resolution="full", result_scale="dn")
    assert float(np.load(hot / "s_pan.npy").max()) > 2047
    assert main(["baselines", str(hot), "--out", str(tmp_path / "o1"), "--methods", "GSA"]) == 0
    unit = write_dataset(tmp_path / "unit", {"s": (ms / 2047.0, pan / 2047.0)}, sensor="QB", ratio=4, bits=11,
                         resolution="full", result_scale="dn")
    assert main(["baselines", str(unit), "--out", str(tmp_path / "o2"), "--methods", "GSA"]) == 1
    failed = [line for line in capsys.readouterr().err.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "unit" in failed[0]

"""pansharp-eval refuses settings that contradict the data (issues 12 and 15): sizes and ratios of
every scene, the sensor's band count, what the files record about themselves; and it takes what
an NLRNet h5 records, so evaluating one needs no flags."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from cli_helpers import write_toml
from pansharp_iqa import evaluate_reduced, wald_degrade
from pansharp_iqa.cli.main import main


def _run(capsys, argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _scene(seed, size=128, bands=4):
    rng = np.random.default_rng(seed)
    from scipy import ndimage

    gt = 300 + 1200 * ndimage.zoom(rng.random((size // 8, size // 8, bands)), (8, 8, 1), order=1)
    pan = gt.mean(axis=2)
    ms, pan_lr = wald_degrade(gt, np.kron(pan, np.ones((4, 4))), "none", ratio=4)
    return gt, ms, pan_lr


@pytest.fixture()
def reduced(tmp_path):
    """A reduced-resolution dataset of two per-role .npy scenes (ratio 4, 4 bands) and a method."""
    data, method = tmp_path / "data", tmp_path / "res" / "m"
    data.mkdir()
    method.mkdir(parents=True)
    for i in range(2):
        gt, ms, pan = _scene(i)
        np.save(data / f"s{i}_gt.npy", gt)
        np.save(data / f"s{i}_ms.npy", ms)
        np.save(data / f"s{i}_pan.npy", pan)
        np.save(method / f"s{i}.npy", gt + np.random.default_rng(i).normal(0, 20, gt.shape))
    write_toml(data, sensor="none", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    return data, method


@pytest.mark.parametrize("ratio", [2, 8])
def test_a_ratio_that_contradicts_the_scenes_fails_every_scene_with_its_reason(tmp_path, capsys, reduced, ratio):
    data, method = reduced
    code, out, _ = _run(capsys, ["evaluate", data, method, "--ratio", ratio, "--out", tmp_path / "o"])
    assert code == 1
    assert out.count("the sizes say ratio 4") == 2 and "ERGAS" not in out.split("FAILED")[0].splitlines()[-1]


def test_wrong_ms_or_pan_size_fails_at_reduced_resolution(tmp_path, capsys, reduced):
    data, method = reduced
    np.save(data / "s0_pan.npy", np.load(data / "s0_pan.npy")[:100])
    np.save(data / "s1_ms.npy", np.load(data / "s1_ms.npy")[:, :30])
    code, out, _ = _run(capsys, ["evaluate", data, method, "--out", tmp_path / "o"])
    assert code == 1
    assert "scene 's0': pan (100, 128) and reference (128, 128) must have the same size" in out
    assert "scene 's1': reference (128, 128) must be exactly ratio=4 times the MS size (32, 30)" in out


def test_a_sensor_that_does_not_fit_the_bands_fails_at_reduced_resolution(tmp_path, capsys, reduced):
    data, method = reduced
    code, out, err = _run(capsys, ["evaluate", data, method, "--sensor", "WV2", "--out", tmp_path / "o"])
    # every scene contradicts it: refused once, before anything is written (docs/cli.md)
    assert code == 2 and out == "" and err.count("sensor 'WV2' has 8 bands") == 1 and "every scene" in err
    assert not (tmp_path / "o").exists()


def test_a_mat_scene_that_records_another_sensor_is_refused(tmp_path, capsys):
    data, method = tmp_path / "data", tmp_path / "res" / "m"
    data.mkdir()
    method.mkdir(parents=True)
    gt, ms, pan = _scene(3)
    scipy.io.savemat(data / "a.mat", {"I_GT": gt, "I_MS_LR": ms, "I_PAN": pan, "sensor": "IKONOS", "ratio": 4.0,
                                      "L": 11.0})
    np.save(method / "a.npy", gt)
    write_toml(data, sensor="QB", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    code, out, _ = _run(capsys, ["evaluate", data, method, "--out", tmp_path / "o1"])
    assert code == 1 and "dataset.toml says sensor = 'QB' but a.mat records 'IKONOS'" in out
    code, out, _ = _run(capsys, ["evaluate", data, method, "--sensor", "IKONOS", "--out", tmp_path / "o2"])
    assert code == 0
    code, out, _ = _run(capsys, ["evaluate", data, method, "--sensor", "ikonos", "--ratio", "2",
                                 "--out", tmp_path / "o3"])
    assert code == 1 and "--ratio says ratio = 2 but a.mat records 4" in out


def test_an_nlrnet_h5_needs_no_flags_and_contradicting_flags_are_usage_errors(tmp_path, capsys):
    import h5py

    gts, mss, pans = zip(*[_scene(i, size=96) for i in range(3)], strict=True)
    gt, ms, pan = np.stack(gts), np.stack(mss), np.stack(pans)
    val = tmp_path / "val.h5"
    with h5py.File(val, "w") as f:  # what `pansharp-nlrnet prepare` writes: [0, 1] data + attributes
        for key, arr in (("gt", gt), ("ms", ms), ("pan", pan[:, :, :, None])):
            f.create_dataset(key, data=(np.moveaxis(arr, -1, 1) / 2047).astype(np.float32))
        f.attrs.update({"layout": "pansharp_iqa.nlrnet/PanCollection-v1", "sensor": "none", "ratio": 4,
                        "bits": 11, "normalised_by": 2047.0})
    method = tmp_path / "res" / "NLRNet"
    method.mkdir(parents=True)
    fused = gt + np.random.default_rng(0).normal(0, 15, gt.shape)
    with h5py.File(method / "val.h5", "w") as f:  # what `pansharp-nlrnet infer --data` writes
        f.create_dataset("sr", data=np.moveaxis(fused, -1, 1))
        f.attrs.update({"result_scale": "dn", "sensor": "none", "bits": 11, "ratio": 4})
    code, out, err = _run(capsys, ["evaluate", val, method, "--out", tmp_path / "o", "--format", "json"])
    assert code == 0, err
    import json

    doc = json.loads((tmp_path / "o" / "results.json").read_text())
    q2n = doc["scenes"]["val_0"]["NLRNet"]["metrics"]["Q2n"]
    stored_gt = np.moveaxis(np.asarray(h5py.File(val)["gt"][0], dtype=np.float64), 0, -1) * 2047.0
    expected = evaluate_reduced(fused[0], stored_gt, ratio=4, bits=11)["Q2n"]
    assert q2n == pytest.approx(expected, rel=1e-12)
    code, _, err = _run(capsys, ["evaluate", val, method, "--sensor", "WV2", "--out", tmp_path / "o2"])
    assert code == 2 and "--sensor says sensor = 'WV2' but val.h5 records 'none'" in err
    code, _, err = _run(capsys, ["evaluate", val, method, "--input-scale", "dn", "--out", tmp_path / "o3"])
    assert code == 2 and "val.h5 records 2047" in err


def test_a_results_file_passed_as_a_method_folder_is_named_as_such(tmp_path, capsys, reduced):
    data, method = reduced
    csv = tmp_path / "results.csv"
    csv.write_text("method,scene\n")
    code, _, err = _run(capsys, ["evaluate", data, csv, "--out", tmp_path / "o"])
    assert code == 2 and "results.csv is a file, not a folder of results" in err


def test_an_8bit_export_is_named_with_its_factor(tmp_path, capsys, reduced):
    data, method = reduced
    for i in range(2):
        f = np.load(method / f"s{i}.npy")
        np.save(method / f"s{i}.npy", np.clip(np.round(f * 255 / 2047), 0, 255).astype(np.uint8))
    code, out, _ = _run(capsys, ["evaluate", data, method, "--out", tmp_path / "o"])
    assert code == 1
    assert "declare result_scale = 8.02" in out and "(2**11 - 1)/(2**8 - 1)" in out
    assert "result_scale = 'unit'" not in out

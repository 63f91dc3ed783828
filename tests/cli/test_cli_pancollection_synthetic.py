"""Issue 34: PanCollection ``.h5`` test sets without ``../shared/data``: synthetic files with the
published layout (datasets ``gt``/``ms``/``lms``/``pan`` at reduced resolution, ``ms``/``lms``/``pan``
at full resolution, N x C x H x W float64, DN), whose scenes are DIFFERENT seeded smooth fields, so a
result paired with the wrong item changes every number.

What is pinned, each by a number written here from its definition:

* item ``i`` of the file is ``output_mulExm_<i>`` counted from 0 (and item ``i`` of a stacked
  N x C x H x W result): a result equal to its own GT scores ERGAS = SAM = 0, Q2n = Q = 1; a result
  equal to its item's ``lms`` (the EXP the CLI reads from the file) scores D_lambda = 0;
* results named from 1 leave item 0 without a result and score item ``i`` with item ``i - 1``'s
  image: the ERGAS of that pair, computed here from the toolbox formula on the cut region;
* ``result_scale = "unit"``: [0, 1] results are multiplied by ``2**bits - 1`` (PSNR and ERGAS of a
  known offset), and ``2**bits`` would give numbers beyond the tolerance (shown here).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from scipy import ndimage

import pansharp_iqa as pi
from cli_helpers import run_cli, write_toml

RATIO, BITS, N = 4, 11, 3
PEAK = 2.0**BITS - 1
CUT = (20, 21)  # the toolbox's dim_cut = 21: I(21:end-21) 1-based, 20 leading / 21 trailing pixels


def smooth(seed: int, size: int, bands: int) -> np.ndarray:
    """A seeded smooth field, 150-1650 DN, integer valued (size x size x bands)."""
    rng = np.random.default_rng(seed)
    field = ndimage.zoom(rng.uniform(0, 1, (size // 8, size // 8, bands)), (8, 8, 1), order=3)
    field += 0.03 * rng.normal(size=field.shape)
    return np.round(150 + 1500 * (field - field.min()) / (field.max() - field.min()))


def nchw(images) -> np.ndarray:
    return np.stack([np.moveaxis(np.atleast_3d(i), -1, 0) for i in images]).astype(np.float64)


def write_h5(path: Path, **arrays: np.ndarray) -> Path:
    import h5py

    with h5py.File(path, "w") as handle:
        for key, value in arrays.items():
            handle.create_dataset(key, data=value)
    return path


def cut(image: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    return image[CUT[0]:h - CUT[1], CUT[0]:w - CUT[1]]


def ergas_by_hand(fused: np.ndarray, gt: np.ndarray) -> float:
    """ERGAS = 100 / ratio * sqrt(mean_b (RMSE_b / mean_b(GT))^2) on the cut region."""
    f, g = cut(fused).astype(np.float64), cut(gt).astype(np.float64)
    rmse = np.sqrt(((f - g) ** 2).mean(axis=(0, 1)))
    return 100.0 / RATIO * math.sqrt(float(((rmse / g.mean(axis=(0, 1))) ** 2).mean()))


def psnr_by_hand(fused: np.ndarray, gt: np.ndarray) -> float:
    """10 log10(peak^2 / MSE), the MSE over every pixel and band of the cut region."""
    return 10.0 * math.log10(PEAK**2 / float(((cut(fused) - cut(gt)) ** 2).mean()))


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    """``test_syn_multiExm1.h5``: 3 different scenes, gt 96 x 96 x 4, ms 24 x 24, lms, pan 96 x 96."""
    root = tmp_path_factory.mktemp("syn_rr")
    gt = [smooth(300 + i, 96, 4) for i in range(N)]
    ms = [g.reshape(24, RATIO, 24, RATIO, 4).mean(axis=(1, 3)) for g in gt]
    lms = [np.repeat(np.repeat(m, RATIO, 0), RATIO, 1) for m in ms]
    pan = [g.mean(axis=2) for g in gt]
    data = root / "data"
    data.mkdir()
    h5 = write_h5(data / "test_syn_multiExm1.h5", gt=nchw(gt), ms=nchw(ms), lms=nchw(lms), pan=nchw(pan))
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    # the scenes differ: the pairing is visible in every number
    assert min(ergas_by_hand(gt[i], gt[j]) for i in range(N) for j in range(N) if i != j) > 5.0
    return h5, gt


def _evaluate(h5: Path, out: Path, *methods: Path, extra: tuple[str, ...] = ()) -> tuple[int, dict, str]:
    done = run_cli("evaluate", h5, *methods, "--out", out, "--format", "json", "--no-progress", *extra)
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").is_file() else {}
    return done.returncode, doc, done.stdout + done.stderr


def _scene(i: int) -> str:
    return f"test_syn_multiExm1_{i}"


def test_output_mulexm_i_is_item_i_counted_from_0(tmp_path, reduced):
    h5, gt = reduced
    (tmp_path / "NET" / "results").mkdir(parents=True)
    for i, image in enumerate(gt):
        scipy.io.savemat(tmp_path / "NET" / "results" / f"output_mulExm_{i}.mat", {"sr": image})
    (tmp_path / "STK").mkdir()
    np.save(tmp_path / "STK" / "test_syn_multiExm1.npy", nchw(gt))  # one stack: item i is scene i
    code, doc, log = _evaluate(h5, tmp_path / "out", tmp_path / "NET", tmp_path / "STK")
    assert code == 0, log
    for method in ("NET", "STK"):
        for i in range(N):
            m = doc["scenes"][_scene(i)][method]["metrics"]  # each result is its own GT: perfect
            assert (m["Q2n"], m["Q"], m["SAM"], m["ERGAS"]) == (1.0, 1.0, 0.0, 0.0), (method, i, m)


def test_results_numbered_from_1_are_refused_unless_method_toml_declares_it(tmp_path, reduced):
    h5, gt = reduced
    (tmp_path / "ONE").mkdir()
    for i, image in enumerate(gt, start=1):  # numbered 1..N: each would be paired with the next item
        scipy.io.savemat(tmp_path / "ONE" / f"output_mulExm_{i}.mat", {"sr": image})
    code, doc, log = _evaluate(h5, tmp_path / "out", tmp_path / "ONE")
    assert code == 2 and "from 1, not from 0" in log and "first_index = 1" in log, log  # before any work
    assert not (tmp_path / "out" / "results.json").exists()
    (tmp_path / "ONE" / "method.toml").write_text("first_index = 1\n")
    code, doc, log = _evaluate(h5, tmp_path / "out2", tmp_path / "ONE")
    assert code == 0, log
    for i in range(N):  # declared: output_mulExm_{i + 1} is item i, its own image
        m = doc["scenes"][_scene(i)]["ONE"]["metrics"]
        assert m["ERGAS"] == 0.0 and m["Q2n"] == pytest.approx(1.0, abs=1e-12)


def test_unit_results_are_multiplied_by_2_bits_minus_1(tmp_path, reduced):
    h5, gt = reduced
    offsets = (3.0, 8.0, 20.0)  # DN added to each GT before the [0, 1] export
    (tmp_path / "PNN").mkdir()
    for i, (image, d) in enumerate(zip(gt, offsets, strict=True)):
        scipy.io.savemat(tmp_path / "PNN" / f"output_mulExm_{i}.mat", {"sr": (image + d) / PEAK})
    (tmp_path / "PNN" / "method.toml").write_text('result_scale = "unit"\n')
    code, doc, log = _evaluate(h5, tmp_path / "out", tmp_path / "PNN", extra=("--indexes", "default,PSNR"))
    assert code == 0, log
    assert doc["method_result_scales"] == {"PNN": "unit"}
    for i, (g, d) in enumerate(zip(gt, offsets, strict=True)):
        m = doc["scenes"][_scene(i)]["PNN"]["metrics"]
        psnr, ergas = 20 * math.log10(PEAK / d), ergas_by_hand(g + d, g)  # (g + d) / 2047 * 2047 = g + d
        assert m["PSNR"] == pytest.approx(psnr, rel=1e-9) and m["ERGAS"] == pytest.approx(ergas, rel=1e-9)
        # 2**bits instead: (g + d) * 2048 / 2047, a gain of 1 + 1/2047 on top of the offset
        wrong = (g + d) * 2.0**BITS / PEAK
        assert abs(psnr_by_hand(wrong, g) - psnr) > 1e-3 * psnr and abs(ergas_by_hand(wrong, g) - ergas) > 1e-3 * ergas


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """``test_syn_OrigScale_multiExm1.h5``: 3 different scenes, ms 32 x 32 x 4, lms and pan 128 x 128."""
    root = tmp_path_factory.mktemp("syn_fr")
    hr = [smooth(400 + i, 128, 4) for i in range(N)]
    ms = [h.reshape(32, RATIO, 32, RATIO, 4).mean(axis=(1, 3)) for h in hr]
    lms = [np.repeat(np.repeat(m, RATIO, 0), RATIO, 1) for m in ms]
    pan = [h.mean(axis=2) for h in hr]
    data = root / "data"
    data.mkdir()
    h5 = write_h5(data / "test_syn_OrigScale_multiExm1.h5", ms=nchw(ms), lms=nchw(lms), pan=nchw(pan))
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="full", result_scale="dn")
    return h5, [pi.interp23tap(m, RATIO) for m in ms]


def test_full_resolution_item_i_is_output_mulexm_i_counted_from_0(tmp_path, full):
    h5, exp = full
    for name, first in (("ZERO", 0), ("ONE", 1)):
        (tmp_path / name).mkdir()
        for i, image in enumerate(exp, start=first):
            scipy.io.savemat(tmp_path / name / f"output_mulExm_{i}.mat", {"sr": image})
    (tmp_path / "ONE" / "method.toml").write_text("first_index = 1\n")
    code, doc, log = _evaluate(h5, tmp_path / "out", tmp_path / "ZERO", tmp_path / "ONE",
                               extra=("--indexes", "D_lambda"))
    assert code == 0, log
    scenes = [f"test_syn_OrigScale_multiExm1_{i}" for i in range(N)]
    for s in scenes:  # the result is its own item's EXP: the same band pairs on the same blocks, D_lambda = 0
        for method in ("ZERO", "ONE"):
            assert abs(doc["scenes"][s][method]["metrics"]["D_lambda"]) <= 1e-12

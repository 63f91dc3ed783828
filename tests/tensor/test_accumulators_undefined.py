"""Issue 34: the training-loop accumulators (``ReducedMetrics``/``FullMetrics`` and the torchmetrics
adapters) leave an undefined image value (an infinite PSNR, a NaN distortion) out of the mean and
the standard deviation, and keep it in ``per_image``; every expected number is written here from
its definition, never read from the code.

Reduced resolution: fused = reference + ``d`` DN on every pixel, so MSE = d^2 exactly and
PSNR = 20 log10((2**11 - 1) / d), RMSE = d / (2**11 - 1); d = 0 gives PSNR = inf.
Full resolution: a fused image equal to the EXP (the MS upsampled by interp23tap) has D_lambda = 0
by construction (the same band pairs on the same blocks); a constant block in every band makes its
fused band-pair UIQIs 0/0, so ``nan_policy="propagate"`` gives D_lambda = NaN there.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import ndimage

import pansharp_iqa as pi
from pansharp_iqa.tensor.metrics import FullMetrics, ReducedMetrics, summarize

PEAK = 2.0**11 - 1
OFFSETS = (4.0, 0.0, 32.0)  # image 1 is perfect: PSNR = inf


def smooth(seed: int, size: int, bands: int) -> np.ndarray:
    """A seeded smooth field, 200-1400 DN, integer (size x size x bands)."""
    rng = np.random.default_rng(seed)
    field = ndimage.zoom(rng.uniform(0, 1, (size // 8, size // 8, bands)), (8, 8, 1), order=3)
    return np.round(200 + 1200 * (field - field.min()) / (field.max() - field.min()))


def psnr(d: float) -> float:
    return math.inf if d == 0 else 20.0 * math.log10(PEAK / d)


PSNR_MEAN = (psnr(4.0) + psnr(32.0)) / 2                  # over the finite images only
PSNR_STD = abs(psnr(4.0) - psnr(32.0)) / math.sqrt(2)     # ddof = 1 over 2 values
RMSE = [d / PEAK for d in OFFSETS]
RMSE_STD = math.sqrt(sum((r - sum(RMSE) / 3) ** 2 for r in RMSE) / 2)


def test_summarize_leaves_nan_and_inf_out_by_hand():
    means, stds = summarize({"a": [1.0, math.nan, 3.0, math.inf], "b": [math.nan, 5.0], "c": [math.nan]})
    assert means == {"a": 2.0, "b": 5.0, "c": pytest.approx(math.nan, nan_ok=True)}
    assert stds["a"] == math.sqrt(2.0)  # (1 - 2)^2 + (3 - 2)^2 over 2 - 1
    assert math.isnan(stds["b"]) and math.isnan(stds["c"])  # one value: the sample std is undefined


@pytest.fixture(scope="module")
def reduced_batches():
    refs = [smooth(80 + i, 96, 4) for i in range(3)]
    fused = [r + d for r, d in zip(refs, OFFSETS, strict=True)]
    return refs, fused


def _check_reduced(per_image, means, stds):
    assert per_image["PSNR"][0] == pytest.approx(psnr(4.0), rel=1e-12) and per_image["PSNR"][1] == math.inf
    assert means["PSNR"] == pytest.approx(PSNR_MEAN, rel=1e-12)
    assert stds["PSNR"] == pytest.approx(PSNR_STD, rel=1e-12)
    assert means["RMSE"] == pytest.approx(sum(RMSE) / 3, rel=1e-12)
    assert stds["RMSE"] == pytest.approx(RMSE_STD, rel=1e-12)


def test_reduced_metrics_leave_the_infinite_image_out(reduced_batches):
    refs, fused = reduced_batches
    m = ReducedMetrics(ratio=4, bits=11, indexes=["PSNR", "RMSE"], layout="NHWC")
    m.update(np.stack(fused[:2]), np.stack(refs[:2]))  # two batches: the merge is tested too
    m.update(np.stack(fused[2:]), np.stack(refs[2:]))
    out = m.compute()
    _check_reduced(out["per_image"], out, out["std"])


def test_torchmetrics_reduced_quality_leaves_the_infinite_image_out(reduced_batches):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchmetrics")
    from pansharp_iqa.tensor.torchmetrics_adapter import ReducedQuality

    refs, fused = reduced_batches
    m = ReducedQuality(ratio=4, bits=11, indexes=["PSNR", "RMSE"], layout="NHWC")
    m.update(torch.tensor(np.stack(fused[:1])), torch.tensor(np.stack(refs[:1])))
    m.update(torch.tensor(np.stack(fused[1:])), torch.tensor(np.stack(refs[1:])))
    means = {k: float(v) for k, v in m.compute().items()}
    _check_reduced(m.per_image(), means, m.std())


@pytest.fixture(scope="module")
def full_batch():
    """Three images at PAN scale 128 x 128 x 4: EXP, EXP with a constant block, EXP (NHWC)."""
    ms = [smooth(90 + i, 32, 4) for i in range(3)]
    exp = [pi.interp23tap(m, 4) for m in ms]
    fused = [e.copy() for e in exp]
    fused[1][32:64, 0:32, :] = 700.0  # one block constant in every band: UIQI 0/0 for every band pair
    pan = [e.mean(axis=2) + np.random.default_rng(7 + i).normal(0, 20, e.shape[:2]) for i, e in enumerate(exp)]
    return np.stack(fused), np.stack(ms), np.stack(pan)


def test_full_metrics_leave_the_nan_image_out(full_batch):
    fused, ms, pan = full_batch
    m = FullMetrics(sensor="none", ratio=4, bits=11, nan_policy="propagate", indexes=["D_lambda"], layout="NHWC")
    m.update(fused[:2], ms[:2], pan[:2])
    m.update(fused[2:], ms[2:], pan[2:])
    out = m.compute()
    d = out["per_image"]["D_lambda"]
    assert math.isnan(d[1]) and abs(d[0]) <= 1e-12 and abs(d[2]) <= 1e-12
    assert abs(out["D_lambda"]) <= 1e-12 and abs(out["std"]["D_lambda"]) <= 1e-12  # mean/std of (0, 0)


def test_torchmetrics_full_quality_leaves_the_nan_image_out(full_batch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchmetrics")
    from pansharp_iqa.tensor.torchmetrics_adapter import FullQuality

    fused, ms, pan = full_batch
    m = FullQuality(sensor="none", ratio=4, bits=11, nan_policy="propagate", indexes=["D_lambda"], layout="NHWC")
    m.update(torch.tensor(fused), torch.tensor(ms), torch.tensor(pan))
    assert math.isnan(m.per_image()["D_lambda"][1])
    assert abs(float(m.compute()["D_lambda"])) <= 1e-12 and abs(m.std()["D_lambda"]) <= 1e-12


def test_tile_merges_give_the_hand_values_and_the_infinite_psnr(reduced_batches):
    """Per-tile squared-error sums merged (tiled/accumulate.py; 2 workers: tests/spec/test_spec_nan_policy.py):
    PSNR and RMSE of a known offset to the last digits, and inf / 0 for the perfect image."""
    from pansharp_iqa.tiled.api import evaluate_reduced_tiled

    refs, fused = reduced_batches
    for ref, fus, d in zip(refs, fused, OFFSETS, strict=True):
        got = evaluate_reduced_tiled(fus, ref, tile_size=32, ratio=4, bits=11, indexes=["PSNR", "RMSE"])
        assert got["protocol"]["tiling"]["n_tiles"] > 1
        assert got["PSNR"] == (math.inf if d == 0 else pytest.approx(psnr(d), rel=1e-12))
        assert got["RMSE"] == pytest.approx(d / PEAK, rel=1e-12, abs=0.0)

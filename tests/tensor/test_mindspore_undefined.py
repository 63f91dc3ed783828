"""Issue 34: the MindSpore metric leaves an undefined image value (the infinite PSNR of a perfect
image) out of its mean and standard deviation, as the other accumulators; expected numbers written
from the definition (fused = reference + d DN: MSE = d^2, PSNR = 20 log10((2**11 - 1) / d)).
Runs in the numpy<2 venv where MindSpore installs (CI's phase 5)."""

from __future__ import annotations

import math
import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore is imported

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import ndimage  # noqa: E402

ms = pytest.importorskip("mindspore")

from pansharp_iqa.tensor.mindspore_adapter import ReducedQuality  # noqa: E402

PEAK = 2.0**11 - 1
OFFSETS = (4.0, 0.0, 32.0)


def smooth(seed: int, size: int = 96, bands: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    field = ndimage.zoom(rng.uniform(0, 1, (size // 8, size // 8, bands)), (8, 8, 1), order=3)
    return np.round(200 + 1200 * (field - field.min()) / (field.max() - field.min()))


def test_mindspore_metric_leaves_the_infinite_image_out():
    refs = [smooth(80 + i) for i in range(3)]
    fused = [r + d for r, d in zip(refs, OFFSETS, strict=True)]
    metric = ReducedQuality(ratio=4, bits=11, indexes=["PSNR", "RMSE"], layout="NHWC")
    metric.clear()
    metric.update(ms.Tensor(np.stack(fused[:2])), ms.Tensor(np.stack(refs[:2])))
    metric.update(ms.Tensor(np.stack(fused[2:])), ms.Tensor(np.stack(refs[2:])))
    p4, p32 = 20 * math.log10(PEAK / 4), 20 * math.log10(PEAK / 32)
    means = metric.eval()
    assert means["PSNR"] == pytest.approx((p4 + p32) / 2, rel=1e-12)
    assert means["RMSE"] == pytest.approx(36.0 / 3 / PEAK, rel=1e-12)
    table = metric.compute()
    assert table["per_image"]["PSNR"][1] == math.inf
    assert table["std"]["PSNR"] == pytest.approx(abs(p4 - p32) / math.sqrt(2), rel=1e-12)

"""Helpers shared by the NLRNet tests (data location, tiny synthetic h5 sets)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def shared_data_dir() -> Path:
    """``$PANSHARP_SHARED_DATA`` or ``<repo>/../shared/data``."""
    env = os.environ.get("PANSHARP_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def write_h5(path: Path, gt: np.ndarray, lms: np.ndarray, pan: np.ndarray, *, sensor: str = "WV2",
             ratio: int = 4, bits: int = 11, attrs: bool = True) -> Path:
    """Write an h5 in the prepared layout ([0, 1] data, N x C x H x W) or without attributes."""
    import h5py

    from pansharp_iqa.nlrnet.h5data import LAYOUT

    with h5py.File(path, "w") as f:
        f["gt"], f["lms"], f["pan"] = gt, lms, pan
        f["ms"] = gt[:, :, ratio // 2::ratio, ratio // 2::ratio]
        if attrs:
            f.attrs.update({"layout": LAYOUT, "sensor": sensor, "ratio": ratio, "bits": bits})
    return path


def synthetic_arrays(n: int, size: int, bands: int = 8, seed: int = 0):
    """Smooth random scenes: gt in [0.1, 0.7]; lms = blurred gt; pan = band mean + detail."""
    from scipy.ndimage import gaussian_filter, uniform_filter

    rng = np.random.default_rng(seed)
    base = gaussian_filter(rng.random((n, 1, size, size)), sigma=(0, 0, 2, 2))
    tint = rng.random((n, bands, 1, 1))
    gt = (0.1 + 0.6 * (0.5 * base + 0.5 * tint * gaussian_filter(
        rng.random((n, bands, size, size)), sigma=(0, 0, 3, 3)))).astype(np.float32)
    lms = uniform_filter(gt, size=(1, 1, 5, 5), mode="nearest").astype(np.float32)
    pan = gt.mean(axis=1, keepdims=True).astype(np.float32)
    return gt, lms, pan

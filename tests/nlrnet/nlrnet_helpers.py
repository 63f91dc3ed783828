"""Helpers shared by the NLRNet tests (data location, tiny synthetic h5 sets and .mat scenes)."""

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

    from pansharp_iqa.io.metadata import NLRNET_LAYOUT as LAYOUT

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


def write_scene_mat(path: Path, ms: np.ndarray, pan: np.ndarray, *, sensor: str | None = "QB",
                    ratio: int | None = 4, bits: int | None = 11, mat73: bool = False) -> Path:
    """Write a scene as the GRIP/PNN ``.mat`` files do: ``I_MS`` (h, w, B), ``I_PAN`` and the
    recorded ``sensor``, ``ratio``, ``L``; MATLAB v5 (scipy) or, with ``mat73``, v7.3 (HDF5 with
    the MATLAB header, arrays stored column-major and text as uint16 character codes)."""
    meta = {k: v for k, v in (("sensor", sensor), ("ratio", ratio), ("L", bits)) if v is not None}
    if not mat73:
        import scipy.io as sio

        sio.savemat(path, {"I_MS": ms, "I_PAN": pan,
                           **{k: (v if isinstance(v, str) else float(v)) for k, v in meta.items()}})
        return path
    import h5py

    with h5py.File(path, "w", userblock_size=512) as f:
        for key, value in (("I_MS", ms), ("I_PAN", pan)):
            if value is not None:
                f[key] = np.asarray(value).T
        for key, value in meta.items():
            f[key] = (np.array([[ord(c)] for c in value], np.uint16) if isinstance(value, str)
                      else np.array([[float(value)]]))
    header = b"MATLAB 7.3 MAT-file, written by the NLRNet tests".ljust(116) + bytes(8) + b"\x00\x02IM"
    with open(path, "r+b") as f:
        f.write(header)
    return path


def random_scene(h: int, w: int, bands: int = 4, ratio: int = 4, seed: int = 0):
    """(ms, pan) in DN: MS (h, w, bands) in [200, 300], PAN (ratio*h, ratio*w) in [225, 275] (on the MS's scale)."""
    rng = np.random.default_rng(seed)
    return 200.0 + 100.0 * rng.random((h, w, bands)), 225.0 + 50.0 * rng.random((ratio * h, ratio * w))

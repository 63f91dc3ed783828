"""Synthetic scenes for the tile-wise tests: small, correlated, written by the tests themselves."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")


def smooth_field(rng: np.random.Generator, h: int, w: int, b: int, sigma: float) -> np.ndarray:
    x = rng.normal(size=(h, w, b))
    return np.stack([cv2.GaussianBlur(x[:, :, i], (0, 0), sigma) for i in range(b)], axis=2)


def make_scene(seed: int, h: int, w: int, bands: int = 8, ratio: int = 4) -> dict[str, np.ndarray]:
    """uint16 11-bit scene: ground truth / fused at PAN scale, PAN, low-resolution MS.

    ``h`` and ``w`` need not be multiples of anything; the MS is the block mean of the largest
    ratio-multiple crop.
    """
    rng = np.random.default_rng(seed)
    common = smooth_field(rng, h, w, 1, 4.0)
    gt = 700.0 + 1500.0 * common + 600.0 * smooth_field(rng, h, w, bands, 2.0)
    gt += np.linspace(0.0, 150.0, bands)[None, None, :]
    gt = np.clip(gt, 1.0, 2047.0)
    pan = np.clip(gt.mean(axis=2) + 25.0 * rng.normal(size=(h, w)), 0.0, 2047.0)
    fused = np.clip(gt + 20.0 * rng.normal(size=gt.shape) + 40.0 * smooth_field(rng, h, w, bands, 1.0), 0.0, 2047.0)
    hh, ww = h - h % ratio, w - w % ratio
    ms = gt[:hh, :ww].reshape(hh // ratio, ratio, ww // ratio, ratio, bands).mean(axis=(1, 3))
    return {
        "gt": np.round(gt).astype(np.uint16),
        "fused": np.round(fused).astype(np.uint16),
        "pan": np.round(pan).astype(np.uint16),
        "ms": np.round(ms).astype(np.uint16),
    }


def write_tif(path, arr: np.ndarray, *, block: int = 256) -> str:
    """GeoTIFF (tiled, with a geotransform) of an (H, W) or (H, W, B) array; returns the path."""
    rasterio = pytest.importorskip("rasterio")
    from affine import Affine

    a = arr if arr.ndim == 3 else arr[:, :, None]
    profile = dict(driver="GTiff", height=a.shape[0], width=a.shape[1], count=a.shape[2], dtype=a.dtype.name,
                   transform=Affine(0.5, 0.0, 500000.0, 0.0, -0.5, 4000000.0))
    if a.shape[0] >= block and a.shape[1] >= block:
        profile.update(tiled=True, blockxsize=block, blockysize=block)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(np.moveaxis(a, 2, 0))
    return str(path)


def rel_diff(a: float, b: float) -> float:
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(b), 1e-300)


@pytest.fixture(scope="session")
def big_scene() -> dict[str, np.ndarray]:
    """1024 x 1024 x 8 at PAN scale, MS 256 x 256 x 8."""
    return make_scene(7, 1024, 1024)


@pytest.fixture(scope="session")
def big_tifs(big_scene, tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("scene1024")
    return {k: write_tif(d / f"{k}.tif", v) for k, v in big_scene.items()}


@pytest.fixture(scope="session")
def odd_scene() -> dict[str, np.ndarray]:
    """1000 x 936 (not multiples of the tile or the block after the border cut)."""
    return make_scene(11, 1000, 936)

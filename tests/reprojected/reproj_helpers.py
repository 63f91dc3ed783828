"""Helpers for the reprojected-protocol tests (unique module name: no clash with other conftests)."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter


def shared_data_dir() -> pathlib.Path:
    """``$PANSHARP_SHARED_DATA`` or ``<repo_root>/../shared/data`` (never copied into the repo)."""
    env = os.environ.get("PANSHARP_SHARED_DATA")
    if env:
        return pathlib.Path(env)
    repo_root = pathlib.Path(__file__).resolve().parents[2]
    return repo_root.parent / "shared" / "data"


def load_mat(name: str) -> dict:
    path = shared_data_dir() / name
    if not path.exists():
        pytest.skip(f"shared data {path} not available")
    import scipy.io as sio

    return sio.loadmat(str(path))


def textured_fused(shape: tuple[int, int, int], seed: int = 3) -> np.ndarray:
    """Smooth, band-correlated synthetic 'DN' image (H, W, B) with fine texture."""
    rng = np.random.default_rng(seed)
    h, w, n_bands = shape
    base = gaussian_filter(rng.normal(size=(h, w)), 3) * 400 + 1000
    return np.stack(
        [base * (0.6 + 0.2 * b) + gaussian_filter(rng.normal(size=(h, w)), 1.5) * 60 for b in range(n_bands)],
        axis=-1,
    )

"""Shared helpers for the independent spec tests (unique module name: no clash with other conftests)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]


def shared_data_dir() -> Path:
    env = os.environ.get("PANSHARP_SHARED_DATA")
    if env:
        return Path(env)
    return REPO_ROOT.parent / "shared" / "data"


def load_mat(name: str) -> dict:
    path = shared_data_dir() / name
    if not path.is_file():
        pytest.skip(f"real data {name} not found in {path.parent} (set PANSHARP_SHARED_DATA)")
    scipy_io = pytest.importorskip("scipy.io")
    return scipy_io.loadmat(str(path))


def rel_close(actual, expected, rtol=1e-9, atol=0.0, what=""):
    actual = float(actual)
    expected = float(expected)
    tol = rtol * abs(expected) + atol
    assert np.isfinite(actual), f"{what}: got non-finite {actual!r}, expected {expected!r}"
    assert abs(actual - expected) <= tol, (
        f"{what}: got {actual!r}, expected {expected!r} (|diff|={abs(actual - expected):.3e}, tol={tol:.3e})")


def arr_close(actual, expected, rtol=1e-9, what=""):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


def dn_int(rng, shape, hi=2047):
    return rng.integers(0, hi + 1, size=shape).astype(np.float64)


def dn_float(rng, shape, lo=1.0, hi=2047.0):
    return rng.uniform(lo, hi, size=shape)


def smooth_dn(rng, shape, hi=2000.0):
    """Spatially correlated positive DN-like data (so indexes are far from trivial)."""
    H, W = shape[:2]
    B = shape[2] if len(shape) == 3 else 1
    yy, xx = np.mgrid[0:H, 0:W]
    out = np.zeros((H, W, B))
    for b in range(B):
        f1, f2 = rng.uniform(0.02, 0.2, 2)
        ph = rng.uniform(0, 6.28, 2)
        base = 0.5 + 0.25 * np.sin(f1 * xx + ph[0]) * np.cos(f2 * yy + ph[1])
        out[:, :, b] = hi * (base + 0.15 * rng.random((H, W)))
    return out if len(shape) == 3 else out[:, :, 0]



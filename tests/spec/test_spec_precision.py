"""Precision of the vectorised sliding-window Q_avg against exact window sums.

The toolbox's filter2 sums every 32x32 window directly (error ~ eps per window). A vectorised
implementation must keep that accuracy on large, low-contrast float images (typical fused data):
running sums over the whole image lose digits that the `N*Sxx - Sx^2` cancellation then amplifies.
Data are multiples of 2^-10 so that all window sums are computed EXACTLY in int64 here.
"""
from __future__ import annotations

import numpy as np
import pytest

from spec_helpers import rel_close


def _exact_window_sums(xi: np.ndarray, yi: np.ndarray, bs: int):
    """xi, yi: int64 images (value * 2^10). Returns exact float window sums of x, y, xx, yy, xy."""
    def wsum(a):
        c = np.zeros((a.shape[0] + 1, a.shape[1] + 1), dtype=object)
        c[1:, 1:] = a.astype(object).cumsum(0).cumsum(1)
        s = c[bs:, bs:] - c[:-bs, bs:] - c[bs:, :-bs] + c[:-bs, :-bs]
        return s
    sx, sy = wsum(xi), wsum(yi)
    sxx, syy, sxy = wsum(xi * xi), wsum(yi * yi), wsum(xi * yi)
    f = np.vectorize(float, otypes=[np.float64])
    k = 2.0 ** -10
    return f(sx) * k, f(sy) * k, f(sxx) * k * k, f(syy) * k * k, f(sxy) * k * k


def _q_from_sums(sx, sy, sxx, syy, sxy, N):
    num = 4 * (N * sxy - sx * sy) * sx * sy
    d1 = N * (sxx + syy) - sx * sx - sy * sy
    d2 = sx * sx + sy * sy
    out = np.ones_like(sx)
    idx = (d1 == 0) & (d2 != 0)
    out[idx] = 2 * sx[idx] * sy[idx] / d2[idx]
    idx = d1 * d2 != 0
    out[idx] = num[idx] / (d1 * d2)[idx]
    return out


@pytest.mark.parametrize("size,mean,std", [(256, 1500.0, 25.0), (384, 1800.0, 8.0)])
def test_q_index_low_contrast_large(piq, size, mean, std):
    rng = np.random.default_rng(size)
    yy, xx = np.mgrid[0:size, 0:size]
    base = mean + std * (np.sin(xx / 9.0) * np.cos(yy / 13.0) + 0.5 * rng.standard_normal((size, size)))
    other = base + 0.3 * std * rng.standard_normal((size, size)) + 2.0
    xi = np.round(base * 1024).astype(np.int64)
    yi = np.round(other * 1024).astype(np.int64)
    x = xi / 1024.0
    y = yi / 1024.0
    sums = _exact_window_sums(xi, yi, 32)
    qmap = _q_from_sums(*sums, N=1024)
    expected = float(np.mean(qmap))
    got_val, got_map = piq.q_index(x[:, :, None], y[:, :, None], return_map=True)
    rel_close(got_val, expected, what=f"q_index low contrast {size}")
    got_map = np.asarray(got_map)[:, :, 0]
    err = np.max(np.abs(got_map - qmap) / np.maximum(np.abs(qmap), 1e-3))
    assert err <= 1e-9, f"max relative error of the Q map {err:.3e}"

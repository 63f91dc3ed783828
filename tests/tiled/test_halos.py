"""Windowed operators with halos equal the whole-image operators on every tile."""

from __future__ import annotations

import numpy as np
import pytest

from pansharp_iqa.borders import border_index, consecutive_runs
from pansharp_iqa.io.windows import ArraySource
from pansharp_iqa.mtf import mtf_filter
from pansharp_iqa.resample import imresize, interp23tap
from pansharp_iqa.tiled.halos import exp_window, imresize_at, imresize_support, mtf_support, mtf_window
from pansharp_iqa.tiled.patch import Patch, fetch


def test_border_maps_match_numpy_padding():
    x = np.arange(7)
    idx = np.arange(-9, 16)
    for mode, np_mode in (("symmetric", "symmetric"), ("reflect", "reflect"), ("replicate", "edge"), ("wrap", "wrap")):
        padded = np.pad(x, 9, mode=np_mode)[: idx.size]
        np.testing.assert_array_equal(x[border_index(idx, 7, mode)], padded, err_msg=mode)
    c = border_index(idx, 7, "constant")
    assert np.all(c[(idx < 0) | (idx >= 7)] == -1) and np.array_equal(c[9:16], x)


def test_consecutive_runs():
    assert consecutive_runs(np.array([5, 6, 7, 0, 1, 1, 2])) == [(5, 8), (0, 2), (1, 3)]
    assert consecutive_runs(np.array([3])) == [(3, 4)]


def _whole_patch(img: np.ndarray) -> Patch:
    patch, _ = fetch(ArraySource(img, "x"), [np.arange(img.shape[0])], [np.arange(img.shape[1])])
    return patch


def _tiles(n: int, step: int):
    return [(a, min(a + step, n)) for a in range(0, n, step)]


@pytest.mark.parametrize("ratio,shape_lr,step", [(2, (24, 20), 4), (4, (16, 24), 8), (8, (12, 8), 4), (4, (5, 7), 1)])
def test_exp_window_equals_interp23tap(ratio, shape_lr, step):
    rng = np.random.default_rng(ratio)
    low = rng.uniform(0, 2000, size=shape_lr + (2,))
    whole = interp23tap(low, ratio)
    patch = _whole_patch(low)
    for rows in _tiles(shape_lr[0], step):
        for cols in _tiles(shape_lr[1], step):
            got = exp_window(patch.take, rows, cols, shape_lr, ratio)
            want = whole[rows[0] * ratio : rows[1] * ratio, cols[0] * ratio : cols[1] * ratio]
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-10)


@pytest.mark.parametrize("ratio,shape", [(2, (40, 36)), (4, (64, 48)), (8, (64, 64))])
def test_imresize_at_equals_imresize(ratio, shape):
    rng = np.random.default_rng(ratio)
    img = rng.uniform(0, 2000, size=shape + (1,))
    whole = imresize(img[:, :, 0], 1.0 / ratio)
    patch = _whole_patch(img)
    n_lr = (shape[0] // ratio, shape[1] // ratio)
    rows = border_index(np.arange(-3, 3), n_lr[0], "wrap")  # runs at both edges, as the EXP support of a corner tile
    cols = np.arange(1, n_lr[1] - 1)
    got = imresize_at(patch, rows, cols, shape, ratio)[:, :, 0]
    np.testing.assert_allclose(got, whole[rows][:, cols], rtol=1e-13, atol=1e-10)
    assert set(imresize_support(rows, shape[0], ratio)) <= set(range(shape[0]))


def test_mtf_window_equals_mtf_filter():
    rng = np.random.default_rng(0)
    img = rng.uniform(0, 2000, size=(70, 90, 2))
    whole = mtf_filter(img, [0.3, 0.25], 4)
    for rows in _tiles(70, 32):
        for cols in _tiles(90, 32):
            patch, _ = fetch(ArraySource(img, "x"), [mtf_support(*rows, 70)], [mtf_support(*cols, 90)])
            got = mtf_window(patch, rows, cols, (70, 90), [0.3, 0.25], 4)
            np.testing.assert_allclose(got, whole[rows[0] : rows[1], cols[0] : cols[1]], rtol=1e-12, atol=1e-9)


def test_patch_take_zero_padding_and_missing_pixels():
    img = np.arange(30.0).reshape(5, 6, 1)
    patch, stats = fetch(ArraySource(img, "x"), [np.array([1, 2, 4])], [np.array([0, 5])], scale=2.0)
    assert stats == {"min": 12.0, "max": 58.0, "maxabs": 58.0}  # rows 1, 2, 4 x cols 0, 5, scaled by 2
    got = patch.take(np.array([-1, 2, 4]), np.array([5, -1]))[:, :, 0]
    np.testing.assert_array_equal(got, [[0, 0], [2 * 17, 0], [2 * 29, 0]])
    with pytest.raises(AssertionError, match="halo planning"):
        patch.take(np.array([3]), np.array([0]))

"""Windows of every declared derived image, computed from their halos, equal the whole-image images."""

from __future__ import annotations

import numpy as np
import pytest

from pansharp_iqa import get_protocol, interp23tap
from pansharp_iqa.borders import border_index, consecutive_runs
from pansharp_iqa.indexes.catalog import DERIVED, ChunkContext
from pansharp_iqa.indexes.full_pass import Scene, scale_of
from pansharp_iqa.indexes.regression import d_s_r_map, lsr_fit, lsr_gram_sums, lsr_residual
from pansharp_iqa.io.windows import ArraySource
from pansharp_iqa.mtf import mtf_filter
from pansharp_iqa.resample import fineshift, imresize
from pansharp_iqa.tiled.halos import exp_window
from pansharp_iqa.tiled.patch import Patch, fetch

COMPUTED = [n for n, d in DERIVED.items() if d.choice is None]


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


def _inputs(shape, ratio, bands=2, seed=0):
    rng = np.random.default_rng(seed)
    h, w = shape
    return {"fused": rng.uniform(0, 2000, (bands, h, w)), "pan": rng.uniform(0, 2000, (1, h, w)),
            "ms": rng.uniform(0, 2000, (bands, h // ratio, w // ratio))}


def _ctx(ratio, planes):
    # the LSR residual's global fit (fitted by a first pass over the whole image), as the engine's later pass has it
    fit = lsr_fit(lsr_gram_sums(planes["fused"], planes["pan"]))
    return ChunkContext(ratio=ratio, protocol=get_protocol("toolbox2015"), ms_gnyq=(0.3, 0.25), pan_gnyq=0.15,
                        block_size=8, fitted={"lsr": fit})


@pytest.mark.parametrize("name", COMPUTED)
@pytest.mark.parametrize(("ratio", "shape", "step"), [(2, (48, 40), 8), (4, (64, 96), 16), (8, (64, 64), 16),
                                                      (4, (20, 28), 4)])
def test_windows_of_every_derived_image_equal_the_whole_image(name, ratio, shape, step):
    # tiles smaller than the halos too: the windows' border positions wrap or mirror more than once
    planes = _inputs(shape, ratio)
    scene = Scene.of(planes, _ctx(ratio, planes))
    whole = scene.window(name, *scene.positions(name, (0, shape[0]), (0, shape[1])))
    for r0 in range(0, shape[0], step):
        for c0 in range(0, shape[1], step):
            rows, cols = (r0, min(r0 + step, shape[0])), (c0, min(c0 + step, shape[1]))
            at = scene.positions(name, rows, cols)
            np.testing.assert_allclose(scene.window(name, *at), whole[:, at[0]][:, :, at[1]], rtol=1e-12, atol=1e-9,
                                       err_msg=f"{name} rows {rows} cols {cols}")
            needs: dict[str, list[np.ndarray]] = {}
            scene.support(name, at[0], 0, needs)  # what a tile reads: inside the image, at the inputs' scales
            assert all(0 <= p.min() and p.max() < scene._length(role, 0) for role, ps in needs.items() for p in ps)


def test_whole_images_are_the_operators_themselves():
    ratio, shape = 4, (64, 96)
    planes = _inputs(shape, ratio)
    scene = Scene.of(planes, _ctx(ratio, planes))
    hwb = {k: np.moveaxis(v, 0, 2) for k, v in planes.items()}
    residual = lsr_residual(planes["fused"], planes["pan"], scene.ctx.fitted["lsr"])
    want = {"exp": interp23tap(hwb["ms"], ratio), "pan_lr": imresize(hwb["pan"], 1 / ratio),
            "pan_lr_exp": interp23tap(imresize(hwb["pan"], 1 / ratio), ratio),
            "pan_mtf": mtf_filter(hwb["pan"], 0.15, ratio, sigma_form="2015"),
            "mtf_fused": mtf_filter(hwb["fused"], [0.3, 0.25], ratio),
            "lsr_residual": np.moveaxis(residual, 0, 2), "d_s_r_map": d_s_r_map(residual, 8)[:, :, None]}
    want["fused_shift"] = fineshift(want["mtf_fused"], 1, 1)  # the HS/S2 protocols' images at MS scale (start 0)
    want["fused_lr"] = want["mtf_fused"][::ratio, ::ratio]
    want["fused_shift_lr"] = want["fused_shift"][::ratio, ::ratio]
    assert set(want) == set(COMPUTED)
    for name, image in want.items():
        got = scene.window(name, *scene.positions(name, (0, shape[0]), (0, shape[1])))
        assert got.shape[1:] == image.shape[:2] and scale_of(name) == ("ms" if got.shape[1] < shape[0] else "pan")
        np.testing.assert_array_equal(np.moveaxis(got, 0, 2), image, err_msg=name)


def test_exp_window_of_a_crop():
    rng = np.random.default_rng(1)
    low = rng.uniform(0, 2000, size=(16, 24, 2))
    whole = interp23tap(low, 4)
    for rows, cols in (((0, 3), (5, 24)), ((7, 16), (0, 24)), ((4, 9), (20, 24))):
        got = exp_window(lambda r, c: low[r][:, c], rows, cols, low.shape[:2], 4)
        np.testing.assert_array_equal(got, whole[rows[0] * 4 : rows[1] * 4, cols[0] * 4 : cols[1] * 4])


def test_patch_take_zero_padding_and_missing_pixels():
    img = np.arange(30.0).reshape(5, 6, 1)
    patch, stats = fetch(ArraySource(img, "x"), [np.array([1, 2, 4])], [np.array([0, 5])], scale=2.0)
    assert stats == {"min": 12.0, "max": 58.0, "maxabs": 58.0}  # rows 1, 2, 4 x cols 0, 5, scaled by 2
    got = patch.take(np.array([-1, 2, 4]), np.array([5, -1]))
    np.testing.assert_array_equal(got[0], [[0, 0], [2 * 17, 0], [2 * 29, 0]])
    with pytest.raises(AssertionError, match="halo planning"):
        patch.take(np.array([3]), np.array([0]))


def test_a_patch_reads_each_window_once_and_refuses_non_finite_values():
    img = np.arange(60.0).reshape(6, 10, 1)
    patch, _ = fetch(ArraySource(img, "x"), [np.arange(2, 5)], [np.arange(1, 9)])
    assert isinstance(patch, Patch) and patch.data.shape == (1, 3, 8)
    np.testing.assert_array_equal(patch.take(np.arange(2, 5), np.arange(1, 9))[0], img[2:5, 1:9, 0])
    img[3, 4] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        fetch(ArraySource(img, "x"), [np.arange(2, 5)], [np.arange(1, 9)])

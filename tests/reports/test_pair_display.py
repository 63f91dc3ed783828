"""One pair's display material and a scene's grid: shared stretch and crop, exact crops, residuals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from pansharp_iqa import interp23tap
from pansharp_iqa.reports.display import apply_stretch, downsample, rgb_bands, stretch_limits
from pansharp_iqa.reports.image_codec import decode_image
from pansharp_iqa.reports.pair_display import PairDisplay, assemble_scene, make_pair_display
from report_helpers import Arrays


def _scene(seed: int, size: int = 128, bands: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)  # bands correlated, as in real scenes
    base = ndimage.zoom(rng.uniform(0, 1, (size // 8, size // 8)), 8, order=1)[:, :, None]
    tint = ndimage.zoom(rng.uniform(0, 1, (size // 32, size // 32, bands)), (32, 32, 1), order=1)
    return 200 + 1200 * base + 300 * tint


def _close(jpeg: bytes, expected: np.ndarray, tol: float = 4.0) -> bool:
    got = decode_image(jpeg).astype(float)
    return got.shape == expected.shape and float(np.abs(got - expected).mean()) < tol


RGB = rgb_bands(4, ["Blue", "Green", "Red", "NIR"])


def test_reduced_pair_shares_stretch_and_crop_and_shows_the_true_pixels():
    gt = _scene(1, 512)
    fused = gt + np.random.default_rng(2).normal(0, 8, gt.shape)
    other = gt * 1.1
    a = make_pair_display(Arrays(fused=fused, gt=gt), method="A", resolution="reduced", ratio=4, rgb=RGB)
    b = make_pair_display(Arrays(fused=other, gt=gt), method="B", resolution="reduced", ratio=4, rgb=RGB)
    assert a.full_shape == (512, 512) and a.display_shape == (256, 256)
    assert a.crop == b.crop and a.crop[2] == 96  # the crop depends on the reference only
    assert a.references == b.references and a.references[0].label == "GT"
    row, col, side = a.crop
    lims = stretch_limits(downsample(gt[:, :, [2, 1, 0]], (256, 256)))
    assert _close(a.fused.crop, apply_stretch(fused[row:row + side, col:col + side, [2, 1, 0]], lims))
    assert _close(b.fused.image, apply_stretch(downsample(other[:, :, [2, 1, 0]], (256, 256)), lims))
    assert _close(a.references[0].crop, apply_stretch(gt[row:row + side, col:col + side, [2, 1, 0]], lims))
    # residual: half the display size, mean |fused - GT| in DN
    assert a.residual.shape == (128, 128)
    expected = downsample(np.abs(fused - gt).mean(axis=2), (128, 128))
    assert np.allclose(a.residual_dn(), expected, rtol=2e-3)
    assert np.allclose(b.residual_dn(), downsample(np.abs(0.1 * gt).mean(axis=2), (128, 128)), rtol=2e-3)


def test_full_resolution_pair_shows_exp_and_pan_with_an_exact_exp_crop():
    ms = _scene(3, 64)
    pan = ndimage.zoom(ms.mean(axis=2), 4, order=1)
    fused = interp23tap(ms, 4) + 5
    d = make_pair_display(Arrays(fused=fused, ms=ms, pan=pan), method="F", resolution="full", ratio=4, rgb=RGB)
    assert [p.label for p in d.references] == ["MS (EXP)", "PAN"] and d.residual is None
    row, col, side = d.crop
    assert row % 4 == 0 and col % 4 == 0 and side % 4 == 0  # MS-aligned
    exp = interp23tap(ms, 4)[row:row + side, col:col + side, [2, 1, 0]]
    lims = stretch_limits(downsample(ms[:, :, [2, 1, 0]], (256, 256)))
    assert _close(d.references[0].crop, apply_stretch(exp, lims))
    pan_lims = stretch_limits(pan)
    assert _close(d.references[1].crop, apply_stretch(pan[row:row + side, col:col + side], pan_lims))
    assert decode_image(d.references[1].image).ndim == 2  # the PAN is grey


def test_assemble_scene_shares_the_residual_scale_and_keeps_reasons():
    gt = _scene(4, 96)
    displays = {}
    for m, sigma in (("low", 5.0), ("mid", 20.0), ("high", 400.0)):
        fused = gt + np.random.default_rng(int(sigma)).normal(0, sigma, gt.shape)
        displays[m] = make_pair_display(Arrays(fused=fused, gt=gt), method=m, resolution="reduced", ratio=4, rgb=RGB)
    displays["broken"] = "no display: ValueError: test"
    view = assemble_scene("s", ["low", "mid", "broken", "high", "missing"], displays)
    tops = [np.percentile(displays[m].residual_dn(), 99) for m in ("low", "mid", "high")]
    assert view.residual_max == pytest.approx(float(np.median(tops)))
    assert view.panels["broken"] == "no display: ValueError: test"
    assert "not evaluated" in view.panels["missing"]
    assert set(view.residuals) == {"low", "mid", "high"}
    assert view.references == displays["low"].references and "test access" in view.notes
    assert RGB.note in view.notes
    assert assemble_scene("s", ["a"], {"a": "failed"}) is None
    assert isinstance(displays["low"], PairDisplay)

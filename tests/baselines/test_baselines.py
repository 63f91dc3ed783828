"""The classical baselines: properties each one has by construction (independent of our code)."""

from __future__ import annotations

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import BASELINES, bt_h, exp, gsa, mtf_glp_hpm
from pansharp_iqa.demo_data import load_demo


@pytest.fixture(scope="module")
def pair():
    return load_demo()


def test_exp_is_the_23_tap_upsampling_and_ignores_the_pan(pair):
    ms, pan = pair
    np.testing.assert_array_equal(exp(ms, pan, ratio=4), pi.interp23tap(ms.astype(np.float64), 4))
    np.testing.assert_array_equal(exp(ms, pan, ratio=4), exp(ms, pan[::-1], ratio=4))


def test_every_baseline_keeps_the_scale_and_adds_pan_detail(pair):
    ms, pan = pair
    up = pi.interp23tap(ms.astype(np.float64), 4)
    for name, fuse in BASELINES.items():
        fused = fuse(ms, pan, sensor="none", ratio=4)
        assert fused.shape == (576, 576, 4) and np.isfinite(fused).all(), name
        assert abs(fused.mean() / ms.mean() - 1) < 0.02, name  # a fusion keeps the MS's level
        if name != "EXP":  # PAN detail: closer to the PAN's gradients than the upsampled MS
            assert np.abs(np.diff(fused.mean(axis=2), axis=1)).mean() > np.abs(np.diff(up.mean(axis=2), axis=1)).mean()


def test_gsa_keeps_each_band_mean_of_the_upsampled_ms(pair):
    ms, pan = pair
    fused = gsa(ms, pan, ratio=4)
    up = pi.interp23tap(ms.astype(np.float64), 4)
    np.testing.assert_allclose(fused.mean(axis=(0, 1)), up.mean(axis=(0, 1)), rtol=1e-12)


def test_a_pan_equal_to_the_intensity_leaves_mtf_glp_hpm_near_exp():
    # when the PAN carries no more detail than the upsampled MS, the injected detail is small
    rng = np.random.default_rng(0)
    from scipy import ndimage

    ms = 300 + 1000 * ndimage.zoom(rng.random((8, 8, 4)), (4, 4, 1), order=1)
    up = pi.interp23tap(ms, 4)
    fused = mtf_glp_hpm(ms, up.mean(axis=2), sensor="none", ratio=4)
    assert np.abs(fused - up).mean() < 0.05 * up.mean()


def test_baselines_refuse_what_the_gate_refuses(pair):
    ms, pan = pair
    with pytest.raises(pi.InputError, match="pan is on another scale than ms"):
        bt_h(ms, pan / 2047.0, ratio=4)
    with pytest.raises(pi.InputError, match="power of two"):
        gsa(ms, pan, ratio=3)
    with pytest.raises(pi.InputError, match="sensor"):
        mtf_glp_hpm(ms, pan, sensor=None, ratio=4)
    with pytest.raises(pi.InputError, match="8 bands"):
        mtf_glp_hpm(ms, pan, sensor="WV2", ratio=4)

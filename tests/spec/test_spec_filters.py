"""MTF kernels, MTF filtering, interp23tap, imresize, Wald degradation vs the literal reference."""
from __future__ import annotations

import numpy as np
import pytest

import reference_impl as R
from spec_helpers import arr_close, dn_float, dn_int, smooth_dn

KTOL = 1e-12


@pytest.mark.parametrize("gnyq", [0.34, 0.32, 0.30, 0.22, 0.11, 0.15, 0.27, 0.365, 0.05, 0.55])
@pytest.mark.parametrize("ratio", [2, 4])
def test_mtf_kernel_2020(piq, gnyq, ratio):
    got = np.asarray(piq.mtf_kernel(gnyq, ratio))
    assert got.shape == (41, 41) and got.dtype == np.float64
    arr_close(got, R.mtf_kernel(gnyq, ratio, 41, "2020"), rtol=KTOL, what=f"mtf_kernel({gnyq},{ratio})")


@pytest.mark.parametrize("gnyq", [0.34, 0.22, 0.11, 0.15])
def test_mtf_kernel_2015_sigma(piq, gnyq):
    got = np.asarray(piq.mtf_kernel(gnyq, 4, sigma_form="2015"))
    arr_close(got, R.mtf_kernel(gnyq, 4, 41, "2015"), rtol=KTOL, what="mtf_kernel 2015")
    assert not np.allclose(got, R.mtf_kernel(gnyq, 4, 41, "2020"), rtol=1e-6)


def test_mtf_kernel_ratio8_and_not_renormalised(piq):
    k = np.asarray(piq.mtf_kernel(0.3, 8))
    arr_close(k, R.mtf_kernel(0.3, 8), rtol=KTOL)
    k4 = np.asarray(piq.mtf_kernel(0.22, 4))
    assert round(float(k4.sum()), 6) == 0.998420  # spec: QB NIR kernel sum, NOT renormalised


@pytest.mark.parametrize("shape", [(70, 90), (45, 33, 3)])
def test_mtf_filter_scalar_gnyq(piq, rng, shape):
    img = dn_float(rng, shape)
    got = piq.mtf_filter(img, 0.3, 4)
    ref = R.mtf_filter(img, 0.3, 4)
    arr_close(got, ref, rtol=1e-9, what="mtf_filter")


def test_mtf_filter_per_band_gnyq_int_input(piq, rng):
    img = dn_int(rng, (64, 50, 4)).astype(np.uint16)
    g = [0.34, 0.32, 0.30, 0.22]
    keep = img.copy()
    got = piq.mtf_filter(img, g, 4)
    np.testing.assert_array_equal(img, keep)
    arr_close(got, R.mtf_filter(img, g, 4), rtol=1e-9, what="mtf_filter per band")
    assert np.asarray(got).dtype == np.float64


def test_mtf_filter_small_image_replicate(piq, rng):
    # image smaller than the kernel: the replicate border matters everywhere
    img = dn_float(rng, (12, 17))
    arr_close(piq.mtf_filter(img, 0.17, 4), R.mtf_filter(img, 0.17, 4), rtol=1e-9)


def test_mtf_filter_2015(piq, rng):
    img = dn_float(rng, (40, 40))
    arr_close(piq.mtf_filter(img, 0.15, 4, sigma_form="2015"), R.mtf_filter(img, 0.15, 4, "2015"), rtol=1e-9)


@pytest.mark.parametrize("sensor", ["QB", "IKONOS", "WV3"])
def test_mtf_filter_sensor(piq, rng, sensor):
    n = len(R.SPEC_MS_GNYQ[sensor])
    img = dn_float(rng, (40, 36, n))
    arr_close(piq.mtf_filter_sensor(img, sensor, 4), R.mtf_filter(img, R.SPEC_MS_GNYQ[sensor], 4), rtol=1e-9)


@pytest.mark.parametrize("ratio", [2, 4, 8])
@pytest.mark.parametrize("shape", [(9, 13, 2), (16, 16, 1), (7, 5)])
def test_interp23tap(piq, rng, ratio, shape):
    img = dn_float(rng, shape)
    got = piq.interp23tap(img, ratio)
    ref = R.interp23tap(img, ratio)
    assert np.asarray(got).shape == ref.shape
    arr_close(got, ref, rtol=1e-9, what=f"interp23tap ratio {ratio}")


def test_interp23tap_ratio8_is_x8_not_x16(piq, rng):
    img = dn_float(rng, (4, 4, 1))
    assert np.asarray(piq.interp23tap(img, 8)).shape == (32, 32, 1)


def test_interp23tap_int_dtype(piq, rng):
    img = dn_int(rng, (10, 12, 3)).astype(np.int32)
    keep = img.copy()
    got = piq.interp23tap(img, 4)
    np.testing.assert_array_equal(img, keep)
    arr_close(got, R.interp23tap(img.astype(float), 4), rtol=1e-9)


@pytest.mark.parametrize("shape", [(64, 64), (70, 90), (101, 37), (128, 100, 2)])
def test_imresize_quarter(piq, rng, shape):
    img = dn_float(rng, shape)
    got = piq.imresize(img, 0.25)
    ref = R.imresize(img, 0.25)
    arr_close(got, ref, rtol=1e-9, what=f"imresize {shape}")


def test_imresize_half_and_int(piq, rng):
    img = dn_int(rng, (33, 50)).astype(np.uint16)
    got = piq.imresize(img, 0.5)
    ref = R.imresize(img.astype(float), 0.5)
    assert np.asarray(got).shape == (17, 25)
    arr_close(got, ref, rtol=1e-9)


@pytest.mark.parametrize("sensor,B", [("QB", 4), ("WV2", 8), ("none", 3)])
def test_wald_degrade(piq, rng, sensor, B):
    ms = smooth_dn(rng, (48, 40, B))
    pan = dn_float(rng, (192, 160))
    kw = {} if sensor != "none" else {"ratio": 4}
    ms_lr, pan_lr = piq.wald_degrade(ms, pan, sensor, **kw)
    ref_ms, ref_pan = R.wald_degrade(ms, pan, R.spec_ms_gnyq(sensor, B), 4)
    arr_close(ms_lr, ref_ms, rtol=1e-9, what="wald ms_lr")
    arr_close(pan_lr, ref_pan, rtol=1e-9, what="wald pan_lr")
    assert np.asarray(ms_lr).shape == (12, 10, B)


def test_wald_degrade_offset(piq):
    # a delta field passes the decimation at 0-based offset 2 for ratio 4: check via a ramp
    ms = np.tile(np.arange(96, dtype=float)[None, :, None] * 10 + 100, (8, 1, 4))
    pan = np.ones((32, 384)) * 500  # on the MS's scale (a PAN of 5 DN next to ~600 DN MS is refused)
    ms_lr, pan_lr = piq.wald_degrade(ms, pan, "QB")
    ref, _ = R.wald_degrade(ms, pan, R.SPEC_MS_GNYQ["QB"], 4)
    arr_close(ms_lr, ref, rtol=1e-9)
    assert np.asarray(ms_lr).shape == (2, 24, 4)
    np.testing.assert_allclose(pan_lr, 500.0, rtol=1e-12)
    # on the linear ramp away from the border a symmetric kernel keeps value x kernel sum:
    # decimated column 12 is native column 4*12 + 2 = 50 (offset floor(ratio/2) = 2)
    ksum = R.mtf_kernel(0.34, 4).sum()
    assert abs(float(np.asarray(ms_lr)[1, 12, 0]) / (50 * 10 + 100) - ksum) < 1e-9


def test_wald_degrade_ratio2(piq, rng):
    ms = smooth_dn(rng, (30, 26, 4))
    pan = dn_float(rng, (60, 52))
    ms_lr, pan_lr = piq.wald_degrade(ms, pan, "QB", ratio=2)
    ref_ms, ref_pan = R.wald_degrade(ms, pan, R.SPEC_MS_GNYQ["QB"], 2)
    arr_close(ms_lr, ref_ms, rtol=1e-9, what="wald ratio 2 ms")
    arr_close(pan_lr, ref_pan, rtol=1e-9, what="wald ratio 2 pan")
    assert np.asarray(ms_lr).shape == (15, 13, 4)

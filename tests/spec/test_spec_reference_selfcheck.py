"""Checks of the reference implementation itself against facts stated in the spec (no package)."""
from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

import reference_impl as R
from spec_helpers import smooth_dn


@pytest.mark.parametrize("gnyq,expected", [(0.34, 0.998869), (0.32, 0.998807), (0.30, 0.998740),
                                           (0.22, 0.998420), (0.11, 0.997705)])
def test_kernel_sums_match_spec_values(gnyq, expected):
    # spec: "its sum is about 0.998-0.999 (e.g. QB MS 0.998869 ... WV2 PAN 0.997705)"
    assert round(float(R.mtf_kernel(gnyq, 4).sum()), 6) == pytest.approx(expected, abs=1e-12)


def test_kaiser_matches_closed_form():
    n, beta = 41, 0.5
    w = R.kaiser(n, beta)
    k = np.arange(n)
    from scipy.special import i0
    ref = i0(beta * np.sqrt(1 - ((k - (n - 1) / 2) / ((n - 1) / 2)) ** 2)) / i0(beta)
    np.testing.assert_allclose(w, ref, rtol=1e-14)
    assert R.kaiser(8, 0.5).shape == (8,)


def test_fspecial_gaussian_normalised_and_symmetric():
    h = R.fspecial_gaussian(41, 3.7)
    assert abs(h.sum() - 1) < 1e-14
    assert np.array_equal(h, h.T) and np.array_equal(h, h[::-1, :])


def test_fsamp2_of_delta_spectrum_is_constant():
    hd = np.ones((41, 41))
    h = R.fsamp2(hd)
    # flat frequency response -> impulse at the centre
    assert abs(h[20, 20] - 1) < 1e-12
    h2 = h.copy()
    h2[20, 20] = 0
    assert np.max(np.abs(h2)) < 1e-12


def test_kernel_2015_sigma_narrower_in_frequency():
    k20 = R.mtf_kernel(0.3, 4, sigma_form="2020")
    k15 = R.mtf_kernel(0.3, 4, sigma_form="2015")
    assert not np.allclose(k20, k15)
    # larger alpha (N vs N-1) -> wider passband -> more concentrated kernel
    assert k15[20, 20] > k20[20, 20]


def test_imfilter_fast_equals_per_pixel(rng):
    x = rng.random((13, 9))
    h = rng.random((7, 5))
    np.testing.assert_array_equal(R.imfilter_replicate(x, h), R.imfilter_replicate_slow(x, h))
    np.testing.assert_array_equal(R.imfilter_zero(x, h), R.imfilter_zero_slow(x, h))


def test_imresize_constant_and_sizes():
    x = np.full((37, 50), 7.25)
    y = R.imresize(x, 0.25)
    assert y.shape == (10, 13)
    np.testing.assert_allclose(y, 7.25, rtol=1e-14)


def test_imresize_weights_rows_sum_to_one():
    m = R._resize_weights(64, 0.25)
    assert m.shape == (16, 64)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=1e-14)
    # interior row: symmetric kernel centred on u = 4x - 1.5 (1-based)
    row = m[8]
    centre = np.sum(row * np.arange(1, 65))
    assert abs(centre - (9 * 4 - 1.5)) < 1e-12


def test_interp23tap_preserves_constants_and_samples(rng):
    x = np.full((8, 6, 2), 3.0)
    np.testing.assert_allclose(R.interp23tap(x, 4), 3.0, rtol=1e-8)  # taps sum to 1 - 1.2e-9
    y = rng.random((8, 8))
    up = R.interp23tap(y, 2)
    # half-band filter: the original samples are kept at the odd positions (centre tap = 1)
    np.testing.assert_allclose(up[1::2, 1::2], y, atol=1e-11)
    assert R.interp23tap(y, 8).shape == (64, 64)


def test_hc_mult_is_complex_product():
    for a, b in [((1.5, -2.0), (0.3, 0.7)), ((0.0, 1.0), (0.0, 1.0))]:
        got = R.hc_mult(list(a), list(b))
        ref = complex(*a) * complex(*b)
        assert got == pytest.approx([ref.real, ref.imag], abs=1e-15)


def test_hc_mult_is_hamilton_quaternion():
    def qm(p, q):
        a1, b1, c1, d1 = p
        a2, b2, c2, d2 = q
        return [a1 * a2 - b1 * b2 - c1 * c2 - d1 * d2, a1 * b2 + b1 * a2 + c1 * d2 - d1 * c2,
                a1 * c2 - b1 * d2 + c1 * a2 + d1 * b2, a1 * d2 + b1 * c2 - c1 * b2 + d1 * a2]
    p, q = [1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.25]
    assert R.hc_mult(p, q) == pytest.approx(qm(p, q), abs=1e-14)


def test_hc_norm_multiplicative_octonions(rng):
    x = rng.normal(size=8).tolist()
    y = rng.normal(size=8).tolist()
    prod = R.hc_mult(x, y)
    assert math.sqrt(sum(v * v for v in prod)) == pytest.approx(
        math.sqrt(sum(v * v for v in x)) * math.sqrt(sum(v * v for v in y)), rel=1e-13)
    # z conj(z) = |z|^2
    zz = R.hc_mult(x, R.hc_conj(x))
    assert zz[0] == pytest.approx(sum(v * v for v in x), rel=1e-14)
    assert max(abs(v) for v in zz[1:]) < 1e-13


def test_matlab_uint16_cast():
    x = np.array([-3.0, -0.5, 0.4999, 0.5, 1.5, 2.5, 65535.4, 65535.5, 70000.0])
    np.testing.assert_array_equal(R.matlab_uint16(x), [0, 0, 0, 1, 2, 3, 65535, 65535, 65535])


@pytest.mark.parametrize("B", [2, 3, 4])
def test_onions_vectorised_equals_per_pixel(rng, B):
    gt = smooth_dn(rng, (32, 32, B))
    f = gt + rng.normal(0, 60, gt.shape)
    v = R.q2n(gt, f, vectorised=True)
    p = R.q2n(gt, f, vectorised=False)
    assert v == pytest.approx(p, rel=1e-12)


def test_q2n_two_band_by_complex_numbers(rng):
    """Independent hand computation of Q2n for B=2 with Python complex numbers."""
    gt = np.round(smooth_dn(rng, (32, 32, 2)))
    f = np.round(np.clip(gt + rng.normal(0, 80, gt.shape), 0, None))
    N = 1024
    z1, z2 = [], []
    stats = []
    for b in range(2):
        x = gt[:, :, b].ravel().tolist()
        m = sum(x) / N
        s = math.sqrt(sum((v - m) ** 2 for v in x) / (N - 1))
        stats.append((m, s))
    for k in range(N):
        i, j = divmod(k, 32)
        a = complex((gt[i, j, 0] - stats[0][0]) / stats[0][1] + 1, (gt[i, j, 1] - stats[1][0]) / stats[1][1] + 1)
        c = complex((f[i, j, 0] - stats[0][0]) / stats[0][1] + 1, (f[i, j, 1] - stats[1][0]) / stats[1][1] + 1)
        z1.append(a)
        z2.append(c.conjugate())
    m1 = sum(z1) / N
    m2 = sum(z2) / N
    c_ = N / (N - 1)
    mean_bias = 2 * abs(m1) * abs(m2) / (abs(m1) ** 2 + abs(m2) ** 2)
    term3 = (c_ * (sum(abs(z) ** 2 for z in z1) / N + sum(abs(z) ** 2 for z in z2) / N)
             - c_ * (abs(m1) ** 2 + abs(m2) ** 2))
    q = (c_ * sum(a * b for a, b in zip(z1, z2, strict=True)) / N - c_ * m1 * m2) * mean_bias * 2 / term3
    assert R.q2n(gt, f) == pytest.approx(abs(q), rel=1e-12)
    assert 0.3 < abs(q) < 1.0
    _ = cmath  # (complex arithmetic above)

"""Kernels of the hyperspectral (2024) and Sentinel-2 (2025) protocols against the spec's facts.

Facts: ``shared/spec/hyperspectral_s2.md``. Expected values are the spec's stated numbers, literal
re-derivations from the spec written here (loops, ``numpy.linalg.lstsq``, ``np.sinc``) and the
literal toolbox re-implementation of ``reference_impl`` -- never the package's own output.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import reference_impl as R
from spec_helpers import arr_close, rel_close

# ---------------------------------------------------------------------------------------------
# 1.1 MTF kernels: post-processing options and the spec's check values
# ---------------------------------------------------------------------------------------------


def test_hs_ratio6_kernel_check_values(piq):
    k = piq.mtf_kernel(0.3, 6)  # HS: raw at every ratio
    assert round(float(k.sum()), 5) == 0.99719
    assert round(float(k[20, 20]), 6) == 0.017247
    assert abs(float(k.min())) < 1e-6  # "minimum 0 (to print precision)"
    arr_close(k, R.mtf_kernel(0.3, 6), rtol=1e-12, what="HS kernel = toolbox design")


@pytest.mark.parametrize(("gnyq", "expected", "digits"), [
    (0.3175, 0.997319, 6), (0.295, 0.997149, 6),                        # S2-60
    (0.275, 0.99699, 5), (0.28, 0.99703, 5), (0.25, 0.99677, 5), (0.24, 0.99667, 5),  # S2-10 at ratio 6
])
def test_s2_ratio6_kernels_are_raw(piq, gnyq, expected, digits):
    from pansharp_iqa.mtf import S2_KERNEL

    k = S2_KERNEL.kernel(gnyq, 6)
    assert round(float(k.sum()), digits) == expected
    assert S2_KERNEL.normalise_at(6) == "none"


@pytest.mark.parametrize("gnyq", [0.365, 0.33, 0.34, 0.32, 0.205, 0.235, 0.275, 0.24])
def test_s2_ratio2_kernels_clip_and_renormalise(piq, gnyq):
    raw = R.mtf_kernel(gnyq, 2)
    assert raw.min() < 0  # there is something to clip
    expected = np.maximum(raw, 0.0) / np.maximum(raw, 0.0).sum()
    k = piq.mtf_kernel(gnyq, 2, normalise="clip-renormalise")
    arr_close(k, expected, rtol=1e-12, what="clip + renormalise")
    assert abs(float(k.sum()) - 1.0) < 1e-14 and k.min() >= 0.0
    from pansharp_iqa.mtf import S2_KERNEL

    k32 = S2_KERNEL.kernel(gnyq, 2)  # float32 taps of the clipped kernel (within one float32 rounding)
    assert np.array_equal(k32, k32.astype(np.float32)) and np.all(np.abs(k32 - expected) <= 6e-8 * expected.max())


def test_float32_taps_and_defaults_unchanged(piq):
    raw = piq.mtf_kernel(0.3, 6)
    k32 = piq.mtf_kernel(0.3, 6, tap_precision="float32")
    assert np.array_equal(k32, raw.astype(np.float32).astype(np.float64)) and not np.array_equal(k32, raw)
    from pansharp_iqa.mtf import HS_KERNEL, TOOLBOX_KERNEL

    raw_4 = piq.mtf_kernel(0.3, 4)  # the default: raw, float64 taps (toolbox)
    arr_close(raw_4, R.mtf_kernel(0.3, 4), rtol=1e-12, what="default kernel")
    assert np.array_equal(TOOLBOX_KERNEL.kernel(0.3, 4), raw_4) and raw_4.flags.writeable is False
    assert HS_KERNEL.normalise_at(2) == "none" and np.array_equal(HS_KERNEL.kernel(0.3, 6), k32)
    with pytest.raises(piq.InputError, match="normalise"):
        piq.mtf_kernel(0.3, 6, normalise="renormalise")


def test_kernel_settings_filter_replicate(piq, rng):
    from pansharp_iqa.mtf import S2_KERNEL

    img = rng.uniform(0, 3000, (50, 47, 2))
    got = S2_KERNEL.filter(img, [0.365, 0.205], 2)
    for b, g in enumerate([0.365, 0.205]):
        raw = R.mtf_kernel(g, 2)
        k = (np.maximum(raw, 0) / np.maximum(raw, 0).sum()).astype(np.float32).astype(np.float64)
        arr_close(got[:, :, b], R.imfilter_replicate(img[:, :, b], k), rtol=1e-11, what="replicate filter")


# ---------------------------------------------------------------------------------------------
# 1.3 ratio-6 upsampler (x3 sinc, N = 30, then 23-tap x2)
# ---------------------------------------------------------------------------------------------
N3 = 30


def _sinc3_taps_f64():
    n = np.arange(-N3, N3 + 1)
    h1, h2 = np.sinc(n + 1.0 / 3.0), np.sinc(n + 2.0 / 3.0)
    return h1 / h1.sum(), h2 / h2.sum()


def _x3_1d(row, h1, h2):
    """Spec, literally: symmetric pad N+1 left / N right; 3k = h2 at k-1/3, 3k+1 = x[k], 3k+2 = h1 at k+1/3."""
    n = row.size
    p = np.pad(row, (N3 + 1, N3), mode="symmetric")  # p[j] = x[j - 31]
    out = np.zeros(3 * n)
    for k in range(n):
        s1 = s2 = 0.0
        for i, m in enumerate(range(-N3, N3 + 1)):  # sum_m h(m) x[k - m] (h2: x[k - 1 - m])
            s1 += h1[i] * p[k - m + N3 + 1]
            s2 += h2[i] * p[k - 1 - m + N3 + 1]
        out[3 * k], out[3 * k + 1], out[3 * k + 2] = s2, row[k], s1
    return out


def _ideal_6(img, taps):
    h1, h2 = taps
    x = np.stack([_x3_1d(r, h1, h2) for r in img])           # along the columns index first
    x = np.stack([_x3_1d(c, h1, h2) for c in x.T]).T         # then the rows
    return R.interp23tap(x, 2)                               # x3 grid at odd positions


def test_sinc_taps_definition(piq):
    from pansharp_iqa.resample import sinc3_taps

    h1, h2 = _sinc3_taps_f64()
    g1, g2 = sinc3_taps(precision="float64")
    arr_close(g1, h1[::-1], rtol=1e-15, what="h1 flipped")
    arr_close(g2, h2[::-1], rtol=1e-15, what="h2 flipped")
    f1, f2 = sinc3_taps()  # float32 as the toolboxes' torch code
    assert np.array_equal(f1, f1.astype(np.float32)) and np.abs(f1 - g1).max() < 1e-7
    assert abs(f1.sum() - 1) < 1e-6 and abs(f2.sum() - 1) < 1e-6


def test_sinc_taps_equal_torch_when_available(piq):
    torch = pytest.importorskip("torch")
    from pansharp_iqa.resample import sinc3_taps

    n = torch.arange(-N3, N3 + 1)
    for frac, ours in zip((1 / 3, 2 / 3), sinc3_taps(), strict=True):
        t = torch.sinc(n + frac)
        t = (t / torch.sum(t)).flip(0).double().numpy()
        assert np.array_equal(ours, t), "float32 taps differ from torch.sinc / torch.sum"


@pytest.mark.parametrize("shape", [(31, 31), (33, 40)])
def test_ratio6_matches_literal_spec_composite(piq, rng, shape):
    from pansharp_iqa.resample import sinc3_taps

    low = rng.uniform(0, 4000, shape)
    got = piq.interp23tap(low, 6, sinc_taps="float64")
    arr_close(got, _ideal_6(low, _sinc3_taps_f64()), rtol=1e-12, what="ratio 6 vs literal composite")
    taps32 = tuple(t[::-1] for t in sinc3_taps())
    arr_close(piq.interp23tap(low, 6), _ideal_6(low, taps32), rtol=1e-12, what="float32 taps")


def test_ratio6_properties(piq, rng):
    low = rng.uniform(0, 4000, (36, 40, 2))
    up = piq.interp23tap(low, 6)
    assert up.shape == (216, 240, 2)
    assert np.array_equal(up[3::6, 3::6], low)  # LR pixel i lands on fine 6i + 3, untouched
    # a band-limited signal is interpolated (interior: away from the mirrored / wrapped borders)
    yy, xx = np.mgrid[0:48, 0:48]
    def f(y, x):
        return 1000 + 300 * np.cos(2 * np.pi * 0.07 * y + 0.3) * np.sin(2 * np.pi * 0.05 * x + 1.0)

    fine = piq.interp23tap(f(yy, xx), 6)
    py, px = np.mgrid[0:288, 0:288]
    truth = f((py - 3) / 6.0, (px - 3) / 6.0)
    err = np.abs(fine - truth)[72:-72, 72:-72]  # a 61-tap truncated sinc: ~1 % ripple on 300 DN
    assert err.max() < 6.0 and err.mean() < 1.5


def test_ratio6_refuses_small_and_other_ratios(piq):
    with pytest.raises(piq.InputError, match="31"):
        piq.interp23tap(np.ones((30, 40)), 6)
    with pytest.raises(piq.InputError, match=r"power of two .* or 6"):
        piq.interp23tap(np.ones((40, 40)), 3)
    from pansharp_iqa.validation import check_ratio

    assert check_ratio(6) == 6 and check_ratio(8) == 8
    with pytest.raises(piq.InputError, match="or 6"):
        check_ratio(12)


@pytest.mark.parametrize(("rows", "cols"), [((0, 6), (0, 44)), ((30, 36), (38, 44)), ((10, 20), (3, 9))])
def test_ratio6_windows_equal_whole_image(piq, rng, rows, cols):
    from pansharp_iqa.resample import exp_halo_support, exp_halo_window

    img = rng.uniform(0, 3000, (36, 44, 2))
    r, c = exp_halo_support(*rows, 36, 6), exp_halo_support(*cols, 44, 6)
    win = exp_halo_window(img[np.ix_(r, c)], rows, cols, (36, 44), 6)
    whole = piq.interp23tap(img, 6)
    assert np.array_equal(win, whole[6 * rows[0]:6 * rows[1], 6 * cols[0]:6 * cols[1]])


def test_ratio6_torch_port_bit_identical(piq, rng):
    torch = pytest.importorskip("torch")
    from pansharp_iqa import torch_ops

    x = rng.uniform(0, 3000, (1, 2, 32, 35))
    got = torch_ops.interp23tap(torch.from_numpy(x), 6).numpy()
    assert np.array_equal(got[0], np.moveaxis(piq.interp23tap(np.moveaxis(x[0], 0, 2), 6), 2, 0))


def test_powers_of_two_unchanged(piq, rng):
    low = rng.uniform(0, 2000, (12, 10))
    for r in (2, 4, 8):
        arr_close(piq.interp23tap(low, r), R.interp23tap(low, r), rtol=1e-12, what=f"ratio {r}")


# ---------------------------------------------------------------------------------------------
# 3.2 half-pixel shift, decimation, degradation
# ---------------------------------------------------------------------------------------------
def _poly_taps():
    half = R.CDF23_HALF  # 2 x [0.5, 0.3053..., 0, ...]
    return np.array(half[1::2][::-1] + half[1::2])  # distances -11, -9, ..., 11 half-samples


def test_fineshift_ramp_and_literal_2d_kernel(piq, rng):
    from pansharp_iqa.resample import fineshift

    ramp = np.tile(np.arange(40.0)[:, None], (1, 30))
    assert abs(fineshift(ramp, 1, 1)[20, 15] - 19.5) < 1e-6  # F_shift[i] = F[i - 0.5]
    img = rng.uniform(0, 1000, (25, 27))
    p = _poly_taps()
    k = np.zeros((13, 13))
    k[:12, :12] = np.outer(p, p)  # 'SE': the 12x12 polyphase kernel, a zero row/column appended
    padded = np.pad(img, 6)       # conv2d 'same', zeros
    expected = np.zeros_like(img)
    for u in range(13):
        for v in range(13):
            expected += k[u, v] * padded[u:u + 25, v:v + 27]
    arr_close(fineshift(img, 1, 1), expected, rtol=1e-12, what="fineshift(1, 1)")
    moved = np.zeros_like(img)
    moved[1:, :-2] = img[:-1, 2:]
    assert np.array_equal(fineshift(img, 2, -4), moved)  # integer parts: zeros fill


@pytest.mark.parametrize("ratio", [2, 3, 4, 6, 8])
def test_decimation_start_is_nearest_exact(piq, ratio):
    img = np.arange(48.0 * 48).reshape(48, 48)
    src = [math.floor((i + 0.5) * ratio) for i in range(48 // ratio)]  # PyTorch nearest-exact
    assert np.array_equal(piq.decimate(img, ratio), img[np.ix_(src, src)])
    assert np.array_equal(piq.decimate(img, ratio, start=1), img[1::ratio, 1::ratio])


def test_hs_wald_degradation(piq, rng):
    from pansharp_iqa.mtf import HS_KERNEL

    hs = rng.integers(0, 5000, (36, 42, 3)).astype(float)
    pan = rng.integers(0, 5000, (216, 252)).astype(float)
    lr, plr = piq.wald_degrade(hs, pan, "PRISMA", kernel=HS_KERNEL, pan_degradation="mtf-decimate")
    k_hs = R.mtf_kernel(0.3, 6).astype(np.float32).astype(np.float64)
    k_pan = R.mtf_kernel(0.2, 6).astype(np.float32).astype(np.float64)
    for b in range(3):
        arr_close(lr[:, :, b], R.imfilter_replicate(hs[:, :, b], k_hs)[3::6, 3::6], rtol=1e-12, what="HS_lr")
    arr_close(plr, R.imfilter_replicate(pan, k_pan)[3::6, 3::6], rtol=1e-12, what="PAN_lr")
    lr_t, plr_t = piq.wald_degrade(hs, pan, "PRISMA", kernel=HS_KERNEL, pan_degradation="mtf-decimate",
                                   cast="uint16-truncate")
    assert np.array_equal(lr_t, np.trunc(lr)) and np.array_equal(plr_t, np.trunc(plr))
    d_lr, d_pan = piq.wald_degrade(hs[:32, :32], pan[:128, :128], "none", ratio=4)  # defaults: toolbox 2020
    e_lr, e_pan = R.wald_degrade(hs[:32, :32], pan[:128, :128], [0.3] * 3, 4)
    arr_close(d_lr, e_lr, rtol=1e-11, what="toolbox default")
    arr_close(d_pan, e_pan, rtol=1e-11, what="toolbox default PAN")


# ---------------------------------------------------------------------------------------------
# 1.4 Q2n (HS/S2 conventions), from a loop written from the spec
# ---------------------------------------------------------------------------------------------
def _hs_block(gt, f, size):
    """One block (h, w, C), C a power of two: the HS code's q_index_metric (GT first)."""
    nb = gt.shape[2]
    npx = gt.shape[0] * gt.shape[1]
    c = size * size / (size * size - 1)
    z1, z2 = [], []
    for i in range(nb):
        x, y = gt[:, :, i], f[:, :, i]
        m = x.sum() / npx
        s = math.sqrt(((x - m) ** 2).sum() / (npx - 1))
        s = 1e-10 if s == 0 else s
        z1.append((x - m) / s + 1)
        yn = y + 1 if m == 0 else (y - m) / s + 1
        z2.append(yn if i == 0 else -yn)
    m1 = [v.mean() for v in z1]
    m2 = [v.mean() for v in z2]
    q1m, q2m = math.sqrt(sum(v * v for v in m1)), math.sqrt(sum(v * v for v in m2))
    term3 = c * (sum(v * v for v in z1).mean() + sum(v * v for v in z2).mean() - q1m ** 2 - q2m ** 2)
    mean_bias = 2 * q1m * q2m / (q1m ** 2 + q2m ** 2)
    if term3 == 0:
        q = np.zeros(nb)
        q[-1] = mean_bias
        return q
    qu = [v.mean() for v in R.hc_mult(z1, z2)]
    qm = R.hc_mult(m1, m2)
    return np.array([(c * a - c * b) * mean_bias * 2 / term3 for a, b in zip(qu, qm, strict=True)])


def _hs_q2n(gt, f, bs=32):
    """Spec 1.4: round half even, pad right by est1 / bottom by est2 (symmetric), zero bands, float32 values."""
    h, w, nb = gt.shape
    stepx, stepy = math.ceil(h / bs), math.ceil(w / bs)
    est1, est2 = stepx * bs - h, stepy * bs - w
    gt, f = np.round(gt), np.round(f)
    if est1 or est2:
        pad = [(0, est2), (0, est1), (0, 0)]  # bottom (rows) by est2, right (columns) by est1
        gt, f = np.pad(gt, pad, mode="symmetric"), np.pad(f, pad, mode="symmetric")
    ch = 2 ** math.ceil(math.log2(nb))
    zeros = np.zeros(gt.shape[:2] + (ch - nb,))
    gt, f = np.concatenate([gt, zeros], 2), np.concatenate([f, zeros], 2)
    values = np.zeros((stepx, stepy, ch), dtype=np.float32)
    for j in range(stepx):
        for i in range(stepy):
            sl = (slice(j * bs, j * bs + bs), slice(i * bs, i * bs + bs))
            values[j, i] = _hs_block(gt[sl], f[sl], bs)
    return float(np.sqrt((values.astype(np.float64) ** 2).sum(2)).mean())


HS_Q2N = dict(cast="round-half-even", padding="symmetric-swapped", std_floor=1e-10, block_precision="float32")


@pytest.mark.parametrize(("shape", "offset"), [((64, 64, 4), 0.0), ((45, 45, 6), 0.0), ((40, 64, 3), 0.0),
                                               ((70, 37, 5), 0.0), ((45, 45, 6), -400.0)])
def test_q2n_hs_conventions_vs_loop(piq, rng, shape, offset):
    gt = rng.integers(0, 3000, shape).astype(float)
    gt[:, :, 1] = 0.0  # a zero band: the mean == 0 branch
    f = gt + rng.normal(0, 150, shape) + offset  # negative values survive the rounding
    f[::7, ::5, 0] = np.floor(f[::7, ::5, 0]) + 0.5  # ties: half to even
    got = piq.q2n(gt, f, **HS_Q2N)
    rel_close(got, _hs_q2n(gt, f), rtol=2e-6, what=f"HS Q2n {shape}")
    assert got == float(np.float32(got))  # float32 result


def test_q2n_swapped_padding_equals_toolbox_on_square(piq, rng):
    gt = rng.integers(0, 3000, (45, 45, 3)).astype(float)
    f = gt + rng.normal(0, 100, gt.shape)
    a = piq.q2n(gt, f, cast="round-half-even", padding="symmetric")
    b = piq.q2n(gt, f, cast="round-half-even", padding="symmetric-swapped")
    assert a == b
    assert piq.q2n(gt, f, cast="none", padding="symmetric-swapped") != b  # the cast is applied


def test_q2n_many_bands_sign_table(piq, rng):
    from pansharp_iqa import hypercomplex as H

    for n in (2, 4, 8, 16, 32):  # the XOR sign table is the algebra's product
        t = H.structure_constants(n)
        s = H.product_signs(n)
        idx = np.arange(n)
        assert np.array_equal(t[idx[:, None] ^ idx[None, :], idx[:, None], idx[None, :]], s)
    gt = rng.integers(0, 3000, (40, 40, 60)).astype(float)
    f = gt + rng.normal(0, 200, gt.shape)
    sub = (slice(0, 32), slice(0, 32))
    expected = np.sqrt((_hs_block(np.concatenate([np.round(gt[sub]), np.zeros((32, 32, 4))], 2),
                                  np.concatenate([np.round(f[sub]), np.zeros((32, 32, 4))], 2), 32) ** 2).sum())
    _, qmap = piq.q2n(gt, f, cast="round-half-even", padding="symmetric-swapped", std_floor=1e-10, return_map=True)
    rel_close(qmap[0, 0], expected, rtol=1e-9, what="60 bands -> 64 components")


# ---------------------------------------------------------------------------------------------
# SAM zero-norm conventions, by hand
# ---------------------------------------------------------------------------------------------
def test_sam_conventions_by_hand(piq):
    ref = np.array([[[1.0, 0.0], [1.0, 1.0]], [[2.0, 2.0], [3.0, 1.0]]])
    fus = np.array([[[0.0, 5.0], [2.0, 2.0]], [[1.0, 0.0], [0.0, 0.0]]])
    # angles: 90, 0, 45 degrees; last pixel has a zero norm
    assert piq.sam(ref, fus) == pytest.approx(45.0, abs=1e-12)                       # exclude: 135 / 3
    assert piq.sam(ref, fus, zero_norm="zero") == pytest.approx(33.75, abs=1e-12)    # 135 / 4
    assert piq.sam(ref, fus, zero_norm="count") == piq.sam(ref, fus, zero_norm="zero")
    assert piq.sam(ref, fus, zero_norm="right_angle") == pytest.approx(56.25, abs=1e-12)  # 225 / 4
    assert math.isnan(piq.sam(ref, fus, zero_norm="nan"))
    assert piq.sam(ref[:1], fus[:1], zero_norm="nan") == pytest.approx(45.0, abs=1e-12)  # no zero pixel
    with pytest.raises(piq.InputError, match="zero_norm"):
        piq.sam(ref, fus, zero_norm="ignore")


# ---------------------------------------------------------------------------------------------
# D_sR (HS): against numpy.linalg.lstsq on the stacked matrix
# ---------------------------------------------------------------------------------------------
def _d_sr_lstsq(f, p):
    a = np.linalg.lstsq(f.reshape(-1, f.shape[2]), p.ravel(), rcond=None)[0]
    r = p.ravel() - f.reshape(-1, f.shape[2]) @ a
    return r.var(ddof=1) / p.var(ddof=1)


def test_d_sr_against_lstsq(piq, rng):
    from pansharp_iqa.indexes.regression_hs import add_d_sr_sums, d_sr, d_sr_from_sums, d_sr_sums

    f = rng.uniform(100, 3000, (50, 46, 7))
    p = f[:, :, :3].mean(2) * 1.2 + rng.normal(0, 40, (50, 46)) + 50.0  # an offset: no intercept to absorb it
    expected = _d_sr_lstsq(f, p)
    rel_close(d_sr(f, p), expected, rtol=1e-9, what="D_sR")
    planes = np.moveaxis(f, 2, 0)
    halves = [d_sr_sums(planes[:, :20], p[:20]), d_sr_sums(planes[:, 20:], p[20:])]  # tile-wise sums
    rel_close(d_sr_from_sums(**add_d_sr_sums(halves)), expected, rtol=1e-9, what="D_sR from two tiles")
    rank_def = np.concatenate([f, f[:, :, :2], np.zeros((50, 46, 1))], axis=2)  # duplicated and dead bands
    rel_close(d_sr(rank_def, p), expected, rtol=1e-8, what="rank-deficient like pinv")
    assert d_sr(f, f @ np.arange(1.0, 8.0)) == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# D_rho against several reference bands (S2), from a direct window computation
# ---------------------------------------------------------------------------------------------
def _box(x, w):
    """Zero-padded 2w x 2w window sums: rows i-w+1..i+w (spec 3.2 step 6), by slicing."""
    h, wd = x.shape
    p = np.pad(x, w)
    out = np.zeros_like(x)
    for u in range(1, 2 * w + 1):
        for v in range(1, 2 * w + 1):
            out += p[u:u + h, v:v + wd]
    return out


def _drho_max(fused, refs, w):
    area = 4.0 * w * w
    xc = [fused[:, :, b] - _box(fused[:, :, b], w) / area for b in range(fused.shape[2])]
    yc = [refs[:, :, j] - _box(refs[:, :, j], w) / area for j in range(refs.shape[2])]
    sxx = [_box(x * x, w) for x in xc]
    top = max(s.max() for s in sxx)
    total = 0.0
    for b, x in enumerate(xc):
        sx = np.clip(sxx[b], 1e-20, top)
        best = None
        for y in yc:
            syy = _box(y * y, w)
            syy = np.clip(syy, 1e-20, syy.max())
            rho = np.maximum(_box(x * y, w) / (np.sqrt(sx * syy) + 1e-20), -1.0)
            best = rho if best is None else np.maximum(best, rho)
        total += (1.0 - np.clip(best, -1, 1)).sum()
    return total / fused.size


@pytest.mark.parametrize("integral", ["ordered", "ordered-wh", "opencv"])
def test_d_rho_max_over_references(piq, rng, integral):
    from pansharp_iqa.reprojected import d_rho
    from pansharp_iqa.reprojected.indexes import d_rho_half_width

    refs = rng.uniform(0, 3000, (30, 34, 4))
    fused = np.stack([refs[:, :, 1] + rng.normal(0, 300, (30, 34)), rng.uniform(0, 3000, (30, 34))], axis=2)
    for ratio in (2, 6):
        w = d_rho_half_width(ratio, rule="floor-half-min4")
        assert w == {2: 2, 6: 3}[ratio]
        got = d_rho(fused, refs, ratio=ratio, half_width=w, references="max", integral=integral)
        rel_close(got, _drho_max(fused, refs, w), rtol=1e-9, what=f"D_rho max, ratio {ratio}")
    single = d_rho(fused, refs[:, :, 0], ratio=4)
    assert d_rho(fused, refs[:, :, :1], ratio=4, references="max") == pytest.approx(single, rel=1e-13)

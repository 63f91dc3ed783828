"""Reduced-resolution indexes vs the literal reference, hand-computed cases and invariants."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import reference_impl as R
from spec_helpers import arr_close, dn_float, dn_int, rel_close, smooth_dn


def _pair(rng, shape, kind):
    if kind == "int":
        gt = np.round(smooth_dn(rng, shape))
        f = np.clip(gt + rng.integers(-150, 151, size=shape), 0, 2047).astype(np.float64)
    else:
        gt = smooth_dn(rng, shape) + rng.random(shape)
        f = gt + rng.normal(0, 90, shape)
    return gt, f


# ------------------------------------------------------------------ Q2n
@pytest.mark.parametrize("B", [1, 3, 4, 5, 8])
@pytest.mark.parametrize("shape", [(70, 90), (64, 64)])
def test_q2n_vs_reference(piq, rng, B, shape):
    kind = "int" if B % 2 else "float"
    gt, f = _pair(rng, shape + (B,), kind)
    ref = R.q2n(gt, f)
    rel_close(piq.q2n(gt, f), ref, what=f"q2n B={B} {shape} {kind}")
    assert 0.2 < ref < 1.0


@pytest.mark.parametrize("shape", [(100, 64, 4), (33, 97, 2), (63, 35, 3)])
def test_q2n_odd_sizes_and_map(piq, rng, shape):
    gt, f = _pair(rng, shape, "float")
    val, qmap = piq.q2n(gt, f, return_map=True)
    ref_val, ref_map = R.q2n(gt, f, return_map=True)
    rel_close(val, ref_val, what="q2n value")
    arr_close(qmap, ref_map, rtol=1e-9, what="q2n map")


def test_q2n_padding_mirror_includes_edge(piq, rng):
    """Only the last two columns/rows differ: they enter the padded region exactly as MATLAB's
    'symmetric' mirror (edge included) says; a mirror excluding the edge would give another value."""
    gt, f = _pair(rng, (40, 40, 2), "int")
    f[:, -1, :] = 0
    f[-1, :, :] = 2047
    rel_close(piq.q2n(gt, f), R.q2n(gt, f), what="q2n edge mirror")


def test_q2n_uint16_rounding_half_away(piq, rng):
    gt, f = _pair(rng, (32, 32, 2), "int")
    f_half = f + 0.5  # every fused value on a .5 boundary: MATLAB rounds up
    rel_close(piq.q2n(gt, f_half), R.q2n(gt, f_half), what="q2n .5 rounding")
    assert R.q2n(gt, f_half) != pytest.approx(R.q2n(gt, f), rel=1e-9)
    # 16-bit-range data whose fused values overshoot 65535 in places: the cast saturates there
    gt16, big = gt * 31.0, f * 31.0
    big[::3, ::5, 0] = 70000.0

    rel_close(piq.q2n(gt16, big), R.q2n(gt16, big), what="q2n saturation")


def test_q2n_block_size_shift(piq, rng):
    gt, f = _pair(rng, (48, 48, 4), "float")
    rel_close(piq.q2n(gt, f, block_size=16, shift=16), R.q2n(gt, f, 16, 16), what="q2n 16")


def test_q2n_zero_band_mean_branch(piq, rng):
    """A GT band whose block is all zero: the fused band is only shifted by +1 (no std scaling)."""
    gt, f = _pair(rng, (32, 64, 3), "int")
    gt[:, :32, 1] = 0
    ref = R.q2n(gt, f)
    rel_close(piq.q2n(gt, f), ref, what="q2n zero-mean band")


def test_q2n_term3_zero_branch(piq):
    """Identical constant blocks: term3 == 0 -> |q| = mean_bias = 1."""
    gt = np.full((32, 64, 4), 700.0)
    gt[:, 32:, :] = np.arange(32 * 32 * 4, dtype=float).reshape(32, 32, 4) % 997 + 5
    f = gt.copy()
    f[:, 32:, 0] += 37
    ref, ref_map = R.q2n(gt, f, return_map=True)
    assert ref_map[0, 0] == 1.0
    val, qmap = piq.q2n(gt, f, return_map=True)
    assert float(np.asarray(qmap)[0, 0]) == pytest.approx(1.0, abs=1e-12)
    rel_close(val, ref, what="q2n term3==0")


def test_q2n_identity(piq, rng):
    for B in (1, 2, 3, 4, 5, 8):
        x = dn_float(rng, (50, 70, B))
        assert piq.q2n(x, x) == pytest.approx(1.0, abs=1e-12)


def test_q2n_two_band_complex_hand(piq, rng):
    """B = 2: Q2n of one 32x32 block computed with Python complex numbers."""
    gt = np.round(smooth_dn(rng, (32, 32, 2)))
    f = np.round(np.clip(gt * 0.9 + rng.normal(0, 70, gt.shape) + 40, 0, None))
    N = 1024
    stats = []
    for b in range(2):
        x = gt[:, :, b].ravel().tolist()
        m = sum(x) / N
        stats.append((m, math.sqrt(sum((v - m) ** 2 for v in x) / (N - 1))))
    z1 = [complex((gt[i, j, 0] - stats[0][0]) / stats[0][1] + 1, (gt[i, j, 1] - stats[1][0]) / stats[1][1] + 1)
          for i in range(32) for j in range(32)]
    z2 = [complex((f[i, j, 0] - stats[0][0]) / stats[0][1] + 1,
                  (f[i, j, 1] - stats[1][0]) / stats[1][1] + 1).conjugate()
          for i in range(32) for j in range(32)]
    m1, m2 = sum(z1) / N, sum(z2) / N
    c = N / (N - 1)
    mb = 2 * abs(m1) * abs(m2) / (abs(m1) ** 2 + abs(m2) ** 2)
    t3 = c * (sum(abs(z) ** 2 for z in z1) / N + sum(abs(z) ** 2 for z in z2) / N) - c * (abs(m1) ** 2 + abs(m2) ** 2)
    q = (c * sum(a * b for a, b in zip(z1, z2, strict=True)) / N - c * m1 * m2) * mb * 2 / t3
    rel_close(piq.q2n(gt, f), abs(q), what="q2n complex hand")


def test_q2n_one_band_is_block_uiqi_like(piq, rng):
    """B = 1 (real numbers): q = 2 c cov / (var_g + var_f) * 2 m1 m2 / (m1^2 + m2^2) on normalised data."""
    gt = np.round(smooth_dn(rng, (32, 32, 1)))
    f = np.round(np.clip(gt * 1.1 + rng.normal(0, 50, gt.shape), 0, None))
    x = gt[:, :, 0].ravel()
    y = f[:, :, 0].ravel()
    m, s = x.mean(), x.std(ddof=1)
    a = (x - m) / s + 1
    b = (y - m) / s + 1
    cov = np.cov(a, b, ddof=1)
    expected = abs(2 * cov[0, 1] / (cov[0, 0] + cov[1, 1]) * 2 * a.mean() * b.mean() / (a.mean() ** 2 + b.mean() ** 2))
    rel_close(piq.q2n(gt, f), expected, what="q2n B=1")


def test_q2n_int_dtypes(piq, rng):
    gt, f = _pair(rng, (40, 40, 4), "int")
    ref = R.q2n(gt, f)
    for dt in (np.uint16, np.int32, np.int64):
        g2, f2 = gt.astype(dt), f.astype(dt)
        keep = (g2.copy(), f2.copy())
        rel_close(piq.q2n(g2, f2), ref, what=f"q2n dtype {dt}")
        np.testing.assert_array_equal(g2, keep[0])
        np.testing.assert_array_equal(f2, keep[1])


# ------------------------------------------------------------------ Q_avg
@pytest.mark.parametrize("shape,kind", [((40, 45, 3), "int"), ((33, 38, 1), "float"), ((36, 34, 5), "float")])
def test_q_index_vs_reference(piq, rng, shape, kind):
    gt, f = _pair(rng, shape, kind)
    ref_val, ref_map = R.q_avg(gt, f, 32, return_map=True)
    rel_close(piq.q_index(gt, f), ref_val, what="q_index")
    val, qmap = piq.q_index(gt, f, return_map=True)
    rel_close(val, ref_val)
    arr_close(qmap, ref_map, rtol=1e-9, what="q_index map")
    assert np.asarray(qmap).shape == (shape[0] - 31, shape[1] - 31, shape[2])


def test_q_index_degenerate_windows(piq, rng):
    """Constant windows: d1 == 0 and d2 != 0 -> 2 Sx Sy / d2 ; all-zero windows -> 1."""
    gt = np.zeros((40, 40, 3))
    f = np.zeros((40, 40, 3))
    gt[:, :, 0] = 100.0
    f[:, :, 0] = 300.0        # both constant, different: 2*100*300/(100^2+300^2) = 0.6
    gt[:, :, 1] = dn_int(rng, (40, 40))
    f[:, :, 1] = gt[:, :, 1] + 3
    # band 2 all zero in both -> 1
    ref_val, ref_map = R.q_avg(gt, f, 32, return_map=True)
    assert np.allclose(ref_map[:, :, 0], 0.6) and np.all(ref_map[:, :, 2] == 1.0)
    val, qmap = piq.q_index(gt, f, return_map=True)
    arr_close(qmap, ref_map, rtol=1e-9, what="q_index degenerate map")
    rel_close(val, ref_val, what="q_index degenerate")


def test_q_index_identity(piq, rng):
    x = dn_float(rng, (40, 50, 3))
    assert piq.q_index(x, x) == pytest.approx(1.0, abs=1e-12)


# ------------------------------------------------------------------ SAM
@pytest.mark.parametrize("shape,kind", [((70, 90, 4), "float"), ((100, 64, 8), "int"), ((9, 7, 3), "float")])
def test_sam_vs_reference(piq, rng, shape, kind):
    gt, f = _pair(rng, shape, kind)
    rel_close(piq.sam(gt, f), R.sam(gt, f), what="sam")


def test_sam_hand_two_pixels(piq):
    gt = np.array([[[1.0, 0.0], [1.0, 1.0]]])
    f = np.array([[[0.0, 1.0], [1.0, 0.0]]])
    rel_close(piq.sam(gt, f), (90 + 45) / 2, what="sam 2 pixels")
    # a zero pixel is dropped from the mean
    gt3 = np.array([[[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]])
    f3 = np.array([[[0.0, 1.0], [1.0, 0.0], [5.0, 2.0]]])
    rel_close(piq.sam(gt3, f3), 67.5, what="sam zero pixel dropped")
    val, smap = piq.sam(gt, f, return_map=True)
    np.testing.assert_allclose(np.asarray(smap), [[90.0, 45.0]], rtol=1e-12)


def test_sam_parallel_rounding_clipped(piq):
    # c slightly > 1 by rounding (this gain gives 1.0000000000000002): real(acos) = 0, never NaN
    v = np.array([0.1, 0.2, 0.3]) * 3
    gt = np.tile(v, (4, 4, 1))
    f = gt * 0.5006
    got = piq.sam(gt, f)
    assert np.isfinite(got) and abs(got) < 1e-6
    assert abs(got - R.sam(gt, f)) < 1e-6


def test_sam_identity(piq, rng):
    x = dn_float(rng, (30, 20, 4))
    assert piq.sam(x, x) == pytest.approx(0.0, abs=1e-5)


# ------------------------------------------------------------------ ERGAS
@pytest.mark.parametrize("shape,kind,ratio", [((70, 90, 4), "float", 4), ((100, 64, 8), "int", 4),
                                              ((20, 30, 1), "float", 2)])
def test_ergas_vs_reference(piq, rng, shape, kind, ratio):
    gt, f = _pair(rng, shape, kind)
    rel_close(piq.ergas(gt, f, ratio=ratio), R.ergas(gt, f, ratio), what="ergas")


def test_ergas_hand(piq):
    gt = np.array([[[1.0, 10.0], [3.0, 30.0]]])       # band means 2 and 20
    f = np.array([[[2.0, 10.0], [3.0, 26.0]]])        # MSE 0.5 and 8
    expected = 100 / 4 * math.sqrt((0.5 / 4 + 8 / 400) / 2)
    rel_close(piq.ergas(gt, f, ratio=4), expected, what="ergas hand")
    assert piq.ergas(gt, gt, ratio=4) == 0.0


# ------------------------------------------------------------------ SCC
@pytest.mark.parametrize("variant", ["2020", "2015"])
@pytest.mark.parametrize("shape,kind", [((70, 90, 3), "float"), ((37, 41, 4), "int")])
def test_scc_vs_reference(piq, rng, variant, shape, kind):
    gt, f = _pair(rng, shape, kind)
    rel_close(piq.scc(gt, f, gradient={"2020": "magnitude", "2015": "vertical"}[variant]), R.scc(gt, f, variant),
              what=f"scc {variant}")


def test_scc_variants_differ_and_identity(piq, rng):
    gt, f = _pair(rng, (40, 40, 2), "float")
    assert abs(R.scc(gt, f, "2020") - R.scc(gt, f, "2015")) > 1e-4
    assert piq.scc(gt, gt) == pytest.approx(1.0, abs=1e-12)
    assert piq.scc(gt, 3 * gt) == pytest.approx(1.0, abs=1e-12)


def test_scc_2020_interior_crop_matters(piq, rng):
    """Changing only the outer 1-pixel frame of the fused image must not change SCC 2020."""
    gt, f = _pair(rng, (30, 30, 2), "float")
    f2 = f.copy()
    f2[0, :, :] = 0
    f2[:, -1, :] = 5000
    assert piq.scc(gt, f2) == pytest.approx(piq.scc(gt, f), rel=1e-12)
    assert piq.scc(gt, f2, gradient="vertical") != pytest.approx(piq.scc(gt, f, gradient="vertical"), rel=1e-6)


# ------------------------------------------------------------------ evaluate_reduced
@pytest.mark.parametrize("shape,kind", [((100, 130, 4), "int"), ((96, 96, 3), "float")])
def test_evaluate_reduced_vs_reference(piq, rng, shape, kind):
    gt, f = _pair(rng, shape, kind)
    res = piq.evaluate_reduced(f, gt, ratio=4, bits=11)
    ref = R.evaluate_reduced(f, gt, 4, 11)
    for k in ["Q2n", "Q", "SAM", "ERGAS", "SCC"]:
        assert type(res[k]) is float, (k, type(res[k]))
        rel_close(res[k], ref[k], what=f"evaluate_reduced {k}")
    card = res["protocol"]
    json.dumps(card)
    assert card["name"] == "toolbox2020"
    assert card["ratio"] == 4 and card["bits"] == 11 and card["block_size"] == 32
    assert card["dim_cut"] in (21, [20, 21], (20, 21))  # MATLAB dim_cut=21 = 20 leading / 21 trailing


def test_evaluate_reduced_cut_is_asymmetric_20_21(piq, rng):
    """Corrupting the first 20 / last 21 rows+cols changes nothing; row 20 does."""
    gt, f = _pair(rng, (96, 96, 3), "float")
    base = piq.evaluate_reduced(f, gt, ratio=4, bits=11)
    f2 = f.copy()
    f2[:20, :, :] = 1.0
    f2[-21:, :, :] = 1.0
    f2[:, :20, :] = 1.0
    f2[:, -21:, :] = 1.0
    res2 = piq.evaluate_reduced(f2, gt, ratio=4, bits=11)
    for k in ["Q2n", "Q", "SAM", "ERGAS", "SCC"]:
        assert res2[k] == base[k], k
    f3 = f.copy()
    f3[20, 30:40, :] += 500
    res3 = piq.evaluate_reduced(f3, gt, ratio=4, bits=11)
    assert res3["ERGAS"] != base["ERGAS"]


def test_evaluate_reduced_scale(piq, rng):
    gt, f = _pair(rng, (96, 100, 4), "int")
    res = piq.evaluate_reduced(f, gt, ratio=4, bits=11)
    res01 = piq.evaluate_reduced(f / 2047.0, gt / 2047.0, ratio=4, bits=11, scale=2047.0)
    for k in ["Q2n", "Q", "SAM", "ERGAS", "SCC"]:
        rel_close(res01[k], res[k], rtol=1e-9, what=f"scale {k}")
    assert float(res01["protocol"]["scale"]) == 2047.0


def test_evaluate_reduced_identity(piq, rng):
    x = dn_float(rng, (90, 90, 4))
    res = piq.evaluate_reduced(x, x, ratio=4, bits=11)
    assert res["Q2n"] == pytest.approx(1.0, abs=1e-12)
    assert res["Q"] == pytest.approx(1.0, abs=1e-12)
    assert res["SAM"] == pytest.approx(0.0, abs=1e-5)
    assert res["ERGAS"] == 0.0
    assert res["SCC"] == pytest.approx(1.0, abs=1e-12)


def test_evaluate_reduced_inputs_unchanged(piq, rng):
    gt, f = _pair(rng, (80, 80, 3), "float")
    g0, f0 = gt.copy(), f.copy()
    piq.evaluate_reduced(f, gt, ratio=4, bits=11)
    np.testing.assert_array_equal(gt, g0)
    np.testing.assert_array_equal(f, f0)


def test_q_index_block16_and_sam_map(piq, rng):
    gt, f = _pair(rng, (40, 45, 3), "float")
    rel_close(piq.q_index(gt, f, block_size=16), R.q_avg(gt, f, 16), what="q_index block 16")
    val, smap = piq.sam(gt, f, return_map=True)
    ref_val, ref_map = R.sam(gt, f, return_map=True)
    rel_close(val, ref_val, what="sam value")
    arr_close(smap, ref_map, rtol=1e-9, what="sam map (degrees)")


def test_q2n_constant_gt_band_block_eps_branch(piq, rng):
    """GT band constant (non-zero) on a block: std -> eps; the identical fused band stays at 1."""
    gt, f = _pair(rng, (64, 64, 4), "int")
    gt[:32, :32, 2] = 517.0
    f[:32, :32, 2] = 517.0
    ref = R.q2n(gt, f)
    rel_close(piq.q2n(gt, f), ref, what="q2n eps branch")


def test_q2n_negative_fused_values_saturate_to_zero(piq, rng):
    gt, f = _pair(rng, (64, 70, 3), "float")
    f = f - 900.0  # many negative values: MATLAB's uint16 cast saturates them to 0
    assert (f < 0).mean() > 0.1
    rel_close(piq.q2n(gt, f), R.q2n(gt, f), what="q2n negative fused")

"""Full-resolution indexes (D_lambda, D_s, QNR, D_lambda_K, HQNR), protocols, sensor sensitivity."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import reference_impl as R
from spec_helpers import rel_close, smooth_dn


def make_scene(rng, B, size=128, ratio=4, integer=False):
    """Synthetic FR scene: MS (size/ratio)^2 x B, PAN size^2, a fused image at PAN scale."""
    hr = smooth_dn(rng, (size, size, B), hi=1600.0)
    pan = hr.mean(axis=2) + rng.normal(0, 25, (size, size)) + 100
    ms = np.zeros((size // ratio, size // ratio, B))
    for i in range(size // ratio):
        for j in range(size // ratio):
            ms[i, j, :] = hr[i * ratio:(i + 1) * ratio, j * ratio:(j + 1) * ratio, :].mean(axis=(0, 1))
    ms = ms + rng.normal(0, 10, ms.shape)
    exp = R.interp23tap(ms, ratio)
    pan_lp = R.interp23tap(R.imresize(pan, 1.0 / ratio), ratio)
    gains = rng.uniform(0.5, 1.2, B)
    fused = exp + gains[None, None, :] * (pan - pan_lp)[:, :, None] + rng.normal(0, 5, exp.shape)
    if integer:
        ms, pan, fused = np.round(ms), np.round(pan), np.round(np.clip(fused, 0, None))
    return fused, ms, pan


@pytest.fixture(scope="module")
def scene4():
    return make_scene(np.random.default_rng(11), 4)


@pytest.fixture(scope="module")
def scene8():
    return make_scene(np.random.default_rng(12), 8, integer=True)


@pytest.fixture(scope="module")
def scene3():
    return make_scene(np.random.default_rng(13), 3, size=64)


def _exp(ms):
    return R.interp23tap(ms, 4)


# ------------------------------------------------------------------ D_lambda
@pytest.mark.parametrize("which", ["scene4", "scene8", "scene3"])
def test_d_lambda_vs_reference(piq, request, which):
    fused, ms, pan = request.getfixturevalue(which)
    ref = R.d_lambda(fused, _exp(ms), 32, 1)
    rel_close(piq.d_lambda(fused, ms, ratio=4), ref, what=f"d_lambda {which}")
    rel_close(piq.d_lambda(fused, ms, ratio=4, ms_exp=_exp(ms)), ref, what="d_lambda ms_exp")
    assert ref > 1e-4


def test_d_lambda_p2(piq, scene4):
    fused, ms, pan = scene4
    rel_close(piq.d_lambda(fused, ms, ratio=4, p=2), R.d_lambda(fused, _exp(ms), 32, 2), what="d_lambda p=2")


def test_d_lambda_fused_exp_is_zero(piq, scene4):
    fused, ms, pan = scene4
    assert abs(piq.d_lambda(piq.interp23tap(ms, 4), ms, ratio=4)) <= 1e-12
    assert abs(piq.d_lambda(R.interp23tap(ms, 4), ms, ratio=4)) <= 1e-12


def test_d_lambda_band_permutation_symmetric(piq, scene8):
    fused, ms, pan = scene8
    perm = [3, 0, 7, 5, 1, 6, 2, 4]
    a = piq.d_lambda(fused, ms, ratio=4)
    b = piq.d_lambda(fused[:, :, perm], ms[:, :, perm], ratio=4)
    assert abs(a - b) <= 1e-12 * max(1.0, abs(a))


def test_d_lambda_qnr_paper(piq, scene4):
    fused, ms, pan = scene4
    ref = R.d_lambda_paper(fused, ms, 4, 32, 1)
    rel_close(piq.d_lambda(fused, ms, ratio=4, protocol="qnr-paper"), ref, what="d_lambda qnr-paper")
    assert abs(ref - R.d_lambda(fused, _exp(ms))) > 1e-6


# ------------------------------------------------------------------ D_s
@pytest.mark.parametrize("which", ["scene4", "scene8", "scene3"])
def test_d_s_2020_vs_reference(piq, request, which):
    fused, ms, pan = request.getfixturevalue(which)
    ref = R.d_s(fused, _exp(ms), pan, 4, 32, 1, "toolbox2020")
    rel_close(piq.d_s(fused, ms, pan, ratio=4), ref, what=f"d_s {which}")
    assert ref > 1e-4


def test_d_s_q2(piq, scene4):
    fused, ms, pan = scene4
    rel_close(piq.d_s(fused, ms, pan, ratio=4, q=2), R.d_s(fused, _exp(ms), pan, 4, 32, 2), what="d_s q=2")


def test_d_s_2020_sensor_independent(piq, scene4):
    fused, ms, pan = scene4
    vals = [piq.d_s(fused, ms, pan, ratio=4, sensor=s) for s in ("QB", "IKONOS", "GeoEye1", None)]
    assert max(vals) - min(vals) <= 1e-15


@pytest.mark.parametrize("sensor", ["QB", "IKONOS", "GeoEye1"])
def test_d_s_2015_vs_reference(piq, scene4, sensor):
    fused, ms, pan = scene4
    ref = R.d_s(fused, _exp(ms), pan, 4, 32, 1, "toolbox2015", pan_gnyq=R.SPEC_PAN_GNYQ[sensor])
    rel_close(piq.d_s(fused, ms, pan, ratio=4, protocol="toolbox2015", sensor=sensor), ref, what=f"d_s 2015 {sensor}")


def test_d_s_2015_depends_on_sensor(piq, scene4):
    fused, ms, pan = scene4
    a = piq.d_s(fused, ms, pan, ratio=4, protocol="toolbox2015", sensor="QB")
    b = piq.d_s(fused, ms, pan, ratio=4, protocol="toolbox2015", sensor="IKONOS")
    assert abs(a - b) > 1e-6


def test_d_s_qnr_paper(piq, scene4):
    fused, ms, pan = scene4
    ref = R.d_s(fused, _exp(ms), pan, 4, 32, 1, "qnr-paper", ms_lr=ms)
    rel_close(piq.d_s(fused, ms, pan, ratio=4, protocol="qnr-paper"), ref, what="d_s qnr-paper")


# ------------------------------------------------------------------ QNR
def test_qnr_product(piq, scene4):
    fused, ms, pan = scene4
    dl = R.d_lambda(fused, _exp(ms))
    ds = R.d_s(fused, _exp(ms), pan, 4)
    q = piq.qnr(fused, ms, pan, ratio=4)
    rel_close(q, (1 - dl) * (1 - ds), what="qnr")


# ------------------------------------------------------------------ D_lambda_K / HQNR
@pytest.mark.parametrize("which,sensor", [("scene4", "QB"), ("scene4", "IKONOS"), ("scene8", "WV2"),
                                          ("scene8", "WV3"), ("scene3", "none")])
def test_d_lambda_k_vs_reference(piq, request, which, sensor):
    fused, ms, pan = request.getfixturevalue(which)
    B = ms.shape[2]
    ref = R.d_lambda_k(fused, _exp(ms), R.spec_ms_gnyq(sensor, B), 4, 32)
    rel_close(piq.d_lambda_k(fused, ms, sensor=sensor, ratio=4), ref, what=f"d_lambda_k {sensor}")


def test_d_lambda_k_depends_on_sensor(piq, scene4):
    fused, ms, pan = scene4
    a = piq.d_lambda_k(fused, ms, sensor="QB", ratio=4)
    b = piq.d_lambda_k(fused, ms, sensor="IKONOS", ratio=4)
    assert abs(a - b) > 1e-7


def test_hqnr_vs_reference(piq, scene8):
    fused, ms, pan = scene8
    dk = R.d_lambda_k(fused, _exp(ms), R.SPEC_MS_GNYQ["WV2"], 4)
    ds = R.d_s(fused, _exp(ms), pan, 4)
    rel_close(piq.hqnr(fused, ms, pan, sensor="WV2"), (1 - dk) * (1 - ds), what="hqnr")


def test_hqnr_wv2_band_subset(piq, scene4):
    fused, ms, pan = scene4
    sub = piq.get_sensor("WV2").select_bands(["Blue", "Green", "Red", "NIR1"])
    dk = R.d_lambda_k(fused, _exp(ms), [0.35] * 4, 4)
    ds = R.d_s(fused, _exp(ms), pan, 4)
    rel_close(piq.hqnr(fused, ms, pan, sensor=sub), (1 - dk) * (1 - ds), what="hqnr WV2 subset")


# ------------------------------------------------------------------ evaluate_full
@pytest.mark.parametrize("which,sensor", [("scene4", "QB"), ("scene8", "WV3")])
def test_evaluate_full_toolbox2020(piq, request, which, sensor):
    fused, ms, pan = request.getfixturevalue(which)
    B = ms.shape[2]
    exp = _exp(ms)
    dl = R.d_lambda(fused, exp)
    ds = R.d_s(fused, exp, pan, 4)
    dk = R.d_lambda_k(fused, exp, R.spec_ms_gnyq(sensor, B), 4)
    res = piq.evaluate_full(fused, ms, pan, sensor=sensor)
    expected = {"D_lambda": dl, "D_s": ds, "QNR": (1 - dl) * (1 - ds), "D_lambda_K": dk,
                "HQNR": (1 - dk) * (1 - ds)}
    for k, v in expected.items():
        assert type(res[k]) is float, k
        rel_close(res[k], v, what=f"evaluate_full {k}")
    card = res["protocol"]
    json.dumps(card)
    assert card["name"] == "toolbox2020"
    assert sensor.lower() in json.dumps(card["sensor"]).lower()
    assert [float(g) for g in card["ms_gnyq"]] == pytest.approx(R.spec_ms_gnyq(sensor, B), abs=0)
    if "pan_gnyq" in card:  # toolbox2020 does not use the PAN MTF; if recorded it must be right
        assert float(card["pan_gnyq"]) == pytest.approx(R.SPEC_PAN_GNYQ[sensor], abs=0)
    assert card["ratio"] == 4 and card["bits"] == 11


def test_evaluate_full_invariants(piq, scene8):
    fused, ms, pan = scene8
    res = piq.evaluate_full(fused, ms, pan, sensor="WV2")
    assert abs(res["QNR"] - (1 - res["D_lambda"]) * (1 - res["D_s"])) <= 1e-12
    assert abs(res["HQNR"] - (1 - res["D_lambda_K"]) * (1 - res["D_s"])) <= 1e-12


def test_evaluate_full_sensor_dependence(piq, scene4):
    fused, ms, pan = scene4
    a = piq.evaluate_full(fused, ms, pan, sensor="QB")
    b = piq.evaluate_full(fused, ms, pan, sensor="IKONOS")
    assert a["D_s"] == b["D_s"] and a["D_lambda"] == b["D_lambda"]
    assert abs(a["D_lambda_K"] - b["D_lambda_K"]) > 1e-7
    assert abs(a["HQNR"] - b["HQNR"]) > 1e-7


def test_evaluate_full_toolbox2015(piq, scene4):
    fused, ms, pan = scene4
    exp = _exp(ms)
    res = piq.evaluate_full(fused, ms, pan, sensor="QB", protocol="toolbox2015")
    dl = R.d_lambda(fused, exp)
    ds = R.d_s(fused, exp, pan, 4, variant="toolbox2015", pan_gnyq=0.15)
    rel_close(res["D_lambda"], dl, what="2015 D_lambda")
    rel_close(res["D_s"], ds, what="2015 D_s")
    rel_close(res["QNR"], (1 - dl) * (1 - ds), what="2015 QNR")
    assert "HQNR" not in res  # spec: the 2015 FR table is D_lambda, D_s, QNR
    res_ik = piq.evaluate_full(fused, ms, pan, sensor="IKONOS", protocol="toolbox2015")
    assert abs(res_ik["D_s"] - res["D_s"]) > 1e-6
    card = res["protocol"]
    assert card["name"] == "toolbox2015"
    # the PAN MTF is used here: the card must record the exact value (issue 3: "the exact GNyq values used")
    assert float(card["pan_gnyq"]) == pytest.approx(0.15, abs=0)


def test_evaluate_full_qnr_paper(piq, scene4):
    fused, ms, pan = scene4
    res = piq.evaluate_full(fused, ms, pan, sensor="QB", protocol="qnr-paper")
    dl = R.d_lambda_paper(fused, ms, 4)
    ds = R.d_s(fused, _exp(ms), pan, 4, variant="qnr-paper", ms_lr=ms)
    rel_close(res["D_lambda"], dl, what="qnr-paper D_lambda")
    rel_close(res["D_s"], ds, what="qnr-paper D_s")
    rel_close(res["QNR"], (1 - dl) * (1 - ds), what="qnr-paper QNR")
    if "HQNR" in res:
        assert abs(res["HQNR"] - (1 - res["D_lambda_K"]) * (1 - res["D_s"])) <= 1e-12


def test_evaluate_full_scale(piq, scene8):
    fused, ms, pan = scene8
    res = piq.evaluate_full(fused, ms, pan, sensor="WV2")
    res01 = piq.evaluate_full(fused / 2047, ms / 2047, pan / 2047, sensor="WV2", scale=2047.0)
    for k in ["D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR"]:
        rel_close(res01[k], res[k], rtol=1e-9, what=f"scale {k}")


def test_evaluate_full_int_dtype_and_no_inplace(piq, scene8):
    fused, ms, pan = scene8
    f16, m16, p16 = fused.astype(np.uint16), ms.astype(np.uint16), pan.astype(np.uint16)
    keep = [a.copy() for a in (f16, m16, p16)]
    res = piq.evaluate_full(f16, m16, p16, sensor="WV2")
    ref = piq.evaluate_full(fused, ms, pan, sensor="WV2")
    for k in ["D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR"]:
        rel_close(res[k], ref[k], rtol=1e-12, what=f"uint16 {k}")
    for a, b in zip((f16, m16, p16), keep, strict=True):
        np.testing.assert_array_equal(a, b)
    keep2 = [a.copy() for a in (fused, ms, pan)]
    piq.evaluate_full(fused, ms, pan, sensor="WV2", protocol="toolbox2015")
    for a, b in zip((fused, ms, pan), keep2, strict=True):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ protocols
def test_list_protocols(piq):
    names = set(piq.list_protocols())
    assert {"toolbox2020", "toolbox2015", "qnr-paper"} <= names
    p = piq.get_protocol("toolbox2020")
    assert p.name == "toolbox2020"
    assert set(p.full_indexes) == {"D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR"}
    assert set(p.reduced_indexes) >= {"Q2n", "Q", "SAM", "ERGAS", "SCC"}
    assert p.sources and p.description
    assert "HQNR" not in set(piq.get_protocol("toolbox2015").full_indexes)


def test_unknown_protocol(piq, scene4, rng):
    fused, ms, pan = scene4
    with pytest.raises(ValueError, match="(?i)protocol"):
        piq.get_protocol("toolbox2099")
    with pytest.raises(ValueError, match="(?i)protocol"):
        piq.evaluate_full(fused, ms, pan, sensor="QB", protocol="toolbox2099")
    x = smooth_dn(rng, (96, 96, 3))
    with pytest.raises(ValueError, match="(?i)protocol"):
        piq.evaluate_reduced(x, x, ratio=4, bits=11, protocol="Toolbox-2021")


# ------------------------------------------------------------------ sensor_sensitivity
def test_sensor_sensitivity(piq, scene4):
    fused, ms, pan = scene4
    out = piq.sensor_sensitivity(fused, ms, pan, sensors=["QB", "IKONOS", "GeoEye1"])
    assert len(out) == 3
    vals = list(out.values())
    keys = list(out.keys())
    assert all(v["D_s"] == vals[0]["D_s"] for v in vals)
    assert len({round(v["D_lambda_K"], 12) for v in vals}) == 3
    exp = _exp(ms)
    for k, v in zip(keys, vals, strict=True):
        name = k if isinstance(k, str) else k.name
        canon = piq.get_sensor(name).name
        dk = R.d_lambda_k(fused, exp, R.SPEC_MS_GNYQ[canon], 4)
        rel_close(v["D_lambda_K"], dk, what=f"sensitivity D_lambda_K {canon}")
    out15 = piq.sensor_sensitivity(fused, ms, pan, sensors=["QB", "IKONOS"], protocol="toolbox2015")
    v15 = list(out15.values())
    assert abs(v15[0]["D_s"] - v15[1]["D_s"]) > 1e-6


# ------------------------------------------------------------------ NaN reporting
def test_constant_block_never_silent_nan(piq, scene4):
    fused, ms, pan = scene4
    f = fused.copy()
    f[:32, :32, 0] = 500.0
    f[:32, :32, 1] = 700.0  # Q(F_0, F_1) on that block is 0/0 in the toolbox
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            val = piq.d_lambda(f, ms, ratio=4)
        except ValueError as e:
            assert "const" in str(e).lower() or "nan" in str(e).lower() or "block" in str(e).lower(), str(e)
            return
    assert np.isnan(val) and any("nan" in str(w.message).lower() or "const" in str(w.message).lower()
                                 for w in rec), (val, [str(w.message) for w in rec])


def test_constant_block_in_evaluate_full(piq, scene4):
    from pansharp_iqa.validation import ConstantBlockError

    fused, ms, pan = scene4
    f = fused.copy()
    p = pan.copy()
    f[32:64, :32, :] = 500.0
    p[32:64, :32] = 900.0   # Q(F_b, PAN) on that block is 0/0
    # the default refuses in one line, naming the count of constant blocks and the two ways out
    with pytest.raises(ConstantBlockError, match=r"1 of 16 blocks are constant.*nan_policy='omit'.*'propagate'"):
        piq.evaluate_full(f, ms, p, sensor="QB")
    # the toolbox's NaN on request: never a hidden finite number, and the card says why (issue 34:
    # "any warning at all" counted as the report before)
    res = piq.evaluate_full(f, ms, p, sensor="QB", nan_policy="propagate")
    assert all(np.isnan(res[k]) for k in ("D_lambda", "D_s", "QNR", "HQNR")), res
    assert np.isfinite(res["D_lambda_K"])  # Khan's index has no block UIQI: defined
    assert res["protocol"]["nan_policy"] == "propagate"


def test_fr_block_size_16_and_ms_exp(piq, scene3):
    fused, ms, pan = scene3
    exp = _exp(ms)
    rel_close(piq.d_lambda(fused, ms, ratio=4, block_size=16), R.d_lambda(fused, exp, 16), what="d_lambda S=16")
    rel_close(piq.d_s(fused, ms, pan, ratio=4, block_size=16), R.d_s(fused, exp, pan, 4, 16), what="d_s S=16")
    rel_close(piq.d_s(fused, ms, pan, ratio=4, ms_exp=exp), R.d_s(fused, exp, pan, 4), what="d_s ms_exp")
    rel_close(piq.d_lambda_k(fused, ms, sensor="none", ratio=4, ms_exp=exp),
              R.d_lambda_k(fused, exp, [0.3] * 3, 4), what="d_lambda_k ms_exp")


def test_evaluate_full_generic_sensor_needs_ratio(piq, scene3):
    fused, ms, pan = scene3
    with pytest.raises(ValueError, match="(?i)ratio"):
        piq.evaluate_full(fused, ms, pan, sensor="none")
    res = piq.evaluate_full(fused, ms, pan, sensor="none", ratio=4, bits=11)
    exp = _exp(ms)
    dk = R.d_lambda_k(fused, exp, [0.30] * 3, 4)
    ds = R.d_s(fused, exp, pan, 4)
    rel_close(res["D_lambda_K"], dk, what="none D_lambda_K")
    rel_close(res["HQNR"], (1 - dk) * (1 - ds), what="none HQNR")


def test_fr_non_square(piq, scene4):
    fused, ms, pan = scene4
    f, m, p = fused[:96, :64], ms[:24, :16], pan[:96, :64]
    exp = _exp(m)
    res = piq.evaluate_full(f, m, p, sensor="QB")
    dl = R.d_lambda(f, exp)
    ds = R.d_s(f, exp, p, 4)
    dk = R.d_lambda_k(f, exp, R.SPEC_MS_GNYQ["QB"], 4)
    for k, v in {"D_lambda": dl, "D_s": ds, "D_lambda_K": dk, "HQNR": (1 - dk) * (1 - ds)}.items():
        rel_close(res[k], v, what=f"non-square {k}")

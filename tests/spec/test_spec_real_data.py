"""Real-data crops from ../shared/data (skipped cleanly when absent; files are never copied)."""
from __future__ import annotations

import numpy as np
import pytest

import reference_impl as R
from spec_helpers import arr_close, load_mat, rel_close


def _sensor_from_file(d, default):
    s = d.get("sensor")
    if s is None:
        return default
    return str(np.asarray(s).ravel()[0]).strip()


def _simple_fusion(exp, pan, pan_lp, gains):
    return exp + gains[None, None, :] * (pan - pan_lp)[:, :, None]


@pytest.fixture(scope="module")
def wv2():
    d = load_mat("imgWV2.mat")
    return d["I_MS"].astype(np.float64), d["I_PAN"].astype(np.float64), _sensor_from_file(d, "WV2")


@pytest.fixture(scope="module")
def ik():
    d = load_mat("imgIK.mat")
    return d["I_MS"].astype(np.float64), d["I_PAN"].astype(np.float64), _sensor_from_file(d, "IKONOS")


@pytest.fixture(scope="module")
def wv3():
    d = load_mat("WV3_example.mat")
    return d["I_MS_LR"].astype(np.float64), d["I_PAN"].astype(np.float64)


def test_file_sensor_tags(wv2, ik, piq):
    assert piq.get_sensor(wv2[2]).name == "WV2"
    assert piq.get_sensor(ik[2]).name == "IKONOS"


def _rr_case(piq, ms_full, pan_full, sensor, r0, c0, size):
    """Wald degradation of a crop (GT = MS crop), a simple CS fusion, then RR evaluation."""
    gt = ms_full[r0:r0 + size, c0:c0 + size, :]
    pan = pan_full[4 * r0:4 * (r0 + size), 4 * c0:4 * (c0 + size)]
    B = gt.shape[2]
    ms_lr, pan_lr = piq.wald_degrade(gt, pan, sensor)
    ref_ms_lr, ref_pan_lr = R.wald_degrade(gt, pan, R.spec_ms_gnyq(sensor, B), 4)
    arr_close(ms_lr, ref_ms_lr, rtol=1e-9, what="wald ms_lr (real)")
    arr_close(pan_lr, ref_pan_lr, rtol=1e-9, what="wald pan_lr (real)")
    exp = R.interp23tap(ref_ms_lr, 4)
    arr_close(piq.interp23tap(ref_ms_lr, 4), exp, rtol=1e-9, what="interp23tap (real)")
    pan_lp = R.interp23tap(R.imresize(ref_pan_lr, 0.25), 4)
    fused = _simple_fusion(exp, ref_pan_lr, pan_lp, np.linspace(0.6, 1.1, B))
    res = piq.evaluate_reduced(fused, gt, ratio=4, bits=11)
    ref = R.evaluate_reduced(fused, gt, 4, 11)
    for k in ["Q2n", "Q", "SAM", "ERGAS", "SCC"]:
        rel_close(res[k], ref[k], what=f"{sensor} RR {k}")
    # the uint16-cast integer fused image as well (DN products)
    fused_dn = np.round(np.clip(fused, 0, 2047))
    rel_close(piq.q2n(R.cut_bounds(gt), R.cut_bounds(fused_dn)), R.q2n(R.cut_bounds(gt), R.cut_bounds(fused_dn)),
              what=f"{sensor} q2n DN")
    return ref


def test_wv2_reduced_resolution(piq, wv2):
    ms, pan, sensor = wv2
    ref = _rr_case(piq, ms, pan, "WV2", 96, 160, 112)
    assert 0.3 < ref["Q2n"] < 1


def test_ikonos_reduced_resolution(piq, ik):
    ms, pan, sensor = ik
    ref = _rr_case(piq, ms, pan, "IKONOS", 200, 40, 100)
    assert 0.3 < ref["Q2n"] < 1


def _fr_case(piq, ms_lr, pan, sensor):
    B = ms_lr.shape[2]
    exp = R.interp23tap(ms_lr, 4)
    pan_lp = R.interp23tap(R.imresize(pan, 0.25), 4)
    fused = _simple_fusion(exp, pan, pan_lp, np.linspace(0.7, 1.0, B))
    res = piq.evaluate_full(fused, ms_lr, pan, sensor=sensor)
    dl = R.d_lambda(fused, exp)
    ds = R.d_s(fused, exp, pan, 4)
    dk = R.d_lambda_k(fused, exp, R.spec_ms_gnyq(sensor, B), 4)
    expected = {"D_lambda": dl, "D_s": ds, "QNR": (1 - dl) * (1 - ds), "D_lambda_K": dk,
                "HQNR": (1 - dk) * (1 - ds)}
    for k, v in expected.items():
        rel_close(res[k], v, what=f"{sensor} FR {k}")
    assert abs(piq.d_lambda(exp, ms_lr, ratio=4)) <= 1e-12
    res15 = piq.evaluate_full(fused, ms_lr, pan, sensor=sensor, protocol="toolbox2015")
    if sensor != "WV3":  # the 2015 toolbox knew no WV3
        ds15 = R.d_s(fused, exp, pan, 4, variant="toolbox2015", pan_gnyq=R.SPEC_PAN_GNYQ[sensor])
        rel_close(res15["D_s"], ds15, what=f"{sensor} FR 2015 D_s")
    return expected


def test_wv3_full_resolution(piq, wv3):
    ms_lr, pan = wv3
    exp = _fr_case(piq, ms_lr, pan, "WV3")
    assert 0 < exp["D_s"] < 1


def test_wv2_full_resolution(piq, wv2):
    ms, pan, _ = wv2
    _fr_case(piq, ms[64:96, 128:160, :], pan[256:384, 512:640], "WV2")


def test_ikonos_full_resolution(piq, ik):
    ms, pan, _ = ik
    _fr_case(piq, ms[160:192, 32:64, :], pan[640:768, 128:256], "IKONOS")


def test_ikonos_uint16_inputs(piq, ik):
    ms, pan, _ = ik
    ms16 = ms[0:32, 0:32, :].astype(np.uint16)
    pan16 = pan[0:128, 0:128].astype(np.uint16)
    fused16 = np.round(R.interp23tap(ms16, 4) * 0.97 + 3).astype(np.uint16)
    keep = (ms16.copy(), pan16.copy(), fused16.copy())
    a = piq.evaluate_full(fused16, ms16, pan16, sensor="IKONOS")
    b = piq.evaluate_full(fused16.astype(float), ms16.astype(float), pan16.astype(float), sensor="IKONOS")
    for k in ["D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR"]:
        assert a[k] == pytest.approx(b[k], rel=1e-12)
    for x, y in zip((ms16, pan16, fused16), keep, strict=True):
        np.testing.assert_array_equal(x, y)


def test_real_data_env_override(monkeypatch, tmp_path):
    """PANSHARP_SHARED_DATA pointing to an empty folder makes the real-data tests skip."""
    import spec_helpers
    monkeypatch.setenv("PANSHARP_SHARED_DATA", str(tmp_path))
    assert spec_helpers.shared_data_dir() == tmp_path
    with pytest.raises(pytest.skip.Exception):
        spec_helpers.load_mat("imgWV2.mat")

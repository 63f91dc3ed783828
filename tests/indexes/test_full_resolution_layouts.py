"""Full resolution without whole-image copies: dtypes, caller arrays and EXP layouts agree."""

from __future__ import annotations

import numpy as np
import pytest

import pansharp_iqa as pi

FR = ("D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR")


@pytest.fixture(scope="module")
def scene():
    rng = np.random.default_rng(11)
    base = rng.normal(size=(24, 24, 4)).cumsum(0).cumsum(1)
    hr = pi.interp23tap(base, 8)[:128, :128]
    hr = (hr - hr.min()) / (hr.max() - hr.min()) * 1500 + 200
    ms = np.clip(np.round(pi.decimate(pi.mtf_filter_sensor(hr, "QB"), 4)), 0, 2047)
    pan = np.round(hr.mean(axis=2) + rng.normal(0, 5, hr.shape[:2]))
    fused = np.clip(np.round(hr + rng.normal(0, 20, hr.shape)), 0, 2047)
    return fused, ms, pan


def test_integer_fused_equals_float_and_inputs_are_untouched(scene):
    fused, ms, pan = scene
    as_float = pi.evaluate_full(fused, ms, pan, sensor="QB")
    fused_u16 = fused.astype(np.uint16)
    keep = (fused_u16.copy(), fused.copy(), ms.copy(), pan.copy())
    as_int = pi.evaluate_full(fused_u16, ms, pan, sensor="QB")
    for k in FR:
        assert as_int[k] == pytest.approx(as_float[k], rel=1e-13, abs=1e-15)
    for before, after in zip(keep, (fused_u16, fused, ms, pan), strict=True):
        np.testing.assert_array_equal(before, after)


def test_given_exp_equals_computed_exp(scene):
    """A caller's (H, W, B) EXP and the internally computed band-plane EXP give the same numbers."""
    fused, ms, pan = scene
    computed = pi.evaluate_full(fused, ms, pan, sensor="QB")
    given = pi.evaluate_full(fused, ms, pan, sensor="QB", ms_exp=pi.interp23tap(ms, 4))
    for k in FR:
        assert given[k] == pytest.approx(computed[k], rel=1e-13, abs=1e-15)
    # and D_lambda vanishes for fused = EXP through either path
    exp = pi.interp23tap(ms, 4)
    assert pi.evaluate_full(exp, ms, pan, sensor="QB")["D_lambda"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("protocol", ["toolbox2020", "toolbox2015", "qnr-paper"])
def test_sensor_sensitivity_shares_only_sensor_independent_work(scene, protocol):
    """Each sensor's entry equals a separate evaluate_full call (the shared EXP and block
    statistics must not carry one sensor's MTF into another's numbers)."""
    fused, ms, pan = scene
    sensors = ["QB", "IKONOS", "GeoEye1"]
    table = pi.sensor_sensitivity(fused, ms, pan, sensors=sensors, protocol=protocol)
    for name in sensors:
        alone = pi.evaluate_full(fused, ms, pan, sensor=name, protocol=protocol)
        canon = pi.get_sensor(name).name
        for k in alone:
            if k != "protocol":
                assert table[canon][k] == alone[k], (name, k)
        assert table[canon]["protocol"]["ms_gnyq"] == alone["protocol"]["ms_gnyq"]


@pytest.mark.parametrize("layout", ["fortran", "big-endian"])
def test_full_resolution_reads_any_memory_layout(scene, layout):
    fused, ms, pan = scene
    view = np.asfortranarray(fused) if layout == "fortran" else fused.astype(">f8")
    got = pi.evaluate_full(view, ms, pan, sensor="QB")
    want = pi.evaluate_full(fused, ms, pan, sensor="QB")
    for k in FR:
        assert got[k] == pytest.approx(want[k], rel=1e-13, abs=1e-15), k


def test_qnr_paper_distortions_never_compute_the_exp(scene, monkeypatch):
    from pansharp_iqa.indexes import catalog

    fused, ms, pan = scene
    expected = {f: f(fused, ms, pan, ratio=4, protocol="qnr-paper") for f in (pi.d_s, pi.qnr)}
    expected[pi.d_lambda] = pi.d_lambda(fused, ms, ratio=4, protocol="qnr-paper")

    def no_exp(*args, **kwargs):
        raise AssertionError("interp23tap ran")

    monkeypatch.setattr(catalog, "interp23tap_planes", no_exp)
    assert pi.d_lambda(fused, ms, ratio=4, protocol="qnr-paper") == expected[pi.d_lambda]
    for f in (pi.d_s, pi.qnr):
        assert f(fused, ms, pan, ratio=4, protocol="qnr-paper") == expected[f]
    with pytest.raises(AssertionError, match="interp23tap ran"):  # D_lambda_K reads it
        pi.hqnr(fused, ms, pan, sensor="QB", protocol="qnr-paper")
    with pytest.raises(ValueError, match="ms_exp"):  # a given EXP is still checked
        pi.d_lambda(fused, ms, ratio=4, protocol="qnr-paper", ms_exp=np.ones((8, 8, 4)))

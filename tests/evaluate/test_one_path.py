"""One evaluation path: the settings value, evaluate(inputs, settings), and the ways in that use it."""

from __future__ import annotations

import numpy as np
import pytest

import pansharp_iqa as pi
import pansharp_iqa.evaluation as ev
from pansharp_iqa.evaluation import evaluate
from pansharp_iqa.settings import settings_of
from pansharp_iqa.tensor.metrics import FullMetrics, ReducedMetrics

FR = ("D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR")


def _fr_case(seed: int = 6, size: int = 128):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(size // 8, size // 8, 4)).cumsum(0).cumsum(1)
    hr = pi.interp23tap(base, 8)
    hr = (hr - hr.min()) / (hr.max() - hr.min()) * 1500 + 200 + rng.normal(0, 10, hr.shape)
    pan = hr.mean(axis=2)
    ms = pi.decimate(pi.mtf_filter_sensor(hr, "QB"), 4)
    fused = pi.interp23tap(ms, 4) + 0.7 * (pan - pi.interp23tap(pi.imresize(pan, 0.25), 4))[:, :, None]
    return fused, ms, pan


def _rr_case(seed: int = 3, size: int = 96):
    rng = np.random.default_rng(seed)
    gt = rng.integers(100, 2000, size=(size, size, 4)).astype(float)
    return gt + rng.normal(0, 20, gt.shape), gt


def test_the_wrappers_are_evaluate_with_the_settings_value():
    fused, gt = _rr_case()
    settings = pi.reduced_settings(ratio=4, bits=11)
    once = evaluate({"fused": fused, "reference": gt}, settings)
    assert once == pi.evaluate_reduced(fused, gt, ratio=4, bits=11)  # numbers and card, to the bit
    assert evaluate({"reference": gt, "fused": fused}, settings) == once  # the value is reused; roles by name
    f, ms, pan = _fr_case()
    full = pi.full_settings(sensor="QB")
    assert evaluate({"fused": f, "ms": ms, "pan": pan}, full) == pi.evaluate_full(f, ms, pan, sensor="QB")


def test_inputs_must_be_the_roles_of_the_settings():
    fused, gt = _rr_case()
    with pytest.raises(pi.InputError, match="take a dict of the images fused, reference; got"):
        evaluate({"fused": fused, "gt": gt}, pi.reduced_settings(ratio=4, bits=11))
    with pytest.raises(pi.InputError, match="fused, ms, pan"):
        evaluate({"fused": fused, "reference": gt}, pi.full_settings(sensor="QB"))
    with pytest.raises(pi.InputError, match="reduced_settings"):
        evaluate({"fused": fused, "reference": gt}, {"ratio": 4, "bits": 11})  # type: ignore[arg-type]


def test_full_resolution_needs_no_bits_unless_the_threshold_clips():
    """Item 6: no full-resolution index reads ``bits``; only ``threshold=True`` (a clip at 2**bits) needs it."""
    f, ms, pan = _fr_case(8)
    without = pi.evaluate_full(f, ms, pan, sensor="none", ratio=4)
    assert without["protocol"]["bits"] is None
    for bits in (11, 16):  # any declared bit depth gives the same numbers
        with_bits = pi.evaluate_full(f, ms, pan, sensor="none", ratio=4, bits=bits)
        assert {k: without[k] for k in FR} == {k: with_bits[k] for k in FR}
    tiled = pi.evaluate_full(f, ms, pan, sensor="none", ratio=4, tiled="always")
    assert tiled["QNR"] == pytest.approx(without["QNR"], rel=1e-9)
    repro = pi.evaluate_full(f, ms, pan, sensor="none", ratio=4, protocol="reprojected2022", tiled="always")
    assert repro["protocol"]["bits"] is None
    m = FullMetrics(sensor="none", ratio=4, layout="NHWC")
    m.update(f[None], ms[None], pan[None])
    assert m.compute()["QNR"] == without["QNR"]
    with pytest.raises(pi.InputError, match="bits is required with threshold=True"):
        pi.evaluate_full(f, ms, pan, sensor="none", ratio=4, threshold=True)
    clipped = pi.evaluate_full(f, ms, pan, sensor="none", ratio=4, bits=11, threshold=True)
    assert clipped["protocol"]["bits"] == 11 and clipped["protocol"]["threshold"] is True


def test_accumulators_take_the_value_or_its_keywords_not_both():
    fused, gt = _rr_case(4)
    batch = (np.moveaxis(fused, -1, 0)[None], np.moveaxis(gt, -1, 0)[None])
    settings = pi.reduced_settings(ratio=4, bits=11, indexes=["Q2n", "SAM"])
    by_value, by_keywords = ReducedMetrics(settings), ReducedMetrics(ratio=4, bits=11, indexes=["Q2n", "SAM"])
    assert by_value.update(*batch)["SAM"] == by_keywords.update(*batch)["SAM"]
    assert by_value.compute()["Q2n"] == pi.evaluate_reduced(fused, gt, ratio=4, bits=11)["Q2n"]
    with pytest.raises(pi.InputError, match="not both"):
        ReducedMetrics(settings, ratio=4)
    with pytest.raises(pi.InputError, match="expected reduced-resolution settings"):
        ReducedMetrics(pi.full_settings(sensor="QB"))
    with pytest.raises(pi.InputError, match="expected full-resolution settings"):
        FullMetrics(settings)
    with pytest.raises(TypeError, match="unexpected keyword"):
        settings_of("reduced", ratio=4, bits=11, sensor="QB")


def test_one_rule_sends_arrays_tile_wise_when_memory_is_short(monkeypatch):
    """``tiled="auto"`` on arrays applies ``tiled.plan.choose_path``, the rule of ``pansharp-eval``."""
    fused, gt = _rr_case(5, 160)
    memory = pi.evaluate_reduced(fused, gt, ratio=4, bits=11)
    assert "tiling" not in memory["protocol"]
    monkeypatch.setattr(ev, "available_memory", lambda: 2**20)  # 0.5 MB for an in-memory estimate of 150 MB
    short = pi.evaluate_reduced(fused, gt, ratio=4, bits=11)
    assert short["protocol"]["tiling"]["n_tiles"] >= 1
    for k in ("Q2n", "Q", "SAM", "ERGAS", "SCC"):
        assert short[k] == pytest.approx(memory[k], rel=1e-9, abs=1e-12)
    assert "tiling" not in pi.evaluate_reduced(fused, gt, ratio=4, bits=11, tiled="never")["protocol"]
    f, ms, pan = _fr_case()
    pinned = pi.evaluate_full(f, ms, pan, sensor="QB", ms_exp=pi.interp23tap(ms, 4))  # a given EXP stays in memory
    assert "tiling" not in pinned["protocol"]

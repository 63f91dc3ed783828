"""Issue 20 item 3: a scale mistake in one band is refused (fused vs reference and fused vs MS,
band by band), in memory, tile-wise and through pansharp-eval; per-band biases of real methods, and
bands dark or saturated (issue 27), still get their numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa import baselines
from pansharp_iqa.validation import ScaleError
from trust_helpers import HYPOTHESIS, demo, fr, real_scene, rr, rr_dataset, run_eval

MISTAKES = st.sampled_from([1 / 2047, 2047.0, 1 / 4095, 1 / 255, 100.0, 0.01, 10000 / 2047])


@settings(max_examples=25, **HYPOTHESIS)
@given(band=st.integers(0, 3), factor=MISTAKES, tiled=st.booleans())
def test_one_fused_band_on_another_scale_is_refused_at_reduced_resolution(band, factor, tiled):
    fused = demo()["rr"].copy()
    fused[..., band] *= factor
    with pytest.raises(ScaleError, match=rf"fused band {band + 1} \(of 4\) is on another scale than the same band "
                                         "of reference") as err:
        rr(fused, tiled="always" if tiled else "never")
    assert "re-export" in str(err.value)


@settings(max_examples=15, **HYPOTHESIS)
@given(band=st.integers(0, 3), factor=MISTAKES)
def test_one_fused_band_on_another_scale_is_refused_at_full_resolution(band, factor):
    fused = demo()["fr_s"].copy()
    fused[..., band] *= factor
    for tiled in ("never", "always"):
        with pytest.raises(ScaleError, match=rf"fused band {band + 1} \(of 4\) is on another scale than the same "
                                             "band of ms"):
            fr(fused, tiled=tiled)


@settings(max_examples=12, **HYPOTHESIS)
@given(band=st.integers(0, 3), level=st.sampled_from([2047.0, 1023.0]))
def test_a_reference_band_constant_or_saturated_is_no_evidence_of_a_scale(band, level):
    # issue 27 item 8: a saturated (constant 2047) reference band next to a method's ordinary band is not
    # a bit-depth export; a constant band has no spread to compare, so the rule has no evidence
    d = demo()
    gt = d["gt"].copy()
    gt[..., band] = level
    for tiled in ("never", "always"):
        r = rr(d["rr"], gt, tiled=tiled)
        assert np.isfinite(r["SAM"]) and r["Q2n"] <= 1


@pytest.mark.parametrize("tiled", ["never", "always"])
def test_a_dead_band_refuses_only_ergas_and_says_indexes_without_it_work(tiled):
    # issue 27 item 14: a dead (all-zero) reference band makes ERGAS undefined, not the other indexes
    d = demo()
    gt, fused = d["gt"].copy(), d["rr"].copy()
    gt[..., 2], fused[..., 2] = 0.0, 0.0
    with pytest.raises(pi.InputError, match=r"band\(s\) \[3\] \(counted from 1\).*indexes= without ERGAS"):
        rr(fused, gt, tiled=tiled)
    r = rr(fused, gt, tiled=tiled, indexes=["Q2n", "Q", "SAM", "SCC"])
    assert 0 < r["Q2n"] < 1 and "ERGAS" not in r


@settings(max_examples=8, **HYPOTHESIS)
@given(band=st.integers(0, 3), factor=st.sampled_from([1 / 2047, 1 / 255]), tiled=st.sampled_from(["never", "always"]))
def test_one_band_in_another_unit_in_both_images_is_refused(band, factor, tiled):
    # issue 31 (reverses issue 27): integer-ness is evidence. The demo GT holds integer DN; one band
    # divided by 2047 (or 255) in both images holds fractions among integer bands: another unit, which
    # moves Q2n, SAM and D_lambda. Refused in memory and tile-wise, naming the band
    d = demo()
    gt, fused = d["gt"].copy(), d["rr"].copy()
    assert np.all(gt == np.round(gt))  # the premise: DN stored as integer values
    gt[..., band] *= factor
    fused[..., band] *= factor
    with pytest.raises(pi.InputError, match=rf"reference band {band + 1} \(of 4\): fractions .* another unit"):
        rr(fused, gt, tiled=tiled)


@settings(max_examples=8, **HYPOTHESIS)
@given(band=st.integers(0, 3), level=st.integers(1, 4), tiled=st.sampled_from(["never", "always"]))
def test_a_dark_band_of_integer_dn_is_scored(band, level, tiled):
    # its legitimate neighbour: a band of very dark DN (0..4, integers, as float) is DN, not another unit
    d = demo()
    gt, fused = d["gt"].copy(), d["rr"].copy()
    rng = np.random.default_rng(band)
    gt[..., band] = rng.integers(1, level + 1, gt.shape[:2])
    fused[..., band] = gt[..., band] + rng.normal(0, 0.3, gt.shape[:2])
    a, b = rr(fused, gt), rr(fused, gt, tiled="always")
    assert a["SAM"] == pytest.approx(b["SAM"], rel=1e-9) and a["Q"] == pytest.approx(b["Q"], rel=1e-9)


@settings(max_examples=25, **HYPOTHESIS)
@given(band=st.integers(0, 3), gain=st.floats(0.6, 1.4), shift=st.floats(-0.4, 0.4))
def test_per_band_biases_of_a_poor_method_are_scored(band, gain, shift):
    # a method biased by up to 40 % in a band (a gain, an offset, or both), its spread moved alike
    assume(0.6 <= gain + shift <= 1.4)
    d = demo()
    fused = d["rr"].copy()
    fused[..., band] = fused[..., band] * gain + shift * d["gt"][..., band].mean()
    r = rr(fused)
    assert 0 < r["Q2n"] < 1 and r["ERGAS"] > 0
    fr_fused = d["fr_s"].copy()
    fr_fused[..., band] = fr_fused[..., band] * gain + shift * d["ms_s"][..., band].mean()
    assert 0 < fr(fr_fused, sensor="QB")["QNR"] <= 1


@pytest.mark.parametrize("name", ["imgWV2.mat", "imgIK.mat"])
def test_the_baselines_on_real_scenes_pass_the_per_band_rules(name):
    sc = real_scene(name)
    ms, pan, sensor = sc["ms"][:128, :128], sc["pan"][:512, :512], sc["sensor"]
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, sensor)
    for method in (baselines.exp, baselines.gsa, baselines.bt_h):
        assert 0 < pi.evaluate_reduced(method(ms_lr, pan_lr, ratio=4), ms, ratio=4, bits=11)["Q2n"] < 1
        assert 0 < pi.evaluate_full(method(ms, pan, ratio=4), ms, pan, sensor=sensor)["QNR"] < 1
    hpm = baselines.mtf_glp_hpm(ms_lr, pan_lr, ratio=4, sensor=sensor)  # a band's spread up to 2x the GT's
    assert 0 < pi.evaluate_reduced(hpm, ms, ratio=4, bits=11)["Q2n"] < 1


def test_pansharp_eval_refuses_one_band_on_another_scale(tmp_path, capsys):
    fused = demo()["rr"].copy()
    fused[..., 3] /= 2047
    data, method = rr_dataset(tmp_path, {"s.npy": fused})
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    reason = pairs[("s", "m")]["reason"]
    assert code == 1 and "band 4 (of 4) is on another scale" in reason and "re-export" in reason
    assert "result_scale =" not in reason  # no scale setting fixes one band
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o2", "--tiled", "always")
    assert code == 1 and "band 4 (of 4) is on another scale" in pairs[("s", "m")]["reason"]


def test_pansharp_eval_scores_a_saturated_reference_band(tmp_path, capsys):
    # issue 27 item 8 through the CLI, in memory and tile-wise
    d = demo()
    gt = d["gt"].copy()
    gt[..., 1] = 2047.0
    data, method = rr_dataset(tmp_path, {"s.npy": d["rr"]}, gt=gt)
    for tiled in ("never", "always"):
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o_{tiled}", "--tiled", tiled)
        assert code == 0 and pairs[("s", "m")]["metrics"]["Q2n"] == pytest.approx(rr(d["rr"], gt)["Q2n"], rel=1e-9)

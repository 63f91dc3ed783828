"""Issue 20 item 2: float data on a unit scale are refused where an index rounds to DN, whatever
their maximum (reflectance, [0, 1] data with overshoot); dark DN scenes and bands (issue 27), low
bit depths and data given with their ``scale`` still get their numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa.validation import ScaleError
from trust_helpers import HYPOTHESIS, demo, fr, one_line, rr, rr_dataset, run_eval, values

UNIT = "float data within .* a unit scale"


@settings(max_examples=20, **HYPOTHESIS)
@given(divisor=st.floats(1000, 4095), tiled=st.booleans())
def test_reduced_resolution_unit_scale_data_are_refused_whatever_their_maximum(divisor, tiled):
    d = demo()
    fused, gt = np.clip(d["rr"], 0, None) / divisor, d["gt"] / divisor
    assert 1.0 < fused.max() < 4.0 or fused.max() <= 1.0
    with pytest.raises(ScaleError, match=UNIT) as err:
        rr(fused, gt, tiled="always" if tiled else "never")
    assert "scale=" in str(err.value)
    # the same data with their scale: the DN numbers
    scaled = rr(fused, gt, scale=divisor)
    expected = rr(np.clip(d["rr"], 0, None))
    for k, v in values(expected).items():
        assert scaled[k] == pytest.approx(v, rel=1e-3), k


@settings(max_examples=10, **HYPOTHESIS)
@given(divisor=st.floats(1500, 2500))
def test_full_resolution_unit_scale_data_are_refused(divisor):
    d = demo()
    fused, ms, pan = np.clip(d["fr_s"], 0, None) / divisor, d["ms_s"] / divisor, d["pan_s"] / divisor
    for tiled in ("never", "always"):
        with pytest.raises(ScaleError, match=UNIT):
            fr(fused, ms, pan, tiled=tiled)
    assert fr(fused, ms, pan, scale=divisor)["HQNR"] == pytest.approx(fr(np.clip(d["fr_s"], 0, None))["HQNR"],
                                                                      rel=1e-3)


@settings(max_examples=12, **HYPOTHESIS)
@given(band=st.integers(0, 3), top=st.integers(1, 4), tiled=st.booleans())
def test_a_band_dark_in_both_images_is_scored_as_its_integer_copy(band, top, tiled):
    # issue 27 item 7 (a deliberate change from issue 20): a float reference band of 0-3 DN (8-bit NIR
    # over deep water) next to DN bands is a dark band, not a unit scale; the rule looks at whole images
    d = demo()
    gt, fused = d["gt"].copy(), d["rr"].copy()
    gt[..., band] = np.round(gt[..., band] / gt[..., band].max() * top)
    fused[..., band] = gt[..., band] + 0.3 * np.sin(np.arange(gt.shape[1]))[None, :]
    as_float = rr(fused, gt, tiled="always" if tiled else "never")
    as_int = rr(fused, gt.astype(np.uint16), tiled="always" if tiled else "never")
    assert values(as_float) == pytest.approx(values(as_int), rel=1e-12)
    assert 0 < as_float["Q2n"] < 1


@settings(max_examples=10, **HYPOTHESIS)
@given(gain=st.floats(0.08, 1.0))
def test_dark_scenes_in_dn_are_scored_as_their_integer_copies(gain):
    d = demo()
    gt = np.round(d["gt"] * gain)  # a dark scene: maxima of a few hundred DN, stored as float
    fused = d["rr"] * gain
    as_float = rr(fused, gt)
    as_int = rr(fused, gt.astype(np.uint16))
    assert values(as_float) == values(as_int)
    assert 0 < as_float["Q2n"] < 1


def test_low_bit_depths_keep_their_small_digital_numbers():
    d = demo()
    gt = np.round(d["gt"] / d["gt"].max() * 15)  # 4-bit DN as float: max 15
    r = pi.evaluate_reduced(gt + 0.3, gt, ratio=4, bits=4)
    assert 0 < r["Q2n"] <= 1
    gt8 = np.floor(d["gt"] / 8.03)  # 8-bit DN as float
    assert 0 < pi.evaluate_reduced(d["rr"] / 8, gt8, ratio=4, bits=8)["Q2n"] < 1


def test_indexes_that_do_not_round_to_dn_take_unit_scale_data():
    d = demo()
    fused, gt = np.clip(d["rr"], 0, None) / 1950, d["gt"] / 1950
    assert pi.sam(gt, fused) == pytest.approx(pi.sam(d["gt"], np.clip(d["rr"], 0, None)), rel=1e-9)
    with pytest.raises(ScaleError, match=UNIT):
        pi.q2n(gt, fused)


def test_pansharp_eval_refuses_unit_scale_data_declared_as_dn(tmp_path, capsys):
    d = demo()
    fused = np.clip(d["rr"], 0, None)
    data, method = rr_dataset(tmp_path, {"s.npy": fused / 1950}, gt=d["ms"] / 1950)
    code, _, reason = run_eval(capsys, data, method, tmp_path / "o")  # every scene fails: once, before the run
    assert code == 2 and "unit scale" in reason and "declare scale = 'unit'" in one_line(reason)
    data2, method2 = rr_dataset(tmp_path / "b", {"s.npy": fused / 1950}, gt=d["ms"] / 1950, scale=1950,
                                result_scale=1950)
    code, pairs, _ = run_eval(capsys, data2, method2, tmp_path / "o2")
    assert code == 0
    assert pairs[("s", "m")]["metrics"]["Q2n"] == pytest.approx(rr(fused)["Q2n"], rel=1e-3)


def test_pansharp_eval_scores_a_float_reference_with_a_nearly_black_band(tmp_path, capsys):
    # issue 27 item 7 through the CLI, in memory and tile-wise; its neighbour, a [0, 1] result, is refused above
    d = demo()
    gt, fused = d["gt"].copy(), d["rr"].copy()
    gt[..., 3] = np.round(gt[..., 3] / gt[..., 3].max() * 3)
    fused[..., 3] = gt[..., 3] + 0.2
    data, method = rr_dataset(tmp_path, {"s.npy": fused}, gt=gt)
    for tiled in ("never", "always"):
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o_{tiled}", "--tiled", tiled)
        assert code == 0
        assert pairs[("s", "m")]["metrics"]["Q2n"] == pytest.approx(rr(fused, gt.astype(np.uint16))["Q2n"], rel=1e-9)

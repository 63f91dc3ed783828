"""Issue 20 item 4: a result re-exported to another bit depth (a factor 2**k, (2**a - 1)/(2**b - 1),
2 and 1/2 included) is refused whatever the factor's size, with an explicit override
(``scale_mismatch="warn"``, recorded in the card); methods biased by 10-40 % and data scaled alike
(IKONOS-style 8-bit x 8) still get their numbers."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa.rules import Evidence, ScaleMismatchWarning, apply_rules
from pansharp_iqa.tiled import evaluate_reduced_tiled
from pansharp_iqa.validation import ScaleError, facts_from_sums
from trust_helpers import HYPOTHESIS, demo, fr, rr, rr_dataset, run_eval, values

DEPTHS = (8, 10, 11, 12, 14, 16)
FACTORS = sorted({(2.0**a - 1) / (2.0**b - 1) for a in DEPTHS for b in DEPTHS if a != b and abs(a - b) <= 5}
                 | {2.0**k for k in (-4, -3, -2, -1, 1, 2, 3, 4)})


def _band(name, mean, spread):
    return facts_from_sums(name, (8, 8, 1), "float64", lo=0, hi=mean + 4 * spread, n=1000, total=1000 * mean,
                           total_sq=1000 * (spread**2 + mean**2))


def _refused(factor):
    try:
        apply_rules(Evidence({"fused": _band("fused", 900 * factor, 400 * factor),
                              "reference": _band("reference", 900, 400)}))
    except ScaleError:
        return True
    return False


def test_every_bit_depth_factor_is_one():
    assert all(_refused(f) for f in FACTORS)
    assert not any(_refused(g) for g in (0.6, 0.7, 0.9, 1.0, 1.1, 1.3, 1.4, 1.85, 0.54, 2.5, 3.0))


@settings(max_examples=25, **HYPOTHESIS)
@given(factor=st.sampled_from(FACTORS), tiled=st.booleans())
def test_a_bit_depth_re_export_is_refused_whatever_the_factor(factor, tiled):
    fused = np.round(np.clip(demo()["rr"], 0, None) * factor)
    with pytest.raises(ScaleError, match="fused is on another scale than reference") as err:
        rr(fused, tiled="always" if tiled else "never")
    assert "scale_mismatch='warn'" in str(err.value) or abs(np.log2(factor)) > 1.6  # large factors: no override hint
    assert "close to" in str(err.value)


@settings(max_examples=10, **HYPOTHESIS)
@given(factor=st.sampled_from([4095 / 2047, 2047 / 4095, 2.0, 0.5, 8.0, 255 / 2047]))
def test_a_bit_depth_re_export_is_refused_at_full_resolution(factor):
    fused = demo()["fr_s"] * factor
    for tiled in ("never", "always"):
        with pytest.raises(ScaleError, match="fused is on another scale than ms"):
            fr(fused, tiled=tiled)


def test_the_issue_example_4095_over_2047():
    d = demo()
    fused = np.round(d["rr"] * 4095 / 2047)
    with pytest.raises(ScaleError, match=r"about 2 times theirs.*close to .*2\*\*1") as err:
        rr(fused)
    assert "divide it by about" in str(err.value)


def test_the_override_scores_with_a_warning_recorded_in_the_card():
    d = demo()
    fused = np.round(d["rr"] * 4095 / 2047)
    with pytest.warns(ScaleMismatchWarning, match="about 2 times theirs"):
        memory = rr(fused, scale_mismatch="warn")
    with pytest.warns(ScaleMismatchWarning):
        tiled = evaluate_reduced_tiled(fused, d["gt"], ratio=4, bits=11, tile_size=64, scale_mismatch="warn")
    assert memory["protocol"]["scale_mismatch"].startswith("warn")
    assert "scale_mismatch" not in rr(d["rr"])["protocol"]
    for k, v in values(memory).items():
        assert tiled[k] == pytest.approx(v, rel=1e-9)
    assert memory["Q2n"] < rr(d["rr"])["Q2n"] - 0.2  # the factor's number, as asked
    with pytest.warns(ScaleMismatchWarning):
        assert 0 < fr(d["fr_s"] * 2, scale_mismatch="warn")["QNR"] < 1
    with pytest.raises(pi.InputError, match="scale_mismatch must be one of"):
        rr(fused, scale_mismatch="ignore")


@settings(max_examples=20, **HYPOTHESIS)
@given(gain=st.floats(0.6, 1.4), tiled=st.booleans())
def test_a_method_biased_by_up_to_40_percent_is_scored(gain, tiled):
    d = demo()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = rr(d["rr"] * gain, tiled="always" if tiled else "never")
        assert 0 < r["Q2n"] < 1
        assert 0 < fr(d["fr_s"] * gain)["QNR"] < 1


def test_data_scaled_alike_are_scored_ikonos_style():
    d = demo()
    gt8 = np.floor(d["gt"] / 8.03)  # an 8-bit product ...
    r8 = pi.evaluate_reduced(np.clip(d["rr"], 0, None) / 8.03, gt8, ratio=4, bits=8)
    assert 0 < r8["Q2n"] < 1
    r = pi.evaluate_reduced(np.clip(d["rr"], 0, None) / 8.03 * 8, gt8 * 8, ratio=4, bits=11)  # ... scaled by 8
    assert 0 < r["Q2n"] < 1


def test_pansharp_eval_names_the_bit_depth_factor_and_its_fix(tmp_path, capsys):
    d = demo()
    fused = np.round(np.clip(d["rr"], 0, None) * 4095 / 2047).astype(np.uint16)
    data, method = rr_dataset(tmp_path, {"s.npy": fused})
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    reason = pairs[("s", "m")]["reason"]
    assert code == 1 and re.search(r"declare result_scale = 0\.(49|50)", reason) and "--scale-mismatch warn" in reason
    # the declared factor: numbers
    data2, method2 = rr_dataset(tmp_path / "b", {"s.npy": fused}, result_scale=2047 / 4095)
    code, pairs, _ = run_eval(capsys, data2, method2, tmp_path / "o2")
    assert code == 0 and pairs[("s", "m")]["status"] == "ok"
    # the override: numbers, recorded in the card
    for extra, folder in ((("--scale-mismatch", "warn"), "o3"),
                          (("--scale-mismatch", "warn", "--tiled", "always"), "o4")):
        with pytest.warns(ScaleMismatchWarning):
            code, pairs, _ = run_eval(capsys, data, method, tmp_path / folder, *extra)
        assert code == 0, pairs
        assert pairs[("s", "m")]["protocol"]["scale_mismatch"].startswith("warn")

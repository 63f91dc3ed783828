"""Issue 20 items 5 and 8: masked arrays with masked values are refused (never scored as if the mask
were not there), and a result whose negatives wrapped around in a uint16 cast is refused; masked
arrays without masked values, clipped uint16 results, float undershoot and 16-bit data get numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa.tiled import evaluate_full_tiled, evaluate_reduced_tiled
from pansharp_iqa.validation import InputError, ScaleError
from trust_helpers import HYPOTHESIS, demo, fr, rr, rr_dataset, run_eval, values

# ----------------------------------------------------------------------------- item 5: masks


@settings(max_examples=15, **HYPOTHESIS)
@given(r0=st.integers(0, 120), c0=st.integers(0, 120), size=st.integers(1, 24), band=st.integers(0, 3),
       which=st.sampled_from(["fused", "reference"]))
def test_masked_values_are_refused_in_memory_and_tile_wise(r0, c0, size, band, which):
    d = demo()
    arrays = {"fused": d["rr"], "reference": d["gt"]}
    mask = np.zeros(d["gt"].shape, bool)
    mask[r0:r0 + size, c0:c0 + size, band] = True
    arrays[which] = np.ma.masked_array(arrays[which], mask=mask)
    for evaluate in (pi.evaluate_reduced, evaluate_reduced_tiled):
        with pytest.raises(InputError, match=rf"{which}: a masked array with {int(mask.sum())} masked values.*"
                                             r"np\.ma\.filled"):
            evaluate(arrays["fused"], arrays["reference"], ratio=4, bits=11)


def test_masked_full_resolution_inputs_and_index_functions_are_refused():
    d = demo()
    masked = np.ma.masked_less(d["pan_s"], 100)
    assert masked.mask.any()
    for evaluate in (pi.evaluate_full, evaluate_full_tiled):
        with pytest.raises(InputError, match="pan: a masked array"):
            evaluate(d["fr_s"], d["ms_s"], masked, sensor="none", ratio=4, bits=11)
    with pytest.raises(InputError, match="a masked array"):
        pi.sam(d["gt"], np.ma.masked_greater(d["rr"], 1500))
    with pytest.raises(InputError, match="a masked array"):
        pi.q2n(np.ma.masked_greater(d["gt"], 1500), d["rr"])


def test_a_masked_array_with_nothing_masked_is_its_data():
    d = demo()
    plain = rr(d["rr"])
    assert values(rr(np.ma.masked_array(d["rr"]))) == values(plain)
    assert values(rr(np.ma.masked_array(d["rr"], mask=np.zeros(d["rr"].shape, bool)))) == values(plain)
    assert values(evaluate_reduced_tiled(np.ma.masked_array(d["rr"]), d["gt"], ratio=4, bits=11)) == pytest.approx(
        values(plain), rel=1e-9)


# ----------------------------------------------------------------------------- item 8: uint16 wrap-around


def _wrapped(fused: np.ndarray, dtype=np.uint16) -> np.ndarray:
    return np.round(fused).astype(np.int64).astype(dtype)  # what astype(uint16) of negatives does


@settings(max_examples=15, **HYPOTHESIS)
@given(undershoot=st.floats(30, 400), tiled=st.booleans())
def test_a_result_with_negatives_wrapped_around_is_refused(undershoot, tiled):
    d = demo()
    fused = d["rr"] - undershoot  # a network that undershoots 0 in dark areas
    assert fused.min() < 0
    with pytest.raises(ScaleError, match=r"negative values wrapped around .*astype\(np\.uint16\)"):
        rr(_wrapped(fused), tiled="always" if tiled else "never")
    with pytest.raises(ScaleError, match="wrapped around"):
        fr(_wrapped(d["fr_s"] - undershoot))
    with pytest.raises(ScaleError, match="wrapped around"):
        pi.ergas(d["gt"], _wrapped(fused), ratio=4)


def test_the_neighbours_of_a_wrap_around_get_numbers():
    d = demo()
    fused = d["rr"] - 60
    clipped = rr(np.clip(np.round(fused), 0, None).astype(np.uint16))
    as_float = rr(fused)  # undershoot kept as float: the toolbox's cast sets it to 0 itself
    assert 0 < clipped["Q2n"] < 1 and 0 < as_float["Q2n"] < 1
    # 16-bit data: a reference above 16384 DN makes high fused values legitimate
    gt16, fused16 = d["gt"] * 30, np.clip(d["rr"], 0, None) * 30
    assert gt16.max() > 2**15
    assert 0 < pi.evaluate_reduced(fused16.astype(np.uint16), gt16, ratio=4, bits=16)["Q2n"] < 1
    # a bright overshoot of a poor network, far below the uint16 top
    over = d["rr"].copy()
    over[::9, ::7] += 5000.0
    assert 0 < rr(over)["Q2n"] < 1


def test_pansharp_eval_refuses_a_wrapped_result_in_memory_and_tile_wise(tmp_path, capsys):
    d = demo()
    data, method = rr_dataset(tmp_path, {"s.npy": _wrapped(d["rr"] - 80)})
    for mode in ("never", "always"):
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / mode, "--tiled", mode)
        assert code == 1 and "wrapped around" in pairs[("s", "m")]["reason"], pairs

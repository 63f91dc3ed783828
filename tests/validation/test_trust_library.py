"""The library refuses inputs that would give a silently wrong number (issue 12), every entry point.

Each case is a mistake seen in practice; each test asserts a refusal whose message names the input
and the fix, never a number. The bundled real scene (11-bit, 4 bands) stands for the data.
"""

from __future__ import annotations

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import gsa
from pansharp_iqa.demo_data import load_demo
from pansharp_iqa.tiled import evaluate_full_tiled, evaluate_reduced_tiled
from pansharp_iqa.validation import LayoutError, ScaleError, SensorMismatchError, SettingError, ShapeError


@pytest.fixture(scope="module")
def scene():
    ms, pan = load_demo()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "none", ratio=4)
    return {
        "ms": ms, "pan": pan,  # full resolution (DN)
        "fr_fused": gsa(ms, pan, ratio=4),
        "gt": ms.astype(np.float64),  # reduced resolution: the original MS is the reference
        "rr_fused": gsa(ms_lr, pan_lr, ratio=4),
    }


def _rr(fused, scene, **kw):
    return pi.evaluate_reduced(fused, scene["gt"], ratio=4, bits=11, **kw)


def _fr(fused, scene, **kw):
    return pi.evaluate_full(fused, scene["ms"], scene["pan"], sensor="none", ratio=4, bits=11, **kw)


# ----------------------------------------------------------------------------- item 2: scales


@pytest.mark.parametrize("factor, hint", [(2047.0, "close to 2**11 - 1"), (1 / 2047, "close to 2**11 - 1"),
                                          (1 / 8, "multiply it by about 8"), (255 / 2047, "(2**11 - 1)/(2**8 - 1)")])
def test_reduced_resolution_refuses_a_fused_image_on_another_scale(scene, factor, hint):
    fused = scene["rr_fused"] * factor
    for evaluate in (pi.evaluate_reduced, evaluate_reduced_tiled):
        with pytest.raises(ScaleError, match="fused is on another scale than reference") as err:
            evaluate(fused, scene["gt"], ratio=4, bits=11)
        assert hint in str(err.value)


@pytest.mark.parametrize("factor", [2047.0, 1 / 2047, 1 / 8])
def test_full_resolution_refuses_a_fused_image_on_another_scale(scene, factor):
    for evaluate in (pi.evaluate_full, evaluate_full_tiled):
        with pytest.raises(ScaleError, match="fused is on another scale than ms"):
            evaluate(scene["fr_fused"] * factor, scene["ms"], scene["pan"], sensor="none", ratio=4, bits=11)


def test_mixed_scales_between_pan_and_ms_are_refused(scene):
    with pytest.raises(ScaleError,
                       match=r"pan is on another scale than ms.*multiply it by about .*close to 2\*\*11 - 1"):
        _fr(scene["fr_fused"], {**scene, "pan": scene["pan"] / 2047.0})


@pytest.mark.parametrize("call", [
    lambda s: pi.ergas(s["gt"], s["rr_fused"] / 2047, ratio=4),
    lambda s: pi.q2n(s["gt"], s["rr_fused"] * 2047),
    lambda s: pi.q_index(s["gt"], s["rr_fused"] / 2047),
    lambda s: pi.sam(s["gt"], s["rr_fused"] * 2047),
    lambda s: pi.scc(s["gt"], s["rr_fused"] / 8),
    lambda s: pi.d_lambda(s["fr_fused"] / 2047, s["ms"], ratio=4),
    lambda s: pi.d_s(s["fr_fused"] * 2047, s["ms"], s["pan"], ratio=4),
    lambda s: pi.qnr(s["fr_fused"] / 2047, s["ms"], s["pan"], ratio=4),
    lambda s: pi.d_lambda_k(s["fr_fused"] / 8, s["ms"], sensor="none", ratio=4),
    lambda s: pi.hqnr(s["fr_fused"] * 2047, s["ms"], s["pan"], sensor="none", ratio=4),
    lambda s: pi.r_q2n(s["fr_fused"] / 2047, s["ms"], s["pan"], sensor="none", ratio=4),
    lambda s: pi.d_lambda_k_ms(s["fr_fused"] * 2047, s["ms"], s["pan"], sensor="none", ratio=4),
])
def test_every_index_function_refuses_mixed_scales(scene, call):
    with pytest.raises(ScaleError, match="on another scale"):
        call(scene)


def test_overshooting_fused_images_are_not_mistaken_for_a_scale_error(scene):
    # networks produce values above 2**bits - 1 and below 0: a wider range is not another scale
    rng = np.random.default_rng(0)
    fused = scene["rr_fused"] * 1.15 - 60 + rng.normal(0, 150, scene["rr_fused"].shape)
    fused[::7, ::5] += 3000.0  # bright overshoots, as a poorly trained network gives
    assert fused.max() > 2047 and fused.min() < 0
    assert 0 < _rr(fused, scene)["Q2n"] < 1
    fr = scene["fr_fused"] + rng.normal(0, 200, scene["fr_fused"].shape)
    assert fr.min() < 0
    assert 0 < _fr(fr, scene)["QNR"] < 1


def test_a_biased_or_flat_fused_image_still_gets_numbers(scene):
    # an offset moves the mean but not the spread, a flat image the spread but not the mean:
    # poor fusions, not scale mistakes
    assert _rr(scene["rr_fused"] + 500.0, scene)["ERGAS"] > 10
    flat = np.full_like(scene["rr_fused"], scene["gt"].mean())
    assert _rr(flat, scene)["Q"] < 0.1


# ----------------------------------------------------------------------------- item 5: layout


def test_channel_first_arrays_are_named_as_such(scene):
    cf = np.moveaxis(scene["rr_fused"], -1, 0)
    with pytest.raises(LayoutError, match=r"looks channel-first \(B, H, W\).*np.moveaxis\(fused, 0, -1\)"):
        _rr(cf, scene)
    with pytest.raises(LayoutError, match="reference: .*channel-first"):
        pi.evaluate_reduced(scene["rr_fused"], np.moveaxis(scene["gt"], -1, 0), ratio=4, bits=11)
    with pytest.raises(LayoutError, match="ms: .*channel-first"):
        pi.evaluate_full(scene["fr_fused"], np.moveaxis(scene["ms"], -1, 0), scene["pan"], sensor="none",
                         ratio=4, bits=11)
    with pytest.raises(LayoutError, match="pan: .*channel-first"):
        pi.evaluate_full(scene["fr_fused"], scene["ms"], scene["pan"][None], sensor="none", ratio=4, bits=11)
    with pytest.raises(LayoutError, match="channel-first"):
        evaluate_reduced_tiled(cf, np.moveaxis(scene["gt"], -1, 0), ratio=4, bits=11)
    with pytest.raises(LayoutError):
        pi.sam(np.moveaxis(scene["gt"], -1, 0), cf)


# ----------------------------------------------------------------------------- items 3, 6: sizes, ratios, signs


def test_one_ratio_rule(scene):
    # reduced resolution: the ratio only scales ERGAS, any integer >= 2 (library and CLI alike)
    e4 = _rr(scene["rr_fused"], scene)["ERGAS"]
    assert pi.evaluate_reduced(scene["rr_fused"], scene["gt"], ratio=2, bits=11)["ERGAS"] == pytest.approx(2 * e4)
    assert pi.evaluate_reduced(scene["rr_fused"], scene["gt"], ratio=3, bits=11)["ERGAS"] == pytest.approx(4 / 3 * e4)
    for bad in (1, 0, 2.5, True, None, "4.5"):  # "4" and 4.0 are 4 (the one integer rule)
        with pytest.raises(SettingError, match="ratio"):
            pi.evaluate_reduced(scene["rr_fused"], scene["gt"], ratio=bad, bits=11)
    # full resolution (23-tap EXP): a power of two, and it must fit the sizes
    with pytest.raises(SettingError, match="power of two"):
        pi.evaluate_full(scene["fr_fused"], scene["ms"], scene["pan"], sensor="none", ratio=3, bits=11)
    with pytest.raises(ShapeError, match=r"ratio=2 times the MS size.*the sizes say ratio 4"):
        pi.evaluate_full(scene["fr_fused"], scene["ms"], scene["pan"], sensor="none", ratio=2, bits=11)


def test_small_full_resolution_images_get_a_useful_message():
    rng = np.random.default_rng(0)
    ms = rng.integers(100, 2000, (4, 4, 4)).astype(float)
    pan = rng.integers(100, 2000, (16, 16)).astype(float)
    with pytest.raises(ShapeError, match="16x16 pixels is smaller than one 32x32 block") as err:
        pi.evaluate_full(pi.interp23tap(ms, 4), ms, pan, sensor="none", ratio=4, bits=11)
    assert "Crop to 0x0" not in str(err.value)


def test_offset_or_standardised_references_are_refused(scene):
    # issue 20: negatives beyond resampling undershoot (offset, mean-subtracted, z-scored data)
    gt = scene["gt"] - 600.0
    with pytest.raises(ScaleError, match="reference: minimum -599 .*an original product"):
        pi.evaluate_reduced(scene["rr_fused"] - 600.0, gt, ratio=4, bits=11)
    ms = scene["ms"].astype(np.float64)
    ms = (ms - ms.mean()) / ms.std()
    with pytest.raises(ScaleError, match="ms: minimum .* is negative beyond resampling undershoot"):
        pi.evaluate_full(pi.interp23tap(ms, 4), ms, scene["pan"] / scene["pan"].std(), sensor="none", ratio=4,
                         bits=11, scale_mismatch="warn")
    pan = scene["pan"].astype(np.float64) - 2000.0
    with pytest.raises(ScaleError, match="pan: minimum .* is negative"):
        pi.evaluate_full(scene["fr_fused"], scene["ms"], pan, sensor="none", ratio=4, bits=11)


def test_resampling_undershoot_and_rounding_are_not_offset_data(scene):
    gt = scene["gt"].copy()
    gt[5, 5, 1] = -3.0  # one pixel below 0 (Q2n's cast sets it to 0, as the toolbox does)
    assert 0 < pi.evaluate_reduced(scene["rr_fused"], gt, ratio=4, bits=11)["Q2n"] < 1
    pan = scene["pan"].astype(np.float64)
    pan[100:104, 200:204] = -40.0  # a bicubic undershoot next to a dark edge
    assert 0 < pi.evaluate_full(scene["fr_fused"], scene["ms"], pan, sensor="none", ratio=4, bits=11)["QNR"] < 1


def test_sensor_band_count_is_checked(scene):
    with pytest.raises(SensorMismatchError, match="WV2.*8 bands.*the image has 4"):
        pi.evaluate_full(scene["fr_fused"], scene["ms"], scene["pan"], sensor="WV2")
    with pytest.raises(SensorMismatchError):
        pi.wald_degrade(scene["ms"], scene["pan"], "WV3")


def test_every_refusal_is_an_input_error_and_a_value_error(scene):
    for exc in (ScaleError, LayoutError, ShapeError, SettingError, SensorMismatchError):
        assert issubclass(exc, pi.InputError) and issubclass(exc, ValueError)
    from pansharp_iqa.io.errors import DataError, DatasetConfigError

    assert issubclass(DataError, pi.InputError) and issubclass(DatasetConfigError, pi.InputError)


# ----------------------------------------------------------------------------- combinations

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SCALES = (2047.0, 1 / 2047, 255 / 2047, 8.0)  # [0, 1] vs DN both ways, 8-bit export, 3 bits too many
MISTAKES = ("scale", "channel_first", "wrong_ratio", "wrong_sensor", "nan", "offset_ref")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mistakes=st.sets(st.sampled_from(MISTAKES), min_size=1), factor=st.sampled_from(SCALES),
       resolution=st.sampled_from(["reduced", "full"]), tiled=st.booleans())
def test_any_combination_of_mistakes_is_refused_never_a_number(scene, mistakes, factor, resolution, tiled):
    fused = (scene["rr_fused"] if resolution == "reduced" else scene["fr_fused"]).astype(np.float64)
    ref = (scene["gt"] if resolution == "reduced" else scene["ms"]).astype(np.float64)
    ratio, sensor = 4, "none"
    if "scale" in mistakes:
        fused = fused * factor
    if "nan" in mistakes:
        fused[3, 4, 1] = np.nan
    if "offset_ref" in mistakes:
        ref = ref - 2 * ref.mean()  # mean-subtracted (and worse) data
    if "channel_first" in mistakes:
        fused = np.ascontiguousarray(np.moveaxis(fused, -1, 0))
    if "wrong_ratio" in mistakes:
        ratio = 8 if resolution == "full" else 1
    if "wrong_sensor" in mistakes:
        sensor = "WV2"  # 8 bands, the scene has 4
        if resolution == "reduced":
            mistakes = mistakes - {"wrong_sensor"}  # no sensor at reduced resolution
            if not mistakes:
                return
    with pytest.raises(pi.InputError) as err:
        if resolution == "reduced":
            (evaluate_reduced_tiled if tiled else pi.evaluate_reduced)(fused, ref, ratio=ratio, bits=11)
        else:
            (evaluate_full_tiled if tiled else pi.evaluate_full)(fused, ref, scene["pan"], sensor=sensor,
                                                                 ratio=ratio, bits=11)
    assert len(str(err.value)) > 30  # a sentence that says what and how, not a bare code


def test_a_broken_image_is_not_mistaken_for_a_scale_error(scene):
    # an untrained network: mean 10x off but spread 100x off -> not a clean scale factor, so the
    # (terrible) numbers are the truth about it
    rng = np.random.default_rng(1)
    broken = scene["rr_fused"] * 10 + rng.normal(0, 100 * scene["gt"].std(), scene["gt"].shape)
    assert _rr(broken, scene)["Q2n"] < 0.2


@pytest.mark.parametrize("row", [0, 40, 100, 143])
def test_nan_is_found_in_every_chunk_of_the_image(scene, row):
    # the min/max pass runs in row chunks: a NaN in a later chunk must not be lost when the
    # chunks' results are combined (Python's min() drops NaN)
    fused = scene["rr_fused"].copy()
    fused[row, 3, 2] = np.nan
    with pytest.raises(pi.InputError, match="non-finite"):
        _rr(fused, scene)
    gt = scene["gt"].copy()
    gt[row, 3, 2] = np.inf
    with pytest.raises(pi.InputError, match="non-finite"):
        pi.evaluate_reduced(scene["rr_fused"], gt, ratio=4, bits=11)

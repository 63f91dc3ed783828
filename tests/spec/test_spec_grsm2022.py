"""GRSM 2022 full-resolution indexes (RQNR, D_s_R, LSR, D_lambda_F, HQNR and QNR maps) against the
authors' MATLAB code run under GNU Octave (tests/spec/data/grsm2022: FACTS.md, make_fixture.py).

Scalars must agree to 1e-9 (relative), maps value by value to 1e-9. Synthetic cases carry their inputs
in the fixture; the real crops are rebuilt from ../shared/data (skipped without it) and their SHA-256
checked against the generator's.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import grsm2022_inputs as G
from pansharp_iqa import d_lambda, d_lambda_k, d_s, hqnr, imresize, interp23tap
from pansharp_iqa.indexes import regression as R
from pansharp_iqa.sensors import resolve_sensor
from pansharp_iqa.validation import SettingError, ShapeError
from spec_helpers import load_mat, rel_close

FIXTURE = Path(__file__).resolve().parent / "data" / "grsm2022" / "grsm2022.npz"
TOL = 1e-9
CASES = [(c, f) for c in (*G.SYNTHETIC, *G.REAL_SCENES) for f in G.FUSIONS]


@functools.lru_cache(maxsize=1)
def _fixture() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


@functools.cache
def _inputs(case: str) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    fx = _fixture()
    if case in G.SYNTHETIC:
        return fx[f"{case}_ms"], fx[f"{case}_pan"], {f: fx[f"{case}_{f}"] for f in G.FUSIONS}
    name, _, crop = G.REAL_SCENES[case]
    ms, pan = G.real_pair(load_mat(name), crop)
    for what, arr in (("ms", ms), ("pan", pan)):
        assert G.sha256_array(arr) == str(fx[f"{case}_{what}_sha256"]), f"{case} {what}: not the generator's crop"
    fused = G.fused_images(ms, pan)
    for f, img in fused.items():
        assert G.sha256_array(img) == str(fx[f"{case}_{f}_sha256"]), f"{case} {f}: not the generator's input"
    return ms, pan, fused


@functools.cache
def _computed(case: str, fusion: str) -> dict[str, object]:
    """Everything the library computes for one case (once per case and fusion)."""
    fx = _fixture()
    ms, pan, fused = _inputs(case)
    sensor = str(fx[f"{case}_sensor"])
    exp, img = fused["exp"], fused[fusion]
    gnyq = resolve_sensor(sensor).gnyq_for(ms.shape[2])
    out: dict[str, object] = {}
    out["dl_f"], out["dl_f_block"] = R.d_lambda_f(img, exp, gnyq=gnyq, ratio=G.RATIO, return_map=True)
    out["ds_r"], out["ds_r_map"] = R.d_s_r(img, pan, return_map=True)
    out["lsr"] = R.lsr(img, pan)
    low_pan = interp23tap(imresize(pan, 1.0 / G.RATIO), G.RATIO)
    out["dl_q_block"], out["ds_q_block"] = R.qnr_block_maps(img, exp, pan, low_pan=low_pan)
    common = {"ratio": G.RATIO, "ms_exp": exp}
    out["d_lambda_k"] = d_lambda_k(img, ms, sensor=sensor, **common)
    out["dl_q"] = d_lambda(img, ms, **common)
    out["ds_q"] = d_s(img, ms, pan, **common)
    out["hqnr"] = hqnr(img, ms, pan, sensor=sensor, **common)
    out["rqnr"], out["rqnr_map"] = R.rqnr(img, exp, pan, gnyq=gnyq, ratio=G.RATIO, return_map=True)
    out["rqnr_ab"] = R.rqnr(img, exp, pan, gnyq=gnyq, ratio=G.RATIO, alpha=float(fx["alpha_rqnr"]),
                            beta=float(fx["beta_rqnr"]))
    return out


def _maps_close(got, expected, what):
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL, err_msg=what)


@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_d_lambda_f_is_khan_with_its_block_map(case, fusion):
    fx, out, key = _fixture(), _computed(case, fusion), f"{case}_{fusion}_"
    rel_close(out["dl_f"], fx[key + "dl_f"], TOL, what=f"{key}D_lambda_F")
    _maps_close(out["dl_f_block"], fx[key + "dl_f_block"], f"{key}D_lambda_F block map")
    # the code's D_lambda_F is the 2020 toolbox's D_lambda_K, and the library's d_lambda_k is it too
    assert float(fx[key + "dl_f"]) == float(fx[key + "d_lambda_k"])
    rel_close(out["d_lambda_k"], fx[key + "d_lambda_k"], TOL, what=f"{key}d_lambda_k")


@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_d_s_r_and_lsr(case, fusion):
    fx, out, key = _fixture(), _computed(case, fusion), f"{case}_{fusion}_"
    rel_close(out["ds_r"], fx[key + "ds_r"], TOL, what=f"{key}D_s_R")
    _maps_close(out["ds_r_map"], fx[key + "ds_r_map"], f"{key}D_s_R map")
    r = out["lsr"]
    np.testing.assert_allclose(r.weights, fx[key + "lsr_w"], rtol=TOL, err_msg=f"{key}LSR weights")
    rel_close(r.residual_rms, fx[key + "lsr_res"], TOL, what=f"{key}LSR residual")
    rel_close(r.cd, fx[key + "lsr_cd"], TOL, what=f"{key}LSR cd")
    rel_close(r.var_pan, fx[key + "lsr_var_pan"], TOL, what=f"{key}LSR var(PAN)")
    _maps_close(1.0 - r.cd_map, fx[key + "ds_r_map"], f"{key}LSR cd map")


@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_qnr_block_maps_and_scalars(case, fusion):
    fx, out, key = _fixture(), _computed(case, fusion), f"{case}_{fusion}_"
    _maps_close(out["dl_q_block"], fx[key + "dl_q_block"], f"{key}D_lambda block map")
    _maps_close(out["ds_q_block"], fx[key + "ds_q_block"], f"{key}D_s block map")
    # the map versions' scalars are the 2020 toolbox's D_lambda and D_s (EXP fused: D_lambda = 0)
    rel_close(out["dl_q"], fx[key + "dl_q"], TOL, atol=1e-14, what=f"{key}D_lambda")
    rel_close(out["ds_q"], fx[key + "ds_q"], TOL, what=f"{key}D_s")


@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_rqnr_and_hqnr_scalars(case, fusion):
    fx, out, key = _fixture(), _computed(case, fusion), f"{case}_{fusion}_"
    rel_close(out["rqnr"], fx[key + "rqnr"], TOL, what=f"{key}RQNR")
    rel_close(out["rqnr_ab"], fx[key + "rqnr_ab"], TOL, what=f"{key}RQNR (overall exponents)")
    rel_close(out["hqnr"], fx[key + "hqnr"], TOL, what=f"{key}HQNR")
    ab = R.qnr_like(out["d_lambda_k"], out["ds_q"], alpha=float(fx["alpha_hqnr"]), beta=float(fx["beta_hqnr"]))
    rel_close(ab, fx[key + "hqnr_ab"], TOL, what=f"{key}HQNR (overall exponents)")


@pytest.mark.parametrize("case", [*G.SYNTHETIC, *G.REAL_SCENES])
def test_maps_on_the_pan_grid(case):
    fx, out, key = _fixture(), _computed(case, "gsa"), f"{case}_gsa_"
    _maps_close(out["rqnr_map"], fx[key + "rqnr_map"], f"{key}RQNR map")
    _maps_close(R.to_pan_grid(out["dl_f_block"]), fx[key + "dl_f_map_pan"], f"{key}D_lambda_F map, PAN grid")
    _maps_close(R.to_pan_grid(out["ds_q_block"]), fx[key + "ds_q_map_pan"], f"{key}D_s map, PAN grid")
    _maps_close(R.hqnr_map(out["dl_f_block"], out["ds_q_block"]), fx[key + "hqnr_map"], f"{key}HQNR map")
    if case in G.SYNTHETIC:
        a, b = float(fx["alpha_rqnr"]), float(fx["beta_rqnr"])
        got = R.rqnr_map(out["dl_f_block"], out["ds_r_map"], alpha=a, beta=b)
        _maps_close(got, fx[key + "rqnr_ab_map"], f"{key}RQNR map (overall exponents)")
        a, b = float(fx["alpha_hqnr"]), float(fx["beta_hqnr"])
        got = R.hqnr_map(out["dl_f_block"], out["ds_q_block"], alpha=a, beta=b)
        _maps_close(got, fx[key + "hqnr_ab_map"], f"{key}HQNR map (overall exponents)")


def test_the_resized_maps_are_not_clipped():
    # cubic overshoot: the code keeps values outside the block map's range (a fact the library keeps)
    fx = _fixture()
    block, pan_grid = fx["syn4_gsa_dl_f_block"], fx["syn4_gsa_dl_f_map_pan"]
    assert pan_grid.min() < block.min() or pan_grid.max() > block.max()


@pytest.mark.parametrize("case", list(G.SYNTHETIC))
def test_synthetic_inputs_rebuild(case):
    fx = _fixture()
    sensor, shape, seed = G.SYNTHETIC[case]
    ms, pan = G.synthetic_pair(shape, seed)
    assert G.sha256_array(ms) == str(fx[f"{case}_ms_sha256"]) and np.array_equal(ms, fx[f"{case}_ms"])
    assert G.sha256_array(pan) == str(fx[f"{case}_pan_sha256"]) and np.array_equal(pan, fx[f"{case}_pan"])
    for f in G.FUSIONS:
        assert G.sha256_array(fx[f"{case}_{f}"]) == str(fx[f"{case}_{f}_sha256"])


# --------------------------------------------------------------------------- hand-checked facts


def test_local_variance_is_the_two_pass_window_variance():
    rng = np.random.default_rng(5)
    # a large offset and tiny spread: the one-pass formula alone would lose ~1e-6 here
    x = 1e6 + rng.normal(0.0, 1e-3, (40, 37))
    x[5:30, 5:30] = 1234.5  # a constant patch: variance exactly 0 inside
    got = R.local_variance(x, size=7)
    padded = np.pad(x, 3, mode="symmetric")
    want = np.lib.stride_tricks.sliding_window_view(padded, (7, 7)).reshape(40, 37, 49).var(axis=2, ddof=1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert np.all(got[8:27, 8:27] == 0.0)


def test_lsr_map_is_nan_where_both_local_variances_vanish():
    # PAN flat over a window and exactly fitted by the bands: 0/0, kept as NaN by the code's clipping
    pan = np.full((64, 64), 500.0)
    pan[:, 40:] += np.arange(24.0)
    fused = np.stack([pan, 2.0 * pan], axis=2)
    r = R.lsr(fused, pan)
    assert np.isnan(r.cd_map[10, 10]) and r.cd_map[10, 60] == 1.0
    rel_close(r.cd, 1.0, 1e-12, what="exact fit")


def test_d_s_r_scalar_is_variance_ratio_not_map_mean():
    rng = np.random.default_rng(3)
    fused = rng.uniform(200, 900, (64, 64, 3))
    pan = fused @ np.array([0.2, 0.5, 0.3]) + 40.0 + rng.normal(0, 15, (64, 64))
    value, dmap = R.d_s_r(fused, pan, return_map=True)
    w = np.linalg.lstsq(fused.reshape(-1, 3), pan.ravel(), rcond=None)[0]
    e = pan - fused @ w
    rel_close(value, np.var(e, ddof=1) / np.var(pan, ddof=1), 1e-12, what="D_s_R = var(e)/var(P)")
    assert abs(value - float(dmap.mean())) > 1e-6


def test_refusals():
    x = np.ones((48, 64, 4))
    with pytest.raises(ShapeError):
        R.d_lambda_f(x, x, gnyq=(0.3,) * 4, ratio=4)  # 48 rows: not a multiple of 32
    with pytest.raises(ShapeError):
        R.d_lambda_f(x[:32], x[:32], gnyq=(0.3,) * 3, ratio=4)
    with pytest.raises(SettingError):
        R.local_variance(np.ones((8, 8)), size=4)
    with pytest.raises(ShapeError):
        R.rqnr_map(np.zeros((2, 2)), np.zeros((64, 32)))

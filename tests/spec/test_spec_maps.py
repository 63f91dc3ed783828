"""The GRSM 2022 indexes and every quality map through the library's one path (``evaluate``), in memory and
tile by tile, against the reference code run under GNU Octave.

* Full resolution (``data/grsm2022``: the authors' MATLAB code): D_lambda_F, D_s_R, RQNR and HQNR
  (``grsm2022``; unitary and "overall" exponents), and their maps: D_lambda_F's block map, D_s_R's,
  RQNR's and HQNR's on the PAN grid; QNR's D_lambda and D_s block maps (``toolbox2020``). The EXP of
  the fixture is given (``ms_exp``, read window by window tile-wise).
* Reduced resolution (``data/octave_fixtures.npz``: the 2020 toolbox's ``q2n.m`` and ``SAM.m``): the Q2n
  block map and the SAM map (radians, pi/2 where a norm is 0), under ``pancollection`` (no border cut,
  so the maps cover the whole stored images).

Scalars 1e-9 relative, maps value by value 1e-9 absolute (NaN where the reference has NaN). Tile-wise
runs use 32-pixel tiles, so every image is split (asserted).
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import grsm2022_inputs as G
import pansharp_iqa as pi
from spec_helpers import load_mat, rel_close

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "data" / "grsm2022" / "grsm2022.npz"
TOOLBOX = HERE / "data" / "octave_fixtures.npz"
TOL = 1e-9
CASES = [(c, f) for c in (*G.SYNTHETIC, *G.REAL_SCENES) for f in G.FUSIONS]
MODES = ("in-memory", "tile-wise")
#: Fixture key of each scalar and each map, by index.
SCALARS = {"D_lambda_F": "dl_f", "D_s_R": "ds_r", "RQNR": "rqnr", "HQNR": "hqnr"}
MAPS = {"D_lambda_F": "dl_f_block", "D_s_R": "ds_r_map", "RQNR": "rqnr_map", "HQNR": "hqnr_map"}


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
    fused = G.fused_images(ms, pan)
    for what, arr in (("ms", ms), ("pan", pan), *fused.items()):
        assert G.sha256_array(arr) == str(fx[f"{case}_{what}_sha256"]), f"{case} {what}: not the generator's input"
    return ms, pan, fused


@functools.cache
def _evaluated(case: str, fusion: str, mode: str, protocol: str = "grsm2022", exponents: str = "unitary",
               indexes: tuple[str, ...] | None = None) -> dict:
    ms, pan, fused = _inputs(case)
    settings = pi.full_settings(sensor=str(_fixture()[f"{case}_sensor"]), ratio=G.RATIO, protocol=protocol,
                                upsampled="given", exponents=exponents, indexes=indexes)
    inputs = {"fused": fused[fusion], "ms": ms, "pan": pan, "ms_exp": fused["exp"]}
    result = pi.evaluate(inputs, settings, maps=True, tiled="always" if mode == "tile-wise" else "never", tile_size=32)
    if mode == "tile-wise":
        assert result["protocol"]["tiling"]["n_tiles"] > 1
    return result


def _map_close(got: np.ndarray, expected: np.ndarray, what: str) -> None:
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert np.array_equal(np.isnan(got), np.isnan(expected)), f"{what}: NaN elsewhere than the reference's"
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL, err_msg=what)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_grsm2022_scalars(case, fusion, mode):
    fx, r, key = _fixture(), _evaluated(case, fusion, mode), f"{case}_{fusion}_"
    assert [k for k in r if k not in ("protocol", "maps")] == ["HQNR", "D_lambda_F", "D_s_R", "RQNR"]
    for name, k in SCALARS.items():
        rel_close(r[name], fx[key + k], TOL, what=f"{key}{name} ({mode})")
    # the overall exponents of the code's get_alpha_beta (alpha, beta of RQNR and HQNR in the fixture)
    ab = _evaluated(case, fusion, mode, exponents="overall")
    assert ab["protocol"]["exponents"] == {"case": "overall", "HQNR": [float(fx["alpha_hqnr"]), float(fx["beta_hqnr"])],
                                           "RQNR": [float(fx["alpha_rqnr"]), float(fx["beta_rqnr"])]}
    rel_close(ab["RQNR"], fx[key + "rqnr_ab"], TOL, what=f"{key}RQNR overall ({mode})")
    rel_close(ab["HQNR"], fx[key + "hqnr_ab"], TOL, what=f"{key}HQNR overall ({mode})")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_grsm2022_maps(case, fusion, mode):
    fx, r, key = _fixture(), _evaluated(case, fusion, mode), f"{case}_{fusion}_"
    assert sorted(r["maps"]) == sorted(MAPS)
    block, pan_grid = (32, (0, 0)), (1, (0, 0))
    for name, k in MAPS.items():
        if key + k in fx:  # the block map and D_s_R's for every case; RQNR's and HQNR's for GSA
            _map_close(r["maps"][name], fx[key + k], f"{key}{name} map ({mode})")
        card = r["protocol"]["maps"][name]
        step = 32 if name == "D_lambda_F" else 1
        assert card["shape"] == list(r["maps"][name].shape) and (step, (0, 0)) in (block, pan_grid)
        assert card["grid"].startswith(f"one value per {step} x {step} pixels" if step > 1 else "one value per pixel")
    if case in G.SYNTHETIC and fusion == "gsa":
        ab = _evaluated(case, fusion, mode, exponents="overall")
        _map_close(ab["maps"]["RQNR"], fx[key + "rqnr_ab_map"], f"{key}RQNR map, overall exponents ({mode})")
        _map_close(ab["maps"]["HQNR"], fx[key + "hqnr_ab_map"], f"{key}HQNR map, overall exponents ({mode})")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_qnr_block_maps_and_d_lambda_k(case, fusion, mode):
    fx, key = _fixture(), f"{case}_{fusion}_"
    r = _evaluated(case, fusion, mode, protocol="toolbox2020")
    assert sorted(r["maps"]) == ["D_lambda", "D_lambda_K", "D_s", "HQNR"]  # QNR has no map (not established)
    _map_close(r["maps"]["D_lambda"], fx[key + "dl_q_block"], f"{key}D_lambda block map ({mode})")
    _map_close(r["maps"]["D_s"], fx[key + "ds_q_block"], f"{key}D_s block map ({mode})")
    _map_close(r["maps"]["D_lambda_K"], fx[key + "dl_f_block"], f"{key}D_lambda_K block map ({mode})")
    rel_close(r["D_lambda_K"], fx[key + "d_lambda_k"], TOL, what=f"{key}D_lambda_K ({mode})")
    if key + "hqnr_map" in fx:
        _map_close(r["maps"]["HQNR"], fx[key + "hqnr_map"], f"{key}HQNR map, toolbox2020 ({mode})")


def test_the_new_indexes_are_extras_of_toolbox2020():
    fx = _fixture()
    ms, pan, fused = _inputs("syn3")
    r = pi.evaluate_full(fused["gsa"], ms, pan, sensor="none", ratio=4, ms_exp=fused["exp"],
                         indexes=["default", "rqnr", "d_s_r", "D_LAMBDA_F"])
    assert list(r)[-4:] == ["RQNR", "D_s_R", "D_lambda_F", "protocol"]
    rel_close(r["RQNR"], fx["syn3_gsa_rqnr"], TOL, what="RQNR as a toolbox2020 extra")
    rel_close(r["D_s_R"], fx["syn3_gsa_ds_r"], TOL, what="D_s_R as a toolbox2020 extra")
    assert r["D_lambda_F"] == r["D_lambda_K"]


# ------------------------------------------------------------------------------ reduced resolution

#: Cases of the toolbox fixture with both maps (b1: one band; zero_norm: pixels of zero norm; frac: fractional DN).
RR_CASES = ("b1", "b2", "b5", "b8", "b9", "b10", "zero_norm", "frac")


@functools.lru_cache(maxsize=1)
def _toolbox() -> dict[str, np.ndarray]:
    with np.load(TOOLBOX) as data:
        return {k: data[k] for k in data.files}


def _rr(case: str, mode: str) -> tuple[dict, dict[str, np.ndarray]]:
    fx = _toolbox()
    gt, fu = (fx[f"{case}__{k}"].astype(np.float64) for k in ("gt", "fu"))
    if gt.ndim == 2:
        gt, fu = gt[:, :, None], fu[:, :, None]
    settings = pi.reduced_settings(ratio=4, bits=11, protocol="pancollection", indexes=["Q2n", "SAM"])
    r = pi.evaluate({"fused": fu, "reference": gt}, settings, maps=True, tiled="always" if mode == "tile-wise"
                    else "never", tile_size=32)
    return r, {k: fx[f"{case}__{k}"] for k in ("q2n", "q2n_map", "sam", "sam_map")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", RR_CASES)
def test_q2n_and_sam_maps_as_the_toolbox_returns_them(case, mode):
    r, tb = _rr(case, mode)
    if mode == "tile-wise" and case != "b5":  # b5 is 32 x 32: one tile
        assert r["protocol"]["tiling"]["n_tiles"] > 1
    rel_close(r["Q2n"], float(tb["q2n"].ravel()[0]), TOL, what=f"{case} Q2n ({mode})")
    _map_close(r["maps"]["Q2n"], tb["q2n_map"], f"{case} Q2n block map ({mode})")
    _map_close(r["maps"]["SAM"], tb["sam_map"], f"{case} SAM map, radians ({mode})")
    assert r["protocol"]["maps"]["SAM"]["unit"] == "radians"
    if case == "zero_norm":  # SAM.m divides by eps where |x||y| = 0: acos(0) = pi/2 on its map
        assert np.any(r["maps"]["SAM"] == np.pi / 2)


def test_maps_of_the_border_cut_region():
    # toolbox2020 cuts 20/21 pixels: the maps cover the evaluated region and say where it starts
    fx = _toolbox()
    gt, fu = (fx[f"odd__{k}"].astype(np.float64) for k in ("gt", "fu"))
    r = pi.evaluate_reduced(fu, gt, ratio=4, bits=11, maps=True, tiled="never", indexes=["Q2n", "SAM"])
    cut_gt, cut_fu = gt[20:-21, 20:-21], fu[20:-21, 20:-21]
    _map_close(r["maps"]["Q2n"], pi.q2n(cut_gt, cut_fu, return_map=True)[1], "odd Q2n map after the cut")
    assert r["maps"]["SAM"].shape == cut_gt.shape[:2]
    assert r["protocol"]["maps"]["Q2n"]["grid"] == "one value per 32 x 32 pixels from pixel (20, 20) of the input"

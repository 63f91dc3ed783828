"""Tile-wise results equal the in-memory ones for every index under every protocol."""

from __future__ import annotations

import numpy as np
import pytest

from pansharp_iqa import ConstantBlockError, InputError, evaluate_full, evaluate_reduced
from pansharp_iqa.tiled import evaluate_full_tiled, evaluate_reduced_tiled

from .conftest import make_scene, rel_diff

TOL = 1e-9
RR_PROTOCOLS = ["toolbox2020", "toolbox2015", "qnr-paper"]
FR_PROTOCOLS = ["toolbox2020", "toolbox2015", "qnr-paper"]


def assert_same(tiled: dict, memory: dict, *, tol: float = TOL) -> dict[str, float]:
    assert set(tiled) == set(memory)
    diffs = {}
    for key, value in memory.items():
        if key == "protocol":
            continue
        assert isinstance(tiled[key], float)
        diffs[key] = rel_diff(tiled[key], value)
        assert diffs[key] <= tol, (key, tiled[key], value)
    card = dict(tiled["protocol"])
    tiling = card.pop("tiling")
    assert card == memory["protocol"]
    assert tiling["n_tiles"] >= 1 and tiling["tile_size"] % 32 == 0
    return diffs


@pytest.mark.parametrize("protocol", RR_PROTOCOLS)
def test_reduced_geotiff_1024(big_scene, big_tifs, protocol):
    pytest.importorskip("rasterio")
    memory = evaluate_reduced(big_scene["fused"], big_scene["gt"], ratio=4, bits=11, protocol=protocol)
    tiled = evaluate_reduced_tiled(big_tifs["fused"], big_tifs["gt"], ratio=4, bits=11, protocol=protocol,
                                   tile_size=256)
    assert_same(tiled, memory)
    assert tiled["protocol"]["tiling"]["n_tiles"] == 16  # 983 x 983 evaluated pixels in 256-pixel tiles


@pytest.mark.parametrize("protocol", RR_PROTOCOLS)
@pytest.mark.parametrize("tile_size", [256, 96])
def test_reduced_odd_size(odd_scene, protocol, tile_size):
    # 1000 x 936 -> 959 x 895 evaluated: neither a multiple of the tile nor of the 32-pixel block,
    # so the last tiles hold Q2n's mirrored partial blocks and a partial window range of Q
    memory = evaluate_reduced(odd_scene["fused"], odd_scene["gt"], ratio=4, bits=11, protocol=protocol)
    tiled = evaluate_reduced_tiled(odd_scene["fused"], odd_scene["gt"], ratio=4, bits=11, protocol=protocol,
                                   tile_size=tile_size)
    assert_same(tiled, memory)


def test_reduced_last_block_mirror_reaches_previous_block():
    # evaluated size 32k + 5: the mirrored rows of the last partial block come from the block above,
    # which belongs to another tile when tiles are 32 pixels
    s = make_scene(3, 32 * 4 + 5 + 41, 32 * 3 + 9 + 41)
    memory = evaluate_reduced(s["fused"], s["gt"], ratio=4, bits=11)
    tiled = evaluate_reduced_tiled(s["fused"], s["gt"], ratio=4, bits=11, tile_size=32)
    assert_same(tiled, memory)


def test_reduced_threshold_and_scale():
    s = make_scene(5, 300, 260)
    fused = s["fused"].astype(np.float64) / 2047.0 * 1.05  # some values above 1 -> threshold matters
    gt = s["gt"].astype(np.float64) / 2047.0
    kw = dict(ratio=4, bits=11, scale=2047.0, threshold=True)
    assert_same(evaluate_reduced_tiled(fused, gt, tile_size=64, **kw), evaluate_reduced(fused, gt, **kw))


@pytest.mark.parametrize("protocol", FR_PROTOCOLS)
def test_full_geotiff_1024(big_scene, big_tifs, protocol):
    pytest.importorskip("rasterio")
    s = big_scene
    memory = evaluate_full(s["fused"], s["ms"], s["pan"], sensor="WV3", protocol=protocol)
    tiled = evaluate_full_tiled(big_tifs["fused"], big_tifs["ms"], big_tifs["pan"], sensor="WV3", protocol=protocol,
                                tile_size=256)
    assert_same(tiled, memory)


@pytest.mark.parametrize("protocol", FR_PROTOCOLS)
def test_full_non_square_uneven_tiles(protocol):
    # 480 x 352 with 160-pixel tiles: 3 x 3 tiles, the last column 32 wide; ratio 4
    s = make_scene(9, 480, 352)
    memory = evaluate_full(s["fused"], s["ms"], s["pan"], sensor="WV3", protocol=protocol)
    tiled = evaluate_full_tiled(s["fused"], s["ms"], s["pan"], sensor="WV3", protocol=protocol, tile_size=160)
    assert_same(tiled, memory)
    assert tiled["protocol"]["tiling"]["n_tiles"] == 9


@pytest.mark.parametrize("ratio", [2, 8])
def test_full_other_ratios_tiny_tiles(ratio):
    # tiles smaller than the EXP halo: the wrapped low-resolution window repeats samples
    s = make_scene(13, 256, 192, bands=4, ratio=ratio)
    kw = dict(sensor="none", ratio=ratio, bits=11)
    memory = evaluate_full(s["fused"], s["ms"], s["pan"], **kw)
    tiled = evaluate_full_tiled(s["fused"], s["ms"], s["pan"], tile_size=32, **kw)
    assert_same(tiled, memory)


def test_full_threshold_float_scale():
    s = make_scene(17, 192, 160, bands=4)
    f = s["fused"] / 2047.0 * 1.05
    kw = dict(sensor="QB", scale=2047.0, threshold=True)
    assert_same(evaluate_full_tiled(f, s["ms"] / 2047.0, s["pan"] / 2047.0, tile_size=64, **kw),
                evaluate_full(f, s["ms"] / 2047.0, s["pan"] / 2047.0, **kw))


def _flat_scene():
    s = make_scene(19, 256, 256, bands=4)
    for k, r in (("fused", 1), ("pan", 1), ("ms", 4)):
        s[k] = s[k].copy()
        s[k][: 64 // r, : 64 // r] = 1000  # constant blocks: UIQI 0/0
    return s


@pytest.mark.parametrize("policy", ["omit", "propagate"])
def test_full_nan_policies(policy):
    s = _flat_scene()
    kw = dict(sensor="QB", nan_policy=policy)
    memory = evaluate_full(s["fused"], s["ms"], s["pan"], **kw)
    tiled = evaluate_full_tiled(s["fused"], s["ms"], s["pan"], tile_size=96, **kw)
    if policy == "propagate":
        assert np.isnan(memory["D_lambda"]) and np.isnan(tiled["D_lambda"])
        assert np.isnan(tiled["QNR"])
    else:
        assert_same(tiled, memory)


def test_full_constant_blocks_raise_with_scene_counts():
    s = _flat_scene()
    with pytest.raises(ConstantBlockError) as memory:
        evaluate_full(s["fused"], s["ms"], s["pan"], sensor="QB")
    with pytest.raises(ConstantBlockError) as tiled:
        evaluate_full_tiled(s["fused"], s["ms"], s["pan"], sensor="QB", tile_size=64)
    assert str(tiled.value) == str(memory.value)


def test_same_input_errors_as_in_memory():
    s = make_scene(23, 200, 200, bands=4)
    f01, g01 = s["fused"] / 2047.0, s["gt"] / 2047.0
    for fn in (evaluate_reduced, evaluate_reduced_tiled):
        with pytest.raises(InputError, match="float data within"):
            fn(f01, g01, ratio=4, bits=11)
        with pytest.raises(InputError, match="exceeds the 10-bit range"):
            fn(s["fused"], s["gt"], ratio=4, bits=10)
        with pytest.raises(InputError, match="less than one 32x32 block"):
            fn(s["fused"][:60], s["gt"][:60], ratio=4, bits=11)
    bad = s["fused"].astype(np.float64)
    bad[150, 150, 1] = np.nan
    with pytest.raises(InputError, match="non-finite"):
        evaluate_reduced_tiled(bad, s["gt"], ratio=4, bits=11, tile_size=64)
    for fn in (evaluate_reduced, evaluate_reduced_tiled):
        with pytest.raises(InputError, match="expected a 3-D"):
            fn(s["fused"][:, :, 0], s["gt"][:, :, 0], ratio=4, bits=11)
    with pytest.raises(InputError, match="not a multiple of the block size"):
        evaluate_full_tiled(s["fused"][:200, :200], s["ms"][:50, :50], s["pan"][:200, :200], sensor="QB")

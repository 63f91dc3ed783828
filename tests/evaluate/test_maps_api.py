"""The quality-map API of the one path: which maps come back, where they go (``maps_to``), how tile-wise runs
stream them, and the one-line refusals. The values themselves are checked against the reference code in
``tests/spec/test_spec_maps.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.quality_maps import ArrayMaps, GeoTiffMaps, MapInfo
from pansharp_iqa.validation import SettingError


@pytest.fixture(scope="module")
def fr():
    from pansharp_iqa.demo_data import load_demo

    ms, pan = load_demo()  # 144 x 144 x 4 MS, 576 x 576 PAN
    ms, pan = ms[:32, :32], pan[:128, :128]
    fused = pi.interp23tap(ms, 4) + np.random.default_rng(0).normal(0, 15, (128, 128, 4))
    return fused, ms, pan


class Recording(ArrayMaps):
    """An ArrayMaps that also records the window of every write."""

    def __init__(self) -> None:
        super().__init__()
        self.windows: list[tuple[str, tuple[int, int], tuple[int, int]]] = []

    def write(self, index, rows, cols, values):
        self.windows.append((index, rows, cols))
        super().write(index, rows, cols, values)


def test_only_the_requested_indexes_get_maps(fr):
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, indexes=["RQNR"], maps=True, tiled="never")
    assert list(r["maps"]) == ["RQNR"] and list(r["protocol"]["maps"]) == ["RQNR"]
    assert r["maps"]["RQNR"].shape == (128, 128)
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, tiled="never")
    assert "maps" not in r and "maps" not in r["protocol"]


def test_tile_wise_maps_are_streamed_window_by_window_and_equal_the_in_memory_ones(fr):
    names = ["default", "D_s_R", "RQNR"]
    settings = pi.full_settings(sensor="none", ratio=4, indexes=names)
    inputs = dict(zip(("fused", "ms", "pan"), fr, strict=True))
    sink = Recording()
    tiled = pi.evaluate(inputs, settings, tiled="always", tile_size=32, maps_to=sink)
    whole = pi.evaluate(inputs, settings, tiled="never", maps=True)
    assert tiled["protocol"]["tiling"]["n_tiles"] == 16
    for name in ("HQNR", "D_s_R", "RQNR"):  # PAN-grid maps: only tile-sized windows were ever written
        sizes = {(r[1] - r[0], c[1] - c[0]) for n, r, c in sink.windows if n == name}
        assert sizes == {(32, 32)}
    for name, values in whole["maps"].items():
        np.testing.assert_allclose(tiled["maps"][name], values, rtol=0, atol=1e-12, err_msg=name)
    assert tiled["protocol"]["maps"] == whole["protocol"]["maps"]
    for name in [k for k in whole if k not in ("protocol", "maps")]:
        assert tiled[name] == pytest.approx(whole[name], rel=1e-12), name


def test_maps_to_a_folder_writes_one_geotiff_per_map(tmp_path, fr):
    rasterio = pytest.importorskip("rasterio")
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=tmp_path / "maps", tiled="never")
    assert sorted(r["maps"]) == ["D_lambda", "D_lambda_K", "D_s", "HQNR"]
    for name, path in r["maps"].items():
        assert Path(path) == tmp_path / "maps" / f"{name}.tif"
        with rasterio.open(path) as ds:
            assert ds.descriptions[0] == name and ds.tags()["unit"] == "dimensionless"
            assert ds.shape == ((4, 4) if name != "HQNR" else (128, 128))
    assert not list((tmp_path / "maps").glob(".*"))  # no temporary file left


def test_a_failed_evaluation_leaves_no_half_written_map(tmp_path, fr):
    fused, ms, pan = fr
    with pytest.raises(pi.InputError):
        pi.evaluate_full(fused, ms, pan * np.nan, sensor="none", ratio=4, maps_to=tmp_path / "m", tiled="always")
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").iterdir())


def test_geotiff_sink_aborts_cleanly(tmp_path):
    sink = GeoTiffMaps(tmp_path)
    sink.open(MapInfo("SAM", (4, 4), 1, (0, 0), "radians", "angle"))
    sink.abort()
    assert list(tmp_path.iterdir()) == []


def test_reduced_maps_are_the_toolbox_maps_of_the_evaluated_region(fr):
    fused = fr[0]
    gt = np.abs(fused + np.random.default_rng(1).normal(0, 5, fused.shape))  # an original product: DN >= 0
    r = pi.evaluate_reduced(fused, gt, ratio=4, bits=11, maps=True, tiled="never")
    assert sorted(r["maps"]) == ["Q2n", "SAM"]
    q = pi.q2n(gt[20:-21, 20:-21], fused[20:-21, 20:-21], return_map=True)[1]
    np.testing.assert_allclose(r["maps"]["Q2n"], q, rtol=0, atol=1e-15)
    angles = np.deg2rad(pi.sam(gt[20:-21, 20:-21], fused[20:-21, 20:-21], return_map=True)[1])
    np.testing.assert_allclose(r["maps"]["SAM"], angles, rtol=1e-13, atol=0)  # no zero-norm pixel here


def test_refusals_are_one_line(fr):
    fused, ms, pan = fr
    batch = {"fused": fused[None].transpose(0, 3, 1, 2), "ms": ms[None].transpose(0, 3, 1, 2), "pan": pan[None, None]}
    with pytest.raises(SettingError, match="not for batches or tensors") as err:
        pi.evaluate(batch, pi.full_settings(sensor="none", ratio=4), layout="NCHW", maps=True)
    assert "\n" not in str(err.value)
    with pytest.raises(SettingError, match="exponents"):
        pi.full_settings(sensor="none", ratio=4, exponents="sensor")
    with pytest.raises(SettingError, match="maps_to must be a folder or a MapSink"):
        pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=3)


def test_the_reprojected_protocol_has_no_maps(fr):
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, protocol="reprojected2022", maps=True, tiled="never")
    assert r["maps"] == {} and r["protocol"]["maps"] == {}


def test_exponents_apply_to_every_qnr_like_index(fr):
    base = pi.evaluate_full(*fr, sensor="IKONOS", ratio=4, indexes=["default", "RQNR", "D_s_R", "D_lambda_F"],
                            tiled="never")
    sb = pi.evaluate_full(*fr, sensor="IKONOS", ratio=4, indexes=["default", "RQNR", "D_s_R", "D_lambda_F"],
                          tiled="never", exponents="sensor-based")
    table = {"QNR": (0.0, 1.03), "HQNR": (0.86, 0.77), "RQNR": (1.38, 0.76)}  # get_alpha_beta's IKONOS row
    parts = {"QNR": ("D_lambda", "D_s"), "HQNR": ("D_lambda_K", "D_s"), "RQNR": ("D_lambda_F", "D_s_R")}
    for name, (a, b) in table.items():
        dl, ds = (base[k] for k in parts[name])
        assert sb[name] == pytest.approx((1 - dl) ** a * (1 - ds) ** b, rel=1e-14), name
        assert base[name] == pytest.approx((1 - dl) * (1 - ds), rel=1e-15), name
    assert sb["protocol"]["exponents"]["case"] == "sensor-based" and base["protocol"]["exponents"]["QNR"] == [1.0, 1.0]

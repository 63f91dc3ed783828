"""Issue 20 item 6: a GeoTIFF result is held against its scene's georeference (CRS, pixel size,
offset) when both have one, and declared no-data pixels are refused, never scored as values:
through pansharp-eval (in memory and tile-wise) and the library's tile engine; results on the
scene's grid, without georeference, or declaring a no-data value they do not hold get numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa.io.errors import DataError
from trust_helpers import HYPOTHESIS, demo, run_eval, values, write_toml

rasterio = pytest.importorskip("rasterio")
from rasterio.transform import from_origin  # noqa: E402

ORIGIN = (593270.0, 5747657.0)
PIXEL = 2.0


def _write(path: Path, hwb: np.ndarray, *, crs="EPSG:32631", transform=None, nodata=None) -> Path:
    bands = np.moveaxis(np.atleast_3d(hwb), -1, 0)
    kw = {} if crs is None else {"crs": crs, "transform": transform or from_origin(*ORIGIN, PIXEL, PIXEL)}
    with rasterio.open(path, "w", driver="GTiff", height=bands.shape[1], width=bands.shape[2], count=bands.shape[0],
                       dtype=bands.dtype, nodata=nodata, **kw) as ds:
        ds.write(bands)
    return path


def _dataset(tmp_path: Path) -> tuple[Path, Path]:
    d = demo()
    data, method = tmp_path / "data", tmp_path / "res" / "m"
    data.mkdir(parents=True)
    method.mkdir(parents=True)
    _write(data / "s_gt.tif", d["ms"])
    write_toml(data, sensor="none", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    return data, method


@pytest.fixture(scope="module")
def expected():
    d = demo()
    return pi.evaluate_reduced(d["rr"], d["gt"], ratio=4, bits=11)


@pytest.mark.parametrize("mode", ["never", "always"])
def test_results_on_the_scene_grid_or_without_georeference_are_scored(tmp_path, capsys, expected, mode):
    d = demo()
    data, method = _dataset(tmp_path)
    _write(method / "s.tif", d["rr"])
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "a", "--tiled", mode)
    assert code == 0, pairs
    for k, v in values(expected).items():
        assert pairs[("s", "m")]["metrics"][k] == pytest.approx(v, rel=1e-9)
    _write(method / "s.tif", d["rr"], crs=None)  # a network's plain TIFF: no georeference to compare
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "b", "--tiled", mode)
    assert code == 0, pairs
    _write(method / "s.tif", d["rr"].astype(np.float32), nodata=-9999.0)  # declared, not present
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "c", "--tiled", mode)
    assert code == 0, pairs


@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture], **HYPOTHESIS)
@given(dx=st.integers(-6, 6), dy=st.integers(-6, 6))
def test_a_result_offset_from_the_scene_grid_is_refused(tmp_path_factory, capsys, dx, dy):
    if dx == 0 and dy == 0:
        return
    tmp_path = tmp_path_factory.mktemp("offset")
    d = demo()
    data, method = _dataset(tmp_path)
    shifted = from_origin(ORIGIN[0] + dx * PIXEL, ORIGIN[1] - dy * PIXEL, PIXEL, PIXEL)
    content = np.roll(d["rr"], (-dy, -dx), axis=(0, 1))  # content shifted to match its georeference
    _write(method / "s.tif", content, transform=shifted)
    for mode in ("never", "always"):
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / mode, "--tiled", mode)
        reason = pairs[("s", "m")]["reason"]
        assert code == 1 and f"offset by {dx:g} px east and {dy:g} px south" in reason, reason
    with pytest.raises(DataError, match="is not on the grid of reference"):
        pi.evaluate_reduced(method / "s.tif", data / "s_gt.tif", ratio=4, bits=11)


def test_another_crs_or_pixel_size_is_refused(tmp_path, capsys):
    d = demo()
    data, method = _dataset(tmp_path)
    _write(method / "s.tif", d["rr"], crs="EPSG:32632")
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "a")
    assert code == 1 and "another CRS than s_gt.tif (EPSG:32632 vs EPSG:32631)" in pairs[("s", "m")]["reason"]
    _write(method / "s.tif", d["rr"], transform=from_origin(*ORIGIN, 0.5, 0.5))
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "b")
    assert code == 1 and "another pixel size" in pairs[("s", "m")]["reason"]


@pytest.mark.parametrize("mode", ["never", "always"])
def test_declared_nodata_pixels_are_refused_not_scored_as_zeros(tmp_path, capsys, mode):
    d = demo()
    data, method = _dataset(tmp_path)
    fused = np.clip(d["rr"], 1, None).astype(np.float32)
    fused[20:52, 30:62] = 0  # the no-data block of a tiled inference
    _write(method / "s.tif", fused, nodata=0)
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o", "--tiled", mode)
    reason = pairs[("s", "m")]["reason"]
    assert code == 1 and f"{32 * 32 * 4} values hold the declared no-data value 0" in reason, reason
    with pytest.raises(DataError, match="declared no-data value 0"):
        pi.evaluate_reduced(method / "s.tif", data / "s_gt.tif", ratio=4, bits=11)


def test_eight_page_tiffs_are_read_as_a_band_stack(tmp_path, capsys, expected):
    import tifffile

    d = demo()
    data, method = _dataset(tmp_path)
    (data / "s_gt.tif").unlink()
    np.save(data / "s_gt.npy", d["ms"])
    with tifffile.TiffWriter(method / "s.tif") as tif:  # one page per band, each a series of its own
        for b in range(4):
            tif.write(d["rr"][..., b].astype(np.float32))
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o", "--tiled", "never")
    assert code == 0, pairs
    assert pairs[("s", "m")]["metrics"]["Q2n"] == pytest.approx(
        pi.evaluate_reduced(d["rr"].astype(np.float32), d["gt"], ratio=4, bits=11)["Q2n"], rel=1e-9)

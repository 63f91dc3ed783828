"""Issue 27 (input model): what a GeoTIFF declares (GDAL scale/offset, mask band, band descriptions,
orientation) is applied or honoured by the library, on the tile-wise path (file paths and rasterio
datasets) and by the in-memory readers; both sides of each rule. Expected scores come from the
undeclared arrays the files stand for, evaluated in memory; the record is held against GDAL's own
reading (rasterio)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import gsa
from pansharp_iqa.io.declared import GeoInfo, read_declared
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.geotiff import check_same_grid, read_geotiff
from pansharp_iqa.io.results import load_result

rasterio = pytest.importorskip("rasterio")
from rasterio.transform import from_origin  # noqa: E402

NAMES = ("Coastal", "Blue", "Green", "Yellow", "Red", "Red Edge", "NIR1", "NIR2")
ORIGIN = (593270.0, 5747657.0)


def _synthetic_wv2(seed: int = 3420) -> tuple[np.ndarray, np.ndarray]:
    """MS 128 x 128 x 8 and PAN 512 x 512 (11-bit DN): block means of seeded smooth fields sharing one
    structure at PAN scale, and their band mean plus noise."""
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    common = ndimage.zoom(rng.uniform(0, 1, (32, 32)), 16, order=3)
    hr = np.stack([0.7 * common + 0.3 * ndimage.zoom(rng.uniform(0, 1, (32, 32)), 16, order=3) for _ in range(8)],
                  axis=-1)
    hr = 150 + 1300 * (hr - hr.min()) / (hr.max() - hr.min()) * rng.uniform(0.6, 1.0, 8)
    pan = np.clip(np.round(hr.mean(axis=2) + rng.normal(0, 8, (512, 512))), 0, 2047)
    return np.round(hr.reshape(128, 4, 128, 4, 8).mean(axis=(1, 3))), pan


@functools.cache
def wv2() -> dict[str, np.ndarray]:
    """A 128 x 128 crop of the real WV2 scene (reference ``gt``), else a synthetic one, and GSA's fusion
    of its Wald degradation (``fused``, float64 DN)."""
    default = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    folder = Path(os.environ.get("PANSHARP_SHARED_DATA") or default)
    if (folder / "imgWV2.mat").is_file():
        import scipy.io

        d = scipy.io.loadmat(str(folder / "imgWV2.mat"))
        ms, pan = d["I_MS"][:128, :128].astype(np.float64), d["I_PAN"][:512, :512].astype(np.float64)
    else:  # issue 34: a synthetic WorldView-2-like scene keeps the coverage (the real one adds realism)
        ms, pan = _synthetic_wv2()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "WV2", ratio=4)
    return {"gt": ms, "fused": gsa(ms_lr, pan_lr, ratio=4)}


def write(path: Path, hwb: np.ndarray, *, dtype: Any = None, scales: Any = None, offsets: Any = None,
          names: Any = None, mask: np.ndarray | None = None, transform: Any = None, internal: bool = True) -> Path:
    """``hwb`` as GDAL bands, with what it declares, written by GDAL (rasterio)."""
    bands = np.moveaxis(np.atleast_3d(hwb), -1, 0).astype(dtype or hwb.dtype)
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=internal), rasterio.open(
            path, "w", driver="GTiff", height=bands.shape[1], width=bands.shape[2], count=bands.shape[0],
            dtype=bands.dtype, crs="EPSG:32631", transform=transform or from_origin(*ORIGIN, 2.0, 2.0)) as ds:
        ds.write(bands)
        for attr, value in (("scales", scales), ("offsets", offsets), ("descriptions", names)):
            if value is not None:
                setattr(ds, attr, tuple(value))
        if mask is not None:
            ds.write_mask(mask)
    return path


def block_mask(shape: tuple[int, ...]) -> np.ndarray:
    mask = np.full(shape[:2], 255, np.uint8)
    mask[40:80, 40:80] = 0
    return mask


def values(result: dict[str, Any]) -> dict[str, float]:
    return {k: v for k, v in result.items() if k != "protocol"}


def rr(fused: Any, gt: Any) -> dict[str, Any]:
    return pi.evaluate_reduced(fused, gt, ratio=4, bits=11)


def assert_same(got: dict[str, Any], expected: dict[str, Any]) -> None:
    for k, v in values(expected).items():
        assert got[k] == pytest.approx(v, rel=1e-9), k


@pytest.fixture(scope="module")
def scene(tmp_path_factory) -> dict[str, Any]:
    """The WV2 reference as a named GeoTIFF, and the in-memory score of the correct fused image."""
    d = wv2()
    folder = tmp_path_factory.mktemp("wv2")
    gt = write(folder / "gt.tif", d["gt"], dtype=np.uint16, names=NAMES)
    return {"folder": folder, "gt": gt, "expected": rr(d["fused"], d["gt"])}


def _open(path: Path, how: str) -> Any:
    return path if how == "path" else rasterio.open(path)


def test_the_record_is_what_gdal_reads(tmp_path):
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 4000, (16, 16, 3)).astype(np.uint16)
    path = write(tmp_path / "a.tif", raw, scales=(0.5, 2.0, 1.0), offsets=(-10.0, 0.0, 3.5),
                 names=("Blue", "Green", "Red"), mask=np.full((16, 16), 255, np.uint8))
    declared = read_declared(path)
    with rasterio.open(path) as ds:
        assert declared.scales == ds.scales and declared.offsets == ds.offsets
        assert declared.names == ds.descriptions and declared.mask == "internal mask"
        gdal_values = np.moveaxis(ds.read().astype(np.float64), 0, -1) * np.array(ds.scales) + np.array(ds.offsets)
    # GDAL's rule (value = raw x scale + offset), per band, computed here from the written array
    expected = raw * np.array([0.5, 2.0, 1.0]) + np.array([-10.0, 0.0, 3.5])
    np.testing.assert_array_equal(gdal_values, expected)
    np.testing.assert_array_equal(read_geotiff(path), expected)
    np.testing.assert_array_equal(load_result(path, (16, 16, 3)), expected)
    plain = read_declared(write(tmp_path / "b.tif", raw, names=("Band 1", "Band 2", "Band 3")))
    assert plain.scales == () and plain.names == () and plain.mask is None and plain.unit is None


@pytest.mark.parametrize("how", ["path", "dataset"])
def test_scale_and_offset_tags_are_applied(scene, how):
    d = wv2()
    folder = scene["folder"]
    stored = np.round(d["fused"] + 1000).astype(np.uint16)  # fused + 1000, GDAL offset -1000
    off = write(folder / f"off_{how}.tif", stored, offsets=[-1000.0] * 8)
    got = rr(_open(off, how), _open(scene["gt"], how))
    assert_same(got, rr(stored.astype(np.float64) - 1000.0, d["gt"]))  # the undeclared array, in memory
    assert got["Q2n"] == pytest.approx(scene["expected"]["Q2n"], abs=1e-3)  # 0.882, not 0.232
    assert "raw x 1 + -1000" in got["protocol"]["tiling"]["readers"]["fused"]
    unit = (d["fused"] / 2047).astype(np.float32)  # a [0, 1] result that says it is DN / 2047
    got = rr(_open(write(folder / f"unit_{how}.tif", unit, scales=[2047.0] * 8), how), _open(scene["gt"], how))
    assert_same(got, rr(unit.astype(np.float64) * 2047.0, d["gt"]))
    # its neighbour: the same [0, 1] values without the tag are still refused as another scale
    with pytest.raises(pi.InputError, match="another scale"):
        rr(_open(write(folder / f"bare_{how}.tif", unit), how), _open(scene["gt"], how))


@pytest.mark.parametrize("how", ["path", "dataset"])
def test_a_gdal_mask_band_is_honoured(scene, how):
    d = wv2()
    folder = scene["folder"]
    holes = d["fused"].astype(np.float32)
    holes[40:80, 40:80] = 0
    masked = write(folder / f"mask_{how}.tif", holes, mask=block_mask(holes.shape))
    with pytest.raises(DataError, match="1600 pixels are masked out by its GDAL mask band"):
        rr(_open(masked, how), _open(scene["gt"], how))
    with pytest.raises(DataError, match="1600 pixels are masked out"):
        read_geotiff(masked)
    full = d["fused"].astype(np.float32)
    nothing = write(folder / f"nomask_{how}.tif", full, mask=np.full(full.shape[:2], 255, np.uint8))
    assert read_declared(nothing).mask == "internal mask"
    assert_same(rr(_open(nothing, how), _open(scene["gt"], how)), rr(full.astype(np.float64), d["gt"]))
    np.testing.assert_array_equal(read_geotiff(nothing), full)


@pytest.mark.parametrize("how", ["path", "dataset"])
def test_bands_follow_the_scene_by_name(scene, how):
    d = wv2()
    folder = scene["folder"]
    flipped = d["fused"][..., ::-1].astype(np.float32)
    rev = write(folder / f"rev_{how}.tif", flipped, names=NAMES[::-1])
    got = rr(_open(rev, how), _open(scene["gt"], how))
    assert_same(got, rr(d["fused"].astype(np.float32).astype(np.float64), d["gt"]))
    assert got["SAM"] == pytest.approx(scene["expected"]["SAM"], rel=1e-6)  # 7.29, not 23.46
    np.testing.assert_array_equal(load_result(rev, (128, 128, 8), like=scene["gt"]), d["fused"].astype(np.float32))
    # generic names say nothing: scored in storage order
    generic = write(folder / f"gen_{how}.tif", flipped, names=[f"Band {i}" for i in range(1, 9)])
    assert_same(rr(_open(generic, how), _open(scene["gt"], how)), rr(flipped.astype(np.float64), d["gt"]))
    # names that contradict the scene's are refused, naming both
    other = write(folder / f"other_{how}.tif", flipped, names=("SWIR1", *NAMES[1:]))
    with pytest.raises(DataError, match=r"names its bands SWIR1, Blue, .* but reference \(gt.tif\) names"
                                        r" them Coastal, Blue"):
        rr(_open(other, how), _open(scene["gt"], how))
    with pytest.raises(DataError, match="other_.*.tif names its bands SWIR1, Blue.* but gt.tif names them Coastal"):
        load_result(other, (128, 128, 8), like=scene["gt"])


def test_bands_follow_the_ms_at_full_resolution(tmp_path):
    rng = np.random.default_rng(3)
    ms = rng.integers(200, 1800, (32, 32, 4)).astype(np.uint16)
    pan = rng.integers(200, 1800, (128, 128)).astype(np.uint16)
    fused = gsa(ms.astype(np.float64), pan.astype(np.float64), ratio=4)
    names = ("Blue", "Green", "Red", "NIR")
    big = from_origin(*ORIGIN, 8.0, 8.0)
    ms_file = write(tmp_path / "ms.tif", ms, names=names, transform=big)
    pan_file = write(tmp_path / "pan.tif", pan)
    rev = write(tmp_path / "rev.tif", fused[..., ::-1], names=names[::-1])
    kw = dict(sensor="none", ratio=4, bits=11)
    expected = pi.evaluate_full(fused, ms, pan, **kw)
    assert_same(pi.evaluate_full(rev, ms_file, pan_file, **kw), expected)
    stored = pi.evaluate_full(fused[..., ::-1], ms, pan, **kw)
    assert abs(stored["D_lambda"] - expected["D_lambda"]) > 1e-3 or abs(stored["D_s"] - expected["D_s"]) > 1e-3


def test_a_south_up_result_is_told_it_is_flipped():
    scene = GeoInfo("EPSG:32631", (2.0, 0.0, 593270.0, 0.0, -2.0, 5747657.0))
    south_up = GeoInfo("EPSG:32631", (2.0, 0.0, 593270.0, 0.0, 2.0, 5747657.0 - 256.0))
    with pytest.raises(DataError, match=r"is flipped north-south against gt.tif \(pixel size 2 x 2 vs 2 x -2"):
        check_same_grid(south_up, scene, result_name="m/s.tif", scene_name="gt.tif")
    mirrored = GeoInfo("EPSG:32631", (-2.0, 0.0, 593526.0, 0.0, -2.0, 5747657.0))
    with pytest.raises(DataError, match="is flipped east-west"):
        check_same_grid(mirrored, scene, result_name="m/s.tif", scene_name="gt.tif")
    with pytest.raises(DataError, match=r"another pixel size than gt.tif \(4 x 4 vs 2 x 2"):  # its neighbour
        check_same_grid(GeoInfo("EPSG:32631", (4.0, 0.0, 593270.0, 0.0, -4.0, 5747657.0)), scene,
                        result_name="m/s.tif", scene_name="gt.tif")
    check_same_grid(scene, scene, result_name="m/s.tif", scene_name="gt.tif")


def test_hdf5_scale_factor_is_applied(tmp_path):
    h5py = pytest.importorskip("h5py")
    from pansharp_iqa.io.windows import open_windowed

    rng = np.random.default_rng(1)
    raw = rng.integers(0, 1000, (4, 64, 64)).astype(np.uint16)
    with h5py.File(tmp_path / "s.h5", "w") as f:
        ds = f.create_dataset("fused", data=raw)
        ds.attrs["scale_factor"], ds.attrs["add_offset"] = 2.0, 5.0
    expected = np.moveaxis(raw, 0, -1) * 2.0 + 5.0
    np.testing.assert_array_equal(load_result(tmp_path / "s.h5", (64, 64, 4)), expected)
    windows = open_windowed(tmp_path / "s.h5", role="fused", expected=(64, 64, 4))
    np.testing.assert_array_equal(windows.read(0, 64, 0, 64), expected)


def test_a_msk_sidecar_is_a_mask_band_too(tmp_path, monkeypatch):
    from pansharp_iqa.io.declared import count_masked

    rng = np.random.default_rng(2)
    image = rng.uniform(100, 900, (128, 128, 4)).astype(np.float32)
    path = write(tmp_path / "a.tif", image, mask=block_mask(image.shape), internal=False)
    assert (tmp_path / "a.tif.msk").is_file() and read_declared(path).mask == "a.tif.msk"
    with pytest.raises(DataError, match=r"1600 pixels are masked out by its GDAL mask band \(a.tif.msk\)"):
        pi.evaluate_reduced(path, image.astype(np.float64), ratio=4, bits=11)
    internal = write(tmp_path / "b.tif", image, mask=block_mask(image.shape))
    monkeypatch.setitem(__import__("sys").modules, "rasterio", None)  # tifffile alone reads the masks too
    assert count_masked(path) == count_masked(internal) == 1600


def test_a_mat_or_npz_with_two_different_results_is_refused(tmp_path):
    import scipy.io

    rng = np.random.default_rng(4)
    fused = rng.uniform(100, 900, (64, 64, 4))
    scipy.io.savemat(tmp_path / "two.mat", {"sr": fused, "I_F": fused + 1.0})
    with pytest.raises(DataError, match="two.mat: holds two results, 'I_F' and 'sr', with different arrays"):
        load_result(tmp_path / "two.mat", (64, 64, 4))
    np.savez(tmp_path / "two.npz", fused=fused, output=fused[..., ::-1])
    with pytest.raises(DataError, match="holds two results, 'fused' and 'output'"):
        load_result(tmp_path / "two.npz", (64, 64, 4))
    scipy.io.savemat(tmp_path / "same.mat", {"sr": fused, "I_F": fused, "I_MS": fused[::4, ::4]})
    np.testing.assert_array_equal(load_result(tmp_path / "same.mat", (64, 64, 4)), fused)


def test_scene_files_are_read_in_the_values_they_declare(tmp_path):
    from pansharp_iqa.io import discover_scenes, load_scene, load_settings

    rng = np.random.default_rng(5)
    gt = rng.integers(100, 1800, (128, 128, 4)).astype(np.float64)
    write(tmp_path / "s_gt.tif", (gt + 500).astype(np.uint16), offsets=[-500.0] * 4)
    (tmp_path / "dataset.toml").write_text('sensor = "none"\nratio = 4\nbits = 11\nresolution = "reduced"\n')
    settings = load_settings(tmp_path)
    loaded = load_scene(discover_scenes(tmp_path)[0][0], settings, ("gt",))
    np.testing.assert_array_equal(loaded["gt"], gt)


def test_other_gdal_rasters_declare_the_same_way(scene):
    d = wv2()
    stored = np.round((d["fused"][..., ::-1] + 100) * 4).astype(np.uint16)  # (value + 100) x 4, bands reversed
    path = scene["folder"] / "result.img"  # an ERDAS Imagine file: GDAL keeps its tags in result.img.aux.xml
    bands = np.moveaxis(stored, -1, 0)
    with rasterio.open(path, "w", driver="HFA", height=128, width=128, count=8, dtype="uint16", crs="EPSG:32631",
                       transform=from_origin(*ORIGIN, 2.0, 2.0)) as ds:
        ds.write(bands)
        ds.scales, ds.offsets, ds.descriptions = (0.25,) * 8, (-100.0,) * 8, NAMES[::-1]
    undeclared = (stored.astype(np.float64) * 0.25 - 100.0)[..., ::-1]
    assert_same(rr(path, scene["gt"]), rr(undeclared, d["gt"]))

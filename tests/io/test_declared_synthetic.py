"""Issue 34: what a GeoTIFF declares, without ``../shared/data`` (the real-scene tests of
``test_declared_geotiff.py`` skip there): a one-for-all GDAL scale and offset, a GDAL mask band, and
band names in another order (a 3-cycle, whose inverse is another order), on synthetic seeded
smooth fields. Expected arrays are written here from GDAL's rule and the names."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import pansharp_iqa as pi
from pansharp_iqa.io.declared import read_declared
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.geotiff import read_geotiff
from pansharp_iqa.io.results import load_result

rasterio = pytest.importorskip("rasterio")
from rasterio.transform import from_origin  # noqa: E402

NAMES = ("Blue", "Green", "Red", "NIR")


def smooth(seed: int, size: int = 96, bands: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    field = ndimage.zoom(rng.uniform(0, 1, (size // 8, size // 8, bands)), (8, 8, 1), order=3)
    return np.round(200 + 1200 * (field - field.min()) / (field.max() - field.min()))


def write(path, hwb, *, dtype=None, scales=None, offsets=None, names=None, mask=None):
    """``hwb`` as GDAL bands with what it declares (rasterio)."""
    bands = np.moveaxis(np.atleast_3d(hwb), -1, 0).astype(dtype or hwb.dtype)
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True), rasterio.open(
            path, "w", driver="GTiff", height=bands.shape[1], width=bands.shape[2], count=bands.shape[0],
            dtype=bands.dtype, crs="EPSG:32631", transform=from_origin(593270.0, 5747657.0, 2.0, 2.0)) as ds:
        ds.write(bands)
        for attr, value in (("scales", scales), ("offsets", offsets), ("descriptions", names)):
            if value is not None:
                setattr(ds, attr, tuple(value))
        if mask is not None:
            ds.write_mask(mask)
    return path


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    folder = tmp_path_factory.mktemp("declared")
    gt = smooth(501)
    fused = gt + np.random.default_rng(502).normal(0, 25, gt.shape)
    return {"folder": folder, "gt": gt, "fused": fused,
            "gt_tif": write(folder / "gt.tif", gt, dtype=np.uint16, names=NAMES)}


def test_one_offset_and_one_scale_for_every_band_are_applied(scene):
    folder, fused = scene["folder"], scene["fused"]
    stored = np.round(fused + 1000).astype(np.uint16)
    off = write(folder / "off.tif", stored, offsets=[-1000.0] * 4)
    np.testing.assert_array_equal(read_geotiff(off), stored.astype(np.float64) - 1000.0)  # raw x 1 + (-1000)
    unit = (fused / 2047).astype(np.float32)
    tagged = write(folder / "unit.tif", unit, scales=[2047.0] * 4)
    np.testing.assert_array_equal(read_geotiff(tagged), unit.astype(np.float64) * 2047.0)
    # the tile-wise path reads the same values: SAM of the declared array, not of the raw one
    got = pi.evaluate_reduced(off, scene["gt_tif"], ratio=4, bits=11)
    want = pi.evaluate_reduced(stored.astype(np.float64) - 1000.0, scene["gt"], ratio=4, bits=11)
    assert got["SAM"] == pytest.approx(want["SAM"], rel=1e-9)
    assert "raw x 1 + -1000" in got["protocol"]["tiling"]["readers"]["fused"]


def test_a_gdal_mask_band_that_leaves_pixels_out_is_refused(scene):
    holes = scene["fused"].astype(np.float32)
    holes[40:80, 40:80] = 0
    mask = np.full(holes.shape[:2], 255, np.uint8)
    mask[40:80, 40:80] = 0
    masked = write(scene["folder"] / "mask.tif", holes, mask=mask)
    with pytest.raises(DataError, match="1600 pixels are masked out by its GDAL mask band"):
        read_geotiff(masked)
    with pytest.raises(DataError, match="1600 pixels are masked out"):
        pi.evaluate_reduced(masked, scene["gt_tif"], ratio=4, bits=11)


def test_result_bands_follow_the_scenes_names_a_3_cycle(scene):
    fused = scene["fused"].astype(np.float32)
    perm = (1, 2, 0, 3)  # stored band j is the scene's band perm[j]: Green, Red, Blue, NIR
    stored = fused[..., list(perm)]
    path = write(scene["folder"] / "cycled.tif", stored, names=[NAMES[p] for p in perm])
    assert read_declared(path).names == ("Green", "Red", "Blue", "NIR")
    # the scene's band b is the stored band holding NAMES[b]: stored[..., perm.index(b)]
    expected = stored[..., [perm.index(b) for b in range(4)]]
    np.testing.assert_array_equal(expected, fused)
    np.testing.assert_array_equal(load_result(path, fused.shape, like=scene["gt_tif"]), fused)
    got = pi.evaluate_reduced(path, scene["gt_tif"], ratio=4, bits=11)
    want = pi.evaluate_reduced(fused.astype(np.float64), scene["gt"], ratio=4, bits=11)
    assert got["SAM"] == pytest.approx(want["SAM"], rel=1e-9)

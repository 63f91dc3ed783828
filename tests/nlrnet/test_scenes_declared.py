"""pansharp-nlrnet reads a GeoTIFF scene (``MS.tif,PAN.tif``) in the values its files declare (issue 27:
GDAL scale/offset applied, as on every other path), not in their raw storage."""

from __future__ import annotations

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")
pytest.importorskip("mindspore")

from pansharp_iqa.nlrnet.scenes import load_scene  # noqa: E402


def _write(path, hwb, *, offsets=None):
    bands = np.moveaxis(np.atleast_3d(hwb), -1, 0)
    with rasterio.open(path, "w", driver="GTiff", width=bands.shape[2], height=bands.shape[1], count=bands.shape[0],
                       dtype=bands.dtype) as ds:
        ds.write(bands)
        if offsets is not None:
            ds.offsets = offsets
    return path


def test_a_tif_scene_is_read_in_the_values_its_files_declare(tmp_path):
    rng = np.random.default_rng(3)
    ms = rng.integers(100, 900, (16, 16, 4)).astype(np.uint16)
    pan = rng.integers(100, 900, (64, 64)).astype(np.uint16)
    _write(tmp_path / "ms.tif", ms + 1000, offsets=[-1000.0] * 4)  # stored + 1000, declared offset -1000
    _write(tmp_path / "pan.tif", pan)
    scene = load_scene(f"{tmp_path / 'ms.tif'},{tmp_path / 'pan.tif'}")
    np.testing.assert_array_equal(scene.ms, ms)  # GDAL's rule: raw x 1 - 1000
    np.testing.assert_array_equal(scene.pan, pan)
    _write(tmp_path / "plain.tif", ms)  # without tags: the stored values, as before
    np.testing.assert_array_equal(load_scene(f"{tmp_path / 'plain.tif'},{tmp_path / 'pan.tif'}").ms, ms)

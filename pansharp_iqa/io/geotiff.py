"""The one GeoTIFF reader of the package, and the checks of what a GeoTIFF declares about its pixels.

All TIFF/GeoTIFF input read whole goes through :func:`read_geotiff`, which applies the file's record
(:mod:`.declared`: scale/offset, no-data, mask band). :func:`check_same_grid` holds a result's
georeference against its scene's; :func:`check_no_nodata` refuses declared no-data pixels (the
indexes cannot leave pixels out; scoring them as values gives a wrong number).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from .declared import Declared, GeoInfo, check_unmasked, is_mask_page, quiet_tifffile, read_declared
from .errors import DataError

__all__ = ["check_no_nodata", "check_nodata_count", "check_same_grid", "check_same_grid_files", "read_geotiff"]

#: Largest georeference difference taken as the same grid: a thousandth of a pixel (offset) and a
#: relative 1e-6 (pixel size), far below any real misregistration, above float rounding of the tags.
_PIXEL_TOLERANCE = 1e-3


def check_same_grid_files(result_path: str | os.PathLike[str], scene_path: str | os.PathLike[str], *,
                          result_name: str, scene_name: str) -> None:
    """:func:`check_same_grid` on two files' tags: nothing to compare when the result has no georeference, or when
    either file cannot be read (its reader names that trouble)."""
    try:
        result, scene = read_declared(result_path).geo, read_declared(scene_path).geo
    except DataError:
        return
    if result.crs is None and result.transform is None:
        return
    check_same_grid(result, scene, result_name=result_name, scene_name=scene_name)


def check_same_grid(result: GeoInfo, scene: GeoInfo, *, result_name: str, scene_name: str) -> None:
    """A result's georeference must be its scene's (when both have one): same CRS, same pixel grid."""
    if result.crs is not None and scene.crs is not None and result.crs != scene.crs:
        raise DataError(
            f"{result_name} is in another CRS than {scene_name} ({result.crs} vs {scene.crs}), so its pixels cannot "
            f"be taken as the scene's. Reproject the result onto the scene's grid, or, if only its metadata is "
            f"wrong, rewrite it with the scene's georeference (e.g. rio edit-info --like {scene_name})"
        )
    if result.transform is None or scene.transform is None:
        return
    a, b, c, d, e, f = scene.transform
    ra, rb, rc, rd, re_, rf = result.transform
    det = a * e - b * d

    def close(r: tuple[float, float], g: tuple[float, float]) -> bool:
        return bool(np.allclose(r, g, rtol=1e-6, atol=1e-12 + 1e-6 * max(abs(g[0]), abs(g[1]))))

    columns, rows = close((ra, rd), (a, d)), close((rb, re_), (b, e))
    axes = (("east-west", columns, (ra, rd), (a, d)), ("north-south", rows, (rb, re_), (b, e)))
    flips = [axis for axis, same, r, g in axes if not same and close(r, (-g[0], -g[1]))]
    if flips and len(flips) == (not columns) + (not rows):
        raise DataError(
            f"{result_name} is flipped {' and '.join(flips)} against {scene_name} (pixel size "
            f"{ra:.6g} x {re_:.6g} vs {a:.6g} x {e:.6g} map units: the sign differs, e.g. a south-up image), so "
            f"its rows or columns run the other way and every index would compare other pixels. Flip the result "
            f"onto the scene's orientation (e.g. gdalwarp it onto the scene's grid)"
        )
    if not (columns and rows):
        raise DataError(
            f"{result_name} has another pixel size than {scene_name} "
            f"({math.hypot(ra, rd):.6g} x {math.hypot(rb, re_):.6g} "
            f"vs {math.hypot(a, d):.6g} x {math.hypot(b, e):.6g} map units), so its pixels are not the scene's and "
            f"every index would compare other pixels. Resample the result onto the scene's grid"
        )
    if not det:
        return
    dx, dy = rc - c, rf - f  # the map offset of the result's origin, in scene pixels
    col, row = (e * dx - b * dy) / det + 0.0, (a * dy - d * dx) / det + 0.0  # no "-0 px"
    if abs(col) > _PIXEL_TOLERANCE or abs(row) > _PIXEL_TOLERANCE:
        raise DataError(
            f"{result_name} is not on the grid of {scene_name}: its georeference is offset by {col:.4g} px east and "
            f"{row:.4g} px south (its pixels are not the scene's), so every index would compare other pixels. "
            f"Resample or crop the result onto the scene's grid (e.g. gdalwarp -te ... -tr ...), or write it "
            f"with the scene's georeference if the pixels do match"
        )


def check_no_nodata(array: np.ndarray, declared: Declared, *, name: str) -> None:
    """Refuse an image holding its declared no-data value (in stored units)."""
    nodata = declared.geo.nodata
    if nodata is not None and not math.isnan(nodata):  # NaN no-data: the non-finite rule refuses it
        check_nodata_count(int(np.count_nonzero(np.asarray(array) == nodata)), nodata, name=name,
                           where=declared.where)


def check_nodata_count(count: int, nodata: float, *, name: str, where: str) -> None:
    """Refuse ``count`` > 0 values equal to the no-data value declared in ``where``."""
    if count:
        raise DataError(f"{name}: {count} values hold the declared no-data value {nodata:g} ({where}); the indexes "
                        "cannot leave pixels out, and would score them as values. Crop the scene and the result to the "
                        "valid window, or fill them (and remove the no-data value) if scoring the filled values is "
                        "intended")


def _pages_stack(tif: Any, path: str) -> tuple[np.ndarray, bool]:
    """The image of a TIFF (and whether it is one image), or its pages stacked as (B, H, W) when each
    page is a series of its own (overviews and GDAL mask IFDs aside)."""
    series = [s for s in tif.series if not getattr(s, "is_reduced", False)
              and not all(is_mask_page(p) for p in s.pages if p is not None)]
    if len(series) <= 1:
        return np.asarray((series or tif.series)[0].asarray()), True
    shapes = {tuple(s.shape) for s in series}
    dtypes = {np.dtype(s.dtype) for s in series}
    if len(shapes) == 1 and len(dtypes) == 1 and len(next(iter(shapes))) == 2:
        return np.stack([np.asarray(s.asarray()) for s in series]), False  # one band per page, in page order
    raise DataError(
        f"{Path(path).name}: a TIFF of {len(series)} separate images of shapes {sorted(shapes)}; store one "
        "multi-band image (e.g. tifffile.imwrite(path, bands_first, photometric='minisblack'), or GDAL bands)"
    )


def read_geotiff(path: str | os.PathLike[str]) -> np.ndarray:
    """Read a (Geo)TIFF image into memory, in the values it declares."""
    import tifffile

    path = os.fspath(path)
    try:
        with quiet_tifffile(), tifffile.TiffFile(path) as tif:
            array, single = _pages_stack(tif, path)
            separate = tif.pages[0].planarconfig == 2
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure becomes a per-scene reason
        raise DataError(f"cannot read TIFF {path}: {type(exc).__name__}: {exc}") from None
    declared = read_declared(path)
    check_no_nodata(array, declared, name=Path(path).name)
    check_unmasked(path, declared, name=Path(path).name)
    return declared.values(array, band_axis=0 if separate else -1) if single else array

"""The one GeoTIFF reader of the package, and what a GeoTIFF says about its pixels.

All TIFF/GeoTIFF input read whole goes through :func:`read_geotiff`. :func:`read_geoinfo` reads a
file's georeference (CRS, affine transform) and declared no-data value from its tags, without the
pixels; :func:`check_same_grid` holds a result's georeference against its scene's, and
:func:`check_no_nodata` refuses declared no-data pixels (the indexes cannot leave pixels out; scoring
them as values gives a wrong number).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError

__all__ = ["GeoInfo", "check_no_nodata", "check_nodata_count", "check_raster_path", "check_same_grid",
           "check_same_grid_files", "count_nodata", "quiet_tifffile", "read_geoinfo", "read_geotiff"]

_TIFF_SUFFIXES = (".tif", ".tiff")
#: Largest georeference difference taken as the same grid: a thousandth of a pixel (offset) and a
#: relative 1e-6 (pixel size), far below any real misregistration, above float rounding of the tags.
_PIXEL_TOLERANCE = 1e-3


@contextlib.contextmanager
def quiet_tifffile() -> Iterator[None]:
    """Silence tifffile's log messages (e.g. on truncated files) for the duration of a read.

    tifffile reports parsing trouble through :mod:`logging`, which prints on stderr when no
    handler is configured; the readers here turn every failure into one reason of their own.

    Examples
    --------
    >>> from pansharp_iqa.io.geotiff import quiet_tifffile
    >>> with quiet_tifffile():
    ...     pass
    """
    log = logging.getLogger("tifffile")
    level = log.level
    log.setLevel(logging.CRITICAL + 1)  # it logs broken files at ERROR level
    try:
        yield
    finally:
        log.setLevel(level)


@dataclasses.dataclass(frozen=True)
class GeoInfo:
    """What a TIFF's tags say about its pixels.

    Attributes
    ----------
    crs : str or None
        ``"EPSG:<code>"``, or a description of a user-defined CRS; None without GeoTIFF keys.
    transform : tuple of 6 float or None
        Affine pixel-to-map transform ``(a, b, c, d, e, f)``: ``x = a*col + b*row + c``,
        ``y = d*col + e*row + f`` (the corner of pixel (0, 0) at ``(c, f)``, as GDAL and rasterio
        give it); None without one.
    nodata : float or None
        The declared no-data value (GDAL's ``GDAL_NODATA`` tag).
    """

    crs: str | None = None
    transform: tuple[float, ...] | None = None
    nodata: float | None = None


def _transform(meta: dict[str, Any]) -> tuple[float, ...] | None:
    if meta.get("ModelTransformation") is not None:
        m = np.asarray(meta["ModelTransformation"], dtype=np.float64).ravel()
        a, b, c, d, e, f = m[0], m[1], m[3], m[4], m[5], m[7]
    elif meta.get("ModelPixelScale") is not None and meta.get("ModelTiepoint") is not None:
        sx, sy = (float(v) for v in list(meta["ModelPixelScale"])[:2])
        i, j, _, x, y = (float(v) for v in list(meta["ModelTiepoint"])[:5])
        a, b, c, d, e, f = sx, 0.0, x - i * sx, 0.0, -sy, y + j * sy
    else:
        return None
    if int(meta.get("GTRasterTypeGeoKey", 1)) == 2:  # PixelIsPoint: the tie point is a pixel centre
        c, f = c - 0.5 * a - 0.5 * b, f - 0.5 * d - 0.5 * e
    return tuple(float(v) for v in (a, b, c, d, e, f))


def _crs(meta: dict[str, Any]) -> str | None:
    for key in ("ProjectedCSTypeGeoKey", "GeographicTypeGeoKey"):
        code = meta.get(key)
        if code is not None and 0 < int(code) < 32767:
            return f"EPSG:{int(code)}"
    keys = {k: str(v) for k, v in meta.items() if k.endswith("GeoKey") and k != "GTRasterTypeGeoKey"}
    return f"user-defined ({', '.join(f'{k}={v}' for k, v in sorted(keys.items()))})" if keys else None


def _geoinfo(tif: Any) -> GeoInfo:
    page = tif.pages[0]
    nodata_tag = page.tags.get(42113)  # GDAL_NODATA
    nodata = None
    if nodata_tag is not None:
        try:
            nodata = float(str(nodata_tag.value).strip().strip("\x00"))
        except ValueError:
            nodata = None
    try:
        meta = tif.geotiff_metadata if getattr(tif, "is_geotiff", False) else None
    except Exception:  # noqa: BLE001 - broken GeoTIFF keys: no georeference to compare
        meta = None
    if not meta:
        return GeoInfo(nodata=nodata)
    return GeoInfo(_crs(meta), _transform(meta), nodata)


def read_geoinfo(path: str | os.PathLike[str]) -> GeoInfo:
    """The georeference and declared no-data value of a TIFF, from its tags (no pixels are read).

    Parameters
    ----------
    path : path-like

    Returns
    -------
    GeoInfo
        Empty for other files and for TIFFs without GeoTIFF tags.

    Raises
    ------
    DataError
        The file cannot be read.

    Examples
    --------
    >>> import os, tempfile, numpy as np, tifffile
    >>> path = os.path.join(tempfile.mkdtemp(), "plain.tif"); tifffile.imwrite(path, np.zeros((4, 4), np.uint16))
    >>> read_geoinfo(path)
    GeoInfo(crs=None, transform=None, nodata=None)
    """
    if Path(path).suffix.lower() not in _TIFF_SUFFIXES:
        return GeoInfo()
    import tifffile

    try:
        with quiet_tifffile(), tifffile.TiffFile(os.fspath(path)) as tif:
            return _geoinfo(tif)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read TIFF {os.fspath(path)}: {type(exc).__name__}: {exc}") from None


def check_same_grid_files(result_path: str | os.PathLike[str], scene_path: str | os.PathLike[str], *,
                          result_name: str, scene_name: str) -> None:
    """:func:`check_same_grid` on two files' tags: nothing to compare when the result has no
    georeference, or when either file cannot be read (its reader names that trouble).

    Parameters
    ----------
    result_path, scene_path : path-like
    result_name, scene_name : str
        For the message.

    Raises
    ------
    DataError
        Another CRS, pixel size or an offset grid.

    Examples
    --------
    >>> check_same_grid_files("GSA/s.mat", "s_gt.mat", result_name="GSA/s.mat", scene_name="s_gt.mat")  # no TIFFs
    """
    try:
        result, scene = read_geoinfo(result_path), read_geoinfo(scene_path)
    except DataError:
        return
    if result.crs is None and result.transform is None:
        return
    check_same_grid(result, scene, result_name=result_name, scene_name=scene_name)


def check_same_grid(result: GeoInfo, scene: GeoInfo, *, result_name: str, scene_name: str) -> None:
    """A result's georeference must be its scene's (when both have one): same CRS, same pixel grid.

    A result whose transform is offset (e.g. 4 pixels east) or has another pixel size holds other
    pixels than the scene's, whatever its array shape says; another CRS means its grid cannot be
    compared (or its metadata is wrong). Refused with the reason; a result without georeference
    (e.g. a network's plain TIFF) is taken on its array alone.

    Parameters
    ----------
    result, scene : GeoInfo
        The result's and the scene's (the ground truth at reduced resolution, the PAN at full
        resolution: the grid of the fused image).
    result_name, scene_name : str
        For the message.

    Raises
    ------
    DataError

    Examples
    --------
    >>> scene = GeoInfo("EPSG:32631", (0.5, 0.0, 593270.0, 0.0, -0.5, 5747657.0))
    >>> check_same_grid(scene, scene, result_name="GSA/a.tif", scene_name="a_pan.tif")
    >>> check_same_grid(GeoInfo("EPSG:32631", (0.5, 0.0, 593272.0, 0.0, -0.5, 5747657.0)), scene,
    ...                 result_name="GSA/a.tif", scene_name="a_pan.tif")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.DataError: GSA/a.tif is not on the grid of a_pan.tif: its georeference is offset by 4 px east and 0 px south (its pixels are not the scene's), so every index would compare other pixels. Resample or crop the result onto the scene's grid (e.g. gdalwarp -te ... -tr ...), or write it with the scene's georeference if the pixels do match
    """
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
    size = [abs(ra - a) > 1e-6 * abs(a) + 1e-12, abs(re_ - e) > 1e-6 * abs(e) + 1e-12,
            abs(rb - b) > 1e-6 * (abs(a) + abs(b)), abs(rd - d) > 1e-6 * (abs(d) + abs(e))]
    if any(size):
        raise DataError(
            f"{result_name} has another pixel size than {scene_name} ({math.hypot(ra, rd):.6g} x {math.hypot(rb, re_):.6g} "
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


def _nodata_message(name: str, count: int, nodata: float) -> str:
    return (f"{name}: {count} pixels hold the declared no-data value {nodata:g} (its GeoTIFF nodata tag); the "
            f"indexes cannot leave pixels out, and would score them as values. Crop the scene and the result to "
            f"the valid window, or fill them (and remove the nodata tag) if scoring the filled values is intended")


def check_no_nodata(array: np.ndarray, nodata: float | None, *, name: str) -> None:
    """Refuse an image holding its declared no-data value (in stored units).

    Examples
    --------
    >>> check_no_nodata(np.array([[0, 5], [7, 9]]), 0.0, name="a.tif")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.DataError: a.tif: 1 pixels hold the declared no-data value 0 (its GeoTIFF nodata tag); the indexes cannot leave pixels out, and would score them as values. Crop the scene and the result to the valid window, or fill them (and remove the nodata tag) if scoring the filled values is intended
    >>> check_no_nodata(np.array([[3, 5]]), 0.0, name="a.tif")
    """
    if nodata is None or math.isnan(nodata):  # NaN no-data: the non-finite rule refuses it
        return
    check_nodata_count(int(np.count_nonzero(np.asarray(array) == nodata)), nodata, name=name)


def check_nodata_count(count: int, nodata: float, *, name: str) -> None:
    """Refuse ``count`` > 0 pixels holding the declared no-data value (the message of :func:`check_no_nodata`).

    Examples
    --------
    >>> check_nodata_count(0, 0.0, name="a.tif")
    """
    if count:
        raise DataError(_nodata_message(name, count, nodata))


def count_nodata(path: str | os.PathLike[str], nodata: float) -> int:
    """Pixels of a raster equal to ``nodata``, read block by block with rasterio (bounded memory).

    Raises
    ------
    DataError
        The file cannot be read.

    Examples
    --------
    >>> import os, tempfile, warnings, numpy as np, tifffile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tif"); tifffile.imwrite(path, np.eye(4, dtype=np.uint16))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # a plain TIFF: rasterio notes it has no georeference
    ...     count_nodata(path, 0.0)
    12
    """
    import rasterio

    count = 0
    try:
        with rasterio.open(os.fspath(path)) as ds:
            for _, window in ds.block_windows(1):
                count += int(np.count_nonzero(ds.read(window=window) == nodata))
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read {os.fspath(path)}: {type(exc).__name__}: {exc}") from None
    return count


def check_raster_path(path: str | os.PathLike[str], *, name: str) -> None:
    """A GeoTIFF given as a path to the tile engine must not hold its declared no-data value.

    Only files that declare one are read (once, block by block). A file that cannot be read is left
    to the reader, which names the trouble (corrupt, truncated, ...).

    Raises
    ------
    DataError

    Examples
    --------
    >>> import os, tempfile, numpy as np, tifffile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tif"); tifffile.imwrite(path, np.eye(4, dtype=np.uint16))
    >>> check_raster_path(path, name="fused")  # no no-data value declared: nothing to read
    """
    try:
        info = read_geoinfo(path)
        count = count_nodata(path, info.nodata) if info.nodata is not None and not math.isnan(info.nodata) else 0
    except DataError:
        return
    if count:
        if info.nodata is not None:
            raise DataError(_nodata_message(f"{name} ({Path(path).name})", count, info.nodata))


def _pages_stack(tif: Any, path: str) -> np.ndarray:
    """The image of a TIFF, or its pages stacked as (B, H, W) when each page is a series of its own."""
    series = [s for s in tif.series if not getattr(s, "is_reduced", False)]
    if len(series) <= 1:
        return np.asarray(tif.asarray())
    shapes = {tuple(s.shape) for s in series}
    dtypes = {np.dtype(s.dtype) for s in series}
    if len(shapes) == 1 and len(dtypes) == 1 and len(next(iter(shapes))) == 2:
        return np.stack([np.asarray(s.asarray()) for s in series])  # one band per page, in page order
    raise DataError(
        f"{Path(path).name}: a TIFF of {len(series)} separate images of shapes {sorted(shapes)}; store one "
        "multi-band image (e.g. tifffile.imwrite(path, bands_first, photometric='minisblack'), or GDAL bands)"
    )


def read_geotiff(path: str | os.PathLike[str]) -> np.ndarray:
    """Read a (Geo)TIFF image into memory.

    Parameters
    ----------
    path : path-like
        A single-image TIFF; multi-band files may be stored band-interleaved ``(B, H, W)`` or
        pixel-interleaved ``(H, W, B)`` (orientation is resolved by the caller from the shape), or
        as one page per band (stacked ``(B, H, W)`` in page order).

    Returns
    -------
    numpy.ndarray
        The stored array, dtype unchanged (values in the file's units).

    Raises
    ------
    DataError
        If the file cannot be read, holds images of different shapes, or holds its declared
        no-data value (:func:`check_no_nodata`).
    """
    import tifffile

    path = os.fspath(path)
    try:
        with quiet_tifffile(), tifffile.TiffFile(path) as tif:
            array = _pages_stack(tif, path)
            info = _geoinfo(tif)
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure becomes a per-scene reason
        raise DataError(f"cannot read TIFF {path}: {type(exc).__name__}: {exc}") from None
    check_no_nodata(array, info.nodata, name=Path(path).name)
    return array

"""What a file declares about its pixels: one record per file, read from its tags, used by every reader.

A GeoTIFF declares (GDAL's tags, read with tifffile): its unit (``value = raw x scale + offset`` per
band, GDAL's exact rule: ``GDAL_METADATA`` items of role ``scale``/``offset``), a no-data value
(``GDAL_NODATA``), a GDAL mask band (an internal mask IFD, or a ``<file>.msk`` sidecar), band names
(GDAL band descriptions; generic ones such as ``"Band 1"`` say nothing) and its georeference; other
GDAL rasters declare the same, as GDAL reads them (rasterio). An HDF5 dataset declares its unit with
the CF attributes ``scale_factor``/``add_offset``.
:func:`read_declared` builds the record once per file; the in-memory readers (:mod:`.geotiff`,
:mod:`.results`, :mod:`.scenes`) and the window readers (:mod:`.windows`) apply it alike.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError

__all__ = ["Declared", "GeoInfo", "band_order", "check_unmasked", "count_masked", "is_mask_page", "quiet_tifffile",
           "read_declared", "tiff_declared"]

_TIFF_SUFFIXES = (".tif", ".tiff")
_ARRAYS = (".npy", ".npz", ".mat", ".h5", ".hdf5")
#: Band descriptions that name no band: empty, or a number with an optional generic word ("Band 1", "b3", "4").
_GENERIC = re.compile(r"^\s*(((band|b|layer|channel|ch)[\s_#-]*)?\d+)?\s*$", re.IGNORECASE)


@contextlib.contextmanager
def quiet_tifffile() -> Iterator[None]:
    """Silence tifffile's log messages (it logs broken files at ERROR level) for the duration of a read."""
    log = logging.getLogger("tifffile")
    level = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        log.setLevel(level)


@dataclasses.dataclass(frozen=True)
class GeoInfo:
    """What a TIFF's tags say about its grid and no-data value."""

    crs: str | None = None  #: "EPSG:<code>", or a description of a user-defined CRS
    transform: tuple[float, ...] | None = None  #: (a, b, c, d, e, f): x = a*col + b*row + c, y = d*col + e*row + f
    nodata: float | None = None  #: GDAL_NODATA, in stored units


@dataclasses.dataclass(frozen=True)
class Declared:
    """What one file declares about its pixels (empty: it declares nothing)."""

    source: str = ""  #: the file's name, for messages
    geo: GeoInfo = GeoInfo()
    scales: tuple[float, ...] = ()  #: per GDAL band, value = raw x scale + offset; () when not declared
    offsets: tuple[float, ...] = ()
    names: tuple[str, ...] = ()  #: band names, only when every band has a distinct, non-generic one
    mask: str | None = None  #: where a GDAL mask band is ("internal mask", "<file>.msk"); None without one

    @property
    def unit(self) -> str | None:
        """``"raw x S + O"`` (one band) or per-band lists when a scale or offset is declared, else None."""
        def text(v: tuple[float, ...]) -> str:
            return f"{v[0]:g}" if len(set(v)) == 1 else "[" + ", ".join(f"{x:g}" for x in v) + "]"

        return f"raw x {text(self.scales)} + {text(self.offsets)}" if self.scales else None

    def values(self, array: np.ndarray, band_axis: int = -1) -> np.ndarray:
        """GDAL's rule, ``raw x scale + offset`` per band along ``band_axis`` (float64); ``array`` without tags."""
        if not self.scales:
            return array
        scales, offsets = np.asarray(self.scales), np.asarray(self.offsets)
        arr = np.asarray(array, dtype=np.float64)
        if len(set(self.scales)) == 1 and len(set(self.offsets)) == 1:
            return arr * scales[0] + offsets[0]
        if arr.ndim < 3 or arr.shape[band_axis] != scales.size:
            raise DataError(f"{self.source}: declares {scales.size} per-band scales/offsets for an array of "
                            f"shape {arr.shape}; store them on its GDAL bands")
        shape = [1] * arr.ndim
        shape[band_axis] = scales.size
        return arr * scales.reshape(shape) + offsets.reshape(shape)


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


def _float(text: object) -> float | None:
    try:
        return float(str(text).strip().strip("\x00"))
    except ValueError:
        return None


def is_mask_page(page: Any) -> bool:
    """Whether a TIFF page is a GDAL mask IFD (NewSubfileType bit 4: FILETYPE_MASK)."""
    return bool(int(getattr(page, "subfiletype", 0) or 0) & 4)


def _record(source: str, geo: GeoInfo, scales: Sequence[float], offsets: Sequence[float], names: Sequence[str],
            mask: str | None) -> Declared:
    """A record from GDAL's per-band values (an identity scale/offset and generic or repeated names say nothing)."""
    unit = any(v != 1.0 for v in scales) or any(v != 0.0 for v in offsets)
    named = not any(_GENERIC.match(n) for n in names) and len({n.casefold() for n in names}) == len(names)
    return Declared(source, geo, tuple(scales) if unit else (), tuple(offsets) if unit else (),
                    tuple(names) if named else (), mask)


def _gdal_items(page: Any, bands: int) -> tuple[list[float], list[float], list[str]]:
    """Per-band scales, offsets and names of a page's GDAL_METADATA XML (tag 42112)."""
    tag = page.tags.get(42112)
    scale, offset, names = [1.0] * bands, [0.0] * bands, [""] * bands
    if tag is not None:
        try:
            root = ET.fromstring(str(tag.value).strip().strip("\x00"))
        except ET.ParseError:
            root = ET.Element("none")
        for item in root.iter("Item"):
            role, sample = item.get("role"), item.get("sample") or ""
            band = int(sample) if sample.isdigit() else bands
            if role not in ("scale", "offset", "description") or band >= bands:
                continue
            if role == "description":
                names[band] = (item.text or "").strip()
            elif (value := _float(item.text)) is not None:
                (scale if role == "scale" else offset)[band] = value
    return scale, offset, names


def tiff_declared(tif: Any, path: str) -> Declared:
    """The record of an open ``tifffile.TiffFile`` (what :func:`read_declared` gives for its path)."""
    pages = [p for p in tif.pages if not getattr(p, "is_reduced", False)]
    page = pages[0]
    nodata_tag = page.tags.get(42113)  # GDAL_NODATA
    nodata = None if nodata_tag is None else _float(nodata_tag.value)
    try:
        meta = tif.geotiff_metadata if getattr(tif, "is_geotiff", False) else None
    except Exception:  # noqa: BLE001 - broken GeoTIFF keys: no georeference to compare
        meta = None
    geo = GeoInfo(_crs(meta), _transform(meta), nodata) if meta else GeoInfo(nodata=nodata)
    mask = "internal mask" if any(is_mask_page(p) for p in pages[1:]) else \
        f"{Path(path).name}.msk" if os.path.isfile(path + ".msk") else None
    return _record(Path(path).name, geo, *_gdal_items(page, int(page.samplesperpixel)), mask)


def _dataset_declared(path: str) -> Declared:
    """The record of another GDAL raster (VRT, JPEG 2000, a remote file, ...), as GDAL reads it (rasterio)."""
    import rasterio
    from rasterio.enums import MaskFlags

    try:
        with rasterio.open(path) as ds:
            flags = set(ds.mask_flag_enums[0]) if ds.count else set()
            epsg = ds.crs.to_epsg() if ds.crs else None  # a user-defined CRS is not compared (tags differ in form)
            crs = None if epsg is None else f"EPSG:{epsg}"
            geo = GeoInfo(crs, None if ds.transform.is_identity else tuple(ds.transform)[:6], ds.nodata)
            mask = "GDAL mask band" if flags == {MaskFlags.per_dataset} else None
            return _record(Path(path).name, geo, ds.scales, ds.offsets, [d or "" for d in ds.descriptions], mask)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None


@functools.lru_cache(maxsize=64)
def _read_cached(path: str, stamp: tuple[int, int]) -> Declared:
    import tifffile

    try:
        with quiet_tifffile(), tifffile.TiffFile(path) as tif:
            return tiff_declared(tif, path)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read TIFF {path}: {type(exc).__name__}: {exc}") from None


def read_declared(path: str | os.PathLike[str], key: str | None = None) -> Declared:
    """What a file declares about its pixels, from its tags (no pixels are read)."""
    path = os.fspath(path)
    if key is not None and Path(path).suffix.lower() in (".h5", ".hdf5"):
        return _h5_declared(path, key)
    suffix = Path(path).suffix.lower()
    if suffix in _TIFF_SUFFIXES and os.path.exists(path):
        st = os.stat(path)
        return _read_cached(path, (st.st_mtime_ns, st.st_size))
    if suffix in _ARRAYS or importlib.util.find_spec("rasterio") is None:
        return Declared(Path(path).name)
    return _dataset_declared(path)


def _h5_declared(path: str, key: str) -> Declared:
    """The CF ``scale_factor``/``add_offset`` attributes of an HDF5 dataset (one value, or one per band)."""
    import h5py

    try:
        with h5py.File(path, "r") as handle:
            scale, offset = (np.atleast_1d(np.asarray(handle[key].attrs.get(k, v), dtype=np.float64)).ravel()
                             for k, v in (("scale_factor", 1.0), ("add_offset", 0.0)))
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read {key!r} from {path}: {type(exc).__name__}: {exc}") from None
    scale, offset = np.broadcast_arrays(scale, offset)
    return _record(f"{Path(path).name}:{key}", GeoInfo(), [float(v) for v in scale], [float(v) for v in offset], (),
                   None)


def band_order(result: Declared, scene: Declared, *, result_name: str, scene_name: str) -> tuple[int, ...] | None:
    """Indexes that put a result's bands in its scene's order by name (None: nothing to reorder)."""
    if not result.names or not scene.names or len(result.names) != len(scene.names):
        return None  # a band-count mismatch is the shape check's to name
    ours = [n.casefold() for n in result.names]
    if sorted(ours) != sorted(n.casefold() for n in scene.names):
        raise DataError(
            f"{result_name} names its bands {', '.join(result.names)} but {scene_name} names them "
            f"{', '.join(scene.names)}: the result's bands are not the scene's. Write the result with the scene's "
            f"bands (or its band descriptions with the scene's names, in its own order)"
        )
    order = tuple(ours.index(n.casefold()) for n in scene.names)
    return None if order == tuple(range(len(order))) else order


def count_masked(path: str | os.PathLike[str]) -> int:
    """Pixels outside a file's GDAL mask band (0 in the mask), block by block with rasterio, else with tifffile."""
    path = os.fspath(path)
    try:
        import rasterio
    except ImportError:
        rasterio = None
    try:
        if rasterio is not None:
            with rasterio.open(path) as ds:
                return sum(int(np.count_nonzero(ds.dataset_mask(window=w) == 0)) for _, w in ds.block_windows(1))
        import tifffile

        with quiet_tifffile(), tifffile.TiffFile(path + ".msk" if os.path.isfile(path + ".msk") else path) as tif:
            masks = [p for p in tif.pages if is_mask_page(p)] or tif.pages[:1]
            return int(np.count_nonzero(np.asarray(masks[0].asarray()) == 0))
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read the mask band of {path}: {type(exc).__name__}: {exc}") from None


def check_unmasked(path: str | os.PathLike[str], declared: Declared, *, name: str) -> None:
    """Refuse a file whose GDAL mask band leaves pixels out (the indexes cannot); a mask that masks nothing passes."""
    if declared.mask is None:
        return
    count = count_masked(path)
    if count:
        raise DataError(
            f"{name}: {count} pixels are masked out by its GDAL mask band ({declared.mask}); the indexes cannot "
            f"leave pixels out, and would score them as values. Crop the scene and the result to the valid "
            f"window, or fill them (and remove the mask) if scoring the filled values is intended"
        )

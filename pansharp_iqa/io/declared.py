"""What a file declares about its pixels: one record per file, read from its tags, used by every reader.

A GeoTIFF declares, as GDAL reads it (rasterio: its tags and its ``<file>.aux.xml`` sidecar): its unit
(``value = raw x scale + offset`` per band), a no-data value, a GDAL mask band (an internal mask, or a
``<file>.msk`` sidecar), band names (descriptions; generic ones such as ``"Band 1"`` say nothing, a name given
twice is refused) and its georeference (read from the tags with tifffile). Without rasterio the tags are
read with tifffile, and a file with a sidecar is refused (only GDAL reads it). Other GDAL rasters declare
the same (rasterio). An HDF5 dataset declares its unit with the CF attributes ``scale_factor``/``add_offset``.
:func:`read_declared` builds the record once per file; the in-memory readers (:mod:`.geotiff`,
:mod:`.results`, :mod:`.scenes`) and the window readers (:mod:`.windows`) apply it alike, and
:func:`band_order` / :func:`scene_names` put a result's bands in its scene's order by the names declared.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import logging
import os
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError

__all__ = ["Declared", "GeoInfo", "band_order", "check_unmasked", "count_masked", "gdal_declared", "is_mask_page",
           "quiet_tifffile", "read_declared", "scene_names"]

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
    names: tuple[str | None, ...] = ()  #: per band its name (None: none or a generic one); () when none is named
    mask: str | None = None  #: where a GDAL mask band is ("internal mask", "<file>.msk"); None without one
    where: str = ""  #: where the unit, no-data value and names are declared ("GeoTIFF tags of a.tif", "a.tif.aux.xml")

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
            mask: str | None, where: str) -> Declared:
    """A record from GDAL's per-band values (an identity scale/offset and generic names say nothing; a name given
    twice is refused)."""
    unit = any(v != 1.0 for v in scales) or any(v != 0.0 for v in offsets)
    named = tuple(None if _GENERIC.match(n or "") else n.strip() for n in names)
    keys = [n.casefold() for n in named if n is not None]
    twice = sorted({n for n in keys if keys.count(n) > 1})
    if twice:
        raise DataError(f"{source} names two bands {twice[0]!r} ({where}: {list(names)}): a band name says which band "
                        "it is, so each names one band; correct the band descriptions")
    return Declared(source, geo, tuple(scales) if unit else (), tuple(offsets) if unit else (),
                    named if keys else (), mask, where)


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


def _tiff_tags(path: str) -> Declared:
    """What a TIFF's own tags declare (tifffile): its georeference, and GDAL's items without GDAL."""
    import tifffile

    name = Path(path).name
    with quiet_tifffile(), tifffile.TiffFile(path) as tif:
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
            f"{name}.msk" if os.path.isfile(path + ".msk") else None
        return _record(name, geo, *_gdal_items(page, int(page.samplesperpixel)), mask, f"GeoTIFF tags of {name}")


def gdal_declared(ds: Any, name: str, geo: GeoInfo | None = None) -> Declared:
    """The record of an open rasterio dataset: its scales, offsets, no-data value, mask and descriptions as GDAL
    holds them (its tags and ``.aux.xml`` sidecar); ``geo``: the georeference, if read otherwise."""
    from rasterio.enums import MaskFlags

    flags = set(ds.mask_flag_enums[0]) if ds.count else set()
    if geo is None:
        epsg = ds.crs.to_epsg() if ds.crs else None  # a user-defined CRS is not compared (tags differ in form)
        geo = GeoInfo(None if epsg is None else f"EPSG:{epsg}",
                      None if ds.transform.is_identity else tuple(ds.transform)[:6])
    mask = None if flags != {MaskFlags.per_dataset} else \
        f"{name}.msk" if os.path.isfile(f"{ds.name}.msk") else "internal mask"
    return _record(name, dataclasses.replace(geo, nodata=ds.nodata), ds.scales, ds.offsets,
                   [d or "" for d in ds.descriptions], mask, f"GDAL metadata of {name}")


@functools.lru_cache(maxsize=64)
def _read_cached(path: str, stamp: tuple[tuple[int, int], ...]) -> Declared:
    name, sidecar = Path(path).name, path + ".aux.xml"
    tiff = Path(path).suffix.lower() in _TIFF_SUFFIXES
    gdal = importlib.util.find_spec("rasterio") is not None
    try:
        tags = _tiff_tags(path) if tiff else None
        if not gdal:
            if os.path.isfile(sidecar):
                raise DataError(f"{name}: its GDAL sidecar {name}.aux.xml may declare a scale, offset, no-data value "
                                "or band names, which only GDAL reads: install rasterio (pip install "
                                "'pansharp_iqa[scale]'), or write them into the file (gdal_translate)")
            return tags or Declared(name)
        import rasterio

        with warnings.catch_warnings():  # plain TIFFs have no georeference: nothing to say about it
            warnings.filterwarnings("ignore", message=".*geotransform.*")
            with rasterio.open(path) as ds:
                record = gdal_declared(ds, name, tags.geo if tags else None)
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read {'TIFF ' if tiff else ''}{path}: {type(exc).__name__}: {exc}") from None
    own = tags is not None and (tags.scales, tags.offsets, tags.names, tags.geo.nodata) == \
        (record.scales, record.offsets, record.names, record.geo.nodata)
    if tags is not None and not own and os.path.isfile(sidecar):
        _check_sidecar(tags, record, f"{name}.aux.xml")
    return dataclasses.replace(record, where=tags.where if own and tags else
                               f"{name}.aux.xml" if os.path.isfile(sidecar) else record.where)


def _check_sidecar(tags: Declared, gdal: Declared, sidecar: str) -> None:
    """Refuse a sidecar that replaces what the file's own tags declare with another value (GDAL would silently
    take the sidecar's), naming both."""
    pairs = [("scale/offset", tags.unit, gdal.unit) if tags.scales else (None, None, None),
             ("no-data value", tags.geo.nodata, gdal.geo.nodata) if tags.geo.nodata is not None else (None, None, None),
             *(("band names", tags.names, gdal.names) for _ in [0] if any(n is not None for n in tags.names)
               and any(a is not None and b is not None and _key(a) != _key(b)
                       for a, b in zip(tags.names, gdal.names or (None,) * len(tags.names), strict=False)))]
    for what, own, side in pairs:
        if what is not None and own != side and not (isinstance(own, float) and isinstance(side, float)
                                                      and np.isnan(own) and np.isnan(side)):
            raise DataError(f"{tags.source}: its GeoTIFF tags declare the {what} {own} but its sidecar {sidecar} "
                            f"declares {'none' if side is None else side} (GDAL would take the sidecar's): the two "
                            "contradict each other; correct or remove one of them")


def read_declared(path: str | os.PathLike[str], key: str | None = None) -> Declared:
    """What a file declares about its pixels, as GDAL reads it (its tags and sidecar; no pixels are read)."""
    path = os.fspath(path)
    suffix = Path(path).suffix.lower()
    if key is not None and suffix in (".h5", ".hdf5"):
        return _h5_declared(path, key)
    if suffix in _ARRAYS or (suffix not in _TIFF_SUFFIXES and importlib.util.find_spec("rasterio") is None):
        return Declared(Path(path).name)
    stamp = tuple((st.st_mtime_ns, st.st_size) for p in (path, path + ".aux.xml") if os.path.exists(p)
                  for st in [os.stat(p)])
    return _read_cached(path, stamp)


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
                   None, f"h5 attributes scale_factor/add_offset of {Path(path).name}:{key}")


def _key(name: str | None) -> str | None:
    return None if name is None else name.strip().casefold()


def band_order(result: Sequence[str | None], scene: Sequence[str | None], *, result_name: str,
               scene_name: str) -> tuple[int, ...] | None:
    """Indexes that put a result's bands in its scene's order by the names both declare (None: storage order).

    Partial names are used for what they say: named bands go where the scene has them (no case, no surrounding
    spaces), one band left unnamed to the one place left. Refused: a name the scene lacks, names that move
    bands while two or more are left unnamed (their order is open), and a named result beside a scene that
    declares no band (which band is which is open).

    Examples
    --------
    >>> band_order(["Red", "Green", None], ["Blue", "Green", "red"], result_name="r", scene_name="s")
    (2, 1, 0)
    """
    if not any(n is not None for n in result) or (len(result) != len(scene) and len(scene)):
        return None  # nothing to compare (a band-count mismatch is the shape check's to name)
    if not any(n is not None for n in scene):
        raise DataError(f"{result_name} names its bands {', '.join(str(n) for n in result)} but {scene_name} names "
                        "none, so which of its bands is which is open: describe the scene's bands (or declare its "
                        "band_names, or name its sensor), or drop the result's descriptions if it keeps the scene's "
                        "storage order")
    r, s = [_key(n) for n in result], [_key(n) for n in scene]
    where = {n: j for j, n in enumerate(s) if n is not None}
    order: dict[int, int] = {where[n]: i for i, n in enumerate(r) if n in where}
    left_r, left_s = [i for i in range(len(r)) if i not in order.values()], [j for j in range(len(s)) if j not in order]
    stranger = [i for i in left_r if r[i] is not None and all(s[j] is not None for j in left_s)] or \
        [j for j in left_s if s[j] is not None and all(r[i] is not None for i in left_r)]
    if stranger:
        shown = ", ".join(str(n) for n in result)
        raise DataError(f"{result_name} names its bands {shown} but {scene_name} names them "
                        f"{', '.join(str(n) for n in scene)}: the result's bands are not the scene's. Write the result "
                        "with the scene's bands (or its band descriptions with the scene's names, in its own order)")
    if len(left_r) == 1:
        order[left_s[0]] = left_r[0]
    elif left_r and not (all(j == i for j, i in order.items()) and left_r == left_s):
        named = [f"{result[i]} (band {i + 1})" for i in sorted(order.values())]
        raise DataError(f"{result_name} names {len(order)} of its {len(r)} bands ({', '.join(named)}) where "
                        f"{scene_name} has them in another order, which leaves the order of its other {len(left_r)} "
                        "bands open: name every band (or none), so that its bands can be put in the scene's order")
    full = tuple(order.get(j, j) for j in range(len(s)))
    return None if full == tuple(range(len(s))) else full


def scene_names(record: Declared, *, n_bands: int, band_names: Sequence[str] | None = None, sensor: Any = None,
                what: str = "dataset.toml band_names") -> tuple[tuple[str | None, ...], str]:
    """A scene file's band names and where they come from: its own (which must agree with ``band_names``, ``what``;
    partial ones completed by a named ``sensor``'s where that is determined), ``band_names``, else the sensor
    registry's order where a named sensor has ``n_bands`` bands; ``((), "")`` where nothing declares them.

    Examples
    --------
    >>> from pansharp_iqa.sensors import get_sensor
    >>> scene_names(Declared("ms.tif", names=("NIR", None, "Green", "Blue")), n_bands=4, sensor=get_sensor("IKONOS"))
    (('NIR', 'Red', 'Green', 'Blue'), 'ms.tif band names, completed from the sensor registry (IKONOS)')
    """
    own, where = record.names, record.where or f"{record.source} band names"
    registry = tuple(getattr(sensor, "band_names", None) or ()) if not getattr(sensor, "is_generic", True) else ()
    if band_names is not None:
        if own and (len(band_names) != len(own) or any(n is not None and _key(n) != _key(b)
                                                       for n, b in zip(own, band_names, strict=False))):
            raise DataError(f"{what} {list(band_names)} contradicts {record.source}'s band names {list(own)} "
                            f"({where}): the two declare other bands; correct or remove one of them")
        return tuple(band_names), what
    if own and None in own and len(registry) == len(own):
        order = band_order(own, registry, result_name=record.source, scene_name=f"sensor {sensor.name}")
        full = list(registry) if order is None else [registry[order.index(i)] for i in range(len(own))]
        return tuple(full), f"{where}, completed from the sensor registry ({sensor.name})"
    if own:
        return own, where
    if len(registry) == n_bands:
        return registry, f"the sensor registry's order of {sensor.name} ({record.source} names no band)"
    return (), ""


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

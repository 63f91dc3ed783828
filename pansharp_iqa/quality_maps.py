"""Quality maps: where each index's map lies on the evaluated image, and where its values go.

``evaluate(..., maps=True)`` returns, for every requested index that has one (``Index.map`` in
:mod:`pansharp_iqa.indexes.catalog`), its map as the reference code returns it: a block map (one
value per ``block_size`` block of the evaluated image: Q2n, D_lambda, D_s, D_lambda_K, D_lambda_F)
or a pixel map (SAM; on the PAN grid, D_s_R, RQNR and HQNR). Each map is written to a
:class:`MapSink` window by window as it is computed: :class:`ArrayMaps` (the default) assembles
arrays; :class:`GeoTiffMaps` (``maps_to=<folder>``) writes one GeoTIFF per index, georeferenced
like the scene, so that tile-wise evaluations of whole scenes never hold a pixel map in memory.
:class:`MapInfo` says where a map lies (its grid step and origin in the input image's pixels).

References
----------
Arienzo, Vivone, Garzelli, Alparone, Chanussot, IEEE GRSM 10(3), 2022, doi:10.1109/MGRS.2022.3170092
(maps of D_lambda_F, D_s_R, RQNR, HQNR and QNR's D_lambda and D_s). Vivone et al., IEEE GRSM 9(1),
2021, doi:10.1109/MGRS.2020.3019315 (the toolbox's ``q2n`` and ``SAM`` maps).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .indexes.catalog import index_names, map_indexes
from .settings import requested_indexes
from .validation import SettingError, check_flag

__all__ = ["MapInfo", "MapSink", "ArrayMaps", "GeoTiffMaps", "PreviewMaps", "map_infos", "map_sink",
           "MAP_FILE_SUFFIX", "maps_asked", "map_names", "check_map_names"]

#: File name of an index's GeoTIFF map: ``<index>.tif``.
MAP_FILE_SUFFIX = ".tif"


@dataclasses.dataclass(frozen=True)
class MapInfo:
    """Where an index's quality map lies on the evaluated image, and what it holds.

    Parameters
    ----------
    index : str
        The index (``Index.name``).
    shape : (int, int)
        Rows and columns of the map.
    step : int
        Input pixels per map sample along each axis: the block size of a block map, 1 of a pixel map.
    origin : (int, int)
        Row and column of the input image where the map's first sample starts (the reduced
        resolution's border cut; 0 at full resolution).
    unit : str
        Unit of the values (``""``: dimensionless).
    what : str
        One line: what each value is.

    Examples
    --------
    >>> info = MapInfo("Q2n", (3, 4), 32, (20, 20), "", "Q2n of each block")
    >>> info.to_card()["grid"]
    'one value per 32 x 32 pixels from pixel (20, 20) of the input'
    """

    index: str
    shape: tuple[int, int]
    step: int
    origin: tuple[int, int]
    unit: str
    what: str

    def to_card(self) -> dict[str, Any]:
        """The card entry of the map (JSON-serialisable): shape, grid, unit and what the values are.

        Returns
        -------
        dict
        """
        where = f"one value per {self.step} x {self.step} pixels" if self.step > 1 else "one value per pixel"
        return {"shape": list(self.shape), "grid": f"{where} from pixel ({self.origin[0]}, {self.origin[1]}) of the "
                "input", "unit": self.unit or "dimensionless", "what": self.what}


def map_infos(specs: Sequence[Any], shape: tuple[int, int], block_size: int,
              origin: tuple[int, int] = (0, 0)) -> dict[str, MapInfo]:
    """The :class:`MapInfo` of each index's map for an evaluated image of ``shape``.

    Parameters
    ----------
    specs : sequence of Index
        Catalogue indexes with a ``map`` (:mod:`pansharp_iqa.indexes.catalog`).
    shape : (int, int)
        Rows and columns of the evaluated image (pixels).
    block_size : int
        Block side of the block maps (pixels); their last partial blocks are counted, as ``q2n``'s.
    origin : (int, int)
        Where the evaluated image starts in the input (the reduced resolution's border cut).

    Returns
    -------
    dict of str to MapInfo

    Examples
    --------
    >>> from pansharp_iqa.indexes.catalog import get_index
    >>> {k: v.shape for k, v in map_infos([get_index("Q2n"), get_index("SAM")], (70, 64), 32).items()}
    {'Q2n': (3, 2), 'SAM': (70, 64)}
    """
    out = {}
    for spec in specs:
        blocks = spec.map.grid == "blocks"
        step = block_size if blocks else 1
        out[spec.name] = MapInfo(spec.name, (-(-shape[0] // step), -(-shape[1] // step)), step, origin,
                                 spec.map.unit, spec.map.what)
    return out


@runtime_checkable
class MapSink(Protocol):
    """Where quality maps go, window by window (``maps_to=``): opened per map, written per window, closed once.

    Parameters
    ----------
    *args, **kwargs
        None: a protocol is implemented (its three methods), not instantiated.
    """

    def open(self, info: MapInfo) -> None:
        """Prepare a map (called once per map, before its windows).

        Parameters
        ----------
        info : MapInfo
            The map's index, shape and grid.
        """

    def write(self, index: str, rows: tuple[int, int], cols: tuple[int, int], values: np.ndarray) -> None:
        """Store a window of a map.

        Parameters
        ----------
        index : str
            The map's index.
        rows, cols : (int, int)
            The window's rows ``[rows[0], rows[1])`` and columns ``[cols[0], cols[1])`` (map samples).
        values : ndarray
            Its values, ``(rows[1] - rows[0], cols[1] - cols[0])``.
        """

    def close(self) -> dict[str, Any]:
        """Finish every map.

        Returns
        -------
        dict
            What ``result["maps"]`` holds (arrays, file paths, ...), by index.
        """


class ArrayMaps:
    """A :class:`MapSink` that assembles each map as a float64 array (NaN until written).

    Examples
    --------
    >>> sink = ArrayMaps()
    >>> sink.open(MapInfo("SAM", (2, 3), 1, (0, 0), "radians", "angle"))
    >>> sink.write("SAM", (0, 2), (1, 3), np.ones((2, 2)))
    >>> sink.close()["SAM"].tolist()
    [[nan, 1.0, 1.0], [nan, 1.0, 1.0]]
    """

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def open(self, info: MapInfo) -> None:
        """Allocate the map (see :meth:`MapSink.open`).

        Parameters
        ----------
        info : MapInfo
            The map's index, shape and grid.
        """
        self.arrays[info.index] = np.full(info.shape, np.nan)

    def write(self, index: str, rows: tuple[int, int], cols: tuple[int, int], values: np.ndarray) -> None:
        """Copy a window in (see :meth:`MapSink.write`).

        Parameters
        ----------
        index : str
            The map's index.
        rows, cols : (int, int)
            The window's rows and columns (map samples, half-open).
        values : ndarray
            Its values.
        """
        self.arrays[index][rows[0] : rows[1], cols[0] : cols[1]] = values

    def close(self) -> dict[str, Any]:
        """The arrays, by index.

        Returns
        -------
        dict of str to ndarray
        """
        return dict(self.arrays)


class GeoTiffMaps:
    """A :class:`MapSink` that writes each map as ``<folder>/<index>.tif`` (float64, one band), window by window.

    The GeoTIFF has the scene's CRS and the scene's transform moved to the map's origin and scaled
    by its step (a block map's pixel is a block), so it overlays the scene in a GIS. Each file is
    written under a temporary name and renamed when complete (:meth:`close`); :meth:`abort`
    removes them. A file of the folder that the evaluation would write already there is refused before
    any work (:meth:`check_free`, called by :func:`map_sink`): the maps never replace a file they did not
    write, unless ``overwrite``. Needs rasterio (``pip install 'pansharp_iqa[scale]'``).

    Parameters
    ----------
    folder : path-like
        Where the files go (created if missing; a path that is, or lies under, a file is refused).
    like : path-like, optional
        A raster of the scene whose CRS and transform the maps take (the PAN at full resolution,
        the reference at reduced resolution); without it the maps carry no georeference.
    crs, transform : optional
        The scene's CRS (rasterio CRS or ``"EPSG:<code>"``) and affine transform, instead of ``like``.
    names : mapping, optional
        File name (without the suffix) of each index's map (default: the index name).
    compress : str, optional
        GDAL compression (``"deflate"``, ``"zstd"``, ...; with the floating-point predictor). None
        (default): uncompressed, the fastest: a map of float64 values from real scenes compresses by
        about 15 % only (deflate: 0.3 s more CPU per 4 megapixels).
    overwrite : bool, default False
        Replace map files already in the folder (for a folder whose files the caller owns, such as
        ``pansharp-eval``'s ``OUT/maps``, listed in its manifest) instead of refusing them.

    Raises
    ------
    SettingError
        ``folder`` is a file or lies under one; rasterio is missing.

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> sink = GeoTiffMaps(folder)
    >>> sink.open(MapInfo("Q2n", (2, 2), 32, (0, 0), "", "Q2n of each block"))
    >>> sink.write("Q2n", (0, 2), (0, 2), np.eye(2))
    >>> Path(sink.close()["Q2n"]).name
    'Q2n.tif'
    """

    def __init__(self, folder: str | os.PathLike[str], *, like: str | os.PathLike[str] | None = None,
                 crs: Any = None, transform: Any = None, names: Mapping[str, str] | None = None,
                 compress: str | None = None, overwrite: bool = False) -> None:
        try:
            import rasterio  # noqa: F401
        except ImportError:  # pragma: no cover - rasterio is in the test environment
            raise SettingError("maps_to: GeoTIFF maps need rasterio: pip install 'pansharp_iqa[scale]'") from None
        self.folder = Path(folder)
        found = next((p for p in (self.folder, *self.folder.parents) if p.exists()), None)
        if found is not None and not found.is_dir():
            where = "is a file" if found == self.folder else f"lies under the file {found}"
            raise SettingError(f"maps_to: {self.folder} {where}, not a folder: give a folder for the GeoTIFF maps "
                               "(created if missing)")
        self.overwrite = check_flag("overwrite", overwrite)
        self.crs, self.transform = crs, transform
        if like is not None:
            self.crs, self.transform = _georeference(like)
        self.names = dict(names or {})
        self.compress = compress
        self._open: dict[str, tuple[Any, Path, Path]] = {}

    def path_of(self, index: str) -> Path:
        """The final path of an index's map.

        Parameters
        ----------
        index : str
            The map's index.

        Returns
        -------
        Path
        """
        return self.folder / f"{self.names.get(index, index)}{MAP_FILE_SUFFIX}"

    def check_free(self, indexes: Sequence[str]) -> None:
        """Refuse, before any work, a map file of ``indexes`` already in the folder (unless ``overwrite``).

        Parameters
        ----------
        indexes : sequence of str
            The indexes whose maps the evaluation writes.

        Raises
        ------
        SettingError
            One of their files exists: the first is named.
        """
        if self.overwrite:
            return
        there = [self.path_of(i) for i in indexes if self.path_of(i).exists()]
        if there:
            more = f" (and {len(there) - 1} more map file)" if len(there) == 2 else \
                f" (and {len(there) - 1} more map files)" if len(there) > 2 else ""
            raise SettingError(f"maps_to: {there[0]} already exists{more}; the maps never replace a file they did "
                               "not write: choose an empty or new folder, or remove it")

    def open(self, info: MapInfo) -> None:
        """Create the file (under a temporary name) with the map's georeference (see :meth:`MapSink.open`).

        Parameters
        ----------
        info : MapInfo
            The map's index, shape and grid.
        """
        import rasterio
        from rasterio.transform import Affine

        self.folder.mkdir(parents=True, exist_ok=True)
        final = self.path_of(info.index)
        tmp = final.with_name(f".{final.stem}.{os.getpid()}.tmp{MAP_FILE_SUFFIX}")
        h, w = info.shape
        profile: dict[str, Any] = {"driver": "GTiff", "height": h, "width": w, "count": 1, "dtype": "float64",
                                   "BIGTIFF": "IF_SAFER"}
        if self.compress:
            profile.update(compress=self.compress, predictor=3)
        if min(h, w) >= 256:
            profile.update(tiled=True, blockxsize=256, blockysize=256)
        if self.transform is not None:
            base = self.transform if isinstance(self.transform, Affine) else Affine(*tuple(self.transform)[:6])
            profile["transform"] = (base @ Affine.translation(info.origin[1], info.origin[0])
                                    @ Affine.scale(info.step))
        if self.crs is not None:
            profile["crs"] = self.crs
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=rasterio.errors.NotGeoreferencedWarning)
            ds = rasterio.open(tmp, "w", **profile)
        ds.set_band_description(1, info.index)
        ds.update_tags(index=info.index, unit=info.unit or "dimensionless", what=info.what,
                       grid=info.to_card()["grid"])
        self._open[info.index] = (ds, tmp, final)

    def write(self, index: str, rows: tuple[int, int], cols: tuple[int, int], values: np.ndarray) -> None:
        """Write a window (see :meth:`MapSink.write`).

        Parameters
        ----------
        index : str
            The map's index.
        rows, cols : (int, int)
            The window's rows and columns (map samples, half-open).
        values : ndarray
            Its values.
        """
        from rasterio.windows import Window

        ds = self._open[index][0]
        ds.write(np.asarray(values, dtype=np.float64), 1,
                 window=Window(cols[0], rows[0], cols[1] - cols[0], rows[1] - rows[0]))

    def close(self) -> dict[str, Any]:
        """Close every file and move it to its final name.

        Returns
        -------
        dict of str to str
            The paths, by index.
        """
        out = {}
        for index, (ds, tmp, final) in list(self._open.items()):
            ds.close()
            os.replace(tmp, final)
            out[index] = str(final)
            del self._open[index]
        return out

    def abort(self) -> None:
        """Close and remove the unfinished files."""
        for ds, tmp, _ in self._open.values():
            with contextlib.suppress(Exception):
                ds.close()
            tmp.unlink(missing_ok=True)
        self._open.clear()


class PreviewMaps:
    """A :class:`MapSink` that keeps a small preview of each map (for reports), filled window by window.

    Parameters
    ----------
    max_side : int, default 256
        Longer side of a preview (pixels): nearest samples of the map; a smaller map is kept whole.

    Examples
    --------
    >>> sink = PreviewMaps(2)
    >>> sink.open(MapInfo("SAM", (4, 4), 1, (0, 0), "radians", "angle"))
    >>> sink.write("SAM", (0, 4), (0, 4), np.arange(16.0).reshape(4, 4))
    >>> sink.close()["SAM"].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """

    def __init__(self, max_side: int = 256) -> None:
        self.max_side = int(max_side)
        self.previews: dict[str, np.ndarray] = {}
        self._at: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def open(self, info: MapInfo) -> None:
        """Choose the samples of the preview (see :meth:`MapSink.open`).

        Parameters
        ----------
        info : MapInfo
            The map's index, shape and grid.
        """
        h, w = info.shape
        k = max(h, w) / self.max_side if max(h, w) > self.max_side else 1.0
        rows, cols = (np.minimum((np.arange(max(1, round(n / k))) + 0.5) * k, n - 1).astype(np.int64) if k > 1
                      else np.arange(n) for n in (h, w))
        self._at[info.index] = (rows, cols)
        self.previews[info.index] = np.full((rows.size, cols.size), np.nan)

    def write(self, index: str, rows: tuple[int, int], cols: tuple[int, int], values: np.ndarray) -> None:
        """Copy the samples that fall in the window (see :meth:`MapSink.write`).

        Parameters
        ----------
        index : str
            The map's index.
        rows, cols : (int, int)
            The window's rows and columns (map samples, half-open).
        values : ndarray
            Its values.
        """
        at_r, at_c = self._at[index]
        ir = np.nonzero((at_r >= rows[0]) & (at_r < rows[1]))[0]
        ic = np.nonzero((at_c >= cols[0]) & (at_c < cols[1]))[0]
        if ir.size and ic.size:
            self.previews[index][np.ix_(ir, ic)] = np.asarray(values)[np.ix_(at_r[ir] - rows[0], at_c[ic] - cols[0])]

    def close(self) -> dict[str, Any]:
        """The previews, by index.

        Returns
        -------
        dict of str to ndarray
        """
        return dict(self.previews)


def _georeference(path: str | os.PathLike[str]) -> tuple[Any, Any]:
    """The CRS and transform of a raster file (None, None where it has none or cannot be read by GDAL)."""
    import rasterio

    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=rasterio.errors.NotGeoreferencedWarning)
            with rasterio.open(path) as ds:
                return ds.crs, None if ds.transform.is_identity else ds.transform
    except rasterio.errors.RasterioIOError:
        return None, None


def map_sink(maps_to: object, *, like: object = None, names: Sequence[str] = ()) -> MapSink:
    """The sink of ``maps_to``: a :class:`MapSink` as given, a folder for :class:`GeoTiffMaps`, or None for
    :class:`ArrayMaps`.

    Parameters
    ----------
    maps_to : None, path-like or MapSink
        Where the maps go: arrays (None), GeoTIFFs in a folder, or a sink.
    like : object, optional
        The reference input: when it is a GeoTIFF path, the GeoTIFF maps take its georeference.
    names : sequence of str, optional
        The indexes whose maps will be written (:func:`map_names`): a :class:`GeoTiffMaps` sink refuses
        their files already in its folder now (:meth:`GeoTiffMaps.check_free`), before any work.

    Returns
    -------
    MapSink

    Raises
    ------
    SettingError
        ``maps_to`` is something else, a file, or a folder that holds a map file to be written.

    Examples
    --------
    >>> type(map_sink(None)).__name__
    'ArrayMaps'
    """
    if maps_to is None:
        return ArrayMaps()
    if isinstance(maps_to, MapSink):
        sink = maps_to
    elif isinstance(maps_to, (str, os.PathLike)):
        raster = like if isinstance(like, (str, os.PathLike)) and Path(like).suffix.lower() in (".tif", ".tiff") \
            else None
        sink = GeoTiffMaps(maps_to, like=raster)
    else:
        raise SettingError(f"maps_to must be a folder or a MapSink (open/write/close), got {type(maps_to).__name__}")
    if isinstance(sink, GeoTiffMaps):
        sink.check_free(names)
    return sink


def maps_asked(maps: object, maps_to: object) -> bool:
    """Whether quality maps are asked for, from ``maps`` and ``maps_to`` as :func:`~pansharp_iqa.evaluate` takes
    them: ``maps=True``, or ``maps_to`` given with ``maps`` left at its default (None: the folder or sink asks for
    the maps); ``maps=False`` with a ``maps_to`` contradicts itself.

    Parameters
    ----------
    maps : bool or None
        True, False, or None (left at its default).
    maps_to : object
        Where the maps go (None: arrays).

    Returns
    -------
    bool

    Raises
    ------
    SettingError
        ``maps`` is not a bool (numpy's included) or None; ``maps=False`` with a ``maps_to``.

    Examples
    --------
    >>> maps_asked(None, "out/maps"), maps_asked(True, None), maps_asked(None, None), maps_asked(False, None)
    (True, True, False, False)
    """
    asked = None if maps is None else check_flag("maps", maps)
    if asked is False and maps_to is not None:
        raise SettingError(f"maps=False contradicts maps_to={maps_to!r}, which asks for the maps: drop maps=False "
                           "to write them there, or drop maps_to")
    return bool(asked) or maps_to is not None


def map_names(settings: Any) -> tuple[str, ...]:
    """The requested indexes whose quality maps an evaluation with ``settings`` makes (``Index.map`` of the
    protocol's form of each), in catalogue order: the maps (and files) the engines write.

    Parameters
    ----------
    settings : ReducedSettings or FullSettings
        Validated settings (:func:`~pansharp_iqa.settings.full_settings`, ...).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> from pansharp_iqa import full_settings
    >>> map_names(full_settings(sensor="none", ratio=4, indexes=["QNR", "HQNR"]))
    ('HQNR',)
    """
    names = settings.indexes
    return tuple(i.name for i in map_indexes(names, settings.protocol.name) if i.name in names)


def _with_maps(settings: Any) -> list[str]:
    """The indexes with a map that the settings' protocol computes at their resolution (its table and extras)."""
    proto, res, out = settings.protocol, settings.resolution, []
    for name in index_names(res):
        try:
            requested_indexes([name], proto, res)
        except SettingError:
            continue
        if name in (i.name for i in map_indexes([name], proto.name)) and name not in out:
            out.append(name)
    return out


def check_map_names(settings: Any, *, what: str = "maps",
                    fix: str = "request one of them with indexes=, or leave maps off") -> tuple[str, ...]:
    """:func:`map_names`, refused in one line when it is empty (no requested index has a map), before any work.

    Parameters
    ----------
    settings : ReducedSettings or FullSettings
        Validated settings.
    what : str, default "maps"
        The option named by the message (``"--maps"`` in ``pansharp-eval``).
    fix : str
        What the message tells to do where the protocol has indexes with a map (else: leave ``what`` off).

    Returns
    -------
    tuple of str

    Raises
    ------
    SettingError
        None of ``settings.indexes`` has a map: the message names them and those that have one.

    Examples
    --------
    >>> from pansharp_iqa import full_settings
    >>> check_map_names(full_settings(sensor="none", ratio=4, indexes=["QNR", "HQNR"]))
    ('HQNR',)
    >>> check_map_names(full_settings(sensor="none", ratio=4, indexes=["QNR"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.SettingError: maps: none of the requested indexes (QNR) has a quality map; ...
    """
    names = map_names(settings)
    if not names:
        offered = _with_maps(settings)
        where = f"under protocol {settings.protocol.name!r} at {settings.resolution} resolution"
        those = f"those with one {where}: {', '.join(offered)} ({fix})" if offered else \
            f"no index has one {where} (leave {what} off)"
        raise SettingError(f"{what}: none of the requested indexes ({', '.join(settings.indexes)}) has a quality "
                           f"map; {those}")
    return names

"""Images read window by window: one reader per kind of input, windows in the stored data type.

A :class:`Source` is an ``(H, W, B)`` image; ``read(r0, r1, c0, c1)`` returns the window
``[r0:r1, c0:c1]`` as ``(h, w, B)`` in the stored dtype. :class:`MemmapSource` maps an array file
(``.npy``, ``np.memmap``, an uncompressed TIFF without rasterio) for one read at a time, so what was
read leaves the process; :class:`H5Source` slices an HDF5 dataset; :class:`RasterioSource` reads
GeoTIFF (any GDAL raster) windows; :class:`ArraySource` slices arrays and array-likes. Where rows,
columns and bands lie in the stored array (``B x H x W``, Fortran order, singleton axes) is a
:class:`Layout`. Readers are picklable and hold no open file, so they go to process pools and Dask
workers; whichever process reads opens the file.

:func:`open_source` takes the tile engine's inputs as stored (``(H, W)`` or ``(H, W, B)``).
:func:`open_windowed` opens ``pansharp-eval``'s files with the in-memory readers' band-layout rules
(:mod:`.orientation`) and checks the shape from the header. Every reader applies what its file declares
(:mod:`.declared`: its unit, band order; a GDAL mask band that leaves pixels out is refused when it is
opened); the units of a role (its declared scale) are the core's to apply.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import mmap
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..validation import InputError, check_image_shape
from .declared import Declared, band_order, check_unmasked, gdal_declared, is_mask_page, quiet_tifffile, read_declared
from .errors import DataError, NotWindowed, SceneReadError
from .orientation import as_hw, as_hwb, as_pan, match_expected_shape

__all__ = [
    "Layout", "Source", "ArraySource", "MemmapSource", "H5Source", "RasterioSource", "open_source",
    "is_lazy_input", "NotWindowed", "open_windowed",
]

_TIFF = (".tif", ".tiff")
_H5 = (".h5", ".hdf5")


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the rows, columns and bands of an image lie in its stored array."""

    stored_shape: tuple[int, ...]
    axes: tuple[int, int, int | None]

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(H, W, B)``."""
        r, c, b = self.axes
        return self.stored_shape[r], self.stored_shape[c], 1 if b is None else self.stored_shape[b]

    def index(self, rows: slice, cols: slice) -> tuple[slice | int, ...]:
        """The stored array's index of the window ``[rows, cols]``."""
        r, c, b = self.axes
        idx: list[slice | int] = [0] * len(self.stored_shape)
        idx[r], idx[c] = rows, cols
        if b is not None:
            idx[b] = slice(None)
        return tuple(idx)

    def to_hwb(self, window: np.ndarray) -> np.ndarray:
        """A window indexed by :meth:`index` as ``(h, w, B)`` (a view)."""
        kept = [a for a in self.axes if a is not None]
        out = np.transpose(window, [sorted(kept).index(a) for a in kept])
        return out if self.axes[2] is not None else out[:, :, None]


class Source:
    """Base class: a readable ``(H, W, B)`` image."""

    name: str = "image"
    shape: tuple[int, int, int]
    dtype: np.dtype
    kind: str = "source"
    path: str | None = None
    stored_ndim: int = 3
    declared: Declared = Declared()
    band_index: tuple[int, ...] | None = None
    bands_decided: bool = False  #: :meth:`follow_bands` ran with the scene's names (the CLI's): its order stays

    def read(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        """Window ``[r0:r1, c0:c1]`` (half-open pixel ranges inside the image) as an
        ``(r1-r0, c1-c0, B)`` array in ``dtype`` (stored, or float64 after a declared scale/offset)."""
        h, w, b = self.shape
        if not (0 <= r0 <= r1 <= h and 0 <= c0 <= c1 <= w):
            raise ValueError(f"{self.name}: window rows [{r0}, {r1}) cols [{c0}, {c1}) outside {h}x{w}")
        if r0 == r1 or c0 == c1:
            return np.zeros((r1 - r0, c1 - c0, b), dtype=self.dtype)
        window = self.declared.values(self._window(slice(r0, r1), slice(c0, c1)))
        return window if self.band_index is None else window[:, :, list(self.band_index)]

    def _window(self, rows: slice, cols: slice) -> np.ndarray:
        raise NotImplementedError

    def declare(self, declared: Declared) -> None:
        """Apply what the file declares to every window (its scale/offset make the windows float64); a GDAL mask band
        that leaves pixels out is refused."""
        self.declared = declared
        if declared.scales:
            self.dtype = np.dtype(np.float64)
        if declared.mask is not None and self.path is not None:
            check_unmasked(self.path, declared, name=self.label)

    def file_scale(self) -> Any:
        """The multiplier the file declares (GDAL scale, CF ``scale_factor``), per band as read; None: none."""
        own = self.declared.scales
        scales = [own[i] for i in self.band_index or range(len(own))] if own else []
        return None if not scales else scales[0] if len(set(scales)) == 1 else tuple(scales)

    @property
    def label(self) -> str:
        """The role and its file, for messages."""
        return self.name if self.declared.source in ("", self.name) else f"{self.name} ({self.declared.source})"

    def follow_bands(self, scene: Source, names: Sequence[str | None] | None = None) -> None:
        """Return the bands in ``scene``'s order by the names both declare (``names``: the scene's, where they come
        from elsewhere than its file: :func:`.declared.scene_names`)."""
        if names is not None or ((scene.declared.names or self.declared.names) and not self.bands_decided):
            self.band_index = band_order(self.declared.names, scene.declared.names if names is None else names,
                                         result_name=self.label, scene_name=scene.label)
            self.bands_decided = names is not None

    def describe(self) -> str:
        """Short description for cards and messages (reader kind and file, declared unit and band order)."""
        return (self.kind if self.path is None else f"{self.kind}:{self.path}") + self.notes()

    def notes(self) -> str:
        """What the file's record changes: `` (raw x S + O)`` and `` bands [stored order]``, or ``""``."""
        unit = "" if self.declared.unit is None else f" ({self.declared.unit})"
        return unit + ("" if self.band_index is None else f" bands {[i + 1 for i in self.band_index]}")

    def _set_layout(self, layout: Layout | None, shape: Sequence[int]) -> None:
        """The stored ``shape`` read as ``layout`` (default: the stored array is ``(H, W[, B])``)."""
        if layout is None:
            shape = tuple(int(n) for n in shape)
            check_image_shape(self.name, shape)
            layout = Layout(shape, (0, 1, 2 if len(shape) == 3 else None))
        self.layout = layout
        self.shape = layout.shape
        self.stored_ndim = 2 if layout.axes[2] is None else 3


class ArraySource(Source):
    """An ``ndarray`` (pickled whole: fine for tests and small scenes), or any object with ``.shape`` (2-D or 3-D) and
    NumPy slicing (h5py, zarr, ...; picklable to run in other processes)."""

    def __init__(self, array: Any, name: str = "image") -> None:
        self.name, self.array = name, array
        self.kind = "array" if isinstance(array, np.ndarray) else "array-like"
        self.stored_ndim = len(array.shape)
        self.shape = check_image_shape(name, tuple(array.shape))
        self.dtype = np.dtype(getattr(array, "dtype", np.float64))

    def _window(self, rows: slice, cols: slice) -> np.ndarray:
        window = np.asarray(self.array[rows, cols])
        if window.ndim not in (2, 3):
            raise InputError(f"{self.name}: expected an (H, W) or (H, W, B) image, got shape {window.shape}")
        return window if window.ndim == 3 else window[:, :, None]


class MemmapSource(Source):
    """An array stored raw in a file; each read maps the file, copies the window out and unmaps."""

    kind = "memmap"
    path: str

    def __init__(self, path: str | os.PathLike[str], dtype: Any, shape: Sequence[int], offset: int = 0,
                 name: str = "image", *, order: Literal["C", "F"] = "C", layout: Layout | None = None) -> None:
        self.name, self.path = name, os.fspath(path)
        self.dtype, self.offset, self.order = np.dtype(dtype), int(offset), order
        self._set_layout(layout, shape)

    def _window(self, rows: slice, cols: slice) -> np.ndarray:
        try:
            mapped = np.memmap(self.path, dtype=self.dtype, mode="r", offset=self.offset,
                               shape=self.layout.stored_shape, order=self.order)
        except (OSError, ValueError) as exc:
            raise SceneReadError(f"{self.name}: cannot map {self.path}: {exc}") from None
        mm = getattr(mapped, "_mmap", None)
        try:
            return np.array(self.layout.to_hwb(mapped[self.layout.index(rows, cols)]))
        finally:
            del mapped
            if mm is not None:
                mm.close()  # unmap now: the pages leave this process's memory


class H5Source(Source):
    """One dataset of an HDF5 file, sliced with h5py."""

    kind = "h5"

    def __init__(self, path: str | os.PathLike[str], key: str, shape: Sequence[int], dtype: Any,
                 name: str = "image", *, layout: Layout | None = None) -> None:
        self.name, self.path, self.key, self.dtype = name, os.fspath(path), key, np.dtype(dtype)
        self._handle: Any = None
        self._set_layout(layout, shape)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_handle": None}

    def _window(self, rows: slice, cols: slice) -> np.ndarray:
        if self._handle is None:
            import h5py

            self._handle = h5py.File(self.path, "r")
        return self.layout.to_hwb(np.asarray(self._handle[self.key][self.layout.index(rows, cols)]))


# Open rasterio datasets, per thread (GDAL handles are not thread-safe), least recently used first.
_LOCAL = threading.local()
_MAX_OPEN = 16
#: GDAL block cache per process (MB), unless GDAL_CACHEMAX is set: GDAL's default is 5% of the
#: machine's memory per process, which would dominate a worker's footprint on big machines.
GDAL_CACHE_MB = 256


def _forget_open_datasets() -> None:
    # a forked child never shares the parent's file offsets; the parent's files stay open there
    _LOCAL.datasets = OrderedDict()


os.register_at_fork(after_in_child=_forget_open_datasets)


def _open_dataset(path: str) -> Any:
    cache: OrderedDict[str, Any] = getattr(_LOCAL, "datasets", None) or OrderedDict()
    _LOCAL.datasets = cache
    ds = cache.get(path)
    if ds is not None and not ds.closed:
        cache.move_to_end(path)
        return ds
    import rasterio
    from rasterio.env import set_gdal_config

    if "GDAL_CACHEMAX" not in os.environ:
        set_gdal_config("GDAL_CACHEMAX", GDAL_CACHE_MB)
    message = None
    try:
        with warnings.catch_warnings():  # plain TIFFs have no georeference: nothing to say about it
            warnings.filterwarnings("ignore", message=".*geotransform.*")
            ds = rasterio.open(path)
    except Exception as exc:  # noqa: BLE001 - any GDAL failure is this scene's read error
        message = (f"cannot open {path} as a GeoTIFF: {type(exc).__name__}: {str(exc).rstrip('.')}. The file "
                   "is missing, corrupt or not a raster; re-export or re-download it")
    if message is not None:  # raised outside the handler: no unpicklable GDAL exception as context
        raise SceneReadError(message)
    cache[path] = ds
    while len(cache) > _MAX_OPEN:
        cache.popitem(last=False)[1].close()
    return ds


class RasterioSource(Source):
    """A GeoTIFF (or any GDAL raster) read window by window with rasterio."""

    kind = "rasterio"

    def __init__(self, path: str | os.PathLike[str], name: str = "image", dataset: Any = None) -> None:
        self.name, self.path = name, os.fspath(path)
        ds = _open_dataset(self.path)
        if ds.subdatasets:
            # a multi-page TIFF (e.g. tifffile's default for a (B, H, W) stack): GDAL shows page 1 only
            raise SceneReadError(
                f"{name}: {self.path} is a multi-page TIFF ({len(ds.subdatasets)} pages); tile-wise reading "
                "needs one multi-band image (GeoTIFF bands, e.g. tifffile.imwrite(..., "
                "planarconfig='separate') or gdal_translate), or evaluate it in memory"
            )
        self.shape = check_image_shape(name, (ds.height, ds.width, ds.count))
        if len(set(ds.dtypes)) != 1:
            raise SceneReadError(f"{name}: {self.path} mixes band data types {sorted(set(ds.dtypes))}; "
                                 "convert it to one type (e.g. gdal_translate -ot UInt16)")
        self.dtype = np.dtype(ds.dtypes[0])
        self.declare(read_declared(self.path) if dataset is None or os.path.isfile(self.path)
                     else gdal_declared(dataset, Path(self.path).name))  # a dataset of no file (/vsimem/...)

    def _window(self, rows: slice, cols: slice) -> np.ndarray:
        from rasterio.windows import Window

        message = None
        try:
            data = _open_dataset(str(self.path)).read(
                window=Window(cols.start, rows.start, cols.stop - cols.start, rows.stop - rows.start))
        except Exception as exc:  # noqa: BLE001 - truncated/corrupt blocks
            cause = f" ({exc.__cause__})" if exc.__cause__ is not None else ""
            message = (f"{self.name}: cannot read {self.path} (rows {rows.start}:{rows.stop}, cols "
                       f"{cols.start}:{cols.stop}): {type(exc).__name__}: {str(exc).rstrip('.')}{cause}. The file "
                       "is corrupt or truncated; re-export or re-download it")
        if message is not None:  # outside the handler: picklable for Dask (no GDAL context)
            raise SceneReadError(message)
        return np.moveaxis(data, 0, 2)


_LayoutRule = Callable[[tuple[int, ...]], Layout]


def _npy_source(path: str, name: str, layout_of: _LayoutRule | None) -> MemmapSource:
    """A ``.npy`` file's reader, from its header (numpy's own parser; no data are read)."""
    try:
        header = np.lib.format.open_memmap(path, mode="r")
    except Exception as exc:  # noqa: BLE001 - a broken header is this scene's failure
        raise SceneReadError(f"{name}: cannot read {path} as .npy: {type(exc).__name__}: {exc}") from None
    stored, dtype, offset = tuple(header.shape), header.dtype, header.offset
    order: Literal["C", "F"] = "F" if header.flags.f_contiguous and not header.flags.c_contiguous else "C"
    mm = getattr(header, "_mmap", None)
    del header
    if mm is not None:
        mm.close()
    if dtype.kind not in "biuf":
        raise DataError(f"{name}: non-numeric data (dtype {dtype})")
    return MemmapSource(path, dtype, stored, offset, name, order=order, layout=layout_of and layout_of(stored))


def _h5_source(path: str, name: str, layout_of: _LayoutRule | None) -> H5Source:
    """The one image dataset of an HDF5 file, or the one named as a result (``.results.result_key``)."""
    import h5py

    from .arrays import h5_dataset_shapes
    from .results import result_key

    shapes = h5_dataset_shapes(path)
    try:  # the in-memory reader's own choice (one dataset, or a result key; groups included: results/fused)
        key: str | None = next(iter(shapes)) if len(shapes) == 1 else result_key(list(shapes), path)
    except DataError:
        key = None
    if key is None or key not in shapes:
        raise NotWindowed(f"{name}: no single image dataset to read window by window")
    with h5py.File(path, "r") as handle:
        dtype = np.dtype(handle[key].dtype)
    source = H5Source(path, key, shapes[key], dtype, name, layout=layout_of and layout_of(shapes[key]))
    source.declare(read_declared(path, key))
    return source


def _h5_key_source(path: str, key: str, name: str, layout_of: _LayoutRule) -> H5Source:
    """One named dataset of an HDF5 file (a scene bundle's role)."""
    from .arrays import h5_dataset_shapes

    shapes = h5_dataset_shapes(path)
    if key not in shapes:
        raise NotWindowed(f"{name}: no such dataset")
    import h5py

    with h5py.File(path, "r") as handle:
        dtype = np.dtype(handle[key].dtype)
    source = H5Source(path, key, shapes[key], dtype, name, layout=layout_of(shapes[key]))
    source.declare(read_declared(path, key))
    return source


def _tiff_header(path: str, name: str) -> tuple[tuple[int, ...], MemmapSource | None]:
    """A one-image TIFF's shape as GDAL shows it (bands = samples), and its data mapped when they
    lie uncompressed in one piece."""
    import tifffile

    try:
        with quiet_tifffile(), tifffile.TiffFile(path) as tif:
            images = [p for p in tif.pages if not getattr(p, "is_reduced", False) and not is_mask_page(p)]
            if len(images) != 1:
                raise NotWindowed(f"{name} is a multi-page TIFF ({len(images)} pages, a page stack); "
                                  "tile-wise reading needs one multi-band image")
            page = images[0]
            h, w, b = int(page.imagelength), int(page.imagewidth), int(page.samplesperpixel)
            series = tuple(int(n) for n in tif.series[0].shape) if tif.series else ()
            if series not in {(h, w), (h, w, b), (b, h, w)}:
                raise NotWindowed(f"{name}: its series {series} is not its one page {(h, w, b)}")
            # strict=False: two tags of the file, which a broken TIFF may give different lengths
            end = max((o + c for o, c in zip(page.dataoffsets, page.databytecounts, strict=False)), default=0)
            if end > os.path.getsize(path):
                raise DataError(f"cannot read TIFF {path}: the file is truncated (image data up to byte {end})")
            if page.dtype is None or page.dtype.kind not in "biuf":
                raise NotWindowed(f"{name}: TIFF sample format is read whole")
            shaped = tuple(int(n) for n in page.shaped)  # (separate samples, depth, rows, columns, samples)
            layout = Layout(shaped, (2, 3, None if b == 1 else 0 if shaped[0] == b else 4))
            mapped = MemmapSource(path, tif.byteorder + page.dtype.char, shaped, page.dataoffsets[0], name,
                                  layout=layout) if page.is_memmappable and shaped[1] == 1 else None
    except (NotWindowed, DataError):
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read TIFF {path}: {type(exc).__name__}: {exc}") from None
    return ((h, w) if b == 1 else (h, w, b)), mapped


def _tiff_source(path: str, name: str, layout_of: _LayoutRule | None) -> Source:
    """rasterio's reader (with no layout rule: of any GDAL raster, unchecked), or without rasterio
    the TIFF's data mapped when they are uncompressed."""
    rasterio = importlib.util.find_spec("rasterio") is not None
    if rasterio and layout_of is None:
        return RasterioSource(path, name)
    shape, mapped = _tiff_header(path, name)
    if layout_of is not None and layout_of(shape).axes[2] not in (None, 2):
        raise NotWindowed(f"{name}: TIFF layout {shape} is read whole")
    if rasterio:
        return RasterioSource(path, name)
    if mapped is None:
        raise NotWindowed(f"{name}: reading compressed TIFF windows needs rasterio (pip install 'pansharp_iqa[scale]')")
    mapped.declare(read_declared(path))
    return mapped


def _file_source(path: str, name: str, layout_of: _LayoutRule | None) -> Source:
    ext = Path(path).suffix.lower()
    if ext == ".npy":
        return _npy_source(path, name, layout_of)
    if ext in _H5:
        return _h5_source(path, name, layout_of)
    return _tiff_source(path, name, layout_of)


def _is_rasterio_dataset(x: Any) -> bool:
    return (type(x).__module__ or "").startswith("rasterio") and hasattr(x, "read") and hasattr(x, "count")


def open_source(x: Any, name: str = "image") -> Source:
    """A window reader of an input of the tile engine: ``.npy`` paths memory-mapped, ``.h5``/``.hdf5`` paths their
    one image dataset, other paths and rasterio datasets with rasterio (any GDAL raster; without rasterio,
    uncompressed TIFFs memory-mapped), arrays and array-likes sliced.

    Parameters
    ----------
    x : str, os.PathLike, rasterio dataset, h5py dataset, ndarray or array-like
        The image, stored ``(H, W)`` or ``(H, W, B)``; a reader already opened is passed through (renamed).
    name : str
        Its role in messages (``"fused"``, ``"ms"``, ...).

    Returns
    -------
    Source
        A reader with ``shape`` ``(H, W, B)``, ``dtype`` and ``read(r0, r1, c0, c1)``: one window, in the values
        the file declares (its scale/offset applied).

    Raises
    ------
    SceneReadError
        A file that cannot be opened.
    InputError
        An object that is not an image.

    Examples
    --------
    >>> src = open_source(np.zeros((64, 48, 4), dtype=np.uint16), "fused")
    >>> src.shape, src.dtype, src.describe(), src.read(0, 2, 0, 3).shape
    ((64, 48, 4), dtype('uint16'), 'array', (2, 3, 4))
    """
    if isinstance(x, Source):
        x.name = name
        return x
    if isinstance(x, (str, os.PathLike)):
        try:
            return _file_source(os.fspath(x), name, None)
        except NotWindowed as exc:
            raise SceneReadError(str(exc)) from None
    if _is_rasterio_dataset(x):
        return RasterioSource(x.name, name, dataset=x)
    if (type(x).__module__ or "").startswith("h5py") and hasattr(x, "file") and hasattr(x, "attrs"):
        source = H5Source(x.file.filename, x.name, x.shape, x.dtype, name)  # its CF attributes apply too
        source.declare(read_declared(x.file.filename, x.name))
        return source
    if isinstance(x, np.memmap) and getattr(x, "filename", None) and isinstance(x.base, mmap.mmap) \
            and x.flags.c_contiguous:  # a whole mapped file, not a view of one
        return MemmapSource(x.filename, x.dtype, x.shape, x.offset, name)
    if isinstance(x, np.ndarray) or (hasattr(x, "shape") and hasattr(x, "__getitem__")):
        return ArraySource(x, name)
    try:
        return ArraySource(np.asarray(x), name)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{name}: cannot use {type(x).__name__} as an image ({exc})") from None


def is_lazy_input(x: Any) -> bool:
    """Whether an input of :func:`pansharp_iqa.evaluate` is read tile-wise rather than loaded whole.

    Parameters
    ----------
    x : object
        An input image: paths, rasterio datasets, window readers (:func:`open_source`) and non-``ndarray``
        array-likes with ``.shape`` and slicing (h5py, zarr) are read tile-wise; NumPy arrays (``np.memmap``
        included: pass it to the tiled functions explicitly), lists and scalars are not.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_lazy_input("scene.tif"), is_lazy_input(np.zeros((4, 4)))
    (True, False)
    """
    if isinstance(x, (Source, str, os.PathLike)):
        return True
    if isinstance(x, np.ndarray):
        return False
    return _is_rasterio_dataset(x) or (hasattr(x, "__getitem__") and len(getattr(x, "shape", ())) in (2, 3))


def _layout(stored: tuple[int, ...], *, role: str, expected: Sequence[int] | None, name: str,
            spatial: Sequence[int] | None = None) -> Layout:
    """The band layout the in-memory readers (:mod:`.orientation`) give a stored shape, so both paths accept the same
    files, with the same messages for the ones they refuse."""
    strides = [0 if n == 1 else 1 << i for i, n in enumerate(stored)]
    buffer = np.zeros(1 + sum((n - 1) * s for n, s in zip(stored, strides, strict=True)), dtype=np.uint8)
    probe = np.lib.stride_tricks.as_strided(buffer, stored, strides, writeable=False)
    if role == "pan":
        out = as_hw(probe, name=name)
    elif role == "pan-bands":  # several bands in the PAN's place (a sensor with a pan_sensor: Sentinel-2)
        out = as_pan(probe, name=name)
    else:
        out = (as_hwb(probe, name=name, spatial=spatial) if expected is None
               else match_expected_shape(probe, expected, name=name))
    axis = {s: i for i, s in enumerate(strides) if s}
    r, c, *b = (axis.get(s) for s in out.strides)
    if r is None or c is None:
        raise NotWindowed(f"{name}: stored shape {stored} is read whole")
    return Layout(stored, (r, c, b[0] if b else None))


def open_windowed(path: str | os.PathLike[str], *, role: str, expected: Sequence[int] | None = None,
                  key: str | None = None, spatial: Sequence[int] | None = None) -> Source:
    """Open an image file of ``role`` (``"pan"``: (H, W); ``"pan-bands"``: (H, W) or the bands in its place;
    ``"fused"`` shaped as ``expected``) for window reads, checking its shape from the header; ``key``: the dataset
    of an HDF5 file holding several (a scene bundle); ``spatial``: the rows and columns the scene's other images
    give it, where its shape alone does not tell the band axis (:func:`.orientation.as_hwb`)."""
    path = os.fspath(path)
    name, ext = Path(path).name, Path(path).suffix.lower()
    if key is not None:
        return _h5_key_source(path, key, f"{name}:{key}", lambda stored: _layout(
            stored, role=role, expected=expected, name=f"{name}:{key}", spatial=spatial))
    if ext not in (".npy", *_H5, *_TIFF):
        raise NotWindowed(f"{name}: {ext or 'this'} files are read whole")
    return _file_source(path, name, lambda stored: _layout(stored, role=role, expected=expected, name=name,
                                                           spatial=spatial))

"""Readers of image windows: GeoTIFF (rasterio), ``.npy`` / ``np.memmap`` files and array-likes.

Every reader exposes ``shape`` as ``(H, W, B)``, ``dtype``, and ``read(r0, r1, c0, c1)`` returning
the window ``[r0:r1, c0:c1]`` as an ``(h, w, B)`` array in the stored dtype. Readers are picklable
and light: file-backed readers store the path and (re)open the file lazily in whichever process
reads, so the same reader object can be sent to process pools and Dask workers.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from ..validation import InputError, check_image_shape
from .errors import SceneReadError

__all__ = [
    "Source", "ArraySource", "ArrayLikeSource", "MemmapSource", "RasterioSource",
    "open_source", "is_lazy_input",
]

_NPY_SUFFIXES = (".npy",)


class Source:
    """Base class: a readable ``(H, W, B)`` image.

    Attributes
    ----------
    name : str
        Role of the image (``"fused"``, ``"ms"``, ...), used in error messages.
    shape : tuple of int
        ``(H, W, B)`` in pixels and bands.
    dtype : numpy.dtype
        Stored data type.
    """

    name: str = "image"
    shape: tuple[int, int, int]
    dtype: np.dtype
    kind: str = "source"
    #: dimensions of the stored array (2 for an (H, W) array; rasters count as 3)
    stored_ndim: int = 3

    def read(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        """Window ``[r0:r1, c0:c1]`` as an ``(r1-r0, c1-c0, B)`` array (stored dtype).

        Parameters
        ----------
        r0, r1, c0, c1 : int
            Half-open row and column ranges, inside the image (pixels).

        Returns
        -------
        ndarray
        """
        raise NotImplementedError

    def describe(self) -> str:
        """Short description for cards and messages (reader kind and file, if any)."""
        return self.kind

    def _check_window(self, r0: int, r1: int, c0: int, c1: int) -> None:
        h, w = self.shape[:2]
        if not (0 <= r0 < r1 <= h and 0 <= c0 < c1 <= w):
            raise ValueError(f"{self.name}: window rows [{r0}, {r1}) cols [{c0}, {c1}) outside {h}x{w}")


def _as_hwb(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.ndim == 2:
        return arr[:, :, None]
    if arr.ndim != 3:
        raise InputError(f"{name}: expected an (H, W) or (H, W, B) image, got shape {arr.shape}")
    return arr


def _shape3(shape: tuple[int, ...], name: str) -> tuple[int, int, int]:
    return check_image_shape(name, shape)


class ArraySource(Source):
    """An in-memory ``ndarray`` (pickled whole: fine for tests and small scenes).

    Parameters
    ----------
    array : ndarray, shape (H, W) or (H, W, B)
    name : str
    """

    kind = "array"

    def __init__(self, array: np.ndarray, name: str = "image") -> None:
        self.name = name
        self.stored_ndim = np.ndim(array)
        self.array = _as_hwb(np.asarray(array), name)
        self.shape = _shape3(self.array.shape, name)
        self.dtype = self.array.dtype

    def read(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        self._check_window(r0, r1, c0, c1)
        return self.array[r0:r1, c0:c1]


class ArrayLikeSource(Source):
    """Any object with ``.shape`` (2-D or 3-D) and NumPy slicing (h5py, zarr, memmap views...).

    Parameters
    ----------
    obj : array-like
        Sliced as ``obj[r0:r1, c0:c1]``; must be picklable to run in other processes.
    name : str
    """

    kind = "array-like"

    def __init__(self, obj: Any, name: str = "image") -> None:
        self.name = name
        self.obj = obj
        self.stored_ndim = len(obj.shape)
        self.shape = _shape3(tuple(obj.shape), name)
        self.dtype = np.dtype(getattr(obj, "dtype", np.float64))

    def read(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        self._check_window(r0, r1, c0, c1)
        return _as_hwb(np.asarray(self.obj[r0:r1, c0:c1]), self.name)


class MemmapSource(Source):
    """A raw array file mapped with ``np.memmap`` (e.g. an ``.npy`` file opened with ``mmap_mode``).

    Parameters
    ----------
    filename : str
        Path of the file.
    dtype : numpy dtype
    shape : tuple of int
        ``(H, W)`` or ``(H, W, B)``, C order.
    offset : int
        Byte offset of the data in the file.
    name : str
    """

    kind = "memmap"

    def __init__(self, filename: str, dtype: Any, shape: tuple[int, ...], offset: int = 0,
                 name: str = "image") -> None:
        self.name = name
        self.filename = os.fspath(filename)
        self.dtype = np.dtype(dtype)
        self.file_shape = tuple(int(s) for s in shape)
        self.stored_ndim = len(self.file_shape)
        self.shape = _shape3(self.file_shape, name)
        self.offset = int(offset)
        self._map: np.ndarray | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_map"] = None
        return state

    def _array(self) -> np.ndarray:
        if self._map is None:
            try:
                self._map = np.memmap(self.filename, dtype=self.dtype, mode="r", shape=self.file_shape,
                                      offset=self.offset)
            except (OSError, ValueError) as exc:
                raise SceneReadError(f"{self.name}: cannot map {self.filename}: {exc}") from None
        return self._map

    def read(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        self._check_window(r0, r1, c0, c1)
        return _as_hwb(np.array(self._array()[r0:r1, c0:c1]), self.name)

    def describe(self) -> str:
        return f"memmap:{self.filename}"


# Open rasterio datasets, per thread (GDAL handles are not thread-safe), least recently used first.
_LOCAL = threading.local()
_MAX_OPEN = 16


def forget_open_datasets() -> None:
    """Drop this thread's cached dataset handles (in a freshly forked worker: never share the
    parent's file offsets), without closing the parent's files."""
    _LOCAL.datasets = OrderedDict()


#: GDAL block cache per process (MB), unless GDAL_CACHEMAX is set: GDAL's default is 5% of the
#: machine's memory per process, which would dominate a worker's footprint on big machines.
GDAL_CACHE_MB = 256
_CACHE_BOUNDED = False


def _bound_gdal_cache() -> None:
    global _CACHE_BOUNDED
    if not _CACHE_BOUNDED:
        if "GDAL_CACHEMAX" not in os.environ:
            from rasterio.env import set_gdal_config

            set_gdal_config("GDAL_CACHEMAX", GDAL_CACHE_MB)
        _CACHE_BOUNDED = True


def _open_dataset(path: str) -> Any:
    cache: OrderedDict[str, Any] | None = getattr(_LOCAL, "datasets", None)
    if cache is None:
        cache = _LOCAL.datasets = OrderedDict()
    ds = cache.get(path)
    if ds is not None and not ds.closed:
        cache.move_to_end(path)
        return ds
    import rasterio

    _bound_gdal_cache()
    message = None
    try:
        ds = rasterio.open(path)
    except Exception as exc:  # noqa: BLE001 - any GDAL failure is this scene's read error
        message = (f"cannot open {path} as a GeoTIFF: {type(exc).__name__}: {str(exc).rstrip('.')}. The file "
                   "is missing, corrupt or not a raster; re-export or re-download it")
    if message is not None:  # raised outside the handler: no unpicklable GDAL exception as context
        raise SceneReadError(message)
    cache[path] = ds
    while len(cache) > _MAX_OPEN:
        _, old = cache.popitem(last=False)
        old.close()
    return ds


class RasterioSource(Source):
    """A GeoTIFF (or any GDAL raster) read window by window with rasterio.

    Parameters
    ----------
    path : path-like
        Raster file; bands are GDAL bands (stored ``(B, H, W)``, returned ``(h, w, B)``).
    name : str

    Raises
    ------
    SceneReadError
        The file cannot be opened.
    """

    kind = "rasterio"

    def __init__(self, path: str | os.PathLike[str], name: str = "image") -> None:
        self.name = name
        self.path = os.fspath(path)
        ds = _open_dataset(self.path)
        if ds.subdatasets:
            # a multi-page TIFF (e.g. tifffile's default for a (B, H, W) stack): GDAL shows page 1 only
            raise SceneReadError(
                f"{name}: {self.path} is a multi-page TIFF ({len(ds.subdatasets)} pages); tile-wise reading "
                "needs one multi-band image (GeoTIFF bands, e.g. tifffile.imwrite(..., "
                "planarconfig='separate') or gdal_translate), or evaluate it in memory"
            )
        self.shape = _shape3((ds.height, ds.width, ds.count), name)
        dtypes = set(ds.dtypes)
        if len(dtypes) != 1:
            raise SceneReadError(f"{name}: {self.path} mixes band data types {sorted(dtypes)}; "
                                 "convert it to one type (e.g. gdal_translate -ot UInt16)")
        self.dtype = np.dtype(ds.dtypes[0])

    def read(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        self._check_window(r0, r1, c0, c1)
        from rasterio.windows import Window

        ds = _open_dataset(self.path)
        message = None
        try:
            data = ds.read(window=Window(c0, r0, c1 - c0, r1 - r0))
        except Exception as exc:  # noqa: BLE001 - truncated/corrupt blocks
            cause = f" ({exc.__cause__})" if exc.__cause__ is not None else ""
            message = (f"{self.name}: cannot read {self.path} (rows {r0}:{r1}, cols {c0}:{c1}): "
                       f"{type(exc).__name__}: {str(exc).rstrip('.')}{cause}. The file is corrupt or "
                       "truncated; re-export or re-download it")
        if message is not None:  # outside the handler: picklable for Dask (no GDAL context)
            raise SceneReadError(message)
        return np.moveaxis(data, 0, 2)

    def describe(self) -> str:
        return f"rasterio:{self.path}"


def _is_rasterio_dataset(x: Any) -> bool:
    mod = type(x).__module__ or ""
    return mod.startswith("rasterio") and hasattr(x, "read") and hasattr(x, "count")


def _whole_memmap(x: Any) -> bool:
    return (
        isinstance(x, np.memmap)
        and getattr(x, "filename", None)
        and isinstance(x.base, mmap.mmap)
        and x.flags.c_contiguous
    )


def open_source(x: Any, name: str = "image") -> Source:
    """Wrap an input in a window reader.

    Parameters
    ----------
    x : path-like, rasterio dataset, ndarray, np.memmap, array-like or Source
        Paths ending in ``.npy`` are memory-mapped; other paths are opened with rasterio
        (GeoTIFF and any GDAL raster).
    name : str
        Role of the image for error messages.

    Returns
    -------
    Source

    Raises
    ------
    SceneReadError
        A file that cannot be opened.
    InputError
        An object that is not an image.
    """
    if isinstance(x, Source):
        x.name = name
        return x
    if isinstance(x, (str, os.PathLike)):
        path = os.fspath(x)
        if path.lower().endswith(_NPY_SUFFIXES):
            try:
                arr = np.load(path, mmap_mode="r")
            except Exception as exc:  # noqa: BLE001
                raise SceneReadError(f"{name}: cannot read {path} as .npy: {type(exc).__name__}: {exc}") from None
            if not _whole_memmap(arr):
                return ArraySource(np.asarray(arr), name)
            return MemmapSource(path, arr.dtype, arr.shape, arr.offset, name)
        return RasterioSource(path, name)
    if _is_rasterio_dataset(x):
        return RasterioSource(x.name, name)
    if _whole_memmap(x):
        return MemmapSource(x.filename, x.dtype, x.shape, x.offset, name)
    if isinstance(x, np.ndarray):
        return ArraySource(x, name)
    if hasattr(x, "shape") and hasattr(x, "__getitem__"):
        return ArrayLikeSource(x, name)
    try:
        return ArraySource(np.asarray(x), name)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{name}: cannot use {type(x).__name__} as an image ({exc})") from None


def is_lazy_input(x: Any) -> bool:
    """Whether an input should be evaluated tile-wise rather than loaded whole.

    Parameters
    ----------
    x : object
        An image argument of ``evaluate_reduced`` / ``evaluate_full``.

    Returns
    -------
    bool
        True for paths (``str``/``os.PathLike``), rasterio datasets, :class:`Source` readers and
        non-``ndarray`` array-likes with ``.shape`` and slicing (h5py/zarr datasets...); False for
        NumPy arrays (``np.memmap`` included: pass it to the tiled functions explicitly), lists and
        scalars.
    """
    if isinstance(x, (Source, str, os.PathLike)):
        return True
    if isinstance(x, np.ndarray):
        return False
    if _is_rasterio_dataset(x):
        return True
    return hasattr(x, "shape") and hasattr(x, "__getitem__") and len(getattr(x, "shape", ())) in (2, 3)

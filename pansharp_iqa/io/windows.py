"""Images read window by window, never whole: ``.npy``, HDF5 and GeoTIFF files.

:func:`open_windowed` reads only a file's header (shape, data type, band layout) and returns a
:class:`WindowedImage`: an ``(H, W, B)`` (or ``(H, W)`` for a PAN) array-like whose slices
``img[r0:r1, c0:c1]`` read that window from disk and return it as float64 in digital numbers
(stored values times the declared scale, exactly as the in-memory readers of :mod:`.scenes` and
:mod:`.results` do). The tile-wise engine (:mod:`pansharp_iqa.tiled`) accepts such array-likes,
so a scene of any size is evaluated with memory bounded by the tile size.

* ``.npy``: memory-mapped for the duration of one read only (the pages leave the process when
  the window is copied), any band layout (``H x W x B`` or ``B x H x W``), C or Fortran order;
* HDF5 (``.h5``/``.hdf5``, results only): one dataset, sliced with h5py;
* GeoTIFF: through :func:`pansharp_iqa.tiled.open_source` (rasterio, extra ``scale``); one
  multi-band image, not a page stack.

:func:`window_stats` streams a file once in strips for the value checks of :mod:`.scale`.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..validation import ImageFacts, facts_from_sums, grid_band_sums, sample_step

from .errors import DataError
from .geotiff import check_nodata_count, quiet_tifffile, read_geoinfo
from .orientation import as_hw, as_hwb, match_expected_shape

__all__ = ["NotWindowed", "WindowStats", "WindowedImage", "open_windowed", "window_stats"]

_TIFF = (".tif", ".tiff")
_H5 = (".h5", ".hdf5")


class NotWindowed(Exception):
    """The file cannot be read window by window (its reason is the message); read it whole."""


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where the rows, columns and bands of the image are in the stored array."""

    stored_shape: tuple[int, ...]
    #: stored axes holding (rows, columns, bands); bands None for a 2-D image
    axes: tuple[int, int, int | None]


def _kept_axes(stored: tuple[int, ...]) -> list[int]:
    """Stored axes left by :mod:`.orientation`'s squeeze of singleton axes beyond 3-D."""
    axes = list(range(len(stored)))
    while len(axes) > 3 and stored[axes[0]] == 1:
        axes.pop(0)
    while len(axes) > 3 and stored[axes[-1]] == 1:
        axes.pop()
    return axes


def _layout(stored: tuple[int, ...], *, role: str, expected: Sequence[int] | None, name: str) -> _Layout:
    """The band layout the in-memory readers would give, found on a zero-stride stand-in array.

    The in-memory readers' own rules (:mod:`.orientation`) decide, so both paths accept the same
    files, with the same messages for the ones they refuse.
    """
    probe = np.broadcast_to(np.zeros((), dtype=np.uint8), stored)  # no memory, any shape
    if role == "pan":
        as_hw(probe, name=name)
        kept = [i for i, n in enumerate(stored) if n != 1]
        if len(kept) != 2:
            raise NotWindowed(f"{name}: stored shape {stored} is read whole")
        return _Layout(stored, (kept[0], kept[1], None))
    out = as_hwb(probe, name=name) if expected is None else match_expected_shape(probe, expected, name=name)
    kept = _kept_axes(stored)
    if len(kept) == 2:
        return _Layout(stored, (kept[0], kept[1], None))
    if len(kept) != 3:
        raise NotWindowed(f"{name}: stored shape {stored} is read whole")
    if out.shape == tuple(stored[i] for i in kept):
        return _Layout(stored, (kept[0], kept[1], kept[2]))
    return _Layout(stored, (kept[1], kept[2], kept[0]))  # stored band-first


@dataclasses.dataclass
class WindowedImage:
    """An image file read window by window, in digital numbers.

    Use :func:`open_windowed` to make one. ``img[r0:r1, c0:c1]`` (steps of 1) reads rows
    ``r0:r1`` and columns ``c0:c1`` from the file and returns them as float64 DN, shape
    ``(r1-r0, c1-c0, B)`` (``(r1-r0, c1-c0)`` for a 2-D image). Picklable: open handles are
    dropped and reopened by whichever process reads.

    Attributes
    ----------
    path : str
        The file.
    fmt : str
        ``"npy"``, ``"h5"`` or ``"tiff"``.
    shape : tuple of int
        ``(H, W, B)``, or ``(H, W)`` for a PAN.
    stored_dtype : numpy.dtype
        Data type in the file.
    multiplier : float
        Stored value to DN (the declared scale).
    key : str or None
        HDF5 dataset name.
    """

    path: str
    fmt: str
    shape: tuple[int, ...]
    stored_dtype: np.dtype
    multiplier: float
    layout: _Layout
    key: str | None = None
    fortran: bool = False
    offset: int = 0
    _handle: Any = dataclasses.field(default=None, repr=False, compare=False)

    #: values are returned as float64 DN
    dtype = np.dtype(np.float64)

    @property
    def ndim(self) -> int:
        """2 for a PAN, else 3."""
        return len(self.shape)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_handle"] = None
        return state

    def describe(self) -> str:
        """``"<fmt>:<path>"`` plus the multiplier when it is not 1."""
        scale = "" if self.multiplier == 1.0 else f" x {self.multiplier:g}"
        return f"{self.fmt}:{self.path}{scale}"

    def read_stored(self, key: Any) -> np.ndarray:
        """The window ``img.read_stored[r0:r1, c0:c1]``-style, in the stored dtype and units.

        Parameters
        ----------
        key : tuple of slice
            ``(slice(r0, r1), slice(c0, c1))``.

        Returns
        -------
        numpy.ndarray
            ``(h, w[, B])`` as stored (no scale applied).
        """
        rows, cols = _window_slices(key, self.shape)
        raw = np.asarray(self._read(rows, cols))
        return raw[:, :, None] if raw.ndim < len(self.shape) else raw

    def __getitem__(self, key: Any) -> np.ndarray:
        raw = self.read_stored(key)
        out = np.asarray(raw, dtype=np.float64)
        if self.multiplier != 1.0:
            out = out * self.multiplier
        return np.ascontiguousarray(out)

    def _stored_index(self, rows: slice, cols: slice) -> tuple[slice | int, ...]:
        r_ax, c_ax, b_ax = self.layout.axes
        idx: list[slice | int] = [0] * len(self.layout.stored_shape)  # dropped singleton axes
        idx[r_ax], idx[c_ax] = rows, cols
        if b_ax is not None:
            idx[b_ax] = slice(None)
        return tuple(idx)

    def _to_hwb(self, window: np.ndarray) -> np.ndarray:
        """Stored-order window (dropped axes indexed away) to (rows, cols[, bands])."""
        present = sorted(a for a in self.layout.axes if a is not None)
        order = [present.index(a) for a in self.layout.axes if a is not None]
        return np.transpose(window, order)

    def _read(self, rows: slice, cols: slice) -> np.ndarray:
        if self.fmt == "npy":
            mapped = np.memmap(self.path, dtype=self.stored_dtype, mode="r", offset=self.offset,
                               shape=self.layout.stored_shape, order="F" if self.fortran else "C")
            try:
                return np.array(self._to_hwb(mapped[self._stored_index(rows, cols)]))
            finally:
                mm = getattr(mapped, "_mmap", None)
                del mapped
                if mm is not None:
                    mm.close()  # unmap now: the pages leave this process's memory
        if self.fmt == "h5":
            if self._handle is None:
                import h5py

                self._handle = h5py.File(self.path, "r")
            return self._to_hwb(np.asarray(self._handle[self.key][self._stored_index(rows, cols)]))
        with warnings.catch_warnings():  # plain TIFFs have no georeference: nothing to say about it
            warnings.filterwarnings("ignore", message=".*geotransform.*")
            if self._handle is None:
                from pansharp_iqa.tiled import open_source

                self._handle = open_source(self.path, name=Path(self.path).name)
            window = self._handle.read(rows.start, rows.stop, cols.start, cols.stop)
        return window[:, :, 0] if len(self.shape) == 2 else window


def _window_slices(key: Any, shape: tuple[int, ...]) -> tuple[slice, slice]:
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) > 2 or not all(isinstance(k, slice) for k in key):
        raise TypeError("windowed images support img[r0:r1, c0:c1] only")
    key = key + (slice(None),) * (2 - len(key))
    out = []
    for k, n in zip(key, shape[:2]):
        start, stop, step = k.indices(n)
        if step != 1:
            raise TypeError("windowed images support steps of 1 only")
        out.append(slice(start, max(start, stop)))
    return out[0], out[1]


def _npy_header(path: str) -> tuple[tuple[int, ...], np.dtype, bool, int]:
    try:
        with open(path, "rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
            else:
                raise NotWindowed(f"{path}: .npy format version {version} is read whole")
            offset = handle.tell()
        size = os.path.getsize(path)
    except NotWindowed:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken header is the scene's failure
        raise DataError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    dtype = np.dtype(dtype)
    if dtype.hasobject or dtype.kind not in "biuf":
        raise DataError(f"{Path(path).name}: non-numeric data (dtype {dtype})")
    if offset + int(np.prod(shape)) * dtype.itemsize > size:
        raise DataError(f"cannot read {path}: the file is truncated ({size} bytes for shape {shape}, {dtype})")
    return tuple(int(n) for n in shape), dtype, bool(fortran), int(offset)


def _h5_dataset(path: str, key: str | None) -> tuple[str, tuple[int, ...], np.dtype]:
    from .arrays import h5_dataset_shapes
    from .results import result_key

    shapes = h5_dataset_shapes(path)
    if key is None:
        try:  # the in-memory reader's own choice (groups included: results/fused)
            key = result_key(list(shapes), path)
        except DataError:
            key = None
    if key is None or key not in shapes:
        raise NotWindowed(f"{Path(path).name}: no single image dataset to read window by window")
    import h5py

    with h5py.File(path, "r") as handle:
        dtype = np.dtype(handle[key].dtype)
    return key, shapes[key], dtype


def _tiff_header(path: str) -> tuple[tuple[int, ...], np.dtype]:
    """(H, W[, B]) and data type of a one-image TIFF, as GDAL shows it (bands = samples)."""
    try:
        import rasterio  # noqa: F401 - the windows are read with it
    except ImportError:
        raise NotWindowed("reading GeoTIFF windows needs rasterio (pip install 'pansharp_iqa[scale]')") from None
    import tifffile

    try:
        with quiet_tifffile(), tifffile.TiffFile(path) as tif:
            images = [p for p in tif.pages if not getattr(p, "is_reduced", False)]  # overviews aside
            if len(images) != 1:
                raise NotWindowed(f"{Path(path).name} is a multi-page TIFF ({len(images)} pages, a page stack); "
                                  "tile-wise reading needs one multi-band image")
            page = images[0]
            h, w, b = int(page.imagelength), int(page.imagewidth), int(page.samplesperpixel)
            dtype = np.dtype(page.dtype) if page.dtype is not None else None
            series = tuple(int(n) for n in tif.series[0].shape) if tif.series else ()
            if series not in {(h, w), (h, w, b), (b, h, w)}:
                raise NotWindowed(f"{Path(path).name}: its series {series} is not its one page {(h, w, b)}")
            end = max((o + c for o, c in zip(page.dataoffsets, page.databytecounts)), default=0)
            if end > os.path.getsize(path):
                raise DataError(f"cannot read TIFF {path}: the file is truncated (image data up to byte {end})")
    except (NotWindowed, DataError):
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read TIFF {path}: {type(exc).__name__}: {exc}") from None
    if dtype is None or dtype.kind not in "biuf":
        raise NotWindowed(f"{Path(path).name}: TIFF sample format is read whole")
    return ((h, w) if b == 1 else (h, w, b)), dtype


def open_windowed(
    path: str | os.PathLike[str],
    *,
    role: str,
    multiplier: float = 1.0,
    expected: Sequence[int] | None = None,
) -> WindowedImage:
    """Open an image file for window reads, checking its shape from the header.

    Parameters
    ----------
    path : path-like
        ``.npy``, ``.h5``/``.hdf5`` or GeoTIFF.
    role : str
        ``"pan"`` (a 2-D image; singleton axes dropped), or any other role for a multi-band image
        (band axis recognised as :func:`.orientation.as_hwb` does).
    multiplier : float
        Stored value to DN (the declared scale), applied to every window.
    expected : sequence of int, optional
        ``(H, W, B)`` the image must have (a fused result: ``(B, H, W)`` storage accepted, as
        :func:`.orientation.match_expected_shape` does).

    Returns
    -------
    WindowedImage

    Raises
    ------
    NotWindowed
        The file can only be read whole (``.mat``, ``.npz``, page stacks, no rasterio, ...).
    DataError
        Unreadable header, truncated file, non-numeric data, or a shape the in-memory readers
        would refuse (same message).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from pansharp_iqa.io.windows import open_windowed
    >>> path = os.path.join(tempfile.mkdtemp(), "gt.npy")
    >>> np.save(path, np.arange(2 * 64 * 64, dtype=np.uint16).reshape(2, 64, 64))
    >>> img = open_windowed(path, role="gt")
    >>> img.shape, img[0:2, 0:3][..., 1].tolist()
    ((64, 64, 2), [[4096.0, 4097.0, 4098.0], [4160.0, 4161.0, 4162.0]])
    """
    path = os.fspath(path)
    name = Path(path).name
    ext = Path(path).suffix.lower()
    key = None
    fortran, offset = False, 0
    if ext == ".npy":
        stored, dtype, fortran, offset = _npy_header(path)
        fmt = "npy"
    elif ext in _H5:
        key, stored, dtype = _h5_dataset(path, None)
        fmt = "h5"
    elif ext in _TIFF:
        stored, dtype = _tiff_header(path)
        fmt = "tiff"
    else:
        raise NotWindowed(f"{name}: {ext or 'this'} files are read whole")
    if dtype.kind not in "biuf":
        raise DataError(f"{name}: non-numeric data (dtype {dtype})")
    layout = _layout(stored, role=role, expected=expected, name=name)
    if fmt == "tiff" and layout.axes[2] not in (None, 2):
        raise NotWindowed(f"{name}: TIFF layout {stored} is read whole")
    r_ax, c_ax, b_ax = layout.axes
    shape = (stored[r_ax], stored[c_ax]) if b_ax is None and role == "pan" else (
        stored[r_ax], stored[c_ax], 1 if b_ax is None else stored[b_ax])
    return WindowedImage(path, fmt, shape, dtype, float(multiplier), layout, key, fortran, offset)


@dataclasses.dataclass(frozen=True)
class WindowStats:
    """Whole-image statistics of a windowed image, in DN.

    Attributes
    ----------
    minimum, maximum : float
        Over the finite values (0 when there are none).
    nonfinite : int
        Count of NaN/Inf values.
    grid : (float, float, float)
        Count, sum and sum of squares (DN) of the values on the fixed sample grid of
        :func:`pansharp_iqa.validation.sample_step` (the value rules' scale evidence).
    shape : tuple of int
        The image's shape.
    dtype : str
        Its stored dtype.
    """

    minimum: float
    maximum: float
    nonfinite: int
    grid: tuple[float, float, float] = (0.0, 0.0, 0.0)
    shape: tuple[int, ...] = ()
    dtype: str = "float64"
    #: per band: sum, sum of squares, minimum and maximum on the sample grid (the per-band rules)
    bands: tuple[tuple[float, ...], ...] = ()
    #: a GeoTIFF's declared no-data value and how many pixels hold it
    nodata: tuple[float, int] | None = None

    def facts(self, name: str) -> ImageFacts:
        """The :class:`~pansharp_iqa.validation.ImageFacts` the value rules decide on.

        Raises
        ------
        DataError
            Pixels hold the file's declared no-data value (as :func:`.geotiff.read_geotiff` refuses).
        """
        if self.nodata is not None:
            check_nodata_count(self.nodata[1], self.nodata[0], name=name)
        per = dict(zip(("band_total", "band_total_sq", "band_lo", "band_hi"), self.bands))
        return facts_from_sums(name, self.shape, self.dtype, lo=self.minimum, hi=self.maximum, n=self.grid[0],
                               total=self.grid[1], total_sq=self.grid[2], non_finite=self.nonfinite, **per)


def window_stats(image: WindowedImage, *, strip_bytes: int = 64 * 2**20) -> WindowStats:
    """Minimum, maximum, non-finite count and sample-grid sums of an image, reading it once in row
    strips (what :meth:`WindowStats.facts` gives the value rules).

    Parameters
    ----------
    image : WindowedImage
    strip_bytes : int
        Size of one strip as float64 (bytes); bounds the memory used.

    Returns
    -------
    WindowStats
        Values in DN (the image's multiplier applied).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from pansharp_iqa.io.windows import open_windowed, window_stats
    >>> path = os.path.join(tempfile.mkdtemp(), "pan.npy"); np.save(path, np.arange(12.0).reshape(3, 4))
    >>> s = window_stats(open_windowed(path, role="pan", multiplier=2.0))
    >>> s.minimum, s.maximum, s.nonfinite
    (0.0, 22.0, 0)
    """
    h, w = image.shape[:2]
    bands = image.shape[2] if len(image.shape) == 3 else 1
    rows = max(1, int(strip_bytes) // max(1, w * bands * 8))
    floating = image.stored_dtype.kind == "f"
    lo, hi, bad = np.inf, -np.inf, 0
    step = sample_step(h, w)
    g_n, g_sum, g_sq = 0.0, 0.0, 0.0
    b_sum, b_sq, b_lo, b_hi = np.zeros(bands), np.zeros(bands), np.full(bands, np.inf), np.full(bands, -np.inf)
    m = image.multiplier
    nodata = read_geoinfo(image.path).nodata if image.fmt == "tiff" else None
    n_nodata = 0
    for r0 in range(0, h, rows):
        strip = image.read_stored((slice(r0, min(h, r0 + rows)), slice(0, w)))  # stored units: no copy to DN
        grid = np.asarray(strip[(-r0) % step :: step, ::step], dtype=np.float64) * m
        if np.isfinite(grid).all():
            g_n, g_sum, g_sq = g_n + grid.size, g_sum + float(grid.sum()), g_sq + float(np.sum(grid * grid))
            _, s1, s2, lo_b, hi_b = grid_band_sums(grid)
            b_sum, b_sq, b_lo, b_hi = b_sum + s1, b_sq + s2, np.minimum(b_lo, lo_b), np.maximum(b_hi, hi_b)
        finite = np.isfinite(strip) if floating else None
        n_bad = int(strip.size - np.count_nonzero(finite)) if finite is not None else 0
        values = strip[finite] if n_bad else strip
        bad += n_bad
        if nodata is not None and not np.isnan(nodata):
            n_nodata += int(np.count_nonzero(strip == nodata))
        if values.size:
            lo, hi = min(lo, float(values.min())), max(hi, float(values.max()))
    if not np.isfinite(lo):
        lo = hi = 0.0
    shape = tuple(image.shape) if len(image.shape) == 3 else (*image.shape, 1)
    per_band = tuple(tuple(float(v) for v in a) for a in (b_sum, b_sq, b_lo, b_hi))
    return WindowStats(lo * m, hi * m, bad, (g_n, g_sum, g_sq), shape, str(image.stored_dtype), per_band,
                       None if nodata is None else (nodata, n_nodata))

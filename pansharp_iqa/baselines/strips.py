"""The baselines' strip engine: row strips of the fused image, each computed from windows with halos.

Every baseline is a few passes over row strips of the PAN grid (strip heights are multiples of the
ratio, so each strip is whole MS rows). A pass reads only the window a strip needs -- its rows plus
the halo of the operator, taken with the operator's own border rule -- so each strip's values are
those of the whole-image computation; global quantities (means, deviations, regressions,
percentiles) are gathered strip by strip with :mod:`.stats`. The operators and their halos:

* EXP (23-tap, circular): :func:`exp_rows`, the catalogue's EXP halo (``DERIVED["exp"]``: 10 MS rows
  at ratio 4) each side, wrapped (as the full-resolution engine's EXP windows, on whole rows; ratio 6:
  the x3 sinc stage's mirrored rows too, :func:`pansharp_iqa.resample.exp_halo_support`);
* ``LPfilterGauss`` (41x41, replicate): :func:`gaussian_strip`, 20 PAN rows each side, replicated;
* ``LPfilterPlusDec`` (GSA): :func:`plusdec_strip`, :func:`.lowpass.plusdec_halo` rows at inner cuts;
* MTF + nearest decimation (MTF-GLP-HPM): :func:`mtf_decimated_rows`, 20 PAN rows each side.

The fused image goes to ``out`` (a NumPy array by default, or any array-like the caller gives, e.g.
:class:`.npy_output.NpyRows`), which also holds the EXP image between passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..borders import border_index, consecutive_runs
from ..indexes.catalog import DERIVED
from ..mtf import mtf_filter
from ..resample import exp_halo_support, exp_halo_window, interp23tap_planes
from ..validation import InputError, ShapeError
from .inputs import Pair
from .lowpass import gaussian_lowpass, plusdec_halo, plusdec_lowpass

__all__ = [
    "FILTER_HALO",
    "STRIP_BYTES",
    "exp_rows",
    "exp_strip",
    "gaussian_strip",
    "mtf_decimated_rows",
    "output_for",
    "plusdec_strip",
    "stored_strips",
    "strip_plan",
]

#: Target size of one fused strip (float64 bytes); a pass holds a few such arrays plus halos. 32 MiB
#: is 512 rows of a 1024-wide 8-band image, 256 rows of a 2048-wide one.
STRIP_BYTES = 32 * 2**20

#: Halo of the 41x41 filters (``LPfilterGauss``, the MTF), PAN rows.
FILTER_HALO = 20


def strip_plan(pair: Pair, strip_rows: int | None = None) -> list[tuple[int, int]]:
    """Row ranges ``[r0, r1)`` of the PAN grid covering the image, each a multiple of the ratio.

    Parameters
    ----------
    pair : Pair
    strip_rows : int, optional
        Rows per strip (rounded down to a multiple of the ratio, at least the ratio); by default
        :data:`STRIP_BYTES` worth of fused rows.

    Returns
    -------
    list of (int, int)

    Examples
    --------
    >>> from pansharp_iqa.baselines.inputs import open_pair
    >>> strip_plan(open_pair(np.ones((5, 4, 2)), np.ones((20, 16)), 4), strip_rows=9)
    [(0, 8), (8, 16), (16, 20)]
    """
    height, width = pair.pan_shape
    r = pair.ratio
    if strip_rows is None:
        strip_rows = STRIP_BYTES // max(1, width * pair.ms_shape[2] * 8)
    elif isinstance(strip_rows, bool) or not isinstance(strip_rows, (int, np.integer)) or strip_rows < 1:
        raise InputError(f"strip_rows must be a positive integer number of rows, got {strip_rows!r}")
    rows = max(r, int(strip_rows) // r * r)
    return [(r0, min(height, r0 + rows)) for r0 in range(0, height, rows)]


def output_for(pair: Pair, out: Any = None) -> Any:
    """The array the fused image is written to: ``out`` (checked) or a new float64 array.

    Parameters
    ----------
    pair : Pair
    out : array-like, optional
        ``(H, W, B)``, float64, supporting ``out[r0:r1] = rows`` and ``out[r0:r1]`` (a NumPy array or
        memmap, an :class:`.npy_output.NpyRows`, an HDF5/zarr dataset...).

    Returns
    -------
    array-like

    Examples
    --------
    >>> from pansharp_iqa.baselines.inputs import open_pair
    >>> output_for(open_pair(np.ones((2, 2, 3)), np.ones((8, 8)), 4)).shape
    (8, 8, 3)
    """
    if out is None:
        return np.empty(pair.out_shape)
    shape = tuple(getattr(out, "shape", ()))
    if shape != pair.out_shape:
        raise ShapeError(f"out must have the fused image's shape {pair.out_shape}, got {shape}")
    dtype = getattr(out, "dtype", None)
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise InputError(f"out must be float64 (the baselines' results), got {np.dtype(dtype)}")
    return out


def stored_strips(out: Any, plan: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(r0, r1, out[r0:r1])`` for every strip (what an earlier pass stored there; a view of a NumPy ``out``).

    Examples
    --------
    >>> [s.shape for _, _, s in stored_strips(np.zeros((6, 2, 1)), [(0, 4), (4, 6)])]
    [(4, 2, 1), (2, 2, 1)]
    """
    for r0, r1 in plan:
        yield r0, r1, np.asarray(out[r0:r1], dtype=np.float64)


def exp_rows(low_rows: Callable[[np.ndarray], np.ndarray], lr0: int, lr1: int, height: int, ratio: int) -> np.ndarray:
    """Rows ``[lr0*ratio, lr1*ratio)`` of ``interp23tap(low, ratio)``, from whole rows of ``low``.

    ``low`` (``height`` rows, any width) is read at rows ``[lr0 - m, lr1 + m)`` wrapped, ``m`` the
    catalogue's EXP halo (``DERIVED["exp"].halo``): the 23-tap filter's circular border makes the
    window's own wrap-around reach fewer than ``m`` rows in, and whole rows make its columns the
    image's own circular border, so the rows equal the whole-image result.

    Parameters
    ----------
    low_rows : callable
        ``low_rows(rows)`` returns the low-resolution image's rows at those positions, ``(n, w, B)``.
    lr0, lr1 : int
        Low-resolution rows of the strip.
    height : int
        Rows of the low-resolution image.
    ratio : int

    Returns
    -------
    ndarray, shape ((lr1 - lr0) * ratio, w * ratio, B), float64

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> low = np.random.default_rng(0).random((30, 6, 2))
    >>> bool(np.allclose(exp_rows(lambda rows: low[rows], 2, 5, 30, 4), interp23tap(low, 4)[8:20], rtol=1e-13))
    True
    """
    if ratio == 6:  # whole rows: the window's columns are the whole width (its mirror and wrap)
        low = low_rows(exp_halo_support(lr0, lr1, height, 6))
        return exp_halo_window(low, (lr0, lr1), (0, low.shape[1]), (height, low.shape[1]), 6)
    exp = DERIVED["exp"]
    h = exp.halo(ratio)
    low = low_rows(border_index(np.arange(lr0 - h, lr1 + h), height, exp.border))
    planes = interp23tap_planes(np.moveaxis(low, 2, 0), ratio)
    m = h * ratio
    return np.ascontiguousarray(np.moveaxis(planes[:, m : m + (lr1 - lr0) * ratio], 0, 2))


def exp_strip(pair: Pair, r0: int, r1: int) -> np.ndarray:
    """Rows ``[r0, r1)`` (multiples of the ratio) of EXP, ``interp23tap(ms, ratio)``: :func:`exp_rows`.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> from pansharp_iqa.baselines.inputs import open_pair
    >>> ms = np.random.default_rng(0).random((8, 6, 2))
    >>> pair = open_pair(ms, np.full((32, 24), 0.5), 4)
    >>> bool(np.allclose(exp_strip(pair, 8, 20), interp23tap(ms, 4)[8:20], rtol=1e-13))
    True
    """
    r = pair.ratio
    return exp_rows(pair.ms_rows, r0 // r, r1 // r, pair.ms_shape[0], r)


def _pan_window(pair: Pair, lo: int, hi: int, mode: str) -> np.ndarray:
    return pair.pan_rows(border_index(np.arange(lo, hi), pair.pan_shape[0], mode))  # type: ignore[arg-type]


def gaussian_strip(pair: Pair, r0: int, r1: int) -> np.ndarray:
    """Rows ``[r0, r1)`` of :func:`.lowpass.gaussian_lowpass` of the PAN (``LPfilterGauss``).

    Examples
    --------
    >>> from pansharp_iqa.baselines.inputs import open_pair
    >>> from pansharp_iqa.baselines.lowpass import gaussian_lowpass
    >>> pan = np.random.default_rng(0).random((64, 48)) + 1
    >>> pair = open_pair(np.full((16, 12, 1), 1.5), pan, 4)
    >>> bool(np.allclose(gaussian_strip(pair, 8, 40), gaussian_lowpass(pan, 4)[8:40], rtol=1e-12))
    True
    """
    window = _pan_window(pair, r0 - FILTER_HALO, r1 + FILTER_HALO, "replicate")
    return gaussian_lowpass(window, pair.ratio)[FILTER_HALO : FILTER_HALO + r1 - r0]


def plusdec_strip(pair: Pair, r0: int, r1: int, offset: float = 0.0) -> np.ndarray:
    """Rows ``[r0, r1)`` of :func:`.lowpass.plusdec_lowpass` of ``PAN - offset``, decimated by the ratio.

    ``r0`` and ``r1`` are multiples of the ratio (or ``r1`` the image height); the result is the MS
    rows ``[r0/ratio, r1/ratio)`` of the toolbox's ``LPfilterPlusDec(PAN - offset, ratio)``.

    Examples
    --------
    >>> from pansharp_iqa.baselines.inputs import open_pair
    >>> from pansharp_iqa.baselines.lowpass import plusdec_lowpass_decimate
    >>> pan = np.random.default_rng(0).random((64, 48)) + 1
    >>> pair = open_pair(np.full((16, 12, 1), 1.5), pan, 4)
    >>> bool(np.allclose(plusdec_strip(pair, 16, 32), plusdec_lowpass_decimate(pan, 4)[4:8], rtol=1e-13))
    True
    """
    height = pair.pan_shape[0]
    halo = plusdec_halo(pair.ratio)
    lo, hi = max(0, r0 - halo), min(height, r1 + halo)
    window = pair.pan_rows(np.arange(lo, hi)) - offset
    low = plusdec_lowpass(window, pair.ratio, top=lo == 0, bottom=hi == height)
    start = r0 - (lo if lo == 0 else lo + halo)
    s = pair.ratio // 2
    return np.ascontiguousarray(low[start + s : start + r1 - r0 : pair.ratio, s :: pair.ratio])


def mtf_decimated_rows(pair: Pair, rows_lr: np.ndarray, gains: Sequence[float], offsets: Sequence[float],
                       gnyq: Sequence[float]) -> np.ndarray:
    """MS-grid rows of ``nearest_decimate(MTF_b(gains_b * PAN + offsets_b))``, band by band.

    The low-pass PAN of MTF-GLP-HPM (its PAN equalised to each band, then the band's MTF with the
    replicate border, then nearest decimation), computed from the PAN rows the wanted MS rows need
    plus a 20-row replicated halo, one band at a time.

    Parameters
    ----------
    pair : Pair
    rows_lr : ndarray of int
        MS rows wanted (any order, e.g. the wrapped support of an EXP window).
    gains, offsets : sequence of float
        The affine map of the PAN for each band.
    gnyq : sequence of float
        The MTF's GNyq per band.

    Returns
    -------
    ndarray, shape (len(rows_lr), w, B), float64
        ``mtf_filter(gains_b * pan + offsets_b, gnyq_b, ratio)`` at PAN rows and columns
        ``ratio * j + ratio // 2``.

    Examples
    --------
    >>> from pansharp_iqa import mtf_filter
    >>> from pansharp_iqa.baselines.inputs import open_pair
    >>> pan = np.random.default_rng(0).random((64, 48)) + 1
    >>> pair = open_pair(np.full((16, 12, 1), 1.5), pan, 4)
    >>> got = mtf_decimated_rows(pair, np.array([15, 0, 1]), [2.0], [1.0], [0.3])
    >>> bool(np.allclose(got[:, :, 0], mtf_filter(2 * pan + 1, 0.3, 4)[2::4, 2::4][[15, 0, 1]], rtol=1e-12))
    True
    """
    r, height = pair.ratio, pair.pan_shape[0]
    rows_lr = np.asarray(rows_lr, dtype=np.int64)
    out = np.empty((rows_lr.size, pair.ms_shape[1], len(gnyq)))
    pos = 0
    for a, b in consecutive_runs(rows_lr):
        window = pair.pan_rows(border_index(np.arange(a * r - FILTER_HALO, b * r + FILTER_HALO), height, "replicate"))
        keep = slice(FILTER_HALO + r // 2, FILTER_HALO + (b - a) * r, r)
        for i, (g, o, q) in enumerate(zip(gains, offsets, gnyq, strict=True)):
            out[pos : pos + b - a, :, i] = mtf_filter(window * g + o, q, r)[keep, r // 2 :: r]
        pos += b - a
    return out

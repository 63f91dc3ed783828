"""What every baseline starts from: the checked MS/PAN pair, read by rows.

Every baseline has the common signature ``method(ms, pan, *, sensor, ratio, out=None,
strip_rows=None) -> fused`` (see :mod:`pansharp_iqa.baselines`): ``ms`` the low-resolution MS
``(h, w, B)`` and ``pan`` the PAN ``(ratio*h, ratio*w)``, both in DN, ``ratio`` a power of two; the
result is ``(ratio*h, ratio*w, B)`` float64 in DN. ``ms`` and ``pan`` are NumPy arrays (checked and
converted to float64 up front, as before) or lazy images -- ``np.memmap``, paths, array-likes with
``.shape`` and slicing, :class:`pansharp_iqa.io.windows.Source` readers -- read strip by strip
after one checking pass, so neither is ever held whole.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..borders import consecutive_runs
from ..io.windows import is_lazy_input, open_source
from ..rules import Evidence, apply_rules
from ..validation import (
    ImageFacts,
    InputError,
    ShapeError,
    check_image_shape,
    check_ratio,
    facts_from_sums,
    grid_band_sums,
    image_array,
    image_facts,
    pan_array,
    sample_step,
)

__all__ = ["READ_BYTES", "Pair", "check_pair", "fused_shape", "lazy_facts", "open_pair"]

#: Size of the strips (float64 bytes) in which lazy inputs are read for their value check.
READ_BYTES = 4 * 2**20


def _check_sizes(ms_shape: tuple[int, ...], pan_shape: tuple[int, ...], ratio: int) -> None:
    if tuple(pan_shape[:2]) != (ms_shape[0] * ratio, ms_shape[1] * ratio):
        raise ShapeError(
            f"pan must be ratio={ratio} times the MS size: pan {tuple(pan_shape[:2])}, ms {tuple(ms_shape[:2])}"
        )


def check_pair(ms: np.ndarray, pan: np.ndarray, ratio: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate an in-memory MS/PAN pair and return float64 copies.

    Parameters
    ----------
    ms : numpy.ndarray
        Low-resolution MS, ``(h, w, B)`` in DN (any numeric dtype; not modified).
    pan : numpy.ndarray
        PAN, ``(ratio*h, ratio*w)`` in DN.
    ratio : int
        PAN/MS resolution ratio (a power of two: the baselines use the 23-tap EXP).

    Returns
    -------
    (ms, pan, ratio)
        float64 arrays (the inputs themselves when already float64: the baselines never modify
        them) and the ratio as ``int``.

    Raises
    ------
    InputError
        Wrong dimensionality or layout, sizes that do not fit the ratio, a bad ratio, NaN/Inf,
        negative values or a PAN on another scale than the MS (:mod:`pansharp_iqa.validation`).

    Examples
    --------
    >>> ms, pan, r = check_pair(np.ones((4, 4, 3)), np.ones((16, 16)), 4)
    >>> ms.shape, pan.shape, r
    ((4, 4, 3), (16, 16), 4)
    """
    ratio = check_ratio(ratio, exp=True)
    ms_arr = image_array("ms", ms, allow_2d=True)
    pan_arr = pan_array("pan", pan)
    _check_sizes(ms_arr.shape, pan_arr.shape, ratio)
    apply_rules(Evidence({"reference": image_facts("ms", ms_arr), "pan": image_facts("pan", pan_arr)}))  # NaN/Inf too
    return np.asarray(ms_arr, dtype=np.float64), np.asarray(pan_arr, dtype=np.float64), ratio


@dataclasses.dataclass
class Pair:
    """A checked MS/PAN pair that hands out rows as float64 DN."""

    ms: Any
    pan: Any
    ratio: int
    ms_shape: tuple[int, int, int]
    pan_shape: tuple[int, int]

    @property
    def out_shape(self) -> tuple[int, int, int]:
        """Shape of a fused image, ``(H, W, B)``."""
        return (*self.pan_shape, self.ms_shape[2])

    def ms_rows(self, rows: np.ndarray) -> np.ndarray:
        """MS rows at (possibly repeated, unordered) positions, ``(len(rows), w, B)`` float64."""
        return _rows(self.ms, rows, self.ms_shape[1])

    def pan_rows(self, rows: np.ndarray) -> np.ndarray:
        """PAN rows at positions, ``(len(rows), W)`` float64."""
        out = _rows(self.pan, rows, self.pan_shape[1])
        return out if out.ndim == 2 else out[:, :, 0]


def _rows(image: Any, rows: np.ndarray, width: int) -> np.ndarray:
    idx = np.asarray(rows, dtype=np.int64)
    if isinstance(image, np.ndarray):
        return image[idx]
    parts = [np.asarray(image.read(a, b, 0, width), dtype=np.float64) for a, b in consecutive_runs(idx)]
    return np.concatenate(parts, axis=0)


def lazy_facts(name: str, source: Any, scale: float = 1.0) -> ImageFacts:
    """Value summary of a window reader times ``scale``, read once in strips (what :func:`image_facts` computes in
    memory)."""
    h, w, b = source.shape
    rows = max(1, READ_BYTES // max(1, w * b * 8))
    step = sample_step(h, w)
    lo, hi, bad, count = np.inf, -np.inf, 0, 0
    b_sum, b_sq, b_lo, b_hi, b_nonint = np.zeros(b), np.zeros(b), np.full(b, np.inf), np.full(b, -np.inf), np.zeros(b)
    for r0 in range(0, h, rows):
        strip = np.asarray(source.read(r0, min(h, r0 + rows), 0, w), dtype=np.float64)
        finite = np.isfinite(strip)
        n_bad = int(strip.size - np.count_nonzero(finite))
        bad += n_bad
        values = strip[finite] if n_bad else strip
        if values.size:
            lo, hi = min(lo, float(values.min())), max(hi, float(values.max()))
        n, s1, s2, lo_b, hi_b, nonint = grid_band_sums(strip[(-r0) % step :: step, ::step], scale)
        count, b_sum, b_sq, b_nonint = count + n, b_sum + s1, b_sq + s2, b_nonint + nonint
        b_lo, b_hi = np.minimum(b_lo, lo_b), np.maximum(b_hi, hi_b)
        del strip, finite, values  # free this strip before the next is read
    return facts_from_sums(name, (h, w, b), source.dtype, lo=lo * scale, hi=hi * scale, n=count * b,
                           total=float(b_sum.sum()), total_sq=float(b_sq.sum()), non_finite=bad, band_total=b_sum,
                           band_total_sq=b_sq, band_lo=b_lo, band_hi=b_hi, band_nonint=b_nonint)


def _check_dtype(name: str, dtype: Any) -> None:
    dt = np.dtype(dtype)
    if dt.kind == "b" or not (np.issubdtype(dt, np.integer) or np.issubdtype(dt, np.floating)):
        raise InputError(f"{name}: expected an integer or float array, got dtype {dt}")


def _open_lazy(ms: Any, pan: Any, ratio: int) -> Pair:
    ms_src, pan_src = open_source(ms, "ms"), open_source(pan, "pan")
    ms_shape = check_image_shape("ms", ms_src.shape)
    if pan_src.shape[2] != 1:
        raise ShapeError(f"pan: expected a 2-D (H, W) panchromatic image, got shape {pan_src.shape}")
    _check_dtype("ms", ms_src.dtype)
    _check_dtype("pan", pan_src.dtype)
    _check_sizes(ms_shape, pan_src.shape, ratio)
    apply_rules(Evidence({"reference": lazy_facts("ms", ms_src), "pan": lazy_facts("pan", pan_src)}))
    return Pair(ms_src, pan_src, ratio, ms_shape, tuple(pan_src.shape[:2]))  # type: ignore[arg-type]


def _is_lazy(x: Any) -> bool:
    return is_lazy_input(x) or isinstance(x, np.memmap)


def open_pair(ms: Any, pan: Any, ratio: int) -> Pair:
    """Check an MS/PAN pair once and return a :class:`Pair` that reads it by rows.

    In-memory arrays go through :func:`check_pair` (float64, copied only from other dtypes: the PAN
    and MS are ``1/B`` and ``1/ratio**2`` of the fused image). Lazy inputs (``np.memmap``, paths, array-likes,
    :class:`~pansharp_iqa.io.windows.Source`) are never loaded whole: one pass in strips gathers
    the value summary the same rules decide on, and later reads are windows.

    Parameters
    ----------
    ms, pan : array or lazy image
        Low-resolution MS ``(h, w, B)`` (or ``(h, w)``) and PAN ``(ratio*h, ratio*w)``, DN.
    ratio : int
        Power of two.

    Returns
    -------
    Pair

    Raises
    ------
    InputError
        As :func:`check_pair`.

    Examples
    --------
    >>> pair = open_pair(np.ones((4, 4, 3)), np.ones((16, 16)), 4)
    >>> pair.out_shape, pair.ms_rows(np.array([3, 0])).shape
    ((16, 16, 3), (2, 4, 3))
    """
    ratio = check_ratio(ratio, exp=True)
    if _is_lazy(ms) or _is_lazy(pan):
        return _open_lazy(ms, pan, ratio)
    ms_arr, pan_arr, ratio = check_pair(ms, pan, ratio)
    ms_arr = ms_arr if ms_arr.ndim == 3 else ms_arr[:, :, None]
    return Pair(ms_arr, pan_arr, ratio, tuple(ms_arr.shape), tuple(pan_arr.shape))


def fused_shape(ms: Any, pan: Any) -> tuple[int, int, int]:
    """Shape ``(H, W, B)`` a baseline gives for these inputs (read from their shapes, nothing checked).

    Examples
    --------
    >>> fused_shape(np.ones((4, 4, 3)), np.ones((16, 16)))
    (16, 16, 3)
    """
    ms_shape = tuple(getattr(ms, "shape", None) or open_source(ms, "ms").shape)
    pan_shape = tuple(getattr(pan, "shape", None) or open_source(pan, "pan").shape)
    return int(pan_shape[0]), int(pan_shape[1]), int(ms_shape[2]) if len(ms_shape) == 3 else 1

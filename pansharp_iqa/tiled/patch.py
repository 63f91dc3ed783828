"""Reading the pixels a tile needs (its own, its halo, its border stand-ins) in as few windows as possible.

A tile asks for sets of global row and column positions (produced by the border maps of
:mod:`pansharp_iqa.borders`); :func:`fetch` reads each run of consecutive positions once,
converts to float64 band planes, refuses NaN/Inf with the in-memory message, applies the scale, and
returns a :class:`Patch` that answers ``take(rows, cols)`` for any positions inside it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..borders import consecutive_runs
from ..io.windows import Source
from ..validation import raise_non_finite

__all__ = ["Patch", "fetch"]


@dataclasses.dataclass
class Patch:
    """Float64 band planes ``(B, rows, cols)`` of a source at a sorted set of global rows and columns."""

    rows: np.ndarray
    cols: np.ndarray
    data: np.ndarray
    scale: float = 1.0  #: the multiplier the data were read with

    def take(self, row_idx: np.ndarray, col_idx: np.ndarray) -> np.ndarray:
        """(B, h, w) planes at global positions; ``-1`` positions (zero padding) read as 0. Consecutive
        positions give a view (do not modify), others a copy."""
        ri = np.asarray(row_idx, dtype=np.int64)
        ci = np.asarray(col_idx, dtype=np.int64)
        pr = np.searchsorted(self.rows, ri)
        pc = np.searchsorted(self.cols, ci)
        zr, zc = ri < 0, ci < 0
        pr[zr] = 0
        pc[zc] = 0
        if not (np.array_equal(self.rows[pr[~zr]], ri[~zr]) and np.array_equal(self.cols[pc[~zc]], ci[~zc])):
            raise AssertionError("tile patch does not hold a requested pixel (halo planning error)")
        if (np.all(np.diff(pr) == 1) and np.all(np.diff(pc) == 1)) and not (zr.any() or zc.any()):
            return self.data[:, pr[0] : pr[-1] + 1, pc[0] : pc[-1] + 1]
        out = self.data[:, pr[:, None], pc[None, :]]  # one gather (two in turn cost 2x on the last axis)
        out[:, zr] = 0.0
        out[:, :, zc] = 0.0
        return out


def _union(sets: Sequence[np.ndarray]) -> np.ndarray:
    parts = [np.asarray(s, dtype=np.int64).ravel() for s in sets]
    allv = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    return allv[allv >= 0]


def fetch(
    source: Source,
    row_sets: Sequence[np.ndarray],
    col_sets: Sequence[np.ndarray],
    *,
    scale: float = 1.0,
) -> tuple[Patch, dict[str, float]]:
    """Read the union of the requested positions (product of rows and columns) from a source as float64 band
    planes (the stored values converted in one pass), refusing NaN/Inf."""
    rows = _union(row_sets)
    cols = _union(col_sets)
    data = np.empty((source.shape[2], rows.size, cols.size))
    pos_r, extremes = 0, []
    for r0, r1 in consecutive_runs(rows):
        pos_c = 0
        for c0, c1 in consecutive_runs(cols):
            block = source.read(r0, r1, c0, c1)
            data[:, pos_r : pos_r + r1 - r0, pos_c : pos_c + c1 - c0] = np.moveaxis(block, 2, 0)
            extremes += [float(block.min()), float(block.max())]  # in the stored type: fewer bytes
            pos_c += c1 - c0
        pos_r += r1 - r0
    if not np.issubdtype(source.dtype, np.integer) and not np.isfinite(extremes).all():
        raise_non_finite(source.name, int(data.size - np.count_nonzero(np.isfinite(data))))
    if scale != 1.0:
        data *= scale
    top, bottom = (max(extremes) * scale, min(extremes) * scale) if extremes else (-np.inf, np.inf)
    top, bottom = (bottom, top) if scale < 0 else (top, bottom)
    stats = {"min": bottom, "max": top, "maxabs": max(top, -bottom)}
    return Patch(rows, cols, data, scale), stats

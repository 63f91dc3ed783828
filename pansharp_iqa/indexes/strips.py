"""Reading images strip by strip as float64 band planes or blocks: the chunks the indexes sum over.

The reduced-resolution indexes are sums over pixels, windows or blocks, so each is computed as
partial sums over chunks of rows (strips here, tiles in :mod:`pansharp_iqa.tiled`) and a finalize
step. This module holds what every chunk needs and no formula: :class:`StripImage` (an image of
any dtype and layout read as contiguous float64 planes or as blocks, with the scale and threshold
applied per chunk, never on whole-image copies), block gathering with the toolbox's mirror
extension, and :func:`map_strips` (strips in threads, results in strip order, so sums do not
depend on the thread count).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..borders import border_index
from ..parallel import parallel_map
from ..validation import ShapeError

__all__ = ["STRIP_ROWS", "StripImage", "gather_blocks", "strip_starts", "map_strips", "check_block_fits", "within_unit"]

STRIP_ROWS = 128  # rows per task (a multiple of the 32-pixel block; 32-128 measured, 128 fastest)

T = TypeVar("T")

#: Float rounding an index bounded by 1 in magnitude may show past its bound (a few ulps per block).
ROUNDING_EXCESS = 1e-12


def within_unit(value: float) -> float:
    """``value`` with float rounding past +-1 removed, for Q2n, Q, SCC and CC (|value| <= 1 by Cauchy-Schwarz).

    Identical images then give exactly 1.0 (not 1.0000000000000004); a value past the bound by more
    than :data:`ROUNDING_EXCESS` is returned unchanged (no rounding explains it).

    >>> within_unit(1.0000000000000004), within_unit(-1.0000000000000002), within_unit(0.5)
    (1.0, -1.0, 0.5)
    """
    return float(np.copysign(1.0, value)) if 1.0 < abs(value) <= 1.0 + ROUNDING_EXCESS else float(value)


@dataclass(frozen=True)
class StripImage:
    """An image of any real dtype read as float64 band planes or blocks, strip by strip.

    Parameters
    ----------
    array : ndarray, shape (H, W, B), or (B, H, W) with ``bands_first``
        The caller's data (never modified; may be a strided view, e.g. after a border cut).
    scale : float
        Multiplier to DN applied to each strip.
    clip_max : float, optional
        Values clipped to [0, clip_max] after scaling (the toolbox's threshold option).
    bands_first : bool
        ``array`` holds band planes (B, H, W), e.g. the EXP or MTF-filtered images computed
        internally; strips of float64 planes are then views, not copies.

    Examples
    --------
    >>> img = StripImage(np.arange(24, dtype=np.uint8).reshape(2, 4, 3), scale=2.0)
    >>> img.shape, img.planes(0, 1)[1].tolist()
    ((2, 4, 3), [[2.0, 8.0, 14.0, 20.0]])
    """

    array: np.ndarray
    scale: float = 1.0
    clip_max: float | None = None
    bands_first: bool = False

    @property
    def shape(self) -> tuple[int, int, int]:
        """(H, W, B) whatever the storage order."""
        a = self.array.shape
        return (a[1], a[2], a[0]) if self.bands_first else a

    @property
    def identity(self) -> bool:
        """Whether strips are the stored float64 values themselves (no scale, clip or cast)."""
        return self.scale == 1.0 and self.clip_max is None and self.array.dtype == np.float64

    def to_dn(self, out: np.ndarray) -> np.ndarray:
        """Apply the scale and the clip to ``out`` in place (float64 values of this image)."""
        if self.scale != 1.0:
            out *= self.scale
        if self.clip_max is not None:
            np.clip(out, 0.0, self.clip_max, out=out)
        return out

    def rows(self, rows: slice | np.ndarray) -> np.ndarray:
        """Rows of the stored image as (B, k, W) (a view where the storage allows; not scaled)."""
        return self.array[:, rows] if self.bands_first else self.array[rows].transpose(2, 0, 1)

    def blocks(self, rows: slice | np.ndarray, bs: int, *, extra: np.ndarray | None = None) -> np.ndarray:
        """Non-overlapping bs x bs blocks of the given rows, as (n_blocks, C, bs*bs) float64.

        ``rows`` covers whole block rows (an index array for mirror-extended rows); columns are
        mirror-extended at the right to whole blocks (MATLAB 'symmetric', edge pixel included).
        ``extra`` (H, W) is appended as one more channel (e.g. the PAN), unscaled.
        """
        part = self.rows(rows)  # (B, k, W)
        blocks = gather_blocks(part if extra is None else (part, extra[rows][None]), bs)
        if self.scale != 1.0 or self.clip_max is not None:
            self.to_dn(blocks[:, : blocks.shape[1] - 1] if extra is not None else blocks)
        return blocks

    def planes(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``r0:r1`` as (B, r1 - r0, W) float64 planes with contiguous rows (do not modify)."""
        if self.bands_first and self.identity:
            return self.array[:, r0:r1]
        part = self.rows(slice(r0, r1))
        out = np.empty(part.shape)
        out[...] = part
        return self.to_dn(out)


def gather_blocks(parts: np.ndarray | tuple[np.ndarray, ...], bs: int) -> np.ndarray:
    """(n_blocks, C, bs*bs) float64 blocks of (C_i, k, W) row sets (channels concatenated).

    Rows ``k`` must be a multiple of ``bs``; columns are mirror-extended at the right to whole
    blocks (MATLAB ``padarray(..., 'symmetric', 'post')``).

    Parameters
    ----------
    parts : ndarray or tuple of ndarray, each (C_i, k, W)
    bs : int
        Block side (pixels).

    Returns
    -------
    ndarray, shape (k/bs * ceil(W/bs), sum C_i, bs*bs)
        Blocks in row-major order of block positions.

    Examples
    --------
    >>> gather_blocks(np.arange(8.0).reshape(1, 2, 4), 2)[:, 0].tolist()
    [[0.0, 1.0, 4.0, 5.0], [2.0, 3.0, 6.0, 7.0]]
    """
    parts = parts if isinstance(parts, tuple) else (parts,)
    k, w = parts[0].shape[1:]
    c = sum(p.shape[0] for p in parts)
    ny, nx_full = k // bs, w // bs
    nx = -(-w // bs)
    out = np.empty((ny, nx, c, bs, bs))
    c0 = 0
    for p in parts:
        c1 = c0 + p.shape[0]
        full = p[:, :, : nx_full * bs].reshape(p.shape[0], ny, bs, nx_full, bs)
        out[:, :nx_full, c0:c1] = full.transpose(1, 3, 0, 2, 4)
        if nx != nx_full:
            edge = border_index(np.arange(nx_full * bs, nx * bs), w, "symmetric")
            last = p[:, :, edge].reshape(p.shape[0], ny, bs, bs)
            out[:, nx_full, c0:c1] = last.transpose(1, 0, 2, 3)
        c0 = c1
    return out.reshape(ny * nx, c, bs * bs)


def check_block_fits(name: str, shape: tuple[int, ...], block_size: int) -> None:
    """Raise unless ``block_size <= min(h, w) + 1``: the reprojected protocol's rule for its
    reflect-padded Q2n blocks and its R-Q windows (on the image plus one repeated edge row/column).

    Examples
    --------
    >>> check_block_fits("ms", (8, 9, 4), 32)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ShapeError: ms: block_size 32 too large for images of 8x9 pixels (at most min(h, w) + 1 = 9); use a smaller block_size or larger images
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    h, w = int(shape[0]), int(shape[1])
    if block_size > min(h, w) + 1:
        raise ShapeError(f"{name}: block_size {block_size} too large for images of {h}x{w} pixels "
                         f"(at most min(h, w) + 1 = {min(h, w) + 1}); use a smaller block_size or larger images")


def strip_starts(height: int, block_size: int, strip_rows: int = STRIP_ROWS) -> tuple[list[int], int]:
    """First rows of the strips and the strip height (a multiple of ``block_size``).

    Examples
    --------
    >>> strip_starts(300, 32)
    ([0, 128, 256], 128)
    """
    t = -(-max(int(strip_rows), block_size) // block_size) * block_size
    return list(range(0, int(height), t)), t


def map_strips(task: Callable[[int, int], T], height: int, block_size: int,
               strip_rows: int = STRIP_ROWS) -> list[T]:
    """Run ``task(r0, r1)`` on every strip of rows ``[r0, r1)`` in threads; results in strip order.

    Parameters
    ----------
    task : callable
        ``task(r0, r1)`` for the strip of rows ``r0 .. r1 = min(r0 + t, height)``.
    height : int
    block_size : int
        The strip height is a multiple of it.
    strip_rows : int
        Requested rows per strip.

    Returns
    -------
    list
        One result per strip, top to bottom.

    Examples
    --------
    >>> map_strips(lambda r0, r1: (r0, r1), 300, 32)
    [(0, 128), (128, 256), (256, 300)]
    """
    starts, t = strip_starts(height, block_size, strip_rows)
    return parallel_map(lambda r0: task(r0, min(r0 + t, height)), starts)

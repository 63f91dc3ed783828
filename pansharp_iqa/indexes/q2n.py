"""Q2n: the hypercomplex quality index for images of any band count (Q4, Q8, ...).

The formula's home: the integer casts, the block grid (with the protocols' two border
conventions), the per-block values of a strip (:func:`q2n_strip`, used by the reduced-resolution
pass, the tile engine and D_lambda_K) and the public :func:`q2n`.

References
----------
Garzelli & Nencini, "Hypercomplex quality assessment of multi/hyperspectral images", IEEE GRSL 6(4),
2009, doi:10.1109/LGRS.2009.2022650. Alparone et al., "A global quality measurement of pan-sharpened
multispectral imagery", IEEE GRSL 1(4), 2004 (Q4). Vivone et al., IEEE GRSM 2021 (toolbox ``q2n``).
Scarpa & Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808 (reprojected protocol's
Q2n conventions).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np

from ..borders import border_index
from ..foreign import Layout, batched
from ..hypercomplex import BlockPrecision, block_q_values
from ..rules import checked_pair
from ..validation import ShapeError, check_block_size, check_choice, check_min_size
from .strips import StripImage, check_block_fits, map_strips, within_unit

__all__ = [
    "q2n", "q2n_strip", "q2n_grid", "q2n_grid_values", "q2n_block_grid", "blocks_at", "to_uint16_matlab",
    "to_int16_truncated", "REPROJECTED_STD_FLOOR", "q2n_padded_positions", "q2n_strip_grid", "q2n_value", "cast_to",
]

#: Integer cast before the block statistics: MATLAB's ``uint16`` (toolbox), truncation to int16
#: (reprojected protocol), ``torch.round`` (half to even, no clip: hyperspectral/Sentinel-2 code), none.
Cast = Literal["uint16", "int16-truncated", "round-half-even", "none"]
#: Extension to whole blocks: MATLAB ``'symmetric'`` bottom/right (toolbox), NumPy ``'reflect'``
#: (reprojected protocol), or the hyperspectral/Sentinel-2 code's symmetric padding with the amounts
#: swapped (columns by the rows' shortfall, rows by the columns'; the same for square images).
Padding = Literal["symmetric", "reflect", "symmetric-swapped"]
_CASTS = ("uint16", "int16-truncated", "round-half-even", "none")
_PADDINGS = ("symmetric", "reflect", "symmetric-swapped")
#: Bytes of block data the grid path holds at once (blocks are taken a few block rows at a time).
GRID_CHUNK_BYTES = 64 << 20

#: Replacement for a zero block standard deviation in the reprojected protocol's Q2n (its code's
#: value; the toolbox uses machine epsilon).
REPROJECTED_STD_FLOOR = 1e-10

_HALF_BELOW = 0.49999999999999994  # the largest double below 0.5


def to_uint16_matlab(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """MATLAB's ``uint16(x)`` on doubles: round half away from zero, saturate to [0, 65535].

    Computed as ``clip(floor(x + h), 0, 65535)`` with ``h`` the largest double below 0.5; this
    equals ``floor(x + 1/2)`` in exact arithmetic for every double ``0 <= x < 2**52`` (the
    rounded sum never reaches the next integer, and ties ``n - 1/2`` round up to ``n``), and the
    clip gives MATLAB's saturation for all other values. ``floor(x + 0.5)`` would be wrong for
    ``x = h`` and ``np.rint`` rounds ties to even.

    Parameters
    ----------
    x : ndarray
        Float64 values (DN).
    out : ndarray, optional
        Where to write the result (any layout of the same shape, e.g. a transposed view).

    Returns
    -------
    ndarray
        Float64 array of the cast's integer values.

    Examples
    --------
    >>> to_uint16_matlab(np.array([0.5, 1.5, 2.5, -3.0, 70000.0])).tolist()
    [1.0, 2.0, 3.0, 0.0, 65535.0]
    """
    r = np.add(x, _HALF_BELOW, out=out)
    np.floor(r, out=r)
    return np.clip(r, 0.0, 65535.0, out=r)


def to_int16_truncated(a: np.ndarray) -> np.ndarray:
    """The reprojected protocol's Q2n cast: truncation toward zero to int16 (wrapping), as float64.

    Examples
    --------
    >>> to_int16_truncated(np.array([1.9, -1.9, 32768.0])).tolist()
    [1.0, -1.0, -32768.0]
    """
    return np.trunc(a).astype(np.int64).astype(np.int16).astype(np.float64)


def _round_half_even(a: np.ndarray) -> np.ndarray:
    return np.round(a, out=a)  # a fresh copy of the image (in place: no second one)


def _no_cast(a: np.ndarray) -> np.ndarray:
    return a


def _uint16_in_place(a: np.ndarray) -> np.ndarray:
    return to_uint16_matlab(a, out=a)


_CASTERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "uint16": _uint16_in_place, "int16-truncated": to_int16_truncated, "round-half-even": _round_half_even,
    "none": _no_cast,
}


def cast_to(cast: str, planes: np.ndarray) -> np.ndarray:
    """Q2n's integer cast of float64 planes (may work in place on them): ``"uint16"``, ``"int16-truncated"``,
    ``"round-half-even"`` or ``"none"``.

    Examples
    --------
    >>> cast_to("round-half-even", np.array([0.5, 1.5, -2.5])).tolist()
    [0.0, 2.0, -2.0]
    """
    return _CASTERS[check_choice("cast", cast, _CASTS)](planes)


def q2n_padded_positions(n: int, n_other: int, block_size: int, padding: Padding) -> np.ndarray:
    """Positions along one axis of an image extended to Q2n's block grid (non-overlapping blocks), cut to the grid.

    ``"symmetric"`` (toolbox): ``ceil(n/bs) bs`` positions mirrored at the end (edge repeated).
    ``"symmetric-swapped"`` (hyperspectral/Sentinel-2 code): the axis is extended by the OTHER axis'
    shortfall ``est = ceil(n_other/bs) bs - n_other`` (torchvision ``Pad((0, 0, est1, est2))``), then
    cut to ``ceil(n/bs) bs``: the last block is partial when the extension is short of it.

    Parameters
    ----------
    n, n_other : int
        Length of this axis and of the other one (pixels).
    block_size : int
    padding : {"symmetric", "symmetric-swapped"}

    Returns
    -------
    ndarray of int64
        Positions in ``[0, n)``.

    Raises
    ------
    ShapeError
        An extension longer than the axis (the symmetric mirror cannot provide it).

    Examples
    --------
    >>> q2n_padded_positions(31, 32, 32, "symmetric-swapped").size  # rows of a 31 x 32 image: no extension
    31
    >>> p = q2n_padded_positions(40, 50, 32, "symmetric-swapped")  # 40 rows + 14 (the columns' shortfall)
    >>> p.size, p[-3:].tolist(), q2n_padded_positions(40, 50, 32, "symmetric").size
    (54, [28, 27, 26], 64)
    """
    bs = int(block_size)
    whole = -(-n // bs) * bs
    if padding == "symmetric":
        ext = whole - n
    elif padding == "symmetric-swapped":
        ext = -(-n_other // bs) * bs - n_other
    else:
        raise ValueError(f"q2n_padded_positions: padding {padding!r} is not a block-grid extension")
    if ext > n:
        raise ShapeError(f"image of {n} pixels along an axis is too small to be mirror-extended by {ext} pixels to "
                         f"whole {bs}-pixel blocks ({padding} padding)")
    return border_index(np.arange(min(n + ext, whole) if padding != "symmetric" else whole), n, "symmetric")


def q2n_value(total: float, count: int, precision: BlockPrecision = "float64") -> float:
    """Q2n from the sum and count of its block values (rounded to float32 with ``precision="float32"``).

    Examples
    --------
    >>> q2n_value(1.8, 2), q2n_value(0.3, 1, "float32")
    (0.9, 0.30000001192092896)
    """
    mean = float(total / count)
    return within_unit(mean if precision == "float64" else float(np.float32(mean)))


def q2n_strip_grid(reference: StripImage, fused: StripImage, r0: int, r1: int, *, block_size: int, cast: str,
                   std_floor: float, precision: BlockPrecision, padding: Padding = "symmetric",
                   grid: tuple[int, int] | None = None) -> np.ndarray:
    """Q2n block values of the block rows starting in ``[r0, r1)`` under any cast, padding, floor and precision.

    With ``grid`` (the image's rows and columns) the image is extended to the block grid here
    (:func:`q2n_padded_positions`); without, ``reference``/``fused`` are already extended (a tile's
    planes). Block rows are processed one at a time (memory: one block row of every band).

    Returns
    -------
    ndarray
        Block values, row-major.

    Examples
    --------
    >>> x = StripImage(np.random.default_rng(0).integers(0, 2048, (40, 40, 3)).astype(float))
    >>> q2n_strip_grid(x, x, 0, 40, block_size=32, cast="round-half-even", std_floor=1e-10, precision="float32",
    ...                padding="symmetric-swapped", grid=(40, 40)).round(6).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    bs = int(block_size)
    h, w = reference.shape[:2]
    if grid is not None:
        rows_all = q2n_padded_positions(grid[0], grid[1], bs, padding)
        cols = q2n_padded_positions(grid[1], grid[0], bs, padding)
    else:
        rows_all, cols = np.arange(h), np.arange(w)
    out = []
    for b0 in range(r0, min(r1, rows_all.size), bs):
        rows = rows_all[b0 : b0 + bs]
        planes = []
        for img in (reference, fused):
            part = img.rows(rows)[:, :, cols]
            buf = np.empty(part.shape)
            buf[...] = part
            planes.append(cast_to(cast, img.to_dn(buf)))
        out.append(q2n_block_grid(planes[0], planes[1], block_size=bs, shift=bs, std_floor=std_floor,
                                  integer_valued=cast != "none", block_precision=precision).ravel())
    return np.concatenate(out) if out else np.zeros(0)


def blocks_at(planes: np.ndarray, starts_y: np.ndarray, starts_x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Blocks of ``rows x cols`` pixels at the given corners, as (n_blocks, C, rows*cols).

    Parameters
    ----------
    planes : ndarray, shape (C, H, W)
        Band planes (every block must lie inside).
    starts_y, starts_x : ndarray of int
        Block corners; blocks in row-major order over (starts_y, starts_x).
    rows, cols : int
        Block size (pixels).

    Returns
    -------
    ndarray, shape (len(starts_y) * len(starts_x), C, rows * cols), float64

    Examples
    --------
    >>> blocks_at(np.arange(16.0).reshape(1, 4, 4), np.array([0, 2]), np.array([1]), 2, 2)[:, 0].tolist()
    [[1.0, 2.0, 5.0, 6.0], [9.0, 10.0, 13.0, 14.0]]
    """
    c = planes.shape[0]
    ry = (np.asarray(starts_y)[:, None] + np.arange(rows)[None, :]).ravel()
    cx = (np.asarray(starts_x)[:, None] + np.arange(cols)[None, :]).ravel()
    sub = np.asarray(planes, dtype=np.float64)[:, ry][:, :, cx]  # (C, ny*rows, nx*cols)
    ny, nx = len(starts_y), len(starts_x)
    sub = sub.reshape(c, ny, rows, nx, cols).transpose(1, 3, 0, 2, 4)
    return np.ascontiguousarray(sub).reshape(ny * nx, c, rows * cols)


def q2n_strip(reference: StripImage, fused: StripImage, r0: int, r1: int, block_size: int) -> np.ndarray:
    """Toolbox Q2n block values of the block rows starting in ``[r0, r1)`` (non-overlapping blocks).

    The image is mirror-extended at the bottom/right to whole blocks (MATLAB ``'symmetric'``),
    both images are cast with :func:`to_uint16_matlab`, and each block's hypercomplex quality is
    computed from exact integer moments.

    Parameters
    ----------
    reference, fused : StripImage
        Same (H, W, B) shape, DN after their scale.
    r0, r1 : int
        Row range; ``r0`` a multiple of ``block_size``.
    block_size : int

    Returns
    -------
    ndarray, shape (n_block_rows * n_block_cols,)
        Block values in row-major order.

    Examples
    --------
    >>> x = StripImage(np.random.default_rng(0).integers(0, 2048, (64, 64, 4)).astype(float))
    >>> q2n_strip(x, x, 0, 64, 32).round(12).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    h = reference.shape[0]
    bs = block_size
    n_rows = -(-(r1 - r0) // bs) * bs
    rows = slice(r0, r0 + n_rows) if r0 + n_rows <= h else border_index(np.arange(r0, r0 + n_rows), h, "symmetric")
    rb, fb = reference.blocks(rows, bs), fused.blocks(rows, bs)
    return block_q_values(to_uint16_matlab(rb, out=rb), to_uint16_matlab(fb, out=fb), integer_valued=True,
                          value_bound=65535.0)


def q2n_grid(h: int, w: int, block_size: int, shift: int) -> tuple[int, int, int, int]:
    """Block grid of Q2n on an ``h x w`` image: ``(block rows, block cols, est1, est2)``.

    ``block rows = ceil(h/shift)``, ``est1 = (block rows - 1) shift + block_size - h`` (rows
    missing below the last block; likewise ``est2`` on the columns), as the toolbox computes them.

    Examples
    --------
    >>> q2n_grid(80, 64, 32, 32)
    (3, 2, 16, 0)
    """
    stepx, stepy = math.ceil(h / shift), math.ceil(w / shift)
    return stepx, stepy, (stepx - 1) * shift + block_size - h, (stepy - 1) * shift + block_size - w


def q2n_grid_values(ref_planes: np.ndarray, fus_planes: np.ndarray, *, block_size: int, shift: int,
                    cast: Cast = "uint16", padding: Padding = "symmetric",
                    std_floor: float = float(np.finfo(np.float64).eps), name: str = "reference",
                    block_precision: BlockPrecision = "float64") -> np.ndarray:
    """Q2n block values on the protocol's grid of (possibly overlapping) blocks.

    Parameters
    ----------
    ref_planes, fus_planes : ndarray, shape (B, h, w), float64
        Reference and image under test, DN.
    block_size, shift : int
        Block side and step (pixels).
    cast : {"uint16", "int16-truncated", "round-half-even", "none"}
    padding : {"symmetric", "reflect", "symmetric-swapped"}
        ``"symmetric"`` (toolbox): whenever the grid does not cover the image, both images are
        extended at the bottom/right by a mirror that repeats the edge, and always cast.
        ``"reflect"`` (reprojected protocol): only when both the last block row and the last
        block column are partial, both images are extended by NumPy's ``"reflect"`` (no edge
        repetition) and cast; otherwise the images are used as they are and partial blocks keep
        the nominal ``N = block_size**2`` in the ``N/(N-1)`` factors.
        ``"symmetric-swapped"`` (hyperspectral/Sentinel-2 code: torchvision ``Pad((0, 0, est1,
        est2), 'symmetric')``): the columns are extended by ``est1`` (the rows' shortfall) and the
        rows by ``est2`` (the columns'); the block grid stays ``ceil(h/shift) x ceil(w/shift)``,
        so on a non-square image blocks past the extended end are cut there (nominal ``N``); always
        cast. Identical to ``"symmetric"`` on square images.
    std_floor : float
        Replacement for a zero block standard deviation.
    name : str
        The reference's name in messages.
    block_precision : {"float64", "float32"}
        ``"float32"``: each block's hypercomplex components and modulus rounded to float32.

    Returns
    -------
    ndarray, shape (block rows, block cols)

    Raises
    ------
    ShapeError
        Images too small for the blocks (``"symmetric"``, ``"symmetric-swapped"``: a padding
        longer than the image; ``"reflect"``: ``block_size > min(h, w) + 1``).

    Examples
    --------
    >>> x = np.random.default_rng(0).integers(0, 2048, (4, 40, 40)).astype(float)
    >>> q2n_grid_values(x, x, block_size=32, shift=32).shape
    (2, 2)
    """
    bs, sh = block_size, shift
    _, h, w = ref_planes.shape
    stepx, stepy, est1, est2 = q2n_grid(h, w, bs, sh)
    caster = _CASTERS[cast]
    if padding in ("symmetric", "symmetric-swapped"):
        pad = est1 != 0 or est2 != 0
        pad_r, pad_c = (est1, est2) if padding == "symmetric" else (est2, est1)
        if pad_r > h or pad_c > w:
            how = "" if padding == "symmetric" else " (symmetric-swapped: rows by the columns' shortfall and back)"
            raise ShapeError(f"{name}: image of {h}x{w} is too small to be mirror-extended to whole {bs}-pixel "
                             f"blocks{how}")
        rows = border_index(np.arange(h + max(pad_r, 0)), h, "symmetric") if pad else np.arange(h)
        cols = border_index(np.arange(w + max(pad_c, 0)), w, "symmetric") if pad else np.arange(w)
        cast_it = True
    else:
        check_block_fits(name, (h, w), bs)
        pad = est1 != 0 and est2 != 0
        rows = border_index(np.arange(h + max(est1, 0)), h, "reflect") if pad else np.arange(h)
        cols = border_index(np.arange(w + max(est2, 0)), w, "reflect") if pad else np.arange(w)
        cast_it = pad
    r = ref_planes[:, rows][:, :, cols]
    f = fus_planes[:, rows][:, :, cols]
    if cast_it:
        r, f = caster(r), caster(f)
    return q2n_block_grid(r, f, block_size=bs, shift=sh, steps=(stepx, stepy), std_floor=std_floor,
                          integer_valued=cast_it and cast != "none", block_precision=block_precision)


def q2n_block_grid(ref_planes: np.ndarray, fus_planes: np.ndarray, *, block_size: int, shift: int,
                   steps: tuple[int, int] | None = None, std_floor: float = float(np.finfo(np.float64).eps),
                   integer_valued: bool = False, block_precision: BlockPrecision = "float64") -> np.ndarray:
    """Q2n block values on a grid of blocks starting at multiples of ``shift`` in prepared planes.

    The grid has ``steps`` block rows and columns: the original image's ``(stepx, stepy)`` of
    :func:`q2n_grid` when the planes were padded (with overlapping blocks, ``ceil`` of the padded
    size over ``shift`` would count blocks the toolbox never visits), by default
    ``ceil(h/shift) x ceil(w/shift)`` of the planes themselves. A block that would reach past the
    end is cut there (a partial block keeps the nominal ``N = block_size**2`` in the ``N/(N-1)``
    factors, as the reprojected protocol's code does). No padding or cast happens here.

    Parameters
    ----------
    ref_planes, fus_planes : ndarray, shape (B, h, w)
    block_size, shift : int
    steps : (int, int), optional
        Block rows and columns.
    std_floor : float
    integer_valued : bool
        The planes hold integers (exact moments).
    block_precision : {"float64", "float32"}
        Precision of the block values (see :func:`q2n_grid_values`).

    Returns
    -------
    ndarray, shape steps

    Examples
    --------
    >>> x = np.random.default_rng(0).integers(0, 99, (2, 8, 8)).astype(float)
    >>> q2n_block_grid(x, x, block_size=4, shift=4).round(12).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    bs, sh = block_size, shift
    _, hh, ww = ref_planes.shape
    ny, nx = (math.ceil(hh / sh), math.ceil(ww / sh)) if steps is None else steps
    ys, xs = np.arange(ny) * sh, np.arange(nx) * sh
    values = np.empty((ys.size, xs.size))
    # group the blocks by their actual size (partial blocks at the end of a row/column)
    size_y, size_x = np.minimum(bs, hh - ys), np.minimum(bs, ww - xs)
    c = ref_planes.shape[0]
    c2 = 1 << (c - 1).bit_length()
    for nr in np.unique(size_y):
        for nc in np.unique(size_x):
            y_all, x_sel = ys[size_y == nr], xs[size_x == nc]
            per_row = x_sel.size * 8 * (2 * c * int(nr) * int(nc) + 4 * c2 * c2)  # blocks + moment tables
            step = max(1, GRID_CHUNK_BYTES // per_row)
            for i in range(0, y_all.size, step):  # a few block rows at a time: bounded memory
                y_sel = y_all[i : i + step]
                rb = blocks_at(ref_planes, y_sel, x_sel, int(nr), int(nc))
                fb = blocks_at(fus_planes, y_sel, x_sel, int(nr), int(nc))
                q = block_q_values(rb, fb, n_norm=bs * bs, std_floor=std_floor, integer_valued=integer_valued,
                                   precision=block_precision)
                values[np.ix_(y_sel // sh, x_sel // sh)] = q.reshape(y_sel.size, x_sel.size)
    return values


@batched("reference", "fused")
def q2n(
    reference: np.ndarray,
    fused: np.ndarray,
    *,
    block_size: int = 32,
    shift: int = 32,
    cast: Cast = "uint16",
    padding: Padding = "symmetric",
    std_floor: float | None = None,
    block_precision: BlockPrecision = "float64",
    return_map: bool = False,
    layout: Layout | None = None,
) -> float | tuple[float, np.ndarray]:
    """Q2n index between a reference and a fused image (toolbox ``q2n``).

    Steps (exactly as the reference toolbox with the defaults): if the size is not a whole number
    of blocks, both images are extended at the bottom/right by mirroring that includes the edge
    pixel (MATLAB 'symmetric'); both are cast to uint16 as MATLAB does (round half away from
    zero, saturate); bands are zero-padded to the next power of two; each block's hypercomplex
    quality is computed (``pansharp_iqa.hypercomplex.block_q_values``) and the moduli are
    averaged. ``cast="int16-truncated", padding="reflect"`` give the reprojected protocol's
    conventions (see ``indexes.q2n.q2n_grid_values``; its ``std_floor`` default is then 1e-10).
    The hyperspectral/Sentinel-2 code's (Ciotola et al. 2024, 2025) are ``cast="round-half-even",
    padding="symmetric-swapped", std_floor=1e-10, block_precision="float32"``; any band count is
    zero-padded to the next power of two (60 -> 64, 159 -> 256).

    Parameters
    ----------
    reference : ndarray, shape (H, W, B)
        Ground truth in digital numbers (DN).
    fused : ndarray, shape (H, W, B)
        Fused image in DN, same grid.
    block_size : int, default 32
        Block side in pixels.
    shift : int, default 32
        Step between blocks (``shift == block_size``: non-overlapping).
    cast : {"uint16", "int16-truncated", "round-half-even", "none"}
        Integer cast before the block statistics: MATLAB's ``uint16`` (round half away from zero,
        saturate), truncation to int16, rounding half to even without clipping (negative values
        kept; ``torch.round``), or none.
    padding : {"symmetric", "reflect", "symmetric-swapped"}
        Extension of images that are not a whole number of blocks (see
        ``indexes.q2n.q2n_grid_values``).
    std_floor : float, optional
        Replacement for a zero block standard deviation (machine epsilon for the toolbox,
        1e-10 under ``padding="reflect"``).
    block_precision : {"float64", "float32"}
        ``"float32"``: block values (each hypercomplex component, then the modulus) and the mean
        rounded to float32, as the hyperspectral/Sentinel-2 code's float32 tensor of block values
        (its float32 sums are not reproduced: agreement to about 1e-7).
    return_map : bool
        Also return the (n_block_rows, n_block_cols) map of block values.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

    Returns
    -------
    float or (float, ndarray)
        Q2n in [0, 1] (1 = identical); optionally the block map.

    Raises
    ------
    InputError
        Shape mismatch, non-finite values, images smaller than a block, float data in [0, 1]
        (the uint16 cast would collapse them: pass DN values), a negative reference, or images
        on different scales.

    References
    ----------
    Garzelli & Nencini, IEEE GRSL 6(4), 2009; Vivone et al., IEEE GRSM 2021.

    Examples
    --------
    >>> ref = np.random.default_rng(0).integers(0, 2048, (64, 64, 4)).astype(float)
    >>> round(q2n(ref, ref), 12)
    1.0
    """
    block_size = check_block_size(block_size)
    shift = check_block_size(shift, name="shift", minimum=1)
    check_choice("cast", cast, _CASTS)
    check_choice("padding", padding, _PADDINGS)
    check_choice("block_precision", block_precision, ("float64", "float32"))
    ref, fus = checked_pair(reference, fused, casts=cast != "none")
    if padding == "symmetric":  # the swapped padding extends smaller images too (within its mirror)
        check_min_size("reference", ref.shape, block_size)
    floor = std_floor if std_floor is not None else (
        REPROJECTED_STD_FLOOR if padding == "reflect" else float(np.finfo(np.float64).eps))
    if (shift == block_size and cast == "uint16" and padding == "symmetric" and std_floor is None
            and block_precision == "float64"):
        # the toolbox's non-overlapping blocks: strips, no whole-image copies
        h, w = ref.shape[:2]
        rs, fs = StripImage(ref), StripImage(fus)
        parts = map_strips(lambda r0, r1: q2n_strip(rs, fs, r0, r1, block_size), h, block_size)
        values = np.concatenate(parts).reshape(-1, -(-w // block_size))
    else:
        values = q2n_grid_values(np.moveaxis(ref, 2, 0), np.moveaxis(fus, 2, 0), block_size=block_size,
                                 shift=shift, cast=cast, padding=padding, std_floor=floor,
                                 block_precision=block_precision)
    value = q2n_value(float(values.sum()), values.size, block_precision)
    return (value, values) if return_map else value

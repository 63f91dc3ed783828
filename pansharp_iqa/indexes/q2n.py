"""Q2n: the hypercomplex quality index for images of any band count (Q4, Q8, ...).

References
----------
Garzelli & Nencini, "Hypercomplex quality assessment of multi/hyperspectral images", IEEE GRSL 6(4),
2009, doi:10.1109/LGRS.2009.2022650. Alparone et al., "A global quality measurement of pan-sharpened
multispectral imagery", IEEE GRSL 1(4), 2004 (Q4). Vivone et al., IEEE GRSM 2021 (toolbox ``q2n``).
"""

from __future__ import annotations

import numpy as np

from ..hypercomplex import block_q_values
from ..validation import InputError, check_min_size, checked_pair
from .reduced_pass import StripImage, reduced_sums, to_uint16_matlab

__all__ = ["q2n", "to_uint16_matlab"]


def _block_starts(n: int, block_size: int, shift: int) -> np.ndarray:
    steps = -(-n // shift)
    return np.arange(steps) * shift


def _gather_blocks(img: np.ndarray, starts_y: np.ndarray, starts_x: np.ndarray, bs: int) -> np.ndarray:
    """(n_blocks, bs*bs, B) pixel arrays of the blocks, row-major over block positions."""
    h, w, b = img.shape
    if len(starts_y) * bs == h and len(starts_x) * bs == w and np.all(np.diff(starts_y) == bs) and np.all(
        np.diff(starts_x) == bs
    ):
        blocks = img.reshape(len(starts_y), bs, len(starts_x), bs, b).transpose(0, 2, 1, 3, 4)
        return blocks.reshape(-1, bs * bs, b)
    win = np.lib.stride_tricks.sliding_window_view(img, (bs, bs), axis=(0, 1))  # (h', w', B, bs, bs)
    blocks = win[starts_y][:, starts_x]  # (ny, nx, B, bs, bs)
    return blocks.transpose(0, 1, 3, 4, 2).reshape(-1, bs * bs, b)


def q2n(
    reference: np.ndarray,
    fused: np.ndarray,
    *,
    block_size: int = 32,
    shift: int = 32,
    return_map: bool = False,
) -> float | tuple[float, np.ndarray]:
    """Q2n index between a reference and a fused image (toolbox ``q2n``).

    Steps (exactly as the reference toolbox): if the size is not a whole number of blocks, both
    images are extended at the bottom/right by mirroring that includes the edge pixel (MATLAB
    'symmetric'); both are cast to uint16 as MATLAB does (round half away from zero, saturate);
    bands are zero-padded to the next power of two; each block's hypercomplex quality is computed
    (:func:`pansharp_iqa.hypercomplex.block_q_values`) and the moduli are averaged.

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
    return_map : bool
        Also return the (n_block_rows, n_block_cols) map of block values.

    Returns
    -------
    float or (float, ndarray)
        Q2n in [0, 1] (1 = identical); optionally the block map.

    Raises
    ------
    InputError
        Shape mismatch, non-finite values, images smaller than a block, or float data in [0, 1]
        (the uint16 cast would collapse them: pass DN values).

    References
    ----------
    Garzelli & Nencini, IEEE GRSL 6(4), 2009; Vivone et al., IEEE GRSM 2021.
    """
    block_size, shift = int(block_size), int(shift)
    if block_size < 2 or shift < 1:
        raise InputError(f"block_size must be >= 2 and shift >= 1, got {block_size}, {shift}")
    ref, fus = checked_pair(reference, fused, dn_what="Q2n")
    check_min_size("reference", ref, block_size)
    return _q2n_core(ref, fus, block_size, shift, return_map)


def _q2n_core(
    ref: np.ndarray, fus: np.ndarray, block_size: int, shift: int, return_map: bool
) -> float | tuple[float, np.ndarray]:
    if shift == block_size:  # non-overlapping blocks: the strip pass (no whole-image copies)
        blocks = reduced_sums(StripImage(ref), StripImage(fus), indexes={"Q2n"},
                              block_size=block_size).q2n_blocks
        value = float(blocks.mean())
        return (value, blocks) if return_map else value
    h, w, nb = ref.shape
    sy, sx = _block_starts(h, block_size, shift), _block_starts(w, block_size, shift)
    est1 = int(sy[-1]) + block_size - h
    est2 = int(sx[-1]) + block_size - w
    if est1 or est2:
        if est1 > h or est2 > w:
            raise InputError(
                f"image of {h}x{w} is too small to be mirror-extended to whole {block_size}-pixel blocks"
            )
        pad = ((0, est1), (0, est2), (0, 0))
        ref = np.pad(ref, pad, mode="symmetric")
        fus = np.pad(fus, pad, mode="symmetric")
    n_comp = 1 << (nb - 1).bit_length()

    rb = _gather_blocks(to_uint16_matlab(ref), sy, sx, block_size)
    fb = _gather_blocks(to_uint16_matlab(fus), sy, sx, block_size)
    if n_comp != nb:
        zeros = np.zeros(rb.shape[:2] + (n_comp - nb,))
        rb = np.concatenate([rb, zeros], axis=2)
        fb = np.concatenate([fb, zeros], axis=2)
    values = block_q_values(rb, fb, integer_valued=True)  # uint16-cast values
    value = float(values.mean())
    if return_map:
        return value, values.reshape(len(sy), len(sx))
    return value

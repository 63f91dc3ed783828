"""Whole-scene inference by overlapping fixed-size tiles with seamless (core-crop) stitching.

Every tile has the same static shape (T x T; the scene is reflect-padded at the bottom/right so
the last tiles are full), which graph mode on Ascend/GPU and a fixed-shape MindIR need. Tiles
start every ``T - overlap`` pixels; each output pixel is taken from the one tile whose *core*
(the tile minus ``overlap/2`` on its inner sides) contains it, so no pixel comes from within
``overlap/2`` of an inner tile border and there is no blending seam. For a network whose
receptive-field radius is <= ``overlap/2`` the result equals whole-image inference exactly.

NLRNet itself (Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097) is not strictly
local: its InstanceNorms and ENLA context vectors use per-tile statistics, so tiled and
whole-image outputs differ slightly (as they differ between training patches and scenes); use
``tile=None`` (whole scene) where memory allows, and a large tile otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["tile_starts", "tiled_predict"]


def tile_starts(length: int, tile: int, overlap: int) -> list[int]:
    """Tile start offsets (pixels) covering ``length`` with tiles of ``tile`` px.

    Parameters
    ----------
    length : int
        Image extent, px.
    tile : int
        Tile extent, px.
    overlap : int
        Overlap between neighbours, px (even, ``0 <= overlap < tile``).

    Returns
    -------
    list of int
        ``0, s, 2s, ...`` with ``s = tile - overlap``, up to the first tile reaching ``length``.
    """
    if tile <= 0 or not 0 <= overlap < tile or overlap % 2:
        raise ValueError(f"need tile > 0 and an even overlap in [0, tile); got tile={tile}, overlap={overlap}")
    step = tile - overlap
    starts = [0]
    while starts[-1] + tile < length:
        starts.append(starts[-1] + step)
    return starts


def _core(starts: list[int], tile: int, overlap: int, i: int, length: int) -> tuple[int, int]:
    lo = 0 if i == 0 else starts[i] + overlap // 2
    hi = length if i == len(starts) - 1 else starts[i] + tile - overlap // 2
    return lo, min(hi, length)


def tiled_predict(predict: Callable[[np.ndarray, np.ndarray], np.ndarray], lms: np.ndarray,
                  pan: np.ndarray, *, tile: int | None, overlap: int = 32,
                  batch: int = 1) -> np.ndarray:
    """Fuse a whole scene tile by tile.

    Parameters
    ----------
    predict : callable
        ``predict(lms, pan) -> fused`` on float32 batches (n, B, T, T), (n, 1, T, T) -> (n, B, T, T).
    lms : ndarray, shape (B, H, W)
        EXP-upsampled MS at PAN scale, [0, 1].
    pan : ndarray, shape (H, W) or (1, H, W)
        PAN, [0, 1].
    tile : int or None
        Tile size, px; ``None`` runs the whole scene at once.
    overlap : int
        Overlap between tiles, px (even). Must be at least twice the receptive-field radius
        for a local network to be stitched exactly.
    batch : int
        Tiles per ``predict`` call (the last call is padded to the same size).

    Returns
    -------
    ndarray, shape (B, H, W), float32
    """
    lms = np.asarray(lms, dtype=np.float32)
    pan = np.asarray(pan, dtype=np.float32).reshape(1, *lms.shape[1:])
    _, h, w = lms.shape
    if tile is None:
        return np.asarray(predict(lms[None], pan[None]), dtype=np.float32)[0]
    ys, xs = tile_starts(h, tile, overlap), tile_starts(w, tile, overlap)
    hp, wp = ys[-1] + tile, xs[-1] + tile
    pad = ((0, 0), (0, hp - h), (0, wp - w))
    lms_p = np.pad(lms, pad, mode="symmetric")
    pan_p = np.pad(pan, pad, mode="symmetric")
    jobs = [(i, j) for i in range(len(ys)) for j in range(len(xs))]
    out = np.empty_like(lms)
    for start in range(0, len(jobs), batch):
        chunk = jobs[start:start + batch]
        chunk_padded = chunk + [chunk[-1]] * (batch - len(chunk))
        a = np.stack([lms_p[:, ys[i]:ys[i] + tile, xs[j]:xs[j] + tile] for i, j in chunk_padded])
        b = np.stack([pan_p[:, ys[i]:ys[i] + tile, xs[j]:xs[j] + tile] for i, j in chunk_padded])
        res = np.asarray(predict(a, b), dtype=np.float32)
        for k, (i, j) in enumerate(chunk):
            y0, y1 = _core(ys, tile, overlap, i, h)
            x0, x1 = _core(xs, tile, overlap, j, w)
            out[:, y0:y1, x0:x1] = res[k, :, y0 - ys[i]:y1 - ys[i], x0 - xs[j]:x1 - xs[j]]
    return out

"""Windowed versions of the core's whole-image operators, exact on the tile thanks to halos.

Each operator is the core function itself (``interp23tap``, ``imresize``, ``mtf_filter``) applied
to the tile plus a halo whose pixels come from the global border rule; the halo is wide enough that
the operator's own border handling on the window never reaches the tile, so the tile's values are
those of the whole-image computation.

Halo widths
-----------
* MTF filter (41x41 correlation, replicate border): ``size // 2 = 20`` pixels.
* 23-tap EXP upsampler (circular border): every x2 step mixes samples at most 6 input samples
  away, so errors from the window's own wrap spread by at most ``6 + 6/2 + 6/4 + ... < 12``
  low-resolution samples; :data:`EXP_HALO_LR` = 13 low-resolution samples. At ratio 6 the x3 sinc
  stage (symmetric mirror at the image border) reads 31 low-resolution samples a side of the x3
  samples the x2 step needs (:func:`pansharp_iqa.resample.exp_halo_support`).
* Bicubic antialiased ``imresize(., 1/ratio)`` (kernel width 4 ratio, symmetric mirror): output
  sample ``j`` reads input rows ``ratio*j - 1.5 ratio - 1 ... ratio*j + 2.5 ratio + 1``; the halo is
  :func:`imresize_halo` = a multiple of ``ratio`` of at least ``2 ratio + 3`` pixels, so the
  window's output grid stays aligned with the global one.

References
----------
Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315 (``interp23tap``, ``MTF``,
``imresize`` use in ``indexes_evaluation_FS``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..borders import border_index, consecutive_runs
from ..mtf import mtf_filter
from ..resample import EXP_HALO_LR, exp_halo_support, exp_halo_window, imresize
from .patch import Patch

__all__ = [
    "EXP_HALO_LR", "MTF_SIZE", "exp_support", "exp_window", "imresize_halo", "imresize_support",
    "imresize_at", "mtf_support", "mtf_window",
]

MTF_SIZE = 41


def exp_support(lo: int, hi: int, n_low: int, ratio: int) -> np.ndarray:
    """Low-resolution positions that EXP upsampling of ``[lo, hi)`` needs (wrapped; ratio 6: mirrored too)."""
    return exp_halo_support(lo, hi, n_low, ratio)


def exp_window(
    get_low: Callable[[np.ndarray, np.ndarray], np.ndarray],
    rows_lr: tuple[int, int],
    cols_lr: tuple[int, int],
    shape_lr: tuple[int, int],
    ratio: int,
) -> np.ndarray:
    """``interp23tap(low, ratio)`` restricted to a tile, computed from the tile's low-res window."""
    low = get_low(exp_support(*rows_lr, shape_lr[0], ratio), exp_support(*cols_lr, shape_lr[1], ratio))
    return exp_halo_window(low, rows_lr, cols_lr, shape_lr, ratio)


def imresize_halo(ratio: int) -> int:
    """Halo (PAN pixels, a multiple of ``ratio``) for a windowed ``imresize(., 1/ratio)``."""
    return ratio * -(-(2 * ratio + 3) // ratio)


def _imresize_run_support(lo: int, hi: int, n_high: int, ratio: int) -> np.ndarray:
    h = imresize_halo(ratio)
    return border_index(np.arange(lo * ratio - h, hi * ratio + h), n_high, "symmetric")


def imresize_support(idx_low: np.ndarray, n_high: int, ratio: int) -> np.ndarray:
    """High-resolution positions that ``imresize(., 1/ratio)`` at low-res positions ``idx_low`` reads."""
    parts = [_imresize_run_support(a, b, n_high, ratio) for a, b in consecutive_runs(idx_low)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def imresize_at(
    patch: Patch, rows_low: np.ndarray, cols_low: np.ndarray, shape_high: tuple[int, int], ratio: int
) -> np.ndarray:
    """``imresize(image, 1/ratio)`` at given low-resolution positions, from a patch of the image."""
    h = imresize_halo(ratio) // ratio
    row_runs, col_runs = consecutive_runs(rows_low), consecutive_runs(cols_low)
    out_rows = []
    for r0, r1 in row_runs:
        ri = _imresize_run_support(r0, r1, shape_high[0], ratio)
        pieces = []
        for c0, c1 in col_runs:
            ci = _imresize_run_support(c0, c1, shape_high[1], ratio)
            small = imresize(patch.take(ri, ci), 1.0 / ratio)
            pieces.append(small[h : h + r1 - r0, h : h + c1 - c0])
        out_rows.append(np.concatenate(pieces, axis=1))
    return np.concatenate(out_rows, axis=0)


def mtf_support(lo: int, hi: int, n: int, size: int = MTF_SIZE) -> np.ndarray:
    """Positions (replicate border) that a ``size``-tap MTF filter of ``[lo, hi)`` reads."""
    return border_index(np.arange(lo - size // 2, hi + size // 2), n, "replicate")


def mtf_window(
    patch: Patch,
    rows: tuple[int, int],
    cols: tuple[int, int],
    shape: tuple[int, int],
    gnyq: float | Sequence[float],
    ratio: int,
    *,
    sigma_form: str = "2020",
) -> np.ndarray:
    """``mtf_filter(image, gnyq, ratio)`` restricted to a tile."""
    k = MTF_SIZE // 2
    ext = patch.take(mtf_support(*rows, shape[0]), mtf_support(*cols, shape[1]))
    out = mtf_filter(ext, gnyq, ratio, sigma_form=sigma_form)  # type: ignore[arg-type]
    return out[k : k + rows[1] - rows[0], k : k + cols[1] - cols[0]]

"""A window of the EXP-upsampled MS from low-resolution windows (displays of crops): the catalogue's
declaration computed by the full-resolution engine (:meth:`pansharp_iqa.indexes.full_pass.Scene.window`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..indexes.catalog import ChunkContext
from ..indexes.full_pass import Scene

__all__ = ["exp_window"]


def exp_window(
    get_low: Callable[[np.ndarray, np.ndarray], np.ndarray],
    rows_lr: tuple[int, int],
    cols_lr: tuple[int, int],
    shape_lr: tuple[int, int],
    ratio: int,
) -> np.ndarray:
    """``interp23tap(low, ratio)`` restricted to low-resolution rows/columns ``[lo, hi)``, as (h, w, B), from
    ``get_low(rows, cols)``: the (h, w, B) low-resolution pixels at (wrapped) global positions."""
    scene = Scene(lambda role, rows, cols: np.moveaxis(get_low(rows, cols), 2, 0), ("ms",),
                  (shape_lr[0] * ratio, shape_lr[1] * ratio), ChunkContext(ratio=ratio))
    rows, cols = (np.arange(lo * ratio, hi * ratio) for lo, hi in (rows_lr, cols_lr))
    return np.moveaxis(scene.window("exp", rows, cols), 0, 2)

"""Border rules as index maps: where a pixel outside the image takes its value from.

:func:`border_index` maps integer positions (possibly outside ``[0, n)``) to positions inside the
image, exactly as an operation extends the whole image at its edges. The in-memory indexes extend
images through it, and a tile's halo built with it holds the same values the in-memory computation
sees, so an operator applied to a tile plus its halo gives the same numbers on the tile as on the
whole image. The rules, by name:

``"symmetric"``
    Mirror that repeats the edge pixel (MATLAB/NumPy ``'symmetric'``; period ``2n``):
    ``-1 -> 0``, ``n -> n-1``. Q2n's extension to whole blocks, ``imresize``'s index table.
``"reflect"``
    Mirror without the edge pixel (NumPy ``'reflect'``; period ``2(n-1)``): ``-1 -> 1``,
    ``n -> n-2``. The reprojected protocol's Q2n padding.
``"replicate"``
    Edge replication (``imfilter(..., 'replicate')``, OpenCV ``BORDER_REPLICATE``).
``"wrap"``
    Circular wrap-around (``interp23tap``'s circular convolution).
``"constant"``
    Zero padding (MATLAB ``imfilter`` default): outside positions become ``-1``, read as 0.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["BorderMode", "BORDER_MODES", "border_index", "consecutive_runs"]

BorderMode = Literal["symmetric", "reflect", "replicate", "wrap", "constant"]
BORDER_MODES = ("symmetric", "reflect", "replicate", "wrap", "constant")


def border_index(idx: np.ndarray, n: int, mode: BorderMode) -> np.ndarray:
    """Positions inside ``[0, n)`` that positions ``idx`` read under a border rule.

    Parameters
    ----------
    idx : array_like of int
        Positions along one axis (pixels), possibly outside ``[0, n)``.
    n : int
        Image length along that axis (pixels).
    mode : {"symmetric", "reflect", "replicate", "wrap", "constant"}
        See the module docstring.

    Returns
    -------
    ndarray of int64
        Positions in ``[0, n)`` (``-1`` for zero padding under ``"constant"``).

    Examples
    --------
    >>> idx = np.arange(-2, 6)
    >>> for mode in BORDER_MODES:
    ...     print(f"{mode:9s}", border_index(idx, 4, mode).tolist())
    symmetric [1, 0, 0, 1, 2, 3, 3, 2]
    reflect   [2, 1, 0, 1, 2, 3, 2, 1]
    replicate [0, 0, 0, 1, 2, 3, 3, 3]
    wrap      [2, 3, 0, 1, 2, 3, 0, 1]
    constant  [-1, -1, 0, 1, 2, 3, -1, -1]
    """
    i = np.asarray(idx, dtype=np.int64)
    if mode == "symmetric":
        m = np.mod(i, 2 * n)
        return np.where(m >= n, 2 * n - 1 - m, m)
    if mode == "reflect":
        if n == 1:
            return np.zeros_like(i)
        period = 2 * (n - 1)
        m = np.mod(i, period)
        return np.where(m >= n, period - m, m)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return np.mod(i, n)
    if mode == "constant":
        return np.where((i >= 0) & (i < n), i, -1)
    raise ValueError(f"unknown border mode {mode!r}; known: {BORDER_MODES}")


def consecutive_runs(idx: np.ndarray) -> list[tuple[int, int]]:
    """Split an index sequence into maximal runs of consecutive ascending integers.

    Parameters
    ----------
    idx : ndarray of int, 1-D

    Returns
    -------
    list of (start, stop)
        Half-open ranges whose concatenation is ``idx`` (order kept, repeats allowed).

    Examples
    --------
    >>> consecutive_runs(np.array([0, 1, 2, 5, 6, 3]))
    [(0, 3), (5, 7), (3, 4)]
    """
    i = np.asarray(idx, dtype=np.int64)
    if i.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(i) != 1) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [i.size]])
    return [(int(i[a]), int(i[b - 1]) + 1) for a, b in zip(starts, stops, strict=True)]

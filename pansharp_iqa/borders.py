"""Border rules as index maps: where a pixel outside the image takes its value from.

Each function maps integer positions (possibly outside ``[0, n)``) to positions inside the image,
exactly as an operation extends the whole image at its edges: MATLAB/NumPy ``'symmetric'``
(Q2n's extension to whole blocks, ``imresize``), NumPy ``'reflect'`` (the reprojected protocol's
Q2n), edge replication (``imfilter(..., 'replicate')``), circular wrap (``interp23tap``) and zero
padding. The in-memory indexes extend images through these maps, and a tile's halo built with
them holds the same values the in-memory computation sees, so an operator applied to the tile plus
its halo gives the same numbers on the tile as on the whole image.
"""

from __future__ import annotations

import numpy as np

__all__ = ["symmetric", "reflect", "replicate", "wrap", "constant", "consecutive_runs"]


def symmetric(idx: np.ndarray, n: int) -> np.ndarray:
    """Mirror that repeats the edge pixel (MATLAB/NumPy ``'symmetric'``), periodic with period 2n.

    Parameters
    ----------
    idx : ndarray of int
        Positions along one axis (pixels).
    n : int
        Image length along that axis (pixels).

    Returns
    -------
    ndarray of int
        Positions in ``[0, n)``: ``-1 -> 0``, ``-2 -> 1``, ``n -> n-1``, ``n+1 -> n-2``. Used by
        ``imresize`` (its ``aux`` index table) and Q2n's bottom/right extension.

    Examples
    --------
    >>> symmetric(np.arange(-2, 6), 4).tolist()
    [1, 0, 0, 1, 2, 3, 3, 2]
    """
    m = np.mod(np.asarray(idx, dtype=np.int64), 2 * n)
    return np.where(m >= n, 2 * n - 1 - m, m)


def reflect(idx: np.ndarray, n: int) -> np.ndarray:
    """Mirror without repeating the edge pixel (NumPy ``'reflect'``), periodic with period 2(n-1).

    Parameters
    ----------
    idx : ndarray of int
        Positions along one axis (pixels).
    n : int
        Image length along that axis (pixels).

    Returns
    -------
    ndarray of int
        Positions in ``[0, n)``: ``-1 -> 1``, ``n -> n-2``. Used by the reprojected protocol's Q2n
        padding.

    Examples
    --------
    >>> reflect(np.arange(-2, 6), 4).tolist()
    [2, 1, 0, 1, 2, 3, 2, 1]
    """
    i = np.asarray(idx, dtype=np.int64)
    if n == 1:
        return np.zeros_like(i)
    period = 2 * (n - 1)
    m = np.mod(i, period)
    return np.where(m >= n, period - m, m)


def replicate(idx: np.ndarray, n: int) -> np.ndarray:
    """Edge replication (``imfilter(..., 'replicate')``, OpenCV ``BORDER_REPLICATE``).

    Parameters
    ----------
    idx : ndarray of int
    n : int

    Returns
    -------
    ndarray of int
        ``clip(idx, 0, n-1)``.

    Examples
    --------
    >>> replicate(np.arange(-2, 6), 4).tolist()
    [0, 0, 0, 1, 2, 3, 3, 3]
    """
    return np.clip(np.asarray(idx, dtype=np.int64), 0, n - 1)


def wrap(idx: np.ndarray, n: int) -> np.ndarray:
    """Circular wrap-around (``interp23tap``'s circular convolution).

    Parameters
    ----------
    idx : ndarray of int
    n : int

    Returns
    -------
    ndarray of int
        ``idx mod n``.

    Examples
    --------
    >>> wrap(np.arange(-2, 6), 4).tolist()
    [2, 3, 0, 1, 2, 3, 0, 1]
    """
    return np.mod(np.asarray(idx, dtype=np.int64), n)


def constant(idx: np.ndarray, n: int) -> np.ndarray:
    """Zero padding (MATLAB ``imfilter`` default): outside positions become ``-1`` (read as 0).

    Parameters
    ----------
    idx : ndarray of int
    n : int

    Returns
    -------
    ndarray of int
        ``idx`` where ``0 <= idx < n``, else ``-1``.

    Examples
    --------
    >>> constant(np.arange(-2, 6), 4).tolist()
    [-1, -1, 0, 1, 2, 3, -1, -1]
    """
    i = np.asarray(idx, dtype=np.int64)
    return np.where((i >= 0) & (i < n), i, -1)


def consecutive_runs(idx: np.ndarray) -> list[tuple[int, int]]:
    """Split an index sequence into maximal runs of consecutive ascending integers.

    Parameters
    ----------
    idx : ndarray of int, 1-D, non-empty

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
    return [(int(i[a]), int(i[b - 1]) + 1) for a, b in zip(starts, stops)]

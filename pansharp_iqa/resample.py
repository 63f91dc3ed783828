"""Resampling as the reference toolbox does it: the 23-tap EXP upsampler and MATLAB's ``imresize``.

References
----------
Aiazzi, Alparone, Baronti, Garzelli, "Context-driven fusion of high spatial and spectral resolution
images based on oversampled multiresolution analysis", IEEE TGRS 40(10), 2002 (23-tap filter).
Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315 (``interp23tap``).
Keys, "Cubic convolution interpolation for digital image processing", IEEE TASSP 29(6), 1981.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import cv2
import numpy as np

from .parallel import map_bands
from .validation import SettingError, ShapeError, check_ratio

if TYPE_CHECKING:  # scipy.sparse costs about 0.2 s to import: loaded by resize_matrix on first use
    from scipy import sparse

__all__ = ["interp23tap", "interp23tap_planes", "imresize", "resize_matrix", "EXP_HALF_TAPS"]

#: Half of the symmetric 23-tap EXP filter (centre first), as in the toolbox's ``interp23tap``.
EXP_HALF_TAPS = 2.0 * np.array(
    [0.5, 0.305334091185, 0.0, -0.072698593239, 0.0, 0.021809577942, 0.0,
     -0.005192756653, 0.0, 0.000807762146, 0.0, -0.000060081482]
)
# taps at odd distances 1, 3, ..., 11 from the centre (the even ones are 0 except the centre = 1)
_ODD_TAPS = EXP_HALF_TAPS[1::2]


_POLYPHASE = np.concatenate([_ODD_TAPS[::-1], _ODD_TAPS])  # c6..c1 c1..c6


def _upsample2_axis(x: np.ndarray, axis: int, samples_at_odd: bool, dst: np.ndarray | None = None) -> np.ndarray:
    """One x2 step along one axis of a 2-D array: zero-stuff, circular 23-tap filtering."""
    n = x.shape[axis]
    pad = ((7, 7), (0, 0)) if axis == 0 else ((0, 0), (7, 7))
    padded = np.pad(x, pad, mode="wrap")
    kernel = _POLYPHASE.reshape(-1, 1) if axis == 0 else _POLYPHASE.reshape(1, -1)
    # d[y] = sum_j P[j] * padded[y + j] along the axis (correlation anchored at the first tap)
    d = cv2.filter2D(padded, cv2.CV_64F, kernel, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
    shape = (2 * n, x.shape[1]) if axis == 0 else (x.shape[0], 2 * n)
    out = np.empty(shape, dtype=np.float64) if dst is None else dst
    # samples at odd positions: new sample 2i lies between old i-1 and i (old neighbours i-6..i+5);
    # samples at even positions: new sample 2i+1 lies between old i and i+1 (old i-5..i+6)
    keep, new, first = (slice(1, None, 2), slice(0, None, 2), 1) if samples_at_odd else (
        slice(0, None, 2), slice(1, None, 2), 2)
    if axis == 0:
        out[keep], out[new] = x, d[first : first + n]
    else:
        out[:, keep], out[:, new] = x, d[:, first : first + n]
    return out


def interp23tap(image: np.ndarray, ratio: int) -> np.ndarray:
    """Upsample by ``ratio`` with the 23-tap EXP interpolator (toolbox ``interp23tap``).

    Works in x2 steps: the first step places the samples at the odd (0-based) positions, later
    steps at the even ones; each step filters columns then rows with circular borders.

    Unlike the toolbox, whose loop runs ``ratio/2`` times (so ratio 8 upsamples by 16), this runs
    ``log2(ratio)`` steps and is correct for every power of two; for ratios 2 and 4 the two agree.

    Parameters
    ----------
    image : ndarray, shape (h, w) or (h, w, B)
        Low-resolution image (any real dtype; not modified).
    ratio : int
        Power of two (2, 4, 8, ...).

    Returns
    -------
    ndarray, shape (ratio*h, ratio*w) or (ratio*h, ratio*w, B), float64

    References
    ----------
    Aiazzi et al., IEEE TGRS 40(10), 2002; Vivone et al., IEEE GRSM 2021.
    """
    ratio = check_ratio(ratio, exp=True)
    arr = np.asarray(image, dtype=np.float64)
    if arr.ndim not in (2, 3):
        raise ShapeError(f"image must be (h, w) or (h, w, B), got shape {arr.shape}")
    bands = arr[:, :, None] if arr.ndim == 2 else arr
    planes = interp23tap_planes(np.moveaxis(bands, 2, 0), ratio)
    return planes[0] if arr.ndim == 2 else np.ascontiguousarray(np.moveaxis(planes, 0, 2))


def interp23tap_planes(planes: np.ndarray, ratio: int) -> np.ndarray:
    """:func:`interp23tap` on band planes: (B, h, w) in, C-contiguous (B, ratio*h, ratio*w) out."""
    ratio = check_ratio(ratio, exp=True)
    steps = ratio.bit_length() - 1
    nb, h, w = planes.shape
    result = np.empty((nb, h << steps, w << steps))

    def one(b: int) -> None:
        out = np.ascontiguousarray(planes[b], dtype=np.float64)
        for step in range(steps):
            first = step == 0
            out = _upsample2_axis(out, 0, samples_at_odd=first)
            out = _upsample2_axis(out, 1, samples_at_odd=first, dst=result[b] if step == steps - 1 else None)

    map_bands(one, nb)
    return result


def _cubic(x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    ax2, ax3 = ax * ax, ax * ax * ax
    return (1.5 * ax3 - 2.5 * ax2 + 1.0) * (ax <= 1) + (-0.5 * ax3 + 2.5 * ax2 - 4.0 * ax + 2.0) * (
        (ax > 1) & (ax <= 2)
    )


@functools.lru_cache(maxsize=64)
def resize_matrix(in_len: int, scale: float) -> sparse.csr_matrix:
    """Sparse (out_len, in_len) weight matrix of MATLAB's bicubic ``imresize`` along one axis
    (antialiased when shrinking; samples outside mirrored, edge repeated; mirrored duplicates
    summed). :func:`imresize` and the device backend apply it.

    Parameters
    ----------
    in_len : int
        Input length (samples).
    scale : float
        Scale factor (``1/4`` shrinks by 4).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (ceil(in_len * scale), in_len)

    Examples
    --------
    >>> resize_matrix(8, 0.5).shape
    (4, 8)
    """
    from scipy import sparse

    out_len = int(np.ceil(in_len * scale))
    width = 4.0
    if scale < 1:
        kernel = lambda t: scale * _cubic(scale * t)  # noqa: E731 - antialiasing stretch
        width = width / scale
    else:
        kernel = _cubic
    x = np.arange(1, out_len + 1, dtype=np.float64)
    u = x / scale + 0.5 * (1.0 - 1.0 / scale)
    left = np.floor(u - width / 2.0)
    taps = int(np.ceil(width)) + 2
    idx = left[:, None] + np.arange(taps)[None, :]
    w = kernel(u[:, None] - idx)
    w = w / w.sum(axis=1, keepdims=True)
    aux = np.concatenate([np.arange(1, in_len + 1), np.arange(in_len, 0, -1)])
    idx0 = aux[np.mod(idx - 1, aux.size).astype(np.int64)] - 1
    # sparse (each output sample has ceil(width) + 2 taps); duplicates from mirroring are summed
    return sparse.csr_matrix(
        (w.ravel(), (np.repeat(np.arange(out_len), taps), idx0.ravel())), shape=(out_len, in_len)
    )


def imresize(image: np.ndarray, scale: float) -> np.ndarray:
    """MATLAB ``imresize(I, scale)`` with the default bicubic kernel and antialiasing.

    Rows are resized first, then columns; output size ``ceil(n*scale)``; out-of-range samples are
    mirrored symmetrically (edge pixel repeated). Computed in float64 (as the toolbox does on
    double images; no rounding to the input's integer class).

    Parameters
    ----------
    image : ndarray, shape (H, W) or (H, W, B)
        The image (any dtype; computed in float64).
    scale : float
        Scale factor, e.g. ``1/4`` to shrink by 4.

    Returns
    -------
    ndarray, float64, shape (ceil(H*scale), ceil(W*scale)[, B])

    References
    ----------
    Keys, IEEE TASSP 29(6), 1981; MATLAB Image Processing Toolbox ``imresize`` documentation.
    """
    arr = np.asarray(image, dtype=np.float64)
    if arr.ndim not in (2, 3):
        raise ShapeError(f"image must be (H, W) or (H, W, B), got shape {arr.shape}")
    if not scale > 0:
        raise SettingError(f"scale must be positive, got {scale!r}")
    rows = resize_matrix(arr.shape[0], float(scale))
    cols = resize_matrix(arr.shape[1], float(scale))
    h, w = arr.shape[:2]
    rest = arr.shape[2:]
    tmp = rows @ arr.reshape(h, -1)  # rows first, as MATLAB (scales are equal)
    tmp = tmp.reshape((rows.shape[0], w) + rest)
    tmp = np.moveaxis(tmp, 1, 0).reshape(w, -1)
    out = (cols @ tmp).reshape((cols.shape[0], rows.shape[0]) + rest)
    return np.ascontiguousarray(np.moveaxis(out, 0, 1))

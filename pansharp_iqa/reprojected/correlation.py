"""Local cross-correlation field of the reprojected protocol (coregistration and D_rho).

Scarpa & Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote Sensing 14(8):1808,
2022, doi:10.3390/rs14081808; facts in ``fullres2022.md`` section 3.

For a half width ``w`` the window of output pixel ``(y, x)`` covers rows ``y-w+1 .. y+w`` and columns
``x-w+1 .. x+w`` (2w x 2w pixels, asymmetric), with zeros outside the image. Box sums come from a
float64 integral image (zero padding by ``w`` on every side, cumulative sum down the rows, then along
the columns, four-corner difference), as in the reference code: ``integral="ordered"`` reproduces
those additions in the same order (bit-identical to ``cumsum(cumsum(P, 0), 1)``); ``"opencv"`` uses
OpenCV's float64 ``integral`` (same integral image, other summation order: individual rho values
move by ~1e-9, D_rho and the coregistration means by ~1e-14; faster, ``docs/performance.md``).

Each pixel is centred by the mean of **its own** window (not by the output pixel's window): this is
not the windowed Pearson coefficient, and it matters (D_rho 0.055 vs 0.112 on a real IKONOS scene).
"""

from __future__ import annotations

from typing import Literal

import cv2
import numpy as np

from ..parallel import chunks, parallel_map
from ..parallel import n_threads as n_workers
from ..validation import check_block_size, check_choice, image_and_pan

__all__ = [
    "SXX_FLOOR",
    "RHO_EPS",
    "IntegralMethod",
    "box_sum",
    "centre_and_energy",
    "clip_sums",
    "local_cross_correlation",
    "one_minus_rho_sum",
]

#: Lower clip of the windowed sums of squares.
SXX_FLOOR = 1e-20
#: Added to the denominator sqrt(Sxx Syy).
RHO_EPS = 1e-20

IntegralMethod = Literal["ordered", "opencv"]
_METHODS = ("ordered", "opencv")


def _check_method(method: str) -> str:
    return check_choice("integral", method, _METHODS)


def _box_ordered(
    flat: np.ndarray, w: int, integ: np.ndarray | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    n, h, wd = flat.shape
    d = 2 * w
    if integ is None:
        integ = np.zeros((n, h + d, wd + d), dtype=np.float64)
    else:  # reused buffer: leading pad rows/columns must be zero; the rest is overwritten below
        integ[:, :w] = 0.0
        integ[:, :, :w] = 0.0
    integ[:, w : w + h, w : w + wd] = flat
    # Rows: I[i] = I[i-1] + P[i], i.e. np.cumsum(axis=-2) (same additions); zero rows need no work.
    # (Trailing pad columns may hold garbage here: they are overwritten after the column pass.)
    for i in range(w + 1, w + h):
        np.add(integ[:, i], integ[:, i - 1], out=integ[:, i])
    integ[:, w + h :] = integ[:, w + h - 1 : w + h]
    # Columns: cumulative sum along the last axis, on the rows that are not all zero.
    body = integ[:, w:, w : w + wd]
    np.cumsum(body, axis=-1, out=body)
    integ[:, w:, w + wd :] = integ[:, w:, w + wd - 1 : w + wd]
    if out is None:
        out = np.empty((n, h, wd), dtype=np.float64)
    np.subtract(integ[:, d : d + h, d : d + wd], integ[:, 0:h, d : d + wd], out=out)
    out -= integ[:, d : d + h, 0:wd]
    out += integ[:, 0:h, 0:wd]
    return out


def _box_opencv(flat: np.ndarray, w: int, integ: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    n, h, wd = flat.shape
    d = 2 * w
    if out is None:
        out = np.empty((n, h, wd), dtype=np.float64)
    for k in range(n):
        padded = cv2.copyMakeBorder(
            np.ascontiguousarray(flat[k]), w, w, w, w, cv2.BORDER_CONSTANT, value=0.0
        )
        ii = cv2.integral(padded, sdepth=cv2.CV_64F)[1:, 1:]
        o = out[k]
        np.subtract(ii[d : d + h, d : d + wd], ii[0:h, d : d + wd], out=o)
        o -= ii[d : d + h, 0:wd]
        o += ii[0:h, 0:wd]
    return out


def box_sum(planes: np.ndarray, half_width: int, *, integral: IntegralMethod = "ordered") -> np.ndarray:
    """2w x 2w window sums with zero padding, from a float64 integral image.

    Parameters
    ----------
    planes : ndarray, shape (..., H, W)
        Values summed over the last two axes (cast to float64).
    half_width : int
        ``w >= 1``; the window of ``(y, x)`` covers rows ``y-w+1..y+w``, columns ``x-w+1..x+w``.
    integral : {"ordered", "opencv"}
        ``"ordered"``: the reference code's additions (zero-pad by ``w``, cumulative sum down the
        rows, then along the columns, then ``I[y+2w, x+2w] - I[y, x+2w] - I[y+2w, x] + I[y, x]``
        left to right). ``"opencv"``: OpenCV's float64 integral image (other summation order).

    Returns
    -------
    ndarray, shape (..., H, W), float64
        Window sums (same units as ``planes``).
    """
    w = check_block_size(half_width, name="half_width", minimum=1)
    _check_method(integral)
    a = np.asarray(planes, dtype=np.float64)
    lead = a.shape[:-2]
    h, wd = a.shape[-2:]
    flat = a.reshape((-1, h, wd))
    out = _box_ordered(flat, w) if integral == "ordered" else _box_opencv(flat, w)
    return out.reshape(lead + (h, wd))


def centre_and_energy(
    planes: np.ndarray, half_width: int, *, integral: IntegralMethod = "ordered"
) -> tuple[np.ndarray, np.ndarray]:
    """Centre each pixel by its own window mean and take the windowed energy."""
    w = int(half_width)
    area = float(4 * w * w)
    centred = planes - box_sum(planes, w, integral=integral) / area
    energy = box_sum(centred * centred, w, integral=integral)
    return centred, energy


def clip_sums(energy: np.ndarray, top: float | np.ndarray) -> np.ndarray:
    """``np.clip(energy, 1e-20, top)`` in place (``top`` = the array's own maximum in the reference)."""
    np.maximum(energy, SXX_FLOOR, out=energy)
    np.minimum(energy, top, out=energy)
    return energy


def rho_from_sums(sxy: np.ndarray, sxx: np.ndarray, syy: np.ndarray) -> np.ndarray:
    """``Sxy / (sqrt(Sxx Syy) + 1e-20)`` (clipped sums; returns a new array)."""
    den = np.sqrt(sxx * syy)
    den += RHO_EPS
    return sxy / den


def local_cross_correlation(
    x: np.ndarray,
    y: np.ndarray,
    half_width: int,
    *,
    integral: IntegralMethod = "ordered",
) -> np.ndarray:
    """Local cross-correlation field between each band of ``x`` and the single-band ``y``.

    Implements section 3 of the protocol facts (Scarpa & Ciotola 2022): zero-padded 2w x 2w box
    sums from a float64 integral image; local means ``mu = S/(4 w^2)`` (padding zeros count);
    each pixel centred by the mean of its own window; ``Sxx``, ``Syy`` clipped to
    ``[1e-20, max]`` (``max`` over the whole ``Sxx`` array, all bands, resp. ``Syy``);
    ``rho = Sxy / (sqrt(Sxx Syy) + 1e-20)``.

    Parameters
    ----------
    x : array_like, shape (H, W, B) or (H, W)
        Image (any real dtype, cast to float64; units cancel).
    y : array_like, shape (H, W) or (H, W, 1)
        Single-band image broadcast over the bands of ``x``.
    half_width : int
        ``w >= 1``: window 2w x 2w (rows ``y-w+1..y+w``).
    integral : {"ordered", "opencv"}
        Integral-image summation order (see :func:`box_sum`).

    Returns
    -------
    ndarray, shape (H, W, B), float64
        Correlation field (dimensionless, ``|rho| <= 1`` up to round-off; flat windows give 0).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    xa, ya = image_and_pan("x", x, "y", y)
    w = check_block_size(half_width, name="half_width", minimum=1)
    _check_method(integral)
    xs = np.ascontiguousarray(np.moveaxis(xa, -1, 0))
    parts = field_parts(xs, ya, w, integral=integral)
    rho = np.concatenate([rho_from_sums(sxy, sxx, parts.syy) for sxy, sxx in parts.chunks], axis=0)
    return np.ascontiguousarray(np.moveaxis(rho, 0, -1))


class FieldParts:
    """Clipped sums of a field computation, by band chunk (internal helper)."""

    def __init__(self, syy: np.ndarray, chunks_: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.syy = syy
        self.chunks = chunks_


def field_parts(
    xs: np.ndarray,
    y: np.ndarray,
    w: int,
    *,
    integral: IntegralMethod = "ordered",
    workers: int | None = None,
) -> FieldParts:
    """Clipped ``Syy`` and, per band chunk, ``(Sxy, Sxx)`` for bands ``xs`` (B, H, W) against ``y``."""
    yc, syy = centre_and_energy(y[None], w, integral=integral)
    clip_sums(syy, syy.max())
    workers = n_workers() if workers is None else workers

    def one(sl: slice) -> tuple[np.ndarray, np.ndarray, float]:
        xc, sxx = centre_and_energy(xs[sl], w, integral=integral)
        xc *= yc
        sxy = box_sum(xc, w, integral=integral)
        return sxy, sxx, float(sxx.max())

    res = parallel_map(one, chunks(xs.shape[0], workers), workers)
    top = max(r[2] for r in res)
    out = []
    for sxy, sxx, _ in res:
        clip_sums(sxx, top)
        out.append((sxy, sxx))
    return FieldParts(syy, out)


def mean_one_minus_rho(
    fused: np.ndarray,
    pan: np.ndarray,
    w: int,
    *,
    integral: IntegralMethod = "ordered",
    workers: int | None = None,
    planes: np.ndarray | None = None,
) -> float:
    """Mean over pixels and bands of ``1 - clip(rho, -1, 1)`` (the D_rho value), memory-lean."""
    _check_method(integral)
    h, wd, n_bands = fused.shape
    area = float(4 * w * w)
    box = _box_ordered if integral == "ordered" else _box_opencv
    y = np.ascontiguousarray(pan, dtype=np.float64)[None]
    yc, syy = centre_and_energy(y, w, integral=integral)
    clip_sums(syy, syy.max())
    workers = n_workers() if workers is None else workers

    def run(bands: slice) -> tuple[float, float, list[tuple[np.ndarray, np.ndarray]]]:
        integ = np.zeros((1, h + 2 * w, wd + 2 * w))
        xb, s, xc, tmp, sxx, sxy = (np.empty((1, h, wd)) for _ in range(6))
        total, top, deferred = 0.0, -np.inf, []
        for b in range(bands.start, bands.stop):
            if planes is not None:
                xb = planes[b : b + 1]
            else:
                np.copyto(xb[0], fused[:, :, b])
            box(xb, w, integ, s)
            s /= area
            np.subtract(xb, s, out=xc)
            np.multiply(xc, xc, out=tmp)
            box(tmp, w, integ, sxx)
            np.multiply(xc, yc, out=tmp)
            box(tmp, w, integ, sxy)
            mx = float(sxx.max())
            top = max(top, mx)
            if mx >= SXX_FLOOR:  # the upper clip is a no-op for this band
                total += one_minus_rho_sum(sxy, sxx, syy, None)
            else:
                deferred.append((sxx.copy(), sxy.copy()))
        return total, top, deferred

    results = parallel_map(run, chunks(n_bands, workers), workers)
    top = max(r[1] for r in results)
    total = sum(r[0] for r in results)
    for _, _, deferred in results:
        for sxx, sxy in deferred:
            total += one_minus_rho_sum(sxy, sxx, syy, top)
    return total / float(h * wd * n_bands)


def one_minus_rho_sum(sxy: np.ndarray, sxx: np.ndarray, syy: np.ndarray, top: float | None) -> float:
    """Sum of ``1 - clip(Sxy / (sqrt(clip(Sxx, 1e-20, top) Syy) + 1e-20), -1, 1)`` (D_rho's chunk sum)."""
    np.maximum(sxx, SXX_FLOOR, out=sxx)
    if top is not None:
        np.minimum(sxx, top, out=sxx)
    sxx *= syy
    np.sqrt(sxx, out=sxx)
    sxx += RHO_EPS
    sxy /= sxx
    np.clip(sxy, -1.0, 1.0, out=sxy)
    np.subtract(1.0, sxy, out=sxy)
    return float(sxy.sum())

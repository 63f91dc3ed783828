"""Local cross-correlation field of the reprojected protocol (coregistration and D_rho).

Scarpa & Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote Sensing 14(8):1808,
2022, doi:10.3390/rs14081808; facts in ``fullres2022.md`` section 3.

For a half width ``w`` the window of output pixel ``(y, x)`` covers rows ``y-w+1 .. y+w`` and columns
``x-w+1 .. x+w`` (2w x 2w pixels, asymmetric), with zeros outside the image. Box sums come from a
float64 integral image (zero padding by ``w`` on every side, cumulative sum down the rows, then along
the columns, four-corner difference), as in the reference code: ``integral="ordered"`` reproduces
those additions in the same order (bit-identical to ``cumsum(cumsum(P, 0), 1)``); ``"ordered-wh"``
the Sentinel-2 toolbox's order (``cumsum(cumsum(P, 1), 0)``: along each row first, then down the
columns); ``"opencv"`` uses OpenCV's float64 ``integral`` (same integral image, other summation
order: individual rho values move by ~1e-9, D_rho and the coregistration means by ~1e-14; faster,
``docs/performance.md``).

The Sentinel-2 protocol (Ciotola et al., Remote Sensing 17(12):1983, 2025,
doi:10.3390/rs17121983) correlates each fused band with the four 10 m bands and keeps the maximum
(:func:`mean_one_minus_max_rho`).

Each pixel is centred by the mean of **its own** window (not by the output pixel's window): this is
not the windowed Pearson coefficient, and it matters (D_rho 0.055 vs 0.112 on a real IKONOS scene).
"""

from __future__ import annotations

from collections.abc import Callable
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
    "mean_one_minus_max_rho",
]

#: Lower clip of the windowed sums of squares.
SXX_FLOOR = 1e-20
#: Added to the denominator sqrt(Sxx Syy).
RHO_EPS = 1e-20

IntegralMethod = Literal["ordered", "ordered-wh", "opencv"]
_METHODS = ("ordered", "ordered-wh", "opencv")


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


def _box_ordered_wh(
    flat: np.ndarray, w: int, integ: np.ndarray | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    n, h, wd = flat.shape
    d = 2 * w
    if integ is None:
        integ = np.zeros((n, h + d, wd + d), dtype=np.float64)
    else:
        integ[...] = 0.0
    integ[:, w : w + h, w : w + wd] = flat
    np.cumsum(integ, axis=-1, out=integ)  # along each row first (sequential, as torch.cumsum)
    np.cumsum(integ, axis=-2, out=integ)
    if out is None:
        out = np.empty((n, h, wd), dtype=np.float64)
    np.subtract(integ[:, d : d + h, d : d + wd], integ[:, 0:h, d : d + wd], out=out)
    out -= integ[:, d : d + h, 0:wd]
    out += integ[:, 0:h, 0:wd]
    return out


def _box_fn(integral: str) -> Callable[..., np.ndarray]:
    """The box-sum routine of an integral method."""
    return {"ordered": _box_ordered, "ordered-wh": _box_ordered_wh, "opencv": _box_opencv}[integral]


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
    integral : {"ordered", "ordered-wh", "opencv"}
        ``"ordered"``: the reference code's additions (zero-pad by ``w``, cumulative sum down the
        rows, then along the columns, then ``I[y+2w, x+2w] - I[y, x+2w] - I[y+2w, x] + I[y, x]``
        left to right). ``"ordered-wh"``: the same with the cumulative sums along each row first
        (Sentinel-2 code). ``"opencv"``: OpenCV's float64 integral image (other summation order).

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
    out = _box_fn(integral)(flat, w)
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
    box = _box_fn(integral)
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


def mean_one_minus_max_rho(
    fused: np.ndarray,
    references: np.ndarray,
    w: int,
    *,
    integral: IntegralMethod = "ordered",
    workers: int | None = None,
    return_map: bool = False,
) -> float | tuple[float, np.ndarray]:
    """Mean of ``1 - clip(max_j max(rho_bj, -1), -1, 1)`` over pixels and fused bands ``b``.

    ``rho_bj`` is the local correlation field (:func:`local_cross_correlation`) of fused band ``b``
    with reference band ``j``: ``Sxx`` clipped to ``[1e-20, max]`` with the maximum over all fused
    bands, ``Syy_j`` to ``[1e-20, max]`` with reference ``j``'s own maximum. With one reference band
    it equals D_rho against that band. The Sentinel-2 protocol's D_rho takes the four 10 m bands as
    references (half width ``max(4, ratio) // 2``).

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
    references : ndarray, shape (H, W, J)
    w : int
        Half width (window 2w x 2w).
    integral : {"ordered", "ordered-wh", "opencv"}
    workers : int, optional
        Threads over fused bands.
    return_map : bool
        Also return the (H, W, B) map of ``1 - max_j rho``.

    Returns
    -------
    float or (float, ndarray)
        Dimensionless, in [0, 2].

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> refs = rng.random((24, 24, 2))
    >>> round(mean_one_minus_max_rho(refs[:, :, :1] * 3.0, refs, 2), 12)
    0.0
    """
    _check_method(integral)
    h, wd, n_bands = fused.shape
    box = _box_fn(integral)
    refs = np.ascontiguousarray(np.moveaxis(np.asarray(references, dtype=np.float64), -1, 0))
    yc, syy = centre_and_energy(refs, w, integral=integral)
    for j in range(refs.shape[0]):
        clip_sums(syy[j], syy[j].max())
    workers = n_workers() if workers is None else workers
    area = float(4 * w * w)
    maps = np.empty((n_bands, h, wd)) if return_map else None

    def one_band(sxx: np.ndarray, sxys: list[np.ndarray], top: float | None) -> np.ndarray:
        np.maximum(sxx, SXX_FLOOR, out=sxx)
        if top is not None:
            np.minimum(sxx, top, out=sxx)
        best = None
        for j, sxy in enumerate(sxys):
            rho = rho_from_sums(sxy, sxx, syy[j : j + 1])
            np.maximum(rho, -1.0, out=rho)
            best = rho if best is None else np.maximum(best, rho, out=best)
        assert best is not None
        np.clip(best, -1.0, 1.0, out=best)
        return np.subtract(1.0, best, out=best)

    def run(bands: slice) -> tuple[float, float, list[tuple[int, np.ndarray, list[np.ndarray]]]]:
        integ = np.zeros((1, h + 2 * w, wd + 2 * w))
        xb, s, xc, tmp, sxx = (np.empty((1, h, wd)) for _ in range(5))
        total, top, deferred = 0.0, -np.inf, []
        for b in range(bands.start, bands.stop):
            np.copyto(xb[0], fused[:, :, b])
            box(xb, w, integ, s)
            s /= area
            np.subtract(xb, s, out=xc)
            np.multiply(xc, xc, out=tmp)
            box(tmp, w, integ, sxx)
            sxys = []
            for j in range(refs.shape[0]):
                np.multiply(xc, yc[j : j + 1], out=tmp)
                sxys.append(box(tmp, w, integ))
            mx = float(sxx.max())
            top = max(top, mx)
            if mx >= SXX_FLOOR:  # the upper clip at the all-band maximum is a no-op for this band
                one = one_band(sxx, sxys, None)
                total += float(one.sum())
                if maps is not None:
                    maps[b] = one[0]
            else:
                deferred.append((b, sxx.copy(), sxys))
        return total, top, deferred

    results = parallel_map(run, chunks(n_bands, workers), workers)
    top = max(r[1] for r in results)
    total = sum(r[0] for r in results)
    for _, _, deferred in results:
        for b, sxx, sxys in deferred:
            one = one_band(sxx, sxys, top)
            total += float(one.sum())
            if maps is not None:
                maps[b] = one[0]
    value = total / float(h * wd * n_bands)
    return (value, np.ascontiguousarray(np.moveaxis(maps, 0, -1))) if maps is not None else value

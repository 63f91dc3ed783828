"""Per-band integer-phase coregistration of the MS against the MTF-filtered PAN.

Scarpa & Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote Sensing 14(8):1808,
2022, doi:10.3390/rs14081808; facts in ``fullres2022.md`` section 4.

The PAN is filtered with the **MS kernel of band 0** (not a PAN MTF), edge-replicated border; for
each phase ``(i, j)`` of a fixed 4 x 4 search window the PAN-scale phase ``P_lp[i::ratio, j::ratio]``
is compared with every MS band by the mean (over all MS pixels) of the local cross-correlation field
with half width ``floor(ratio/2)``. Each band takes the phase of its maximum (ties: the first in
row-major order). Deterministic.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal, overload

import numpy as np

from ..parallel import chunks, parallel_map
from ..parallel import n_threads as n_workers
from ..validation import SettingError, ShapeError, as_image, as_pan, check_ratio
from .correlation import IntegralMethod, box_sum, centre_and_energy, clip_sums, rho_from_sums
from .filtering import filter_replicate

__all__ = [
    "SEARCH_WINDOW", "search_window_for", "coregistration_half_width", "shifts_from_correlations",
    "phase_correlations", "coregister", "CorrelationNoiseWarning",
]

class CorrelationNoiseWarning(UserWarning):
    """The coregistration's correlations are dominated by rounding noise (see :func:`shifts_from_correlations`)."""


#: Side of the phase search window of the reference code (fixed, whatever the ratio).
SEARCH_WINDOW = 4


def search_window_for(ratio: int) -> int:
    """Phase search window used for ``ratio``: ``min(4, ratio)``.

    The reference code always searches 4 x 4 phases (so ratio 8 searches only half of its phases);
    for ratios 2 and 3 it crashes (phases beyond the ratio have a row fewer), and this package
    searches all ``ratio x ratio`` phases instead.

    Parameters
    ----------
    ratio : int
        PAN/MS resolution ratio.

    Returns
    -------
    int
    """
    return int(min(SEARCH_WINDOW, int(ratio)))


def coregistration_half_width(ratio: int) -> int:
    """Half width of the coregistration's correlation field: ``max(1, floor(ratio/2))``."""
    return max(1, int(ratio) // 2)


def shifts_from_correlations(rho: np.ndarray) -> np.ndarray:
    """Per-band phase of the largest mean correlation (first in row-major ``(i, j)`` order on ties)."""
    worst = float(np.max(np.abs(rho))) if np.size(rho) else 0.0
    if not worst <= 1.0 + 1e-9:
        bands = sorted({int(b) for b in np.nonzero(~(np.abs(rho) <= 1.0 + 1e-9))[2]})
        warnings.warn(
            f"coregistration: mean local correlation {worst:.3g} outside [-1, 1] for band(s) {bands}: "
            "exactly constant areas (no-data fill, saturation) make the correlation field rounding "
            "noise, so the chosen shifts are arbitrary (the reference code behaves the same). Crop or "
            "mask constant areas before evaluating with 'reprojected2022'.",
            CorrelationNoiseWarning,
            stacklevel=2,
        )
    sw = rho.shape[0]
    flat = np.asarray(rho).reshape(sw * sw, -1)
    best = np.argmax(flat, axis=0)  # first maximum in row-major (i, j) order
    return np.stack([best // sw, best % sw], axis=1).astype(np.int64)


def phase_correlations(
    ms: np.ndarray,
    pan_lp: np.ndarray,
    ratio: int,
    *,
    search_window: int | None = None,
    half_width: int | None = None,
    integral: IntegralMethod = "ordered",
) -> np.ndarray:
    """Mean local correlation between each MS band and each PAN-scale phase.

    Parameters
    ----------
    ms : ndarray, shape (h, w, B)
        MS image (DN; float64).
    pan_lp : ndarray, shape (ratio*h, ratio*w)
        Low-pass PAN (filtered with the band-0 MS kernel).
    ratio : int
        PAN/MS scale ratio.
    search_window : int, optional
        Phases ``0..search_window-1`` per axis; default :func:`search_window_for`.
    half_width : int, optional
        Correlation half width; default ``floor(ratio/2)``.
    integral : {"ordered", "opencv"}
        Integral-image summation order (see :func:`~pansharp_iqa.reprojected.correlation.box_sum`).

    Returns
    -------
    ndarray, shape (search_window, search_window, B), float64
        ``rho[i, j, b]`` (dimensionless, in [-1, 1]).
    """
    ms = np.asarray(ms, dtype=np.float64)
    h, w, n_bands = ms.shape
    sw = search_window_for(ratio) if search_window is None else int(search_window)
    hw = coregistration_half_width(ratio) if half_width is None else int(half_width)
    if sw < 1 or sw > ratio:
        raise SettingError(f"search_window must be in 1..ratio={ratio}, got {sw}")
    phases = np.stack(
        [pan_lp[i::ratio, j::ratio][:h, :w] for i in range(sw) for j in range(sw)], axis=0
    )  # (P, h, w)
    if phases.shape[1:] != (h, w):
        raise ShapeError(f"pan_lp must be ratio x the MS size; got {pan_lp.shape} for MS {ms.shape}")
    xs = np.ascontiguousarray(np.moveaxis(ms, -1, 0))  # (B, h, w)
    xc, sxx = centre_and_energy(xs, hw, integral=integral)
    clip_sums(sxx, sxx.max())  # one call per phase with the whole MS: max over all bands
    workers = n_workers()

    def one(sl: slice) -> np.ndarray:
        out = np.empty((sl.stop - sl.start, n_bands))
        prod = np.empty_like(xc)
        for k, p in enumerate(range(sl.start, sl.stop)):
            yc, syy = centre_and_energy(phases[p : p + 1], hw, integral=integral)  # (1, h, w)
            clip_sums(syy, syy.max())  # each phase is its own call in the reference
            np.multiply(xc, yc, out=prod)  # (B, h, w)
            sxy = box_sum(prod, hw, integral=integral)
            rho = rho_from_sums(sxy, sxx, syy)
            out[k] = rho.mean(axis=(1, 2))
        return out

    means = np.concatenate(parallel_map(one, chunks(phases.shape[0], workers), workers), axis=0)
    return means.reshape(sw, sw, n_bands)


@overload
def coregister(ms: np.ndarray, pan: np.ndarray, kernel: np.ndarray, ratio: int, *, search_window: int | None = ...,
               integral: IntegralMethod = ..., return_details: Literal[False] = ...) -> np.ndarray: ...
@overload
def coregister(ms: np.ndarray, pan: np.ndarray, kernel: np.ndarray, ratio: int, *, search_window: int | None = ...,
               integral: IntegralMethod = ..., return_details: Literal[True]) -> tuple[np.ndarray, dict[str, Any]]: ...
@overload
def coregister(ms: np.ndarray, pan: np.ndarray, kernel: np.ndarray, ratio: int, *, search_window: int | None = ...,
               integral: IntegralMethod = ...,
               return_details: bool = ...) -> np.ndarray | tuple[np.ndarray, dict[str, Any]]: ...


def coregister(
    ms: np.ndarray,
    pan: np.ndarray,
    kernel: np.ndarray,
    ratio: int,
    *,
    search_window: int | None = None,
    integral: IntegralMethod = "ordered",
    return_details: bool = False,
) -> np.ndarray | tuple[np.ndarray, dict[str, Any]]:
    """Per-band decimation phases ``(r_b, c_b)`` that best align the PAN with the MS.

    Steps (Scarpa & Ciotola 2022; protocol facts section 4): ``P_lp`` = PAN filtered with
    ``kernel`` (the band-0 MS kernel in the protocol), edge-replicated border; for ``i, j`` in
    ``0..search_window-1``, ``rho(i, j, b)`` = mean over the MS pixels of the local
    cross-correlation field between MS band ``b`` and ``P_lp[i::ratio, j::ratio]`` with half width
    ``floor(ratio/2)``; ``(r_b, c_b)`` = argmax over ``(i, j)`` (first in row-major order on ties).

    Parameters
    ----------
    ms : array_like, shape (h, w, B)
        MS image (DN, any real dtype).
    pan : array_like, shape (ratio*h, ratio*w)
        PAN image (DN).
    kernel : ndarray, shape (k, k)
        Low-pass kernel applied to the PAN.
    ratio : int
        PAN/MS scale ratio (>= 2).
    search_window : int, optional
        Default ``min(4, ratio)`` (the reference's fixed 4; see :func:`search_window_for`).
    integral : {"ordered", "opencv"}
        Integral-image summation order of the correlation field.
    return_details : bool
        Also return ``{"correlations": (S, S, B) array, "search_window", "half_width"}``.

    Returns
    -------
    shifts : ndarray, shape (B, 2), int64
        ``[r_b, c_b]`` per band (PAN pixels, 0-based phase of the decimation grid).
    details : dict, only if ``return_details``

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    ms_a = as_image("ms", ms, allow_2d=True)
    pan_a = as_pan("pan", pan)
    ratio = check_ratio(ratio, exp=False)
    if pan_a.shape != (ratio * ms_a.shape[0], ratio * ms_a.shape[1]):
        raise ShapeError(
            f"pan must be ratio x ms in both dimensions: ratio={ratio}, ms {ms_a.shape[:2]} needs pan "
            f"{(ratio * ms_a.shape[0], ratio * ms_a.shape[1])}, got {pan_a.shape}"
        )
    pan_lp = filter_replicate(pan_a, kernel)
    rho = phase_correlations(ms_a, pan_lp, ratio, search_window=search_window, integral=integral)
    sw = rho.shape[0]
    shifts = shifts_from_correlations(rho)
    if return_details:
        return shifts, {"correlations": rho, "search_window": sw, "half_width": coregistration_half_width(ratio)}
    return shifts

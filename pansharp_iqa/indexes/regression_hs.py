"""D_sR: the hyperspectral protocol's regression-based spatial distortion, from global sums.

The hyperspectral toolbox (Ciotola et al. 2024, ``Metrics/metrics_fr.py`` ``LSR`` / ``D_sR``)
regresses the PAN on the fused bands by least squares, **without an intercept**, over all pixels at
full resolution, ``alpha = pinv(F) P`` (``F``: pixels x bands, float64), and reports
``D_sR = 1 - R^2 = var(P - F alpha) / var(P)`` with unbiased variances over all pixels.

Here the regression is solved from global sums (:func:`d_sr_sums`: the bands' Gram matrix
``F^T F``, ``F^T P``, the per-band sums of ``F``, ``sum P``, ``sum P^2``, the pixel count), so a
tiled pass adds the sums of its tiles and finalizes once (:func:`d_sr_from_sums`). When ``F`` has
full column rank, the normal equations ``(F^T F) alpha = F^T P`` have the one solution
``pinv(F) P``. When it does not (a dead band, two equal bands), every solution of the normal
equations, the minimum-norm one of ``pinv`` included, gives the same fitted PAN ``F alpha`` (the
projection of ``P`` on the bands' span), hence the same D_sR: the system is solved by
``numpy.linalg.lstsq`` on the column-scaled Gram matrix (its minimum-norm solution, as ``pinv``).
The Gram matrix squares the condition number: directions of ``F`` whose singular values are below
about ``sqrt(B eps) ~ 2e-7`` of the largest (after scaling the columns to unit norm) are dropped,
where ``pinv`` keeps those above ``1e-15``; the fitted PAN then misses those components.

References
----------
Ciotola, Guarino, Vivone, Poggi, Chanussot, Plaza, Scarpa, "Hyperspectral Pansharpening: Critical
Review, Tools and Future Perspectives", arXiv 2407.01355, 2024.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import image_and_pan
from .strips import StripImage, map_strips

__all__ = ["d_sr", "d_sr_sums", "d_sr_from_sums", "D_SR_SUMS"]

#: Names of the global sums D_sR is computed from (what a tile pass adds up).
D_SR_SUMS = ("gram", "cross", "f_sum", "p_sum", "p_sq", "n")


def d_sr_sums(fused_planes: np.ndarray, pan_plane: np.ndarray) -> dict[str, Any]:
    """Sums of a chunk of pixels for D_sR (added over chunks, then :func:`d_sr_from_sums`).

    Parameters
    ----------
    fused_planes : ndarray, shape (B, h, w), float64
        Fused bands of the chunk.
    pan_plane : ndarray, shape (h, w), float64
        PAN of the chunk.

    Returns
    -------
    dict
        ``gram`` (B, B) ``F^T F``, ``cross`` (B,) ``F^T P``, ``f_sum`` (B,), ``p_sum``, ``p_sq``
        (floats) and ``n`` (int, pixels).

    Examples
    --------
    >>> s = d_sr_sums(np.ones((2, 2, 2)), np.full((2, 2), 3.0))
    >>> s["gram"].tolist(), s["cross"].tolist(), s["p_sq"], s["n"]
    ([[4.0, 4.0], [4.0, 4.0]], [12.0, 12.0], 36.0, 4)
    """
    f = np.asarray(fused_planes, dtype=np.float64).reshape(fused_planes.shape[0], -1)
    p = np.asarray(pan_plane, dtype=np.float64).reshape(-1)
    return {"gram": f @ f.T, "cross": f @ p, "f_sum": f.sum(axis=1), "p_sum": float(p.sum()),
            "p_sq": float(p @ p), "n": int(p.size)}


def add_d_sr_sums(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum of chunk sums (one dict of the same keys)."""
    return {k: (sum(int(s[k]) for s in parts) if k == "n" else np.sum([s[k] for s in parts], axis=0))
            for k in D_SR_SUMS}


def d_sr_from_sums(gram: np.ndarray, cross: np.ndarray, f_sum: np.ndarray, p_sum: float, p_sq: float,
                   n: int) -> float:
    """D_sR from global sums: ``var(P - F alpha) / var(P)``, ``alpha`` the least-squares coefficients.

    Parameters
    ----------
    gram : ndarray, shape (B, B)
        ``sum_pixels F_b F_c``.
    cross : ndarray, shape (B,)
        ``sum_pixels F_b P``.
    f_sum : ndarray, shape (B,)
        ``sum_pixels F_b``.
    p_sum, p_sq : float
        ``sum P`` and ``sum P^2``.
    n : int
        Pixel count (>= 2).

    Returns
    -------
    float
        D_sR (dimensionless; 0 = the PAN is a linear combination of the fused bands; NaN for a
        constant PAN, whose variance is 0).

    Examples
    --------
    >>> p = np.array([1.0, 2.0, 4.0, 3.0]); f = np.stack([p, np.ones(4)])
    >>> round(d_sr_from_sums(f @ f.T, f @ p, f.sum(1), p.sum(), p @ p, 4), 12)  # P = 1 F_0 + 0 F_1
    0.0
    """
    g = np.asarray(gram, dtype=np.float64)
    b = np.asarray(cross, dtype=np.float64)
    scale = np.sqrt(np.diag(g))
    scale[scale == 0] = 1.0  # a band of zeros: its coefficient is 0 (minimum norm)
    gs = g / scale[:, None] / scale[None, :]
    alpha = np.linalg.lstsq(gs, b / scale, rcond=None)[0] / scale
    rss = p_sq - 2.0 * float(alpha @ b) + float(alpha @ g @ alpha)  # sum (P - F alpha)^2
    r_sum = p_sum - float(alpha @ np.asarray(f_sum, dtype=np.float64))
    var_r = (rss - r_sum * r_sum / n) / (n - 1)
    var_p = (p_sq - p_sum * p_sum / n) / (n - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(max(var_r, 0.0) / var_p)


def d_sr(fused: np.ndarray, pan: np.ndarray) -> float:
    """D_sR = 1 - R^2 of the PAN regressed on the fused bands without intercept (hyperspectral toolbox).

    ``alpha = pinv(F) P`` over all pixels (``F`` pixels x bands), ``P_hat = F alpha``,
    ``D_sR = var(P - P_hat) / var(P)`` (unbiased variances), in float64 from global sums
    (:func:`d_sr_from_sums`; rank deficiency handled as ``pinv``). With D_lambda = 1 - Q2n at the
    HS scale, the protocol's QNR is ``(1 - D_lambda)(1 - D_sR)``.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image at PAN scale (DN).
    pan : ndarray, shape (H, W)
        PAN (DN).

    Returns
    -------
    float
        D_sR (dimensionless, >= 0; 0 = perfect linear consistency with the PAN).

    References
    ----------
    Ciotola et al., arXiv 2407.01355, 2024 (code ``Metrics/metrics_fr.py``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random((40, 40, 3)); p = f @ np.array([0.2, 0.5, 0.3])
    >>> round(d_sr(f, p), 12), 0.0 < d_sr(f, p + 0.1 * rng.random((40, 40))) < 1.0
    (0.0, True)
    """
    fus, pan_a = image_and_pan("fused", fused, "pan", pan)
    img = StripImage(fus)
    parts = map_strips(lambda r0, r1: d_sr_sums(img.planes(r0, r1), pan_a[r0:r1]), fus.shape[0], 1)
    return d_sr_from_sums(**add_d_sr_sums(parts))

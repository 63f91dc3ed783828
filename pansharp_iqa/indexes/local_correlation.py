"""D_rho against several high-resolution bands (Sentinel-2 protocol), as chunk sums over a window of the scene.

The Sentinel-2 benchmark's spatial index correlates each fused band with each of the four 10 m bands
over a sliding 2w x 2w box (rows ``i-w+1 .. i+w``, zeros outside the image), each pixel centred by the
mean of its own box, the centred images zero-padded again; ``rho = Sxy / (sqrt(Sxx Syy) + 1e-20)`` with
``Sxx``, ``Syy`` at least ``1e-20``; per pixel the maximum over the 10 m bands of ``max(rho, -1)``,
clipped to [-1, 1]; D_rho is the mean of ``1 - max rho`` over pixels and bands
(``pansharp_iqa.reprojected.correlation.mean_one_minus_max_rho`` computes the same definition on whole
images). Here the sums come from a window of the image that carries a halo of ``2w`` pixels (clamped to
the image): the window's own zero padding is then the image's at its true edges, and every box of the
chunk's own pixels lies inside it, so tiles give the whole image's numbers.

The reference code also clips ``Sxx`` and ``Syy`` from above at their maxima over the image; that
clip changes a value only where a band's box energy is below 1e-20 everywhere (a constant band),
which this chunk form does not reproduce.

References
----------
Ciotola, Guarino, Mazza, Poggi, Scarpa, Remote Sensing 17(12):1983, 2025, doi:10.3390/rs17121983
(code ``Metrics/metrics_fr.py`` ``D_rho``, ``Metrics/cross_correlation.py``). Scarpa & Ciotola, Remote
Sensing 14(8):1808, 2022, doi:10.3390/rs14081808 (D_rho).
"""

from __future__ import annotations

import numpy as np

__all__ = ["box_sums", "d_rho_max_sums", "ENERGY_FLOOR", "RHO_EPSILON"]

#: Lower clip of the box energies ``Sxx``, ``Syy``.
ENERGY_FLOOR = 1e-20
#: Added to ``sqrt(Sxx Syy)``.
RHO_EPSILON = 1e-20


def box_sums(planes: np.ndarray, w: int) -> np.ndarray:
    """Sums over the 2w x 2w box of every pixel (rows ``i-w+1 .. i+w``, columns likewise), zeros outside.

    From a float64 integral image (cumulative sums along each row, then down the columns).

    Parameters
    ----------
    planes : ndarray, shape (C, h, w)
    w : int
        Half width (>= 1).

    Returns
    -------
    ndarray, shape (C, h, w), float64

    Examples
    --------
    >>> box_sums(np.ones((1, 4, 4)), 1)[0].tolist()  # w = 1: rows i..i+1, columns j..j+1
    [[4.0, 4.0, 4.0, 2.0], [4.0, 4.0, 4.0, 2.0], [4.0, 4.0, 4.0, 2.0], [2.0, 2.0, 2.0, 1.0]]
    """
    c, h, wd = planes.shape
    integ = np.zeros((c, h + 2 * w + 1, wd + 2 * w + 1))
    integ[:, w + 1 : w + 1 + h, w + 1 : w + 1 + wd] = planes
    np.cumsum(integ, axis=2, out=integ)
    np.cumsum(integ, axis=1, out=integ)
    d = 2 * w
    out = integ[:, d + 1 : d + 1 + h, d + 1 : d + 1 + wd] - integ[:, 1 : 1 + h, d + 1 : d + 1 + wd]
    out -= integ[:, d + 1 : d + 1 + h, 1 : 1 + wd]
    out += integ[:, 1 : 1 + h, 1 : 1 + wd]
    return out


def _centred(planes: np.ndarray, w: int) -> np.ndarray:
    """Each pixel minus the mean of its own box (zeros outside counted)."""
    return planes - box_sums(planes, w) / float(4 * w * w)


def d_rho_max_sums(fused: np.ndarray, references: np.ndarray, w: int,
                   own: tuple[slice, slice] | None = None) -> np.ndarray:
    """Per fused band, the sum of ``1 - clip(max_j max(rho_bj, -1), -1, 1)`` over the chunk's own pixels.

    Parameters
    ----------
    fused : ndarray, shape (B, h, w)
        Fused bands over a window of the image (its own pixels plus a halo of ``2w``, clamped to the image).
    references : ndarray, shape (J, h, w)
        The high-resolution bands over the same window (Sentinel-2: the four 10 m bands; one PAN: J = 1).
    w : int
        Box half width (window 2w x 2w).
    own : (slice, slice), optional
        The chunk's own pixels in the window (default: all).

    Returns
    -------
    ndarray, shape (B,)
        Sums of ``1 - max rho`` per fused band (dimensionless; D_rho = their total over pixels x bands).

    Examples
    --------
    >>> refs = np.random.default_rng(0).random((2, 20, 20))
    >>> d_rho_max_sums(refs[:1] * 3.0, refs, 2).round(9).tolist()
    [0.0]
    """
    own = own or (slice(None), slice(None))
    yc = _centred(np.asarray(references, dtype=np.float64), w)
    syy = np.maximum(box_sums(yc * yc, w)[:, own[0], own[1]], ENERGY_FLOOR)
    out = np.empty(fused.shape[0])
    for b in range(fused.shape[0]):
        xc = _centred(np.asarray(fused[b : b + 1], dtype=np.float64), w)
        sxx = np.maximum(box_sums(xc * xc, w)[0, own[0], own[1]], ENERGY_FLOOR)
        sxy = box_sums(xc * yc, w)[:, own[0], own[1]]
        rho = sxy / (np.sqrt(sxx[None] * syy) + RHO_EPSILON)
        best = np.clip(np.max(np.maximum(rho, -1.0), axis=0), -1.0, 1.0)
        out[b] = float(np.sum(1.0 - best))
    return out

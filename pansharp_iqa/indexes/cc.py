"""Correlation coefficient (CC), an extra index of deep-learning pansharpening tables.

Not part of the reference toolbox: offered on request (``indexes=`` / ``--indexes``), never in a
protocol's default table. Definition: Pearson's correlation coefficient between the reference and
the fused image computed per band over all pixels of the evaluated image, then averaged over the
bands (the "CC" of Loncan et al. 2015, and of the widely used Python port of the toolbox's
reduced-resolution indexes, ``np.mean([np.corrcoef(ref[..., b].ravel(), fus[..., b].ravel())[0, 1]])``).

The formula's home: per-chunk raw sums (:func:`band_moment_sums`), the finalize step
(:func:`cc_from_sums`) and :func:`cc`. The sums are raw (not centred), so chunks combine by
addition; on integer DN they are exact in float64 up to ``2**53 / max(DN)**2`` pixels (2.1e9
pixels of 11-bit data); on float data the covariance keeps about ``1e-16 * mean^2 / variance``
relative error.

References
----------
Loncan et al., "Hyperspectral pansharpening: a review", IEEE GRSM 3(3), 2015,
doi:10.1109/MGRS.2015.2440094 (CC, averaged over bands).
"""

from __future__ import annotations

import numpy as np

from ..foreign import Layout, batched
from ..rules import checked_pair
from ..validation import InputError
from .strips import StripImage, map_strips, within_unit

__all__ = ["cc", "band_moment_sums", "cc_from_sums"]


def band_moment_sums(ref_planes: np.ndarray, fus_planes: np.ndarray) -> np.ndarray:
    """Per-band ``[sum x, sum y, sum x^2, sum y^2, sum x y]`` of a chunk of pixels (x: reference).

    Parameters
    ----------
    ref_planes, fus_planes : ndarray, shape (B, h, w), float64

    Returns
    -------
    ndarray, shape (5, B)

    Examples
    --------
    >>> band_moment_sums(np.ones((1, 2, 2)), np.full((1, 2, 2), 2.0))[:, 0].tolist()
    [4.0, 8.0, 4.0, 16.0, 8.0]
    """
    x = ref_planes.reshape(ref_planes.shape[0], -1)
    y = fus_planes.reshape(fus_planes.shape[0], -1)
    return np.stack([x.sum(axis=1), y.sum(axis=1), np.einsum("bp,bp->b", x, x),
                     np.einsum("bp,bp->b", y, y), np.einsum("bp,bp->b", x, y)])


def cc_from_sums(moments: np.ndarray, n_pixels: int) -> float:
    """Mean over bands of Pearson's correlation from :func:`band_moment_sums` totals.

    Parameters
    ----------
    moments : ndarray, shape (5, B)
    n_pixels : int
        Pixels per band.

    Returns
    -------
    float
        In [-1, 1] (1 = every band an increasing affine function of its reference).

    Raises
    ------
    InputError
        A constant band (in the reference or the fused image): its correlation is undefined.

    Examples
    --------
    >>> x = np.arange(4.0).reshape(1, 2, 2)
    >>> cc_from_sums(band_moment_sums(x, 3 * x + 1), 4)
    1.0
    """
    sx, sy, sxx, syy, sxy = np.asarray(moments, dtype=np.float64)
    n = float(n_pixels)
    cov = n * sxy - sx * sy
    var_x, var_y = n * sxx - sx * sx, n * syy - sy * sy
    flat = np.flatnonzero((var_x <= 0) | (var_y <= 0))
    if flat.size:
        raise InputError(f"CC is undefined: band(s) {flat.tolist()} are constant in the reference or the fused image")
    return within_unit(float(np.mean(cov / np.sqrt(var_x * var_y))))


@batched("reference", "fused")
def cc(reference: np.ndarray, fused: np.ndarray, layout: Layout | None = None) -> float:
    """Band-averaged correlation coefficient between a reference and a fused image.

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Any consistent unit.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

    Returns
    -------
    float
        In [-1, 1] (higher is better).

    Raises
    ------
    InputError
        A constant band, shapes or values the gate refuses.

    References
    ----------
    Loncan et al., IEEE GRSM 3(3), 2015, doi:10.1109/MGRS.2015.2440094.

    Examples
    --------
    >>> ref = np.random.default_rng(0).integers(1, 2048, (16, 16, 3)).astype(float)
    >>> round(cc(ref, 1.5 * ref + 5), 12)
    1.0
    """
    ref, fus = checked_pair(reference, fused)
    rs, fs = StripImage(ref), StripImage(fus)
    parts = map_strips(lambda r0, r1: band_moment_sums(rs.planes(r0, r1), fs.planes(r0, r1)), ref.shape[0], 1)
    return cc_from_sums(np.sum(parts, axis=0), ref.shape[0] * ref.shape[1])

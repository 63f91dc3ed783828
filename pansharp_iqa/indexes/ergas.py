"""ERGAS: relative dimensionless global error in synthesis.

The formula's home: per-chunk sums (:func:`ergas_sums`), the finalize step
(:func:`ergas_from_sums`, used by the toolbox protocols in memory and tile-wise and by the
reprojected protocol's R-ERGAS) and :func:`ergas`.

References
----------
Wald, "Quality of high resolution synthesised images: is there a simple criterion?", Proc. Fusion of
Earth Data, 2000. Vivone et al., IEEE GRSM 2021 (``ERGAS``).
"""

from __future__ import annotations

import numpy as np

from ..foreign import Layout, batched
from ..rules import checked_pair
from ..validation import InputError, check_ratio
from .strips import StripImage, map_strips

__all__ = ["ergas", "ergas_sums", "ergas_from_sums"]


def ergas_sums(ref_planes: np.ndarray, fus_planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-band sums of squared errors and of the reference over a chunk of pixels.

    Parameters
    ----------
    ref_planes, fus_planes : ndarray, shape (B, h, w), float64

    Returns
    -------
    (ndarray, ndarray), each shape (B,)
        ``sum (ref - fus)^2`` and ``sum ref`` (DN^2 and DN).

    Examples
    --------
    >>> [a.tolist() for a in ergas_sums(np.ones((1, 2, 2)), np.zeros((1, 2, 2)))]
    [[4.0], [4.0]]
    """
    nb = ref_planes.shape[0]
    sse, tot = np.empty(nb), np.empty(nb)
    for b in range(nb):
        d = ref_planes[b] - fus_planes[b]
        sse[b] = np.einsum("ij,ij->", d, d)
        tot[b] = ref_planes[b].sum()
    return sse, tot


def ergas_from_sums(sse: np.ndarray, ref_sum: np.ndarray, n_pixels: int, ratio: float) -> float:
    """``100/ratio * sqrt(mean_b(MSE_b / mean(reference_b)^2))`` from chunk sums.

    Parameters
    ----------
    sse, ref_sum : ndarray, shape (B,)
        Summed squared errors and summed reference values per band.
    n_pixels : int
        Pixels per band.
    ratio : float
        PAN/MS resolution ratio.

    Returns
    -------
    float
        Dimensionless, >= 0 (0 = identical).

    Raises
    ------
    InputError
        A reference band with zero mean (ERGAS undefined).

    Examples
    --------
    >>> ergas_from_sums(np.array([4.0]), np.array([8.0]), 4, 4)
    12.5
    """
    mse, mu = np.asarray(sse) / n_pixels, np.asarray(ref_sum) / n_pixels
    if np.any(mu == 0):
        raise InputError(
            f"reference: band(s) {(np.flatnonzero(mu == 0) + 1).tolist()} (counted from 1) have zero mean; ERGAS is "
            "undefined (it divides by each band's mean: a dead band), the other indexes are not: pass indexes= "
            "without ERGAS (pansharp-eval --indexes) to score them, or drop the band"
        )
    return float(100.0 / ratio * np.sqrt(np.mean(mse / mu**2)))


@batched("reference", "fused")
def ergas(reference: np.ndarray, fused: np.ndarray, *, ratio: int, layout: Layout | None = None) -> float:
    """ERGAS = ``100/ratio * sqrt(mean_b(MSE_b / mean(reference_b)^2))`` (toolbox ``ERGAS``).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Reference (ground truth) and fused image, DN (any dtype; float64 inside).
    ratio : int
        PAN/MS resolution ratio (an integer >= 2); required, no default.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

    Returns
    -------
    float
        Dimensionless, >= 0 (0 = identical).

    References
    ----------
    Wald, 2000; Vivone et al., IEEE GRSM 2021.

    Examples
    --------
    >>> ref = np.full((8, 8, 2), 100.0)
    >>> round(ergas(ref, ref * 1.1, ratio=4), 12)
    2.5
    """
    r = check_ratio(ratio, exp=False)
    ref, fus = checked_pair(reference, fused)
    rs, fs = StripImage(ref), StripImage(fus)
    parts = map_strips(lambda r0, r1: ergas_sums(rs.planes(r0, r1), fs.planes(r0, r1)), ref.shape[0], 1)
    return ergas_from_sums(np.sum([p[0] for p in parts], axis=0), np.sum([p[1] for p in parts], axis=0),
                           ref.shape[0] * ref.shape[1], float(r))

"""Peak signal-to-noise ratio (PSNR), an extra index of deep-learning pansharpening tables.

Not part of the reference toolbox: offered on request (``indexes=`` / ``--indexes``), never in a
protocol's default table. Definition (the one of scikit-image's ``peak_signal_noise_ratio`` with
``data_range``): ``10 log10(peak^2 / MSE)`` with the MSE over every pixel *and band* of the
evaluated image (whole-cube averaging, not a mean of per-band PSNRs) and ``peak`` the data range,
``2**bits - 1`` DN in the protocols (so [0, 1] data brought to DN with ``scale=2**bits - 1`` give
the PSNR of the [0, 1] data with peak 1).

The formula's home: per-chunk sums (the squared errors ERGAS sums, :func:`~.ergas.ergas_sums`),
the finalize step (:func:`psnr_from_sums`) and :func:`psnr`.

References
----------
Wang, Bovik, Sheikh, Simoncelli, "Image quality assessment: from error visibility to structural
similarity", IEEE TIP 13(4), 2004, doi:10.1109/TIP.2003.819861 (PSNR as the baseline index).
van der Walt et al., "scikit-image: image processing in Python", PeerJ 2:e453, 2014,
doi:10.7717/peerj.453 (``skimage.metrics.peak_signal_noise_ratio``, whose numbers these are).
"""

from __future__ import annotations

import math

import numpy as np

from ..foreign import Layout, batched
from ..rules import checked_pair
from ..validation import InputError
from .ergas import ergas_sums
from .strips import StripImage, map_strips

__all__ = ["psnr", "psnr_from_sums"]


def psnr_from_sums(sse: np.ndarray, n_pixels: int, peak: float) -> float:
    """``10 log10(peak^2 / MSE)`` from per-band sums of squared errors (MSE over pixels and bands).

    Parameters
    ----------
    sse : ndarray, shape (B,)
        Summed squared errors per band (DN^2).
    n_pixels : int
        Pixels per band.
    peak : float
        Data range (DN), e.g. ``2**bits - 1``.

    Returns
    -------
    float
        Decibels; ``inf`` for identical images.

    Examples
    --------
    >>> psnr_from_sums(np.array([4.0, 4.0]), 4, 10.0)
    20.0
    """
    mse = float(np.sum(sse)) / (n_pixels * len(sse))
    if mse == 0.0:
        return math.inf
    return float(10.0 * np.log10(peak * peak / mse))


@batched("reference", "fused")
def psnr(reference: np.ndarray, fused: np.ndarray, *, data_range: float, layout: Layout | None = None) -> float:
    """PSNR of a fused image against its reference, whole-cube MSE (scikit-image's definition).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Any consistent unit (DN in the protocols).
    data_range : float
        The peak: the data's range in the same unit (``2**bits - 1`` for DN, 1 for [0, 1] data);
        required (guessing it from the data or the dtype changes the number).
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

    Returns
    -------
    float
        Decibels (higher is better; ``inf`` for identical images).

    Raises
    ------
    InputError
        A non-positive ``data_range``, shapes or values the gate refuses.

    References
    ----------
    Wang et al., IEEE TIP 13(4), 2004; van der Walt et al., PeerJ 2:e453, 2014.

    Examples
    --------
    >>> ref = np.full((8, 8, 2), 100.0)
    >>> round(psnr(ref, ref + 1.0, data_range=2047), 4)
    66.2224
    """
    peak = float(data_range)
    if not math.isfinite(peak) or peak <= 0:
        raise InputError(f"data_range must be a positive number (the peak, e.g. 2**bits - 1), got {data_range!r}")
    ref, fus = checked_pair(reference, fused)
    rs, fs = StripImage(ref), StripImage(fus)
    parts = map_strips(lambda r0, r1: ergas_sums(rs.planes(r0, r1), fs.planes(r0, r1))[0], ref.shape[0], 1)
    return psnr_from_sums(np.sum(parts, axis=0), ref.shape[0] * ref.shape[1], peak)

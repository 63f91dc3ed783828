"""SSIM as the PanCollection evaluation scripts compute it (band mean of Wang et al.'s ``ssim_index``).

In the ``pancollection`` protocol's reduced table and an extra of the others (``indexes=["SSIM"]``),
computed in memory: the strip pass gives each strip its valid windows with a 10-row halo
(:func:`ssim_window_sums`); the tile engine refuses it.

Definition: per band, the mean over the *valid* 11x11 windows (no padding) of the SSIM
map with a Gaussian window (sigma 1.5), K1 = 0.01, K2 = 0.03 and the dynamic range ``peak``; then
the mean over bands. The scripts call ``ssim_index(x*255, y*255)`` with its defaults (L = 255) on
images divided by ``const = 2**bits - 1``, which is SSIM with ``data_range = peak`` on DN. The
numbers are scikit-image's ``structural_similarity(..., data_range=peak, gaussian_weights=True,
sigma=1.5, use_sample_covariance=False)`` per band, whose map it crops by the window's half width
before averaging, i.e. the valid windows.

References
----------
Wang, Bovik, Sheikh, Simoncelli, IEEE TIP 13(4), 2004, doi:10.1109/TIP.2003.819861.
Efficient-MIF, ``Pansharpening_Hyper_SR_Matlab_Test_Package/quality_assess.m`` line 27 and
``ssim_index.m`` lines 17-27, 91-120 (github.com/294coder/Efficient-MIF, commit daa5afa).
"""

from __future__ import annotations

import math

import numpy as np

from ..rules import checked_pair
from ..validation import InputError

__all__ = ["ssim", "ssim_window_sums", "SSIM_WINDOW", "SSIM_SIGMA", "SSIM_K"]

#: Window side, Gaussian sigma and (K1, K2) of ``ssim_index.m``'s defaults.
SSIM_WINDOW, SSIM_SIGMA, SSIM_K = 11, 1.5, (0.01, 0.03)


def ssim(reference: np.ndarray, fused: np.ndarray, *, data_range: float) -> float:
    """Band-mean SSIM of a fused image against its reference (PanCollection scripts' SSIM)."""
    from skimage.metrics import structural_similarity

    peak = float(data_range)
    if not math.isfinite(peak) or peak <= 0:
        raise InputError(f"data_range must be a positive number (the peak, e.g. 2**bits - 1), got {data_range!r}")
    ref, fus = checked_pair(reference, fused)
    if min(ref.shape[:2]) < SSIM_WINDOW:
        raise InputError(f"SSIM needs images of at least {SSIM_WINDOW}x{SSIM_WINDOW} pixels, got {ref.shape[:2]}")
    values = [structural_similarity(np.asarray(ref[..., b], np.float64), np.asarray(fus[..., b], np.float64),
                                    data_range=peak, gaussian_weights=True, sigma=SSIM_SIGMA,
                                    use_sample_covariance=False, K1=SSIM_K[0], K2=SSIM_K[1])
              for b in range(ref.shape[2])]
    return float(np.mean(values))


def ssim_window_sums(ref: np.ndarray, fus: np.ndarray, peak: float) -> np.ndarray:
    """Per-band sums of the SSIM map over the valid 11x11 windows of (B, h, w) planes (scikit-image's map)."""
    from skimage.metrics import structural_similarity

    half = SSIM_WINDOW // 2
    out = np.empty(ref.shape[0])
    for b in range(ref.shape[0]):
        _, smap = structural_similarity(ref[b], fus[b], data_range=peak, gaussian_weights=True, sigma=SSIM_SIGMA,
                                        use_sample_covariance=False, K1=SSIM_K[0], K2=SSIM_K[1], full=True)
        out[b] = smap[half:-half, half:-half].sum(dtype=np.float64)
    return out

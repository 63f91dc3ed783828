"""Low-pass filters of the PAN used by the baselines' injection models."""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage

from ..mtf import mtf_filter

__all__ = ["gaussian_lowpass", "starlet_lowpass_decimate", "nearest_decimate"]

#: GNyq of the toolbox's ``LPfilterGauss`` (a fixed Gaussian, whatever the sensor).
LPFILTER_GAUSS_GNYQ = 0.3


def gaussian_lowpass(pan: np.ndarray, ratio: int) -> np.ndarray:
    """The 2020 toolbox's ``LPfilterGauss``: 41x41 Gaussian-shaped FIR, GNyq 0.3, replicate border.

    Its width uses the 2015 form ``sigma = sqrt((N*fcut/2)**2 / (-2 ln 0.3))`` (N = 41,
    fcut = 1/ratio), i.e. :func:`pansharp_iqa.mtf_filter` with ``sigma_form="2015"``.

    Parameters
    ----------
    pan : numpy.ndarray
        ``(H, W)`` image (DN).
    ratio : int
        Resolution ratio.

    Returns
    -------
    numpy.ndarray
        Filtered image, same shape, float64.

    References
    ----------
    Vivone et al., IEEE TGRS 53(5), 2015; Vivone et al., IEEE GRSM 9(1), 2021.
    """
    return np.asarray(mtf_filter(pan, LPFILTER_GAUSS_GNYQ, ratio, sigma_form="2015"), dtype=np.float64)


def nearest_decimate(image: np.ndarray, ratio: int) -> np.ndarray:
    """MATLAB ``imresize(I, 1/ratio, 'nearest')``: keep rows/columns ``ratio//2, ratio//2 + ratio, ...``."""
    start = ratio // 2
    return np.ascontiguousarray(image[start::ratio, start::ratio])


def starlet_lowpass_decimate(image: np.ndarray, ratio: int) -> np.ndarray:
    """Low-pass with the undecimated (a trous) B3-spline wavelet and decimate by ``ratio``.

    ``ceil(log2(ratio))`` levels of the separable kernel ``[1, 4, 6, 4, 1] / 16`` with
    ``2**j - 1`` holes (unit DC gain, mirror borders), then nearest decimation. It follows the
    2020 toolbox's ``LPfilterPlusDec`` (Starck & Murtagh filter) used by GSA; the border handling
    of the toolbox's wavelet routine is not reproduced bit for bit.

    Parameters
    ----------
    image : numpy.ndarray
        ``(H, W)`` image.
    ratio : int
        Resolution ratio.

    Returns
    -------
    numpy.ndarray
        ``(H/ratio, W/ratio)`` float64.

    References
    ----------
    Starck, Fadili & Murtagh, IEEE TIP 16(2), 2007; Aiazzi, Baronti & Selva, IEEE TGRS 45(10), 2007.
    """
    out = np.asarray(image, dtype=np.float64)
    base = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0
    for level in range(int(math.ceil(math.log2(ratio)))):
        step = 2 ** level
        kernel = np.zeros(4 * step + 1)
        kernel[::step] = base
        out = ndimage.correlate1d(out, kernel, axis=0, mode="mirror")
        out = ndimage.correlate1d(out, kernel, axis=1, mode="mirror")
    return nearest_decimate(out, ratio)

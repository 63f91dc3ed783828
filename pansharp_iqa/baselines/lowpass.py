"""Low-pass filters of the PAN used by the baselines' injection models.

* :func:`gaussian_lowpass` -- the toolbox's ``LPfilterGauss`` (BT-H, MTF-GLP-HPM);
* :func:`plusdec_lowpass` / :func:`plusdec_lowpass_decimate` -- the toolbox's ``LPfilterPlusDec``
  (GSA), including its border rule, on a whole image or on a strip of rows with a halo;
* :func:`nearest_decimate` -- MATLAB ``imresize(., 1/ratio, 'nearest')``.
"""

from __future__ import annotations

import math

import numpy as np

from ..mtf import mtf_filter

__all__ = [
    "LPFILTER_GAUSS_GNYQ", "gaussian_lowpass", "nearest_decimate", "plusdec_halo", "plusdec_levels",
    "plusdec_lowpass", "plusdec_lowpass_decimate",
]

#: GNyq of the toolbox's ``LPfilterGauss`` (a fixed Gaussian, whatever the sensor).
LPFILTER_GAUSS_GNYQ = 0.3

#: B3-spline taps of ``LPfilterPlusDec`` (its ``sqrt(2)`` analysis/synthesis gains cancel: 2 x 1/4 per level).
_B3 = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0


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

    Examples
    --------
    >>> float(gaussian_lowpass(np.full((50, 50), 7.0), 4)[25, 25].round(2))  # the kernel sums to ~0.998
    6.99
    """
    return np.asarray(mtf_filter(pan, LPFILTER_GAUSS_GNYQ, ratio, sigma_form="2015"), dtype=np.float64)


def nearest_decimate(image: np.ndarray, ratio: int) -> np.ndarray:
    """MATLAB ``imresize(I, 1/ratio, 'nearest')`` for an even ratio: rows/columns ``ratio//2 + k*ratio``.

    The output has ``ceil(n / ratio)`` rows (columns); where ``n`` is not a multiple of the ratio
    the last one is clamped to the image's last row (column), as MATLAB does.

    Examples
    --------
    >>> nearest_decimate(np.arange(16.0).reshape(4, 4), 2)
    array([[ 5.,  7.],
           [13., 15.]])
    >>> nearest_decimate(np.arange(5.0)[None, :], 4)
    array([[2., 4.]])
    """
    rows, cols = (np.minimum(np.arange(-(-n // ratio)) * ratio + ratio // 2, n - 1) for n in image.shape[:2])
    return np.ascontiguousarray(image[rows][:, cols])


def plusdec_levels(ratio: int) -> int:
    """Levels of ``LPfilterPlusDec``'s wavelet decomposition: ``ceil(log2(ratio))``.

    Examples
    --------
    >>> plusdec_levels(4), plusdec_levels(8)
    (2, 3)
    """
    return math.ceil(math.log2(ratio))


def plusdec_halo(ratio: int) -> int:
    """Rows a strip needs beyond each inner edge for :func:`plusdec_lowpass` to be exact there.

    Each level's analysis and synthesis filter reads 2 rows each way: ``4 * levels``.

    Examples
    --------
    >>> plusdec_halo(4)
    8
    """
    return 4 * plusdec_levels(ratio)


def _smooth(x: np.ndarray) -> np.ndarray:
    """5-tap B3 filter along axis 0, 'valid' part only (2 rows fewer at each end)."""
    return (x[:-4] + x[4:] + 4.0 * (x[1:-3] + x[3:-1]) + 6.0 * x[2:-2]) * (1.0 / 16.0)


def _plusdec_axis0(x: np.ndarray, levels: int, first_edge: bool, last_edge: bool) -> np.ndarray:
    """``LPfilterPlusDec``'s 1-D operator along axis 0 (see :func:`plusdec_lowpass`)."""
    pad = ((4 if first_edge else 0, 4 if last_edge else 0),) + ((0, 0),) * (x.ndim - 1)
    for _ in range(levels):  # analysis: half-point symmetric extension by 4, then the filter
        x = _smooth(np.pad(x, pad, mode="symmetric")) if first_edge or last_edge else _smooth(x)
    for _ in range(levels):  # synthesis from the approximation only: the filter, cropped back
        x = _smooth(x)
    return x


def plusdec_lowpass(image: np.ndarray, ratio: int, *, top: bool = True, bottom: bool = True) -> np.ndarray:
    """The low-pass of the 2020 toolbox's ``LPfilterPlusDec``, before its decimation."""
    levels = plusdec_levels(ratio)
    x = np.asarray(image, dtype=np.float64)
    x = _plusdec_axis0(x, levels, top, bottom)
    return np.swapaxes(_plusdec_axis0(np.swapaxes(x, 0, 1), levels, True, True), 0, 1)


def plusdec_lowpass_decimate(image: np.ndarray, ratio: int) -> np.ndarray:
    """The 2020 toolbox's ``LPfilterPlusDec``: :func:`plusdec_lowpass` then :func:`nearest_decimate`."""
    return nearest_decimate(plusdec_lowpass(image, ratio), ratio)

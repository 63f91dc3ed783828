"""MTF-matched kernels of the reprojected full-resolution protocol.

Scarpa & Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote Sensing 14(8):1808,
2022, doi:10.3390/rs14081808. The protocol's kernel is **not** the toolbox's ``mtf_kernel``: the
frequency-sampling design is windowed by a 1-D Kaiser window applied along the columns only (not the
circular ``fwind1`` window), negative taps are clipped to 0 and the kernel is renormalised to sum 1.
The result is exactly symmetric under a 180-degree rotation but not under transposition.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..validation import SettingError, check_gnyq, check_kernel_size, check_ratio

__all__ = ["KERNEL_SIZE", "KAISER_BETA", "kaiser_window", "reprojection_kernel", "reprojection_kernels"]

#: Kernel side (taps), as in the reference code.
KERNEL_SIZE = 41
#: Kaiser window shape parameter of the reference code.
KAISER_BETA = 0.5


def kaiser_window(length: int, beta: float) -> np.ndarray:
    """Kaiser window, MATLAB ``kaiser(length, beta)``, exactly symmetric by construction.

    ``np.kaiser`` computes ``I0(beta sqrt(1 - ((k - a)/a)^2)) / I0(beta)`` with ``a = (length-1)/2``;
    the window is then averaged with its mirror image, which leaves a symmetric window unchanged
    and makes any rounding asymmetry of a NumPy release impossible (the protocol's kernels must be
    exactly 180-degree symmetric, so correlation and convolution agree).

    Parameters
    ----------
    length : int
        Number of taps (>= 1).
    beta : float
        Shape parameter (dimensionless).

    Returns
    -------
    ndarray, shape (length,), float64
        Window values (dimensionless, peak 1 at the centre for odd lengths).

    References
    ----------
    J. F. Kaiser, "Nonrecursive digital filter design using the I0-sinh window function",
    Proc. IEEE ISCAS, 1974; MATLAB ``kaiser``.

    Examples
    --------
    >>> w = kaiser_window(41, 0.5)
    >>> bool(w[20] == 1.0 and (w == w[::-1]).all())
    True
    """
    if int(length) != length or length < 1:
        raise SettingError(f"length must be an integer >= 1, got {length!r}")
    w = np.kaiser(int(length), float(beta))
    return 0.5 * (w + w[::-1])


def reprojection_kernel(gnyq: float, ratio: int, size: int = KERNEL_SIZE) -> np.ndarray:
    """The protocol's MTF-matched low-pass kernel for one band.

    Steps (Scarpa & Ciotola 2022, reference code ``gen_mtf``; spec ``fullres2022.md`` section 2):
    Gaussian frequency response with ``alpha = sqrt(((N-1) fcut/2)^2 / (-2 ln GNyq))``,
    ``fcut = 1/ratio`` (taps below ``eps*max`` zeroed, normalised to sum 1 then to peak 1);
    MATLAB ``fsamp2`` frequency-sampling design; multiplication of column ``j`` by the 1-D Kaiser
    window ``w[j]`` (length N, beta 0.5); negative taps clipped to 0; division by the sum.

    Parameters
    ----------
    gnyq : float
        MTF gain at the MS Nyquist frequency, in (0, 1) (dimensionless).
    ratio : int
        PAN/MS resolution ratio (>= 2).
    size : int
        Kernel side N in taps (odd); 41 in the protocol.

    Returns
    -------
    ndarray, shape (size, size), float64
        Non-negative taps summing to 1 (applied as a correlation; 180-degree symmetric, so the same
        as a convolution).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    ratio = check_ratio(ratio, exp=False)
    gnyq = check_gnyq(gnyq)
    size = check_kernel_size(size)
    fcut = 1.0 / ratio
    alpha = np.sqrt(((size - 1) * fcut / 2.0) ** 2 / (-2.0 * np.log(gnyq)))
    half = (size - 1) // 2
    grid = np.arange(-half, half + 1, dtype=np.float64)
    gauss = np.exp(-(grid[:, None] ** 2 + grid[None, :] ** 2) / (2.0 * alpha * alpha))
    gauss[gauss < np.finfo(np.float64).eps * gauss.max()] = 0.0
    gauss = gauss / gauss.sum()
    hd = gauss / gauss.max()
    # MATLAB fsamp2: rot90(fftshift(ifft2(rot90(fftshift(rot90(Hd, 2)), 2))), 2)
    h = np.rot90(hd, 2)
    h = np.fft.fftshift(h)
    h = np.rot90(h, 2)
    h = np.fft.ifft2(h)
    h = np.fft.fftshift(h)
    h = np.rot90(h, 2)
    h = np.real(h) * kaiser_window(size, KAISER_BETA)[None, :]  # column-only window
    h = np.clip(h, 0.0, None)
    h = h / h.sum()
    return np.ascontiguousarray(h, dtype=np.float64)


def reprojection_kernels(gnyq: Sequence[float], ratio: int, size: int = KERNEL_SIZE) -> np.ndarray:
    """Bank of per-band kernels (see :func:`reprojection_kernel`).

    Parameters
    ----------
    gnyq : sequence of float
        One MS GNyq per band (dimensionless).
    ratio : int
        PAN/MS resolution ratio.
    size : int
        Kernel side in taps.

    Returns
    -------
    ndarray, shape (size, size, B), float64
        Kernel of band ``b`` in ``[:, :, b]``.

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    values = [float(g) for g in gnyq]
    if not values:
        raise SettingError("gnyq must hold at least one value (one GNyq per MS band)")
    return np.stack([reprojection_kernel(g, ratio, size) for g in values], axis=-1)

"""Least-squares weights of the MS bands that best reproduce a (low-pass) PAN."""

from __future__ import annotations

import numpy as np

__all__ = ["regress_bands"]


def regress_bands(bands: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Global least-squares weights ``w`` minimising ``|| bands @ w - target ||``.

    The 2020 toolbox's ``estimation_alpha(..., 'global')`` (MATLAB's ``A \\ b``).

    Parameters
    ----------
    bands : numpy.ndarray
        ``(H, W, K)`` regressors (MS bands, possibly with a constant plane).
    target : numpy.ndarray
        ``(H, W)`` target.

    Returns
    -------
    numpy.ndarray
        ``(K,)`` weights.

    References
    ----------
    Vivone et al., IEEE GRSL 11(5), 2014; Aiazzi, Baronti & Selva, IEEE TGRS 45(10), 2007.
    """
    a = bands.reshape(-1, bands.shape[-1])
    w, *_ = np.linalg.lstsq(a, target.reshape(-1), rcond=None)
    return w

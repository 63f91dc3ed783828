"""EXP: the MS upsampled with the 23-tap interpolator (the "no PAN" reference)."""

from __future__ import annotations

import numpy as np

from .inputs import check_pair

__all__ = ["exp"]


def exp(ms: np.ndarray, pan: np.ndarray, *, sensor: object = None, ratio: int) -> np.ndarray:
    """Upsample the MS to PAN scale with :func:`pansharp_iqa.interp23tap` (PAN unused).

    Parameters
    ----------
    ms : numpy.ndarray
        ``(h, w, B)`` low-resolution MS, DN.
    pan : numpy.ndarray
        ``(ratio*h, ratio*w)`` PAN (only its shape is checked).
    sensor : str or Sensor, optional
        Unused (kept for the common signature).
    ratio : int
        Resolution ratio.

    Returns
    -------
    numpy.ndarray
        ``(ratio*h, ratio*w, B)`` float64, DN.

    References
    ----------
    Aiazzi et al., IEEE TGRS 40(10), 2002 (23-tap polynomial kernel); Vivone et al., IEEE GRSM 2021.
    """
    from pansharp_iqa import interp23tap

    ms_arr, _, ratio = check_pair(ms, pan, ratio)
    return np.asarray(interp23tap(ms_arr, ratio), dtype=np.float64)

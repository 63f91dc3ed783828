"""EXP: the MS upsampled with the 23-tap interpolator (the "no PAN" reference)."""

from __future__ import annotations

import numpy as np

from .inputs import baseline_inputs

__all__ = ["exp"]


def exp(ms: np.ndarray, pan: np.ndarray, *, sensor: object = None, ratio: int) -> np.ndarray:
    """Upsample the MS to PAN scale with :func:`pansharp_iqa.interp23tap` (PAN unused).

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (:mod:`pansharp_iqa.baselines.inputs`), DN.
    sensor : str or Sensor
        Unused (the PAN only fixes the output size).

    Returns
    -------
    numpy.ndarray
        The upsampled MS, ``(ratio*h, ratio*w, B)`` float64, DN.

    References
    ----------
    Aiazzi et al., IEEE TGRS 40(10), 2002 (23-tap polynomial kernel); Vivone et al., IEEE GRSM 2021.
    """
    return baseline_inputs(ms, pan, ratio)[3]

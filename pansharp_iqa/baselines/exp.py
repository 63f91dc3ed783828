"""EXP: the MS upsampled with the 23-tap interpolator (the "no PAN" reference)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .inputs import open_pair
from .strips import exp_strip, output_for, strip_plan

__all__ = ["exp"]


def exp(ms: Any, pan: Any, *, sensor: object = None, ratio: int, out: Any = None,
        strip_rows: int | None = None) -> np.ndarray:
    """Upsample the MS to PAN scale with :func:`pansharp_iqa.interp23tap` (PAN unused).

    Equal to the toolbox's ``interp23tap(I_MS_LR, ratio)`` (checked against it under GNU Octave).
    Computed strip by strip (each from its MS rows plus a wrapped 13-row halo), in bounded memory.

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (``pansharp_iqa.baselines.inputs``), DN.
    sensor : str or Sensor
        Unused (the PAN only fixes the output size).
    out, strip_rows
        Where to write the result and the strip height (``strips.output_for``,
        ``strips.strip_plan``).

    Returns
    -------
    numpy.ndarray
        The upsampled MS, ``(ratio*h, ratio*w, B)`` float64, DN (``out`` when given).

    References
    ----------
    Aiazzi et al., IEEE TGRS 40(10), 2002 (23-tap polynomial kernel); Vivone et al., IEEE GRSM 2021.

    Examples
    --------
    >>> exp(np.full((4, 4, 2), 5.0), np.full((16, 16), 5.0), ratio=4)[7, 7].round(6).tolist()
    [5.0, 5.0]
    """
    pair = open_pair(ms, pan, ratio)
    result = output_for(pair, out)
    for r0, r1 in strip_plan(pair, strip_rows):
        result[r0:r1] = exp_strip(pair, r0, r1)  # (the strip is freed before the next is made)
    return result

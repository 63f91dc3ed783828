"""MTF-GLP-HPM: MTF-matched generalised Laplacian pyramid with high-pass modulation."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..sensors import resolve_sensor
from ..validation import SettingError, check_sensor_bands
from .inputs import open_pair
from .stats import Moments
from .strips import (
    exp_rows,
    exp_strip,
    gaussian_strip,
    mtf_decimated_rows,
    output_for,
    stored_strips,
    strip_plan,
)

__all__ = ["mtf_glp_hpm"]


def mtf_glp_hpm(ms: Any, pan: Any, *, sensor: object, ratio: int, out: Any = None,
                strip_rows: int | None = None) -> np.ndarray:
    """MTF-GLP with high-pass modulation (multiplicative injection), as the toolbox's ``MTF_GLP_HPM``.

    Per band ``b``: the PAN is equalised to ``EXP_b`` (``P_b = (P - mean P) * std(EXP_b) /
    std(LP(P)) + mean(EXP_b)``, ``LP`` = ``LPfilterGauss``, GNyq 0.3); its low-pass version is
    ``PL_b = interp23tap(decimate(MTF_b(P_b)))`` with the sensor's MS MTF of band ``b`` (from the
    registry, replicate border) and nearest decimation; ``F_b = EXP_b * P_b / (PL_b + eps)``.

    Equal to the toolbox's code to rounding (checked under GNU Octave). Computed in strips: one pass
    stores EXP in ``out`` and gathers the moments; the second computes ``PL_b`` from the equalised
    PAN's rows with the MTF's and EXP's halos and writes the fusion over EXP.

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (``pansharp_iqa.baselines.inputs``), DN.
    sensor : str or Sensor
        Required: it gives the per-band MS GNyq (``"none"`` for the generic 0.30).
    out, strip_rows
        Where to write the result and the strip height (``strips.output_for``,
        ``strips.strip_plan``).

    Returns
    -------
    numpy.ndarray
        The MTF-GLP-HPM fusion, ``(ratio*h, ratio*w, B)`` float64, DN (``out`` when given).

    References
    ----------
    Aiazzi et al., PE&RS 72(5), 2006; Vivone et al., IEEE GRSL 11(5), 2014; Vivone et al.,
    IEEE GRSM 9(1), 2021.

    Examples
    --------
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> mtf_glp_hpm(ms, pan, sensor="none", ratio=4).shape
    (576, 576, 4)
    """
    if sensor is None:
        raise SettingError("mtf_glp_hpm needs the sensor (its MTF shapes the low-pass PAN); use 'none' if unknown")
    pair = open_pair(ms, pan, ratio)
    gnyq = check_sensor_bands(resolve_sensor(sensor), pair.ms_shape[2])  # type: ignore[arg-type]
    result = output_for(pair, out)
    plan = strip_plan(pair, strip_rows)
    r, bands = pair.ratio, pair.ms_shape[2]
    up_moments, pan_moments, lp_moments = Moments(bands), Moments(1), Moments(1)
    for r0, r1 in plan:
        up = exp_strip(pair, r0, r1)
        result[r0:r1] = up
        up_moments.add(up.reshape(-1, bands))
        pan_moments.add(pair.pan_rows(np.arange(r0, r1)).reshape(-1, 1))
        lp_moments.add(gaussian_strip(pair, r0, r1).reshape(-1, 1))
        del up  # free this strip before the next is made
    gain = up_moments.std() / lp_moments.std()[0]
    offset = up_moments.mean - gain * pan_moments.mean[0]  # P_b = (P - mean P) * gain_b + mean(EXP_b)
    for r0, r1, up in stored_strips(result, plan):
        low = exp_rows(lambda rows: mtf_decimated_rows(pair, rows, gain, offset, gnyq), r0 // r, r1 // r,
                       pair.ms_shape[0], r)
        low += np.finfo(float).eps
        fused = pair.pan_rows(np.arange(r0, r1))[:, :, None] * gain + offset
        fused /= low
        fused *= up
        result[r0:r1] = fused
        del up, low, fused
    return result

"""BT-H: Brovey transform with haze correction (Lolli et al., 2017)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .inputs import open_pair
from .stats import LeastSquares, Moments, hazen_percentiles
from .strips import exp_strip, gaussian_strip, output_for, stored_strips, strip_plan

__all__ = ["HAZE_FACTORS_4BAND", "HAZE_PERCENTILE", "bt_h"]

#: Haze fractions of the 1st percentile for 4-band (B, G, R, NIR) data, as in the 2020 toolbox.
HAZE_FACTORS_4BAND = (0.95, 0.45, 0.40, 0.05)
#: Percentile (MATLAB ``prctile``, i.e. numpy's ``"hazen"`` method) used for the 4-band haze.
HAZE_PERCENTILE = 1.0


def bt_h(ms: Any, pan: Any, *, sensor: object = None, ratio: int, out: Any = None,
         strip_rows: int | None = None) -> np.ndarray:
    """Haze-corrected Brovey fusion, as the toolbox's ``BroveyRegHazeMin``.

    ``F_b = max(EXP_b - L_b, 0) * P' / (I + eps) + L_b`` where ``EXP`` is the 23-tap upsampled MS,
    ``L_b`` the haze (for 4 bands: 0.95, 0.45, 0.40, 0.05 times the 1st percentile of EXP's B, G,
    R, NIR; otherwise the band minimum of EXP), ``I = sum_b w_b (EXP_b - L_b)`` with ``w`` the
    least-squares weights of the EXP bands *before* haze removal fitting the Gaussian-low-passed
    PAN (``LPfilterGauss``, GNyq 0.3), and ``P' = (P - mean(LP(P))) * std(I) / std(LP(P)) + mean(I)``.

    Equal to the toolbox's code to rounding (checked under GNU Octave). Computed in strips: one pass
    stores EXP in ``out`` and gathers the regression, the haze minima and the low-pass PAN's moments;
    for 4 bands one or two more find the exact percentiles; one gathers ``I``'s moments; the last
    writes the fusion over EXP.

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (``pansharp_iqa.baselines.inputs``), DN.
    sensor : str or Sensor
        Unused: the method does not depend on the MTF.
    out, strip_rows
        Where to write the result and the strip height (``strips.output_for``,
        ``strips.strip_plan``).

    Returns
    -------
    numpy.ndarray
        The haze-corrected Brovey fusion, ``(ratio*h, ratio*w, B)`` float64, DN (``out`` when given).

    References
    ----------
    Lolli, Alparone, Garzelli & Vivone, IEEE GRSL 14(12), 2017, doi:10.1109/LGRS.2017.2761021;
    Vivone et al., IEEE GRSM 9(1), 2021.

    Examples
    --------
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> bt_h(ms, pan, ratio=4).shape
    (576, 576, 4)
    """
    pair = open_pair(ms, pan, ratio)
    result = output_for(pair, out)
    plan = strip_plan(pair, strip_rows)
    bands = pair.ms_shape[2]
    fit, lp_moments = LeastSquares(bands), Moments(1)
    lo, hi = np.full(bands, np.inf), np.full(bands, -np.inf)
    for r0, r1 in plan:
        up = exp_strip(pair, r0, r1)
        result[r0:r1] = up
        flat = up.reshape(-1, bands)
        pan_lp = gaussian_strip(pair, r0, r1).reshape(-1)
        fit.add(flat, pan_lp)
        lp_moments.add(pan_lp[:, None])
        lo, hi = np.minimum(lo, flat.min(axis=0)), np.maximum(hi, flat.max(axis=0))
        del up, flat, pan_lp  # free this strip before the next is made
    weights = fit.solve()
    if bands == 4:
        pct = hazen_percentiles(lambda: (s.reshape(-1, 4) for _, _, s in stored_strips(result, plan)),
                                HAZE_PERCENTILE, n=pair.pan_shape[0] * pair.pan_shape[1], lo=lo, hi=hi)
        haze = np.asarray(HAZE_FACTORS_4BAND) * pct
    else:
        haze = lo
    i_moments = Moments(1)
    for _, _, up in stored_strips(result, plan):
        i_moments.add(((up - haze) @ weights).reshape(-1, 1))
        del up
    gain = float(i_moments.std()[0] / lp_moments.std()[0])
    for r0, r1, fused in stored_strips(result, plan):
        fused -= haze  # EXP - L
        ratio_map = (pair.pan_rows(np.arange(r0, r1)) - lp_moments.mean[0]) * gain + i_moments.mean[0]
        ratio_map /= fused @ weights + np.finfo(float).eps  # P' / (I + eps)
        np.maximum(fused, 0.0, out=fused)
        fused *= ratio_map[:, :, None]
        fused += haze
        result[r0:r1] = fused
        del fused, ratio_map
    return result

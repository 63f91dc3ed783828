"""GSA: Gram-Schmidt adaptive component substitution (Aiazzi, Baronti & Selva, 2007)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .inputs import open_pair
from .stats import LeastSquares, Moments
from .strips import exp_strip, output_for, plusdec_strip, stored_strips, strip_plan

__all__ = ["gsa"]


def gsa(ms: Any, pan: Any, *, sensor: object = None, ratio: int, out: Any = None,
        strip_rows: int | None = None) -> np.ndarray:
    """Gram-Schmidt adaptive fusion, as the toolbox's ``GSA``.

    The intensity ``I = sum_b w_b EXP0_b + w_0`` uses weights regressed, at MS scale, between the
    mean-removed low-resolution MS plus a constant and the toolbox's ``LPfilterPlusDec`` of the
    mean-removed PAN (``lowpass.plusdec_lowpass_decimate``: the undilated B3-spline wavelet
    low-pass with its own border rule, then nearest decimation). With ``I0 = I - mean(I)`` and
    ``g_b = cov(I0, EXP_b) / var(I0)``: ``F_b = EXP_b + g_b (P - mean(P) - I0)`` (``EXP`` = 23-tap
    upsampled MS, ``EXP0`` its band means removed). The toolbox then shifts each band to the mean
    of ``EXP_b``; the shift is zero up to rounding (the injected detail has zero mean), so it is
    not recomputed.

    Equal to the toolbox's code to rounding (checked under GNU Octave, e.g. 1e-14 relative on the
    WorldView-2 test scene). Computed in strips: one pass for the means of the PAN and MS, one that
    stores EXP in ``out`` and fits the weights on MS-scale strips, one for ``I``'s covariances with
    the EXP bands, and one that writes the fusion over EXP.

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (``pansharp_iqa.baselines.inputs``), DN.
    sensor : str or Sensor
        Unused (GSA's injection gains come from regressions, not from the MTF).
    out, strip_rows
        Where to write the result and the strip height (``strips.output_for``,
        ``strips.strip_plan``).

    Returns
    -------
    numpy.ndarray
        The Gram-Schmidt adaptive fusion, ``(ratio*h, ratio*w, B)`` float64, DN (``out`` when given).

    References
    ----------
    Aiazzi, Baronti & Selva, IEEE TGRS 45(10), 2007, doi:10.1109/TGRS.2007.901007; Vivone et al.,
    IEEE TGRS 53(5), 2015; Vivone et al., IEEE GRSM 9(1), 2021.

    Examples
    --------
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> gsa(ms, pan, ratio=4).shape
    (576, 576, 4)
    """
    pair = open_pair(ms, pan, ratio)
    result = output_for(pair, out)
    plan = strip_plan(pair, strip_rows)
    r, bands = pair.ratio, pair.ms_shape[2]
    ms_moments, pan_moments = Moments(bands), Moments(1)
    for r0, r1 in plan:
        ms_moments.add(pair.ms_rows(np.arange(r0 // r, r1 // r)).reshape(-1, bands))
        pan_moments.add(pair.pan_rows(np.arange(r0, r1)).reshape(-1, 1))
    pan_mean = float(pan_moments.mean[0])
    fit, up_moments = LeastSquares(bands + 1), Moments(bands)
    for r0, r1 in plan:
        up = exp_strip(pair, r0, r1)
        result[r0:r1] = up
        up_moments.add(up.reshape(-1, bands))
        ms0 = pair.ms_rows(np.arange(r0 // r, r1 // r)).reshape(-1, bands) - ms_moments.mean
        fit.add(np.column_stack([ms0, np.ones(ms0.shape[0])]), plusdec_strip(pair, r0, r1, pan_mean).reshape(-1))
        del up, ms0  # free this strip before the next is made
    weights = fit.solve()
    co = Moments(bands + 1)
    for _, _, up in stored_strips(result, plan):
        flat = up.reshape(-1, bands) - up_moments.mean
        co.add(np.column_stack([flat @ weights[:-1] + weights[-1], flat]))
        del up, flat
    cov = co.cov()
    gains = cov[0, 1:] / cov[0, 0]
    for r0, r1, fused in stored_strips(result, plan):
        i0 = (fused - up_moments.mean) @ weights[:-1] + weights[-1] - co.mean[0]
        detail = pair.pan_rows(np.arange(r0, r1)) - pan_mean - i0
        fused += gains * detail[:, :, None]
        result[r0:r1] = fused
        del fused, i0, detail
    return result

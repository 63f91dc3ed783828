"""GSA: Gram-Schmidt adaptive component substitution (Aiazzi, Baronti & Selva, 2007)."""

from __future__ import annotations

import numpy as np

from .inputs import baseline_inputs
from .lowpass import starlet_lowpass_decimate
from .regression import regress_bands

__all__ = ["gsa"]


def gsa(ms: np.ndarray, pan: np.ndarray, *, sensor: object = None, ratio: int) -> np.ndarray:
    """Gram-Schmidt adaptive fusion.

    The intensity ``I = sum_b w_b EXP0_b + w_0`` uses weights regressed, at MS scale, between the
    mean-removed low-resolution MS (plus a constant) and the mean-removed PAN low-passed and
    decimated (:func:`.lowpass.starlet_lowpass_decimate`). With ``I0 = I - mean(I)`` and
    ``g_b = cov(I0, EXP0_b) / var(I0)``: ``F_b = EXP0_b + g_b (P - mean(P) - I0)``, then each band
    is shifted to the mean of ``EXP_b`` (``EXP`` = 23-tap upsampled MS, ``0`` = mean removed).

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (:mod:`pansharp_iqa.baselines.inputs`), DN.
    sensor : str or Sensor
        Unused (GSA's injection gains come from regressions, not from the MTF).

    Returns
    -------
    numpy.ndarray
        The Gram-Schmidt adaptive fusion, ``(ratio*h, ratio*w, B)`` float64, DN.

    References
    ----------
    Aiazzi, Baronti & Selva, IEEE TGRS 45(10), 2007; Vivone et al., IEEE TGRS 53(5), 2015.
    """
    ms_arr, pan_arr, ratio, up = baseline_inputs(ms, pan, ratio)
    up_mean = up.mean(axis=(0, 1))
    up0 = up - up_mean
    ms0 = ms_arr - ms_arr.mean(axis=(0, 1))
    pan0 = pan_arr - pan_arr.mean()
    pan_lr0 = starlet_lowpass_decimate(pan0, ratio)
    ones_lr = np.ones(ms0.shape[:2] + (1,))
    weights = regress_bands(np.concatenate([ms0, ones_lr], axis=2), pan_lr0)
    intensity = up0 @ weights[:-1] + weights[-1]
    i0 = intensity - intensity.mean()
    flat_i0 = i0.reshape(-1)
    gains = (up0.reshape(-1, up0.shape[2]) * flat_i0[:, None]).sum(axis=0) / (flat_i0 @ flat_i0)
    fused = up0 + gains * (pan0 - i0)[:, :, None]
    return fused - fused.mean(axis=(0, 1)) + up_mean

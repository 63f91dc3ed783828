"""MTF-GLP-HPM: MTF-matched generalised Laplacian pyramid with high-pass modulation."""

from __future__ import annotations

import numpy as np

from ..mtf import mtf_filter
from ..resample import interp23tap
from ..sensors import resolve_sensor
from ..validation import SettingError, check_sensor_bands
from .inputs import baseline_inputs
from .lowpass import gaussian_lowpass, nearest_decimate

__all__ = ["mtf_glp_hpm"]


def mtf_glp_hpm(ms: np.ndarray, pan: np.ndarray, *, sensor: object, ratio: int) -> np.ndarray:
    """MTF-GLP with high-pass modulation (multiplicative injection).

    Per band ``b``: the PAN is equalised to ``EXP_b`` (``P_b = (P - mean P) * std(EXP_b) /
    std(LP(P)) + mean(EXP_b)``, ``LP`` = Gaussian low-pass with GNyq 0.3); its low-pass version
    is ``PL_b = interp23tap(decimate(MTF_b(P_b)))`` with the sensor's MS MTF of band ``b`` (from
    the registry) and nearest decimation; ``F_b = EXP_b * P_b / (PL_b + eps)``.

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (:mod:`pansharp_iqa.baselines.inputs`), DN.
    sensor : str or Sensor
        Required: it gives the per-band MS GNyq (``"none"`` for the generic 0.30).

    Returns
    -------
    numpy.ndarray
        The MTF-GLP-HPM fusion, ``(ratio*h, ratio*w, B)`` float64, DN.

    References
    ----------
    Aiazzi et al., PE&RS 72(5), 2006; Vivone et al., IEEE GRSL 11(5), 2014; Vivone et al.,
    IEEE GRSM 9(1), 2021.
    """
    if sensor is None:
        raise SettingError("mtf_glp_hpm needs the sensor (its MTF shapes the low-pass PAN); use 'none' if unknown")
    ms_arr, pan_arr, ratio, up = baseline_inputs(ms, pan, ratio)
    gnyq = check_sensor_bands(resolve_sensor(sensor), ms_arr.shape[2])
    pan_lp_std = gaussian_lowpass(pan_arr, ratio).std(ddof=1)
    gain = up.reshape(-1, up.shape[2]).std(axis=0, ddof=1) / pan_lp_std
    pan_eq = (pan_arr - pan_arr.mean())[:, :, None] * gain + up.mean(axis=(0, 1))
    low = np.asarray(mtf_filter(pan_eq, np.asarray(gnyq), ratio), dtype=np.float64)
    low = np.asarray(interp23tap(nearest_decimate(low, ratio), ratio), dtype=np.float64)
    return up * (pan_eq / (low + np.finfo(float).eps))

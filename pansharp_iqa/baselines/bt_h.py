"""BT-H: Brovey transform with haze correction (Lolli et al., 2017)."""

from __future__ import annotations

import numpy as np

from .inputs import baseline_inputs
from .lowpass import gaussian_lowpass
from .regression import regress_bands

__all__ = ["bt_h", "HAZE_FACTORS_4BAND", "HAZE_PERCENTILE"]

#: Haze fractions of the 1st percentile for 4-band (B, G, R, NIR) data, as in the 2020 toolbox.
HAZE_FACTORS_4BAND = (0.95, 0.45, 0.40, 0.05)
#: Percentile (MATLAB ``prctile``, i.e. numpy's ``"hazen"`` method) used for the 4-band haze.
HAZE_PERCENTILE = 1.0


def bt_h(ms: np.ndarray, pan: np.ndarray, *, sensor: object = None, ratio: int) -> np.ndarray:
    """Haze-corrected Brovey fusion.

    ``F_b = max(EXP_b - L_b, 0) * P' / (I + eps) + L_b`` where ``EXP`` is the 23-tap upsampled MS,
    ``L_b`` the haze (for 4 bands: 0.95, 0.45, 0.40, 0.05 times the 1st percentile of B, G, R,
    NIR; otherwise the band minimum), ``I = sum_b w_b (EXP_b - L_b)`` with ``w`` regressed on the
    Gaussian-low-passed PAN (GNyq 0.3), and ``P'`` the PAN equalised to ``I`` in mean and
    standard deviation (those of the low-passed PAN).

    Parameters
    ----------
    ms, pan, ratio
        The common baseline signature (:mod:`pansharp_iqa.baselines.inputs`), DN.
    sensor : str or Sensor
        Unused: the method does not depend on the MTF.

    Returns
    -------
    numpy.ndarray
        The haze-corrected Brovey fusion, ``(ratio*h, ratio*w, B)`` float64, DN.

    References
    ----------
    Lolli, Alparone, Garzelli & Vivone, IEEE GRSL 14(12), 2017; Vivone et al., IEEE GRSM 9(1), 2021.
    """
    ms_arr, pan_arr, ratio, up = baseline_inputs(ms, pan, ratio)
    n_bands = up.shape[2]
    if n_bands == 4:
        pct = np.percentile(up.reshape(-1, 4), HAZE_PERCENTILE, axis=0, method="hazen")
        haze = np.asarray(HAZE_FACTORS_4BAND) * pct
    else:
        haze = up.reshape(-1, n_bands).min(axis=0)
    pan_lp = gaussian_lowpass(pan_arr, ratio)
    weights = regress_bands(up, pan_lp)
    dehazed = up - haze
    intensity = dehazed @ weights
    pan_eq = (pan_arr - pan_lp.mean()) * (intensity.std(ddof=1) / pan_lp.std(ddof=1)) + intensity.mean()
    return np.maximum(dehazed, 0.0) * (pan_eq / (intensity + np.finfo(float).eps))[:, :, None] + haze

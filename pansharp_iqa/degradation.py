"""Wald-protocol degradation to reduced resolution (toolbox 2020 ``resize_images``).

References
----------
Wald, Ranchin, Mangolini, "Fusion of satellite images of different spatial resolutions: assessing
the quality of resulting images", PE&RS 63(6), 1997. Vivone et al., IEEE GRSM 2021,
doi:10.1109/MGRS.2020.3019315.
"""

from __future__ import annotations

import numpy as np

from .mtf import mtf_filter
from .resample import imresize
from .rules import Evidence, apply_rules
from .sensors import Sensor, resolve_sensor
from .validation import ShapeError, as_image, as_pan, check_ratio, check_sensor_bands, image_facts

__all__ = ["wald_degrade", "decimate"]


def decimate(image: np.ndarray, ratio: int) -> np.ndarray:
    """Nearest-sample decimation at the toolbox's offset ``floor(ratio/2)`` (0-based).

    Parameters
    ----------
    image : ndarray, shape (H, W[, B])
        The image to decimate.
    ratio : int
        Decimation factor (keeps every ``ratio``-th row and column).

    Returns
    -------
    ndarray, shape (ceil((H - ratio//2)/ratio), ...), a copy
    """
    off = int(ratio) // 2
    return np.array(image[off::ratio, off::ratio], copy=True)


def wald_degrade(
    ms: np.ndarray,
    pan: np.ndarray,
    sensor: str | Sensor,
    ratio: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Degrade an MS/PAN pair by the resolution ratio (Wald protocol, toolbox 2020).

    The MS is filtered with the sensor's per-band MTF kernels and decimated at offset
    ``floor(ratio/2)``; the PAN is shrunk with MATLAB's antialiased bicubic ``imresize`` (no MTF),
    as in the 2020 toolbox. The original MS becomes the reference (ground truth) of the
    reduced-resolution experiment.

    Parameters
    ----------
    ms : ndarray, shape (h, w, B)
        MS image at its native scale, in DN.
    pan : ndarray, shape (ratio*h, ratio*w)
        PAN image at its native scale, in DN.
    sensor : str or Sensor
        Sensor whose MTF shapes the degradation (e.g. ``"WV2"``; ``"none"`` for generic).
    ratio : int, optional
        Resolution ratio; defaults to the sensor's nominal ratio.

    Returns
    -------
    ms_lr : ndarray, shape (h/ratio, w/ratio, B), float64
    pan_lr : ndarray, shape (h, w), float64

    References
    ----------
    Wald et al., PE&RS 63(6), 1997; Vivone et al., IEEE GRSM 2021.
    """
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    ratio = check_ratio(ratio, exp=False)
    ms_arr = as_image("ms", ms)
    pan_arr = as_pan("pan", pan)
    if pan_arr.shape != (ms_arr.shape[0] * ratio, ms_arr.shape[1] * ratio):
        raise ShapeError(
            f"pan must be ratio={ratio} times the MS size: pan {pan_arr.shape}, ms {ms_arr.shape[:2]}"
        )
    if ms_arr.shape[0] % ratio or ms_arr.shape[1] % ratio:
        h, w = ms_arr.shape[0] - ms_arr.shape[0] % ratio, ms_arr.shape[1] - ms_arr.shape[1] % ratio
        raise ShapeError(
            f"ms size {ms_arr.shape[:2]} is not a multiple of ratio={ratio}; crop ms to {h}x{w} "
            f"and pan to {h * ratio}x{w * ratio}"
        )
    gnyq = check_sensor_bands(s, ms_arr.shape[2])
    apply_rules(Evidence({"reference": image_facts("ms", ms_arr), "pan": image_facts("pan", pan_arr)},
                         reads=frozenset({"reference"})))  # resampling: the PAN's gain changes nothing
    ms_lp = mtf_filter(ms_arr, gnyq, ratio)
    return decimate(ms_lp, ratio), imresize(pan_arr, 1.0 / ratio)

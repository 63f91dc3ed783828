"""Wald-protocol degradation to reduced resolution (toolbox 2020 ``resize_images``; hyperspectral
toolbox ``downsample_hs_pan``).

References
----------
Wald, Ranchin, Mangolini, "Fusion of satellite images of different spatial resolutions: assessing
the quality of resulting images", PE&RS 63(6), 1997. Vivone et al., IEEE GRSM 2021,
doi:10.1109/MGRS.2020.3019315. Ciotola et al., "Hyperspectral Pansharpening: Critical Review, Tools
and Future Perspectives", arXiv 2407.01355, 2024 (``elaborate_PRISMA_images.py``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .mtf import TOOLBOX_KERNEL, MtfKernelSettings
from .resample import imresize
from .rules import Evidence, apply_rules
from .sensors import Sensor, resolve_sensor
from .validation import (
    ScaleError,
    SettingError,
    ShapeError,
    as_image,
    as_pan,
    check_choice,
    check_ratio,
    check_sensor_bands,
    image_facts,
)

__all__ = ["wald_degrade", "decimate"]

#: How the PAN is degraded: MATLAB's antialiased bicubic ``imresize`` (toolbox 2020) or the PAN MTF
#: filter followed by the same decimation as the MS (hyperspectral toolbox).
PanDegradation = Literal["imresize", "mtf-decimate"]
#: Integer cast of the degraded images: none, or truncation to uint16 (hyperspectral toolbox's
#: ``astype(np.uint16)`` of HS_lr and PAN_lr).
LowResCast = Literal["none", "uint16-truncate"]


def decimate(image: np.ndarray, ratio: int, *, start: int | None = None) -> np.ndarray:
    """Nearest-sample decimation: rows and columns ``start, start + ratio, ...`` (0-based).

    The default ``start = floor(ratio/2)`` is the toolbox's offset and also what PyTorch's
    ``interpolate(scale_factor=1/ratio, mode="nearest-exact")`` picks (the hyperspectral toolbox's
    degradation): its source index ``floor((i + 1/2) ratio) = i ratio + floor(ratio/2)`` for every
    integer ratio (1 at ratio 2, 2 at 4, 3 at 6). The Sentinel-2 full-resolution protocol takes
    ``start=1`` after its half-pixel shift.

    Parameters
    ----------
    image : ndarray, shape (H, W[, B])
        The image to decimate.
    ratio : int
        Decimation factor (keeps every ``ratio``-th row and column).
    start : int, optional
        First kept row/column, ``0 <= start < ratio``; default ``ratio // 2``.

    Returns
    -------
    ndarray, shape (ceil((H - start)/ratio), ...), a copy

    Examples
    --------
    >>> decimate(np.arange(36.0).reshape(6, 6), 6).tolist()
    [[21.0]]
    >>> decimate(np.arange(16.0).reshape(4, 4), 2, start=1).tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    r = int(ratio)
    off = r // 2 if start is None else int(start)
    if not 0 <= off < r:
        raise SettingError(f"start must lie in 0..ratio-1 = 0..{r - 1}, got {start!r}")
    return np.array(image[off::r, off::r], copy=True)


def _uint16_truncate(x: np.ndarray, name: str) -> np.ndarray:
    """``astype(np.uint16)`` of values that fit (truncation toward zero), as float64."""
    t = np.trunc(x)
    if t.size and (t.min() < 0 or t.max() > 65535):
        raise ScaleError(f"{name}: degraded values span [{float(x.min()):g}, {float(x.max()):g}]; the uint16 "
                         "truncation is only defined on [0, 65536) (pass DN data in the uint16 range)")
    return t + 0.0  # -0.0 -> 0.0


def wald_degrade(
    ms: np.ndarray,
    pan: np.ndarray,
    sensor: str | Sensor,
    ratio: int | None = None,
    *,
    kernel: MtfKernelSettings = TOOLBOX_KERNEL,
    pan_degradation: PanDegradation = "imresize",
    start: int | None = None,
    cast: LowResCast = "none",
    protocol: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Degrade an MS/PAN pair by the resolution ratio (Wald protocol).

    Defaults (toolbox 2020): the MS is filtered with the sensor's per-band MTF kernels and
    decimated at offset ``floor(ratio/2)``; the PAN is shrunk with MATLAB's antialiased bicubic
    ``imresize`` (no MTF). The original MS becomes the reference (ground truth) of the
    reduced-resolution experiment.

    The hyperspectral toolbox's degradation (``downsample_hs_pan``, ratio 6) is
    ``kernel=HS_KERNEL, pan_degradation="mtf-decimate", cast="uint16-truncate"``: HS filtered with
    GNyq 0.3 per band and the PAN with GNyq 0.2 (raw ratio-6 kernels, float32 taps, replicate
    borders), both decimated from pixel 3 (``nearest-exact``), both truncated to uint16. That code
    filters in float32 (sums of 1681 float32 products, about 1e-2 DN of noise on 1e4 DN): computed
    here in float64, about 0.5 % of the truncated values differ from its by one DN.

    Parameters
    ----------
    ms : ndarray, shape (h, w, B)
        MS (or HS) image at its native scale, in DN.
    pan : ndarray, shape (ratio*h, ratio*w)
        PAN image at its native scale, in DN.
    sensor : str or Sensor
        Sensor whose MTF shapes the degradation (e.g. ``"WV2"``, ``"PRISMA"``; ``"none"`` for generic).
    ratio : int, optional
        Resolution ratio; defaults to the sensor's nominal ratio.
    kernel : MtfKernelSettings
        How the MTF kernels are designed (:data:`~pansharp_iqa.mtf.TOOLBOX_KERNEL`,
        :data:`~pansharp_iqa.mtf.HS_KERNEL`, ...).
    pan_degradation : {"imresize", "mtf-decimate"}
        ``imresize(PAN, 1/ratio)`` or the PAN MTF filter (the sensor's PAN GNyq) and decimation.
    start : int, optional
        Decimation offset (default ``floor(ratio/2)``, see :func:`decimate`).
    cast : {"none", "uint16-truncate"}
        Integer cast of both degraded images (truncation toward zero; values must fit uint16).
    protocol : str, optional
        Protocol name for sensor-file overrides (e.g. the 2015 generic GNyq).

    Returns
    -------
    ms_lr : ndarray, shape (h/ratio, w/ratio, B), float64
    pan_lr : ndarray, shape (h, w), float64

    References
    ----------
    Wald et al., PE&RS 63(6), 1997; Vivone et al., IEEE GRSM 2021; Ciotola et al., arXiv 2407.01355.

    Examples
    --------
    >>> from pansharp_iqa.mtf import HS_KERNEL
    >>> rng = np.random.default_rng(0)
    >>> hs, pan = rng.integers(0, 4000, (36, 36, 5)).astype(float), rng.integers(0, 4000, (216, 216)).astype(float)
    >>> lr, p = wald_degrade(hs, pan, "PRISMA", kernel=HS_KERNEL, pan_degradation="mtf-decimate",
    ...                      cast="uint16-truncate")
    >>> lr.shape, p.shape, bool((lr == np.trunc(lr)).all())
    ((6, 6, 5), (36, 36), True)
    """
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    ratio = check_ratio(ratio, exp=False)
    check_choice("pan_degradation", pan_degradation, ("imresize", "mtf-decimate"))
    check_choice("cast", cast, ("none", "uint16-truncate"))
    if not isinstance(kernel, MtfKernelSettings):
        raise SettingError(f"kernel must be an MtfKernelSettings (e.g. pansharp_iqa.mtf.HS_KERNEL), got {kernel!r}")
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
    gnyq = check_sensor_bands(s, ms_arr.shape[2], protocol=protocol)
    pan_gnyq = s.pan_gnyq_for(protocol=protocol) if pan_degradation == "mtf-decimate" else None
    apply_rules(Evidence({"reference": image_facts("ms", ms_arr), "pan": image_facts("pan", pan_arr)},
                         reads=frozenset({"reference"})))  # resampling: the PAN's gain changes nothing
    ms_lr = decimate(kernel.filter(ms_arr, gnyq, ratio), ratio, start=start)
    if pan_gnyq is None:
        pan_lr = imresize(pan_arr, 1.0 / ratio)
    else:
        pan_lr = decimate(kernel.filter(pan_arr, pan_gnyq, ratio), ratio, start=start)
    if cast == "uint16-truncate":
        ms_lr, pan_lr = _uint16_truncate(ms_lr, "ms_lr"), _uint16_truncate(pan_lr, "pan_lr")
    return ms_lr, pan_lr

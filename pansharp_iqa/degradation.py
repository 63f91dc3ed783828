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
from .protocols import Protocol, get_protocol
from .resample import imresize
from .rules import Evidence, apply_rules
from .sensors import Sensor, get_sensor, resolve_sensor
from .validation import (
    ScaleError,
    SettingError,
    ShapeError,
    as_image,
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
    kernel: MtfKernelSettings | None = None,
    pan_degradation: PanDegradation | None = None,
    start: int | None = None,
    cast: LowResCast | None = None,
    protocol: str | Protocol | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Degrade an MS/PAN pair by the resolution ratio (Wald protocol).

    Defaults (toolbox 2020): the MS is filtered with the sensor's per-band MTF kernels and
    decimated at offset ``floor(ratio/2)``; the PAN is shrunk with MATLAB's antialiased bicubic
    ``imresize`` (no MTF). The original MS becomes the reference (ground truth) of the
    reduced-resolution experiment.

    A protocol fixes the other choices (its ``mtf``, ``degradation_pan``, ``degradation_start`` and
    ``degradation_cast``; each keyword given here overrides it). The hyperspectral toolbox's degradation
    (``downsample_hs_pan``, ratio 6) is ``protocol="hyperspectral2024"``, i.e. ``kernel=HS_KERNEL,
    pan_degradation="mtf-decimate", cast="uint16-truncate"``: HS filtered with GNyq 0.3 per band and the
    PAN with GNyq 0.2 (raw ratio-6 kernels, float32 taps, replicate borders), both decimated from pixel
    3 (``nearest-exact``), both truncated to uint16. That code filters in float32 (sums of 1681 float32
    products, about 1e-2 DN of noise on 1e4 DN): computed here in float64, about 0.5 % of the truncated
    values differ from its by one DN.

    ``protocol="sentinel2-2025"``: the band group being sharpened (``ms``: the 20 m or 60 m bands) and the
    four 10 m bands in the PAN's place (``pan``: (H, W, 4)) are each MTF-filtered (per-band S2 kernels,
    clipped and renormalised except at ratio 6) and decimated from pixel ``ratio // 2``, as the Sentinel-2
    code's only degradation helper (``Utils/image_preprocessing.py`` ``downsample_protocol``, never called
    there). How the benchmark's published reduced-resolution set was built is not in that code: this
    reproduces the helper, not the dataset. The helper's sensor names miss its own MTF table, so it
    filters every band with GNyq 0.3: ``sensor="none"`` reproduces that; ``sensor="S2-20"`` / ``"S2-60"``
    use the S2 tables (the 10 m bands with ``S2-10``'s).

    Parameters
    ----------
    ms : ndarray, shape (h, w, B)
        MS (or HS) image at its native scale, in DN.
    pan : ndarray, shape (ratio*h, ratio*w), or (ratio*h, ratio*w, J)
        PAN image at its native scale, in DN; or the J high-resolution bands in its place (Sentinel-2's
        10 m bands; ``pan_degradation="mtf-decimate"``: each filtered with the ``pan_sensor``'s GNyq, or the
        generic sensor's per-band value).
    sensor : str or Sensor
        Sensor whose MTF shapes the degradation (e.g. ``"WV2"``, ``"PRISMA"``; ``"none"`` for generic).
    ratio : int, optional
        Resolution ratio; defaults to the sensor's nominal ratio.
    kernel : MtfKernelSettings, optional
        How the MTF kernels are designed (:data:`~pansharp_iqa.mtf.TOOLBOX_KERNEL`,
        :data:`~pansharp_iqa.mtf.HS_KERNEL`, ...); default: the protocol's (toolbox's).
    pan_degradation : {"imresize", "mtf-decimate"}, optional
        ``imresize(PAN, 1/ratio)`` or the PAN MTF filter (the sensor's PAN GNyq) and decimation;
        default: the protocol's (``"imresize"``).
    start : int, optional
        Decimation offset (default: the protocol's, else ``floor(ratio/2)``, see :func:`decimate`).
    cast : {"none", "uint16-truncate"}, optional
        Integer cast of both degraded images (truncation toward zero; values must fit uint16);
        default: the protocol's (``"none"``).
    protocol : str or Protocol, optional
        A protocol: its degradation settings (above) and its sensor-file overrides (e.g. the 2015
        generic GNyq).

    Returns
    -------
    ms_lr : ndarray, shape (h/ratio, w/ratio, B), float64
    pan_lr : ndarray, shape (h, w) (or (h, w, J)), float64

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
    proto = None if protocol is None else get_protocol(protocol)
    kernel = kernel if kernel is not None else proto.mtf if proto is not None else TOOLBOX_KERNEL
    pan_degradation = check_choice("pan_degradation", pan_degradation or (proto.degradation_pan if proto else
                                                                           "imresize"), ("imresize", "mtf-decimate"))
    cast = check_choice("cast", cast or (proto.degradation_cast if proto else "none"), ("none", "uint16-truncate"))
    start = start if start is not None or proto is None else proto.degradation_start
    if not isinstance(kernel, MtfKernelSettings):
        raise SettingError(f"kernel must be an MtfKernelSettings (e.g. pansharp_iqa.mtf.HS_KERNEL), got {kernel!r}")
    ms_arr = as_image("ms", ms)
    pan_arr = as_image("pan", pan, allow_2d=True)
    pan_arr = pan_arr[:, :, 0] if pan_arr.shape[2] == 1 else pan_arr
    if pan_arr.ndim == 3 and pan_degradation != "mtf-decimate":
        raise ShapeError(f"pan: {pan_arr.shape[2]} bands in the PAN's place are degraded by pan_degradation="
                         "'mtf-decimate' (each with its MTF), not by imresize")
    if pan_arr.shape[:2] != (ms_arr.shape[0] * ratio, ms_arr.shape[1] * ratio):
        raise ShapeError(
            f"pan must be ratio={ratio} times the MS size: pan {pan_arr.shape[:2]}, ms {ms_arr.shape[:2]}"
        )
    if ms_arr.shape[0] % ratio or ms_arr.shape[1] % ratio:
        h, w = ms_arr.shape[0] - ms_arr.shape[0] % ratio, ms_arr.shape[1] - ms_arr.shape[1] % ratio
        raise ShapeError(
            f"ms size {ms_arr.shape[:2]} is not a multiple of ratio={ratio}; crop ms to {h}x{w} "
            f"and pan to {h * ratio}x{w * ratio}"
        )
    name = None if proto is None else proto.name
    gnyq = check_sensor_bands(s, ms_arr.shape[2], protocol=name)
    pan_gnyq: float | tuple[float, ...] | None = None
    if pan_arr.ndim == 3:  # several bands in the PAN's place: the pan_sensor's MTF (the generic sensor: its own)
        pan_gnyq = (get_sensor(s.pan_sensor) if s.pan_sensor else s).gnyq_for(pan_arr.shape[2], protocol=name)
    elif pan_degradation == "mtf-decimate":
        pan_gnyq = s.pan_gnyq_for(protocol=name)
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

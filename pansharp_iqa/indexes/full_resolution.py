"""Full-resolution (no reference) indexes: D_lambda, D_s, QNR, Khan's D_lambda_K and HQNR.

Three variants of D_lambda/D_s are selectable:

``"toolbox2020"``
    Toolbox 2020 defaults: D_lambda compares band-pair block UIQIs of the fused image with those of
    the EXP-upsampled MS; D_s compares ``Q(F_b, PAN)`` with ``Q(EXP_b, interp23tap(imresize(PAN,
    1/ratio)))``. Sensor-independent.
``"toolbox2015"``
    As 2020 but D_s's low-pass PAN is the PAN filtered with the sensor's PAN MTF (2015 sigma form,
    not decimated): depends on the sensor.
``"qnr-paper"``
    Alparone et al. 2008: the low-resolution terms are computed on the low-resolution MS (and the
    bicubic-shrunk PAN for D_s) with (S/ratio)-pixel blocks.

References
----------
Alparone et al., "Multispectral and panchromatic data fusion assessment without reference",
PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193. Khan, Alparone, Chanussot, "Pansharpening quality
assessment using the modulation transfer functions of instruments", IEEE TGRS 47(11), 2009,
doi:10.1109/TGRS.2009.2022650. Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..mtf import filter_planes, mtf_filter, mtf_kernel
from ..resample import imresize, interp23tap, interp23tap_planes
from ..sensors import Sensor, resolve_sensor
from ..validation import (
    InputError,
    as_image,
    as_pan,
    check_dn_scale,
    check_multiple_of,
    check_pan_ratio,
    check_ratio,
)
from .reduced_pass import StripImage, reduced_sums
from .uiqi import against_last_uiqi, block_moments, pair_uiqi

__all__ = ["d_lambda", "d_s", "qnr", "d_lambda_k", "hqnr", "ConstantBlockError", "FR_VARIANTS"]

Variant = Literal["toolbox2020", "toolbox2015", "qnr-paper"]
NanPolicy = Literal["raise", "omit", "propagate"]
FR_VARIANTS = ("toolbox2020", "toolbox2015", "qnr-paper")


class ConstantBlockError(InputError):
    """A block UIQI is undefined (0/0) because a block is constant: the toolbox would give NaN."""


def _check_variant(variant: str) -> None:
    if variant not in FR_VARIANTS:
        raise InputError(f"variant must be one of {FR_VARIANTS}, got {variant!r}")


def _block_mean(values: np.ndarray, *, what: str, nan_policy: str) -> np.ndarray:
    """Mean over blocks (axis 0) with the NaN policy applied to undefined (constant) blocks."""
    bad = np.isnan(values)
    if not bad.any():
        return values.mean(axis=0)
    if nan_policy == "propagate":
        return values.mean(axis=0)
    if nan_policy == "omit":
        with np.errstate(invalid="ignore"):
            return np.nanmean(values, axis=0)
    n_blocks = int(bad.reshape(bad.shape[0], -1).any(axis=1).sum())
    raise ConstantBlockError(
        f"{what}: {n_blocks} of {values.shape[0]} blocks are constant (zero variance in both images, "
        "or zero means), where UIQI is 0/0 and the reference toolbox returns NaN. Crop the flat area "
        "(e.g. no-data borders), or pass nan_policy='omit' to average the defined blocks only "
        "(a documented deviation from the toolbox) or nan_policy='propagate' for the toolbox's NaN."
    )


def _prepare(fused, ms, ratio, block_size, ms_exp, *, pan=None):
    ratio = check_ratio(ratio, power_of_two=True)
    fus = as_image("fused", fused)
    ms_arr = as_image("ms", ms)
    pan_arr = None if pan is None else as_pan("pan", pan)
    if pan_arr is not None:
        check_pan_ratio(fus, ms_arr, pan_arr, ratio)
    else:
        if (ms_arr.shape[0] * ratio, ms_arr.shape[1] * ratio) != fus.shape[:2]:
            raise InputError(
                f"fused {fus.shape[:2]} must be exactly ratio={ratio} times the MS size {ms_arr.shape[:2]}"
            )
        if ms_arr.shape[2] != fus.shape[2]:
            raise InputError(f"ms has {ms_arr.shape[2]} bands but fused has {fus.shape[2]}")
    block_size = int(block_size)
    check_multiple_of("fused", fus, block_size, why="the toolbox's block-wise indexes require it")
    return ratio, fus, ms_arr, pan_arr, expanded_ms(ms_arr, ratio, ms_exp, fus.shape), block_size


def expanded_ms(ms_arr: np.ndarray, ratio: int, ms_exp: object, shape: tuple[int, ...]) -> StripImage:
    """The EXP-upsampled MS: ``interp23tap(ms, ratio)`` (kept as band planes), or the caller's
    precomputed one, checked."""
    if ms_exp is None:
        return StripImage(interp23tap_planes(np.moveaxis(ms_arr, 2, 0), ratio), bands_first=True)
    exp = as_image("ms_exp", ms_exp)
    if exp.shape != tuple(shape):
        raise InputError(f"ms_exp {exp.shape} must have the fused image's shape {tuple(shape)}")
    return StripImage(exp)


def _low_res_block(block_size: int, ratio: int) -> int:
    if block_size % ratio:
        raise InputError(f"block_size={block_size} must be a multiple of ratio={ratio} for 'qnr-paper'")
    return block_size // ratio


def _pan_low_pass(pan_arr, ratio, variant, sensor) -> np.ndarray:
    """The low-pass PAN that D_s compares the MS with (toolbox variants)."""
    if variant == "toolbox2015":
        if sensor is None:
            raise InputError(
                "sensor is required for D_s under 'toolbox2015' (its low-pass PAN uses the sensor's "
                "PAN MTF); pass sensor='WV2' etc."
            )
        s = resolve_sensor(sensor)
        return mtf_filter(pan_arr, s.pan_gnyq_for(protocol="toolbox2015"), ratio, sigma_form="2015")
    return interp23tap(imresize(pan_arr, 1.0 / ratio), ratio)


def _fr_block_uiqi(fus, ms_arr, pan_arr, exp, ratio, block_size, variant, sensor) -> dict[str, np.ndarray]:
    """Block UIQIs behind D_lambda (band pairs) and, when ``pan_arr`` is given, D_s (band vs PAN).

    One moment pass per image: the PAN (or its low-pass version) rides along as an extra channel.
    """
    nb = fus.shape[2]
    with_pan = pan_arr is not None
    if variant == "qnr-paper":
        low_bs = _low_res_block(block_size, ratio)
        low, low_pan = ms_arr, (imresize(pan_arr, 1.0 / ratio) if with_pan else None)
    else:
        low_bs = block_size
        low, low_pan = exp, (_pan_low_pass(pan_arr, ratio, variant, sensor) if with_pan else None)
    hm, hc = block_moments(fus, block_size, extra=pan_arr)
    lm, lc = block_moments(low, low_bs, extra=low_pan)
    out = {"pairs_high": pair_uiqi(hm, hc, nb), "pairs_low": pair_uiqi(lm, lc, nb)}
    if with_pan:
        out["pan_high"] = against_last_uiqi(hm, hc, nb)
        out["pan_low"] = against_last_uiqi(lm, lc, nb)
    return out


def _d_lambda_from(blocks: dict[str, np.ndarray], n_bands: int, p: float, nan_policy: str) -> float:
    if n_bands < 2:
        raise InputError("fused: D_lambda needs at least 2 bands (it compares band pairs)")
    q_high = _block_mean(blocks["pairs_high"], what="D_lambda (fused band pairs)", nan_policy=nan_policy)
    q_low = _block_mean(blocks["pairs_low"], what="D_lambda (MS band pairs)", nan_policy=nan_policy)
    return float((np.sum(np.abs(q_high - q_low) ** p) / (n_bands * (n_bands - 1) / 2)) ** (1.0 / p))


def _d_s_from(blocks: dict[str, np.ndarray], q: float, nan_policy: str) -> float:
    q_high = _block_mean(blocks["pan_high"], what="D_s (fused vs PAN)", nan_policy=nan_policy)
    q_low = _block_mean(blocks["pan_low"], what="D_s (MS vs low-pass PAN)", nan_policy=nan_policy)
    return float(np.mean(np.abs(q_high - q_low) ** q) ** (1.0 / q))


def _d_lambda_k(fus, exp: StripImage, sensor: Sensor, ratio, block_size, protocol_name=None, *,
                shared: dict | None = None) -> float:
    """1 - Q2n(EXP, MTF(fused)); ``shared`` may keep the fused band planes for the next sensor."""
    gains = sensor.gnyq_for(fus.shape[2], protocol=protocol_name)
    kernels = [mtf_kernel(g, ratio) for g in gains]
    shared = {} if shared is None else shared
    if "fused_planes" not in shared:
        shared["fused_planes"] = np.ascontiguousarray(np.moveaxis(fus, 2, 0), dtype=np.float64)
    fused_lp = filter_planes(shared["fused_planes"], kernels)
    sums = reduced_sums(exp, StripImage(fused_lp, bands_first=True), indexes={"Q2n"}, block_size=block_size)
    return 1.0 - float(sums.q2n_blocks.mean())


def d_lambda(
    fused: np.ndarray,
    ms: np.ndarray,
    *,
    ratio: int,
    block_size: int = 32,
    p: float = 1.0,
    ms_exp: np.ndarray | None = None,
    variant: Variant = "toolbox2020",
    nan_policy: NanPolicy = "raise",
) -> float:
    """Spectral distortion D_lambda of QNR (toolbox ``D_lambda``).

    ``(sum_{i<j} |Q(F_i, F_j) - Q(L_i, L_j)|^p / (B(B-1)/2))^(1/p)`` with block-wise UIQI on
    non-overlapping ``block_size`` blocks; ``L`` is the EXP-upsampled MS (toolbox variants) or the
    low-resolution MS on ``block_size/ratio`` blocks (``"qnr-paper"``).

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image at PAN scale (DN); H, W multiples of ``block_size``.
    ms : ndarray, shape (H/ratio, W/ratio, B)
        Original low-resolution MS (DN).
    ratio : int
        Resolution ratio (power of two).
    block_size : int, default 32
    p : float, default 1
    ms_exp : ndarray, optional
        Precomputed ``interp23tap(ms, ratio)``.
    variant : {"toolbox2020", "toolbox2015", "qnr-paper"}
    nan_policy : {"raise", "omit", "propagate"}
        Constant blocks make UIQI 0/0: raise (default), average only defined blocks, or return NaN
        as the toolbox does.

    Returns
    -------
    float
        In [0, 1]; 0 = band relations preserved (F = EXP gives 0 under the toolbox variants).

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008; Vivone et al., IEEE GRSM 2021.
    """
    _check_variant(variant)
    ratio, fus, ms_arr, _, exp, block_size = _prepare(fused, ms, ratio, block_size, ms_exp)
    blocks = _fr_block_uiqi(fus, ms_arr, None, exp, ratio, block_size, variant, None)
    return _d_lambda_from(blocks, fus.shape[2], float(p), nan_policy)


def d_s(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    ratio: int,
    block_size: int = 32,
    q: float = 1.0,
    ms_exp: np.ndarray | None = None,
    variant: Variant = "toolbox2020",
    sensor: str | Sensor | None = None,
    nan_policy: NanPolicy = "raise",
) -> float:
    """Spatial distortion D_s of QNR (toolbox ``D_s``).

    ``(mean_b |Q(F_b, PAN) - Q(L_b, P_L)|^q)^(1/q)`` with block-wise UIQI. Toolbox 2020:
    ``L = EXP``, ``P_L = interp23tap(imresize(PAN, 1/ratio), ratio)`` (sensor-independent);
    ``"toolbox2015"``: ``P_L`` = PAN filtered with the sensor's PAN MTF (needs ``sensor``);
    ``"qnr-paper"``: ``L`` = low-resolution MS, ``P_L = imresize(PAN, 1/ratio)``, blocks of
    ``block_size/ratio``.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
    ms : ndarray, shape (H/ratio, W/ratio, B)
    pan : ndarray, shape (H, W)
    ratio : int
    block_size : int, default 32
    q : float, default 1
    ms_exp : ndarray, optional
    variant : {"toolbox2020", "toolbox2015", "qnr-paper"}
    sensor : str or Sensor, optional
        Required for ``"toolbox2015"`` only.
    nan_policy : {"raise", "omit", "propagate"}

    Returns
    -------
    float
        In [0, 1]; 0 = spatial relations to the PAN preserved.

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008; Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.
    """
    _check_variant(variant)
    ratio, fus, ms_arr, pan_arr, exp, block_size = _prepare(fused, ms, ratio, block_size, ms_exp, pan=pan)
    blocks = _fr_block_uiqi(fus, ms_arr, pan_arr, exp, ratio, block_size, variant, sensor)
    return _d_s_from(blocks, float(q), nan_policy)


def qnr(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    ratio: int,
    block_size: int = 32,
    p: float = 1.0,
    q: float = 1.0,
    alpha: float = 1.0,
    beta: float = 1.0,
    ms_exp: np.ndarray | None = None,
    variant: Variant = "toolbox2020",
    sensor: str | Sensor | None = None,
    nan_policy: NanPolicy = "raise",
) -> float:
    """Quality with no reference: ``(1 - D_lambda)^alpha (1 - D_s)^beta`` (toolbox ``QNR``).

    Parameters are those of :func:`d_lambda` and :func:`d_s`.

    Returns
    -------
    float
        In [0, 1]; 1 = best.

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008.
    """
    _check_variant(variant)
    ratio, fus, ms_arr, pan_arr, exp, block_size = _prepare(fused, ms, ratio, block_size, ms_exp, pan=pan)
    blocks = _fr_block_uiqi(fus, ms_arr, pan_arr, exp, ratio, block_size, variant, sensor)
    dl = _d_lambda_from(blocks, fus.shape[2], float(p), nan_policy)
    ds = _d_s_from(blocks, float(q), nan_policy)
    return float((1.0 - dl) ** alpha * (1.0 - ds) ** beta)


def d_lambda_k(
    fused: np.ndarray,
    ms: np.ndarray,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    block_size: int = 32,
    ms_exp: np.ndarray | None = None,
) -> float:
    """Khan's spectral distortion at PAN scale, as in the 2020 toolbox (``D_lambda_K``).

    ``1 - Q2n(EXP, MTF(F))``: the fused image is filtered with the sensor's per-band MTF (not
    decimated) and compared by Q2n (with its uint16 cast: DN data only) with the EXP-upsampled MS.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image in DN; H, W multiples of ``block_size``.
    ms : ndarray, shape (H/ratio, W/ratio, B)
    sensor : str or Sensor
        Sensor whose MTF is used (its band count must match, or select a band subset).
    ratio : int, optional
        Defaults to the sensor's nominal ratio.
    block_size : int, default 32
    ms_exp : ndarray, optional

    Returns
    -------
    float
        In [0, 1]; 0 = best.

    References
    ----------
    Khan et al., IEEE TGRS 47(11), 2009; Vivone et al., IEEE GRSM 2021.
    """
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    ratio, fus, _, _, exp, block_size = _prepare(fused, ms, ratio, block_size, ms_exp)
    check_dn_scale("fused", fused, fus, what="D_lambda_K (Q2n)")
    return _d_lambda_k(fus, exp, s, ratio, block_size)


def hqnr(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    block_size: int = 32,
    q: float = 1.0,
    ms_exp: np.ndarray | None = None,
    variant: Variant = "toolbox2020",
    nan_policy: NanPolicy = "raise",
) -> float:
    """Hybrid QNR: ``(1 - D_lambda_K)(1 - D_s)`` (toolbox 2020 ``HQNR``).

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, block_size, q, ms_exp, variant, nan_policy
        See :func:`d_lambda_k` and :func:`d_s`.

    Returns
    -------
    float
        In [0, 1]; 1 = best.

    References
    ----------
    Aiazzi et al., "Full scale assessment of pansharpening methods and data products", Proc. SPIE
    9244, 2014; Vivone et al., IEEE GRSM 2021.
    """
    _check_variant(variant)
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    ratio, fus, ms_arr, pan_arr, exp, block_size = _prepare(fused, ms, ratio, block_size, ms_exp, pan=pan)
    check_dn_scale("fused", fused, fus, what="D_lambda_K (Q2n)")
    dlk = _d_lambda_k(fus, exp, s, ratio, block_size)
    blocks = _fr_block_uiqi(fus, ms_arr, pan_arr, exp, ratio, block_size, variant, s)
    ds = _d_s_from(blocks, float(q), nan_policy)
    return float((1.0 - dlk) * (1.0 - ds))

"""Protocol entry points: reduced- and full-resolution evaluation with a provenance card.

Every result is a dict of Python floats plus ``"protocol"``: a JSON-serialisable card naming the
protocol, the library version and every setting that affects the numbers.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._version import __version__
from .indexes.ergas import ergas_value
from .indexes.full_resolution import (
    NanPolicy,
    _d_lambda_from,
    _d_lambda_k,
    _d_s_from,
    _fr_block_uiqi,
    expanded_ms,
)
from .indexes.reduced_pass import StripImage, reduced_sums
from .indexes.sam import sam_degrees
from .indexes.scc import check_scc_variant, scc_value
from .indexes.uiqi import q_avg
from .protocols import Protocol, get_protocol
from .sensors import Sensor, resolve_sensor
from .validation import (
    InputError,
    as_image,
    as_pan,
    check_bits,
    check_dn_range,
    check_dn_scale,
    check_multiple_of,
    check_pan_ratio,
    check_ratio,
    check_same_shape,
    finite_range,
    image_array,
)

__all__ = ["evaluate_reduced", "evaluate_full", "sensor_sensitivity", "protocol_card"]

_Q2N_CAST = "uint16 (MATLAB: round half away from zero, saturate to [0, 65535]) before Q2n"


def protocol_card(protocol: Protocol, **settings: Any) -> dict[str, Any]:
    """Provenance card: protocol, library version and the settings behind a result.

    Parameters
    ----------
    protocol : Protocol
    **settings
        Run settings (ratio, bits, scale, sensor, ...), stored as given (JSON-serialisable).

    Returns
    -------
    dict
    """
    card: dict[str, Any] = {
        "name": protocol.name,
        "library": "pansharp_iqa",
        "version": __version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "description": protocol.description,
    }
    card.update(protocol.settings())
    card.update(settings)
    return card


def reduced_card(
    proto: Protocol, *, ratio: int, bits: int, scale: float, threshold: bool,
    image_shape: list[int], evaluated_shape: list[int], **extra: Any,
) -> dict[str, Any]:
    """Card of a reduced-resolution result (shared by the in-memory and tile-wise paths)."""
    return protocol_card(
        proto,
        resolution="reduced",
        ratio=ratio,
        bits=bits,
        scale=scale,
        threshold=bool(threshold),
        shift=proto.block_size,
        q2n_cast=_Q2N_CAST,
        q_window="sliding, stride 1, valid windows",
        sam_units="degrees",
        image_shape=list(image_shape),
        evaluated_shape=list(evaluated_shape),
        **extra,
    )


def full_card(proto: Protocol, sensor: Sensor, common: dict[str, Any], *, nan_policy: str,
              **extra: Any) -> dict[str, Any]:
    """Card of a toolbox-family full-resolution result (in-memory and tile-wise paths)."""
    ratio, bs, variant = common["ratio"], proto.block_size, proto.fr_variant
    notes: dict[str, Any] = {}
    if "D_lambda_K" in proto.full_indexes:
        notes["d_lambda_k"] = "1 - Q2n(EXP, MTF(fused)) at PAN scale, " + _Q2N_CAST
    if variant == "toolbox2015":
        notes["pan_gnyq"] = sensor.pan_gnyq_for(protocol=proto.name)
        notes["d_s_low_pass_pan"] = "PAN filtered with the sensor's PAN MTF (2015 sigma form)"
    elif variant == "qnr-paper":
        notes["d_s_low_pass_pan"] = f"imresize(PAN, 1/{ratio}) vs MS on {bs // ratio}-pixel blocks"
    else:
        notes["d_s_low_pass_pan"] = f"interp23tap(imresize(PAN, 1/{ratio}), {ratio})"
    return protocol_card(proto, **common, p=1, q=1, alpha=1, beta=1, nan_policy=nan_policy, shift=bs,
                         **notes, **extra)


def fr_common_settings(sensor: Sensor, ms_gnyq: list[float], *, ratio: int, bits: int, scale: float,
                       threshold: bool, image_shape: list[int]) -> dict[str, Any]:
    """The card entries every full-resolution protocol records."""
    return dict(
        resolution="full",
        sensor=sensor.to_dict(),
        ms_gnyq=list(ms_gnyq),
        ratio=ratio,
        bits=bits,
        scale=scale,
        threshold=bool(threshold),
        image_shape=list(image_shape),
    )


def _scaled(name: str, value: object, scale: float, *, pan: bool = False) -> np.ndarray:
    arr = as_pan(name, value) if pan else as_image(name, value)
    if scale != 1.0:
        arr *= scale
    elif not np.issubdtype(np.asarray(value).dtype, np.integer):
        check_dn_scale(name, value, arr, what="this protocol (Q2n and D_lambda_K)")
    return arr


def _check_scale(scale: object) -> float:
    if isinstance(scale, (bool, np.bool_)) or scale is None or not float(scale) > 0:
        raise InputError(f"scale must be a positive number (multiplier to DN), got {scale!r}")
    return float(scale)


def _reduced_settings(protocol, ratio, bits, scale) -> tuple[Protocol, int, int, float]:
    """Validated (protocol, ratio, bits, scale) of a reduced-resolution evaluation."""
    proto = get_protocol(protocol)
    if not proto.reduced_indexes:
        raise InputError(
            f"protocol {proto.name!r} has no reduced-resolution indexes; use 'toolbox2020' for "
            "reduced resolution, or evaluate_full for this protocol"
        )
    return proto, check_ratio(ratio, power_of_two=False), check_bits(bits), _check_scale(scale)


def cut_bounds(proto: Protocol, shape: tuple[int, ...]) -> tuple[int, int]:
    """(leading, trailing) rows/columns the protocol cuts; refuses images left with no whole block."""
    lead, trail = proto.dim_cut or (0, 0)
    h, w = shape[:2]
    bs = proto.block_size
    if h - lead - trail < bs or w - lead - trail < bs:
        raise InputError(
            f"reference: {h}x{w} pixels leave less than one {bs}x{bs} block after the border cut "
            f"({lead} leading, {trail} trailing); use images of at least {bs + lead + trail} pixels a side"
        )
    return lead, trail


def _check_reference_range(name: str, arr: np.ndarray, bits: int) -> None:
    _check_range_max(name, float(arr.max()), bits)


def _check_range_max(name: str, top: float, bits: int) -> None:
    if top > 2**bits - 1:
        needed = int(np.ceil(np.log2(top + 1)))
        raise InputError(
            f"{name}: maximum {top:g} exceeds the {bits}-bit range [0, {2**bits - 1}]; give the right "
            f"bits (at least {needed}) or the right scale, so thresholds and casts match the data"
        )


def evaluate_reduced(
    fused: np.ndarray,
    reference: np.ndarray,
    *,
    ratio: int,
    bits: int,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
) -> dict[str, Any]:
    """Reduced-resolution (Wald protocol) indexes of a fused image against its reference.

    As the toolbox demos do: both images lose 20 leading and 21 trailing rows/columns
    (``I(21:end-21, ...)`` in MATLAB), optionally the fused image is clipped to [0, 2^bits]
    (``threshold``, off by default as in the demos), then Q2n (32x32 blocks, uint16 cast), Q_avg
    (32x32 sliding window), SAM (degrees), ERGAS and SCC are computed.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image at reference scale, in DN (or multiplied to DN by ``scale``). File paths
        (GeoTIFF, .npy), rasterio datasets and lazy array-likes are evaluated tile by tile in
        bounded memory with the same numbers (:mod:`pansharp_iqa.tiled`).
    reference : ndarray, shape (H, W, B)
        Ground truth (the original MS of the Wald protocol), in DN.
    ratio : int
        Resolution ratio (used by ERGAS); required.
    bits : int
        Radiometric resolution (for the threshold and the range check); required.
    protocol : str or Protocol, default "toolbox2020"
        See :func:`pansharp_iqa.list_protocols`.
    scale : float, default 1.0
        Multiplier applied to both images first (e.g. ``2**bits - 1`` for [0, 1] data). With the
        default, float data within [0, 1] are refused (Q2n casts to integer DN).
    threshold : bool, default False
        Clip the fused image to [0, 2^bits] first (toolbox ``thvalues``).

    Returns
    -------
    dict
        ``"Q2n"``, ``"Q"``, ``"SAM"`` (degrees), ``"ERGAS"``, ``"SCC"`` as floats and
        ``"protocol"`` (the card).

    References
    ----------
    Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315; Wald et al., PE&RS 63(6), 1997.
    """
    from .tiled.sources import is_lazy_input

    if is_lazy_input(fused) or is_lazy_input(reference):
        # file paths / rasterio datasets / lazy array-likes: same numbers, tile by tile
        from .tiled.api import evaluate_reduced_tiled

        return evaluate_reduced_tiled(fused, reference, ratio=ratio, bits=bits, protocol=protocol,
                                      scale=scale, threshold=threshold)
    proto, ratio, bits, scale = _reduced_settings(protocol, ratio, bits, scale)
    fus = image_array("fused", fused)
    ref = image_array("reference", reference)
    check_same_shape("reference", ref, "fused", fus)
    for name, arr in (("fused", fus), ("reference", ref)):
        lo, hi = finite_range(name, arr)
        if scale == 1.0:
            check_dn_range(name, arr.dtype, max(abs(lo), abs(hi)), what="this protocol (Q2n and D_lambda_K)")
        if name == "reference":
            _check_range_max(name, hi * scale, bits)
    lead, trail = cut_bounds(proto, ref.shape)
    h, w = ref.shape[:2]
    ref_c = ref[lead : h - trail, lead : w - trail]  # views: strips are converted in the pass
    fus_c = fus[lead : h - trail, lead : w - trail]
    sums = reduced_sums(
        StripImage(ref_c, scale),
        StripImage(fus_c, scale, clip_max=float(2**bits) if threshold else None),
        indexes=proto.reduced_indexes,
        block_size=proto.block_size,
        scc_variant=check_scc_variant(proto.scc_variant, ref_c.shape),
    )
    values = {
        "Q2n": lambda: float(sums.q2n_blocks.mean()),
        "Q": lambda: q_avg(sums),
        "SAM": lambda: sam_degrees(sums),
        "ERGAS": lambda: ergas_value(sums, float(ratio)),
        "SCC": lambda: scc_value(sums),
    }
    card = reduced_card(
        proto, ratio=ratio, bits=bits, scale=scale, threshold=threshold,
        image_shape=list(ref.shape), evaluated_shape=list(ref_c.shape),
    )
    return {**{k: values[k]() for k in proto.reduced_indexes}, "protocol": card}


def _resolve_fr_settings(sensor, ratio, bits) -> tuple[Sensor, int, int]:
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    if ratio is None:
        raise InputError(f"ratio is required: sensor {s.name!r} has no nominal ratio")
    bits = bits if bits is not None else s.bits
    if bits is None:
        raise InputError(f"bits is required: sensor {s.name!r} has no nominal bit depth")
    return s, check_ratio(ratio, power_of_two=True), check_bits(bits)


def evaluate_full(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    bits: int | None = None,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
    nan_policy: NanPolicy = "raise",
    ms_exp: np.ndarray | None = None,
) -> dict[str, Any]:
    """Full-resolution (no reference) indexes of a fused image.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image at PAN scale, DN; H and W multiples of 32 (toolbox requirement). File paths,
        rasterio datasets and lazy array-likes (for all three images) are evaluated tile by tile.
    ms : ndarray, shape (H/ratio, W/ratio, B)
        Original low-resolution MS, DN.
    pan : ndarray, shape (H, W)
        PAN, DN.
    sensor : str or Sensor
        Required; its MTF drives D_lambda_K (and D_s under toolbox2015). Band count must match
        (select a subset with ``"WV3[4band]"`` or ``Sensor.select_bands``).
    ratio, bits : int, optional
        Default to the sensor's nominal values (required for the generic sensor).
    protocol : str or Protocol, default "toolbox2020"
    scale : float, default 1.0
        Multiplier to DN applied to all three images.
    threshold : bool, default False
        Clip the fused image to [0, 2^bits] first.
    nan_policy : {"raise", "omit", "propagate"}
        Treatment of constant blocks (UIQI 0/0); see :func:`pansharp_iqa.d_lambda`.
    ms_exp : ndarray, optional
        Precomputed ``interp23tap(ms, ratio)`` in DN (after scaling).

    Returns
    -------
    dict
        The protocol's FR indexes as floats (``toolbox2020``: ``D_lambda``, ``D_s``, ``QNR``,
        ``D_lambda_K``, ``HQNR``) and ``"protocol"``: the card, with the sensor and the exact GNyq
        values used.

    References
    ----------
    Vivone et al., IEEE GRSM 2021; Alparone et al., PE&RS 74(2), 2008; Khan et al., IEEE TGRS 2009.
    """
    from .tiled.sources import is_lazy_input

    if any(is_lazy_input(x) for x in (fused, ms, pan)):
        if ms_exp is not None:
            raise InputError("ms_exp cannot be combined with file/lazy inputs (tile-wise evaluation)")
        from .tiled.api import evaluate_full_tiled

        return evaluate_full_tiled(fused, ms, pan, sensor=sensor, ratio=ratio, bits=bits, protocol=protocol,
                                   scale=scale, threshold=threshold, nan_policy=nan_policy)
    return _evaluate_full_arrays(fused, ms, pan, sensor=sensor, ratio=ratio, bits=bits, protocol=protocol,
                                 scale=scale, threshold=threshold, nan_policy=nan_policy, ms_exp=ms_exp)


def _evaluate_full_arrays(
    fused, ms, pan, *, sensor, ratio, bits, protocol, scale, threshold, nan_policy, ms_exp,
    shared: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`evaluate_full` on in-memory arrays; ``shared`` carries sensor-independent work
    (block UIQIs of D_lambda/D_s outside toolbox2015, the fused band planes) between the sensors of
    :func:`sensor_sensitivity`."""
    proto = get_protocol(protocol)
    s, ratio, bits = _resolve_fr_settings(sensor, ratio, bits)
    scale = _check_scale(scale)
    if scale == 1.0 and not threshold and proto.fr_variant != "reprojected2022":
        fus = image_array("fused", fused)  # read-only below: no whole-image copy
        lo, hi = finite_range("fused", fus)
        check_dn_range("fused", fus.dtype, max(abs(lo), abs(hi)), what="this protocol (Q2n and D_lambda_K)")
    else:
        fus = _scaled("fused", fused, scale)
    ms_arr = _scaled("ms", ms, scale)
    pan_arr = _scaled("pan", pan, scale, pan=True)
    check_pan_ratio(fus, ms_arr, pan_arr, ratio)
    ms_gnyq = list(s.gnyq_for(fus.shape[2], protocol=proto.name))
    _check_reference_range("ms", ms_arr, bits)
    if threshold:
        np.clip(fus, 0.0, float(2**bits), out=fus)
    common = fr_common_settings(s, ms_gnyq, ratio=ratio, bits=bits, scale=scale, threshold=threshold,
                                image_shape=list(fus.shape))
    if proto.fr_variant == "reprojected2022":
        from .reprojected.protocol import evaluate_reprojected

        result = evaluate_reprojected(fus, ms_arr, pan_arr, sensor=s, ratio=ratio)
        details = result.pop("details", {})
        details.pop("timings_s", None)  # run-dependent; not part of a reproducible card
        card = protocol_card(proto, **common, reprojection=details)
        return {**{k: float(result[k]) for k in proto.full_indexes}, "protocol": card}

    bs = proto.block_size
    check_multiple_of("fused", fus, bs, why="the toolbox's block-wise QNR indexes require it")
    shared = {} if shared is None else shared
    if "exp" not in shared:
        shared["exp"] = expanded_ms(ms_arr, ratio, ms_exp, fus.shape)
    exp = shared["exp"]
    variant = proto.fr_variant
    values: dict[str, float] = {}
    sensor_free = variant != "toolbox2015"  # only the 2015 D_s low-pass PAN uses the sensor's MTF
    blocks = shared.get("blocks") if sensor_free else None
    if blocks is None:
        blocks = _fr_block_uiqi(fus, ms_arr, pan_arr, exp, ratio, bs, variant, s)
        if sensor_free:
            shared["blocks"] = blocks
    values["D_lambda"] = _d_lambda_from(blocks, fus.shape[2], 1.0, nan_policy)
    values["D_s"] = _d_s_from(blocks, 1.0, nan_policy)
    values["QNR"] = (1.0 - values["D_lambda"]) * (1.0 - values["D_s"])
    if "D_lambda_K" in proto.full_indexes:
        values["D_lambda_K"] = _d_lambda_k(fus, exp, s, ratio, bs, proto.name, shared=shared)
        values["HQNR"] = (1.0 - values["D_lambda_K"]) * (1.0 - values["D_s"])
    card = full_card(proto, s, common, nan_policy=nan_policy)
    return {**{k: float(values[k]) for k in proto.full_indexes}, "protocol": card}


def sensor_sensitivity(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensors: Sequence[str | Sensor],
    protocol: str | Protocol = "toolbox2020",
    ratio: int | None = None,
    bits: int | None = None,
    scale: float = 1.0,
    nan_policy: NanPolicy = "raise",
) -> dict[str, dict[str, Any]]:
    """Full-resolution indexes of one fused image under each sensor's MTF.

    Shows how much a wrong sensor choice moves the numbers: under ``toolbox2020`` D_lambda and D_s
    do not depend on the sensor while D_lambda_K and HQNR do; under ``toolbox2015`` D_s does.

    Parameters
    ----------
    fused, ms, pan : ndarray
        As for :func:`evaluate_full`.
    sensors : sequence of str or Sensor
        Sensors to try (band counts must fit the image, e.g. ``"WV3[4band]"`` for 4 bands; the
        generic ``"none"`` fits any).
    protocol : str or Protocol
    ratio, bits : int, optional
        Applied to every sensor; when omitted, all sensors must share their nominal values.
    scale : float
    nan_policy : {"raise", "omit", "propagate"}

    Returns
    -------
    dict
        ``{sensor name: evaluate_full result}`` in the order given.
    """
    resolved = [resolve_sensor(s) for s in sensors]
    if not resolved:
        raise InputError("sensors: give at least one sensor name")
    for attr, given in (("ratio", ratio), ("bits", bits)):
        if given is None:
            nominal = {getattr(s, attr) for s in resolved} - {None}
            if len(nominal) != 1:
                raise InputError(
                    f"{attr} is required: the sensors' nominal values differ or are unknown ({sorted(nominal)})"
                )
    ratio = ratio if ratio is not None else next(s.ratio for s in resolved if s.ratio is not None)
    bits = bits if bits is not None else next(s.bits for s in resolved if s.bits is not None)
    proto = get_protocol(protocol)
    from .tiled.sources import is_lazy_input

    if any(is_lazy_input(x) for x in (fused, ms, pan)):
        return {
            s.name: evaluate_full(fused, ms, pan, sensor=s, ratio=ratio, bits=bits, protocol=proto,
                                  scale=scale, nan_policy=nan_policy)
            for s in resolved
        }
    shared: dict[str, Any] = {}  # sensor-independent work (EXP, block statistics), computed once
    return {
        s.name: _evaluate_full_arrays(
            fused, ms, pan, sensor=s, ratio=ratio, bits=bits, protocol=proto, scale=scale,
            threshold=False, nan_policy=nan_policy, ms_exp=None, shared=shared,
        )
        for s in resolved
    }

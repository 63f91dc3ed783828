"""Evaluation settings as validated, frozen objects, and the provenance card built from them.

:func:`reduced_settings` and :func:`full_settings` turn the user's arguments into a
:class:`ReducedSettings` / :class:`FullSettings` through the rules of :mod:`pansharp_iqa.validation`
(once, before any work); the in-memory, tile-wise and command-line paths all take these objects,
check their data against them with :meth:`ReducedSettings.check_values` /
:meth:`FullSettings.check_values`, and record them with ``card()``. This module sits below
:mod:`pansharp_iqa.evaluate` and :mod:`pansharp_iqa.tiled`, so both build results the same way.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._version import __version__
from .indexes.catalog import get_index, resolve_indexes
from .protocols import Protocol, get_protocol
from .sensors import Sensor, resolve_sensor
from .validation import (
    OVERRIDE_CARD,
    SCALE_MISMATCH_POLICIES,
    ImageFacts,
    SettingError,
    ShapeError,
    check_bits,
    check_choice,
    check_ratio,
    check_scale,
    check_sensor_bands,
    check_values,
    layout_hint,
)

__all__ = [
    "EvaluationSettings", "ReducedSettings", "FullSettings", "reduced_settings", "full_settings", "protocol_card",
    "NAN_POLICIES", "Q2N_CAST", "requested_indexes", "settings_of", "Settings",
]

#: Treatments of constant blocks (UIQI 0/0) in D_lambda/D_s.
NAN_POLICIES = ("raise", "omit", "propagate")
#: How the toolbox's Q2n turns DN into integers (recorded in cards).
Q2N_CAST = "uint16 (MATLAB: round half away from zero, saturate to [0, 65535]) before Q2n"
_DN_WHAT = "this protocol (Q2n and D_lambda_K)"
#: How to score a fused image whose scale factor is real, named in the refusals.
_OVERRIDE = ("pass scale_mismatch='warn' (pansharp-eval --scale-mismatch warn) to score it with a warning "
             "recorded in the card")


def protocol_card(protocol: Protocol, **settings: Any) -> dict[str, Any]:
    """Provenance card: protocol, library version and the settings behind a result.

    Parameters
    ----------
    protocol : Protocol
        The protocol the result was computed under.
    **settings
        Run settings (ratio, bits, scale, sensor, ...), stored as given (JSON-serialisable).

    Returns
    -------
    dict

    Examples
    --------
    >>> card = protocol_card(get_protocol("toolbox2020"), ratio=4)
    >>> card["name"], card["ratio"], card["block_size"]
    ('toolbox2020', 4, 32)
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class EvaluationSettings:
    """What every evaluation is run with (see :class:`ReducedSettings`, :class:`FullSettings`).

    Attributes
    ----------
    protocol : Protocol
    ratio : int
        PAN/MS resolution ratio.
    bits : int or None
        Radiometric resolution (threshold and range rule); None at full resolution without
        ``threshold`` where the sensor has no nominal bit depth.
    scale : float
        Multiplier to DN applied to every input.
    threshold : bool
        Clip the fused image to [0, 2^bits] first.
    requested : tuple of str or None
        The indexes asked for with ``indexes=`` (validated against the protocol), or None for the
        protocol's table.
    scale_mismatch : {"raise", "warn"}
        A fused image on another scale than its reference (e.g. a bit-depth factor of 2): refused, or
        scored with a :class:`~pansharp_iqa.validation.ScaleMismatchWarning` (recorded in the card).
    """

    protocol: Protocol
    ratio: int
    bits: int | None
    scale: float = 1.0
    threshold: bool = False
    scale_mismatch: str = "raise"
    requested: tuple[str, ...] | None = None

    def override_card(self) -> dict[str, Any]:
        """The card entry of the scale-mismatch override (none when scale mismatches are refused)."""
        if self.scale_mismatch == "raise":
            return {}
        return {"scale_mismatch": OVERRIDE_CARD[self.scale_mismatch]}

    @property
    def clip_max(self) -> float | None:
        """Upper clip of the fused image (``2**bits``) when ``threshold`` is set."""
        return float(2**self.bits) if self.threshold and self.bits is not None else None

    def index_card(self) -> dict[str, Any]:
        """Card entries for a table that is not the protocol's own (``indexes=``): the indexes and
        the definitions of the extras among them; empty for the protocol's table."""
        if self.requested is None:
            return {}
        table = self.protocol.indexes(self.resolution)
        extras = {n: get_index(n).definition for n in self.requested if n not in table}
        return {"indexes": list(self.requested), **({"extra_indexes": extras} if extras else {})}

    @property
    def resolution(self) -> str:
        """``"reduced"`` or ``"full"``."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReducedSettings(EvaluationSettings):
    """Validated settings of a reduced-resolution (Wald protocol) evaluation (build them with
    :func:`reduced_settings`); the ratio is an integer >= 2 and only scales ERGAS."""

    @property
    def resolution(self) -> str:
        """``"reduced"``."""
        return "reduced"

    @property
    def indexes(self) -> tuple[str, ...]:
        """Keys of the result: the requested indexes, else the protocol's reduced-resolution table."""
        return self.requested if self.requested is not None else self.protocol.reduced_indexes

    def cut_bounds(self, shape: tuple[int, ...]) -> tuple[int, int]:
        """``(leading, trailing)`` rows/columns the protocol cuts from an image of ``shape``."""
        lead, trail = self.protocol.dim_cut or (0, 0)
        h, w = shape[:2]
        bs = self.protocol.block_size
        if h - lead - trail < bs or w - lead - trail < bs:
            raise ShapeError(
                f"reference: {h}x{w} pixels leave less than one {bs}x{bs} block after the border cut "
                f"({lead} leading, {trail} trailing){layout_hint(shape)}; use images of at least {bs + lead + trail} "
                "pixels a side"
            )
        return lead, trail

    def check_values(self, fused: ImageFacts, reference: ImageFacts) -> None:
        """The value rules (:func:`pansharp_iqa.validation.check_values`) on the two images.

        The reference (an original product) must lie within ``bits``; Q2n casts both to uint16.
        """
        check_values(test=fused, reference=reference, bits=self.bits, dn_what=_DN_WHAT, scale=self.scale,
                     scale_mismatch=self.scale_mismatch, override=_OVERRIDE)

    def card(self, *, image_shape: list[int], evaluated_shape: list[int], **extra: Any) -> dict[str, Any]:
        """Provenance card of a result computed with these settings."""
        return protocol_card(
            self.protocol,
            resolution="reduced",
            ratio=self.ratio,
            bits=self.bits,
            scale=self.scale,
            threshold=bool(self.threshold),
            shift=self.protocol.block_size,
            q2n_cast=Q2N_CAST,
            q_window="sliding, stride 1, valid windows",
            sam_units="degrees",
            image_shape=list(image_shape),
            evaluated_shape=list(evaluated_shape),
            **self.override_card(),
            **self.index_card(),
            **extra,
        )


def reduced_settings(*, protocol: str | Protocol = "toolbox2020", ratio: object, bits: object,
                     scale: object = 1.0, threshold: bool = False,
                     indexes: Sequence[str] | str | None = None,
                     scale_mismatch: str = "raise") -> ReducedSettings:
    """Validate the settings of a reduced-resolution evaluation.

    Parameters
    ----------
    protocol : str or Protocol
        A protocol with reduced-resolution indexes.
    ratio : int
        Required; any integer >= 2 (it only scales ERGAS).
    bits : int
        Required, 1..16.
    scale : float
        Positive multiplier to DN.
    threshold : bool
        Clip the fused image to [0, 2^bits] first.
    indexes : sequence of str or str, optional
        Which indexes to compute: names from the protocol's table and the catalogue's extras
        (``"PSNR"``, ``"CC"``); ``"default"`` stands for the protocol's table. None: the table.
    scale_mismatch : {"raise", "warn"}
        A fused image on another scale than its reference: refused, or scored with a
        :class:`~pansharp_iqa.validation.ScaleMismatchWarning` recorded in the card.

    Returns
    -------
    ReducedSettings

    Raises
    ------
    SettingError

    Examples
    --------
    >>> reduced_settings(ratio=4, bits=11).protocol.name
    'toolbox2020'
    """
    proto = get_protocol(protocol)
    if not proto.reduced_indexes:
        raise SettingError(
            f"protocol {proto.name!r} has no reduced-resolution indexes; use 'toolbox2020' for "
            "reduced resolution, or evaluate_full for this protocol"
        )
    return ReducedSettings(protocol=proto, ratio=check_ratio(ratio, exp=False), bits=check_bits(bits),
                           scale=check_scale(scale), threshold=bool(threshold),
                           scale_mismatch=check_choice("scale_mismatch", scale_mismatch, SCALE_MISMATCH_POLICIES),
                           requested=requested_indexes(indexes, proto, "reduced"))


def requested_indexes(indexes: Sequence[str] | str | None, proto: Protocol, resolution: str) -> tuple[str, ...] | None:
    """``indexes=`` validated against what a protocol computes at a resolution.

    Parameters
    ----------
    indexes : sequence of str, str or None
        Index names (comma-separated in a string); ``"default"`` stands for the protocol's table.
    proto : Protocol
    resolution : {"reduced", "full"}

    Returns
    -------
    tuple of str or None
        The names in the order given; None when they are the protocol's own table (or not given).

    Raises
    ------
    SettingError
        An unknown index, one of the other resolution, or one this protocol cannot compute.

    Examples
    --------
    >>> from pansharp_iqa.protocols import get_protocol
    >>> requested_indexes("default,PSNR", get_protocol("toolbox2020"), "reduced")
    ('Q2n', 'Q', 'SAM', 'ERGAS', 'SCC', 'PSNR')
    >>> requested_indexes(["default"], get_protocol("toolbox2020"), "reduced") is None
    True
    """
    if indexes is None:
        return None
    engine = proto.full_engine if resolution == "full" else "toolbox"
    names = resolve_indexes(indexes, default=proto.indexes(resolution), resolution=resolution, engine=engine,
                            protocol=proto.name)
    return None if names == tuple(proto.indexes(resolution)) else names


@dataclasses.dataclass(frozen=True, kw_only=True)
class FullSettings(EvaluationSettings):
    """Validated settings of a full-resolution (no reference) evaluation (build them with
    :func:`full_settings`).

    Attributes
    ----------
    sensor : Sensor
        Its MTF drives D_lambda_K (and D_s under ``d_s_low_pass="pan-mtf"``).
    nan_policy : {"raise", "omit", "propagate"}
        Treatment of constant blocks.
    """

    sensor: Sensor
    nan_policy: str = "raise"

    @property
    def resolution(self) -> str:
        """``"full"``."""
        return "full"

    @property
    def indexes(self) -> tuple[str, ...]:
        """Keys of the result: the requested indexes, else the protocol's full-resolution table."""
        return self.requested if self.requested is not None else self.protocol.full_indexes

    def ms_gnyq(self, n_bands: int) -> tuple[float, ...]:
        """Per-band MS GNyq for ``n_bands`` bands under this protocol (sensor overrides applied)."""
        return check_sensor_bands(self.sensor, n_bands, protocol=self.protocol.name)

    def pan_gnyq(self) -> float:
        """The sensor's PAN GNyq under this protocol."""
        return float(self.sensor.pan_gnyq_for(protocol=self.protocol.name))

    def check_values(self, fused: ImageFacts | None, ms: ImageFacts, pan: ImageFacts) -> None:
        """The value rules on the three images (fused vs MS per band, PAN vs MS, unit-scale data, offset data).

        No full-resolution index depends on ``bits`` unless ``threshold`` clips the fused image at
        ``2**bits``: only then must the MS lie within it (a resampled PAN, e.g. the library's own
        Wald degradation, overshoots it legitimately). ``fused`` may be None (the inputs alone).
        """
        check_values(test=fused, reference=ms, pan=pan, bits=self.bits, dn_what=_DN_WHAT, scale=self.scale,
                     bits_range=self.threshold, scale_mismatch=self.scale_mismatch, override=_OVERRIDE)

    def common_card(self, ms_gnyq: tuple[float, ...], image_shape: list[int]) -> dict[str, Any]:
        """The card entries every full-resolution protocol records."""
        return dict(
            resolution="full",
            sensor=self.sensor.to_dict(),
            ms_gnyq=list(ms_gnyq),
            ratio=self.ratio,
            bits=self.bits,
            scale=self.scale,
            threshold=bool(self.threshold),
            image_shape=list(image_shape),
            **self.override_card(),
        )

    def card(self, ms_gnyq: tuple[float, ...], image_shape: list[int], **extra: Any) -> dict[str, Any]:
        """Provenance card of a toolbox-family full-resolution result."""
        proto, ratio, bs = self.protocol, self.ratio, self.protocol.block_size
        notes: dict[str, Any] = {}
        if "D_lambda_K" in self.indexes:
            notes["d_lambda_k"] = "1 - Q2n(EXP, MTF(fused)) at PAN scale, " + Q2N_CAST
        if proto.d_s_uses_sensor:
            notes["pan_gnyq"] = self.pan_gnyq()
            notes["d_s_low_pass_pan"] = "PAN filtered with the sensor's PAN MTF (2015 sigma form)"
        elif proto.d_s_low_pass == "imresize":
            notes["d_s_low_pass_pan"] = f"imresize(PAN, 1/{ratio}) vs MS on {bs // ratio}-pixel blocks"
        else:
            notes["d_s_low_pass_pan"] = f"interp23tap(imresize(PAN, 1/{ratio}), {ratio})"
        return protocol_card(proto, **self.common_card(ms_gnyq, image_shape), p=1, q=1, alpha=1, beta=1,
                             nan_policy=self.nan_policy, shift=bs, **notes, **self.index_card(), **extra)


def full_settings(*, sensor: str | Sensor, ratio: object = None, bits: object = None,
                  protocol: str | Protocol = "toolbox2020", scale: object = 1.0, threshold: bool = False,
                  nan_policy: str = "raise", indexes: Sequence[str] | str | None = None,
                  scale_mismatch: str = "raise") -> FullSettings:
    """Validate the settings of a full-resolution evaluation.

    Parameters
    ----------
    sensor : str or Sensor
        Required (registry name, or ``"none"`` for the generic MTF).
    ratio, bits : int, optional
        Default to the sensor's nominal values. The generic sensor needs ``ratio``; ``bits`` only
        with ``threshold`` (no full-resolution index depends on it otherwise: None is recorded).
    protocol : str or Protocol
        A protocol (:func:`~pansharp_iqa.list_protocols`).
    scale : float
        Positive multiplier to DN.
    threshold : bool
        Clip the fused image to [0, 2^bits] first (needs ``bits``).
    nan_policy : {"raise", "omit", "propagate"}
        Treatment of constant blocks.
    indexes : sequence of str or str, optional
        Which of the protocol's full-resolution indexes to compute (``"default"``: its table).
    scale_mismatch : {"raise", "warn"}
        A fused image on another scale than its reference: refused, or scored with a
        :class:`~pansharp_iqa.validation.ScaleMismatchWarning` recorded in the card.

    Returns
    -------
    FullSettings

    Raises
    ------
    SettingError, UnknownSensorError

    Examples
    --------
    >>> s = full_settings(sensor="WV2")
    >>> (s.ratio, s.bits, s.protocol.name)
    (4, 11, 'toolbox2020')
    >>> full_settings(sensor="none", ratio=4).bits is None
    True
    """
    proto = get_protocol(protocol)
    if not proto.full_indexes:  # pragma: no cover - every registered protocol has FR indexes
        raise SettingError(f"protocol {proto.name!r} has no full-resolution indexes")
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    if ratio is None:
        raise SettingError(f"ratio is required: sensor {s.name!r} has no nominal ratio")
    bits = bits if bits is not None else s.bits
    if bits is None and threshold:
        raise SettingError(f"bits is required with threshold=True (the fused image is clipped at 2**bits): sensor "
                           f"{s.name!r} has no nominal bit depth")
    return FullSettings(protocol=proto, sensor=s, ratio=check_ratio(ratio, exp=proto.uses_exp),
                        bits=None if bits is None else check_bits(bits), scale=check_scale(scale),
                        threshold=bool(threshold),
                        nan_policy=check_choice("nan_policy", nan_policy, NAN_POLICIES),
                        scale_mismatch=check_choice("scale_mismatch", scale_mismatch, SCALE_MISMATCH_POLICIES),
                        requested=requested_indexes(indexes, proto, "full"))


#: The settings value of either resolution.
Settings = ReducedSettings | FullSettings


def settings_of(resolution: str, settings: EvaluationSettings | None = None, **keywords: Any) -> Settings:
    """The settings value of an accumulator or adapter: ``settings`` as given, or built from keywords.

    Parameters
    ----------
    resolution : {"reduced", "full"}
        The resolution of the evaluation.
    settings : ReducedSettings or FullSettings, optional
        Built once (:func:`reduced_settings`, :func:`full_settings`).
    **keywords
        Otherwise, the keywords of :func:`reduced_settings` / :func:`full_settings`.

    Returns
    -------
    ReducedSettings or FullSettings

    Raises
    ------
    SettingError
        Both a value and keywords, or a value of the other resolution.

    Examples
    --------
    >>> settings_of("reduced", ratio=4, bits=11).ratio
    4
    """
    build = reduced_settings if resolution == "reduced" else full_settings
    if settings is None:
        return build(**keywords)
    if keywords:
        raise SettingError(f"give the settings value or the keywords of {build.__name__} ({', '.join(keywords)}), "
                           "not both")
    if not isinstance(settings, (ReducedSettings, FullSettings)) or settings.resolution != resolution:
        raise SettingError(f"settings: expected {resolution}-resolution settings ({build.__name__}(...)), got "
                           f"{getattr(settings, 'resolution', type(settings).__name__)!r}")
    return settings

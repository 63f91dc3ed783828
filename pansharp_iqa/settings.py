"""The one settings value of an evaluation, validated and frozen, and the provenance card built from it.

:func:`reduced_settings` and :func:`full_settings` (dispatched by :func:`settings_of`) turn protocol settings
and the declarations about the inputs (:class:`~pansharp_iqa.rules.Declarations`: each role's scale, the bit
depth, a producer's DN, with their sources) into a :class:`ReducedSettings` / :class:`FullSettings`, once,
before any work. The library's keywords, ``pansharp-eval`` (dataset.toml, method.toml and flags), the presets
(:meth:`pansharp_iqa.Preset.settings`), the tensor classes and NLRNet all build this value and nothing else; the
in-memory, tile-wise and device engines apply each role's declared scale (:meth:`EvaluationSettings.scale_of`),
check their data with :meth:`EvaluationSettings.check` (the rules of :mod:`pansharp_iqa.rules`, once) and record
the value with ``card()``.
"""

from __future__ import annotations

import dataclasses
import math
import platform
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._version import __version__
from .indexes.catalog import (
    ChunkContext,
    FinalizeContext,
    Statistic,
    closure,
    finalize,
    get_index,
    per_band_values,
    resolve_indexes,
    statistics_for,
)
from .indexes.regression import EXPONENT_CASES, QNR_LIKE_EXPONENTS, qnr_like_exponents
from .protocols import Protocol, get_protocol
from .rules import LIBRARY, OVERRIDE_CARD, SCALE_MISMATCH_POLICIES, Declarations, Evidence, Wording, apply_rules
from .sensors import Sensor, get_sensor, resolve_sensor
from .validation import (
    ImageFacts,
    SettingError,
    ShapeError,
    check_bits,
    check_choice,
    check_multiple_of,
    check_ratio,
    check_scale,
    check_sensor_bands,
    layout_hint,
)

__all__ = [
    "EvaluationSettings", "ReducedSettings", "FullSettings", "reduced_settings", "full_settings", "protocol_card",
    "NAN_POLICIES", "Q2N_CAST", "UPSAMPLED", "requested_indexes", "settings_of", "Settings",
]

#: Treatments of constant blocks (UIQI 0/0) in D_lambda/D_s.
NAN_POLICIES = ("raise", "omit", "propagate")
#: How the toolbox's Q2n turns DN into integers (recorded in cards).
Q2N_CAST = "uint16 (MATLAB: round half away from zero, saturate to [0, 65535]) before Q2n"
#: Q2n's integer casts as cards record them (``Protocol.q2n_cast``; the toolbox's is :data:`Q2N_CAST`).
Q2N_CASTS = {"uint16": Q2N_CAST,
             "round-half-even": "round half to even (torch.round), no clip, before Q2n",
             "int16-truncated": "truncation toward zero to int16 before Q2n",
             "none": "no integer cast before Q2n"}
#: Where the upsampled MS of the full-resolution indexes comes from: computed, or given (a file's ``lms``).
UPSAMPLED = {"interp23tap": "interp23tap(ms, ratio), computed",
             "given": "given (ms_exp: e.g. a PanCollection file's lms)"}


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
    threshold : bool
        Clip the fused image to [0, 2^bits] first.
    requested : tuple of str or None
        The indexes asked for with ``indexes=`` (validated against the protocol), or None for the
        protocol's table.
    scale_mismatch : {"raise", "warn"}
        A fused image on another scale than its reference (e.g. a bit-depth factor of 2): refused, or
        scored with a :class:`~pansharp_iqa.rules.ScaleMismatchWarning` (recorded in the card).
    declared : Declarations
        What was declared about each role's values (its scale, the bit depth, a producer's DN), with the
        sources; each role's ``scale`` is applied by the engines (:meth:`scale_of`).
    wording : Wording
        The audience's words in refusals (library, ``pansharp-eval``, ``pansharp-nlrnet``).
    per_band : bool
        Results carry ``"per_band"``: each index's value per band where it has one (``Index.per_band``).
    """

    protocol: Protocol
    ratio: int
    bits: int | None
    threshold: bool = False
    scale_mismatch: str = "raise"
    requested: tuple[str, ...] | None = None
    declared: Declarations = Declarations()
    wording: Wording = LIBRARY
    per_band: bool = False

    def results(self, sums: Any, n_bands: int) -> dict[str, Any]:
        """The requested indexes from merged statistics (the catalogue's finalize steps), with ``"per_band"`` when
        asked for."""
        ctx = self.finalize_context(n_bands)
        values: dict[str, Any] = finalize(self.indexes, sums, ctx)
        if self.per_band:
            values["per_band"] = per_band_values(self.indexes, sums, ctx)
        return values

    def statistics(self) -> tuple[Statistic, ...]:
        """The statistics of the requested indexes (the protocol's forms of them)."""
        return statistics_for(self.indexes, self.protocol.name)

    def finalize_context(self, n_bands: int) -> FinalizeContext:
        """What the catalogue's finalize steps read from these settings, for images of ``n_bands`` bands."""
        proto = self.protocol
        return FinalizeContext(ratio=float(self.ratio), bits=self.bits, n_bands=n_bands,
                               nan_policy=getattr(self, "nan_policy", "raise"), sam_zero_norm=proto.sam_zero_norm,
                               q2n_precision=proto.q2n_precision, protocol=proto.name)

    def q2n_context(self) -> dict[str, Any]:
        """The protocol's Q2n settings as :class:`~pansharp_iqa.indexes.catalog.ChunkContext` fields."""
        p = self.protocol
        return {"q2n_cast": p.q2n_cast, "q2n_padding": p.q2n_padding, "q2n_std_floor": p.q2n_std_floor,
                "q2n_precision": p.q2n_precision}

    def scale_of(self, role: str) -> float:
        """The declared multiplier to DN of one role (1 when none is declared)."""
        d = self.declared.get(role, "scale")
        return 1.0 if d is None else float(d.value)

    @property
    def roles(self) -> tuple[str, ...]:
        """The inputs of an evaluation at this resolution (:data:`pansharp_iqa.evaluation.ROLES`)."""
        raise NotImplementedError

    def declaring(self, role: str, key: str, value: Any, source: str) -> Any:
        """These settings with one more declaration (:meth:`~pansharp_iqa.rules.Declarations.with_value`)."""
        return dataclasses.replace(self, declared=self.declared.with_value(role, key, value, source))

    def override_card(self) -> dict[str, Any]:
        """The card entries of the declarations and of the scale-mismatch override."""
        scales = {r: self.scale_of(r) for r in self.roles}
        out: dict[str, Any] = {"scale": next(iter(scales.values())) if len(set(scales.values())) == 1 else scales}
        if self.declared.items:
            out["declared"] = self.declared.card()
        if self.scale_mismatch != "raise":
            out["scale_mismatch"] = OVERRIDE_CARD[self.scale_mismatch]
        return out

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

    @property
    def indexes(self) -> tuple[str, ...]:
        """Keys of the result: the requested indexes, else the protocol's table at this resolution."""
        return self.requested if self.requested is not None else self.protocol.indexes(self.resolution)

    def check(self, facts: dict[str, ImageFacts]) -> None:
        """The input rules (:func:`pansharp_iqa.rules.apply_rules`), once, on the value summaries of the roles.

        Only the roles a requested index reads are tested; the reference must lie within ``bits`` at
        reduced resolution, and the MS at full resolution only under ``threshold``.

        Parameters
        ----------
        facts : dict of str to ImageFacts
            Role (``"fused"``, ``"reference"`` or ``"ms"``, ``"pan"``) to its summary, in DN (after
            :meth:`scale_of`); ``"fused"`` may be left out (the inputs alone).
        """
        specs = closure(self.indexes, self.protocol.name)
        alias = {"ms": "reference"}
        items = {alias.get(r, r): v for r, v in self.declared.items.items()}
        named = {r: dataclasses.replace(f, name=self.wording.names.get(r, f.name)) for r, f in facts.items()}
        ev = Evidence({alias.get(r, r): f for r, f in named.items()}, Declarations(items), self.bits,
                      frozenset(alias.get(r, r) for spec in specs for r in spec.roles),
                      casts=any(spec.casts for spec in specs) and self.protocol.q2n_cast != "none",
                      bits_range=self.resolution == "reduced" or self.threshold, policy=self.scale_mismatch,
                      wording=self.wording, original=self.resolution == "reduced")
        apply_rules(ev)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReducedSettings(EvaluationSettings):
    """Validated settings of a reduced-resolution (Wald protocol) evaluation (build them with
    :func:`reduced_settings`); the ratio is an integer >= 2 and only scales ERGAS."""

    @property
    def resolution(self) -> str:
        """``"reduced"``."""
        return "reduced"

    @property
    def roles(self) -> tuple[str, ...]:
        """``("fused", "reference")``."""
        return ("fused", "reference")

    @property
    def clip_max(self) -> float | None:
        """Upper clip of the fused image: ``2**bits`` under ``threshold``, the protocol's ``rr_fused_clip``, the
        smaller of the two when both apply."""
        clips = [c for c in (super().clip_max, self.protocol.rr_fused_clip) if c is not None]
        return float(min(clips)) if clips else None

    def chunk_context(self, gradient: str, *, grid: tuple[int, int] | None = None, col_halo: bool = False,
                      maps: bool = False) -> ChunkContext:
        """What the reduced-resolution chunk functions read (block size, SCC's gradient, SSIM's peak, Q2n's
        settings); ``grid``: the evaluated image's size where the chunks extend it to Q2n's blocks themselves;
        ``maps``: quality maps are asked for."""
        return ChunkContext(block_size=self.protocol.block_size, gradient=gradient, col_halo=col_halo,
                            peak=None if self.bits is None else 2.0**self.bits - 1, grid=grid, maps=bool(maps),
                            **self.q2n_context())

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

    def card(self, *, image_shape: list[int], evaluated_shape: list[int], **extra: Any) -> dict[str, Any]:
        """Provenance card of a result computed with these settings."""
        return protocol_card(
            self.protocol,
            resolution="reduced",
            ratio=self.ratio,
            bits=self.bits,
            threshold=bool(self.threshold),
            **({"fused_clip": [0.0, self.clip_max]} if self.protocol.rr_fused_clip is not None else {}),
            shift=self.protocol.block_size,
            q2n_cast=Q2N_CASTS[self.protocol.q2n_cast],
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
                     indexes: Sequence[str] | str | None = None, scale_mismatch: str = "raise",
                     declared: Declarations | None = None, wording: Wording = LIBRARY,
                     sam_zero_norm: str | None = None, per_band: bool = False) -> ReducedSettings:
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
        Positive multiplier to DN of every input (declared as the ``scale= argument``).
    threshold : bool
        Clip the fused image to [0, 2^bits] first.
    indexes : sequence of str or str, optional
        Which indexes to compute: names from the protocol's table and the catalogue's extras
        (``"PSNR"``, ``"CC"``); ``"default"`` stands for the protocol's table. None: the table.
    scale_mismatch : {"raise", "warn"}
        A fused image on another scale than its reference: refused, or scored with a
        :class:`~pansharp_iqa.rules.ScaleMismatchWarning` recorded in the card.
    declared : Declarations, optional
        What files and settings declare about each role (its scale per role, the bit depth, a
        producer's DN), with their sources; a declaration that contradicts ``scale`` or ``bits`` is refused.
    wording : Wording
        The audience's words in refusals.
    sam_zero_norm : {"exclude", "zero", "right_angle", "nan"}, optional
        SAM's zero-norm pixels instead of the protocol's convention (``Protocol.sam_zero_norm``:
        ``"exclude"`` for the MATLAB toolboxes, ``"zero"`` for the HS/S2 code); recorded in the card
        (``sam_zero_norm``, and under ``overrides``).
    per_band : bool
        Also return each index's value per band where it has one (``"per_band"`` in results).

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
    >>> reduced_settings(ratio=4, bits=11, scale=2047).scale_of("fused")
    2047.0
    """
    proto = _with_zero_norm(get_protocol(protocol), sam_zero_norm)
    if not proto.reduced_indexes:
        raise SettingError(
            f"protocol {proto.name!r} has no reduced-resolution indexes; use 'toolbox2020' for "
            "reduced resolution, or evaluate_full for this protocol"
        )
    b = check_bits(bits)
    return ReducedSettings(protocol=proto, ratio=check_ratio(ratio, exp=False), bits=b, threshold=bool(threshold),
                           scale_mismatch=check_choice("scale_mismatch", scale_mismatch, SCALE_MISMATCH_POLICIES),
                           requested=requested_indexes(indexes, proto, "reduced"),
                           declared=_declarations(declared, ("fused", "reference"), scale, b, "bits= argument"),
                           wording=wording, per_band=bool(per_band))


def _with_zero_norm(proto: Protocol, sam_zero_norm: str | None) -> Protocol:
    """The protocol with SAM's zero-norm convention changed when one is given."""
    return proto if sam_zero_norm is None else proto.with_settings(sam_zero_norm=sam_zero_norm)


def _declarations(declared: Declarations | None, roles: Sequence[str], scale: object, bits: int | None,
                  bits_from: str) -> Declarations:
    """The declarations with the library's ``scale=`` (every role) and ``bits`` added; each scale checked."""
    d = declared if declared is not None else Declarations()
    sc = check_scale(scale)
    for role in roles:
        if sc != 1.0:
            d = d.with_value(role, "scale", sc, "scale= argument")
        if (given := d.get(role, "scale")) is not None:
            check_scale(given.value)
    if bits is not None:
        d = d.with_value("all", "bits", bits, bits_from)
    return d


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
        The MTF used: it drives D_lambda_K (and D_s under ``d_s_low_pass="pan-mtf"``).
    satellite : Sensor
        The data's sensor (the same as ``sensor`` unless a protocol's scripts use another MTF, e.g. the
        PanCollection scripts use IKONOS's for QuickBird data).
    nan_policy : {"raise", "omit", "propagate"}
        Treatment of constant blocks.
    upsampled : {"interp23tap", "given"}
        Where the upsampled MS comes from (:data:`UPSAMPLED`); ``"given"``: the input ``ms_exp``.
    exponents : {"unitary", "sensor-based", "overall"}
        The (alpha, beta) of the QNR-like indexes (QNR, HQNR, RQNR), as the GRSM 2022 code's
        ``get_alpha_beta`` (:func:`~pansharp_iqa.indexes.regression.qnr_like_exponents`).
    """

    sensor: Sensor
    satellite: Sensor
    nan_policy: str = "raise"
    upsampled: str = "interp23tap"
    exponents: str = "unitary"

    @property
    def resolution(self) -> str:
        """``"full"``."""
        return "full"

    @property
    def roles(self) -> tuple[str, ...]:
        """``("fused", "ms", "pan")``, and ``"ms_exp"`` when the upsampled MS is given."""
        return ("fused", "ms", "pan", "ms_exp") if self.upsampled == "given" else ("fused", "ms", "pan")

    def for_bands(self, names: Sequence[str | None]) -> FullSettings:
        """These settings with the MTF of each MS band ``names`` declares, in its order (the sensor's own: unchanged).

        Examples
        --------
        >>> full_settings(sensor="IKONOS").for_bands(["NIR", "Red", "Green", "Blue"]).ms_gnyq(4)
        (0.28, 0.29, 0.28, 0.26)
        """
        own = [b.casefold() for b in self.sensor.band_names or ()]
        if self.sensor.is_generic or not names or None in names or [str(n).strip().casefold() for n in names] == own:
            return self  # the generic sensor, no names or some unnamed: the sensor's own MTF
        return dataclasses.replace(self, sensor=self.sensor.select_bands([str(n) for n in names]))

    def ms_gnyq(self, n_bands: int) -> tuple[float, ...]:
        """Per-band MS GNyq for ``n_bands`` bands under this protocol (sensor overrides applied)."""
        return check_sensor_bands(self.sensor, n_bands, protocol=self.protocol.name)

    def pan_gnyq(self) -> float:
        """The sensor's PAN GNyq under this protocol."""
        return float(self.sensor.pan_gnyq_for(protocol=self.protocol.name))

    @property
    def ms_scale_blocks(self) -> bool:
        """Whether the full-resolution block statistics live on MS-scale blocks (the HS/S2 protocols' D_lambda, the
        fused image decimated to MS scale, ``Protocol.fr_decimation_start``), padded to whole blocks; else on
        PAN-scale blocks that must be whole (the toolbox family)."""
        return self.protocol.fr_decimation_start is not None

    @property
    def tile_multiple(self) -> int:
        """Tile sides at PAN scale are multiples of this: whole blocks at the scale of the block statistics, and
        of the ratio."""
        bs, r = self.protocol.block_size, self.ratio
        return bs * r if self.ms_scale_blocks else math.lcm(bs, r)

    @property
    def d_rho_half_width(self) -> int:
        """D_rho's half width under the protocol's rule (``Protocol.d_rho_half_width_rule``)."""
        rule, r = self.protocol.d_rho_half_width_rule, int(self.ratio)
        return max(4, r) // 2 if rule == "floor-half-min4" else -(-r // 2)

    @property
    def pan_band_names(self) -> tuple[str, ...] | None:
        """The bands in the PAN's place under ``Protocol.pan_bands = "sensor"`` (the sensor's ``pan_sensor``: e.g.
        Sentinel-2's 10 m bands B2, B3, B4, B8), else None (one PAN band)."""
        if self.protocol.pan_bands != "sensor" or self.sensor.pan_sensor is None:
            return None
        return tuple(get_sensor(self.sensor.pan_sensor).band_names or ())

    @property
    def pan_bands(self) -> int:
        """How many bands the PAN role holds (1, or the ``pan_sensor``'s bands)."""
        names = self.pan_band_names
        return 1 if names is None else len(names)

    def chunk_context(self, ms_gnyq: tuple[float, ...], shape: tuple[int, ...], *, maps: bool = False) -> ChunkContext:
        """What the full-resolution declarations read (block size, ratio, protocol, MTF gains and kernel design,
        Q2n's settings, the decimation start, D_rho's half width, exponents), for a fused image of ``shape`` (the
        toolbox family: whole blocks, refused otherwise); ``maps``: quality maps are asked for."""
        proto = self.protocol
        if not self.ms_scale_blocks:
            check_multiple_of("fused", shape, proto.block_size, why="the toolbox's block-wise QNR indexes require it")
        return ChunkContext(block_size=proto.block_size, ratio=self.ratio, protocol=proto, ms_gnyq=tuple(ms_gnyq),
                            pan_gnyq=self.pan_gnyq() if proto.d_s_uses_sensor else None, kernel=proto.mtf,
                            start=proto.fr_decimation_start or 0, half_width=self.d_rho_half_width,
                            shape=(int(shape[0]), int(shape[1])), maps=bool(maps),
                            exponents=self.exponent_values(), **self.q2n_context())

    def exponent_values(self) -> dict[str, tuple[float, float]]:
        """(alpha, beta) of each QNR-like index under :attr:`exponents` (the sensor's row where it has one)."""
        return qnr_like_exponents(self.exponents, self.satellite.name)

    def finalize_context(self, n_bands: int) -> FinalizeContext:
        """What the finalize steps read for a fused image of ``n_bands`` bands (with the exponents)."""
        return dataclasses.replace(super().finalize_context(n_bands), exponents=self.exponent_values())

    def exponents_card(self) -> dict[str, Any]:
        """The card entry of the exponents: the case and (alpha, beta) of each QNR-like index computed."""
        values = self.exponent_values()
        computed = [i.name for i in closure(self.indexes, self.protocol.name) if i.name in QNR_LIKE_EXPONENTS]
        return {"case": self.exponents, **{n: list(values[n]) for n in computed}}

    def common_card(self, ms_gnyq: tuple[float, ...], image_shape: list[int]) -> dict[str, Any]:
        """The card entries every full-resolution protocol records."""
        return dict(
            resolution="full",
            sensor=self.sensor.to_dict(),
            **({"satellite": self.satellite.name} if self.satellite.name != self.sensor.name else {}),
            ms_gnyq=list(ms_gnyq),
            ratio=self.ratio,
            bits=self.bits,
            threshold=bool(self.threshold),
            image_shape=list(image_shape),
            upsampled_ms=UPSAMPLED[self.upsampled],
            **self.override_card(),
        )

    def _ms_scale_notes(self, ms_gnyq: tuple[float, ...]) -> dict[str, Any]:
        """The card entries of the HS/S2 full-resolution indexes: how the fused image reaches MS scale, Q2n's
        settings there, D_rho's window and references."""
        proto, r = self.protocol, self.ratio
        kernels = [proto.mtf.kernel(g, r) for g in ms_gnyq]
        shift = "fineshift(x, 1, 1) (half a pixel, zeros outside), then " if proto.fr_half_shift else ""
        notes: dict[str, Any] = {
            "fused_at_ms_scale": f"MTF(fused) ({proto.mtf.normalise_at(r)} kernels, {proto.mtf.tap_precision} taps, "
                                 f"replicate borders), {shift}x[{proto.fr_decimation_start}::{r}]",
            "mtf_kernel_sums": [float(k.sum()) for k in kernels],
            "q2n_at_ms_scale": f"{proto.block_size}-pixel blocks at MS scale, {Q2N_CASTS[proto.q2n_cast]}, "
                               f"{proto.q2n_padding} padding, zero bands to a power of two, {proto.q2n_precision} "
                               "block values",
        }
        if "D_rho" in self.indexes:
            names = self.pan_band_names
            notes["d_rho"] = {"half_width": self.d_rho_half_width, "window": 2 * self.d_rho_half_width,
                              "references": list(names) if names else "the PAN",
                              "upper_clip": "not applied (changes a value only for a band constant over the image)"}
        if self.pan_band_names is not None:
            notes["pan_bands"] = list(self.pan_band_names)
        return notes

    def card(self, ms_gnyq: tuple[float, ...], image_shape: list[int], **extra: Any) -> dict[str, Any]:
        """Provenance card of a toolbox-family full-resolution result."""
        proto, ratio, bs = self.protocol, self.ratio, self.protocol.block_size
        notes: dict[str, Any] = {}
        if "D_lambda_K" in self.indexes:
            notes["d_lambda_k"] = "1 - Q2n(EXP, MTF(fused)) at PAN scale, " + Q2N_CAST
        if self.ms_scale_blocks:
            notes.update(self._ms_scale_notes(ms_gnyq))
        elif ratio == 6 and self.upsampled == "interp23tap":  # the EXP at ratio 6 is the HS/S2 toolboxes' composite
            notes["exp_interpolator"] = ("ratio 6: the HS/S2 toolboxes' ideal_interpolator (x3 sinc, 61 taps with "
                                         "float32 values, symmetric borders; then one 23-tap x2 step, circular)")
        if "D_s" not in proto.full_indexes:
            pass
        elif proto.d_s_uses_sensor:
            notes["pan_gnyq"] = self.pan_gnyq()
            notes["d_s_low_pass_pan"] = "PAN filtered with the sensor's PAN MTF (2015 sigma form)"
        elif proto.d_s_low_pass == "imresize":
            notes["d_s_low_pass_pan"] = f"imresize(PAN, 1/{ratio}) vs MS on {bs // ratio}-pixel blocks"
        else:
            notes["d_s_low_pass_pan"] = f"interp23tap(imresize(PAN, 1/{ratio}), {ratio})"
        if any(i.name == "D_s_R" for i in closure(self.indexes)):
            notes["d_s_r"] = ("var(P - F w) / var(P): w = least squares of the PAN on the fused bands at PAN scale, "
                              f"no intercept; map over {bs - 1 if bs % 2 == 0 else bs}-pixel windows")
        alpha, beta = self.exponent_values()["QNR"]
        return protocol_card(proto, **self.common_card(ms_gnyq, image_shape), p=1, q=1, alpha=alpha, beta=beta,
                             exponents=self.exponents_card(), nan_policy=self.nan_policy, shift=bs, **notes,
                             **self.index_card(), **extra)


def full_settings(*, sensor: str | Sensor, ratio: object = None, bits: object = None,
                  protocol: str | Protocol = "toolbox2020", scale: object = 1.0, threshold: bool = False,
                  nan_policy: str = "raise", indexes: Sequence[str] | str | None = None,
                  scale_mismatch: str = "raise", satellite: str | Sensor | None = None,
                  upsampled: str = "interp23tap", exponents: str = "unitary", declared: Declarations | None = None,
                  wording: Wording = LIBRARY, sam_zero_norm: str | None = None,
                  per_band: bool = False) -> FullSettings:
    """Validate the settings of a full-resolution evaluation.

    Parameters
    ----------
    sensor : str or Sensor
        Required: the MTF used (registry name, or ``"none"`` for the generic MTF).
    ratio, bits : int, optional
        Default to the sensor's nominal values. The generic sensor needs ``ratio``; ``bits`` only
        with ``threshold`` (no full-resolution index depends on it otherwise: None is recorded).
    protocol : str or Protocol
        A protocol (:func:`~pansharp_iqa.list_protocols`).
    scale : float
        Positive multiplier to DN of every input (declared as the ``scale= argument``).
    threshold : bool
        Clip the fused image to [0, 2^bits] first (needs ``bits``).
    nan_policy : {"raise", "omit", "propagate"}
        Treatment of constant blocks.
    indexes : sequence of str or str, optional
        Which of the protocol's full-resolution indexes to compute (``"default"``: its table).
    scale_mismatch : {"raise", "warn"}
        A fused image on another scale than its reference: refused, or scored with a
        :class:`~pansharp_iqa.rules.ScaleMismatchWarning` recorded in the card.
    satellite : str or Sensor, optional
        The data's sensor, where a protocol's scripts use another sensor's MTF (default: ``sensor``).
    upsampled : {"interp23tap", "given"}
        Where the upsampled MS comes from: computed, or given as the input ``ms_exp``.
    exponents : {"unitary", "sensor-based", "overall"}
        (alpha, beta) of QNR, HQNR and RQNR as the GRSM 2022 code's ``get_alpha_beta``: (1, 1), the
        sensor's row (GeoEye1, IKONOS, WV3; others: "overall") or the "overall" row; recorded in the card.
    declared : Declarations, optional
        What files and settings declare about each role, with their sources.
    wording : Wording
        The audience's words in refusals.
    sam_zero_norm : {"exclude", "zero", "right_angle", "nan"}, optional
        SAM's zero-norm convention of R-SAM instead of the protocol's (recorded in the card).
    per_band : bool
        Also return each index's value per band where it has one (``"per_band"`` in results).

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
    >>> full_settings(sensor="IKONOS", satellite="QB").satellite.name
    'QB'
    """
    proto = _with_zero_norm(get_protocol(protocol), sam_zero_norm)
    if not proto.full_indexes:  # pragma: no cover - every registered protocol has FR indexes
        raise SettingError(f"protocol {proto.name!r} has no full-resolution indexes")
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    if ratio is None:
        raise SettingError(f"ratio is required: sensor {s.name!r} has no nominal ratio")
    given_bits = bits
    bits = bits if bits is not None else s.bits
    if bits is None and threshold:
        raise SettingError(f"bits is required with threshold=True (the fused image is clipped at 2**bits): sensor "
                           f"{s.name!r} has no nominal bit depth")
    b = None if bits is None else check_bits(bits)
    up = check_choice("upsampled", upsampled, tuple(UPSAMPLED))
    roles = ("fused", "ms", "pan", "ms_exp") if up == "given" else ("fused", "ms", "pan")
    return FullSettings(protocol=proto, sensor=s, satellite=s if satellite is None else resolve_sensor(satellite),
                        ratio=check_ratio(ratio, exp=proto.uses_exp), bits=b, threshold=bool(threshold),
                        nan_policy=check_choice("nan_policy", nan_policy, NAN_POLICIES),
                        scale_mismatch=check_choice("scale_mismatch", scale_mismatch, SCALE_MISMATCH_POLICIES),
                        requested=requested_indexes(indexes, proto, "full"), upsampled=up,
                        exponents=check_choice("exponents", exponents, EXPONENT_CASES),
                        declared=_declarations(declared, roles, scale, b, "bits= argument" if given_bits is not None
                                               else f"sensor registry ({s.name})"),
                        wording=wording, per_band=bool(per_band))


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

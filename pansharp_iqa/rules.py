"""The plausibility rules: one table of rule objects, applied once by one function.

Each :class:`Rule` names the roles it reads, the test it applies to their value summaries
(:class:`~pansharp_iqa.validation.ImageFacts`, the same in memory, tile-wise and on the device) and to what
was declared about them (:class:`Declarations`: a scale, a bit depth, a producer's DN, each with its source),
its threshold, the mistake it stands for and its override. :func:`apply_rules` runs the exact checks and then
:data:`RULES`, in table order, on the :class:`Evidence` of one evaluation, with the audience's words
(:class:`Wording`: the library, ``pansharp-eval``, ``pansharp-nlrnet``). A rule refuses exactly what would change
a number: it compares what belongs together (a fused band with the same reference band, the PAN with its MS),
fires only for roles a requested index reads, and a declaration answers its question where one exists (a
producer's declared DN, integer data are DN). ``docs/validation.md`` shows :func:`rule_table`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .validation import (
    ImageFacts,
    ScaleError,
    SettingError,
    check_choice,
    check_same_shape,
    image_array,
    image_facts,
    raise_non_finite,
)

__all__ = [
    "Declared", "Declarations", "Wording", "Evidence", "Rule", "RULES", "EXACT", "apply_rules", "rule_table",
    "ScaleMismatchWarning", "SCALE_MISMATCH_POLICIES", "OVERRIDE_CARD", "UINT16_MAX", "factor_hint", "checked_pair",
    "LIBRARY",
]

#: Largest value the toolbox's uint16 cast keeps (Q2n, D_lambda_K): above it values saturate.
UINT16_MAX = 65535
FACTOR, BIT_DEPTH_MEAN, BIT_DEPTH_SPREAD, PAN_RANGE, UNIT_MAX, UNDERSHOOT = 3.0, 1.05, 1.6, (0.62, 1.25), 4.0, 0.05
#: A band of DN data whose values are fractions within [0, 1] while another band of the image reaches this
#: many DN is in another unit (rule ``band_unit``).
DN_BAND_MIN = 16.0
#: An original product (the reduced-resolution reference) holds no negative DN: at most rounding, this share of the
#: maximum (rule ``offset``).
ORIGINAL_UNDERSHOOT = 0.01
#: A declared multiplier explains a factor when undoing it leaves a factor within this much of 1.
EXPLAINED = 1.25


class ScaleMismatchWarning(UserWarning):
    """A finding of a plausibility rule, scored anyway because ``scale_mismatch="warn"``."""


#: ``scale_mismatch=``: refuse, or score with a warning (recorded in the card).
SCALE_MISMATCH_POLICIES = ("raise", "warn")
#: What the card records for the override.
OVERRIDE_CARD = {"warn": "warn: a fused image or PAN on another scale than its reference is scored "
                         "(ScaleMismatchWarning)"}


@dataclasses.dataclass(frozen=True)
class Declared:
    """One declared value and where it came from.

    Parameters
    ----------
    value : object
        The value, by the key it is declared under (:class:`Declarations`): ``"scale"`` and ``"file_scale"``,
        the multiplier to DN applied (a number, or one per band); ``"dn"``, ``True``: the producer declares its
        values are DN on its inputs' scale; ``"bits"``, the bit depth (int); ``"resampled"``, the library
        operation that made the values from an input the rules already checked (e.g. the MS shifted by
        :func:`pansharp_iqa.misregistration.shift_ms`): its interpolation undershoot is not evidence of offset
        data.
    source : str
        Where it came from, as messages name it (``"dataset.toml result_scale"``, ``"scale= argument"``,
        ``"s1_ms.tif scale tag"``).

    Examples
    --------
    >>> Declared(2047.0, "dataset.toml scale").text(), Declared("unit", "--result-scale").text()
    ('2047 (dataset.toml scale)', "'unit' (--result-scale)")
    """

    value: Any
    source: str

    def text(self) -> str:
        """``value (source)`` for messages.

        Returns
        -------
        str
        """
        v = self.value
        shown = f"{v:g}" if isinstance(v, float) else repr(v) if isinstance(v, str) else str(v)
        return f"{shown} ({self.source})"


@dataclasses.dataclass(frozen=True)
class Declarations:
    """What was declared about each role's values: ``{role: {key: Declared}}`` (see
    :class:`~pansharp_iqa.rules.Declared`); role ``"all"`` holds what concerns every input (``"bits"``).

    Parameters
    ----------
    items : mapping
        ``{role: {key: Declared}}``; build it with :meth:`with_value`.

    Examples
    --------
    >>> d = Declarations().with_value("fused", "scale", 2047.0, "scale= argument")
    >>> d.get("fused", "scale").text(), d.get("reference", "scale")
    ('2047 (scale= argument)', None)
    """

    items: Mapping[str, Mapping[str, Declared]] = dataclasses.field(default_factory=dict)

    def get(self, role: str, key: str) -> Declared | None:
        """The declaration of ``key`` for ``role`` (None: nothing declared).

        Parameters
        ----------
        role, key : str
            ``"fused"``, ``"reference"``, ``"ms"``, ``"pan"``, ``"ms_exp"`` or ``"all"``; ``"scale"``,
            ``"file_scale"``, ``"dn"``, ``"bits"`` or ``"resampled"``.

        Returns
        -------
        Declared or None
        """
        return self.items.get(role, {}).get(key)

    def with_value(self, role: str, key: str, value: Any, source: str) -> Declarations:
        """A copy with one more declaration; a different value already declared by another source is refused.

        Parameters
        ----------
        role, key : str
            As :meth:`get`.
        value : object
            The declared value (a multiplier to DN, one per band, ``True``, a bit depth).
        source : str
            Where it comes from, as messages name it (``"dataset.toml scale"``).

        Returns
        -------
        Declarations

        Raises
        ------
        SettingError
            Another source declared a different value: both are named.
        """
        old = self.get(role, key)
        if old is not None and _same(old.value, value):
            return self  # the first source that declared it stays on record
        if old is not None and old.source != source:
            raise SettingError(f"{role}: {old.source} declares {key} {old.text().split(' (')[0]} but {source} "
                               f"declares {Declared(value, source).text().split(' (')[0]}; the two contradict each "
                               "other: remove or correct one of them")
        items = {r: dict(v) for r, v in self.items.items()}
        items.setdefault(role, {})[key] = Declared(value, source)
        return Declarations(items)

    def card(self) -> dict[str, Any]:
        """JSON-serialisable ``{role: {key: {"value", "source"}}}``."""
        return {r: {k: {"value": list(d.value) if isinstance(d.value, tuple) else d.value, "source": d.source}
                    for k, d in v.items()} for r, v in self.items.items() if v}


def _same(a: Any, b: Any) -> bool:
    """Two declared values alike (numbers to 1e-9 relative, strings without case or surrounding spaces)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    try:
        return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-9, atol=0))
    except (TypeError, ValueError):
        return bool(a == b)


@dataclasses.dataclass(frozen=True)
class Wording:
    """How the audience (library, ``pansharp-eval``, ``pansharp-nlrnet``) overrides a rule and declares a scale.

    Parameters
    ----------
    override : str
        How to score a finding anyway (recorded in the card).
    declare_scale : mapping of str to (str, str)
        Per role, the key that declares its scale and where (``("result_scale", "dataset.toml (or
        --result-scale)")``); empty: one ``scale=`` for every role.
    names : mapping of str to str
        Per role, its name in messages (``pansharp-eval``: the file); default: the role.
    """

    override: str = ("pass scale_mismatch='warn' (pansharp-eval --scale-mismatch warn) to score it with a warning "
                     "recorded in the card")
    declare_scale: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    names: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def declare(self, role: str, value: str) -> str:
        """How this audience declares ``role``'s scale, in messages.

        Parameters
        ----------
        role : str
            The role whose scale is declared (``"fused"``, ``"reference"``, ``"ms"``, ``"pan"``).
        value : str
            The value to declare, as the message shows it (``"'unit'"``, ``"'dn'"``, ``"2047"``).

        Returns
        -------
        str
            ``declare result_scale = 'unit' in dataset.toml (or --result-scale)``; ``""`` where the audience has no
            way to declare that role's scale (the library: one ``scale=`` for every role).

        Examples
        --------
        >>> Wording(declare_scale={"fused": ("result_scale", "dataset.toml")}).declare("fused", "'unit'")
        "declare result_scale = 'unit' in dataset.toml"
        >>> LIBRARY.declare("fused", "'unit'")
        ''
        """
        way = self.declare_scale.get(role)
        return f"declare {way[0]} = {value} in {way[1]}" if way else ""


#: The library's words.
LIBRARY = Wording()


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What the rules decide on: the roles' value summaries (DN, after the declared scales) and declarations.

    Parameters
    ----------
    facts : mapping of str to ImageFacts
        ``"fused"``, ``"reference"`` (the GT, or the MS at full resolution) and ``"pan"``, those present.
    declared : Declarations
        What was declared about each role's values (scales, a producer's DN, the bit depth), with sources.
    bits : int or None
        The declared bit depth.
    reads : frozenset of str
        Roles a requested index reads (a rule on a role outside them does not fire).
    casts : bool
        A requested index rounds to integer DN (Q2n, D_lambda_K).
    bits_range : bool
        The reference must lie within ``2**bits - 1``.
    policy : {"raise", "warn"}
        ``scale_mismatch``: refuse a finding (:class:`~pansharp_iqa.validation.ScaleError`), or score it with a
        :class:`ScaleMismatchWarning` (overridable rules only).
    wording : Wording
        The audience's words for overrides and scale declarations (:data:`LIBRARY` by default).
    original : bool
        The reference is an original product (the reduced-resolution GT): it holds no negative DN at all.
    """

    facts: Mapping[str, ImageFacts]
    declared: Declarations = Declarations()
    bits: int | None = None
    reads: frozenset[str] = frozenset({"fused", "reference", "pan"})
    casts: bool = False
    bits_range: bool = False
    policy: str = "raise"
    wording: Wording = LIBRARY
    original: bool = False

    def has(self, *roles: str) -> bool:
        """Whether every role is present and read by a requested index.

        Parameters
        ----------
        *roles : str
            Roles (``"fused"``, ``"reference"``, ``"pan"``).

        Returns
        -------
        bool
        """
        return all(r in self.facts and r in self.reads for r in roles)

    def multiplier(self, role: str, band: int | None) -> tuple[float, Declared] | None:
        """A role's declared multiplier to DN and its declaration, when one is declared and not 1.

        Parameters
        ----------
        role : str
            The role (``"fused"``, ``"reference"``, ``"pan"``); its ``"scale"`` declaration first, then its file's
            own ``"file_scale"``.
        band : int or None
            The band (0-based) of a per-band declaration; None: its first value.

        Returns
        -------
        (float, Declared) or None
            The multiplier and the declaration it comes from; None where none is declared, or it is 1.
        """
        for key in ("scale", "file_scale"):
            d = self.declared.get(role, key)
            if d is None:
                continue
            v = np.atleast_1d(np.asarray(d.value, dtype=float))
            m = float(v[0] if v.size == 1 or band is None else v[min(band, v.size - 1)])
            if m > 0 and m != 1.0:
                return m, d
        return None


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule of :data:`RULES` (or :data:`EXACT`).

    Parameters
    ----------
    name, compares, threshold, mistake, override : str
        As messages and the docs call it: what it compares, when it refuses, the mistake it stands for, and how
        to override it.
    roles : tuple of str
        The roles it compares (it runs when a requested index reads them all); empty for a rule that tests each
        role a requested index reads.
    check : callable
        ``check(evidence) -> message or None``.
    overridable : bool
        ``scale_mismatch="warn"`` scores its finding with a :class:`ScaleMismatchWarning`.
    """

    name: str
    roles: tuple[str, ...]
    compares: str
    threshold: str
    mistake: str
    override: str
    check: Callable[[Evidence], str | None] = dataclasses.field(repr=False, compare=False)
    overridable: bool = False


# --------------------------------------------------------------------------- messages


_KNOWN_FACTORS: tuple[tuple[float, str], ...] = (
    *((2.0**b - 1, f"2**{b} - 1, as for [0, 1]-normalised {b}-bit data") for b in (8, 10, 11, 12, 14, 16)),
    *(((2.0**a - 1) / (2.0**b - 1), f"(2**{a} - 1)/(2**{b} - 1), as for {a}-bit data exported as {b}-bit")
      for a in (10, 11, 12, 14, 16) for b in (8, 10, 11, 12, 14) if a > b),
    *((2.0**k, f"2**{k}, as for values shifted by {k} bit{'s' if k > 1 else ''}") for k in range(1, 7)),
)


def factor_hint(factor: float) -> str:
    """A hint naming the usual cause of a measured factor (``" (close to 2**11 - 1, as for ...)"``) when the factor
    is within 15 % of one, else ``""``.

    The usual causes: ``2**b - 1`` ([0, 1]-normalised ``b``-bit data), ``(2**a - 1)/(2**b - 1)`` (``a``-bit data
    exported as ``b``-bit) and ``2**k`` (values shifted by ``k`` bits).

    Parameters
    ----------
    factor : float
        The measured ratio of one image's values to the other's (a factor and its inverse name the same cause).

    Returns
    -------
    str
        The hint, with a leading space and parentheses, or ``""``.

    Examples
    --------
    >>> factor_hint(2046.0), factor_hint(3.3)
    (' (close to 2**11 - 1, as for [0, 1]-normalised 11-bit data)', '')
    """
    factor = max(factor, 1 / factor)
    best = min(_KNOWN_FACTORS, key=lambda kv: abs(math.log(kv[0] / factor)))
    return f" (close to {best[1]})" if abs(math.log(best[0] / factor)) < math.log(1.15) else ""


def _bands_text(bands: Sequence[int], n_bands: int) -> str:
    """``bands 2, 4 (of 4)``: bands counted from 1."""
    shown = ", ".join(str(b + 1) for b in bands[:4]) + (", ..." if len(bands) > 4 else "")
    return f"band{'s' if len(bands) > 1 else ''} {shown} (of {n_bands})"


def _ratio_text(factor: float) -> str:
    """``divide it by about 2`` / ``multiply it by about 8``, with the hint."""
    how = f"divide it by about {factor:.4g}" if factor > 1 else f"multiply it by about {1 / factor:.4g}"
    return how + factor_hint(factor)


def _value(ev: Evidence, multiplier: float) -> str:
    """The scale value that declares ``multiplier``: ``'dn'``, ``'unit'`` or the number."""
    if abs(math.log(multiplier)) < math.log(1.2):
        return "'dn'"
    if ev.bits is not None and abs(math.log(multiplier / (2.0**ev.bits - 1))) < math.log(1.2):
        return "'unit'"
    return f"{multiplier:.4g}"


def _culprit(ev: Evidence, test: str, ref: str, factor: float, band: int | None) -> tuple[str, Declared | None]:
    """The role the evidence blames for ``test``/``ref`` = ``factor``: one whose own declared multiplier explains it
    (a declaration that multiplies both alike cannot), else ``test``."""
    own = {r: ev.multiplier(r, band) for r in (test, ref)}
    for role, residual in ((ref, factor), (test, 1.0 / factor)):
        found, other = own[role], own[test if role == ref else ref]
        if found is None or (other is not None and other[1] == found[1]):
            continue
        if abs(math.log(residual * found[0])) < math.log(EXPLAINED):
            return role, found[1]
    r, t = ev.facts[ref], ev.facts[test]  # else an undeclared reference that alone is not DN (beyond its bits, or
    beyond = ev.bits is not None and r.hi > 2.0**ev.bits >= t.hi / EXPLAINED  # fractions next to DN) is
    fractions = factor > 1 and not _integral(r) and 0 < r.hi <= UNIT_MAX and (_integral(t) or t.hi > UNIT_MAX)
    alone = own[ref] is None and ((factor < 1 and beyond) or fractions)
    return (ref if alone else test), None


def _scale_message(ev: Evidence, test: str, ref: str, head: str, factor: float, band: int | None,
                   bands: Sequence[int] = ()) -> str:
    """The message of a scale finding: blame the input the evidence points to and name its declaration."""
    culprit, explaining = _culprit(ev, test, ref, factor, band)
    other = ref if culprit == test else test
    name, other_name = ev.facts[culprit].name, ev.facts[other].name
    f = factor if culprit == test else 1.0 / factor  # the culprit's values over the other's
    own = explaining or ev.declared.get(culprit, "scale")
    way = ev.wording.declare_scale.get(culprit)
    shared = (own is not None and own == ev.declared.get(other, "scale")) or (
        way is not None and way == ev.wording.declare_scale.get(other))  # one setting scales both alike
    if bands and len(bands) < ev.facts[test].n_bands and explaining is None:
        fix = (f"A scale setting multiplies every band alike, so it cannot fix this: re-export {name}'s "
               f"{_bands_text(bands, ev.facts[test].n_bands).split(' (of')[0]} on the scale of the others (or fix the "
               f"same bands of {other_name} if they are the wrong ones).")
    elif own is not None and not shared:
        values = np.atleast_1d(np.asarray(own.value, dtype=float))
        current = float(values[0 if band is None or values.size == 1 else band])
        filed = own == ev.declared.get(culprit, "file_scale")  # the file's own tag: no setting corrects it
        declare = "" if filed else ev.wording.declare(culprit, _value(ev, current / f))
        shown = own.text() if values.size == 1 else f"{current:g} on band {band + 1 if band is not None else 1} " \
                                                    f"({own.source})"
        fix = (f"{name}'s declared scale {shown} contradicts the data"
               + (f": without it its values match {other_name}'s" if explaining else f" (about {_ratio_text(f)})")
               + (f"; {declare}." if declare else "; correct or remove that declaration."))
    else:
        declare = "" if shared else ev.wording.declare(culprit, _value(ev, (float(own.value) if own else 1.0) / f))
        common = "" if not shared else f" ({way[0]} in {way[1]} scales {other_name} alike" if way else \
            f" (scale={float(own.value):g} multiplies every input alike" if own else ""
        common += ", so it cannot bring one image to the other's scale)" if common else ""
        fix = f"Bring {name} to the scale of {other_name}{common}: {_ratio_text(f)}" + (
            f", i.e. {declare}." if declare else ".")
    return f"{head}, so every index would measure the factor, not the fusion. {fix}"


# --------------------------------------------------------------------------- the rules' tests


def _scale_factor(m_t: float, m_r: float, s_t: float, s_r: float) -> tuple[float, str] | None:
    """(factor, rule) when a band breaks band_scale or bit_depth against its reference band."""
    if min(m_t, m_r, s_t, s_r) <= 0:
        return None  # dark, dead or constant (saturated) in either: no evidence of a scale
    f, k, lim = m_t / m_r, s_t / s_r, math.log(FACTOR)
    if abs(math.log(f / k)) < lim and min(abs(math.log(f)), abs(math.log(k))) > lim and (f > 1) == (k > 1):
        return f, "band_scale"
    p = 2.0 ** round(math.log2(f))
    if 1 <= abs(math.log2(p)) <= 16 and abs(math.log(f / p)) < math.log(BIT_DEPTH_MEAN) \
            and abs(math.log(k / p)) < math.log(BIT_DEPTH_SPREAD):
        return f, "bit_depth"
    return None


def _fused_scale(kind: str) -> Callable[[Evidence], str | None]:
    """The test of band_scale or bit_depth: each fused band against the same reference band."""

    def check(ev: Evidence) -> str | None:
        if ev.declared.get("fused", "dn") is not None:
            return None  # its producer declared DN on the reference's scale
        t, r = ev.facts["fused"], ev.facts["reference"]
        same = t.n_bands == r.n_bands
        table = (np.stack([t.band_means(), r.band_means(), t.band_spreads(), r.band_spreads()]) if same
                 else np.array([[t.mean], [r.mean], [t.spread], [r.spread]]))
        found = [(b, *x) for b in range(table.shape[1]) if (x := _scale_factor(*(float(v) for v in table[:, b])))]
        if not found or found[0][2] != kind:
            return None
        nb = table.shape[1]
        if len(found) == nb:
            f = t.mean / r.mean if t.mean > 0 and r.mean > 0 else found[0][1]
            culprit, _ = _culprit(ev, "fused", "reference", f, None)
            a, o = (t, r) if culprit == "fused" else (r, t)
            g = f if culprit == "fused" else 1 / f
            head = (f"{a.name} is on another scale than {o.name}: its values are about {g:.3g} times theirs (means "
                    f"{a.mean:.3g} vs {o.mean:.3g}, spreads {a.spread:.3g} vs {o.spread:.3g})")
            return _scale_message(ev, "fused", "reference", head, f, None)
        bands = [b for b, _, _ in found]
        b, f = found[0][0], found[0][1]
        culprit, _ = _culprit(ev, "fused", "reference", f, b)
        a, o = (t, r) if culprit == "fused" else (r, t)
        g, rows = (f, (0, 1)) if culprit == "fused" else (1 / f, (1, 0))
        hint = factor_hint(g)
        s = "s" if len(bands) > 1 else ""
        head = (f"{a.name} {_bands_text(bands, nb)} {'is' if len(bands) == 1 else 'are'} on another scale than the "
                f"same band{s} of {o.name}: band {b + 1} is about {g:.3g} times theirs (means {table[rows[0], b]:.3g} "
                f"vs {table[rows[1], b]:.3g}, spreads {table[rows[0] + 2, b]:.3g} vs {table[rows[1] + 2, b]:.3g}"
                f"{'; ' + hint[2:-1] if hint else ''})")
        return _scale_message(ev, "fused", "reference", head, f, b, bands)

    return check


def _pan_scale(ev: Evidence) -> str | None:
    pan, ms = ev.facts["pan"], ev.facts["reference"]
    if not (pan.mean > 0 and ms.mean > 0) or PAN_RANGE[0] <= pan.mean / ms.mean <= PAN_RANGE[1]:
        return None
    f = pan.mean / ms.mean
    head = (f"{pan.name} is on another scale than {ms.name}: its values are about {f:.3g} times theirs (means "
            f"{pan.mean:.3g} vs {ms.mean:.3g}), while a PAN and its MS share a sensor's bit depth (PAN/MS within "
            f"{PAN_RANGE[0]:g}-{PAN_RANGE[1]:g})")
    return _scale_message(ev, "pan", "reference", head, f, None).replace(
        "every index would measure the factor, not the fusion", "D_s, QNR and HQNR would measure the factor")


def _integral(f: ImageFacts, band: int | None = None) -> bool:
    """Whether an image (a band) holds integers only: its dtype, or every sampled value."""
    if f.integer:
        return True
    if not f.band_nonint:
        return False
    return (sum(f.band_nonint) if band is None else f.band_nonint[band]) == 0


def _unit_scale(ev: Evidence) -> str | None:
    if not ev.casts:
        return None
    for role in ("reference", "pan"):  # a fused image on a unit scale beside DN is band_scale's to name
        f = ev.facts.get(role)
        if f is None or role not in ev.reads:
            continue
        limit = UNIT_MAX if ev.bits is None else min(UNIT_MAX, (2.0**int(ev.bits) - 1) / 64)
        if _integral(f) or not 0 < max(-f.lo, f.hi) <= limit:
            continue
        declared, unit = ev.declared.get(role, "scale"), ev.wording.declare(role, "'unit'")
        if declared is not None and float(np.max(declared.value)) != 1.0:
            how = f"Its declared scale {declared.text()} leaves it on a unit scale: correct that declaration"
        elif declared is not None:
            how = f"It is declared as DN by {declared.source}: {unit or 'give the data scale'} if it holds [0, 1] data"
        else:
            how = "Pass DN values, or " + (unit or "give the data scale (e.g. scale=2**bits - 1, i.e. 2047 for 11-bit "
                                                   "data)") + " so the inputs are converted to DN first"
        return (f"{f.name}: float data within [{f.lo:.3g}, {f.hi:.3g}], a unit scale (reflectance, or [0, 1] values) "
                f"rather than digital numbers, but Q2n and D_lambda_K round to integer digital numbers (uint16, as the "
                f"reference toolbox does), which would collapse these values to a few levels. {how}.")
    return None


def _band_unit(ev: Evidence) -> str | None:
    for role in ("reference", "pan"):
        f = ev.facts.get(role)
        if f is None or role not in ev.reads or f.n_bands < 2 or not f.band_hi or _integral(f):
            continue
        top, whole = max(f.band_hi), [_integral(f, b) for b in range(f.n_bands)]
        odd = [b for b in range(f.n_bands) if not whole[b] and 0 < f.band_hi[b] and f.band_lo[b] >= -0.5
               and top >= DN_BAND_MIN and (f.band_hi[b] <= 1.0 or (sum(whole) == f.n_bands - 1
                                                                   and f.band_hi[b] * DN_BAND_MIN <= top))]
        if odd:
            which = "that band is" if len(odd) == 1 else "those bands are"
            return (f"{f.name} {_bands_text(odd, f.n_bands)}: fractions up to {f.band_hi[odd[0]]:.3g} while its other "
                    f"bands are digital numbers up to {top:.4g}: {which} in another unit (e.g. divided by 2**bits - "
                    "1), which changes every index that compares bands (Q2n, SAM, D_lambda). Store every band in DN "
                    "(the same bands of the fused image too)")
    return None


def _offset(ev: Evidence) -> str | None:
    for role in ("reference", "pan"):
        f = ev.facts.get(role)
        if f is None or role not in ev.reads or f.lo >= -0.5 or ev.declared.get(role, "resampled") is not None:
            continue  # resampled by the library from a checked input: its undershoot is the interpolation's
        original = ev.original and role == "reference"
        if original and f.lo < -ORIGINAL_UNDERSHOOT * max(f.hi, 0.0):
            return (f"{f.name}: minimum {f.lo:g} (the maximum is {f.hi:g}), but the reference of a reduced-resolution "
                    "evaluation is an original product in the sensor's DN, which are non-negative. Pass the sensor's "
                    "DN (not mean-subtracted, standardised or offset data)")
        if original or (f.lo >= -UNDERSHOOT * max(f.hi, 0.0) and f.mean >= 0.25 * f.spread):
            continue
        return (f"{f.name}: minimum {f.lo:g} is negative beyond resampling undershoot (the maximum is {f.hi:g}), but "
                "inputs are digital numbers (non-negative). Pass the sensor's DN (not mean-subtracted, standardised or "
                "offset data)")
    return None


def _standardised(ev: Evidence) -> str | None:
    if ev.declared.get("fused", "dn") is not None:
        return None
    t, r = ev.facts["fused"], ev.facts["reference"]
    per = t.n_bands == r.n_bands and t.band_lo
    lo, t_m, t_s = (np.array(t.band_lo), t.band_means(), t.band_spreads()) if per else \
        (np.array([t.lo]), np.array([t.mean]), np.array([t.spread]))
    r_m, r_s = (r.band_means(), r.band_spreads()) if per else (np.array([r.mean]), np.array([r.spread]))
    # centred (a minimum below -0.5, the mean within a quarter spread of 0) beside a DN reference band, not a
    # broken band (noise far beyond the reference's spread)
    def centred(lo: float, m: float, s: float, rm: float, rs: float) -> bool:
        return lo < -0.5 and abs(m) < 0.25 * s and 0 < rm and rm >= 0.25 * rs and s <= FACTOR * rs

    whole = centred(t.lo, t.mean, t.spread, r.mean, r.spread)
    odd = list(range(len(lo))) if whole else [b for b in range(len(lo)) if centred(lo[b], t_m[b], t_s[b], r_m[b],
                                                                                      r_s[b])]
    if not whole and len(odd) < len(lo):
        # some bands only: a band standardised (its spread collapsed below a third of the reference band's), not a
        # poor network's band of about the reference's spread around 0 (scored: a poor method gets numbers)
        odd = [b for b in odd if FACTOR * t_s[b] <= r_s[b]]
    if not odd:
        return None
    which, b = (t.name, 0) if len(odd) == len(lo) else (f"{t.name} {_bands_text(odd, len(lo))}", odd[0])
    lo_b, m_b, s_b, rm_b = (t.lo, t.mean, t.spread, r.mean) if whole else (lo[b], t_m[b], t_s[b], r_m[b])
    return (f"{which}: values from {lo_b:.3g} with mean {m_b:.3g} and spread {s_b:.3g}: standardised or "
            f"mean-subtracted data, next to {r.name} in digital numbers (mean {rm_b:.3g}); no scale setting can make "
            "them DN and every index would measure the standardisation. Pass the method's output in DN (undo the "
            "normalisation)")


def _wrapped(ev: Evidence) -> str | None:
    if ev.declared.get("fused", "dn") is not None:
        return None
    t, r = ev.facts["fused"], ev.facts["reference"]
    if t.lo < 0:
        return None
    if min(t.mean, r.mean, t.spread, r.spread) > 0:
        cv = math.log((t.spread / t.mean) / (r.spread / r.mean))
        z = math.log(((t.hi - t.mean) / t.spread) / max((r.hi - r.mean) / r.spread, 1e-12))
        if max(abs(cv), abs(z)) < math.log(1.25):
            return None  # every value moved alike: another scale (a re-export), not a wrapped tail
    for bits in (16, 32):
        top, quarter = 2.0**bits, 2.0 ** (bits - 2)
        if top - quarter <= t.hi < top and r.hi < quarter:
            return (f"{t.name}: values up to {t.hi:g} next to a {r.name} of at most {r.hi:g}: negative values wrapped "
                    f"around when the image was cast to an unsigned integer type (x.astype(np.uint{bits}) makes -2 "
                    f"into {int(top) - 2}), which changes every index. Save the result as float, or clip it first: "
                    f"np.clip(x, 0, None).astype(np.uint{bits})")
    return None


def _stored_note(ev: Evidence, f: ImageFacts, role: str, limit: float) -> str | None:
    """The fix when a declared multiplier made stored DN too large: the stored values fit ``limit`` already."""
    found = ev.multiplier(role, None)
    if found is not None and f.hi / found[0] <= limit * (1 + 1e-6):
        how = ev.wording.declare(role, "'dn'") or f"drop scale={found[0]:g}"
        return (f"the stored values (maximum {f.hi / found[0]:g}) already are digital numbers: {how} (the declared "
                f"scale {found[1].text()} multiplies them)")
    return None


def _bits_range(ev: Evidence) -> str | None:
    f = ev.facts["reference"]
    if ev.bits is None or not ev.bits_range or f.hi <= (2**ev.bits - 1) * (1 + 1e-6):
        return None
    peak, needed = 2**ev.bits - 1, int(np.ceil(np.log2(f.hi + 1)))
    note = _stored_note(ev, f, "reference", peak)
    if note is None and needed > 16:
        note = ("no bit depth up to 16 holds it, so these are not a sensor's digital numbers: check the scale of the "
                "data (e.g. values multiplied twice)")
    bits = ev.declared.get("all", "bits")
    where = f" ({bits.source})" if bits is not None else ""
    return (f"{f.name}: maximum {f.hi:g} exceeds the {ev.bits}-bit range [0, {peak}]{where}; "
            + (note or f"give the right bits (at least {needed}) or the right scale, so thresholds and casts match the "
                       "data"))


def _uint16(ev: Evidence) -> str | None:
    f = ev.facts["reference"]
    if not ev.casts or f.hi <= UINT16_MAX * (1 + 1e-6):
        return None
    note = _stored_note(ev, f, "reference", UINT16_MAX) or "no sensor's digital numbers go there: check the scale of " \
                                                           "the data"
    return (f"{f.name}: maximum {f.hi:g} exceeds {UINT16_MAX}, where Q2n's and D_lambda_K's uint16 cast (as in the "
            f"reference toolbox) saturates, so the numbers would be wrong; {note}")


_WARN = "`scale_mismatch='warn'` (`--scale-mismatch warn`) scores with a warning, recorded in the card"
_DN = "; a producer's declared DN (`pansharp-nlrnet infer`) answers it"
_BAND = "a fused band with the same band of the reference (GT at reduced, MS at full resolution)"
_RF = ("fused", "reference")
#: The plausibility rules, in the order they run: every refusal decided on pixel statistics (``docs/validation.md``).
RULES = (
    Rule("offset", (), "the minimum of a reference, MS or PAN with its maximum, mean and spread",
         f"below -0.5 and below -{UNDERSHOOT:g}x the maximum, or with a mean below a quarter of the spread; the "
         f"reduced-resolution reference (an original product) below -{ORIGINAL_UNDERSHOOT:g}x the maximum",
         "offset, mean-subtracted or standardised data (resampled DN undershoot by at most 3.2 % of the maximum)",
         "none: DN are non-negative; pass the sensor's DN", _offset),
    Rule("standardised", _RF, "each fused band's mean and minimum with the same reference band's mean",
         "fused minimum below -0.5 and mean within a quarter of its spread from 0 (a spread at most 3x the "
         "reference's; where only some bands are centred, a spread at most 1/3 of the reference band's), the "
         "reference in DN",
         "a result left standardised (mean 0, std 1) or mean-subtracted by a network's normalisation",
         "none: pass the output in DN" + _DN, _standardised),
    Rule("wrapped", _RF, "the fused image's maximum with the reference's", "fused maximum in the top quarter of uint16 "
         "(uint32), the reference below the bottom quarter, the distribution's shape changed by > 25 %",
         "negatives wrapped around by an unsigned cast (-2 -> 65534)", "none (save float, or clip before the cast)"
         + _DN, _wrapped),
    Rule("pan_scale", ("pan", "reference"), "the PAN's mean with the MS's mean (one sensor, one bit depth), where a "
         "requested number depends on the PAN (D_s, QNR, HQNR, the baselines; not D_lambda, D_lambda_K, "
         "`wald_degrade` or the reprojected protocol)", f"PAN/MS outside [{PAN_RANGE[0]:g}, {PAN_RANGE[1]:g}] (real "
         "scenes, 32-px MS crops of WV2, IKONOS, WV3, SpaceNet: 0.70-1.10; one bit off: 1.4-2.2 or 0.35-0.55)",
         "a PAN on another bit depth or scale than the MS (`pan * 2`, a [0, 1] PAN)", _WARN, _pan_scale, True),
    Rule("band_scale", _RF, _BAND, f"mean and spread both beyond {FACTOR:g}x (or 1/{FACTOR:g}x), by factors within "
         f"{FACTOR:g}x of each other; a band dark (mean <= 0) or constant (saturated) in either is no evidence",
         "DN next to [0, 1] data, an export to another range, a wrong scale tag (a bias or a poor fusion moves mean "
         "and spread apart)", _WARN + _DN, _fused_scale("band_scale"), True),
    Rule("bit_depth", _RF, _BAND, f"mean within {BIT_DEPTH_MEAN:g}x of a power of two 2**k (k = +-1..+-16) and "
         f"spread within {BIT_DEPTH_SPREAD:g}x of the same 2**k", "a re-export to another bit depth ((2**12 - 1)/"
         "(2**11 - 1), an 8-bit product scaled by 8)", "as band_scale", _fused_scale("bit_depth"), True),
    Rule("unit_scale", (), "every value of a float reference, MS or PAN where a requested index rounds to integer DN "
         "(Q2n, D_lambda_K); a fused image beside DN is band_scale's", f"all within +-{UNIT_MAX:g} DN "
         "(`(2**bits - 1) / 64` below 8 bits); integer data, integer-valued floats (dark DN) and all-zero images "
         "pass", "reflectance or [0, 1] data given as DN: the uint16 cast keeps 5 levels",
         "declare the scale (`scale=`, dataset.toml `scale`); genuine low-bit DN: their `bits`", _unit_scale),
    Rule("band_unit", (), "each band of a reference, MS or PAN with the image's other bands",
         f"a band of fractions within [0, 1] while another band reaches {DN_BAND_MIN:g} DN, or of fractions "
         f"{DN_BAND_MIN:g}x below the others' maximum while every other band holds integers; integer-valued bands "
         "(dark DN) pass", "one band in another unit (divided by 2**bits - 1) in DN data, in both images",
         "none: store every band in DN", _band_unit),
)
#: The exact checks of what was declared, after the rules.
EXACT = (
    Rule("bits_range", ("reference",), "the reference with the declared bits", "maximum above 2**bits - 1 (at reduced "
         "resolution; at full resolution only under threshold)", "wrong bits or scale", "the right bits or scale",
         _bits_range),
    Rule("uint16", ("reference",), "the reference with the uint16 cast", "maximum above 65535 where a requested "
         "index casts", "a wrong scale", "the right scale", _uint16),
)


def apply_rules(ev: Evidence) -> None:
    """Apply the exact checks and :data:`RULES` once, in order, to the evidence of one evaluation.

    Parameters
    ----------
    ev : Evidence
        The roles' value summaries, declarations, bit depth, the roles requested indexes read, the override
        policy and the audience's words.

    Raises
    ------
    NonFiniteError
        NaN or Inf in any image.
    ScaleError
        The first finding (a finding of an overridable rule warns instead under ``policy="warn"``).

    Examples
    --------
    >>> ms = image_facts("ms", np.full((8, 8, 4), 400, dtype=np.uint16))
    >>> pan = image_facts("pan", np.full((32, 32), 800, dtype=np.uint16))
    >>> try:
    ...     apply_rules(Evidence({"reference": ms, "pan": pan}))
    ... except ScaleError as err:
    ...     print(str(err)[:69])
    pan is on another scale than ms: its values are about 2 times theirs
    >>> apply_rules(Evidence({"reference": ms, "pan": pan}, reads=frozenset({"reference"})))  # no index reads the PAN
    """
    check_choice("scale_mismatch", ev.policy, SCALE_MISMATCH_POLICIES)
    for f in ev.facts.values():
        if f.non_finite:
            raise_non_finite(f.name, f.non_finite)
    for rule in (*RULES, *EXACT):
        if not ev.has(*rule.roles):
            continue
        message = rule.check(ev)
        if message is None:
            continue
        if rule.overridable and ev.policy == "warn":
            warnings.warn(message, ScaleMismatchWarning, stacklevel=3)
            continue
        raise ScaleError(message if not rule.overridable else f"{message} If the factor is real, "
                         f"{ev.wording.override}.")


def rule_table() -> str:
    """The plausibility rules (:data:`pansharp_iqa.rules.RULES`) as the Markdown table ``docs/validation.md`` shows.

    Returns
    -------
    str
        One row per rule: its name, what it compares, when it refuses, the mistake it stands for, its override.

    Examples
    --------
    >>> rule_table().splitlines()[0]
    '| rule | compares | refused when | the mistake it stands for | override |'
    """
    rows = ["| rule | compares | refused when | the mistake it stands for | override |", "|---|---|---|---|---|"]
    return "\n".join(rows + [f"| `{r.name}` | {r.compares} | {r.threshold} | {r.mistake} | {r.override} |"
                             for r in RULES])


def checked_pair(reference: object, fused: object, *, casts: bool = False,
                 scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A (reference, fused) pair of (H, W, B) images, validated by the rules without copies.

    Parameters
    ----------
    reference, fused : array_like, shape (H, W, B)
        The reference (GT) and the fused image, in DN after ``scale``; same shape.
    casts : bool
        The index rounds to integer DN (Q2n): a float reference whose values all lie within +-4 DN (rule
        ``unit_scale``: [0, 1] data) and a reference above 65535 (rule ``uint16``) are refused.
    scale : float
        Multiplier of both images to DN (as ``scale=`` of the index functions).

    Returns
    -------
    reference, fused : ndarray
        The images as arrays (no copy where they already are).

    Raises
    ------
    InputError
        Another shape, NaN/Inf, or a finding of the rules (:class:`~pansharp_iqa.validation.ScaleError`).

    Examples
    --------
    >>> ref = np.full((8, 8, 4), 400, dtype=np.uint16)
    >>> r, f = checked_pair(ref, ref + 1)
    >>> r is ref, f.dtype.name
    (True, 'uint16')
    """
    ref, fus = image_array("reference", reference), image_array("fused", fused)
    check_same_shape("reference", ref, "fused", fus)
    facts = {"reference": image_facts("reference", ref, scale=scale), "fused": image_facts("fused", fus, scale=scale)}
    apply_rules(Evidence(facts, casts=casts, reads=frozenset(facts)))
    return ref, fus

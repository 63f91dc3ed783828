"""The value rules of :mod:`pansharp_iqa.validation` (which decides) applied to a dataset's declared scales: only
the fixes a ``pansharp-eval`` user needs (which ``dataset.toml`` key or flag declares what)."""

from __future__ import annotations

import math

from ..validation import ImageFacts, check_values, factor_hint

__all__ = ["check_input_values", "check_result_values"]

_OVERRIDE = "declare scale_mismatch = 'warn' in dataset.toml (or --scale-mismatch warn) to score it with a warning"


def check_input_values(facts: ImageFacts, *, label: str, bits: int | None, role: str | None = None) -> None:
    """An input image (GT, MS, PAN, in DN after its declared scale ``label``) through the value rules; only a
    ground truth (``role`` "gt" or None) must lie within ``bits`` (a resampled PAN overshoots it legitimately)."""
    if label == "dn":
        fix = ("They are declared as DN (scale = 'dn'): declare scale = 'unit' in dataset.toml (or --input-scale "
               "unit) if they are [0, 1] data.")
    else:
        fix = (f"The declared scale {label!r} leaves them on a unit scale: check 'scale' in dataset.toml (or "
               "--input-scale).")
    multiplier = 1.0 if label == "dn" else float(2**bits - 1) if label == "unit" and bits else _number(label)
    drop = "declare scale = 'dn' in dataset.toml (or --input-scale dn)"
    check_values(reference=facts, bits=bits, dn_what="the evaluation (Q2n)", bits_range=role in (None, "gt"),
                 input_fix=fix, scale=multiplier, drop=drop, bits_fix=f"check 'bits' (at least {{needed}}) and "
                 f"'scale' (now {label!r}) in dataset.toml, or --bits / --input-scale")


def _number(label: str) -> float:
    """A numeric scale label as its multiplier (1 for anything else)."""
    try:
        return float(label)
    except ValueError:
        return 1.0


def check_result_values(fused: ImageFacts, reference: ImageFacts, *, label: str, multiplier: float,
                        bits: int | None, scale_mismatch: str = "raise", method: str | None = None) -> None:
    """A fused result (in DN after its declared scale ``label``) against its reference; with ``method``,
    the fixes name that method's ``method.toml`` (a result's scale is its method's)."""
    where = f"{method}/method.toml (this method only)" if method else None
    override = (f"declare scale_mismatch = 'warn' in {where}, or pass --scale-mismatch warn (every method), to "
                "score it with a warning" if where else _OVERRIDE)
    check_values(test=fused, reference=reference, scale_mismatch=scale_mismatch, override=override,
                 fix=lambda factor: _result_fix(factor, label, multiplier, bits, where))


def _result_fix(factor: float, label: str, multiplier: float, bits: int | None, where: str | None = None) -> str:
    """Which ``result_scale`` fits a result ``factor`` times its reference."""
    stored = multiplier / factor  # the multiplier that would bring the results to the reference's scale
    if bits is not None and abs(math.log(stored / (2.0**bits - 1))) < 0.2:
        value, why = "'unit'", "the results look like [0, 1] data"
    elif abs(math.log(stored)) < 0.2:
        value, why = "'dn'", "the results look like digital numbers"
    else:
        value = f"{stored:.4g}"
        why = f"the results look {factor:.3g} times too {'large' if factor > 1 else 'small'}{factor_hint(factor)}"
    where = where or f"dataset.toml (or --result-scale {value.strip(chr(39))})"
    return (f"The declared result scale {label!r} contradicts the data: declare result_scale = {value} in {where}, "
            f"{why}.")

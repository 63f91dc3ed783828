"""The value rules of :mod:`pansharp_iqa.validation` applied to a dataset's declared scales.

Nothing here is a rule: :func:`pansharp_iqa.validation.check_values` decides, in its one order and
table; this module only supplies the fix a ``pansharp-eval`` user needs (which ``dataset.toml`` key
or flag declares what).
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import ImageFacts, check_values, factor_hint, finite_range, image_facts

__all__ = ["check_finite", "check_input_values", "check_result_values", "input_facts"]

_OVERRIDE = "declare scale_mismatch = 'warn' in dataset.toml (or --scale-mismatch warn) to score it with a warning"


def input_facts(name: str, stored: np.ndarray, multiplier: float) -> ImageFacts:
    """Value summary of stored values brought to DN by ``multiplier`` (NaN/Inf refused).

    Examples
    --------
    >>> input_facts("a_ms.npy", np.full((4, 4, 2), 0.5), 2047.0).hi
    1023.5
    """
    return image_facts(name, stored, scale=multiplier)


def check_finite(array: np.ndarray, *, name: str) -> None:
    """Refuse NaN/Inf in ``array`` (:class:`~pansharp_iqa.validation.NonFiniteError`).

    Examples
    --------
    >>> check_finite(np.array([1.0, 2.0]), name="s.npy")
    """
    finite_range(name, np.asarray(array))  # min/max in row chunks: no copy of a strided view


def check_input_values(facts: ImageFacts, *, label: str, bits: int | None, role: str | None = None) -> None:
    """An input image (GT, MS, PAN, in DN after its declared scale ``label``) through the value rules.

    Only a ground truth (``role`` "gt" or None) must lie within ``bits``: no full-resolution index
    depends on it, and a resampled PAN overshoots it legitimately.

    Examples
    --------
    >>> check_input_values(input_facts("s_gt.npy", np.full((4, 4, 2), 0.4), 1.0), label="dn", bits=11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: s_gt.npy: float data within [0.4, 0.4], a unit scale (reflectance, or [0, 1] values) rather than digital numbers, but the evaluation (Q2n) rounds to integer digital numbers (uint16, as the reference toolbox does), which would collapse these values to a few levels. They are declared as DN (scale = 'dn'): declare scale = 'unit' in dataset.toml (or --input-scale unit) if they are [0, 1] data.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
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
    """A fused result (in DN after its declared scale ``label``) against its reference (GT or MS);
    with ``method``, the fixes name that method's ``method.toml`` (a result's scale is its method's).

    Examples
    --------
    >>> ref = input_facts("s_gt.npy", np.arange(1.0, 65.0).reshape(8, 8, 1) * 30, 1.0)
    >>> fused = input_facts("GSA/s.npy", np.arange(1.0, 65.0).reshape(8, 8, 1) * 30 / 2047, 1.0)
    >>> check_result_values(fused, ref, label="dn", multiplier=1.0, bits=11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: GSA/s.npy is on another scale than s_gt.npy: its values are about 0.000489 times theirs (means 0.476 vs 975, spreads 0.271 vs 554), so every index would measure the factor, not the fusion. The declared result scale 'dn' contradicts the data: declare result_scale = 'unit' in dataset.toml (or --result-scale unit), the results look like [0, 1] data. If the factor is real (the method changes the radiometry), declare scale_mismatch = 'warn' in dataset.toml (or --scale-mismatch warn) to score it with a warning.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    where = f"{method}/method.toml (this method only)" if method else None
    override = (f"declare scale_mismatch = 'warn' in {where} to score it with a warning" if where else _OVERRIDE)
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

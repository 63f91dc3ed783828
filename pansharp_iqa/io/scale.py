"""Declared scales held against the data: the package's value rules, worded for ``pansharp-eval``.

The rules are those of :mod:`pansharp_iqa.validation` (finite values, unit-scale data declared as
DN, DN inputs (not offset data), a ground truth within ``bits``, one scale for the results and their
reference, band by band, results not wrapped around by a uint16 cast); this module
only says how to fix them in a dataset: which ``dataset.toml`` key or flag to change. A declared
scale that contradicts the data is a failure with a reason, never silently "fixed".
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import (
    ImageFacts,
    ScaleError,
    check_bits_range,
    check_dn_range,
    check_finite_facts,
    check_non_negative,
    check_not_wrapped,
    check_scales_agree,
    factor_hint,
    finite_range,
    image_facts,
)

__all__ = ["check_finite", "check_input_values", "check_result_values", "input_facts"]


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
    >>> check_finite(np.array([1.0, np.nan]), name="s.npy")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.NonFiniteError: s.npy: contains 1 non-finite values (NaN/Inf); indexes are undefined there. Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window).
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    finite_range(name, np.asarray(array))  # min/max in row chunks: no copy of a strided view


def check_input_values(facts: ImageFacts, *, label: str, bits: int | None, role: str | None = None) -> None:
    """An input image (GT, MS, PAN) against its declared scale ``label`` and ``bits``.

    Parameters
    ----------
    facts : ImageFacts
        In DN (stored values times the declared multiplier).
    label : str
        Declared scale (``"dn"``, ``"unit"`` or a number).
    bits : int
    role : {"gt", "ms", "pan"}, optional
        The image's role: only a ground truth (an original product at reduced resolution) must lie
        within ``bits``; no full-resolution index depends on ``bits`` (a resampled PAN, e.g. from
        ``pansharp-eval degrade``, overshoots it legitimately). ``None``: checked as a ground truth.

    Raises
    ------
    InputError
        NaN/Inf, float data on a unit scale, offset or standardised data, or a ground truth above
        ``2**bits - 1`` (wrong ``bits`` or ``scale``).

    Examples
    --------
    >>> check_input_values(input_facts("s_gt.npy", np.full((4, 4, 2), 0.4), 1.0), label="dn", bits=11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: s_gt.npy: float data within [0.4, 0.4], a unit scale (reflectance, or [0, 1] values) rather than digital numbers, but the evaluation (Q2n) rounds to integer digital numbers (uint16, as the reference toolbox does), which would collapse these values to a few levels. They are declared as DN (scale = 'dn'): declare scale = 'unit' in dataset.toml (or --input-scale unit) if they are [0, 1] data.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    check_finite_facts(facts)
    if label == "dn":
        fix = ("They are declared as DN (scale = 'dn'): declare scale = 'unit' in dataset.toml (or --input-scale "
               "unit) if they are [0, 1] data.")
    else:
        fix = (f"The declared scale {label!r} leaves them on a unit scale: check 'scale' in dataset.toml "
               "(or --input-scale).")
    check_dn_range(facts, what="the evaluation (Q2n)", fix=fix, bits=bits)
    check_non_negative(facts, fix="Inputs are digital numbers: store the sensor's DN, not standardised or offset data.")
    if role not in (None, "gt"):
        return
    multiplier = _multiplier(label, bits)
    peak = 2**bits - 1
    if multiplier != 1.0 and facts.hi > peak * (1 + 1e-6) and facts.hi / multiplier <= peak * (1 + 1e-6):
        raise ScaleError(
            f"{facts.name}: maximum {facts.hi:g} after the declared scale {label!r} exceeds the {bits}-bit range "
            f"[0, {peak}], while the stored values (maximum {facts.hi / multiplier:g}) fit it: they already are "
            "digital numbers; declare scale = 'dn' in dataset.toml (or --input-scale dn)"
        )
    check_bits_range(facts, bits, fix=f"check 'bits' (at least {{needed}}) and 'scale' (now {label!r}) in "
                                      "dataset.toml, or --bits / --input-scale")


def _multiplier(label: str, bits: int) -> float:
    if label == "dn":
        return 1.0
    if label == "unit":
        return float(2**bits - 1)
    try:
        return float(label)
    except ValueError:
        return 1.0


def check_result_values(fused: ImageFacts, reference: ImageFacts, *, label: str, multiplier: float,
                        bits: int | None, scale_mismatch: str = "raise") -> None:
    """A fused result, brought to DN by its declared scale, against its reference (GT or MS).

    Parameters
    ----------
    fused, reference : ImageFacts
        In DN.
    label : str
        Declared result scale, for the message.
    multiplier : float
        Its stored-to-DN multiplier.
    bits : int
    scale_mismatch : {"raise", "warn"}
        ``"warn"``: a result on another scale is scored with a warning (``--scale-mismatch warn``).

    Raises
    ------
    InputError
        NaN/Inf, negative values wrapped around by a uint16 cast, or a result (or some of its bands)
        on another scale than its reference; the message names the ``result_scale`` that fits the
        data (``'unit'``, ``'dn'`` or a number) when the whole result is off.

    Examples
    --------
    >>> ref = input_facts("s_gt.npy", np.arange(1.0, 65.0).reshape(8, 8, 1) * 30, 1.0)
    >>> fused = input_facts("GSA/s.npy", np.arange(1.0, 65.0).reshape(8, 8, 1) * 30 / 2047, 1.0)
    >>> check_result_values(fused, ref, label="dn", multiplier=1.0, bits=11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: GSA/s.npy is on another scale than s_gt.npy: its values are about 0.000489 times theirs (means 0.476 vs 975, spreads 0.271 vs 554), so every index would measure the factor, not the fusion. The declared result scale 'dn' contradicts the data: declare result_scale = 'unit' in dataset.toml (or --result-scale unit), the results look like [0, 1] data.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    check_finite_facts(fused)
    check_not_wrapped(fused, reference)
    check_scales_agree(fused, reference, fix=lambda factor: _result_fix(factor, label, multiplier, bits),
                       policy=scale_mismatch, override="declare scale_mismatch = 'warn' in dataset.toml (or "
                                                          "--scale-mismatch warn) to score it with a warning")


def _result_fix(factor: float, label: str, multiplier: float, bits: int | None) -> str:
    stored = multiplier / factor  # the multiplier that would bring the results to the reference's scale
    if bits is not None and abs(math.log(stored / (2.0**bits - 1))) < 0.2:
        value, why = "'unit'", "the results look like [0, 1] data"
    elif abs(math.log(stored)) < 0.2:
        value, why = "'dn'", "the results look like digital numbers"
    else:
        value, why = f"{stored:.4g}", f"the results look {factor:.3g} times too {'large' if factor > 1 else 'small'}" \
                                      f"{factor_hint(max(factor, 1 / factor))}"
    return (f"The declared result scale {label!r} contradicts the data: declare result_scale = {value} in "
            f"dataset.toml (or --result-scale {value.strip(chr(39))}), {why}.")

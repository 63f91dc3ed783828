"""The value rules of :mod:`pansharp_iqa.rules` (which decides) applied to a dataset's declared scales, in the words
of a ``pansharp-eval`` user (which ``dataset.toml`` key or flag declares what)."""

from __future__ import annotations

from ..rules import Declarations, Evidence, Wording, apply_rules
from ..validation import ImageFacts

__all__ = ["check_input_values", "check_result_values", "cli_wording"]


def cli_wording(method: str | None = None) -> Wording:
    """The words of ``pansharp-eval`` (a result's scale is its method's, with ``method``)."""
    where = f"{method}/method.toml (this method only)" if method else None
    override = (f"declare scale_mismatch = 'warn' in {where}, or pass --scale-mismatch warn (every method), to score "
                "it with a warning" if where else "declare scale_mismatch = 'warn' in dataset.toml (or "
                "--scale-mismatch warn) to score it with a warning")
    result = ("result_scale", f"{where or 'dataset.toml'} (or --result-scale)")
    inputs = ("scale", "dataset.toml (or --input-scale)")
    return Wording(override, {"fused": result, "reference": inputs, "pan": inputs})


def check_input_values(facts: ImageFacts, *, label: str, bits: int | None, role: str | None = None) -> None:
    """An input image (GT, MS, PAN, in DN after its declared scale ``label``) through the value rules; only a
    ground truth (``role`` "gt" or None) must lie within ``bits`` (a resampled PAN overshoots it legitimately)."""
    multiplier = 1.0 if label == "dn" else float(2**bits - 1) if label == "unit" and bits else _number(label)
    declared = Declarations().with_value("reference", "scale", multiplier,
                                         f"dataset.toml scale = {label!r} (or --input-scale)")
    if bits is not None:
        declared = declared.with_value("all", "bits", bits, "dataset.toml bits (or --bits)")
    apply_rules(Evidence({"reference": facts}, declared, bits, frozenset({"reference"}), True, role in (None, "gt"),
                         wording=cli_wording()))


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
    declared = Declarations().with_value("fused", "scale", multiplier, f"result_scale = {label!r}")
    apply_rules(Evidence({"fused": fused, "reference": reference}, declared, bits, frozenset({"fused", "reference"}),
                         policy=scale_mismatch, wording=cli_wording(method)))

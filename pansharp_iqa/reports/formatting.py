"""Number formatting shared by the table writers (one rule, so all reports agree)."""

from __future__ import annotations

import math

__all__ = ["DIGITS", "format_value", "format_p", "direction_arrow"]

#: Decimals printed for every index (the toolbox's tables use 4).
DIGITS = 4


def format_value(mean: float, std: float, n: float, *, pm: str) -> str:
    """``"mean pm std"`` with :data:`DIGITS` decimals; ``"-"`` when no scene succeeded."""
    if n == 0 or not math.isfinite(mean):
        return "-"
    if n == 1:
        return f"{mean:.{DIGITS}f}"
    return f"{mean:.{DIGITS}f}{pm}{std:.{DIGITS}f}"


def format_p(p: float | None) -> str:
    """A p-value: 3 decimals, 2 significant digits below 0.001, ``"-"`` when not tested.

    Examples
    --------
    >>> format_p(0.0421), format_p(2.3e-05), format_p(None), format_p(float("nan"))
    ('0.042', '2.3e-05', '-', '-')
    """
    if p is None or not math.isfinite(p):
        return "-"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def direction_arrow(direction: int | None, *, up: str, down: str) -> str:
    """Arrow telling whether higher (``up``) or lower (``down``) is better."""
    if direction is None:
        return ""
    return up if direction > 0 else down

"""Number formatting shared by the table writers (one rule, so all reports agree)."""

from __future__ import annotations

import math

__all__ = ["DIGITS", "format_value", "direction_arrow"]

#: Decimals printed for every index (the toolbox's tables use 4).
DIGITS = 4


def format_value(mean: float, std: float, n: int, *, pm: str) -> str:
    """``"mean pm std"`` with :data:`DIGITS` decimals; ``"-"`` when no scene succeeded."""
    if n == 0 or not math.isfinite(mean):
        return "-"
    if n == 1:
        return f"{mean:.{DIGITS}f}"
    return f"{mean:.{DIGITS}f}{pm}{std:.{DIGITS}f}"


def direction_arrow(direction: int | None, *, up: str, down: str) -> str:
    """Arrow telling whether higher (``up``) or lower (``down``) is better."""
    if direction is None:
        return ""
    return up if direction > 0 else down

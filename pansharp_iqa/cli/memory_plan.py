"""The terminal's account of the path each scene took (in memory or tile by tile).

The choice itself is the library's one rule, :func:`pansharp_iqa.tiled.plan.choose_path` (the same
rule ``tiled="auto"`` applies to arrays); the command line gives it the scene's shape from the file
headers, the memory available and ``--jobs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..tiled.plan import (
    IN_MEMORY_BASE_BYTES,
    IN_MEMORY_BYTES_PER_SAMPLE,
    MEMORY_FRACTION,
    TILED_FASTER_SAMPLES,
    PathChoice,
    choose_path,
    estimate_in_memory_bytes,
)

__all__ = [
    "IN_MEMORY_BASE_BYTES", "IN_MEMORY_BYTES_PER_SAMPLE", "MEMORY_FRACTION", "PathChoice",
    "TILED_FASTER_SAMPLES", "TILE_SIZE", "choose_path", "estimate_in_memory_bytes", "format_bytes", "path_summary",
]

#: Tile side (pixels) of tile-wise evaluations (measured against the engine's default 512: docs/cli.md).
TILE_SIZE = 384


def format_bytes(n: int) -> str:
    """``1.5 GB`` / ``268 MB`` (powers of 1024).

    Examples
    --------
    >>> format_bytes(5_583_457_484), format_bytes(268 * 2**20)
    ('5.2 GB', '268 MB')
    """
    if n >= 2**30:
        return f"{n / 2**30:.1f} GB"
    return f"{n / 2**20:.0f} MB"


def _names(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... (+{len(items) - limit} more)" if len(items) > limit else "")


def path_summary(outcomes: Sequence[Any]) -> list[str]:
    """Terminal lines saying which scenes were evaluated in memory and which tile-wise, and why."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for o in outcomes:
        card = o.protocol or {}
        if o.status != "ok" or "evaluation_path" not in card:
            continue
        key = (card["evaluation_path"], card.get("evaluation_path_why", ""))
        g = groups.setdefault(key, {"scenes": [], "n": 0, "estimate": None, "budget": None})
        g["n"] += 1
        if o.scene not in g["scenes"]:
            g["scenes"].append(o.scene)
        est, budget = card.get("in_memory_estimate_bytes"), getattr(o, "memory_budget", None)
        if est is not None:
            g["estimate"] = max(est, g["estimate"] or 0)
        if budget is not None:
            g["budget"] = budget if g["budget"] is None else min(budget, g["budget"])
    lines = []
    for (path, why), g in groups.items():
        figures = []
        if g["estimate"] is not None:  # a budget means nothing without an estimate to compare
            figures.append(f"in-memory estimate up to {format_bytes(g['estimate'])}")
            if g["budget"] is not None:
                figures.append(f"budget {format_bytes(g['budget'])}")
        detail = why + (f": {', '.join(figures)}" if figures else "")
        label = "in memory" if path == "in-memory" else path
        lines.append(f"pansharp-eval: {label}: {_names(g['scenes'])} ({g['n']} evaluation"
                     f"{'s' if g['n'] != 1 else ''}; {detail})")
    return lines

"""Plain-text table for the terminal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .formatting import direction_arrow, format_value
from .summary import METRIC_DIRECTIONS, Summary

__all__ = ["render_table"]


def render_table(summary: Summary, failures: Sequence[Mapping[str, Any]] = (), *, title: str = "") -> str:
    """Render mean +- std per method and index; the best value per column carries a ``*``.

    Parameters
    ----------
    summary : Summary
        From :func:`~.summary.summarise`.
    failures : sequence of mapping
        Failed records (``scene``, ``method``, ``reason``), listed under the table.
    title : str
        First line.

    Returns
    -------
    str
        The table (ASCII only, so it prints on any console).
    """
    header = ["method", "ok"] + [
        f"{m}{direction_arrow(METRIC_DIRECTIONS.get(m), up=' (+)', down=' (-)')}" for m in summary.metrics
    ]
    rows = []
    for method in summary.methods:
        c = summary.counts[method]
        row = [summary.label(method), f"{c['ok']}/{c['ok'] + c['failed']}"]
        for metric in summary.metrics:
            s = summary.stats[method][metric]
            cell = format_value(s["mean"], s["std"], s["n"], pm=" +- ")
            row.append(cell + (" *" if method in summary.best.get(metric, ()) else "  "))
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [title] if title else []

    def fmt(r: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))

    lines.append(fmt(header))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(fmt(r) for r in rows)
    lines.append("(+) higher is better, (-) lower is better; * best mean; +- sample std over scenes")
    if summary.legend():
        lines.append(summary.legend())
    if failures:
        lines.append(f"FAILED ({len(failures)}):")
        lines.extend(f"  {f['scene']} / {f['method']}: {f['reason']}" for f in failures)
    return "\n".join(lines)

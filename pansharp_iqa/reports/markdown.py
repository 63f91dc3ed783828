"""``results.md``: the summary table in GitHub Markdown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .formatting import direction_arrow, format_value
from .summary import METRIC_DIRECTIONS, Summary

__all__ = ["render_markdown"]


def render_markdown(
    summary: Summary, failures: Sequence[Mapping[str, Any]] = (), *, title: str = "", notes: Sequence[str] = ()
) -> str:
    """Markdown table (best mean per column in bold) followed by notes and failures.

    Parameters
    ----------
    summary : Summary
    failures : sequence of mapping
        Failed records (``scene``, ``method``, ``reason``).
    title : str
        Heading.
    notes : sequence of str
        Lines printed under the table (protocol, sensor, ...).

    Returns
    -------
    str
    """
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    head = ["Method"] + [
        f"{m} {direction_arrow(METRIC_DIRECTIONS.get(m), up='↑', down='↓')}".strip() for m in summary.metrics
    ]
    lines = [f"# {title}", ""] if title else []
    lines.append("| " + " | ".join(esc(h) for h in head) + " |")
    lines.append("|" + "|".join(["---"] + [":---:"] * len(summary.metrics)) + "|")
    for method in summary.methods:
        cells = [esc(method)]
        for metric in summary.metrics:
            s = summary.stats[method][metric]
            cell = format_value(s["mean"], s["std"], s["n"], pm=" ± ")
            cells.append(f"**{cell}**" if method in summary.best.get(metric, ()) and cell != "-" else cell)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Mean ± sample standard deviation over scenes; best mean in bold.")
    lines.extend(f"{n}" for n in notes)
    if failures:
        lines += ["", f"## Failures ({len(failures)})", ""]
        lines.extend(f"- `{esc(f['scene'])}` / `{esc(f['method'])}`: {esc(f['reason'])}" for f in failures)
    return "\n".join(lines) + "\n"

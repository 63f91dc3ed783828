"""``results.md``: the summary table in GitHub Markdown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .formatting import DIGITS, direction_arrow, format_p, format_value
from .stats import ALPHA, IndexStatistics, method_note
from .summary import METRIC_DIRECTIONS, Summary

__all__ = ["render_markdown"]


def _statistics_lines(statistics: Mapping[str, IndexStatistics], n_scenes: int, summary: Summary) -> list[str]:
    lines = ["", "## Statistics across scenes", ""]
    if not statistics:
        why = summary.untested_reason(n_scenes)
        return [*lines, f"No statistics across scenes: {why}."]
    lines.append(method_note())
    for metric, st in statistics.items():
        arrow = "higher is better" if st.direction > 0 else "lower is better"
        lines += ["", f"### {metric} ({arrow}; best: {st.best})", ""]
        if st.friedman is not None:
            lines.append(f"Friedman chi2 = {st.friedman['statistic']:.3f}, p = {format_p(st.friedman['p'])}. "
                         f"{st.note}.")
        else:
            lines.append(f"{st.note}.")
        lines += ["", "| Method | mean rank | mean diff. vs best | 95 % CI | p (Holm) | verdict |",
                  "|---|:---:|:---:|:---:|:---:|---|",
                  f"| {st.best} | {st.mean_rank[st.best]:.2f} | 0 | - | - | best |"]
        for c in st.comparisons:
            ci = f"[{c.ci95[0]:.{DIGITS}f}, {c.ci95[1]:.{DIGITS}f}]" if c.ci95 else "-"
            lines.append(f"| {c.method} | {st.mean_rank[c.method]:.2f} | {c.mean_difference:.{DIGITS}f} | {ci} | "
                         f"{format_p(c.p_holm)} | {c.verdict} |")
    return lines


def render_markdown(
    summary: Summary,
    failures: Sequence[Mapping[str, Any]] = (),
    *,
    title: str = "",
    notes: Sequence[str] = (),
    statistics: Mapping[str, IndexStatistics] | None = None,
    n_scenes: int = 0,
) -> str:
    """Markdown table (best mean per column in bold) followed by notes, statistics and failures.

    Parameters
    ----------
    summary : Summary
        Statistics of the evaluation (:func:`summarise`).
    failures : sequence of mapping
        Failed records (``scene``, ``method``, ``reason``).
    title : str
        Heading.
    notes : sequence of str
        Lines printed under the table (protocol, sensor, ...).
    statistics : mapping of str to IndexStatistics, optional
        From ``reports.stats.compare_methods``: adds the "Statistics across scenes" section and marks
        with ``≈`` the methods not distinguishable from the best. ``None``: no section.
    n_scenes : int
        Scenes in the run (explains an empty ``statistics``).

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
        cells = [esc(summary.label(method))]
        for metric in summary.metrics:
            s = summary.stats[method][metric]
            cell = format_value(s["mean"], s["std"], s["n"], pm=" ± ")
            best = method in summary.best.get(metric, ()) and cell != "-"
            st = (statistics or {}).get(metric)
            tie = bool(st and not best and method in st.not_distinguishable())
            cells.append(f"**{cell}**" if best else f"{cell} ≈" if tie else cell)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Mean ± sample standard deviation over scenes; best mean in bold"
                 + (f"; ≈ not distinguishable from the best (Holm-corrected Wilcoxon p ≥ {ALPHA})."
                    if any(st.tested for st in (statistics or {}).values()) else "."))
    lines.extend([summary.legend()] if summary.legend() else [])
    lines.extend(f"{n}" for n in notes)
    if statistics is not None:
        lines += _statistics_lines(statistics, n_scenes, summary)
    if failures:
        lines += ["", f"## Failures ({len(failures)})", ""]
        lines.extend(f"- `{esc(f['scene'])}` / `{esc(f['method'])}`: {esc(f['reason'])}" for f in failures)
    return "\n".join(lines) + "\n"

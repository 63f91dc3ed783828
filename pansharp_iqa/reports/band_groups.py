"""Per-band values in the human-readable reports: one table per index, a column per band group.

A hyperspectral cube has hundreds of bands: a column per band would make tables nobody reads. The
bands are cut into at most :data:`MAX_GROUPS` contiguous groups of (nearly) equal size, each column
the mean of its bands' values (and over scenes, NaN skipped). ``per_band.csv`` keeps every band of
every pair and ``--plots`` draws every band (``plots/per_band_<index>.png``).
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .formatting import DIGITS

__all__ = ["MAX_GROUPS", "band_groups", "group_means", "markdown_per_band", "html_per_band"]

#: Columns of a per-band table at most: more bands are grouped.
MAX_GROUPS = 10

_INTRO = ("Each index's value per band where it has one (ERGAS's band terms, Q, CC, R-ERGAS, D_rho), "
          "the mean over scenes (NaN skipped); bands are numbered from 1 and grouped into contiguous groups "
          f"of nearly equal size when there are more than {MAX_GROUPS}, each column the mean of its group. "
          "per_band.csv has every band of every pair.")


def band_groups(n_bands: int, *, max_groups: int = MAX_GROUPS) -> list[tuple[int, int]]:
    """Contiguous groups of bands, 1-based and inclusive: each band alone up to ``max_groups`` bands.

    Parameters
    ----------
    n_bands : int
        Bands of the images.
    max_groups : int, default :data:`MAX_GROUPS`
        Groups at most; the first ``n_bands % max_groups`` groups hold one band more.

    Returns
    -------
    list of (int, int)
        ``(first, last)`` band numbers of each group.

    Examples
    --------
    >>> band_groups(4)
    [(1, 1), (2, 2), (3, 3), (4, 4)]
    >>> band_groups(23, max_groups=5)
    [(1, 5), (6, 10), (11, 15), (16, 19), (20, 23)]
    """
    n = max(int(n_bands), 0)
    k = min(n, int(max_groups))
    sizes = [n // k + (i < n % k) for i in range(k)] if k else []
    edges = np.cumsum([0, *sizes])
    return [(int(a) + 1, int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def group_means(records: Sequence[Mapping[str, Any]], methods: Sequence[str]
                ) -> dict[str, dict[str, tuple[list[tuple[int, int]], list[float]]]]:
    """Per index and method: the band groups and each group's mean over its bands and the scenes.

    Parameters
    ----------
    records : sequence of mapping
        The run's records (``method`` and, where computed, ``per_band``: index -> one value per band).
    methods : sequence of str
        Methods in table order.

    Returns
    -------
    dict
        ``{index: {method: (groups, means)}}``; a group whose values are all NaN has a NaN mean.

    Examples
    --------
    >>> recs = [{"method": "a", "per_band": {"Q": [0.5, 0.7]}}, {"method": "a", "per_band": {"Q": [0.7, float("nan")]}}]
    >>> group_means(recs, ["a"])["Q"]["a"]
    ([(1, 1), (2, 2)], [0.6, 0.7])
    """
    out: dict[str, dict[str, tuple[list[tuple[int, int]], list[float]]]] = {}
    names = list(dict.fromkeys(k for r in records for k in (r.get("per_band") or {})))
    for name in names:
        for m in methods:
            rows = [np.asarray(r["per_band"][name], dtype=np.float64) for r in records
                    if r.get("method") == m and name in (r.get("per_band") or {})]
            if not rows or len({len(v) for v in rows}) != 1:
                continue
            values = np.stack(rows)
            groups = band_groups(values.shape[1])
            with warnings.catch_warnings():  # an all-NaN group is NaN, without numpy's empty-slice warning
                warnings.simplefilter("ignore", RuntimeWarning)
                means = [float(np.nanmean(values[:, a - 1 : b])) for a, b in groups]
            out.setdefault(name, {})[m] = (groups, means)
    return out


def _label(group: tuple[int, int]) -> str:
    """A column's label: the band, or the group's first and last band."""
    a, b = group
    return f"band {a}" if a == b else f"bands {a}-{b}"


def _tables(records: Sequence[Mapping[str, Any]], methods: Sequence[str]
            ) -> list[tuple[str, list[str], list[list[str]]]]:
    """(index, column labels, rows of cells) of each per-band table."""
    tables = []
    for name, by_method in group_means(records, methods).items():
        groups = next(iter(by_method.values()))[0]
        rows = [[m, *(f"{v:.{DIGITS}f}" if np.isfinite(v) else "-" for v in means)]
                for m, (g, means) in by_method.items() if g == groups]
        tables.append((name, [_label(g) for g in groups], rows))
    return tables


def markdown_per_band(records: Sequence[Mapping[str, Any]], methods: Sequence[str]) -> str:
    """The ``results.md`` section of the per-band values (empty when no record has any).

    Parameters
    ----------
    records : sequence of mapping
        The run's records.
    methods : sequence of str
        Methods in table order.

    Returns
    -------
    str

    Examples
    --------
    >>> print(markdown_per_band([{"method": "a", "per_band": {"Q": [0.5, 0.75]}}], ["a"]).strip())  # doctest: +ELLIPSIS
    ## Per band (mean over scenes)
    <BLANKLINE>
    Each index's value per band ...
    <BLANKLINE>
    ### Q
    <BLANKLINE>
    | Method | band 1 | band 2 |
    |---|:---:|:---:|
    | a | 0.5000 | 0.7500 |
    """
    tables = _tables(records, methods)
    if not tables:
        return ""
    lines = ["", "## Per band (mean over scenes)", "", _INTRO]
    for name, labels, rows in tables:
        lines += ["", f"### {name}", "", "| Method | " + " | ".join(labels) + " |",
                  "|---" + "|:---:" * len(labels) + "|"]
        lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines) + "\n"


def html_per_band(records: Sequence[Mapping[str, Any]], methods: Sequence[str]) -> str:
    """The ``report.html`` section of the per-band values (empty when no record has any).

    Parameters
    ----------
    records : sequence of mapping
        The run's records.
    methods : sequence of str
        Methods in table order.

    Returns
    -------
    str

    Examples
    --------
    >>> "<th>band 2</th>" in html_per_band([{"method": "a", "per_band": {"Q": [0.5, 0.75]}}], ["a"])
    True
    """
    tables = _tables(records, methods)
    if not tables:
        return ""
    e = html.escape
    parts = ["<h2>Per band (mean over scenes)</h2>", f"<p class='note'>{e(_INTRO)}</p>"]
    for name, labels, rows in tables:
        head = "".join(f"<th>{e(c)}</th>" for c in ["Method", *labels])
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>" for cells in rows)
        parts.append(f"<h3>{e(name)}</h3><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)

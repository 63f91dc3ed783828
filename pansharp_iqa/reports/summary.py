"""Per-method statistics over scenes, and which method is best for each index.

Fair comparison: means are compared only over the scenes every compared method has. The
*compared scenes* are those at least one method evaluated; a method evaluated on all of them is
*complete*, the others are *incomplete* (``k/N``): their means are shown (over their own scenes)
but they get no best mark and no rank, and the statistics across scenes leave them out, so a
missing scene of one method costs the others nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..indexes.catalog import INDEXES

__all__ = ["METRIC_DIRECTIONS", "Summary", "best_and_ranks", "metric_order", "summarise"]

#: +1: higher is better, -1: lower is better, for every declared index (:mod:`pansharp_iqa.indexes.catalog`).
METRIC_DIRECTIONS: dict[str, int] = {i.name: i.direction for i in INDEXES}


def metric_order(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Index names in the order the core returned them (first successful record first)."""
    order: list[str] = []
    for rec in records:
        for key in rec.get("metrics") or {}:
            if key not in order:
                order.append(key)
    return order


@dataclasses.dataclass
class Summary:
    """Statistics of one evaluation.

    Parameters
    ----------
    methods : list of str
        Methods in report order.
    metrics : list of str
        Index names in report order.
    stats : dict
        ``stats[method][metric] = {"mean", "std", "n"}`` over the scenes where the index is
        finite; ``std`` is the sample standard deviation (N - 1 normalisation, as MATLAB's
        ``std``; NaN, undefined, for one scene).
    counts : dict
        ``counts[method] = {"ok": int, "failed": int}``.
    best : dict
        ``best[metric]`` = complete methods whose mean is best (ties all listed; empty for indexes
        of unknown direction).
    complete : list of str
        Methods evaluated on every compared scene (the only ones marked best and ranked).
    n_scenes : int
        Compared scenes (those at least one method was evaluated on).
    ranks : dict
        ``ranks[metric][method]``: 1 = best mean among the complete methods (ties share the
        smaller rank); incomplete methods are absent.
    """

    methods: list[str]
    metrics: list[str]
    stats: dict[str, dict[str, dict[str, float]]]
    counts: dict[str, dict[str, int]]
    best: dict[str, list[str]]
    complete: list[str] = dataclasses.field(default_factory=list)
    n_scenes: int = 0
    ranks: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)

    def incomplete(self, method: str) -> str | None:
        """``"k/N"`` (scenes evaluated / compared) for an incomplete method, else ``None``.

        Parameters
        ----------
        method : str
            A method of the run.

        Returns
        -------
        str or None
            ``"k/N"``, or ``None`` for a complete method.
        """
        if method in self.complete:
            return None
        return f"{self.counts[method]['ok']}/{self.n_scenes}"

    def label(self, method: str) -> str:
        """The method's name, with ``(incomplete k/N)`` for an incomplete one.

        Parameters
        ----------
        method : str
            A method of the run.

        Returns
        -------
        str
            The label of its row.
        """
        k = self.incomplete(method)
        return method if k is None else f"{method} (incomplete {k})"

    def untested_reason(self, n_scenes: int) -> str:
        """Why the run has no statistics across scenes.

        Parameters
        ----------
        n_scenes : int
            Scenes compared.

        Returns
        -------
        str
            The reason, for the reports.
        """
        from .stats import no_statistics_reason

        if n_scenes >= 2 and len(self.complete) < 2 <= len(self.methods):
            return "fewer than 2 methods were evaluated on every scene (incomplete methods are not tested)"
        return no_statistics_reason(n_scenes)

    def legend(self) -> str:
        """The sentence explaining the incomplete marks ("" when every method is complete)."""
        if len(self.complete) == len(self.methods):
            return ""
        return (f"Incomplete (k/{self.n_scenes}): evaluated on k of the {self.n_scenes} compared scenes; its mean is "
                "over those, and it gets no best mark, rank or test.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (``None`` for an undefined mean or std)."""
        def clean(x: float) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            m: {
                "scenes_ok": self.counts[m]["ok"],
                "scenes_failed": self.counts[m]["failed"],
                "complete": m in self.complete,
                "ranks": {k: r[m] for k, r in self.ranks.items() if m in r},
                **{
                    k: {"mean": clean(v["mean"]), "std": clean(v["std"]), "n": int(v["n"])}
                    for k, v in self.stats[m].items()
                },
            }
            for m in self.methods
        } | {"best": {k: list(v) for k, v in self.best.items()}, "scenes_compared": self.n_scenes}


def summarise(records: Sequence[Mapping[str, Any]], methods: Sequence[str]) -> Summary:
    """Mean and standard deviation per method and index over the successful scenes.

    Parameters
    ----------
    records : sequence of mapping
        One per (scene, method): ``method``, ``status`` and ``metrics`` (index -> float).
    methods : sequence of str
        Report order of the methods.

    Returns
    -------
    Summary
    """
    metrics = metric_order([r for r in records if r.get("status") == "ok"])
    stats: dict[str, dict[str, dict[str, float]]] = {}
    counts: dict[str, dict[str, int]] = {}
    for method in methods:
        mine = [r for r in records if r["method"] == method]
        ok = [r for r in mine if r.get("status") == "ok"]
        counts[method] = {"ok": len(ok), "failed": len(mine) - len(ok)}
        stats[method] = {}
        for metric in metrics:
            values = np.array([r["metrics"][metric] for r in ok if metric in r["metrics"]], float)  # None: NaN
            values = values[np.isfinite(values)]  # an undefined index (NaN) does not enter the statistics
            n = int(values.size)
            mean = float(values.mean()) if n else math.nan
            std = float(values.std(ddof=1)) if n > 1 else math.nan  # undefined for one scene
            stats[method][metric] = {"mean": mean, "std": std, "n": n}
    compared = {r["scene"] for r in records if r.get("status") == "ok" and "scene" in r}
    complete = [m for m in methods
                if compared <= {r["scene"] for r in records if r["method"] == m and r.get("status") == "ok"}]
    best, ranks = {}, {}
    for metric in metrics:
        best[metric], ranks[metric] = best_and_ranks({m: stats[m][metric]["mean"] for m in complete}, metric)
    return Summary(list(methods), metrics, stats, counts, best, complete, len(compared), ranks)


def best_and_ranks(means: Mapping[str, float], metric: str) -> tuple[list[str], dict[str, int]]:
    """The methods with the best mean of ``metric`` and every method's rank (1 = best, ties share
    the smaller rank); none for an index of unknown direction or an undefined mean.

    Examples
    --------
    >>> best_and_ranks({"A": 0.9, "B": 0.8, "C": 0.9}, "Q2n")
    (['A', 'C'], {'A': 1, 'B': 3, 'C': 1})
    """
    sign = METRIC_DIRECTIONS.get(metric)
    finite = {m: float(v) for m, v in means.items() if v is not None and math.isfinite(v)}
    if sign is None or not finite:
        return [], {}
    ranks = {m: 1 + sum(sign * (w - v) > 0 for w in finite.values()) for m, v in finite.items()}
    return [m for m, r in ranks.items() if r == 1], ranks

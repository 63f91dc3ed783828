"""Per-method statistics over scenes, and which method is best for each index."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..indexes.catalog import INDEXES

__all__ = ["METRIC_DIRECTIONS", "Summary", "metric_order", "summarise"]

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
        ``best[metric]`` = methods whose mean is best (ties all listed; empty for indexes of
        unknown direction).
    """

    methods: list[str]
    metrics: list[str]
    stats: dict[str, dict[str, dict[str, float]]]
    counts: dict[str, dict[str, int]]
    best: dict[str, list[str]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (``None`` for an undefined mean or std)."""
        def clean(x: float) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            m: {
                "scenes_ok": self.counts[m]["ok"],
                "scenes_failed": self.counts[m]["failed"],
                **{
                    k: {"mean": clean(v["mean"]), "std": clean(v["std"]), "n": int(v["n"])}
                    for k, v in self.stats[m].items()
                },
            }
            for m in self.methods
        } | {"best": {k: list(v) for k, v in self.best.items()}}


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
            values = np.array([float(r["metrics"][metric]) for r in ok if metric in r["metrics"]], float)
            values = values[np.isfinite(values)]  # an undefined index (NaN) does not enter the statistics
            n = int(values.size)
            mean = float(values.mean()) if n else math.nan
            std = float(values.std(ddof=1)) if n > 1 else math.nan  # undefined for one scene
            stats[method][metric] = {"mean": mean, "std": std, "n": n}
    best: dict[str, list[str]] = {}
    for metric in metrics:
        sign = METRIC_DIRECTIONS.get(metric)
        means = {m: stats[m][metric]["mean"] for m in methods if math.isfinite(stats[m][metric]["mean"])}
        if sign is None or not means:
            best[metric] = []
            continue
        target = max(means.values()) if sign > 0 else min(means.values())
        best[metric] = [m for m, v in means.items() if v == target]
    return Summary(list(methods), metrics, stats, counts, best)

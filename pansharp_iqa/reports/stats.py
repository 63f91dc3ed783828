"""Statistics across scenes: is a method's lead over another more than scene-to-scene noise?

For each index (direction from :func:`pansharp_iqa.indexes.catalog.direction`), over the scenes
where every method has a finite value (a complete block design):

* **mean rank** of each method (1 = best on a scene, ties share the average rank);
* **Friedman test** over the methods (``scipy.stats.friedmanchisquare``; needs 3 or more methods);
* for every method against the **best** one (best mean over those scenes), a paired two-sided
  **Wilcoxon signed-rank test** (``scipy.stats.wilcoxon`` with its defaults: zero differences
  dropped, exact distribution for small samples without ties) with **Holm**-corrected p-values
  over the comparisons of that index, and a **bootstrap 95 % confidence interval** of the mean
  difference (method - best, index units): percentile interval of :data:`N_RESAMPLES` resamples
  of the scenes with replacement, random generator seeded with :data:`SEED`, so a report is
  reproducible.

A method is *not distinguishable from the best* when its Holm-corrected p-value is at least
:data:`ALPHA`. With fewer than :data:`MIN_SCENES` scenes the tests cannot reach significance
(the smallest two-sided exact Wilcoxon p-value with 5 scenes is 2/32 = 0.0625) and no p-value or
interval is reported: the report says the tests have little power instead.

References
----------
Demsar, "Statistical comparisons of classifiers over multiple data sets", JMLR 7, 2006 (Friedman
test and mean ranks over data sets; Wilcoxon signed-rank for pairs). Holm, "A simple sequentially
rejective multiple test procedure", Scand. J. Statist. 6(2), 1979. Efron & Tibshirani, "An
Introduction to the Bootstrap", 1993 (percentile interval).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..indexes.catalog import direction as index_direction

__all__ = [
    "method_note", "no_statistics_reason",
    "ALPHA", "MIN_SCENES", "N_RESAMPLES", "SEED",
    "Comparison", "IndexStatistics", "bootstrap_ci", "compare_methods", "holm", "mean_ranks", "statistics_to_dict",
]

#: Significance level of the "not distinguishable from the best" mark.
ALPHA = 0.05
#: Fewest scenes for which p-values and intervals are reported.
MIN_SCENES = 6
#: Bootstrap resamples of the confidence intervals.
N_RESAMPLES = 10_000
#: Seed of the bootstrap's random generator (numpy ``default_rng``).
SEED = 0


@dataclasses.dataclass(frozen=True)
class Comparison:
    """One method against the best one, on one index.

    Attributes
    ----------
    method : str
    mean_difference : float
        Mean over scenes of (method - best), in the index's units.
    ci95 : (float, float) or None
        Bootstrap 95 % interval of the mean difference (``None`` below :data:`MIN_SCENES`).
    statistic : float or None
        Wilcoxon signed-rank statistic (scipy's: the smaller rank sum).
    p : float or None
        Two-sided p-value.
    p_holm : float or None
        Holm-corrected p-value.
    distinguishable : bool or None
        ``p_holm < ALPHA``; ``None`` when not tested.
    """

    method: str
    mean_difference: float
    ci95: tuple[float, float] | None
    statistic: float | None
    p: float | None
    p_holm: float | None
    distinguishable: bool | None

    @property
    def verdict(self) -> str:
        """``"worse than the best"``, ``"not distinguishable from the best"`` or ``"not tested"``."""
        if self.distinguishable is None:
            return "not tested"
        return "worse than the best" if self.distinguishable else "not distinguishable from the best"


@dataclasses.dataclass(frozen=True)
class IndexStatistics:
    """Statistics of one index across scenes.

    Attributes
    ----------
    index : str
    direction : int
        +1 higher is better, -1 lower is better.
    scenes : list of str
        Scenes where every method has a finite value (the only ones used).
    mean_rank : dict of str to float
        Per method; 1 = best.
    best : str
        Method with the best mean over ``scenes``.
    friedman : dict or None
        ``{"statistic", "p"}`` (``None`` when not tested).
    comparisons : list of Comparison
        Every other method against ``best``.
    tested : bool
        Whether p-values and intervals are reported.
    note : str
        Why not tested, or what was tested.
    """

    index: str
    direction: int
    scenes: list[str]
    mean_rank: dict[str, float]
    best: str
    friedman: dict[str, float] | None
    comparisons: list[Comparison]
    tested: bool
    note: str

    def not_distinguishable(self) -> set[str]:
        """Methods whose difference from the best is not significant (includes the best); empty
        when not tested."""
        if not self.tested:
            return set()
        return {self.best} | {c.method for c in self.comparisons if c.distinguishable is False}

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "direction": "higher is better" if self.direction > 0 else "lower is better",
            "scenes": len(self.scenes),
            "tested": self.tested,
            "note": self.note,
            "mean_rank": dict(self.mean_rank),
            "best": self.best,
            "friedman": self.friedman,
            "versus_best": {
                c.method: {
                    "mean_difference": c.mean_difference,
                    "ci95": list(c.ci95) if c.ci95 is not None else None,
                    "wilcoxon_statistic": c.statistic,
                    "p": c.p,
                    "p_holm": c.p_holm,
                    "distinguishable": c.distinguishable,
                }
                for c in self.comparisons
            },
        }


def mean_ranks(values: np.ndarray, direction: int) -> np.ndarray:
    """Mean rank of each method over scenes (1 = best; ties get the average rank)."""
    from scipy.stats import rankdata

    ranks = rankdata(-direction * np.asarray(values, dtype=np.float64), axis=1)  # ties: average
    return ranks.mean(axis=0)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return [float(round(v, 15)) for v in out]


def bootstrap_ci(
    differences: np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences."""
    d = np.asarray(differences, dtype=np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(int(n_resamples), d.size))
    means = d[idx].mean(axis=1)
    tail = 50.0 * (1.0 - level)
    lo, hi = np.percentile(means, [tail, 100.0 - tail])
    return float(lo), float(hi)


def _friedman(values: np.ndarray) -> dict[str, float] | None:
    from scipy.stats import friedmanchisquare

    if values.shape[1] < 3:
        return None
    if np.all(values == values[:, :1]):  # every scene ties all methods: no evidence at all
        return {"statistic": 0.0, "p": 1.0}
    res = friedmanchisquare(*values.T)
    return {"statistic": float(res.statistic), "p": float(res.pvalue)}


def _wilcoxon(method: np.ndarray, best: np.ndarray) -> tuple[float, float]:
    from scipy.stats import wilcoxon

    if np.all(method == best):  # identical on every scene: p = 1 (scipy may refuse all-zero input)
        return 0.0, 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = wilcoxon(method, best)
    return float(res.statistic), float(res.pvalue)


def _index_statistics(
    index: str, table: Mapping[str, Mapping[str, float]], methods: Sequence[str], scenes: Sequence[str],
    *, n_resamples: int, seed: int,
) -> IndexStatistics | None:
    direction = index_direction(index)
    finite = {m: sum(math.isfinite(v) for v in table.get(m, {}).values()) for m in methods}
    left_out = [m for m in methods if finite[m] < 2]  # e.g. a method that failed everywhere
    methods = [m for m in methods if finite[m] >= 2]
    if direction is None or len(methods) < 2:
        return None
    complete = [
        s for s in scenes
        if all(math.isfinite(table.get(m, {}).get(s, math.nan)) for m in methods)
    ]
    if len(complete) < 2:
        return None
    values = np.array([[table[m][s] for m in methods] for s in complete], dtype=np.float64)
    ranks = mean_ranks(values, direction)
    means = values.mean(axis=0)
    best_i = int(np.argmax(direction * means))  # first best in report order on ties
    best = methods[best_i]
    others = [i for i in range(len(methods)) if i != best_i]
    n = len(complete)
    tested = n >= MIN_SCENES
    comparisons: list[Comparison] = []
    if tested:
        tests = [_wilcoxon(values[:, i], values[:, best_i]) for i in others]
        adjusted = holm([p for _, p in tests])
        for i, (stat, p), p_h in zip(others, tests, adjusted, strict=True):
            d = values[:, i] - values[:, best_i]
            comparisons.append(Comparison(methods[i], float(d.mean()),
                                          bootstrap_ci(d, n_resamples=n_resamples, seed=seed),
                                          stat, p, p_h, p_h < ALPHA))
        friedman = _friedman(values)
        note = (f"{n} scenes; Friedman test over {len(methods)} methods" if friedman else
                f"{n} scenes; Friedman test needs 3 or more methods")
        note += (f"; Wilcoxon signed-rank vs {best} (Holm-corrected); "
                 f"bootstrap 95 % CI ({n_resamples} resamples, seed {seed})")
    else:
        for i in others:
            d = values[:, i] - values[:, best_i]
            comparisons.append(Comparison(methods[i], float(d.mean()), None, None, None, None, None))
        friedman = None
        note = (f"only {n} scenes: the tests have little power (at least {MIN_SCENES} are needed for a "
                "two-sided Wilcoxon p-value below 0.05), so no p-values or intervals are given")
    if left_out:
        note += f"; left out (fewer than 2 scenes with a value): {', '.join(left_out)}"
    return IndexStatistics(index, int(direction), complete, {m: float(r) for m, r in zip(methods, ranks, strict=True)},
                           best, friedman, comparisons, tested, note)


def compare_methods(
    records: Sequence[Mapping[str, Any]],
    methods: Sequence[str],
    metrics: Sequence[str],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> dict[str, IndexStatistics]:
    """Statistics across scenes for every index with a known direction."""
    scenes: list[str] = []
    for rec in records:
        if rec.get("scene") not in scenes:
            scenes.append(rec["scene"])
    by_index: dict[str, dict[str, dict[str, float]]] = {}
    for rec in records:
        if rec.get("status") != "ok" or rec.get("method") not in methods:
            continue
        for key, value in (rec.get("metrics") or {}).items():
            v = float(value) if value is not None else math.nan
            by_index.setdefault(key, {}).setdefault(rec["method"], {})[rec["scene"]] = v
    out: dict[str, IndexStatistics] = {}
    if len(scenes) < 2:
        return out
    for index in metrics:
        stats = _index_statistics(index, by_index.get(index, {}), list(methods), scenes,
                                  n_resamples=n_resamples, seed=seed)
        if stats is not None:
            out[index] = stats
    return out


def statistics_to_dict(statistics: Mapping[str, IndexStatistics], n_scenes: int) -> dict[str, Any]:
    """The ``statistics`` entry of ``results.json``."""
    out: dict[str, Any] = {
        "tests": "mean rank per index; Friedman test over methods (scipy.stats.friedmanchisquare); each method vs "
                 "the best mean: paired two-sided Wilcoxon signed-rank (scipy.stats.wilcoxon), Holm-corrected; "
                 "percentile bootstrap 95 % CI of the mean difference (method - best)",
        "alpha": ALPHA,
        "min_scenes": MIN_SCENES,
        "bootstrap_resamples": N_RESAMPLES,
        "bootstrap_seed": SEED,
        "indexes": {k: v.to_dict() for k, v in statistics.items()},
    }
    if n_scenes < 2:
        out["note"] = f"{no_statistics_reason(n_scenes)}: no statistics across scenes"
    elif not statistics:
        out["note"] = no_statistics_reason(n_scenes)
    return out


def no_statistics_reason(n_scenes: int) -> str:
    """Why a run has no statistics across scenes (every report says it the same way)."""
    return "a single scene" if n_scenes < 2 else "no index has finite values for every method on 2 or more scenes"


def method_note() -> str:
    """How the statistics across scenes are made, in one paragraph (shared by every report)."""
    return (
        "Per index, over the scenes where every method has a value: mean rank (1 = best on a scene), "
        "Friedman test over the methods, and every method against the best mean: paired two-sided Wilcoxon "
        "signed-rank test (scipy.stats.wilcoxon) with Holm-corrected p-values and a bootstrap 95 % confidence "
        f"interval of the mean difference (method \u2212 best; {N_RESAMPLES} resamples of the scenes, seed "
        f"{SEED}). With fewer than {MIN_SCENES} scenes no p-values are given: the tests have little power."
    )

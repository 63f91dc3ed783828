"""Statistics across scenes: mean ranks, Friedman, Wilcoxon + Holm, bootstrap CI, against scipy
and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from pansharp_iqa.reports.stats import (
    MIN_SCENES,
    N_RESAMPLES,
    bootstrap_ci,
    compare_methods,
    holm,
    mean_ranks,
    statistics_to_dict,
)


def _records(table: dict[str, list[float]], index: str = "Q2n") -> list[dict]:
    n = len(next(iter(table.values())))
    return [
        {"scene": f"s{i}", "method": m, "status": "ok", "metrics": {index: float(v[i])}}
        for i in range(n) for m, v in table.items()
    ]


def test_better_on_every_scene_by_a_margin_is_significant_with_10_scenes():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.6, 0.9, 10)
    table = {"B": base - 0.02 - 0.01 * rng.random(10), "A": base}
    st = compare_methods(_records(table), ["B", "A"], ["Q2n"])["Q2n"]
    assert st.best == "A" and st.tested
    assert st.mean_rank == {"B": 2.0, "A": 1.0}
    (c,) = st.comparisons
    ref = scipy.stats.wilcoxon(table["B"], table["A"])
    assert c.p == pytest.approx(float(ref.pvalue), rel=1e-12) and c.statistic == float(ref.statistic)
    assert c.p < 0.05 and c.p_holm == pytest.approx(c.p)  # one comparison: Holm changes nothing
    assert c.p == pytest.approx(2 / 2**10)  # exact two-sided: all 10 differences of one sign
    assert c.distinguishable is True
    lo, hi = c.ci95
    assert lo <= c.mean_difference <= hi < 0  # B is lower on a higher-is-better index
    assert c.mean_difference == pytest.approx(float(np.mean(table["B"] - table["A"])))
    assert st.not_distinguishable() == {"A"}


def test_identical_methods_get_p_1_and_an_interval_containing_0():
    values = np.linspace(0.5, 0.9, 10)
    st = compare_methods(_records({"A": values, "B": values.copy()}), ["A", "B"], ["Q2n"])["Q2n"]
    (c,) = st.comparisons
    assert c.p == 1.0 and c.p_holm == 1.0 and c.distinguishable is False
    assert c.ci95[0] <= 0.0 <= c.ci95[1]
    assert st.mean_rank == {"A": 1.5, "B": 1.5}
    assert st.not_distinguishable() == {"A", "B"}


def test_friedman_and_holm_equal_scipy_with_three_methods_and_a_lower_is_better_index():
    rng = np.random.default_rng(7)
    good = rng.uniform(2.0, 4.0, 12)
    table = {"mid": good + rng.normal(0.4, 0.5, 12), "good": good, "bad": good + rng.normal(1.0, 0.3, 12)}
    st = compare_methods(_records(table, "SAM"), list(table), ["SAM"])["SAM"]
    assert st.best == "good" and st.direction == -1
    ref = scipy.stats.friedmanchisquare(table["mid"], table["good"], table["bad"])
    assert st.friedman["statistic"] == pytest.approx(float(ref.statistic), rel=1e-12)
    assert st.friedman["p"] == pytest.approx(float(ref.pvalue), rel=1e-12)
    raw = {m: float(scipy.stats.wilcoxon(table[m], table["good"]).pvalue) for m in ("mid", "bad")}
    lo, hi = sorted(raw.values())
    expected = {m: (2 * p if p == lo else max(2 * lo, p)) for m, p in raw.items()}
    for c in st.comparisons:
        assert c.p == pytest.approx(raw[c.method], rel=1e-12)
        assert c.p_holm == pytest.approx(min(1.0, expected[c.method]), rel=1e-12)
    # mean ranks: rank 1 = smallest SAM on each scene
    ranks = scipy.stats.rankdata(np.column_stack([table["mid"], table["good"], table["bad"]]), axis=1).mean(0)
    assert [st.mean_rank[m] for m in table] == pytest.approx(list(ranks))


def test_mean_ranks_by_hand_with_ties_and_direction():
    values = np.array([[0.9, 0.8, 0.8], [0.5, 0.7, 0.6]])
    assert mean_ranks(values, +1).tolist() == [(1 + 3) / 2, (2.5 + 1) / 2, (2.5 + 2) / 2]
    assert mean_ranks(values, -1).tolist() == [(3 + 1) / 2, (1.5 + 3) / 2, (1.5 + 2) / 2]


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.2, 0.01]) == [0.2, 0.02]
    assert holm([0.04, 0.03, 0.5]) == [0.09, 0.09, 0.5]  # step-down stays monotone
    assert holm([0.6, 0.7]) == [1.0, 1.0]  # capped at 1


def test_bootstrap_interval_is_seeded_and_agrees_with_scipy_percentile_bootstrap():
    d = np.random.default_rng(3).normal(0.5, 1.0, 15)
    a, b = bootstrap_ci(d), bootstrap_ci(d)
    assert a == b  # seeded: the same report every time
    assert bootstrap_ci(d, seed=1) != a
    ref = scipy.stats.bootstrap((d,), np.mean, n_resamples=N_RESAMPLES, method="percentile",
                                confidence_level=0.95, random_state=np.random.default_rng(5))
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert a[0] == pytest.approx(ref.confidence_interval.low, abs=0.05 * width)
    assert a[1] == pytest.approx(ref.confidence_interval.high, abs=0.05 * width)


def test_fewer_than_6_scenes_give_no_p_values_and_say_why():
    table = {"A": np.array([0.9, 0.8, 0.85, 0.7, 0.95]), "B": np.array([0.5, 0.4, 0.45, 0.3, 0.55])}
    st = compare_methods(_records(table), ["A", "B"], ["Q2n"])["Q2n"]
    assert not st.tested and st.friedman is None
    (c,) = st.comparisons
    assert c.p is None and c.ci95 is None and c.distinguishable is None
    assert c.mean_difference == pytest.approx(-0.4)
    assert "little power" in st.note and str(MIN_SCENES) in st.note
    assert st.not_distinguishable() == set()


def test_only_scenes_where_every_method_has_a_value_are_used():
    rng = np.random.default_rng(0)
    recs = _records({"A": rng.random(8), "B": rng.random(8)})
    recs[0]["metrics"]["Q2n"] = float("nan")  # s0 / A undefined
    recs[3] = {**recs[3], "status": "failed", "metrics": {}}  # s1 / B failed
    st = compare_methods(recs, ["A", "B"], ["Q2n"])["Q2n"]
    assert st.scenes == [f"s{i}" for i in range(2, 8)] and st.tested


def test_single_scene_and_unknown_direction_give_nothing():
    assert compare_methods(_records({"A": [1.0], "B": [2.0]}), ["A", "B"], ["Q2n"]) == {}
    recs = _records({"A": np.arange(8.0), "B": np.arange(8.0) + 1}, index="mystery")
    assert compare_methods(recs, ["A", "B"], ["mystery"]) == {}
    assert "single scene" in statistics_to_dict({}, 1)["note"]


def test_json_form_is_plain_data():
    import json

    rng = np.random.default_rng(2)
    st = compare_methods(_records({"A": rng.random(7), "B": rng.random(7), "C": rng.random(7)}), ["A", "B", "C"],
                         ["Q2n"])
    doc = json.loads(json.dumps(statistics_to_dict(st, 7)))
    entry = doc["indexes"]["Q2n"]
    assert doc["bootstrap_resamples"] == N_RESAMPLES and entry["scenes"] == 7 and entry["tested"]
    assert set(entry["versus_best"]) == {"A", "B", "C"} - {entry["best"]}
    assert entry["friedman"]["p"] == pytest.approx(st["Q2n"].friedman["p"])


def test_a_method_without_values_is_left_out_and_named():
    rng = np.random.default_rng(6)
    recs = _records({"A": rng.random(7), "B": rng.random(7), "broken": rng.random(7)})
    for r in recs:
        if r["method"] == "broken":
            r.update(status="failed", metrics={})
    st = compare_methods(recs, ["A", "B", "broken"], ["Q2n"])["Q2n"]
    assert set(st.mean_rank) == {"A", "B"} and len(st.scenes) == 7 and st.tested
    assert "left out" in st.note and "broken" in st.note

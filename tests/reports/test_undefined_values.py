"""Issue 34: NaN (an undefined index on a scene) in the report layer: the mean, the sample standard
deviation, the count, the best mark and the ranks use the defined scenes only, an index undefined
everywhere shows "-" and no best mark, and the statistics across scenes drop the scenes where a
method is undefined. Every expected number is written here by hand."""

from __future__ import annotations

import math

import pytest

from pansharp_iqa.reports import render_latex, render_markdown, render_table, summarise
from pansharp_iqa.reports.stats import compare_methods

NAN = math.nan


def records(table):
    """``{method: [SAM per scene]}`` as per-(scene, method) records."""
    return [{"scene": f"s{i}", "method": m, "status": "ok", "metrics": {"SAM": v, "ERGAS": 2.0 if m == "B" else NAN}}
            for m, values in table.items() for i, v in enumerate(values)]


TABLE = {"A": [2.0, NAN, 4.0, 6.0], "B": [3.0, 5.0, NAN, 7.0]}


def test_summary_uses_the_defined_scenes_only():
    s = summarise(records(TABLE), ["A", "B"])
    assert s.stats["A"]["SAM"] == {"mean": 4.0, "std": 2.0, "n": 3}  # (2, 4, 6): mean 4, sqrt(8 / 2) = 2
    assert s.stats["B"]["SAM"] == {"mean": 5.0, "std": 2.0, "n": 3}  # (3, 5, 7)
    assert s.best["SAM"] == ["A"] and s.ranks["SAM"] == {"A": 1, "B": 2}  # lower SAM is better
    assert s.stats["A"]["ERGAS"]["n"] == 0 and math.isnan(s.stats["A"]["ERGAS"]["mean"])
    assert s.best["ERGAS"] == ["B"] and s.ranks["ERGAS"] == {"B": 1}  # an undefined mean is not ranked
    doc = s.to_dict()
    assert doc["A"]["ERGAS"] == {"mean": None, "std": None, "n": 0}
    assert doc["B"]["ERGAS"] == {"mean": 2.0, "std": 0.0, "n": 4}


def test_tables_show_the_defined_mean_and_a_dash_for_none():
    s = summarise(records(TABLE), ["A", "B"])
    md = render_markdown(s)
    assert "| A | **4.0000 ± 2.0000** | - |" in md and "| B | 5.0000 ± 2.0000 | **2.0000 ± 0.0000** |" in md
    tex = render_latex(s)
    assert "A & \\textbf{4.0000 $\\pm$ 2.0000} & - \\\\" in tex
    terminal = render_table(s)
    assert "4.0000 +- 2.0000 *" in terminal and "5.0000 +- 2.0000  " in terminal


def test_statistics_drop_the_scenes_where_a_method_is_undefined():
    stats = compare_methods(records(TABLE), ["A", "B"], ["SAM", "ERGAS"])
    sam = stats["SAM"]
    assert sam.scenes == ["s0", "s3"]  # s1 (A) and s2 (B) are undefined
    assert sam.best == "A" and sam.mean_rank == {"A": 1.0, "B": 2.0}  # 2 < 3 and 6 < 7
    assert sam.comparisons[0].mean_difference == pytest.approx(1.0, abs=1e-15)  # ((3 - 2) + (7 - 6)) / 2
    assert "ERGAS" not in stats  # A has no defined ERGAS: fewer than 2 methods to compare

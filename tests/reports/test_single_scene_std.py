"""Issue 27, item 11: the sample standard deviation (N - 1) of one scene or image is undefined:
NaN in Python, null in JSON, no "± std" in the tables; two values have the usual one."""

from __future__ import annotations

import json
import math

import numpy as np

from pansharp_iqa.reports.summary import summarise
from pansharp_iqa.reports.table import render_table
from pansharp_iqa.tensor.metrics import summarize


def _records(values: list[float]) -> list[dict]:
    return [{"scene": f"s{i}", "method": "m", "status": "ok", "metrics": {"Q2n": v}} for i, v in enumerate(values)]


def test_one_scene_has_an_undefined_std_in_the_summary_json_and_tables():
    summary = summarise(_records([0.9]), ["m"])
    assert summary.stats["m"]["Q2n"]["mean"] == 0.9 and math.isnan(summary.stats["m"]["Q2n"]["std"])
    doc = json.loads(json.dumps(summary.to_dict(), allow_nan=False))  # strict JSON: null, not NaN
    assert doc["m"]["Q2n"] == {"mean": 0.9, "std": None, "n": 1}
    table = render_table(summary)
    assert "0.9000" in table and "0.9000 +- " not in table and "nan" not in table.lower()


def test_two_scenes_have_the_sample_std():
    summary = summarise(_records([0.8, 0.9]), ["m"])
    assert summary.stats["m"]["Q2n"]["std"] == float(np.std([0.8, 0.9], ddof=1))  # 0.0707...
    assert "0.8500 +- 0.0707" in render_table(summary)


def test_the_metric_accumulators_say_the_same():
    means, stds = summarize({"SAM": [2.0], "ERGAS": [1.0, 3.0], "Q": []})
    assert means["SAM"] == 2.0 and math.isnan(stds["SAM"])
    assert stds["ERGAS"] == math.sqrt(2.0) and math.isnan(means["Q"]) and math.isnan(stds["Q"])

"""``pansharp_iqa.reports.paper_table`` on hand-made ``results.json`` documents: the merge, best
marks and ranks among complete methods, the four formats, and the refused merges."""

from __future__ import annotations

import csv
import io
import math

import pytest

from pansharp_iqa import InputError
from pansharp_iqa.reports import PaperTable, paper_table

SETTINGS = {"protocol": "toolbox2020", "sensor": "WV3", "ratio": 4, "bits": 11, "band_names": None,
            "input_scale": 1.0, "preset": "pancollection-wv3"}


def run(resolution: str, values: dict[str, list[float | None]], *, index: str, sha: str = "abc", **changes):
    """A results.json with one index: ``values[method][i]`` on scene i (``None``: failed)."""
    n = len(next(iter(values.values())))
    scenes = [f"test_{i}" for i in range(n)]
    per_scene = {s: {m: ({"status": "ok", "metrics": {index: v[i]}} if v[i] is not None else
                         {"status": "failed", "metrics": {}, "reason": "missing result"})
                     for m, v in values.items()} for i, s in enumerate(scenes)}
    return {"tool": "pansharp-eval", "dataset": {**SETTINGS, "resolution": resolution, "scenes": scenes, **changes},
            "protocol": {"name": "toolbox2020", "block_size": 32, "version": "0.1.0"},
            "inputs_sha256": {f"{resolution}.h5": sha}, "scenes": per_scene, "source": f"{resolution}-{sha}"}


RR = run("reduced", {"A": [0.90, 0.80, 0.85], "B": [0.70, 0.75, 0.80], "C": [0.99, 0.98, None]}, index="Q2n")
FR = run("full", {"A": [0.10, 0.20, 0.30], "B": [0.05, 0.10, 0.15], "C": [0.01, 0.02, 0.03]}, index="D_s")


def test_reduced_beside_full_best_and_ranks_among_complete_methods():
    table = paper_table([RR, FR])
    assert isinstance(table, PaperTable)
    assert table.columns == [("reduced", "Q2n"), ("full", "D_s")]
    assert table.complete == {"A": True, "B": True, "C": False}
    # C has the best Q2n mean (0.985 over 2 of 3 scenes) and the best D_s: incomplete, never best
    assert table.best == {"Q2n": ["A"], "D_s": ["B"]}
    assert table.ranks == {"Q2n": {"A": 1, "B": 2}, "D_s": {"A": 2, "B": 1}}
    assert table.mean_rank == {"A": 1.5, "B": 1.5}
    assert math.isclose(table.cells["A"]["Q2n"]["mean"], 0.85) and math.isclose(table.cells["A"]["Q2n"]["std"], 0.05)
    assert table.label("C") == "C (incomplete RR 2/3, FR 3/3)"


def test_the_four_formats():
    table = paper_table([RR, FR])
    md = table.to_markdown()
    assert "| A | **0.8500 ± 0.0500** | 0.2000 ± 0.1000 | 1.50 |" in md
    assert "| C (incomplete RR 2/3, FR 3/3) | 0.9850 ± 0.0071 | 0.0200 ± 0.0100 | - |" in md
    tex = table.to_latex()
    captions = [line for line in tex.splitlines() if line.startswith("\\caption")]
    assert len(captions) == 1 and "toolbox2020" in captions[0] and "pancollection-wv3" in captions[0]
    assert "\\toprule" in tex and "\\textbf{0.8500 $\\pm$ 0.0500}" in tex and "Reduced resolution" in tex
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert list(rows[0]) == ["method", "complete", "Q2n", "Q2n_std", "D_s", "D_s_std", "mean_rank"]
    assert [(r["method"], r["complete"]) for r in rows] == [("A", "true"), ("B", "true"), ("C", "false")]
    assert float(rows[1]["D_s"]) == pytest.approx(0.10) and rows[2]["mean_rank"] == ""
    page = table.to_html()
    assert "<b>0.8500 ± 0.0500</b>" in page and "C (incomplete RR 2/3, FR 3/3)" in page


def test_runs_of_other_labs_merge_and_disagreements_are_refused():
    other_lab = run("reduced", {"D": [0.95, 0.90, 0.92], "A": [0.90, 0.80, 0.85]}, index="Q2n")
    table = paper_table([RR, other_lab, FR])  # A in both runs with the same values: one row
    assert table.methods == ["A", "B", "C", "D"] and table.best["Q2n"] == ["A"]
    assert table.complete["D"] is False  # no full-resolution run of D
    other_fr = run("full", {"D": [0.2, 0.2, 0.2]}, index="D_s")
    table = paper_table([RR, other_lab, FR, other_fr])
    assert table.complete["D"] and table.best["Q2n"] == ["D"]
    assert table.ranks["D_s"] == {"A": 2, "B": 1, "D": 2}  # a tie shares the rank
    cases = [
        (run("reduced", {"D": [0.9, 0.9, 0.9]}, index="Q2n", sha="other"), "hash"),
        (run("reduced", {"D": [0.9, 0.9, 0.9]}, index="Q2n", bits=12), "bits"),
        (run("full", {"D": [0.1, 0.1, 0.1]}, index="D_s", sensor="QB"), "sensor"),
        (run("reduced", {"D": [0.9, 0.9, 0.9]}, index="Q2n", protocol="toolbox2014"), "protocol"),
        (run("reduced", {"A": [0.9, 0.9, 0.9]}, index="Q2n"), "'A' is in runs"),
    ]
    for other, needle in cases:
        with pytest.raises(InputError, match=needle):
            paper_table([RR, FR, other])
    card = run("reduced", {"D": [0.9, 0.9, 0.9]}, index="Q2n")
    card["protocol"]["block_size"] = 16
    with pytest.raises(InputError, match="block_size"):
        paper_table([RR, card])


def test_a_preset_card_is_compared_by_name_its_data_sensor_not_the_mtf_sensor():
    # pancollection-qb: the full-resolution run uses IKONOS's MTF (the card's sensor); its satellite is QB's
    def card(res, published):
        return {"name": "pancollection-qb", "sensor": "QB", "mtf_sensor": "IKONOS", "file": f"{res}.h5",
                "sha256": res, "published_test_set": published}

    def full(sensor, preset, satellite="QB"):
        doc = run("full", {"A": [0.1, 0.2]}, index="D_s", sensor=sensor, preset=preset)
        return {**doc, "protocol": {**doc["protocol"], "sensor": {"name": "IKONOS"}, "satellite": satellite}}
    rr = run("reduced", {"A": [0.9, 0.8]}, index="Q2n", sensor="QB", preset=card("rr", True))
    fr = full("QB", card("fr", None))
    assert paper_table([rr, fr]).caption().startswith("QB: preset pancollection-qb, protocol toolbox2020;")
    assert paper_table([rr, full("IKONOS", card("fr", None))]).settings["sensor"] == "QB"  # the card decides
    with pytest.raises(InputError, match="differ in sensor .'QB' vs 'GF2'"):  # another satellite: not merged
        paper_table([rr, full("QB", card("fr", None), satellite="GF2")])
    forced = run("full", {"A": [0.1, 0.2]}, index="D_s", sensor="QB", preset=card("fr", False))
    assert "preset pancollection-qb, NOT the published test set," in paper_table([rr, forced]).caption()
    plain = run("full", {"A": [0.1, 0.2]}, index="D_s", sensor="QB", preset=None)
    with pytest.raises(InputError, match="differ in preset"):
        paper_table([rr, plain])
    other = run("full", {"A": [0.1, 0.2]}, index="D_s", sensor="QB", preset={**card("fr", None), "name": "x"})
    with pytest.raises(InputError, match="differ in preset .'pancollection-qb' vs 'x'"):
        paper_table([rr, other])

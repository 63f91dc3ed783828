"""Issue 34: an undefined value (an infinite PSNR of a perfect scene, a NaN) never enters a mean, a
standard deviation, a best mark or a statistic across scenes, in every report ``pansharp-eval
evaluate`` writes (the terminal table, results.json, results.csv, results.md, results.tex,
report.html) and in ``pansharp-eval table``. Every expected number is written here from its definition.

The data: 3 synthetic scenes (seeded smooth fields) and two methods whose results are the ground
truth plus a constant offset ``d`` DN, so that, on the cut region or not, MSE = d^2 exactly:
RMSE = d / (2**11 - 1) and PSNR = 20 log10((2**11 - 1) / d) (whole-cube MSE), d = 0 giving
PSNR = inf, an undefined entry of the statistics.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import BITS, RATIO, make_scene, run_cli, write_toml

PEAK = 2.0**BITS - 1
OFFSETS = {"A": (4.0, 0.0, 32.0), "B": (16.0, 16.0, 16.0)}  # DN added to the GT, per scene
SCENES = ("s0", "s1", "s2")


def psnr(d: float) -> float:
    return math.inf if d == 0 else 20.0 * math.log10(PEAK / d)


def sample_std(values) -> float:
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


# By hand: A's PSNR over its two finite scenes (d = 4, 32), its RMSE over all three.
A_PSNR_MEAN = (psnr(4.0) + psnr(32.0)) / 2            # = 20 log10(2047 / sqrt(128))
A_PSNR_STD = abs(psnr(4.0) - psnr(32.0)) / math.sqrt(2)  # = 20 log10(8) / sqrt(2)
A_RMSE = [d / PEAK for d in OFFSETS["A"]]
B_PSNR = psnr(16.0)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One run of the 2 methods on the 3 scenes: every report format, PSNR and RMSE."""
    root = tmp_path_factory.mktemp("undefined")
    data, res, out = root / "data", root / "res", root / "out"
    data.mkdir()
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    for i, name in enumerate(SCENES):
        scene = make_scene(70 + i, size=96)
        np.savez(data / f"{name}.npz", **scene)
        for method, offsets in OFFSETS.items():
            (res / method).mkdir(parents=True, exist_ok=True)
            np.save(res / method / f"{name}.npy", scene["gt"].astype(np.float64) + offsets[i])
    done = run_cli("evaluate", data, res / "A", res / "B", "--out", out, "--indexes", "PSNR,RMSE",
                   "--format", "table,csv,json,md,tex,html", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    (out / "terminal.txt").write_text(done.stdout, encoding="utf-8")
    return out


def test_results_json_leaves_the_infinite_scene_out_of_mean_std_and_best(run):
    doc = json.loads((run / "results.json").read_text())
    assert doc["scenes"]["s1"]["A"]["metrics"]["PSNR"] is None  # strict JSON: inf is written null
    a, b = doc["summary"]["A"], doc["summary"]["B"]
    assert a["PSNR"]["n"] == 2 and b["PSNR"]["n"] == 3 and a["RMSE"]["n"] == 3
    assert a["PSNR"]["mean"] == pytest.approx(A_PSNR_MEAN, rel=1e-12)
    assert a["PSNR"]["std"] == pytest.approx(A_PSNR_STD, rel=1e-12)
    assert a["RMSE"]["mean"] == pytest.approx(sum(A_RMSE) / 3, rel=1e-12)
    assert a["RMSE"]["std"] == pytest.approx(sample_std(A_RMSE), rel=1e-12)  # ddof = 1
    assert b["PSNR"]["mean"] == pytest.approx(B_PSNR, rel=1e-12) and b["PSNR"]["std"] == pytest.approx(0, abs=1e-12)
    # A's finite mean (45.15 dB) beats B's (42.14 dB); lower RMSE is better (12 vs 16 DN)
    assert doc["summary"]["best"] == {"PSNR": ["A"], "RMSE": ["A"]}
    assert a["ranks"] == {"PSNR": 1, "RMSE": 1} and b["ranks"] == {"PSNR": 2, "RMSE": 2}


def test_statistics_use_only_the_scenes_where_every_method_is_finite(run):
    stats = json.loads((run / "results.json").read_text())["statistics"]["indexes"]
    psnr_stats = stats["PSNR"]
    assert psnr_stats["scenes"] == 2 and psnr_stats["best"] == "A"
    # scene s0: A (d=4) beats B (d=16); s2: B beats A (d=32): mean ranks 1.5 each
    assert psnr_stats["mean_rank"] == {"A": 1.5, "B": 1.5}
    # B - A over s0 and s2: (psnr(16) - psnr(4) + psnr(16) - psnr(32)) / 2 = 20 log10(sqrt(128) / 16)
    expected = 20 * math.log10(math.sqrt(128) / 16)
    assert psnr_stats["versus_best"]["B"]["mean_difference"] == pytest.approx(expected, rel=1e-12)
    assert stats["RMSE"]["scenes"] == 3


def test_results_csv_keeps_every_scene_value_and_writes_inf(run):
    with open(run / "results.csv", newline="", encoding="utf-8") as handle:
        rows = {(r["method"], r["scene"]): r for r in csv.DictReader(handle)}
    assert rows[("A", "s1")]["PSNR"] == "inf" and float(rows[("A", "s1")]["RMSE"]) == 0.0
    for method, offsets in OFFSETS.items():
        for scene, d in zip(SCENES, offsets, strict=True):
            if d:
                assert float(rows[(method, scene)]["PSNR"]) == pytest.approx(psnr(d), rel=1e-12)
            assert float(rows[(method, scene)]["RMSE"]) == pytest.approx(d / PEAK, rel=1e-12, abs=1e-15)


def test_the_terminal_markdown_latex_and_html_show_the_finite_mean_and_std(run):
    cell = f"{A_PSNR_MEAN:.4f} ± {A_PSNR_STD:.4f}"
    assert cell == "45.1503 ± 12.7716"  # 20 log10(2047/sqrt(128)), 20 log10(8)/sqrt(2)
    assert f"| A | **{cell}** |" in (run / "results.md").read_text(encoding="utf-8")
    assert "\\textbf{" + cell.replace(" ± ", " $\\pm$ ") + "}" in (run / "results.tex").read_text(encoding="utf-8")
    terminal = next(line for line in (run / "terminal.txt").read_text(encoding="utf-8").splitlines()
                    if line.startswith("A "))
    assert cell.replace(" ± ", " +- ") + " *" in terminal
    html = (run / "report.html").read_text(encoding="utf-8")
    assert f"<td class='best' data-v='{A_PSNR_MEAN!r}'>{cell} ★</td>" in html


def test_paper_table_of_the_run_leaves_the_undefined_scene_out(run):
    from pansharp_iqa.reports import paper_table

    doc = json.loads((run / "results.json").read_text())
    doc["scenes"]["s1"]["A"]["metrics"]["PSNR"] = math.inf  # as the run held it before it was written
    table = paper_table([doc])
    assert table.cells["A"]["PSNR"]["n"] == 2
    assert table.cells["A"]["PSNR"]["mean"] == pytest.approx(A_PSNR_MEAN, rel=1e-12)
    assert table.cells["A"]["PSNR"]["std"] == pytest.approx(A_PSNR_STD, rel=1e-12)
    assert table.best["PSNR"] == ["A"]
    assert f"**{A_PSNR_MEAN:.4f} ± {A_PSNR_STD:.4f}**" in table.to_markdown()
    row = next(r for r in table.to_csv().splitlines() if r.startswith("A,"))
    assert float(row.split(",")[2]) == pytest.approx(A_PSNR_MEAN, rel=1e-12)


def test_paper_table_reads_a_results_json_with_a_null_scene_value(run):
    from pansharp_iqa.reports import paper_table

    table = paper_table([Path(run)])
    assert table.cells["A"]["PSNR"]["mean"] == pytest.approx(A_PSNR_MEAN, rel=1e-12)

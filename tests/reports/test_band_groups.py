"""Per-band values in results.md and report.html: one table per index, a column per band group (issue 33:
band counts in the hundreds get grouped columns, not one column per band)."""

import json
import re

import numpy as np
import pytest

from pansharp_iqa.reports.band_groups import band_groups, group_means, markdown_per_band


def test_230_bands_make_ten_groups_of_23_and_few_bands_stay_alone():
    assert band_groups(230) == [(1 + 23 * i, 23 * (i + 1)) for i in range(10)]
    assert band_groups(12) == [(1, 2), (3, 4), (5, 5), (6, 6), (7, 7), (8, 8), (9, 9), (10, 10), (11, 11), (12, 12)]
    assert band_groups(8) == [(b, b) for b in range(1, 9)]
    groups = band_groups(61)
    assert sum(b - a + 1 for a, b in groups) == 61 and all(groups[i][1] + 1 == groups[i + 1][0] for i in range(9))


def test_group_means_by_hand_nan_skipped():
    recs = [{"method": "a", "per_band": {"ERGAS": list(np.arange(12.0))}},
            {"method": "a", "per_band": {"ERGAS": [np.nan] * 2 + list(np.arange(10.0) + 2)}},
            {"method": "b", "per_band": {"ERGAS": [1.0] * 12}}, {"method": "c"}]
    got = group_means(recs, ["a", "b", "c"])["ERGAS"]
    assert set(got) == {"a", "b"}  # c has no per-band values
    groups, means = got["a"]
    assert groups[0] == (1, 2) and means[0] == pytest.approx(0.5)  # the NaN scene left out: (0 + 1) / 2
    assert means[1] == pytest.approx((2 + 3 + 2 + 3) / 4) and means[-1] == pytest.approx(11.0)
    assert got["b"][1] == [1.0] * 10
    assert np.isnan(group_means([{"method": "a", "per_band": {"Q": [np.nan]}}], ["a"])["Q"]["a"][1][0])
    assert markdown_per_band([{"method": "a"}], ["a"]) == ""


def test_pansharp_eval_per_band_tables_in_results_md_and_report_html(tmp_path):
    from pansharp_iqa.cli.main import main

    rng = np.random.default_rng(3)
    base = rng.normal(size=(12, 12, 12)).cumsum(0).cumsum(1)
    gt = np.kron(base - base.min() + 1, np.ones((8, 8, 1))) * 40 + rng.uniform(0, 30, (96, 96, 12))
    data, method, out = tmp_path / "data", tmp_path / "m", tmp_path / "out"
    data.mkdir()
    method.mkdir()
    np.savez(data / "s.npz", gt=gt, ms=gt[::4, ::4], pan=gt.mean(axis=2))
    (data / "dataset.toml").write_text('sensor = "none"\nratio = 4\nbits = 11\nresolution = "reduced"\n'
                                       'result_scale = "dn"\n', encoding="utf-8")
    np.save(method / "s.npy", gt + rng.normal(0, 8, gt.shape))
    assert main(["evaluate", str(data), str(method), "--out", str(out), "--format", "md,json,html", "--per-band",
                 "--no-progress"]) == 0
    per_band = json.loads((out / "results.json").read_text())["scenes"]["s"]["m"]["per_band"]
    md = (out / "results.md").read_text()
    assert "## Per band (mean over scenes)" in md
    for name, values in per_band.items():
        table = md.split("## Per band", 1)[1].split(f"### {name}\n\n", 1)[1]
        head, _, row = table.splitlines()[:3]
        assert head.startswith("| Method | bands 1-2 | bands 3-4 | band 5 |") and head.count("|") == 12
        cells = [float(c) for c in row.split("|")[2:-1]]
        want = [np.mean(values[a - 1 : b]) for a, b in band_groups(12)]
        assert cells == pytest.approx(want, abs=5e-5)  # printed with 4 decimals
    page = (out / "report.html").read_text()
    assert "<h2>Per band (mean over scenes)</h2>" in page
    assert len(re.findall(r"<th>bands 1-2</th>", page)) == len(per_band)


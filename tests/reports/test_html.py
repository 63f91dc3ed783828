"""``report.html`` rendering: structure, images, marks, escaping, no external resource."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from pansharp_iqa.reports.display import rgb_bands
from pansharp_iqa.reports.html import render_html
from pansharp_iqa.reports.pair_display import assemble_scene, make_pair_display
from pansharp_iqa.reports.stats import compare_methods
from pansharp_iqa.reports.summary import summarise
from report_helpers import Arrays, Page, external_references

METHODS = ["good", "<b>evil</b>", "bad"]


def _run(n_scenes: int):
    rng = np.random.default_rng(0)
    rgb = rgb_bands(4, ["Blue", "Green", "Red", "NIR"])
    records, views = [], {}
    for i in range(n_scenes):
        gt = 300 + 1000 * ndimage.zoom(rng.random((12, 12, 4)), (8, 8, 1), order=1)
        displays = {}
        for j, m in enumerate(METHODS):
            if m == "bad" and i == 0:
                records.append({"scene": f"s{i}", "method": m, "status": "failed", "metrics": {},
                                "reason": "missing result: no bad/s0.npy"})
                continue
            fused = gt + rng.normal(0, 5 + 20 * j, gt.shape)
            displays[m] = make_pair_display(Arrays(fused=fused, gt=gt), method=m, resolution="reduced", ratio=4,
                                            rgb=rgb)
            records.append({"scene": f"s{i}", "method": m, "status": "ok", "reason": None,
                            "metrics": {"Q2n": 0.9 - 0.1 * j - 0.001 * i, "SAM": 2.0 + j + 0.01 * i}})
        views[f"s{i}"] = assemble_scene(f"s{i}", METHODS, displays)
    summary = summarise(records, METHODS)
    stats = compare_methods(records, METHODS, summary.metrics)
    failures = [r for r in records if r["status"] != "ok"]
    text = render_html(title="t <x>", summary=summary, statistics=stats, records=records, failures=failures,
                       scenes=[f"s{i}" for i in range(n_scenes)], views=views,
                       provenance={"protocol": "toolbox2020", "inputs_sha256": {"s0.npz": "ab" * 32},
                                   "sources": ["doi:10.1109/MGRS.2020.3019315"]},
                       notes=["a note"])
    return text, stats


def test_page_parses_embeds_every_image_and_loads_nothing_external():
    text, _ = _run(3)
    page = Page(text)
    assert page.errors == []
    assert external_references(page) == []
    assert all(src.startswith("data:image/") for _, src in page.images)
    alts = [a for a, _ in page.images]
    assert alts.count("GT: whole scene") == 3 and alts.count("GT: crop") == 3  # one reference per scene
    assert alts.count("good: whole scene") == 3 and alts.count("bad: whole scene") == 2  # s0/bad failed
    assert alts.count("good: residual") == 3 and alts.count("bad: crop") == 2
    body = " ".join(page.text)
    assert "missing result: no bad/s0.npy" in body
    assert "little power" in body  # 3 scenes: no p-values


def test_marks_sorting_and_escaping():
    text, stats = _run(8)
    assert "<b>evil</b>" not in text and "&lt;b&gt;evil&lt;/b&gt;" in text
    assert "t &lt;x&gt;" in text
    assert "table class='sortable' id='summary'" in text and "addEventListener('click'" in text
    # 'good' is best on every index, and with 8 scenes the others are significantly worse
    assert stats["Q2n"].best == "good" and stats["Q2n"].tested
    assert text.count(" ★</td>") == 2 and " ≈</td>" not in text
    assert "Wilcoxon" in text and "worse than the best" in text
    assert "↑" in text and "↓" in text


def test_not_distinguishable_methods_are_marked():
    records = []
    rng = np.random.default_rng(5)
    for i in range(8):
        q = rng.uniform(0.7, 0.9)
        records += [{"scene": f"s{i}", "method": m, "status": "ok", "reason": None,
                     "metrics": {"Q2n": q + d}} for m, d in (("a", 0.0), ("b", rng.normal(0, 0.01)))]
    summary = summarise(records, ["a", "b"])
    stats = compare_methods(records, ["a", "b"], ["Q2n"])
    assert stats["Q2n"].comparisons[0].distinguishable is False
    text = render_html(title="t", summary=summary, statistics=stats, records=records, failures=[],
                       scenes=[f"s{i}" for i in range(8)], views={}, provenance={})
    assert text.count(" ≈</td>") == 1 and text.count(" ★</td>") == 1
    assert "not distinguishable from the best" in text

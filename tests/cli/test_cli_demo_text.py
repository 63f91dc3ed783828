"""``pansharp-eval demo`` explains what a newcomer sees, and each claim holds on the demo's numbers
(issue 28): the numbers are read from the run's results.json and from the bundled scene."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import mtf_glp_hpm
from pansharp_iqa.cli.demo_command import READING
from pansharp_iqa.cli.main import main
from pansharp_iqa.demo_data import load_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    capture, buffer = pytest.MonkeyPatch(), io.StringIO()  # capsys is per test; the run is per module
    capture.setattr(sys, "stdout", buffer)
    try:
        assert main(["demo", "--out", str(out), "--format", "table,json", "--no-progress"]) == 0
    finally:
        capture.undo()
    means = {}
    for resolution in ("reduced", "full"):
        doc = json.loads((out / resolution / "results.json").read_text(encoding="utf-8"))
        means[resolution] = {m: r["metrics"] for m, r in doc["scenes"]["solaris"].items()}
    return buffer.getvalue(), means


def test_the_reading_is_printed_once_after_the_tables(demo):
    text, _ = demo
    assert text.count(READING) == 1
    assert text.index("HQNR") < text.index(READING)
    assert len(READING.splitlines()) <= 12  # short


def test_mtf_glp_hpm_ergas_comes_from_its_ratio_on_a_dark_scene(demo):
    _, means = demo
    rr = means["reduced"]
    others = [rr[m]["ERGAS"] for m in ("EXP", "BT-H", "GSA")]
    assert 8 <= min(others) and max(others) <= 13.5  # "the others 8-13"
    assert 90 <= rr["MTF-GLP-HPM"]["ERGAS"] <= 130  # "near 100"
    ms, pan = load_demo()
    assert 100 <= ms[..., 0].mean() <= 120  # "blue band mean about 110 DN of 2047"
    # "the ratio exceeds 10 in under 2 % of the pixels": the fusion over EXP is P_b / low-pass P_b
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, sensor="none", ratio=4)
    fused = mtf_glp_hpm(ms_lr, pan_lr, sensor="none", ratio=4)
    ratio = fused / pi.interp23tap(ms_lr.astype(np.float64), 4)
    exploded = (np.abs(ratio) > 10).any(axis=-1)
    assert 0 < exploded.sum() < 0.02 * exploded.size
    # "they alone make that ERGAS": with them set to the reference it is in the others' range
    repaired = np.where(exploded[..., None], ms, fused)
    assert pi.evaluate_reduced(repaired, ms, ratio=4, bits=11)["ERGAS"] <= max(others)


def test_exp_has_no_spectral_distortion_and_leads_hqnr_but_not_the_reference_table(demo):
    _, means = demo
    fr, rr = means["full"], means["reduced"]
    assert abs(fr["EXP"]["D_lambda"]) < 1e-12
    assert max(fr, key=lambda m: fr[m]["HQNR"]) == "EXP"
    # D_s charges EXP (more than BT-H) less than D_lambda_K charges every other method
    assert fr["EXP"]["D_s"] > fr["BT-H"]["D_s"]
    assert all(fr["EXP"]["D_s"] < fr[m]["D_lambda_K"] for m in ("BT-H", "GSA", "MTF-GLP-HPM"))
    assert rr["EXP"]["Q2n"] < min(rr["BT-H"]["Q2n"], rr["GSA"]["Q2n"])

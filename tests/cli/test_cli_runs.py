"""--resume, --force, reports, plots, the baselines and demo commands."""

from __future__ import annotations

import json

import numpy as np

from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml
from pansharp_iqa.cli.main import main


def test_resume_reuses_only_unchanged_results(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, scenes = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out)]
    assert main(args) == 0
    first = json.loads((out / "results.json").read_text())
    cached = json.loads((out / "scenes" / "good" / "s1.json").read_text())
    # each per-scene JSON embeds the core's card and the SHA-256 of the inputs and the result
    assert cached["protocol"]["name"] == "toolbox2020"
    assert set(cached["inputs_sha256"]) == {"s1.npz"} and len(cached["result_sha256"]) == 64
    # change one result: only that pair is recomputed
    np.save(rr_methods["good"] / "s2.npy", noisy(scenes["s2"]["gt"], 40.0, 7))
    assert main([*args, "--resume"]) == 0
    second = json.loads((out / "results.json").read_text())
    assert second["run"]["resumed"] == 5
    assert second["scenes"]["s1"] == first["scenes"]["s1"]
    assert second["scenes"]["s2"]["good"]["metrics"]["Q2n"] < first["scenes"]["s2"]["good"]["metrics"]["Q2n"]
    # a changed setting invalidates everything
    write_toml(folder, sensor="none", ratio=RATIO, bits=12, resolution="reduced", result_scale="dn")
    assert main([*args, "--resume"]) == 0
    assert json.loads((out / "results.json").read_text())["run"]["resumed"] == 0


def test_force_recomputes_and_overwrites(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out)]
    assert main(args) == 0
    (out / "scenes" / "good" / "s1.json").write_text("{}")
    assert main([*args, "--force"]) == 0
    assert json.loads((out / "scenes" / "good" / "s1.json").read_text())["status"] == "ok"
    assert json.loads((out / "results.json").read_text())["run"]["resumed"] == 0


def test_reports_mark_the_best_method(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), str(rr_methods["bad"]), str(rr_methods["good"]), "--out", str(out)]) == 0
    table = capsys.readouterr().out
    rows = {line.split()[0]: line for line in table.splitlines() if line.startswith(("good", "bad"))}
    assert rows["good"].count("*") == 5 and "*" not in rows["bad"]
    assert "+-" in rows["good"]
    md = (out / "results.md").read_text()
    assert "| good | **" in md and "| bad | **" not in md
    tex = (out / "results.tex").read_text()
    for token in ("\\toprule", "\\midrule", "\\bottomrule", "$\\pm$", "\\textbf{", "Q2\\textsuperscript{n}"):
        assert token in tex
    csv = (out / "results.csv").read_text().splitlines()
    assert csv[0].startswith("method,scene,status,Q2n,Q,SAM,ERGAS,SCC")
    assert len(csv) == 1 + 6


def test_plots(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out), "--plots",
                 "--format", "json"]) == 0
    names = sorted(p.name for p in (out / "plots").iterdir())
    assert "box_Q2n.png" in names and "box_SAM.png" in names
    assert {"maps_s1.png", "maps_s2.png", "maps_s3.png"} <= set(names)
    assert all((out / "plots" / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names)
    # --resume with --plots reuses the stored maps
    assert main(["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out), "--plots", "--resume",
                 "--format", "json"]) == 0
    assert json.loads((out / "results.json").read_text())["run"]["resumed"] == 6


def test_baselines_command_then_evaluate(tmp_path, capsys):
    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="unit")
    for i in range(2):
        np.savez(folder / f"sc{i}.npz", **make_scene(70 + i))
    np.savez(folder / "broken.npz", ms=np.zeros((4, 4, 4)))
    out = tmp_path / "methods"
    code = main(["baselines", str(folder), "--out", str(out)])
    assert code == 1  # the broken scene is reported, the others are fused
    assert "broken" in capsys.readouterr().err
    for m in ("EXP", "BT-H", "GSA", "MTF-GLP-HPM"):
        fused = np.load(out / m / "sc0.npy")
        assert fused.shape == (128, 128, 4) and fused.max() < 1.5  # written in the declared unit scale
    assert main(["baselines", str(folder), "--out", str(out)]) == 2  # no overwrite without --force
    ev = tmp_path / "ev"
    assert main(["evaluate", str(folder), *[str(out / m) for m in ("EXP", "GSA")], "--out", str(ev)]) == 1
    doc = json.loads((ev / "results.json").read_text())
    assert doc["scenes"]["sc0"]["GSA"]["status"] == "ok"
    assert doc["scenes"]["sc0"]["GSA"]["metrics"]["Q2n"] > doc["scenes"]["sc0"]["EXP"]["metrics"]["Q2n"]


def test_demo_runs_both_resolutions(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Q2n" in text and "HQNR" in text
    for resolution in ("reduced", "full"):
        doc = json.loads((out / resolution / "results.json").read_text())
        assert doc["methods"] == ["EXP", "BT-H", "GSA", "MTF-GLP-HPM"]
        assert doc["dataset"]["sensor"] == "none" and doc["dataset"]["resolution"] == resolution
        assert not doc["failures"]
    full = json.loads((out / "full" / "results.json").read_text())
    assert abs(full["scenes"]["solaris"]["EXP"]["metrics"]["D_lambda"]) < 1e-12  # EXP vs itself
    assert main(["demo", "--out", str(out)]) == 2  # existing run, no --force
    assert main(["demo", "--out", str(out), "--resume"]) == 0
    # --force replaces what the demo wrote and nothing else
    mine = [out / d / "notes.txt" for d in ("datasets", "methods", "reduced", "full")]
    for path in mine:
        path.write_text("mine")
    before = (out / "reduced" / "results.json").read_text()
    assert main(["demo", "--out", str(out), "--force"]) == 0
    assert all(p.read_text() == "mine" for p in mine)
    assert json.loads((out / "reduced" / "results.json").read_text())["scenes"] == json.loads(before)["scenes"]


def test_bundled_demo_data():
    from importlib import resources

    from pansharp_iqa.demo_data import demo_settings, load_demo

    ms, pan = load_demo()
    assert ms.dtype == np.uint16 and ms.shape == (144, 144, 4)
    assert pan.shape == (576, 576) and pan.shape[0] % 32 == 0
    settings = demo_settings()
    assert settings["sensor"] == "none" and settings["ratio"] == 4 and settings["bits"] == 11
    notice = resources.files("pansharp_iqa.demo_data").joinpath("NOTICE").read_text()
    assert "Apache" in notice and "CC BY-SA 4.0" in notice

"""``pansharp-eval table RUN... --out DIR`` on runs of PanCollection-shaped h5 files built from the
real WorldView-2 scene: the merged paper table, a run made elsewhere, refused merges, the output
folder's rules."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest

from cli_helpers import one_error_line
from pancollection_data import RATIO, full_h5, reduced_h5, write_h5, write_network_results, write_toml_for
from pansharp_iqa import evaluate_full, evaluate_reduced
from pansharp_iqa.cli.main import main


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A reduced-resolution run (GSA, COPY without scene 0) and a full-resolution run (GSA, EXP),
    with the per-scene values computed by the library directly."""
    import h5py

    from pansharp_iqa.baselines import exp, gsa

    root = tmp_path_factory.mktemp("table")
    rr_h5, rr_scenes = reduced_h5(root / "rr")
    write_toml_for(rr_h5, "reduced", result_scale="dn")
    fr_h5, fr_scenes = full_h5(root / "fr")
    write_toml_for(fr_h5, "full", result_scale="dn")
    rr_fused = [gsa(s["ms"], s["pan"], sensor="WV2", ratio=RATIO) for s in rr_scenes]
    fr_fused = {"GSA": [gsa(s["ms"], s["pan"], sensor="WV2", ratio=RATIO) for s in fr_scenes],
                "EXP": [exp(s["ms"], s["pan"], sensor="WV2", ratio=RATIO) for s in fr_scenes]}
    write_network_results(root / "m_rr" / "GSA", rr_fused)
    shutil.copytree(root / "m_rr" / "GSA", root / "m_rr" / "COPY")
    (root / "m_rr" / "COPY" / "results" / "output_mulExm_0.mat").unlink()
    for name, fused in fr_fused.items():
        write_network_results(root / "m_fr" / name, fused)
    flags = ["--no-progress", "--format", "json"]
    assert main(["evaluate", str(rr_h5), str(root / "m_rr" / "GSA"), str(root / "m_rr" / "COPY"),
                 "--out", str(root / "run_rr"), *flags]) == 1
    assert main(["evaluate", str(fr_h5), str(root / "m_fr" / "GSA"), str(root / "m_fr" / "EXP"),
                 "--out", str(root / "run_fr"), *flags]) == 0
    # the same reduced data, 12 bits declared: other numbers
    assert main(["evaluate", str(rr_h5), str(root / "m_rr" / "GSA"), "--out", str(root / "run_rr12"), "--bits", "12",
                 *flags]) in (0, 1)
    # other data under the same file and scene names: the scenes in reverse order
    other = root / "other" / rr_h5.name
    other.parent.mkdir()
    with h5py.File(rr_h5, "r") as handle:
        write_h5(other, **{k: np.asarray(handle[k])[::-1] for k in handle})
    write_toml_for(other, "reduced", result_scale="dn")
    assert main(["evaluate", str(other), str(root / "m_rr" / "GSA"), "--out", str(root / "run_other"), *flags]) == 0
    direct = {
        "Q2n": [float(evaluate_reduced(f, s["gt"], ratio=RATIO, bits=11)["Q2n"]) for f, s in zip(rr_fused, rr_scenes,
                                                                                                   strict=True)],
        "D_s": [float(evaluate_full(f, s["ms"], s["pan"], sensor="WV2", ratio=RATIO, bits=11)["D_s"])
                for f, s in zip(fr_fused["EXP"], fr_scenes, strict=True)],
    }
    return root, direct


def test_reduced_and_full_runs_merge_into_one_table(tmp_path, capsys, runs):
    root, direct = runs
    out = tmp_path / "table"
    code, stdout, stderr = _run(capsys, "table", root / "run_rr", root / "run_fr", "--out", out)
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == [".pansharp-eval-table.json", "table.csv", "table.html",
                                                      "table.md", "table.tex"]
    rows = {r["method"]: r for r in csv.DictReader((out / "table.csv").open(encoding="utf-8"))}
    assert list(rows) == ["GSA", "COPY", "EXP"]
    assert {k: rows[k]["complete"] for k in rows} == {"GSA": "true", "COPY": "false", "EXP": "false"}
    for index in ("Q2n", "Q2n_std", "SAM", "ERGAS", "SCC", "D_lambda", "D_s", "D_s_std", "QNR", "HQNR"):
        assert index in rows["GSA"] and rows["GSA"][index] != ""
    assert float(rows["GSA"]["Q2n"]) == pytest.approx(np.mean(direct["Q2n"]), rel=1e-12)
    assert float(rows["GSA"]["Q2n_std"]) == pytest.approx(np.std(direct["Q2n"], ddof=1), rel=1e-9)
    assert float(rows["COPY"]["Q2n"]) == pytest.approx(np.mean(direct["Q2n"][1:]), rel=1e-12)
    assert float(rows["EXP"]["D_s"]) == pytest.approx(np.mean(direct["D_s"]), rel=1e-12)
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "COPY (incomplete RR 3/4, FR 0/2)" in md and md in stdout
    gsa_row = next(line for line in md.splitlines() if line.startswith("| GSA |"))
    assert gsa_row.count("**") == 2 * 10 and gsa_row.endswith("| 1.00 |")  # the only complete method: best, rank 1
    tex = (out / "table.tex").read_text(encoding="utf-8")
    assert len([line for line in tex.splitlines() if "\\caption{" in line]) == 1 and "toolbox2020" in tex


def test_a_run_made_elsewhere_merges_like_a_local_one(tmp_path, capsys, runs):
    root, _ = runs
    elsewhere = tmp_path / "lab2"  # only its results.json travels
    elsewhere.mkdir()
    shutil.copy(root / "run_fr" / "results.json", elsewhere / "results.json")
    local, remote = tmp_path / "local", tmp_path / "remote"
    assert _run(capsys, "table", root / "run_rr", root / "run_fr", "--out", local, "--format", "csv")[0] == 0
    assert _run(capsys, "table", root / "run_rr", elsewhere / "results.json", "--out", remote,
                "--format", "csv")[0] == 0
    assert (local / "table.csv").read_text() == (remote / "table.csv").read_text()


@pytest.mark.parametrize("other, needle", [("run_rr12", "bits (11 vs 12)"), ("run_other", "hash")])
def test_runs_whose_numbers_differ_are_refused(tmp_path, capsys, runs, other, needle):
    root, _ = runs
    out = tmp_path / "table"
    code, stdout, stderr = _run(capsys, "table", root / "run_rr", root / other, "--out", out)
    assert code == 2 and stdout == ""
    one_error_line(stderr, needle)
    assert not out.exists()


def test_the_output_folder_rules(tmp_path, capsys, runs):
    root, _ = runs
    out = tmp_path / "table"
    args = ["table", root / "run_rr", root / "run_fr", "--out", out]
    assert _run(capsys, *args)[0] == 0
    code, _, stderr = _run(capsys, *args)
    assert code == 2 and "--force" in one_error_line(stderr)
    assert _run(capsys, *args, "--force", "--format", "csv")[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [".pansharp-eval-table.json", "table.csv"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "table.md").write_text("my notes")
    code, _, stderr = _run(capsys, "table", root / "run_rr", "--out", mine, "--force")
    assert code == 2 and (mine / "table.md").read_text() == "my notes"
    one_error_line(stderr, "table.md")
    code, _, stderr = _run(capsys, "table", root / "run_rr", "--out", root / "run_rr")
    assert code == 2 and json.loads((root / "run_rr" / "results.json").read_text())["tool"] == "pansharp-eval"

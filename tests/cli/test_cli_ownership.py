"""Issue 20, item 10: a file the tool's manifest does not list is never the tool's to replace,
``--force`` or not (``baselines``, ``evaluate``, ``demo``; ``degrade`` never overwrites). The
tool's own earlier files are replaced with ``--force``, and everything else in the folder stays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cli_helpers import BITS, RATIO, make_scene, one_error_line, write_toml
from pansharp_iqa.cli.baselines_command import MANIFEST_NAME as BASELINES_MANIFEST
from pansharp_iqa.cli.main import main


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    for name, seed in (("A", 1), ("B", 2)):
        np.savez(folder / f"{name}.npz", **make_scene(seed))
    return folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_baselines_never_overwrite_a_file_they_did_not_write(tmp_path, capsys):
    folder = _dataset(tmp_path)
    mine = tmp_path / "mine"
    (mine / "GSA").mkdir(parents=True)
    np.save(mine / "GSA" / "A.npy", np.ones((4, 4)))  # the user's own result
    before = _tree(mine)
    for flags in ([], ["--force"]):
        code, _, err = _run(capsys, "baselines", folder, "--out", mine, "--methods", "GSA", *flags)
        assert code == 2
        one_error_line(err, mine / "GSA")
        assert _tree(mine) == before  # not even a manifest
    # other methods, in folders of their own, go ahead beside it
    assert _run(capsys, "baselines", folder, "--out", mine, "--methods", "EXP")[0] == 0
    assert np.load(mine / "GSA" / "A.npy").shape == (4, 4) and (mine / "EXP" / "A.npy").is_file()


def test_baselines_replace_their_own_results_with_force_only(tmp_path, capsys):
    folder = _dataset(tmp_path)
    out = tmp_path / "methods"
    assert _run(capsys, "baselines", folder, "--out", out, "--methods", "EXP,GSA")[0] == 0
    manifest = json.loads((out / BASELINES_MANIFEST).read_text())
    assert manifest["files"] == ["EXP/A.npy", "EXP/B.npy", "GSA/A.npy", "GSA/B.npy"]
    (out / "notes.txt").write_text("mine")
    (out / "GSA" / "extra.txt").write_text("mine too")
    code, _, err = _run(capsys, "baselines", folder, "--out", out, "--methods", "GSA")
    assert code == 2 and "pass --force" in one_error_line(err, out / "GSA")
    np.save(out / "GSA" / "A.npy", np.zeros((2, 2)))  # spoil one of the tool's files
    assert _run(capsys, "baselines", folder, "--out", out, "--methods", "GSA", "--force")[0] == 0
    assert np.load(out / "GSA" / "A.npy").shape == (128, 128, 4)  # replaced
    assert (out / "notes.txt").read_text() == "mine" and (out / "GSA" / "extra.txt").read_text() == "mine too"
    assert (out / "EXP" / "A.npy").is_file()  # a run of other methods leaves the earlier ones listed and in place
    assert json.loads((out / BASELINES_MANIFEST).read_text())["files"] == manifest["files"]


def test_evaluate_writes_beside_the_baselines_in_the_same_folder(tmp_path, capsys):
    """The documented workflow: ``baselines DATASET --out OUT`` then ``evaluate DATASET OUT/* --out OUT``."""
    folder = _dataset(tmp_path)
    out = tmp_path / "out"
    assert _run(capsys, "baselines", folder, "--out", out, "--methods", "EXP,GSA")[0] == 0
    results = _tree(out)
    assert _run(capsys, "evaluate", folder, out / "EXP", out / "GSA", "--out", out, "--format", "json")[0] == 0
    assert _run(capsys, "evaluate", folder, out / "EXP", out / "GSA", "--out", out, "--format", "csv",
                "--force")[0] == 0
    after = _tree(out)
    assert {k: after[k] for k in results} == results and "results.csv" in after and "results.json" not in after
    assert _run(capsys, "baselines", folder, "--out", out, "--methods", "EXP,GSA", "--force")[0] == 0
    assert "results.csv" in _tree(out)  # the baselines never touch the evaluation's files


def test_evaluate_refuses_a_users_file_where_a_report_goes_even_with_force(tmp_path, capsys, reduced_dataset,
                                                                           rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    assert _run(capsys, "evaluate", folder, *rr_methods.values(), "--out", out, "--format", "csv")[0] == 0
    (out / "report.html").write_text("my page")
    code, _, err = _run(capsys, "evaluate", folder, *rr_methods.values(), "--out", out, "--format", "csv,html",
                        "--force")
    assert code == 2 and (out / "report.html").read_text() == "my page"
    one_error_line(err, out / "report.html", "not written by pansharp-eval")


def test_demo_force_never_replaces_a_file_it_did_not_write(tmp_path, capsys):
    out = tmp_path / "demo"
    (out / "datasets" / "full").mkdir(parents=True)
    (out / "datasets" / "full" / "dataset.toml").write_text("# mine\n")
    code, _, err = _run(capsys, "demo", "--out", out, "--force", "--format", "csv")
    assert code == 2 and (out / "datasets" / "full" / "dataset.toml").read_text() == "# mine\n"
    one_error_line(err, out / "datasets")

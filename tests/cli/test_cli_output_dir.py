"""The output folder (issue 14, items 1-3): --force deletes only what the tool wrote (its
manifest), refuses before touching anything else, and after any run every report and per-scene
record in OUT belongs to that run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import full_resolution_dataset, noisy
from pansharp_iqa.cli.main import main
from pansharp_iqa.cli.output_dir import MANIFEST_NAME


def _run(capsys, argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _method_in(out: Path, name: str, scenes: dict) -> Path:
    folder = out / name
    folder.mkdir(parents=True)
    for j, (scene, sc) in enumerate(scenes.items()):
        np.save(folder / f"{scene}.npy", noisy(sc["gt"], 15.0, 50 + j))
    return folder


def _one_error_line(err: str, path: Path) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pansharp-eval: error:") and str(path) in lines[0], err
    assert "Traceback" not in err


def test_method_folder_and_user_files_inside_out_survive_force(tmp_path, capsys, reduced_dataset):
    folder, scenes = reduced_dataset
    out = tmp_path / "out"
    gsa = _method_in(out, "GSA", scenes)  # e.g. `pansharp-eval baselines DATASET --out OUT`, then --out OUT
    (out / "notes.txt").write_text("mine")
    method_files = _tree(gsa)
    args = ["evaluate", folder, gsa, "--out", out]
    assert _run(capsys, args)[0] == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["tool"] == "pansharp-eval" and manifest["status"] == "complete" and manifest["run_id"]
    assert "results.json" in manifest["files"] and "scenes/GSA/s1.json" in manifest["files"]
    assert not any(f.startswith("GSA") or f == "notes.txt" for f in manifest["files"])
    assert json.loads((out / "results.json").read_text())["run"]["run_id"] == manifest["run_id"]
    assert _run(capsys, [*args, "--force"])[0] == 0
    assert _tree(gsa) == method_files and (out / "notes.txt").read_text() == "mine"
    assert (out / "results.json").is_file()


@pytest.mark.parametrize("where", ["plots", "scenes"])
def test_force_refuses_a_folder_it_did_not_write(tmp_path, capsys, reduced_dataset, where):
    folder, scenes = reduced_dataset
    out = tmp_path / "out"
    gsa = _method_in(out, "GSA", scenes)
    theirs = _method_in(out, where, scenes)  # a method's results folder named like an output folder
    if where == "plots":
        assert _run(capsys, ["evaluate", folder, gsa, theirs, "--out", out])[0] == 0  # no --plots: never touched
    before = _tree(out)
    code, _, err = _run(capsys, ["evaluate", folder, gsa, theirs, "--out", out, "--force", "--plots"])
    assert code == 2
    _one_error_line(err, out / where)
    assert _tree(out) == before  # nothing removed, nothing written


def test_user_file_where_a_report_goes_is_refused(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.md").write_text("# my own notes\n")
    for flags in ([], ["--force"], ["--resume"]):
        code, _, err = _run(capsys, ["evaluate", folder, *rr_methods.values(), "--out", out, *flags])
        assert code == 2
        _one_error_line(err, out / "results.md")
    assert (out / "results.md").read_text() == "# my own notes\n" and len(list(out.iterdir())) == 1
    # a format that does not write results.md goes ahead, and leaves the file alone
    assert _run(capsys, ["evaluate", folder, *rr_methods.values(), "--out", out, "--format", "csv"])[0] == 0
    assert (out / "results.md").read_text() == "# my own notes\n"


def test_without_its_manifest_nothing_in_out_is_the_tools(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", folder, *rr_methods.values(), "--out", out]
    assert _run(capsys, [*args, "--plots"])[0] == 0
    (out / MANIFEST_NAME).unlink()  # the files look like the tool's, but no manifest says so
    before = _tree(out)
    for flags in ([], ["--force"], ["--resume"]):
        code, _, err = _run(capsys, [*args, *flags])
        assert code == 2 and ("was not written by pansharp-eval" in err or "did not make" in err), err
        assert _tree(out) == before  # nothing replaced, nothing removed
    # a run that writes elsewhere in the same folder goes ahead
    assert _run(capsys, [*args[:-1], out / "new"])[0] == 0 and _tree(out) == {
        **before, **{f"new/{k}": v for k, v in _tree(out / "new").items()}}


def test_resume_with_fewer_formats_and_methods_leaves_only_this_run(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, scenes = reduced_dataset
    out = tmp_path / "out"
    methods = list(map(str, rr_methods.values()))
    assert _run(capsys, ["evaluate", folder, *methods, "--out", out, "--plots"])[0] == 0
    np.save(rr_methods["good"] / "s2.npy", noisy(scenes["s2"]["gt"], 40.0, 7))  # different numbers now
    assert _run(capsys, ["evaluate", folder, methods[0], "--out", out, "--resume", "--format", "csv"])[0] == 0
    fresh = tmp_path / "fresh"
    assert _run(capsys, ["evaluate", folder, methods[0], "--out", fresh, "--format", "csv"])[0] == 0
    assert (out / "results.csv").read_text() == (fresh / "results.csv").read_text()
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        MANIFEST_NAME, "results.csv", "scenes", "scenes/good", "scenes/good/s1.json", "scenes/good/s2.json",
        "scenes/good/s3.json",
    ]  # no results.json/md/tex, plots/, maps or records of the other method from the first run
    assert sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()) == [
        MANIFEST_NAME, "results.csv", "scenes/good/s1.json", "scenes/good/s2.json", "scenes/good/s3.json"]


def test_interrupted_run_is_recognised(tmp_path, capsys, monkeypatch, reduced_dataset, rr_methods):
    import pansharp_iqa.cli.evaluate_command as command

    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", folder, *rr_methods.values(), "--out", out]

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "write_reports", interrupted)
    assert _run(capsys, args)[0] == 130
    monkeypatch.undo()
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["status"] == "interrupted" and "scenes/good/s1.json" in manifest["files"]
    assert not [p for p in out.iterdir() if p.name.startswith(".pansharp-eval-staging")]
    code, _, _ = _run(capsys, [*args, "--resume"])
    assert code == 0
    assert json.loads((out / "results.json").read_text())["run"]["resumed"] == 6


def test_manifest_that_is_not_the_tools_is_refused(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST_NAME).write_text(json.dumps({"tool": "pansharp-eval", "files": ["../elsewhere.txt"]}))
    code, _, err = _run(capsys, ["evaluate", folder, *rr_methods.values(), "--out", out, "--force"])
    assert code == 2 and "outside the output folder" in err
    (out / MANIFEST_NAME).write_text("not json")
    code, _, err = _run(capsys, ["evaluate", folder, *rr_methods.values(), "--out", out, "--force"])
    assert code == 2 and "cannot be read" in err


def test_full_resolution_resume_with_plots_reuses_every_result(tmp_path, capsys, monkeypatch):
    import pansharp_iqa.cli.evaluate_command as command

    folder, res = full_resolution_dataset(tmp_path, 80)
    out = tmp_path / "out"
    args = ["evaluate", folder, res, "--out", out, "--plots", "--format", "json"]
    assert _run(capsys, args)[0] == 0
    records = {p: p.read_bytes() for p in (out / "scenes").rglob("*.json")}
    stored = []
    monkeypatch.setattr(command, "store_outcome", lambda path, *a, **k: stored.append(path))
    assert _run(capsys, [*args, "--resume"])[0] == 0
    assert stored == []  # no per-pair result rewritten
    assert json.loads((out / "results.json").read_text())["run"]["resumed"] == 2
    assert {p: p.read_bytes() for p in (out / "scenes").rglob("*.json")} == records


def test_unwritable_out_is_one_line(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    (tmp_path / "afile").write_text("x")
    for argv in (["evaluate", folder, *rr_methods.values(), "--out", tmp_path / "afile" / "out"],
                 ["degrade", folder, "--resolution", "full", "--out", tmp_path / "afile" / "red"]):
        code, _, err = _run(capsys, argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"cannot create --out {tmp_path / 'afile'}" in err
        assert f"{tmp_path / 'afile'} is a file, not a folder" in err


def test_other_os_errors_name_the_reason_and_path_not_a_write(tmp_path, capsys, monkeypatch, reduced_dataset,
                                                               rr_methods):
    """The catch-all for what the system refuses says what it refused, not always "cannot write"."""
    import pansharp_iqa.cli.evaluate_command as command

    folder, _ = reduced_dataset

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(folder / "s1.npz"))

    monkeypatch.setattr(command, "discover_scenes", refuse)
    code, _, err = _run(capsys, ["evaluate", folder, *rr_methods.values(), "--out", tmp_path / "out"])
    assert code == 2 and err.strip() == f"pansharp-eval: error: Permission denied ({folder / 's1.npz'})", err


def _earlier_run(capsys, folder, methods, out):
    args = ["evaluate", folder, *methods, "--out", out, "--format", "csv,json", "--plots"]
    assert _run(capsys, args)[0] == 0
    return args, {k: v for k, v in _tree(out).items() if k != MANIFEST_NAME}


def _unchanged(out: Path, before: dict[str, bytes]) -> None:
    assert {k: v for k, v in _tree(out).items() if k != MANIFEST_NAME} == before
    assert not [p for p in out.iterdir() if p.name.startswith(".pansharp-eval-staging")]


def test_force_with_an_unreachable_scheduler_keeps_the_earlier_results(tmp_path, capsys, monkeypatch,
                                                                        reduced_dataset, rr_methods):
    from pansharp_iqa.cli import runner

    pytest.importorskip("distributed")
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT", 1.0, raising=False)
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args, before = _earlier_run(capsys, folder, rr_methods.values(), out)
    manifest = (out / MANIFEST_NAME).read_bytes()
    for address, message in (("tcp://127.0.0.1:1", "cannot reach the Dask scheduler at 'tcp://127.0.0.1:1'"),
                             ("notanaddress", "--scheduler notanaddress: missing port number")):
        code, _, err = _run(capsys, [*args, "--force", "--scheduler", address])
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert "cannot write" not in err
        _unchanged(out, before)
        assert (out / MANIFEST_NAME).read_bytes() == manifest  # refused before the folder was touched


def test_interrupted_or_failed_force_run_keeps_the_earlier_results(tmp_path, capsys, monkeypatch, reduced_dataset,
                                                                  rr_methods):
    import pansharp_iqa.cli.evaluate_command as command
    from pansharp_iqa.cli import runner

    folder, scenes = reduced_dataset
    out = tmp_path / "out"
    args, before = _earlier_run(capsys, folder, rr_methods.values(), out)
    for s in scenes:  # the new run would write other numbers
        np.save(rr_methods["good"] / f"{s}.npy", noisy(scenes[s]["gt"], 30.0, 7))
    calls = []
    evaluate = runner.evaluate_scene

    def interrupted(task):
        calls.append(task)
        if len(calls) == 3:  # two pairs evaluated (and their records written), then Ctrl-C
            raise KeyboardInterrupt
        return evaluate(task)

    monkeypatch.setattr(runner, "evaluate_scene", interrupted)
    code, _, err = _run(capsys, [*args, "--force"])
    assert code == 130 and "interrupted" in err and len(calls) == 3
    _unchanged(out, before)
    monkeypatch.setattr(runner, "evaluate_scene", evaluate)

    def no_space(*a, **k):
        raise OSError(28, "No space left on device", str(out / "results.csv"))

    monkeypatch.setattr(command, "write_reports", no_space)
    code, _, err = _run(capsys, [*args, "--force"])
    assert code == 2 and "No space left on device" in err
    _unchanged(out, before)
    monkeypatch.undo()
    # a complete --force run replaces them, and its commit removes what it did not write
    assert _run(capsys, ["evaluate", folder, *rr_methods.values(), "--out", out, "--format", "csv", "--force"])[0] == 0
    after = _tree(out)
    assert after["results.csv"] != before["results.csv"]
    assert all(after[k] != v for k, v in before.items() if k.startswith("scenes/good/") and k.endswith(".json"))
    records = {k for k in before if k.startswith("scenes/") and k.endswith(".json")}
    assert set(after) == {MANIFEST_NAME, "results.csv", *records}  # no results.json, plots/ or maps left


def test_refusal_of_earlier_results_comes_before_any_file_is_hashed(tmp_path, capsys, monkeypatch, reduced_dataset,
                                                                    rr_methods):
    import pansharp_iqa.cli.evaluate_command as command

    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args, _ = _earlier_run(capsys, folder, rr_methods.values(), out)
    hashed = []
    monkeypatch.setattr(command, "sha256_file", lambda path: hashed.append(path) or "0" * 64)
    code, _, err = _run(capsys, args)
    assert code == 2 and "already holds results" in err
    assert hashed == []


def test_a_run_interrupted_while_drawing_figures_leaves_the_earlier_results(tmp_path, capsys, monkeypatch,
                                                                             reduced_dataset, rr_methods):
    from pansharp_iqa.reports import figures

    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args, before = _earlier_run(capsys, folder, rr_methods.values(), out)
    drawn = []
    real = figures.write_scene_figure

    def interrupted(out_dir, view, **kwargs):
        if drawn:
            raise KeyboardInterrupt  # the second scene's figure
        drawn.append(real(out_dir, view, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(figures, "write_scene_figure", interrupted)
    code, _, err = _run(capsys, [*args, "--force", "--figures"])
    assert code == 130 and len(drawn) == 1
    _unchanged(out, before)
    assert not (out / "figures").exists()
    assert json.loads((out / MANIFEST_NAME).read_text())["status"] == "interrupted"

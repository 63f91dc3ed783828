"""Issue 20, item 11: two runs on the same OUT at once. One holds OUT's lock from its first check
to its last write; the other refuses with one line (exit 2), and OUT describes one run. Runs on
other folders, and runs one after the other, go ahead."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from cli_helpers import cli_command, one_error_line, run_cli
from pansharp_iqa.cli.output_dir import MANIFEST_NAME

#: Run first in the slow process: every pair takes 3 s more, so the run holds OUT's lock a while.
SLOW = """
import time
import pansharp_iqa.cli.runner as runner
_evaluate = runner.evaluate_scene
def _slow(task, **kw):
    time.sleep(3)
    return _evaluate(task, **kw)
runner.evaluate_scene = _slow
"""


def _describes_one_run(out: Path) -> None:
    """OUT holds the reports and records of one run and its manifest lists exactly them."""
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["status"] == "complete"
    assert json.loads((out / "results.json").read_text())["run"]["run_id"] == manifest["run_id"]
    present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != MANIFEST_NAME)
    assert present == manifest["files"]


def _start(*args: object, prelude: str = "") -> subprocess.Popen[str]:
    return subprocess.Popen(cli_command(*args, prelude=prelude), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_a_second_run_on_the_same_out_refuses_while_the_first_writes(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", folder, *rr_methods.values(), "--out", out, "--format", "csv,json", "--no-progress"]
    first = _start(*args, prelude=SLOW)
    deadline = time.monotonic() + 120
    while not (out / MANIFEST_NAME).exists():  # the first run holds the lock once it has claimed its files
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    second = run_cli(*args, "--force")
    assert second.returncode == 2
    one_error_line(second.stderr, out, "being written by another pansharp-eval run")
    assert first.wait(timeout=300) == 0, first.communicate()
    _describes_one_run(out)
    # once the first is done, the same command goes ahead
    third = run_cli(*args, "--force")
    assert third.returncode == 0, third.stderr
    _describes_one_run(out)


def test_simultaneous_force_runs_leave_one_run_in_out(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    methods = list(rr_methods.values())
    for trial in range(3):
        # two runs that write different reports (csv / json): a mix would show in OUT
        runs = [_start("evaluate", folder, *methods, "--out", out, "--force", "--format", fmt, "--no-progress")
                for fmt in ("csv,md", "json,tex")]
        codes, errors = zip(*[(r.wait(timeout=300), r.communicate()[1]) for r in runs], strict=True)
        assert 0 in codes and set(codes) <= {0, 2}, errors
        for code, err in zip(codes, errors, strict=True):
            if code == 2:
                one_error_line(err, "being written by another pansharp-eval run")
        manifest = json.loads((out / MANIFEST_NAME).read_text())
        present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                         if p.is_file() and p.name != MANIFEST_NAME)
        assert manifest["status"] == "complete" and present == manifest["files"], trial
        reports = {p for p in present if p.startswith("results.")}
        assert reports in ({"results.csv", "results.md"}, {"results.json", "results.tex"}), reports


def test_runs_on_different_folders_at_once_both_go_ahead(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    runs = [_start("evaluate", folder, *rr_methods.values(), "--out", tmp_path / name, "--format", "csv,json",
                   "--no-progress") for name in ("a", "b")]
    assert [r.wait(timeout=300) for r in runs] == [0, 0]
    for name in ("a", "b"):
        _describes_one_run(tmp_path / name)

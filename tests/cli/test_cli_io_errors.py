"""Issue 20, item 16: a file operation the system refuses on the output side (a read-only folder, a
full disk) is the run's error, not a per-pair failure: one line naming the path, exit status 2, and
no partial output. A scene whose *input* cannot be read stays that scene's failure (exit 1)."""

from __future__ import annotations

import builtins
import errno
import os
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import BITS, RATIO, make_scene, one_error_line, write_toml
from pansharp_iqa.cli.main import main


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _read_only(monkeypatch, folder: Path) -> None:
    """Make ``folder`` read-only (for root too, who ignores the mode: writes there are refused)."""
    folder.chmod(0o555)
    real_open, real_mkdir = builtins.open, os.mkdir

    def inside(path: object) -> bool:
        return str(Path(path).absolute()).startswith(str(folder.absolute()) + os.sep)

    def no_write(path, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+") and inside(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, mode, *args, **kwargs)

    def no_mkdir(path, *args, **kwargs):
        if inside(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_write)
    monkeypatch.setattr(os, "mkdir", no_mkdir)


def _full_dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "full"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="full")
    for i in range(2):
        sc = make_scene(20 + i)
        np.savez(folder / f"f{i}.npz", ms=sc["gt"], pan=np.kron(sc["gt"].mean(axis=2), np.ones((RATIO, RATIO))))
    return folder


def test_baselines_into_a_read_only_folder_is_one_line(tmp_path, capsys, monkeypatch, reduced_dataset):
    folder, _ = reduced_dataset
    out = tmp_path / "methods"
    out.mkdir()
    _read_only(monkeypatch, out)
    code, stdout, err = _run(capsys, "baselines", folder, "--out", out)
    monkeypatch.undo()
    out.chmod(0o755)
    assert code == 2 and "FAILED" not in err + stdout
    one_error_line(err, "Permission denied", out)
    assert list(out.iterdir()) == []
    assert _run(capsys, "baselines", folder, "--out", out, "--methods", "EXP")[0] == 0  # writable: fine


def test_degrade_on_a_full_disk_is_one_line_and_leaves_no_partial_dataset(tmp_path, capsys, monkeypatch):
    from pansharp_iqa.cli import degrade_command

    full = _full_dataset(tmp_path)
    real_save, calls = np.save, []

    def save(handle, arr, *a, **k):
        calls.append(1)
        if len(calls) == 4:  # the second scene's first file
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(handle, arr, *a, **k)

    monkeypatch.setattr(degrade_command.np, "save", save)
    code, _, err = _run(capsys, "degrade", full, "--out", tmp_path / "reduced")
    assert code == 2 and "FAILED" not in err
    line = one_error_line(err, "No space left on device", "f1_gt.npy")
    assert str(tmp_path) in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # no partial folder, no OUT
    monkeypatch.undo()
    assert _run(capsys, "degrade", full, "--out", tmp_path / "reduced")[0] == 0


def test_evaluate_with_a_full_disk_is_one_line_and_keeps_the_earlier_results(tmp_path, capsys, monkeypatch,
                                                                              reduced_dataset, rr_methods):
    from pansharp_iqa.reports import csv_report

    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", folder, *rr_methods.values(), "--out", out, "--format", "csv,md"]
    assert _run(capsys, *args)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}

    def full_disk(path, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(csv_report, "open", full_disk, raising=False)
    code, stdout, err = _run(capsys, *args, "--force")
    assert code == 2 and "FAILED" not in stdout
    one_error_line(err, "No space left on device", "results.csv")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")} == before


@pytest.mark.parametrize("command", ["evaluate", "baselines"])
def test_an_unreadable_input_stays_that_scenes_failure(tmp_path, capsys, command, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    (folder / "s2.npz").write_bytes(b"not a numpy file")
    argv = ([command, folder, *rr_methods.values()] if command == "evaluate" else [command, folder]) + [
        "--out", tmp_path / "out"]
    code, stdout, err = _run(capsys, *argv)
    assert code == 1 and "s2" in stdout + err and "error:" not in err

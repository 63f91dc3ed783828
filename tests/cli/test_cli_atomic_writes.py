"""Issue 20, item 12: results are written atomically (a temporary file beside the target, then
renamed): a write that fails midway (a full disk) leaves no truncated file that a rerun would take
for a result, and the rerun writes them all."""

from __future__ import annotations

import errno
import json

import numpy as np
import pytest

from cli_helpers import BITS, RATIO, make_scene, one_error_line, write_toml
from pansharp_iqa.cli.main import main
from pansharp_iqa.cli.output_dir import atomic_file


def _dataset(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    for i in range(3):
        np.savez(folder / f"s{i}.npz", **make_scene(40 + i))
    return folder


def test_baselines_on_a_full_disk_leave_no_truncated_result(tmp_path, capsys, monkeypatch):
    from pansharp_iqa.baselines.npy_output import NpyRows

    folder, out = _dataset(tmp_path), tmp_path / "methods"
    real_write = NpyRows.__setitem__

    def write(self, key, value):  # the disk fills while the third scene's rows are written
        if ".s2.npy." in self.path:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, key, value)

    monkeypatch.setattr(NpyRows, "__setitem__", write)
    code = main(["baselines", str(folder), "--out", str(out), "--methods", "EXP"])
    err = capsys.readouterr().err
    assert code == 2 and "FAILED" not in err
    one_error_line(err, "No space left on device", out / "EXP" / "s2.npy")
    assert sorted(p.name for p in (out / "EXP").iterdir()) == ["s0.npy", "s1.npy"]  # whole files only
    assert all(np.load(out / "EXP" / f"s{i}.npy").shape == (128, 128, 4) for i in range(2))
    monkeypatch.undo()
    # the rerun finds no half-written result to keep: --force (for the two written) writes all three
    assert main(["baselines", str(folder), "--out", str(out), "--methods", "EXP"]) == 2
    assert main(["baselines", str(folder), "--out", str(out), "--methods", "EXP", "--force"]) == 0
    assert np.load(out / "EXP" / "s2.npy").shape == (128, 128, 4)


def test_an_interrupted_record_write_leaves_the_earlier_record(tmp_path, capsys, monkeypatch, reduced_dataset,
                                                                rr_methods):
    from pansharp_iqa.cli import scene_cache

    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out), "--format", "csv"]
    assert main(args) == 0
    record = out / "scenes" / "good" / "s1.json"
    before = record.read_bytes()

    def interrupted(document):
        raise KeyboardInterrupt  # while the record is being written

    monkeypatch.setattr(scene_cache, "json_text", interrupted)
    assert main([*args, "--resume"]) == 0  # every record reused: none rewritten
    np.save(rr_methods["good"] / "s1.npy", np.load(rr_methods["good"] / "s1.npy") + 1.0)  # a new result
    assert main([*args, "--resume"]) == 130
    assert record.read_bytes() == before and not list(record.parent.glob(".*.tmp"))
    assert json.loads(record.read_text())["status"] == "ok"


def test_atomic_file_keeps_the_target_and_names_it_on_failure(tmp_path):
    target = tmp_path / "r.npy"
    target.write_bytes(b"earlier")
    with pytest.raises(OSError) as info, atomic_file(target) as handle:
        handle.write(b"half")
        raise OSError(errno.EIO, "Input/output error")
    assert info.value.filename == str(target) and info.value.errno == errno.EIO
    assert target.read_bytes() == b"earlier" and [p.name for p in tmp_path.iterdir()] == ["r.npy"]
    with atomic_file(target) as handle:  # and a complete write replaces it
        handle.write(b"new")
    assert target.read_bytes() == b"new"

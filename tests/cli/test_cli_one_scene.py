"""Issue 27, item 11, through ``pansharp-eval``: one scene has an undefined std (JSON null, no
"+- std" in the printed table); the library-level cases are in tests/reports/test_single_scene_std.py."""

from __future__ import annotations

import json

import numpy as np

from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml
from pansharp_iqa.cli.main import main


def test_one_scene_std_is_null_in_results_json_and_absent_from_the_table(tmp_path, capsys):
    folder, res = tmp_path / "rr", tmp_path / "m"
    folder.mkdir()
    res.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    scene = make_scene(3)
    np.savez(folder / "only.npz", **scene)
    np.save(res / "only.npy", noisy(scene["gt"], 10, 0))
    assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    summary = doc["summary"]["m"]
    q2n = doc["scenes"]["only"]["m"]["metrics"]["Q2n"]
    assert summary["Q2n"] == {"mean": q2n, "std": None, "n": 1}
    assert all(summary[k]["std"] is None for k in doc["metrics"])
    printed = capsys.readouterr().out
    assert f"{q2n:.4f}" in printed and "+-" not in printed.split("(+) higher")[0]

"""Issue 20, item 13: non-ASCII scene and method names on a terminal that only takes ASCII
(``LC_ALL=C PYTHONIOENCODING=ascii``): no traceback, the names are printed escaped, the reports keep
them as they are (UTF-8), and the manifest is never left ``running``."""

from __future__ import annotations

import json

import numpy as np

from cli_helpers import BITS, RATIO, make_scene, noisy, one_error_line, run_cli, write_toml
from pansharp_iqa.cli.output_dir import MANIFEST_NAME

ASCII_ONLY = {"LC_ALL": "C", "PYTHONIOENCODING": "ascii"}


def _dataset(tmp_path):
    folder, method = tmp_path / "ds", tmp_path / "méthode±"
    folder.mkdir()
    method.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    for name, seed in (("scène", 1), ("plain", 2)):
        sc = make_scene(seed)
        np.savez(folder / f"{name}.npz", **sc)
        np.save(method / f"{name}.npy", noisy(sc["gt"], 10.0, seed))
    return folder, method


def test_non_ascii_names_on_an_ascii_terminal(tmp_path):
    folder, method = _dataset(tmp_path)
    out = tmp_path / "o"
    proc = run_cli("evaluate", folder, method, "--out", out, "--format", "table,csv,json,md,html", env=ASCII_ONLY)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr
    assert "m\\xe9thode\\xb1" in proc.stdout  # escaped on the terminal
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["methods"] == ["méthode±"] and set(doc["scenes"]) == {"plain", "scène"}
    assert "scène" in (out / "results.csv").read_text(encoding="utf-8")
    assert "méthode±" in (out / "results.md").read_text(encoding="utf-8")
    assert json.loads((out / MANIFEST_NAME).read_text())["status"] == "complete"
    # an expected failure on that terminal is one line too, naming the folder
    again = run_cli("evaluate", folder, method, "--out", out, env=ASCII_ONLY)
    assert again.returncode == 2
    one_error_line(again.stderr, "already holds results")


def test_a_failed_run_never_leaves_the_manifest_running(tmp_path):
    folder, method = _dataset(tmp_path)
    out = tmp_path / "o"
    broken = "import pansharp_iqa.cli.evaluate_command as c\ndef _no(*a, **k):\n    raise RuntimeError('boom')\n" \
             "c.write_reports = _no\n"
    proc = run_cli("evaluate", folder, method, "--out", out, prelude=broken, env=ASCII_ONLY)
    assert proc.returncode == 1 and "RuntimeError: boom" in proc.stderr  # an unexpected bug: its traceback
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["status"] == "failed" and manifest["staging"] is None
    assert not [p for p in out.iterdir() if p.name.startswith(".pansharp-eval-staging")]


def test_utf8_terminal_prints_the_names_as_they_are(tmp_path):
    folder, method = _dataset(tmp_path)
    proc = run_cli("evaluate", folder, method, "--out", tmp_path / "o", env={"PYTHONIOENCODING": "utf-8"})
    assert proc.returncode == 0 and "méthode±" in proc.stdout

"""``--indexes`` (and ``dataset.toml``'s ``indexes``): the catalogue's extras in every report, the
library's ``indexes=`` numbers, refusals before the output folder is touched."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as psi
from cli_helpers import BITS, RATIO, full_resolution_dataset, run_cli, write_toml
from pansharp_iqa.cli.main import main


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "results.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_extras_in_every_report_with_the_library_numbers(tmp_path, reduced_dataset, rr_methods):
    folder, scenes = reduced_dataset
    out = tmp_path / "out"
    code = main(["evaluate", str(folder), str(rr_methods["good"]), "--out", str(out), "--format", "csv,json,md,tex",
                 "--indexes", "default,PSNR,CC", "--no-progress"])
    assert code == 0
    rows = _rows(out)
    assert list(rows[0])[3:-1] == ["Q2n", "Q", "SAM", "ERGAS", "SCC", "PSNR", "CC"]
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["dataset"]["indexes"] == ["default", "PSNR", "CC"]
    for name, sc in scenes.items():
        fused = np.load(rr_methods["good"] / f"{name}.npy")
        ref = psi.evaluate_reduced(fused, sc["gt"], ratio=RATIO, bits=BITS, indexes=["default", "PSNR", "CC"])
        got = doc["scenes"][name]["good"]["metrics"]
        assert {k: got[k] for k in ("PSNR", "CC", "Q2n")} == {k: ref[k] for k in ("PSNR", "CC", "Q2n")}
        assert doc["scenes"][name]["good"]["protocol"]["extra_indexes"].keys() == {"PSNR", "CC"}
    assert "PSNR" in (out / "results.md").read_text(encoding="utf-8")
    assert "PSNR" in (out / "results.tex").read_text(encoding="utf-8")


def test_a_subset_from_dataset_toml(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn",
               indexes=["Q2n", "PSNR"])
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), str(rr_methods["good"]), "--out", str(out), "--no-progress"]) == 0
    assert list(_rows(out)[0])[3:-1] == ["Q2n", "PSNR"]


def test_default_run_has_no_indexes_key(tmp_path, reduced_dataset, rr_methods):
    """A run without ``--indexes`` writes the same results.json as before the option existed."""
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), str(rr_methods["good"]), "--out", str(out), "--no-progress"]) == 0
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert "indexes" not in doc["dataset"]
    assert list(_rows(out)[0])[3:-1] == ["Q2n", "Q", "SAM", "ERGAS", "SCC"]


def test_full_resolution_subset(tmp_path):
    folder, method = full_resolution_dataset(tmp_path, 3)
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), str(method), "--out", str(out), "--indexes", "QNR,HQNR",
                 "--no-progress"]) == 0
    assert list(_rows(out)[0])[3:-1] == ["QNR", "HQNR"]


@pytest.mark.parametrize(("names", "needle"), [
    ("default,QNR", "QNR is a full-resolution index"),
    ("PSNR2", "PSNR2"),
    ("", "indexes is empty"),
])
def test_wrong_indexes_are_one_line_and_touch_nothing(tmp_path, reduced_dataset, rr_methods, names, needle):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    proc = run_cli("evaluate", folder, rr_methods["good"], "--out", out, "--indexes", names)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0] and "--indexes" in lines[0], proc.stderr
    assert not out.exists()


def test_an_extra_at_full_resolution_is_refused(tmp_path):
    folder, method = full_resolution_dataset(tmp_path, 4)
    out = tmp_path / "out"
    proc = run_cli("evaluate", folder, method, "--out", out, "--indexes", "default,CC")
    assert proc.returncode == 2 and "CC is a reduced-resolution index" in proc.stderr
    assert not out.exists()

"""Smoke test of an installed pansharp_iqa wheel, run by .ci/run's packaging step.

The step installs the built wheel (alone, no extras) into a fresh virtual environment and runs
this script from a temporary folder, so the source tree is not importable; a module or data file
that the wheel lacks fails here. Usage::

    python smoke_installed.py SOURCE_TREE DEMO_OUT

SOURCE_TREE is the checkout the wheel was built from (what the wheel must contain); DEMO_OUT
is the folder ``pansharp-eval demo --out DEMO_OUT`` wrote. Prints one line per check and exits
non-zero on the first failure.
"""

from __future__ import annotations

import doctest
import importlib
import json
import re
import subprocess
import sys
from importlib import metadata, resources
from pathlib import Path


def check(condition: bool, what: str) -> None:
    if not condition:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def main(source: Path, demo_out: Path) -> None:
    import pansharp_iqa as pi

    installed = Path(pi.__file__).resolve().parent
    check(source.resolve() not in installed.parents and "site-packages" in installed.parts,
          f"pansharp_iqa is imported from the venv ({installed}), not from the source tree")

    # one version: _version.py of the source = the wheel's metadata = __version__ = CLI = card
    text = (source / "pansharp_iqa" / "_version.py").read_text(encoding="utf-8")
    declared = re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.MULTILINE).group(1)
    check(metadata.version("pansharp_iqa") == pi.__version__ == declared,
          f"version {pi.__version__}: metadata, __version__ and _version.py agree")
    cli = Path(sys.executable).with_name("pansharp-eval")
    out = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    check(out.endswith(pi.__version__), f"`pansharp-eval --version` prints {out!r}")

    # every module and data file of the source package is in the wheel
    missing = []
    for path in sorted((source / "pansharp_iqa").rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix in {".pyc", ".pyo"}:
            continue
        rel = path.relative_to(source / "pansharp_iqa")
        if not (installed / rel).is_file():
            missing.append(str(rel))
    sensor_files = sorted(p.name for p in (source / "sensors").glob("*.toml"))
    installed_sensors = resources.files("pansharp_iqa.sensor_files")
    missing += [f"sensor_files/{n}" for n in sensor_files if not installed_sensors.joinpath(n).is_file()]
    check(not missing, f"the wheel has every source file and the {len(sensor_files)} sensor files"
          + (f" (missing: {missing})" if missing else ""))
    check(len(pi.list_sensors()) == len(sensor_files), f"the registry reads them: {pi.list_sensors()}")

    # numbers: the docstring examples of the entry points and baselines run on the demo scene and
    # print the values their docstrings show (evaluate_reduced, evaluate_full, sensor_sensitivity)
    for name in ("pansharp_iqa.evaluation", "pansharp_iqa.baselines"):
        module = importlib.import_module(name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        check(result.failed == 0 and result.attempted > 0,
              f"{name}: {result.attempted - result.failed}/{result.attempted} docstring examples")

    from pansharp_iqa.baselines import gsa
    from pansharp_iqa.demo_data import load_demo

    ms, pan = load_demo()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "none", ratio=4)
    rr = pi.evaluate_reduced(gsa(ms_lr, pan_lr, ratio=4), ms, ratio=4, bits=11)
    check(0.0 < rr["Q2n"] <= 1.0 and rr["protocol"]["version"] == pi.__version__,
          f"evaluate_reduced on the demo scene: Q2n {rr['Q2n']:.4f}, card version {rr['protocol']['version']}")

    # the demo run: both resolutions' reports, with the version in them
    for part in ("reduced", "full"):
        report = json.loads((demo_out / part / "results.json").read_text(encoding="utf-8"))
        check(report["version"] == pi.__version__ == report["protocol"]["version"],
              f"pansharp-eval demo wrote {part}/results.json (version {report['version']})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python smoke_installed.py SOURCE_TREE DEMO_OUT")
    main(Path(sys.argv[1]), Path(sys.argv[2]))

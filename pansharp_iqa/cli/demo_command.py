"""``pansharp-eval demo``: the whole pipeline on the bundled real scene.

Steps, all under ``OUT`` (default ``./pansharp-eval-demo/``):

1. ``datasets/full`` -- the bundled pair as a full-resolution dataset (``solaris.npz``);
   ``datasets/reduced`` -- its Wald-protocol degradation (:func:`pansharp_iqa.wald_degrade` with
   the generic sensor ``"none"``): GT = the MS, inputs = degraded MS and PAN;
2. ``methods/<resolution>/<method>/`` -- the classical baselines on each;
3. ``reduced/`` and ``full/`` -- the evaluation reports (with ``report.html``, every method's images
   side by side, unless ``--format`` leaves html out); the two tables and the pages' paths are printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .errors import UsageError
from .output_dir import OutputFolder, atomic_file

__all__ = ["MANIFEST_NAME", "READING", "run_demo"]

#: The manifest of the dataset files ``pansharp-eval demo`` wrote in its ``--out`` folder.
MANIFEST_NAME = ".pansharp-eval-demo.json"

_SUBDIRS = ("datasets", "methods", "reduced", "full")

#: Printed after the two tables: what surprises a newcomer in them, and why (the claims are checked
#: against the demo's numbers in tests/cli/test_cli_demo_text.py).
READING = """\
pansharp-eval demo: reading the tables
- MTF-GLP-HPM's ERGAS near 100 (the others 8-13): it injects detail as a ratio, EXP x PAN / low-pass PAN.
  On this dark scene (blue band mean about 110 DN of 2047) the PAN equalised to a band nears zero in the
  shadows, so the ratio exceeds 10 in under 2 % of the pixels; they alone make that ERGAS, which divides
  each band's RMSE by its small mean. A poor method's overshoot is scored, not refused.
- EXP's D_lambda of 0: EXP is the MS upsampled, the very image D_lambda compares with: no spectral
  distortion by construction, and no PAN detail either.
- Full resolution ranks EXP first on HQNR: D_s charges it less for the detail it lacks than D_lambda_K
  charges the others for the detail they inject. With a reference (reduced resolution) EXP trails BT-H
  and GSA: read the two tables together."""


def _toml(settings: dict[str, object], resolution: str) -> str:
    lines = [
        "# Written by `pansharp-eval demo` from the bundled pansharp_iqa/demo_data (see its NOTICE).",
        "# Sensor unknown (SpaceNet 6 / WorldView-2 likely, not certain): generic MTF on purpose.",
    ]
    keys = ("sensor", "ratio", "bits", "scale", "result_scale")
    lines += [f"name = \"solaris-demo-{resolution}\"", f"resolution = \"{resolution}\""]
    for key in keys:
        value = settings[key]
        lines.append(f"{key} = {value!r}".replace("'", '"'))
    return "\n".join(lines) + "\n"


def run_demo(ns: argparse.Namespace, argv: list[str]) -> int:
    """Build the demo datasets, run the baselines and evaluate them at both resolutions (worst exit status)."""
    from pansharp_iqa import wald_degrade
    from pansharp_iqa.baselines import list_baselines
    from pansharp_iqa.demo_data import DEMO_SCENE, demo_settings, load_demo

    from .baselines_command import run_baselines
    from .evaluate_command import run_evaluate
    from .parser import build_parser

    out = Path(ns.out or "pansharp-eval-demo")
    files = [f"datasets/{r}/{name}" for r in ("reduced", "full") for name in ("dataset.toml", f"{DEMO_SCENE}.npz")]
    with OutputFolder(out, manifest=MANIFEST_NAME, argv=argv) as folder:
        existing = [d for d in _SUBDIRS if (out / d).exists()]
        if existing and not (ns.force or ns.resume):
            raise UsageError(f"{out} already holds a demo run ({', '.join(existing)}); pass --force or --resume")
        folder.check(files)
        folder.claim(files)
        settings = demo_settings()
        ms, pan = load_demo()
        ms_lr, pan_lr = wald_degrade(ms, pan, settings["sensor"], settings["ratio"])
        datasets = {"reduced": {"ms": ms_lr, "pan": pan_lr, "gt": ms}, "full": {"ms": ms, "pan": pan}}
        for resolution, arrays in datasets.items():
            (out / "datasets" / resolution).mkdir(parents=True, exist_ok=True)
            with atomic_file(out / "datasets" / resolution / "dataset.toml", "w") as handle:
                handle.write(_toml(settings, resolution))
            with atomic_file(out / "datasets" / resolution / f"{DEMO_SCENE}.npz") as handle:
                # numpy's stub lets the **kwds match its allow_pickle flag; they are array names
                np.savez(handle, **{k: np.asarray(v) for k, v in arrays.items()})  # type: ignore[arg-type]
        folder.commit()
    # the baselines and evaluate steps check, replace and record their own folders (their manifests);
    # each records the command that repeats it
    status, parser = 0, build_parser()
    for resolution in ("reduced", "full"):
        dataset, methods_dir = out / "datasets" / resolution, out / "methods" / resolution
        step = ["baselines", str(dataset), "--out", str(methods_dir), "--force"]
        status = max(status, run_baselines(parser.parse_args(step), step))
        step = ["evaluate", str(dataset), *[str(methods_dir / m) for m in list_baselines()], "--out",
                str(out / resolution), "--format", ",".join(ns.format), "--jobs", str(ns.jobs),
                "--resume" if ns.resume else "--force", *["--plots"] * ns.plots, *["--figures"] * ns.figures,
                *["--no-progress"] * (ns.progress is False)]
        print()
        status = max(status, run_evaluate(parser.parse_args(step), step))
    if status == 0:
        print(f"\n{READING}")
    if "html" in ns.format:
        pages = [str(page.resolve()) for page in (out / "reduced" / "report.html", out / "full" / "report.html")
                 if page.is_file()]
        print(f"\npansharp-eval demo: open the report{'s' if len(pages) > 1 else ''} in a browser: "
              f"{' and '.join(pages)}")
    return status

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

__all__ = ["run_demo"]

_SUBDIRS = ("datasets", "methods", "reduced", "full")


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
    """Build the demo datasets, run the baselines and evaluate them at both resolutions.

    Parameters
    ----------
    ns, argv : argparse.Namespace, list of str
        Parsed by :func:`.parser.build_demo_parser`, and the command line.

    Returns
    -------
    int
        The worst exit status of the steps (0 when everything was evaluated).

    Raises
    ------
    UsageError
        If ``OUT`` already holds a demo run and neither ``--force`` nor ``--resume`` is given.
    """
    from pansharp_iqa import wald_degrade
    from pansharp_iqa.demo_data import DEMO_SCENE, demo_settings, load_demo

    from .baselines_command import run_baselines
    from .evaluate_command import run_evaluate
    from .parser import build_baselines_parser, build_evaluate_parser

    out = Path(ns.out or "pansharp-eval-demo")
    existing = [d for d in _SUBDIRS if (out / d).exists()]
    if existing and not (ns.force or ns.resume):
        raise UsageError(f"{out} already holds a demo run ({', '.join(existing)}); pass --force or --resume")
    # --force needs no deleting here: the demo rewrites its own dataset files, and the baselines and
    # evaluate commands it runs with --force replace only what they wrote (their manifests)
    settings = demo_settings()
    ms, pan = load_demo()
    ms_lr, pan_lr = wald_degrade(ms, pan, settings["sensor"], settings["ratio"])
    datasets = {
        "reduced": {"ms": ms_lr, "pan": pan_lr, "gt": ms},
        "full": {"ms": ms, "pan": pan},
    }
    status = 0
    for resolution, arrays in datasets.items():
        folder = out / "datasets" / resolution
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "dataset.toml").write_text(_toml(settings, resolution), encoding="utf-8")
        np.savez(folder / f"{DEMO_SCENE}.npz", **{k: np.asarray(v) for k, v in arrays.items()})
        methods_dir = out / "methods" / resolution
        b_args = [str(folder), "--out", str(methods_dir), "--force"]
        status = max(status, run_baselines(build_baselines_parser().parse_args(b_args), ["baselines", *b_args]))
        from pansharp_iqa.baselines import list_baselines

        e_args = [str(folder), *[str(methods_dir / m) for m in list_baselines()], "--out", str(out / resolution),
                  "--format", ",".join(ns.format), "--jobs", str(ns.jobs)]
        e_args += ["--resume"] if ns.resume else ["--force"]
        if ns.plots:
            e_args.append("--plots")
        if ns.figures:
            e_args.append("--figures")
        if ns.progress is False:
            e_args.append("--no-progress")
        print()
        status = max(status, run_evaluate(build_evaluate_parser().parse_args(e_args), ["demo", *e_args]))
    if "html" in ns.format:
        pages = [str((out / r / "report.html").resolve()) for r in datasets if (out / r / "report.html").is_file()]
        print(f"\npansharp-eval demo: open the report{'s' if len(pages) > 1 else ''} in a browser: {' and '.join(pages)}")
    return status

"""``pansharp-eval baselines DATASET --out DIR``: classical baselines in the RESULTS layout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from pansharp_iqa.io.discovery import discover_scenes
from pansharp_iqa.io.errors import DataError, SettingsError
from pansharp_iqa.io.scenes import load_scene

from .errors import EXIT_FAILURES, EXIT_OK, UsageError
from .evaluate_command import settings_from_args

__all__ = ["run_baselines"]


def _methods(text: str) -> list[str]:
    from pansharp_iqa.baselines import BASELINES

    table = {k.lower(): k for k in BASELINES}
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n.lower() not in table]
    if unknown or not names:
        raise UsageError(f"unknown baseline(s) {unknown or [text]}; known: {', '.join(BASELINES)}")
    return [table[n.lower()] for n in names]


def run_baselines(ns: argparse.Namespace, argv: list[str]) -> int:
    """Fuse every scene with the chosen baselines and write ``<out>/<method>/<scene>.npy``.

    The fused images are written as float64 ``.npy`` in the dataset's declared result scale
    (``result_scale`` in ``dataset.toml`` or ``--result-scale``; digital numbers when neither
    is given, which is then printed), so ``pansharp-eval DATASET OUT/*`` evaluates them directly.

    Parameters
    ----------
    ns : argparse.Namespace
        From :func:`.parser.build_baselines_parser`.
    argv : list of str
        The command line (unused; for symmetry with the other commands).

    Returns
    -------
    int
        0 on success, 1 when some scenes could not be fused (each reported).

    Raises
    ------
    UsageError
        Bad settings, unknown methods, or existing results without ``--force``.
    """
    from tqdm import tqdm

    from pansharp_iqa.baselines import BASELINES

    settings = settings_from_args(ns)
    methods = _methods(ns.methods)
    try:
        scenes, warnings = discover_scenes(ns.dataset)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    out = Path(ns.out)
    existing = [out / m / f"{s.name}.npy" for m in methods for s in scenes if (out / m / f"{s.name}.npy").exists()]
    if existing and not ns.force:
        raise UsageError(f"{out} already holds baseline results (e.g. {existing[0]}); pass --force to overwrite them")
    scale = settings.result_scale if settings.result_scale is not None else 1.0
    label = settings.result_scale_label or "dn"
    sensor = settings.resolved_sensor()
    for w in warnings:
        print(f"pansharp-eval: warning: {w}", file=sys.stderr)
    failures: list[str] = []
    for m in methods:
        (out / m).mkdir(parents=True, exist_ok=True)
    for scene in tqdm(scenes, desc="baselines", unit="scene", disable=None):
        try:
            data = load_scene(scene, settings, ("ms", "pan"))
        except DataError as exc:
            failures.append(f"{scene.name}: {exc}")
            continue
        for m in methods:
            try:
                fused = BASELINES[m](data["ms"], data["pan"], sensor=sensor, ratio=settings.ratio)
            except Exception as exc:  # noqa: BLE001 - isolate per scene and method
                failures.append(f"{scene.name} / {m}: {type(exc).__name__}: {exc}")
                continue
            np.save(out / m / f"{scene.name}.npy", np.asarray(fused, dtype=np.float64) / scale)
    print(
        f"pansharp-eval: wrote {', '.join(methods)} for {len(scenes) - len({f.split(':')[0] for f in failures})} "
        f"scene(s) in {out} (scale {label!r}; evaluate with --result-scale {label} if dataset.toml does not declare it)"
    )
    for f in failures:
        print(f"FAILED {f}", file=sys.stderr)
    return EXIT_FAILURES if failures else EXIT_OK

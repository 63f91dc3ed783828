"""``pansharp-eval DATASET RESULTS...``: plan the (scene, method) tasks, run them, report."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from pansharp_iqa.io.discovery import SceneSource, discover_scenes
from pansharp_iqa.io.errors import DataError, SettingsError
from pansharp_iqa.io.hashing import sha256_file
from pansharp_iqa.io.results import RESULT_EXTENSIONS, find_result_file
from pansharp_iqa.io.settings import DatasetSettings, load_settings

from .errors import EXIT_FAILURES, EXIT_OK, UsageError
from .output_dir import prepare_output
from .report_writer import write_reports
from .runner import run_tasks
from .scene_cache import cache_key, load_cached, scene_file, store_outcome
from .scene_eval import SceneOutcome, SceneTask
from .visual_reports import display_side, with_display

__all__ = ["run_evaluate", "settings_from_args"]


def settings_from_args(ns: argparse.Namespace) -> DatasetSettings:
    """Load ``dataset.toml`` with the command-line overrides; a problem is a usage error."""
    overrides = {
        "sensor": getattr(ns, "sensor", None),
        "ratio": getattr(ns, "ratio", None),
        "bits": getattr(ns, "bits", None),
        "resolution": getattr(ns, "resolution", None),
        "protocol": getattr(ns, "protocol", None),
        "scale": getattr(ns, "input_scale", None),
        "result_scale": getattr(ns, "result_scale", None),
    }
    try:
        return load_settings(ns.dataset, overrides)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None


def _check_protocol(settings: DatasetSettings) -> None:
    from pansharp_iqa import get_protocol, list_protocols

    try:
        protocol = get_protocol(settings.protocol)
    except ValueError:
        raise UsageError(f"unknown protocol {settings.protocol!r}; known: {', '.join(list_protocols())}") from None
    wanted = protocol.reduced_indexes if settings.resolution == "reduced" else protocol.full_indexes
    if not wanted:
        raise UsageError(f"protocol {settings.protocol!r} has no {settings.resolution}-resolution indexes")


def _method_dirs(paths: list[str]) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    for text in paths:
        path = Path(text).expanduser()
        if not path.is_dir():
            raise UsageError(f"results folder {text} does not exist (one folder per method is expected)")
        name = path.resolve().name
        if name in [n for n, _ in out]:
            raise UsageError(f"two results folders are named {name!r}; method names come from folder names")
        out.append((name, path))
    return out


def _relative(path: str | Path, base: Path) -> str:
    try:
        return Path(path).resolve().relative_to(base).as_posix()
    except ValueError:
        return Path(path).resolve().as_posix()


def _extra_result_files(method: str, folder: Path, scenes: list[SceneSource]) -> list[str]:
    names = {s.name for s in scenes}
    stacks = {Path(s.file_for("bundle") or "").stem for s in scenes if s.kind == "h5"}
    extra = [
        p.name for p in sorted(folder.iterdir())
        if p.is_file() and p.suffix.lower() in RESULT_EXTENSIONS and p.stem not in names and p.stem not in stacks
    ]
    return [f"{method}: {n} matches no scene of the dataset (ignored)" for n in extra]


def run_evaluate(ns: argparse.Namespace, argv: list[str]) -> int:
    """Run the evaluation described by parsed arguments.

    Parameters
    ----------
    ns : argparse.Namespace
        From :func:`.parser.build_evaluate_parser`.
    argv : list of str
        The command line, recorded in ``results.json``.

    Returns
    -------
    int
        0 when every (scene, method) pair was evaluated, 1 when some failed.

    Raises
    ------
    UsageError
        Bad settings, folders or output location (exit status 2).
    """
    settings = settings_from_args(ns)
    if settings.result_scale is None:
        raise UsageError(
            "the scale of the results is not declared: set result_scale = 'dn' or 'unit' in "
            "dataset.toml, or pass --result-scale dn|unit|<multiplier> (it is never guessed)"
        )
    _check_protocol(settings)
    try:
        scenes, warnings = discover_scenes(ns.dataset)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    methods = _method_dirs(ns.results)
    out_dir = Path(ns.out or f"pansharp-eval-{re.sub(r'[^A-Za-z0-9._-]+', '_', settings.name)}")
    prepare_output(out_dir, force=ns.force, resume=ns.resume)

    root = Path(settings.root)
    base = root if root.is_dir() else root.parent
    inputs_sha: dict[str, str] = {}
    scene_sha: dict[str, dict[str, str]] = {}
    for scene in scenes:
        scene_sha[scene.name] = {}
        for path in scene.paths:
            rel = _relative(path, base)
            if rel not in inputs_sha:
                try:
                    inputs_sha[rel] = sha256_file(path)
                except OSError as exc:
                    inputs_sha[rel] = f"unreadable: {exc}"
            scene_sha[scene.name][rel] = inputs_sha[rel]

    results_sha: dict[str, dict[str, str]] = {m: {} for m, _ in methods}
    planned: dict[tuple[str, str], SceneOutcome] = {}
    tasks: list[SceneTask] = []
    task_meta: list[dict[str, Any]] = []
    for method, folder in methods:
        warnings.extend(_extra_result_files(method, folder, scenes))
    for scene_number, scene in enumerate(scenes):
        first_task = True  # the scene's first task also makes its reference images
        for method, folder in methods:
            try:
                found = find_result_file(folder, scene)
            except DataError as exc:
                planned[(scene.name, method)] = SceneOutcome(scene.name, method, "failed", {}, None, str(exc))
                continue
            if found is None:
                planned[(scene.name, method)] = SceneOutcome(
                    scene.name, method, "failed", {}, None,
                    f"missing result: no {method}/{scene.name}.{{{','.join(e[1:] for e in RESULT_EXTENSIONS)}}}",
                )
                continue
            path, index = found
            rel = f"{method}/{path.name}"
            try:
                sha = results_sha[method].get(rel) or sha256_file(path)
            except OSError as exc:
                planned[(scene.name, method)] = SceneOutcome(scene.name, method, "failed", {}, None, f"cannot read {rel}: {exc}")
                continue
            results_sha[method][rel] = sha
            key = cache_key(settings, scene.name, method, scene_sha[scene.name], sha, index)
            target = scene_file(out_dir, method, scene.name)
            meta = {
                "key": key,
                "path": target,
                "provenance": {
                    "inputs_sha256": scene_sha[scene.name],
                    "result_file": rel,
                    "result_index": index,
                    "result_sha256": sha,
                    "settings": settings.to_dict(),
                },
            }
            task = SceneTask(scene, method, str(path), index, settings, want_maps=ns.plots, tiled=ns.tiled,
                             display=display_side(ns, scene_number), display_reference=first_task)
            first_task = False
            if ns.resume:
                cached = load_cached(target, key, need_maps=ns.plots)
                if cached is not None:
                    planned[(scene.name, method)] = with_display(cached, task)
                    continue
            tasks.append(task)
            task_meta.append(meta)

    def on_done(i: int, outcome: SceneOutcome) -> None:
        meta = task_meta[i]
        store_outcome(meta["path"], outcome, key=meta["key"], provenance=meta["provenance"])

    reused = len(planned) - sum(1 for o in planned.values() if o.status == "failed")
    for outcome in run_tasks(tasks, jobs=ns.jobs, scheduler=ns.scheduler, progress=ns.progress, on_done=on_done,
                             desc=settings.name):
        planned[(outcome.scene, outcome.method)] = outcome
    outcomes = [planned[(s.name, m)] for s in scenes for m, _ in methods]
    for w in warnings:
        print(f"pansharp-eval: warning: {w}", file=sys.stderr)
    failed = write_reports(
        out_dir,
        outcomes,
        settings=settings,
        methods=[m for m, _ in methods],
        scenes=[s.name for s in scenes],
        formats=ns.format,
        plots=ns.plots,
        figures=getattr(ns, "figures", False),
        inputs_sha=inputs_sha,
        results_sha=results_sha,
        warnings=warnings,
        argv=argv,
        run_info={"jobs": ns.jobs, "resumed": reused if ns.resume else 0},
    )
    return EXIT_FAILURES if failed else EXIT_OK

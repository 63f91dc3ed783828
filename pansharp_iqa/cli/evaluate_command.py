"""``pansharp-eval DATASET RESULTS...``: plan the (scene, method) tasks, run them, report."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

from pansharp_iqa.io.discovery import SceneSource, discover_scenes
from pansharp_iqa.io.errors import DataError, SettingsError
from pansharp_iqa.io.hashing import sha256_file
from pansharp_iqa.io.results import RESULT_EXTENSIONS, find_result_file
from pansharp_iqa.io.settings import DatasetSettings, load_settings
from pansharp_iqa.reports.pair_display import forget_scenes

from .errors import EXIT_FAILURES, EXIT_OK, UsageError
from .memory_plan import path_summary
from .output_dir import prepare_output, report_targets
from .report_writer import EXP_NOTE, write_reports
from .runner import connect_scheduler, run_tasks
from .scene_cache import cache_key, load_cached, scene_file, store_outcome
from .scene_eval import SceneOutcome, SceneTask
from .scene_queue import SceneQueue
from .visual_reports import FIGURES_DIR, display_side, drop_repeated_references, html_scenes

__all__ = ["dataset_scenes", "run_evaluate", "settings_from_args"]


def dataset_scenes(dataset: str) -> tuple[list[SceneSource], list[str]]:
    """The scenes of a dataset and the discovery's warnings; none, or an unusable dataset, is a
    usage error (shared by every command that reads a dataset)."""
    try:
        scenes, warnings = discover_scenes(dataset)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    if not scenes:
        raise UsageError(f"{dataset} holds no scene")
    return scenes, warnings


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
        "scale_mismatch": getattr(ns, "scale_mismatch", None),
    }
    try:
        return load_settings(ns.dataset, overrides)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None


def _recorded_result_scale(settings: DatasetSettings, methods: list[tuple[str, Path]]) -> DatasetSettings:
    """The results' scale when every method's result files record the same one (``pansharp-nlrnet
    infer`` writes ``result_scale`` into its h5), else the settings unchanged."""
    from pansharp_iqa.io.settings import parse_scale

    found: set[str] = set()
    for _, folder in methods:
        labels = {_recorded_scale_label(p) for p in sorted(folder.iterdir())
                  if p.suffix.lower() in (".h5", ".hdf5") and p.is_file()}
        if not labels or None in labels:
            return settings
        found |= labels
    if len(found) != 1:
        return settings
    label = found.pop()
    try:
        value, shown = parse_scale(label, settings.bits, what="result_scale")
    except SettingsError:
        return settings
    return dataclasses.replace(settings, result_scale=value, result_scale_label=shown,
                               sources={**settings.sources, "result_scale": "result file attributes"})


def _recorded_scale_label(path: Path) -> str | None:
    """The ``result_scale`` a result file records, or ``None`` (none recorded, or the file cannot
    be read as HDF5: its scale is unknown, and its own evaluation will say what is wrong)."""
    from pansharp_iqa.io.metadata import read_recorded

    try:
        return read_recorded(path).result_scale
    except DataError:
        return None


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
        if path.is_file():
            raise UsageError(f"{text} is a file, not a folder of results: pass one folder per method "
                             "(RESULTS/<method>/<scene>.<ext>), e.g. the folder that holds it")
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
    ns, argv : argparse.Namespace, list of str
        Parsed by :func:`.parser.build_evaluate_parser`, and the command line (recorded in ``results.json``).

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
    methods = _method_dirs(ns.results)
    if settings.result_scale is None:
        settings = _recorded_result_scale(settings, methods)
    if settings.result_scale is None:
        raise UsageError(
            "the scale of the results is not declared: set result_scale = 'dn' or 'unit' in "
            "dataset.toml, or pass --result-scale dn|unit|<multiplier> (it is never guessed)"
        )
    _check_protocol(settings)
    scenes, warnings = dataset_scenes(ns.dataset)
    out_dir = Path(ns.out or f"pansharp-eval-{re.sub(r'[^A-Za-z0-9._-]+', '_', settings.name)}")
    root = Path(settings.root)
    for method, folder in methods:
        warnings.extend(_extra_result_files(method, folder, scenes))
    found, planned = _locate_results(scenes, methods)

    # every argument and every path the run writes is checked before anything is written, removed
    # or hashed: the output folder's refusals are cheap, hashing every input is not
    record_files = [rel for _, scene, method, _ in found for rel in _record_files(out_dir, scene.name, method)]
    report_files, report_dirs = report_targets(ns.format, plots=ns.plots, figures=getattr(ns, "figures", False))
    client = connect_scheduler(ns.scheduler) if ns.scheduler else None
    try:
        output = prepare_output(out_dir, force=ns.force, resume=ns.resume, files=[*record_files, *report_files],
                                dirs=report_dirs, protected=[p for _, p in methods] + [root], argv=argv)
        inputs_sha, scene_sha = _hash_inputs(scenes, root if root.is_dir() else root.parent)
        pairs, results_sha = _plan_pairs(found, [m for m, _ in methods], settings, scene_sha, out_dir, ns, planned)
        need_maps = ns.plots and settings.resolution == "reduced"  # full resolution never has maps
        todo, reused = _reuse_records(pairs, need_maps=need_maps) if ns.resume else (pairs, {})
        planned.update(reused)
        # reused pairs whose images a report shows are read again, in the same workers
        redisplay = [dataclasses.replace(task, display_only=True) for task, _ in pairs
                     if task.display and (task.scene.name, task.method) in reused]
        # --force: the records go with the reports, so that nothing earlier is replaced before the
        # run is complete (a failed or interrupted run leaves the earlier results as they were)
        staging = output.staging()
        record_root = staging if ns.force else out_dir
        with_references: set[str] = set()
        tasks = [task for task, _ in todo] + redisplay
        # each scene's figure and page grid are made as soon as its last pair is done, while the
        # others are evaluated (the same output as made after the run: see SceneQueue)
        html, figures = "html" in ns.format, getattr(ns, "figures", False)
        scene_queue = SceneQueue(
            [m for m, _ in methods], tasks=[(t.scene.name, t.method) for t in tasks],
            known={key: o.display for key, o in planned.items()}, figures_dir=staging / FIGURES_DIR if figures else None,
            html_scenes=html_scenes([s.name for s in scenes]) if html else (), threads=ns.jobs,
        ) if html or figures else None

        def on_done(i: int, outcome: SceneOutcome) -> None:
            drop_repeated_references(outcome, with_references)
            key = (outcome.scene, outcome.method)
            if i < len(todo):
                meta = todo[i][1]
                store_outcome(record_root / meta["path"].relative_to(out_dir), outcome, key=meta["key"],
                              provenance=meta["provenance"])
                display = outcome.display
            else:
                display = outcome.display if outcome.status == "ok" else f"no display: {outcome.reason}"
                planned[key] = dataclasses.replace(planned[key], display=display)
            if scene_queue is not None:
                scene_queue.pair_done(*key, display)

        forget_scenes()  # the reference panels of this run come from this run's files
        try:
            outcomes = run_tasks(tasks, jobs=ns.jobs, scheduler=client,
                                 progress=ns.progress, on_done=on_done, desc=settings.name)
            evaluated = outcomes[: len(todo)]
            planned.update({(o.scene, o.method): o for o in evaluated})
            for w in warnings:
                print(f"pansharp-eval: warning: {w}", file=sys.stderr)
            for line in path_summary(evaluated):
                print(line)
            failed = write_reports(
                staging,
                [planned[(s.name, m)] for s in scenes for m, _ in methods],
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
                run_info={"jobs": ns.jobs, "resumed": len(reused), "run_id": output.run_id,
                          "evaluation_paths": _path_counts(evaluated)},
                shown_dir=out_dir,
                scene_queue=scene_queue,
            )
        except BaseException:
            if scene_queue is not None:
                scene_queue.abort()  # nothing is drawn into the staging folder once it is removed
            output.discard_staging()
            raise
        output.commit(_kept_records(out_dir, pairs, planned))
    finally:
        if client is not None:
            client.close()
    if settings.resolution == "full" and "table" in ns.format:
        print(f"pansharp-eval: note: {EXP_NOTE}")
    return EXIT_FAILURES if failed else EXIT_OK


_Pair = tuple[SceneTask, dict[str, Any]]


def _hash_inputs(scenes: list[SceneSource], base: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """SHA-256 of every input file (relative to the dataset), overall and per scene."""
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
    return inputs_sha, scene_sha


_Found = tuple[int, SceneSource, str, tuple[Path, int | None]]


def _locate_results(
    scenes: list[SceneSource], methods: list[tuple[str, Path]],
) -> tuple[list[_Found], dict[tuple[str, str], SceneOutcome]]:
    """Each pair's result file (scene number, scene, method, (path, item)), and the pairs that
    already failed (no or ambiguous result file); nothing is read."""
    found: list[_Found] = []
    failed: dict[tuple[str, str], SceneOutcome] = {}
    for scene_number, scene in enumerate(scenes):
        for method, folder in methods:
            try:
                result = find_result_file(folder, scene)
            except DataError as exc:
                failed[(scene.name, method)] = SceneOutcome(scene.name, method, "failed", {}, None, str(exc))
                continue
            if result is None:
                failed[(scene.name, method)] = SceneOutcome(
                    scene.name, method, "failed", {}, None,
                    f"missing result: no {method}/{scene.name}.{{{','.join(e[1:] for e in RESULT_EXTENSIONS)}}}",
                )
                continue
            found.append((scene_number, scene, method, result))
    return found, failed


def _plan_pairs(
    found: list[_Found], methods: list[str], settings: DatasetSettings, scene_sha: dict[str, dict[str, str]], out_dir: Path,
    ns: argparse.Namespace, failed: dict[tuple[str, str], SceneOutcome],
) -> tuple[list[_Pair], dict[str, dict[str, str]]]:
    """The (scene, method) tasks with their record paths and cache keys, and the SHA-256 of every
    result file; a result file that cannot be read fails its pair (added to ``failed``)."""
    results_sha: dict[str, dict[str, str]] = {m: {} for m in methods}
    pairs: list[_Pair] = []
    for scene_number, scene, method, (path, index) in found:
        rel = f"{method}/{path.name}"
        method_sha = results_sha[method]
        try:
            sha = method_sha.get(rel) or sha256_file(path)
        except OSError as exc:
            failed[(scene.name, method)] = SceneOutcome(scene.name, method, "failed", {}, None,
                                                        f"cannot read {rel}: {exc}")
            continue
        method_sha[rel] = sha
        meta = {
            "key": cache_key(settings, scene.name, method, scene_sha[scene.name], sha, index),
            "path": scene_file(out_dir, method, scene.name),
            "provenance": {
                "inputs_sha256": scene_sha[scene.name],
                "result_file": rel,
                "result_index": index,
                "result_sha256": sha,
                "settings": settings.to_dict(),
            },
        }
        task = SceneTask(scene, method, str(path), index, settings, want_maps=ns.plots, tiled=ns.tiled,
                         jobs=1 if ns.scheduler else ns.jobs, display=display_side(ns, scene_number))
        pairs.append((task, meta))
    return pairs, results_sha


def _reuse_records(pairs: list[_Pair], *, need_maps: bool) -> tuple[list[_Pair], dict[tuple[str, str], SceneOutcome]]:
    """``--resume``: the pairs still to evaluate, and the outcomes of the records reused."""
    todo: list[_Pair] = []
    reused: dict[tuple[str, str], SceneOutcome] = {}
    for task, meta in pairs:
        cached = load_cached(meta["path"], meta["key"], need_maps=need_maps)
        if cached is not None:
            reused[(task.scene.name, task.method)] = cached
        else:
            todo.append((task, meta))
    return todo, reused


def _record_files(out_dir: Path, scene: str, method: str) -> list[str]:
    """The per-pair files (JSON record and its maps), relative to OUT."""
    rel = scene_file(out_dir, method, scene).relative_to(out_dir)
    return [rel.as_posix(), rel.with_suffix(".maps.npz").as_posix()]


def _kept_records(out_dir: Path, pairs: list[_Pair], outcomes: dict[tuple[str, str], SceneOutcome]) -> list[str]:
    """Per-pair files that belong to this run: every record written or reused, and the maps this
    run drew (a run without ``--plots`` keeps no maps, as a fresh run would write none)."""
    keep = []
    for task, meta in pairs:
        record, maps = _record_files(out_dir, task.scene.name, task.method)
        if (out_dir / record).is_file():
            keep.append(record)
        if (out_dir / maps).is_file() and outcomes[(task.scene.name, task.method)].maps:
            keep.append(maps)
    return keep


def _path_counts(outcomes: list[SceneOutcome]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in outcomes:
        path = (o.protocol or {}).get("evaluation_path")
        if o.status == "ok" and path:
            counts[path] = counts.get(path, 0) + 1
    return counts

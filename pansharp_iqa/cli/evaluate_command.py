"""``pansharp-eval evaluate DATASET RESULTS...`` in three steps:

1. **plan** (:func:`plan_evaluation`): every argument is checked and every file found; nothing is
   written, and nothing read but the result files' recorded scale;
2. **run** (:func:`run_evaluate`): the output folder is locked and checked, the inputs hashed,
   the records ``--resume`` allows reused, the other (scene, method) pairs evaluated, each
   record written as its pair finishes;
3. **report**: the reports are written into the run's staging folder (:mod:`.report_writer`) and
   moved into OUT once complete (:mod:`.output_dir`).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from pansharp_iqa.hashing import sha256_file
from pansharp_iqa.io.dataset_config import METHOD_FILE, DatasetSettings, load_settings, method_settings
from pansharp_iqa.io.discovery import NETWORK_RESULT_PATTERN, SceneSource, discover_scenes, network_result_index
from pansharp_iqa.io.errors import DataError, DatasetConfigError
from pansharp_iqa.io.results import RESULT_EXTENSIONS, check_numbering, find_result_file, method_result_files
from pansharp_iqa.validation import InputError

from .errors import EXIT_FAILURES, EXIT_OK, UsageError
from .map_outputs import map_files, map_folder, map_names
from .memory_plan import path_summary
from .misregistration import check_request, scene_sensitivities
from .output_dir import OutputFolder
from .report_writer import EXP_NOTE, Outputs, RunRecord, drop_repeated_references, exp_note_applies, write_reports
from .runner import connect_scheduler, run_tasks
from .scene_cache import cache_key, load_cached, scene_file, store_outcome
from .scene_eval import WINDOWED_KINDS, SceneOutcome, SceneTask

__all__ = ["Plan", "dataset_scenes", "plan_evaluation", "run_evaluate", "settings_from_args"]

_Key = tuple[str, str]  # (scene, method)


def dataset_scenes(dataset: str) -> tuple[list[SceneSource], list[str]]:
    """The scenes of a dataset and the discovery's warnings; none, or an unusable dataset, is a
    usage error (shared by every command that reads a dataset)."""
    try:
        scenes, warnings = discover_scenes(dataset)
    except DatasetConfigError as exc:
        raise UsageError(str(exc)) from None
    if not scenes:
        raise UsageError(f"{dataset} holds no scene")
    return scenes, warnings


def settings_from_args(ns: argparse.Namespace) -> DatasetSettings:
    """Load ``dataset.toml`` with the command-line overrides; a problem is a usage error."""
    overrides = {key: getattr(ns, flag, None) for key, flag in (
        ("sensor", "sensor"), ("ratio", "ratio"), ("bits", "bits"), ("resolution", "resolution"),
        ("protocol", "protocol"), ("scale", "input_scale"), ("result_scale", "result_scale"),
        ("scale_mismatch", "scale_mismatch"), ("indexes", "indexes"), ("preset", "preset"),
        ("preset_force", "preset_force"), ("sam_zero_norm", "sam_zero_norm"), ("per_band", "per_band"),
        ("exponents", "exponents"))}
    try:
        return load_settings(ns.dataset, overrides)
    except DatasetConfigError as exc:
        raise UsageError(str(exc)) from None


@dataclasses.dataclass
class Plan:
    """An evaluation as decided before anything is written or hashed."""

    settings: DatasetSettings
    scenes: list[SceneSource]
    methods: dict[str, Path]
    method_settings: dict[str, DatasetSettings]
    out: Path
    found: list[tuple[int, SceneSource, str, tuple[Path, int | None]]]
    failed: dict[_Key, SceneOutcome]
    warnings: list[str]
    outputs: Outputs

    def record_files(self) -> list[str]:
        """The per-pair files (JSON record, its map previews and, with ``--maps``, its GeoTIFF maps) the run may
        write, relative to OUT."""
        rels = [scene_file(self.out, m, s.name).relative_to(self.out) for _, s, m, _ in self.found]
        out = [f.as_posix() for rel in rels for f in (rel, rel.with_suffix(".maps.npz"))]
        return out + [f.as_posix() for f in self.map_files()]

    def map_files(self, pair: tuple[str, str] | None = None) -> list[Path]:
        """The GeoTIFF maps ``--maps`` writes (of one (scene, method) pair), relative to OUT."""
        if not self.outputs.maps:
            return []
        names = map_names(self.settings.settings)
        return [f for _, s, m, _ in self.found if pair in (None, (s.name, m))
                for f in map_files(Path("."), m, s.name, names)]


def plan_evaluation(ns: argparse.Namespace) -> Plan:
    """Check the arguments of ``pansharp-eval evaluate`` and find every file."""
    settings = settings_from_args(ns)
    check_request(ns, settings)  # --misregistration: full resolution only
    _check_maps(settings, getattr(ns, "maps", False))
    methods = _method_dirs(ns.results)
    per_method = _method_settings(settings, methods)
    scenes, warnings = dataset_scenes(ns.dataset)
    out = Path(ns.out or f"pansharp-eval-{re.sub(r'[^A-Za-z0-9._-]+', '_', settings.name)}")
    items = max((s.count or 0 for s in scenes if s.kind == "h5"), default=0)
    for method, folder in methods.items():  # results numbered from another item than declared: before any work
        try:
            check_numbering(folder, items, per_method[method].first_index)
        except DataError as exc:
            raise UsageError(f"{method}: {exc}") from None
    found, failed = _locate_results(scenes, methods, per_method)
    for method, folder in methods.items():
        warnings.extend(_unmatched_files(method, folder, scenes, found, per_method[method].first_index))
    _check_dataset(scenes, settings)
    _check_tiled(scenes, getattr(ns, "tiled", "auto"))
    return Plan(settings, scenes, methods, per_method, out, found, failed, warnings,
                Outputs(tuple(ns.format), plots=ns.plots, figures=ns.figures, per_band=settings.settings.per_band,
                        maps=getattr(ns, "maps", False)))


def _method_settings(settings: DatasetSettings, methods: dict[str, Path]) -> dict[str, DatasetSettings]:
    """Each method's settings (``METHOD/method.toml``); a method whose results' scale nobody
    declares is a usage error that names the methods and where to declare it."""
    out = {}
    for method, folder in methods.items():
        try:
            out[method] = method_settings(settings, folder)
        except DatasetConfigError as exc:
            raise UsageError(str(exc)) from None
    undeclared = [m for m, s in out.items() if s.result_scale is None]
    if undeclared:
        shown = ", ".join(undeclared[:5]) + (f" and {len(undeclared) - 5} more" if len(undeclared) > 5 else "")
        raise UsageError(
            f"the scale of the results is not declared for {shown}: write result_scale = 'dn', 'unit' or "
            f"<multiplier> in METHOD/{METHOD_FILE} (that method only), or set result_scale in dataset.toml or "
            "--result-scale for every method (it is never guessed)")
    return out


#: Scenes in files up to this size are read whole by the dataset check (:func:`_check_dataset`).
_CHECK_BYTES = 512 * 2**20


def _check_dataset(scenes: list[SceneSource], settings: DatasetSettings) -> None:
    """A setting that every scene contradicts (sizes, bands, the inputs' values against their declared scale and
    bits: the settings value's rules, :meth:`pansharp_iqa.settings.EvaluationSettings.check`) is a usage error,
    said once before anything is written; the check stops at the first scene that fits (scenes too large to read
    whole here are left to their evaluation)."""
    from pansharp_iqa.io.scenes import load_scene

    from .scene_eval import check_inputs

    roles = ("gt",) if settings.resolution == "reduced" else ("ms", "pan")
    reasons = []
    for scene in scenes:
        try:
            size = 0 if scene.kind == "h5" else sum(Path(p).stat().st_size for p in scene.paths)
            if scene.problem or size > _CHECK_BYTES:
                return
            check_inputs(settings, scene, load_scene(scene, settings, roles))
        except InputError as exc:
            reasons.append(str(exc))
            continue
        except Exception:  # noqa: BLE001 - not a setting's doing: its evaluation reports it
            return
        return
    raise UsageError(f"every scene contradicts the dataset's settings ({len(reasons)} of {len(scenes)}; nothing was "
                     f"evaluated or written), e.g. {reasons[0]}")


def _check_tiled(scenes: list[SceneSource], tiled: str) -> None:
    """``--tiled always`` where every scene is one file holding the whole scene (.npz, .mat, a PanCollection .h5):
    a usage error, said once before anything is written (where only some are, those pairs fail alone)."""
    whole = [s for s in scenes if s.kind not in WINDOWED_KINDS]
    if tiled == "always" and whole and len(whole) == len(scenes):
        raise UsageError(f"--tiled always: every scene is a .{whole[0].kind} file that holds the whole scene "
                         f"({len(whole)} of {len(scenes)}; nothing was evaluated or written); store "
                         "<scene>_gt/_ms/_pan as .npy or GeoTIFF files for tile-wise evaluation, or use --tiled auto "
                         "or never")


def _check_maps(settings: DatasetSettings, maps: bool) -> None:
    """``--maps`` where no index of the run has a quality map: a usage error, said once before anything is written
    (:func:`pansharp_iqa.quality_maps.check_map_names`)."""
    from pansharp_iqa.quality_maps import check_map_names

    if maps:
        try:
            check_map_names(settings.settings, what="--maps", fix="add one with --indexes, or leave --maps out")
        except InputError as exc:
            raise UsageError(f"{exc}; nothing was evaluated or written") from None


def run_evaluate(ns: argparse.Namespace, argv: list[str]) -> int:
    """Run the evaluation described by parsed arguments."""
    plan = plan_evaluation(ns)
    client = connect_scheduler(ns.scheduler) if ns.scheduler else None  # before OUT is touched
    try:
        protected = [*plan.methods.values(), Path(plan.settings.root)]
        with OutputFolder(plan.out, protected=protected, argv=argv) as out:
            earlier = sorted({PurePosixPath(rel).parts[0] for rel in out.earlier()})
            if earlier and not (ns.force or ns.resume):
                raise UsageError(f"{plan.out} already holds results ({', '.join(earlier)}); pass --force to "
                                 "replace them or --resume to reuse the scenes already evaluated")
            out.check([*plan.record_files(), *plan.outputs.files()], plan.outputs.folders())
            out.claim(plan.record_files())
            run, keep = _evaluate(plan, ns, argv, out, client)
            failed = write_reports(out.staging(), run, plan.outputs, shown_dir=plan.out)
            out.commit(keep)
    finally:
        if client is not None:
            client.close()
    if exp_note_applies(plan.settings) and "table" in ns.format:
        print(f"pansharp-eval: note: {EXP_NOTE}")
    return EXIT_FAILURES if failed else EXIT_OK


@dataclasses.dataclass(frozen=True)
class _Pair:
    """One (scene, method) evaluation of the run: its task, its record and the record's key."""

    task: SceneTask
    key: str
    record: Path
    provenance: dict[str, Any]

    @property
    def names(self) -> _Key:
        return self.task.scene.name, self.task.method


def _evaluate(plan: Plan, ns: argparse.Namespace, argv: list[str], out: OutputFolder,
              client: Any) -> tuple[RunRecord, list[str]]:
    """Hash, reuse, evaluate: the run's record, and the per-pair files in OUT that belong to it."""
    root = Path(plan.settings.root)
    inputs_sha, scene_sha = _hash_inputs(plan.scenes, root if root.is_dir() else root.parent)
    outcomes = dict(plan.failed)
    pairs, results_sha = _plan_pairs(plan, ns, scene_sha, outcomes)
    need_maps = (ns.plots and plan.settings.resolution == "reduced") or plan.outputs.maps
    reused = _reuse_records(pairs, need_maps=need_maps, files=plan.map_files, out=plan.out) if ns.resume else {}
    outcomes.update(reused)
    # --force: the records go with the reports, so that nothing earlier is replaced before the run
    # is complete (a failed or interrupted run leaves the earlier results as they were)
    record_root = out.staging() if ns.force else plan.out
    if plan.outputs.maps:
        pairs = [dataclasses.replace(p, task=dataclasses.replace(
            p.task, maps_dir=str(map_folder(record_root, p.task.method, p.task.scene.name)))) for p in pairs]
    todo = [p for p in pairs if p.names not in reused]
    # reused pairs whose images a report shows are read again, in the same workers
    tasks = [p.task for p in todo] + [dataclasses.replace(p.task, display_only=True) for p in pairs
                                      if p.task.display and p.names in reused]
    with_references: set[str] = set()

    def on_done(i: int, outcome: SceneOutcome) -> None:
        drop_repeated_references(outcome, with_references)
        key = (outcome.scene, outcome.method)
        if i < len(todo):
            pair = todo[i]
            store_outcome(record_root / pair.record.relative_to(plan.out), outcome, key=pair.key,
                          provenance=pair.provenance)
            outcomes[key] = outcome
        else:  # a reused pair's display
            display = outcome.display if outcome.status == "ok" else f"no display: {outcome.reason}"
            outcomes[key] = dataclasses.replace(outcomes[key], display=display)

    evaluated = run_tasks(tasks, jobs=ns.jobs, scheduler=client, progress=ns.progress, on_done=on_done,
                          desc=plan.settings.name)[: len(todo)]
    for w in plan.warnings:
        print(f"pansharp-eval: warning: {w}", file=sys.stderr)
    for line in path_summary(evaluated):
        print(line)
    info = {"jobs": ns.jobs, "resumed": len(reused), "run_id": out.run_id, "evaluation_paths": _path_counts(evaluated)}
    methods = list(plan.methods)
    own = {m: str(s.result_scale_label) for m, s in plan.method_settings.items()
           if s.sources.get("result_scale", "").endswith(METHOD_FILE)}
    run = RunRecord(plan.settings, [s.name for s in plan.scenes], methods,
                    [outcomes[(s.name, m)] for s in plan.scenes for m in methods], inputs_sha, results_sha,
                    plan.warnings, argv, info, method_scales=own)
    run.misregistration = scene_sensitivities(plan, outcomes) if getattr(ns, "misregistration", False) else None
    return run, _kept_records(plan, pairs, outcomes)




def _method_dirs(paths: list[str]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for text in paths:
        path = Path(text).expanduser()
        if path.is_file():
            raise UsageError(f"{text} is a file, not a folder of results: pass one folder per method "
                             "(RESULTS/<method>/<scene>.<ext>), e.g. the folder that holds it")
        if not path.is_dir():
            raise UsageError(f"results folder {text} does not exist (one folder per method is expected)")
        name = path.resolve().name
        if name in out:
            raise UsageError(f"two results folders are named {name!r}; method names come from folder names")
        out[name] = path
    return out


def _unmatched_files(method: str, folder: Path, scenes: list[SceneSource],
                     found: list[tuple[int, SceneSource, str, tuple[Path, int | None]]], first: int) -> list[str]:
    """One warning naming a method's result files that match no scene; a method none of whose files
    matches a scene is a usage error (its files named, with the names expected)."""
    names = {s.name for s in scenes}
    items = {s.index for s in scenes if s.kind == "h5"}
    used = {path for _, _, m, (path, _) in found if m == method}
    files = method_result_files(folder)
    numbered = {p: network_result_index(p.stem) for p in files}
    extra = [p for p in files if p not in used and p.stem not in names
             and (numbered[p] is None or numbered[p] - first not in items)]  # type: ignore[operator]
    if not extra and (used or files):  # files that name scenes but were not taken fail their pairs, with the reason
        return []
    shown = [p.relative_to(folder).as_posix() for p in extra[:5]] + ([f"... ({len(extra)} in all)"] * (len(extra) > 5))
    h5 = [s for s in scenes if s.kind == "h5"]
    expected = f"{scenes[0].name}.<ext>" + (
        f", {NETWORK_RESULT_PATTERN.replace('<i>', str((h5[0].index or 0) + first))}.mat (item i from {first} to "
        f"{len(h5) - 1 + first}) or "
        f"one N x C x H x W stack of the {len(h5)} items" if h5 else "")
    if not used:
        what = f"holds {', '.join(shown)}" if shown else "holds no result file"
        raise UsageError(f"{method} ({folder}): no result file matches a scene of the dataset: it {what}; "
                         f"results are named like {expected} (in {method}/ or {method}/results/)")
    return [f"{method}: {len(extra)} file(s) match no scene and are not evaluated: {', '.join(shown)} (results are "
            f"named like {expected})"]


def _locate_results(
    scenes: list[SceneSource], methods: dict[str, Path], settings: dict[str, DatasetSettings],
) -> tuple[list[tuple[int, SceneSource, str, tuple[Path, int | None]]], dict[_Key, SceneOutcome]]:
    """Each pair's result file, and the pairs that already failed (no or ambiguous result file); nothing is read."""
    found = []
    failed: dict[_Key, SceneOutcome] = {}
    extensions = ",".join(e[1:] for e in RESULT_EXTENSIONS)
    for scene_number, scene in enumerate(scenes):
        for method, folder in methods.items():
            try:
                result = find_result_file(folder, scene, settings[method].first_index)
            except DataError as exc:
                failed[(scene.name, method)] = SceneOutcome(scene.name, method, "failed", {}, None, str(exc))
                continue
            if result is None:
                first = settings[method].first_index
                network = NETWORK_RESULT_PATTERN.replace("<i>", str((scene.index or 0) + first)) \
                    if scene.kind == "h5" else ""
                network = f" or {network}.mat" if network else ""
                reason = f"missing result: no {method}/{scene.name}.{{{extensions}}}{network}"
                failed[(scene.name, method)] = SceneOutcome(scene.name, method, "failed", {}, None, reason)
                continue
            found.append((scene_number, scene, method, result))
    return found, failed


def _hash_inputs(scenes: list[SceneSource], base: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """SHA-256 of every input file (relative to the dataset), overall and per scene."""
    inputs_sha: dict[str, str] = {}
    scene_sha: dict[str, dict[str, str]] = {}
    for scene in scenes:
        scene_sha[scene.name] = {}
        for path in scene.paths:
            try:
                rel = Path(path).resolve().relative_to(base).as_posix()
            except ValueError:
                rel = Path(path).resolve().as_posix()
            if rel not in inputs_sha:
                try:
                    inputs_sha[rel] = sha256_file(path)
                except OSError as exc:
                    inputs_sha[rel] = f"unreadable: {exc}"
            scene_sha[scene.name][rel] = inputs_sha[rel]
    return inputs_sha, scene_sha


def _plan_pairs(plan: Plan, ns: argparse.Namespace, scene_sha: dict[str, dict[str, str]],
                failed: dict[_Key, SceneOutcome]) -> tuple[list[_Pair], dict[str, dict[str, str]]]:
    """The pairs to evaluate with their records and keys, and the SHA-256 of every result file; a
    result file that cannot be read fails its pair (added to ``failed``)."""
    results_sha: dict[str, dict[str, str]] = {m: {} for m in plan.methods}
    pairs = []
    for scene_number, scene, method, (path, index) in plan.found:
        settings = plan.method_settings[method]
        rel = f"{method}/{path.relative_to(plan.methods[method]).as_posix()}"
        try:
            sha = results_sha[method].get(rel) or sha256_file(path)
        except OSError as exc:
            failed[(scene.name, method)] = SceneOutcome(scene.name, method, "failed", {}, None,
                                                        f"cannot read {rel}: {exc}")
            continue
        results_sha[method][rel] = sha
        provenance = {"inputs_sha256": scene_sha[scene.name], "result_file": rel, "result_index": index,
                      "result_sha256": sha, "settings": settings.to_dict()}
        task = SceneTask(scene, method, str(path), index, settings, want_maps=ns.plots, tiled=ns.tiled,
                         jobs=1 if ns.scheduler else ns.jobs, display=plan.outputs.display_side(scene_number))
        pairs.append(_Pair(task, cache_key(settings, scene.name, method, scene_sha[scene.name], sha, index),
                           scene_file(plan.out, method, scene.name), provenance))
    return pairs, results_sha


def _reuse_records(pairs: list[_Pair], *, need_maps: bool, files: Any, out: Path) -> dict[_Key, SceneOutcome]:
    """``--resume``: the outcomes of the records that can be reused (with ``--maps``, only those whose GeoTIFF maps
    ``files(pair)`` are all there)."""
    reused = {}
    for pair in pairs:
        cached = load_cached(pair.record, pair.key, need_maps=need_maps)
        if cached is not None and all((out / f).is_file() for f in files(pair.names)):
            reused[pair.names] = cached
    return reused


def _kept_records(plan: Plan, pairs: list[_Pair], outcomes: dict[_Key, SceneOutcome]) -> list[str]:
    """Per-pair files in OUT that belong to this run: every record written or reused, and the maps
    this run made (a run without ``--plots`` or ``--maps`` keeps no maps, as a fresh run would write none)."""
    out_dir, keep = plan.out, []
    for pair in pairs:
        record = pair.record.relative_to(out_dir)
        maps = record.with_suffix(".maps.npz")
        if (out_dir / record).is_file():
            keep.append(record.as_posix())
        if outcomes[pair.names].maps:
            keep += [f.as_posix() for f in (maps, *plan.map_files(pair.names)) if (out_dir / f).is_file()]
    return keep


def _path_counts(outcomes: list[SceneOutcome]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in outcomes:
        path = (o.protocol or {}).get("evaluation_path")
        if o.status == "ok" and path:
            counts[path] = counts.get(path, 0) + 1
    return counts

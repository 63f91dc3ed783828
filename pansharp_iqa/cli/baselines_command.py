"""``pansharp-eval baselines DATASET --out DIR``: classical baselines in the RESULTS layout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.io.discovery import SceneSource
from pansharp_iqa.io.scenes import check_geometry, load_scene, spatial_of
from pansharp_iqa.io.windows import NotWindowed, open_windowed
from pansharp_iqa.validation import InputError

from .errors import EXIT_FAILURES, EXIT_OK, UsageError
from .evaluate_command import dataset_scenes, settings_from_args
from .output_dir import OutputFolder
from .scene_eval import check_inputs

__all__ = ["MANIFEST_NAME", "run_baselines"]

#: The manifest of the files ``pansharp-eval baselines`` wrote in its ``--out`` folder.
MANIFEST_NAME = ".pansharp-eval-baselines.json"


def _methods(text: str | None) -> list[str]:
    from pansharp_iqa.baselines import BASELINES

    table = {k.lower(): k for k in BASELINES}
    names = [t.strip() for t in (text or ",".join(BASELINES)).split(",") if t.strip()]
    unknown = [n for n in names if n.lower() not in table]
    if unknown or not names:
        raise UsageError(f"unknown baseline(s) {unknown or [text]}; known: {', '.join(BASELINES)}")
    return [table[n.lower()] for n in names]


def run_baselines(ns: argparse.Namespace, argv: list[str]) -> int:
    """Fuse every scene with the chosen baselines and write ``<out>/<method>/<scene>.npy``."""
    settings = settings_from_args(ns)
    methods = _methods(ns.methods)
    scenes, warnings = dataset_scenes(ns.dataset)
    out = Path(ns.out)
    files = {(m, scene.name): f"{m}/{scene.name}.npy" for m in methods for scene in scenes}
    with OutputFolder(out, manifest=MANIFEST_NAME, protected=[Path(settings.root)], argv=argv) as folder:
        folder.check(files.values())  # a file the tool did not write is refused, --force or not
        existing = [f for f in files.values() if (out / f).exists()]
        if existing and not ns.force:
            raise UsageError(f"{out} already holds baseline results of an earlier run (e.g. {out / existing[0]}); "
                             "pass --force to replace them")
        folder.claim(files.values())
        written, failures = _fuse_all(scenes, methods, settings, out, files, warnings)
        folder.commit()
    for f in failures:
        print(f"FAILED {f}", file=sys.stderr)
    if not any(written.values()):
        print(f"pansharp-eval: no baseline result was written: all {len(scenes)} scene(s) failed (reasons above)",
              file=sys.stderr)
        return EXIT_FAILURES
    label = settings.result_scale_label or "dn"
    counts = ", ".join(f"{m} ({written[m]}/{len(scenes)})" for m in methods)
    print(f"pansharp-eval: wrote {counts} scene(s) in {out} (result scale {label!r})")
    note = _scale_note(settings.sources, label=label)
    if note:
        print(f"pansharp-eval: note: {note}")
    if failures:
        print(f"pansharp-eval: {len(failures)} failure(s) (exit status 1)", file=sys.stderr)
    return EXIT_FAILURES if failures else EXIT_OK


def _fuse_all(scenes: list[SceneSource], methods: list[str], settings: DatasetSettings, out: Path,
              files: dict[tuple[str, str], str], warnings: list[str]) -> tuple[dict[str, int], list[str]]:
    """Fuse and write every (scene, method): the counts written per method, and the failures
    (a scene or method that cannot be fused; a result that cannot be written is raised)."""
    from tqdm import tqdm

    from pansharp_iqa.baselines import BASELINES
    from pansharp_iqa.baselines.npy_output import write_baseline

    # the baselines are linear in their inputs' unit: the result, in the inputs' stored unit, is written in its own
    scale = (settings.result_scale or 1.0) / settings.input_scale
    sensor = settings.resolved_sensor()
    for w in warnings:
        print(f"pansharp-eval: warning: {w}", file=sys.stderr)
    failures: list[str] = []
    written: dict[str, int] = {m: 0 for m in methods}
    for scene in tqdm(scenes, desc="baselines", unit="scene", disable=None):
        try:
            data = _scene_inputs(scene, settings)
            check_inputs(settings, scene, data)  # the settings' rules on each input, once per scene
        except InputError as exc:  # the package's rules (DataError among them, NaN/Inf too): one line
            failures.append(f"{scene.name}: {exc}")
            continue
        for m in methods:
            target = out / files[(m, scene.name)]
            target.parent.mkdir(exist_ok=True)
            try:
                # strip by strip into a temporary file renamed when complete (bounded memory, atomic)
                write_baseline(BASELINES[m], data["ms"], data["pan"], target, sensor=sensor, ratio=settings.ratio,
                               scale=scale)
            except OSError as exc:  # the system refused a write (no space, no rights): the run's error
                if exc.filename is None:
                    raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
                raise
            except Exception as exc:  # noqa: BLE001 - isolate per scene and method
                failures.append(f"{scene.name} / {m}: {type(exc).__name__}: {exc}")
                continue
            written[m] += 1
    return written, failures


def _scene_inputs(scene: SceneSource, settings: DatasetSettings) -> dict[str, Any]:
    """The scene's MS and PAN as their files declare them: window readers for per-role ``.npy``/GeoTIFF files, so
    the baselines run in bounded memory; otherwise (bundles, files read whole) the arrays, from
    :func:`~pansharp_iqa.io.scenes.load_scene`."""
    ms_path, pan_path = scene.file_for("ms"), scene.file_for("pan")
    if scene.kind == "split" and not scene.problem and ms_path and pan_path:
        try:
            pan = open_windowed(pan_path, role="pan")  # first: its size tells a cube's band axis
            ms = open_windowed(ms_path, role="ms", spatial=spatial_of("ms", pan.shape, settings.ratio))
            images = {"ms": ms, "pan": pan}
        except NotWindowed:
            images = None
        if images is not None:
            check_geometry(scene, settings, {r: i.shape[:2] if r == "pan" else i.shape for r, i in images.items()})
            return images
    return load_scene(scene, settings, ("ms", "pan"))


def _scale_note(sources: Mapping[str, str], *, label: str) -> str | None:
    """What to pass when evaluating the written results (in scale ``label``), unless the dataset already declares it
    (``sources``: :attr:`DatasetSettings.sources <pansharp_iqa.io.dataset_config.DatasetSettings.sources>`).

    Examples
    --------
    >>> _scale_note({}, label="dn")
    'dataset.toml does not declare result_scale: evaluate these results with --result-scale dn'
    >>> _scale_note({"result_scale": "dataset.toml"}, label="unit") is None
    True
    """
    source = sources.get("result_scale")
    if source is None:
        return f"dataset.toml does not declare result_scale: evaluate these results with --result-scale {label}"
    if source == "flag":
        return (f"these results are in scale {label!r}, as --result-scale said (it overrides dataset.toml): "
                f"evaluate them with --result-scale {label}")
    return None

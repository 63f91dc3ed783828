"""Evaluation of one (scene, method) pair: the unit of work of ``pansharp-eval``.

:func:`evaluate_scene` reads the scene's inputs and the method's result as their files declare them, adds what
the files declare (their units, for the messages; the MS's band names, which select its MTF) to the method's
settings value (:func:`pair_settings`), and calls the core's one path, :func:`pansharp_iqa.evaluation.evaluate`,
which applies each role's declared scale and the rules, once: on the arrays, or, for scenes too big for the memory
available (or big enough that it is faster), tile by tile on windows read from the files, once (same numbers,
bounded memory; the library's rule :func:`pansharp_iqa.tiled.plan.choose_path` decides). It never raises: a
problem becomes a failed :class:`SceneOutcome` with its reason. It takes and returns only picklable values, so
any executor (processes, a Dask scheduler) can run it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.io.declared import Declared, band_order, scene_names
from pansharp_iqa.io.discovery import SceneSource
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.memory import available_memory
from pansharp_iqa.io.metadata import check_recorded, read_recorded
from pansharp_iqa.io.orientation import AmbiguousLayout
from pansharp_iqa.io.results import check_result_georeference, load_result, result_record
from pansharp_iqa.io.scenes import (
    check_geometry,
    check_scene_bands,
    load_scene,
    pan_bands_declared,
    scene_records,
    scene_shapes,
    spatial_of,
)
from pansharp_iqa.io.windows import NotWindowed, Source, open_windowed
from pansharp_iqa.settings import FullSettings, Settings
from pansharp_iqa.tiled.plan import PathChoice, choose_path
from pansharp_iqa.validation import InputError

from .memory_plan import TILE_SIZE

__all__ = [
    "CORE_ROLES", "DEFERRED_DISPLAY_BYTES", "SceneOutcome", "SceneTask", "check_inputs", "evaluate_arrays",
    "evaluate_scene", "pair_settings",
]

#: The core's role of each file of a scene (``lms``: a PanCollection file's upsampled MS).
CORE_ROLES = {"gt": "reference", "ms": "ms", "pan": "pan", "lms": "ms_exp", "fused": "fused"}


@dataclasses.dataclass(frozen=True)
class SceneTask:
    """Everything needed to evaluate one method on one scene (``result_index``: item of a stacked result;
    ``display``: longer side of the display images to make, 0 none; ``display_only``: images only, for a
    pair whose numbers ``--resume`` reused; ``maps_dir``: where ``--maps`` writes the pair's GeoTIFF maps)."""

    scene: SceneSource
    method: str
    result_file: str
    result_index: int | None
    settings: DatasetSettings
    want_maps: bool = False  # the maps' previews (--plots at reduced resolution: Q2n and SAM)
    maps_dir: str | None = None  # --maps: the folder of the pair's GeoTIFF maps
    tiled: str = "auto"  # "auto": memory_plan.choose_path decides per scene
    jobs: int = 1  # evaluations running at the same time (they share the memory)
    display: int = 0
    display_only: bool = False


@dataclasses.dataclass
class SceneOutcome:
    """Result of one (scene, method) evaluation (``status``: ``"ok"`` or ``"failed"``, with ``reason``)."""

    scene: str
    method: str
    status: str
    metrics: dict[str, float]  # index values (empty on failure)
    protocol: dict[str, Any] | None = None  # the core's card
    reason: str | None = None
    maps: dict[str, np.ndarray] | None = None  # each map's preview (quality_maps.PreviewMaps), when requested
    maps_note: str | None = None  # why no maps although requested
    memory_budget: int | None = None  # bytes this evaluation could use in memory
    display: Any = None  # PairDisplay (scene_display), or why none could be made
    per_band: dict[str, list[float]] | None = None  # index -> one value per band, when asked for (--per-band)


def _scene_roles(settings: DatasetSettings) -> tuple[str, ...]:
    """The scene's files to read: the GT, or the MS and PAN (and a preset's ``lms``: the scripts' upsampled MS)."""
    return tuple(r for r, c in CORE_ROLES.items() if c in settings.settings.roles and r != "fused")


def _label(scene: SceneSource, role: str) -> str:
    """A scene file's name in messages (``a_gt.tif``, ``test.h5:gt[3]``)."""
    path = Path(scene.file_for(role) or scene.name).name
    return path if scene.kind == "split" else f"{path}:{role}" + (f"[{scene.index}]" if scene.kind == "h5" else "")


def pair_settings(settings: DatasetSettings, scene: SceneSource, records: Mapping[str, Declared],
                  names: tuple[str | None, ...] = (), result_file: str | None = None) -> Settings:
    """The settings value of one pair: the method's, with the unit each file declares (``file_scale``, which
    messages blame), the files' names in messages, and at full resolution the MTF of each band the MS declares."""
    core, labels = settings.settings, {}
    for role, record in records.items():
        labels[CORE_ROLES[role]] = _label(scene, role) if role != "fused" else Path(str(result_file)).name
        scales = record.scales
        if role == "fused" and scales and (order := band_order(record.names, names, result_name=record.source,
                                                                scene_name="the scene")) is not None:
            scales = tuple(scales[i] for i in order)  # the bands as the core sees them
        if scales:
            core = core.declaring(CORE_ROLES[role], "file_scale", scales[0] if len(set(scales)) == 1 else scales,
                                  record.where)
    core = dataclasses.replace(core, wording=dataclasses.replace(core.wording, names=labels))
    return core.for_bands(names) if isinstance(core, FullSettings) else core


def _names(settings: DatasetSettings, record: Declared, n_bands: int) -> tuple[tuple[str | None, ...], str]:
    """The scene's band names and where they come from (:func:`pansharp_iqa.io.declared.scene_names`)."""
    from pansharp_iqa.sensors import get_sensor

    return scene_names(record, n_bands=n_bands, band_names=settings.band_names, sensor=get_sensor(settings.sensor))


def check_inputs(settings: DatasetSettings, scene: SceneSource, arrays: Mapping[str, Any]) -> None:
    """What a scene's inputs declare against the settings (band names), and the settings value's rules
    (:meth:`pansharp_iqa.settings.EvaluationSettings.check`) on each input alone, as its file declares it (what a
    setting decides: its scale, the bits), before any result is read."""
    from pansharp_iqa.baselines.inputs import lazy_facts
    from pansharp_iqa.validation import image_facts

    records = scene_records(scene, arrays)
    ref = "gt" if "gt" in arrays else "ms"
    names = _names(settings, records[ref], arrays[ref].shape[2])[0]  # the files' band names against band_names
    core = pair_settings(settings, scene, records, names)
    for role, a in arrays.items():
        r = CORE_ROLES[role]
        if r != "ms_exp":
            facts = image_facts if isinstance(a, np.ndarray) else lazy_facts  # a window reader: one streamed pass
            core.check({r: facts(r, a, scale=core.scale_of(r))})


def evaluate_arrays(fused: np.ndarray, inputs: Mapping[str, np.ndarray], settings: Settings,
                    maps: Any = None) -> dict[str, Any]:
    """Call the core in memory on the arrays as their files declare them (``inputs`` by the scene's role names;
    ``maps``: the :class:`~pansharp_iqa.quality_maps.MapSink` of the pair's quality maps)."""
    from pansharp_iqa.evaluation import evaluate

    return evaluate({CORE_ROLES[r]: a for r, a in {**inputs, "fused": fused}.items()}, settings, tiled="never",
                    maps_to=maps)


def _map_sink(task: SceneTask) -> Any:
    """The sink of the pair's quality maps (``--maps``: GeoTIFFs georeferenced like the scene's PAN or GT; previews for
    the reports), or None when no map is asked for."""
    reduced = task.settings.resolution == "reduced"
    if task.maps_dir is None and not (task.want_maps and reduced):
        return None
    from .map_outputs import PairMaps, map_names

    if not map_names(task.settings.settings):  # --plots with no index that has a map (--maps is refused then)
        return None

    like = task.scene.file_for("gt" if reduced else "pan") if task.scene.kind == "split" else None
    return PairMaps(task.maps_dir, like)


#: Scene layouts read window by window (tile-wise); the others hold a whole scene in one file.
WINDOWED_KINDS = ("split", "h5bundle")


def _open_windowed(task: SceneTask, names: tuple[str | None, ...]) -> tuple[dict[str, Source] | None,
                                                                            tuple[str, str] | None]:
    """The scene's files opened for window reads (the result's bands in the scene's order), or ``(None, (category,
    why not))``."""
    scene, settings = task.scene, task.settings
    if task.result_index is not None:
        return None, ("stacked results", f"{Path(task.result_file).name} holds several scenes")
    if scene.kind not in WINDOWED_KINDS:
        name = Path(scene.paths[0]).name if scene.paths else scene.name
        return None, (f".{scene.kind} scenes", f"{name} holds the whole scene; store <scene>_gt/_ms/_pan as .npy "
                                                "or GeoTIFF files for tile-wise evaluation")
    images: dict[str, Source] = {}
    path: str | None = None
    try:
        for role in _scene_roles(settings):
            path = scene.file_for(role)
            if path is None:
                raise DataError(f"scene {scene.name!r} has no {role} file ({scene.name}_{role}.tif or .npy)")
            key = _bundle_key(path, role, settings.sensor) if scene.kind == "h5bundle" else None
            several = role == "pan" and pan_bands_declared(settings)  # the 10 m bands in the PAN's place
            try:
                images[role] = open_windowed(path, role="pan-bands" if several else role, key=key)
            except AmbiguousLayout:  # a cube with more bands than pixels a side: the PAN's size tells its axes
                if role == "pan" or scene.file_for("pan") is None:
                    raise
                images[role] = open_windowed(path, role=role, key=key, spatial=spatial_of(
                    role, scene_shapes(scene, settings)["pan"], settings.ratio))
        check_geometry(scene, settings, {r: img.shape[:2] if r == "pan" else img.shape for r, img in images.items()})
        ref = images["gt" if settings.resolution == "reduced" else "ms"]
        path = task.result_file
        images["fused"] = open_windowed(path, role="fused", expected=(*images.get("pan", ref).shape[:2],
                                                                       ref.shape[2]))
        images["fused"].follow_bands(ref, names)
    except NotWindowed as exc:
        ext = Path(path or "").suffix.lower() or "these"
        return None, (f"{ext} files" if ext != ".tiff" else ".tif files", str(exc))
    return images, None


def _bundle_key(path: str, role: str, sensor: str) -> str:
    """The dataset of a one-scene HDF5 bundle that holds ``role`` (:func:`pansharp_iqa.io.scenes.role_keys`)."""
    from pansharp_iqa.io.arrays import h5_dataset_shapes
    from pansharp_iqa.io.scenes import role_keys

    names = {k.lower(): k for k in h5_dataset_shapes(path)}
    key = next((names[k.lower()] for k in role_keys(role, sensor) if k.lower() in names), None)
    if key is None:
        raise DataError(f"{Path(path).name}: no {role} dataset (looked for {', '.join(role_keys(role, sensor))})")
    return key


def _check_scene(task: SceneTask, bundles: dict[str, dict[str, np.ndarray]]) -> dict[str, tuple[int, ...]]:
    """Before any value is read: every image of the scene fits the others and the settings (sizes,
    ratio, bands, sensor), and no file records a setting that contradicts the run's; the shapes."""
    settings = task.settings
    for path in task.scene.paths:
        check_recorded(read_recorded(path), {"sensor": settings.sensor, "ratio": settings.ratio,
                                             "bits": settings.bits, "scale": settings.input_scale},
                       settings.sources)
    shapes = scene_shapes(task.scene, settings, cache=bundles)
    check_geometry(task.scene, settings, shapes)
    check_scene_bands(task.scene)
    check_result_georeference(task.result_file, task.scene, settings.resolution)
    return shapes


def _evaluate_windowed(images: dict[str, Source], core: Settings, maps: Any = None) -> dict[str, Any]:
    """The core's tile engine on the scene's windows (one read of each file; the maps written tile by tile)."""
    from pansharp_iqa.evaluation import evaluate

    return evaluate({CORE_ROLES[r]: src for r, src in images.items()}, core, tiled="always", tile_size=TILE_SIZE,
                    maps_to=maps)


def _outcome(task: SceneTask, result: dict[str, Any], choice: PathChoice, named: dict[str, str],
             **extra: Any) -> SceneOutcome:
    card = {**dict(result.get("protocol") or {}), **named, **choice.to_card()}
    metrics = {k: float(v) for k, v in result.items() if k not in ("protocol", "per_band", "maps")}
    if "maps" in result:
        extra.setdefault("maps", result["maps"])
    return SceneOutcome(task.scene.name, task.method, "ok", metrics, card, None, memory_budget=choice.budget,
                        per_band=result.get("per_band"), **extra)


#: In-memory pairs up to this size (fused image and inputs, bytes; a 1024 x 1024 x 8 pair in float64
#: is 128 MiB) may have their display images made later, in another thread (``defer_display``),
#: which keeps their arrays alive meanwhile.
DEFERRED_DISPLAY_BYTES = 192 * 2**20


def evaluate_scene(task: SceneTask, *, defer_display: Callable[[Callable[[], Any]], Any] | None = None) -> SceneOutcome:
    """Evaluate one method on one scene; failures are returned (with the reason), never raised. The card
    records the path taken and why. ``defer_display(make)`` (e.g. a one-thread executor's ``submit``)
    makes the display of pairs read whole, up to :data:`DEFERRED_DISPLAY_BYTES`, while the next is evaluated."""
    settings = task.settings
    images: dict[str, Source] | None = None
    inputs: dict[str, np.ndarray] | None = None
    core: Settings = settings.settings
    try:
        if settings.result_scale is None:
            raise DataError("the result scale is not declared (result_scale in dataset.toml or --result-scale)")
        if task.scene.problem:
            raise DataError(task.scene.problem)
        reduced = settings.resolution == "reduced"
        bundles: dict[str, dict[str, np.ndarray]] = {}
        shapes = _check_scene(task, bundles)
        ref = "gt" if reduced else "ms"
        records = {**scene_records(task.scene, _scene_roles(settings)), "fused": result_record(task.result_file)}
        names, names_from = _names(settings, records[ref], shapes.get(ref, (0, 0, 0))[2])
        core = pair_settings(settings, task.scene, records, names, task.result_file)
        images, not_windowed = _open_windowed(task, names) if task.tiled != "never" else (None, None)
        if task.tiled == "always" and images is None:
            raise DataError(f"--tiled always: {not_windowed[1] if not_windowed else 'not readable tile-wise'}; "
                            "evaluate this scene with --tiled auto or never")
        shape = images["fused"].shape if images else None
        choice = choose_path(task.tiled, resolution=settings.resolution, shape=shape,
                             available=available_memory() if task.tiled == "auto" else None, jobs=task.jobs,
                             not_windowed=not_windowed)
        named = {"band_names": names_from} if names_from and records["fused"].names else {}
        if images is not None and choice.path == "tile-wise":
            if task.display_only:
                return _display_outcome(task, _display(task, core, images=images))
            return _outcome(task, _evaluate_windowed(images, core, _map_sink(task)), choice, named,
                            display=_display(task, core, images=images))
        images = None
        inputs = load_scene(task.scene, settings, _scene_roles(settings), cache=bundles)
        expected = (*inputs["pan" if "pan" in inputs else ref].shape[:2], inputs[ref].shape[2])
        fused = load_result(task.result_file, expected, task.result_index, like=task.scene.file_for(ref), names=names)
        if task.display_only:
            return _display_outcome(task, _display(task, core, fused=fused, inputs=inputs, defer=defer_display))
        result = evaluate_arrays(fused, inputs, core, _map_sink(task))
        return _outcome(task, result, choice, named,
                        display=_display(task, core, fused=fused, inputs=inputs, defer=defer_display))
    except InputError as exc:  # the package's rules (DataError among them): the message is the reason
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - isolate every failure to its scene
        reason = f"{type(exc).__name__}: {exc}"
    # a failed pair still shows the scene's references, from what it read
    if images is not None:
        images = {k: v for k, v in images.items() if k != "fused"}
    display = None if task.display_only else _display(task, core, inputs=inputs, images=images, defer=defer_display)
    return SceneOutcome(task.scene.name, task.method, "failed", {}, None, reason, display=display)


def _display_outcome(task: SceneTask, display: Any) -> SceneOutcome:
    """The outcome of a display-only task: the display, no index values."""
    return SceneOutcome(task.scene.name, task.method, "ok", {}, None, display=display)


def _display(task: SceneTask, core: Settings, *, fused: np.ndarray | None = None,
             inputs: dict[str, np.ndarray] | None = None, images: dict[str, Source] | None = None,
             defer: Callable[[Callable[[], Any]], Any] | None = None) -> Any:
    """The pair's display images when the task asks for them (see :mod:`.scene_display`), or
    the future of them (``defer``, small in-memory pairs: see :func:`evaluate_scene`)."""
    if not task.display:
        return None
    from .scene_display import display_from_arrays, display_from_files

    scales = {r: core.scale_of(c) for r, c in CORE_ROLES.items()}  # the displays are in DN
    if images is not None:
        return display_from_files(images, method=task.method, settings=task.settings, max_side=task.display,
                                  scales=scales)
    if inputs is None:
        return None
    make = functools.partial(display_from_arrays, fused, inputs, method=task.method, settings=task.settings,
                             max_side=task.display, scales=scales)
    size = sum(a.nbytes for a in inputs.values()) + (0 if fused is None else fused.nbytes)
    return defer(make) if defer is not None and size <= DEFERRED_DISPLAY_BYTES else make()

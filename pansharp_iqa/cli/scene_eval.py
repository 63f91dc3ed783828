"""Evaluation of one (scene, method) pair: the unit of work of ``pansharp-eval``.

:func:`evaluate_scene` reads the scene's inputs and the method's result, checks them, and calls
the core's one path, :func:`pansharp_iqa.evaluation.evaluate`, with the run's settings value
(:func:`core_settings`): on the arrays in digital numbers, or, for scenes too big for the memory
available (or big enough that it is faster), tile by tile on windows read from the files (same
numbers, bounded memory; the library's rule :func:`pansharp_iqa.tiled.plan.choose_path` decides).
It never raises: a problem becomes a failed :class:`SceneOutcome` with its reason. It takes and
returns only picklable values, so any executor (processes, a Dask scheduler) can run it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.io.discovery import SceneSource
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.memory import available_memory
from pansharp_iqa.io.metadata import check_recorded, read_recorded
from pansharp_iqa.io.results import band_names_file, check_result_georeference, load_result
from pansharp_iqa.io.scale import check_input_values, check_result_values
from pansharp_iqa.io.scenes import check_geometry, load_scene, scene_shapes
from pansharp_iqa.io.windows import NotWindowed, WindowedImage, open_windowed, window_stats
from pansharp_iqa.settings import Settings, full_settings, reduced_settings
from pansharp_iqa.tiled.plan import PathChoice, choose_path
from pansharp_iqa.validation import InputError, image_facts

from .memory_plan import TILE_SIZE

__all__ = [
    "DEFERRED_DISPLAY_BYTES", "SceneOutcome", "SceneTask", "core_settings", "evaluate_arrays", "evaluate_scene",
    "quality_maps",
]


@dataclasses.dataclass(frozen=True)
class SceneTask:
    """Everything needed to evaluate one method on one scene (``result_index``: item of a stacked result;
    ``display``: longer side of the display images to make, 0 none; ``display_only``: images only, for a
    pair whose numbers ``--resume`` reused)."""

    scene: SceneSource
    method: str
    result_file: str
    result_index: int | None
    settings: DatasetSettings
    want_maps: bool = False  # the Q2n and SAM maps (reduced resolution), for plots
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
    maps: dict[str, np.ndarray] | None = None  # {"Q2n": (ny, nx), "SAM": (H, W)} when requested
    maps_note: str | None = None  # why no maps although requested (tile-wise)
    memory_budget: int | None = None  # bytes this evaluation could use in memory
    display: Any = None  # PairDisplay (scene_display), or why none could be made


def core_settings(settings: DatasetSettings) -> Settings:
    """The core's settings value of a run (resolution, protocol, sensor, ratio, bits, indexes, override)."""
    common: dict[str, Any] = dict(ratio=settings.ratio, bits=settings.bits, protocol=settings.protocol,
                  scale_mismatch=settings.scale_mismatch, indexes=settings.indexes)
    if settings.resolution == "reduced":
        return reduced_settings(**common)
    return full_settings(sensor=settings.resolved_sensor(), **common)


def _roles(fused: Any, inputs: dict[str, Any], settings: DatasetSettings) -> dict[str, Any]:
    """The scene's images under the core's role names."""
    if settings.resolution == "reduced":
        return {"fused": fused, "reference": inputs["gt"]}
    return {"fused": fused, "ms": inputs["ms"], "pan": inputs["pan"]}


def evaluate_arrays(fused: np.ndarray, inputs: dict[str, np.ndarray], settings: DatasetSettings) -> dict[str, Any]:
    """Call the core in memory on arrays already in digital numbers (``inputs["lms"]``: the upsampled MS)."""
    from pansharp_iqa.evaluation import evaluate

    core, roles = core_settings(settings), _roles(fused, inputs, settings)
    if "lms" in inputs:  # the file's upsampled MS (a preset's .h5)
        core, roles = dataclasses.replace(core, upsampled="given"), {**roles, "ms_exp": inputs["lms"]}  # type: ignore[arg-type]
    return evaluate(roles, core, tiled="never")


def quality_maps(fused: np.ndarray, reference: np.ndarray, card: dict[str, Any]) -> dict[str, np.ndarray]:
    """Q2n block map and SAM map (degrees) on the region the protocol evaluates."""
    from pansharp_iqa import q2n, sam

    cut = card.get("dim_cut")
    if cut:
        lead, trail = (int(cut[0]), int(cut[1])) if isinstance(cut, (list, tuple)) else (int(cut) - 1, int(cut))
        fused = fused[lead : fused.shape[0] - trail, lead : fused.shape[1] - trail]
        reference = reference[lead : reference.shape[0] - trail, lead : reference.shape[1] - trail]
    bs = int(card.get("block_size", 32))
    shift = int(card.get("shift", bs))
    q_out = q2n(reference, fused, block_size=bs, shift=shift, return_map=True)
    s_out = sam(reference, fused, return_map=True)
    assert isinstance(q_out, tuple) and isinstance(s_out, tuple)  # return_map=True: (value, map)
    q_map, s_map = q_out[1], s_out[1]
    return {"Q2n": np.asarray(q_map, dtype=np.float64), "SAM": np.asarray(s_map, dtype=np.float64)}


_WINDOWED_KINDS = ("split",)


def _scene_roles(settings: DatasetSettings, scene: SceneSource | None = None) -> tuple[str, ...]:
    """The roles to read; a preset's full-resolution .h5 scene adds its ``lms`` (the scripts' upsampled MS)."""
    if settings.resolution == "reduced":
        return ("gt",)
    lms = settings.preset is not None and scene is not None and scene.kind == "h5"
    return ("ms", "pan", "lms") if lms else ("ms", "pan")


def _open_windowed(task: SceneTask) -> tuple[dict[str, WindowedImage] | None, tuple[str, str] | None]:
    """The scene's files opened for window reads, or ``(None, (category, why not))``."""
    scene, settings = task.scene, task.settings
    if task.result_index is not None:
        return None, ("stacked results", f"{Path(task.result_file).name} holds several scenes")
    if scene.kind not in _WINDOWED_KINDS:
        name = Path(scene.paths[0]).name if scene.paths else scene.name
        return None, (f".{scene.kind} scenes", f"{name} holds the whole scene; store <scene>_gt/_ms/_pan as .npy "
                                                "or GeoTIFF files for tile-wise evaluation")
    images: dict[str, WindowedImage] = {}
    path: str | None = None
    try:
        for role in _scene_roles(settings):
            path = scene.file_for(role)
            if path is None:
                raise DataError(f"scene {scene.name!r} has no {role} file ({scene.name}_{role}.tif or .npy)")
            images[role] = open_windowed(path, role=role, multiplier=settings.input_scale)
        check_geometry(scene, settings, {role: img.shape for role, img in images.items()})
        if settings.resolution == "reduced":
            expected = images["gt"].shape
        else:
            expected = (*images["pan"].shape, images["ms"].shape[2])
        path = task.result_file
        images["fused"] = open_windowed(path, role="fused", multiplier=settings.result_scale or 1.0,
                                        expected=expected, like=images[_scene_roles(settings)[0]])
    except NotWindowed as exc:
        ext = Path(path or "").suffix.lower() or "these"
        return None, (f"{ext} files" if ext != ".tiff" else ".tif files", str(exc))
    return images, None


def _check_scene(task: SceneTask, bundles: dict[str, dict[str, np.ndarray]]) -> None:
    """Before any value is read: every image of the scene fits the others and the settings (sizes,
    ratio, bands, sensor), and no file records a setting that contradicts the run's."""
    settings = task.settings
    for path in task.scene.paths:
        check_recorded(read_recorded(path), {"sensor": settings.sensor, "ratio": settings.ratio,
                                             "bits": settings.bits, "scale": settings.input_scale},
                       settings.sources)
    check_geometry(task.scene, settings, scene_shapes(task.scene, settings, cache=bundles))
    check_result_georeference(task.result_file, task.scene, settings.resolution)


def _reference_label(task: SceneTask) -> str:
    role = "gt" if task.settings.resolution == "reduced" else "ms"
    path = task.scene.file_for(role)
    return f"{Path(path).name}:{role}" if path else f"{task.scene.name}:{role}"


def _check_windowed_values(images: dict[str, WindowedImage], settings: DatasetSettings, method: str) -> None:
    """The in-memory path's value rules (:mod:`pansharp_iqa.io.scale`), from one streamed pass."""
    facts = {}
    for role, img in images.items():
        facts[role] = window_stats(img).facts(Path(img.path).name)
        if role != "fused":
            check_input_values(facts[role], label=settings.input_scale_label, bits=settings.bits, role=role)
    reference = facts["gt"] if settings.resolution == "reduced" else facts["ms"]
    check_result_values(facts["fused"], reference, label=str(settings.result_scale_label),
                        multiplier=float(settings.result_scale or 1.0), bits=settings.bits,
                        scale_mismatch=settings.scale_mismatch, method=method)


def _evaluate_windowed(images: dict[str, WindowedImage], settings: DatasetSettings, method: str) -> dict[str, Any]:
    """The core's tile engine on the scene's windows (after the value checks of one streamed pass)."""
    from pansharp_iqa.evaluation import evaluate

    _check_windowed_values(images, settings, method)
    result = evaluate(_roles(images["fused"], images, settings), core_settings(settings), tiled="always",
                      tile_size=TILE_SIZE)
    tiling = (result.get("protocol") or {}).get("tiling")
    if isinstance(tiling, dict):
        tiling["readers"] = {role: img.describe() for role, img in images.items()}
    return result


def _outcome(task: SceneTask, result: dict[str, Any], choice: PathChoice, **extra: Any) -> SceneOutcome:
    card = {**dict(result.get("protocol") or {}), **choice.to_card()}
    metrics = {k: float(v) for k, v in result.items() if k != "protocol"}
    return SceneOutcome(task.scene.name, task.method, "ok", metrics, card, None, memory_budget=choice.budget, **extra)


#: In-memory pairs up to this size (fused image and inputs, bytes; a 1024 x 1024 x 8 pair in float64
#: is 128 MiB) may have their display images made later, in another thread (``defer_display``),
#: which keeps their arrays alive meanwhile.
DEFERRED_DISPLAY_BYTES = 192 * 2**20


def evaluate_scene(task: SceneTask, *, defer_display: Callable[[Callable[[], Any]], Any] | None = None) -> SceneOutcome:
    """Evaluate one method on one scene; failures are returned (with the reason), never raised. The card
    records the path taken and why. ``defer_display(make)`` (e.g. a one-thread executor's ``submit``)
    makes the display of pairs read whole, up to :data:`DEFERRED_DISPLAY_BYTES`, while the next is evaluated."""
    settings = task.settings
    images: dict[str, WindowedImage] | None = None
    inputs: dict[str, np.ndarray] | None = None
    try:
        if settings.result_scale is None:
            raise DataError("the result scale is not declared (result_scale in dataset.toml or --result-scale)")
        if task.scene.problem:
            raise DataError(task.scene.problem)
        reduced = settings.resolution == "reduced"
        bundles: dict[str, dict[str, np.ndarray]] = {}
        _check_scene(task, bundles)
        images, not_windowed = _open_windowed(task) if task.tiled != "never" else (None, None)
        if task.tiled == "always" and images is None:
            raise DataError(f"--tiled always: {not_windowed[1] if not_windowed else 'not readable tile-wise'}; "
                            "evaluate this scene with --tiled auto or never")
        shape = images["fused"].shape if images else None
        choice = choose_path(task.tiled, resolution=settings.resolution, shape=shape,
                             available=available_memory() if task.tiled == "auto" else None, jobs=task.jobs,
                             not_windowed=not_windowed)
        if images is not None and choice.path == "tile-wise":
            if task.display_only:
                return _display_outcome(task, _display(task, images=images))
            note = "no Q2n/SAM maps: the scene was evaluated tile-wise" if task.want_maps and reduced else None
            return _outcome(task, _evaluate_windowed(images, settings, task.method), choice, maps_note=note,
                            display=_display(task, images=images))
        images = None
        inputs = load_scene(task.scene, settings, _scene_roles(settings, task.scene), cache=bundles)
        if reduced:
            reference = inputs["gt"]
            expected = reference.shape
        else:
            reference = inputs["ms"]
            expected = (*inputs["pan"].shape, reference.shape[2])
        fused = load_result(task.result_file, expected, task.result_index,
                            like=band_names_file(task.scene, settings.resolution)) * settings.result_scale
        if task.display_only:
            return _display_outcome(task, _display(task, fused=fused, inputs=inputs, defer=defer_display))
        check_result_values(image_facts(Path(task.result_file).name, fused),
                            image_facts(_reference_label(task), reference), label=str(settings.result_scale_label),
                            multiplier=float(settings.result_scale), bits=settings.bits,
                            scale_mismatch=settings.scale_mismatch, method=task.method)
        result = evaluate_arrays(fused, inputs, settings)
        maps = quality_maps(fused, reference, result.get("protocol") or {}) if (task.want_maps and reduced) else None
        return _outcome(task, result, choice, maps=maps,
                        display=_display(task, fused=fused, inputs=inputs, defer=defer_display))
    except InputError as exc:  # the package's rules (DataError among them): the message is the reason
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - isolate every failure to its scene
        reason = f"{type(exc).__name__}: {exc}"
    # a failed pair still shows the scene's references, from what it read
    if images is not None:
        images = {k: v for k, v in images.items() if k != "fused"}
    display = None if task.display_only else _display(task, inputs=inputs, images=images, defer=defer_display)
    return SceneOutcome(task.scene.name, task.method, "failed", {}, None, reason, display=display)


def _display_outcome(task: SceneTask, display: Any) -> SceneOutcome:
    """The outcome of a display-only task: the display, no index values."""
    return SceneOutcome(task.scene.name, task.method, "ok", {}, None, display=display)


def _display(task: SceneTask, *, fused: np.ndarray | None = None, inputs: dict[str, np.ndarray] | None = None,
             images: dict[str, WindowedImage] | None = None,
             defer: Callable[[Callable[[], Any]], Any] | None = None) -> Any:
    """The pair's display images when the task asks for them (see :mod:`.scene_display`), or
    the future of them (``defer``, small in-memory pairs: see :func:`evaluate_scene`)."""
    if not task.display:
        return None
    from .scene_display import display_from_arrays, display_from_files

    if images is not None:
        return display_from_files(images, method=task.method, settings=task.settings, max_side=task.display)
    if inputs is None:
        return None
    make = functools.partial(display_from_arrays, fused, inputs, method=task.method, settings=task.settings,
                             max_side=task.display)
    size = sum(a.nbytes for a in inputs.values()) + (0 if fused is None else fused.nbytes)
    return defer(make) if defer is not None and size <= DEFERRED_DISPLAY_BYTES else make()

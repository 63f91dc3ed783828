"""Evaluation of one (scene, method) pair: the unit of work of ``pansharp-eval``.

:func:`evaluate_scene` reads the scene's inputs and the method's result, checks them, and calls
:func:`pansharp_iqa.evaluate_reduced` or :func:`pansharp_iqa.evaluate_full` on the arrays in
digital numbers. It never raises: a problem becomes a failed :class:`SceneOutcome` with its
reason. It takes and returns only picklable values, so any executor (processes, a Dask
scheduler, a tile-wise reader) can run it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from pansharp_iqa.io.discovery import SceneSource
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.results import load_result
from pansharp_iqa.io.scale import check_result_range
from pansharp_iqa.io.scenes import load_scene
from pansharp_iqa.io.settings import DatasetSettings

__all__ = ["SceneOutcome", "SceneTask", "display_pair", "evaluate_arrays", "evaluate_scene", "quality_maps", "tiled_paths"]


@dataclasses.dataclass(frozen=True)
class SceneTask:
    """Everything needed to evaluate one method on one scene.

    Attributes
    ----------
    scene : SceneSource
        The scene's input files.
    method : str
        Method name (its results folder).
    result_file : str
        Path of the fused image.
    result_index : int or None
        Item of a stacked result file.
    settings : DatasetSettings
        Sensor, ratio, bits, resolution, protocol, scales.
    want_maps : bool
        Also return the Q2n and SAM maps (reduced resolution only), for plots.
    tiled : {"auto", "always", "never"}
        Tile-wise evaluation of GeoTIFF scenes in bounded memory (same numbers): ``"auto"`` above
        :data:`TILED_MIN_PIXELS` pixels of the fused image.
    display : int
        When positive, also return the pair's display images (``--format html``, ``--figures``)
        with this longer side in pixels; 0: none.
    display_reference : bool
        Also make the scene's reference panels (GT, or EXP and PAN), even when the pair fails;
        they are the same for every pair of a scene, so one task per scene sets this.
    """

    scene: SceneSource
    method: str
    result_file: str
    result_index: int | None
    settings: DatasetSettings
    want_maps: bool = False
    tiled: str = "auto"
    display: int = 0
    display_reference: bool = True


@dataclasses.dataclass
class SceneOutcome:
    """Result of one (scene, method) evaluation.

    Attributes
    ----------
    scene, method : str
    status : str
        ``"ok"`` or ``"failed"``.
    metrics : dict of str to float
        Index values (empty on failure).
    protocol : dict or None
        The core's protocol card.
    reason : str or None
        Why it failed.
    maps : dict or None
        ``{"Q2n": (ny, nx), "SAM": (H, W)}`` arrays when requested.
    display : PairDisplay, str or None
        Display images when requested (:mod:`.scene_display`), or why they could not be made.
    """

    scene: str
    method: str
    status: str
    metrics: dict[str, float]
    protocol: dict[str, Any] | None = None
    reason: str | None = None
    maps: dict[str, np.ndarray] | None = None
    display: Any = None


def evaluate_arrays(fused: np.ndarray, inputs: dict[str, np.ndarray], settings: DatasetSettings) -> dict[str, Any]:
    """Call the core on arrays already in digital numbers.

    Parameters
    ----------
    fused : numpy.ndarray
        ``(H, W, B)`` fused image, DN.
    inputs : dict
        ``{"gt": (H, W, B)}`` at reduced resolution; ``{"ms": (H/r, W/r, B), "pan": (H, W)}``
        at full resolution (DN).
    settings : DatasetSettings

    Returns
    -------
    dict
        The core's result: index values and ``"protocol"`` (card).
    """
    from pansharp_iqa import evaluate_full, evaluate_reduced

    if settings.resolution == "reduced":
        return evaluate_reduced(fused, inputs["gt"], ratio=settings.ratio, bits=settings.bits, protocol=settings.protocol)
    return evaluate_full(
        fused,
        inputs["ms"],
        inputs["pan"],
        sensor=settings.resolved_sensor(),
        ratio=settings.ratio,
        bits=settings.bits,
        protocol=settings.protocol,
    )


def quality_maps(fused: np.ndarray, reference: np.ndarray, card: dict[str, Any]) -> dict[str, np.ndarray]:
    """Q2n block map and SAM map (degrees) on the region the protocol evaluates.

    The border cut (``card["dim_cut"]`` = rows/columns removed before and after) and the Q2n
    block size and shift come from the protocol card, so the maps match the reported values.

    Parameters
    ----------
    fused, reference : numpy.ndarray
        ``(H, W, B)`` in DN.
    card : dict
        Protocol card of the evaluation.

    Returns
    -------
    dict
        ``{"Q2n": (ny, nx) float64, "SAM": (H', W') float64 in degrees}``.
    """
    from pansharp_iqa import q2n, sam

    cut = card.get("dim_cut")
    if cut:
        lead, trail = (int(cut[0]), int(cut[1])) if isinstance(cut, (list, tuple)) else (int(cut) - 1, int(cut))
        fused = fused[lead : fused.shape[0] - trail, lead : fused.shape[1] - trail]
        reference = reference[lead : reference.shape[0] - trail, lead : reference.shape[1] - trail]
    bs = int(card.get("block_size", 32))
    shift = int(card.get("shift", bs))
    _, q_map = q2n(reference, fused, block_size=bs, shift=shift, return_map=True)
    _, s_map = sam(reference, fused, return_map=True)
    return {"Q2n": np.asarray(q_map, dtype=np.float64), "SAM": np.asarray(s_map, dtype=np.float64)}


#: Fused images larger than this (pixels, at PAN scale) are evaluated tile-wise under ``--tiled auto``.
TILED_MIN_PIXELS = 64 * 2**20

_TIFF = (".tif", ".tiff")


def tiled_paths(task: SceneTask) -> dict[str, str] | None:
    """Input paths for tile-wise evaluation, or None when the scene is evaluated in memory.

    Parameters
    ----------
    task : SceneTask

    Returns
    -------
    dict or None
        ``fused`` and ``gt`` (reduced) or ``ms`` and ``pan`` (full) GeoTIFF paths.

    Raises
    ------
    DataError
        ``--tiled always`` on inputs that cannot be read tile-wise, or results not on the
        inputs' scale.
    """
    if task.tiled == "never" or task.result_index is not None or task.scene.kind != "split":
        return None
    roles = ("gt",) if task.settings.resolution == "reduced" else ("ms", "pan")
    paths = {role: task.scene.file_for(role) for role in roles}
    paths["fused"] = task.result_file
    if not all(p and p.lower().endswith(_TIFF) for p in paths.values()):
        if task.tiled == "always":
            raise DataError("--tiled always needs GeoTIFF inputs and results (<scene>_gt/_ms/_pan.tif)")
        return None
    import tifffile

    for path in paths.values():
        with tifffile.TiffFile(path) as tif:
            if len(tif.pages) > 1:  # a page stack, not one multi-band GeoTIFF: only in memory
                if task.tiled == "always":
                    raise DataError(f"{path} is a multi-page TIFF; --tiled needs one multi-band GeoTIFF "
                                    "(e.g. tifffile.imwrite(..., planarconfig='separate'))")
                return None
    if task.tiled == "auto":
        with tifffile.TiffFile(paths["fused"]) as tif:
            shape = tif.pages[0].shape
        if int(np.prod(shape[:2] if len(shape) == 2 or shape[-1] < shape[0] else shape[1:])) < TILED_MIN_PIXELS:
            return None
    if task.settings.result_scale != task.settings.input_scale:
        raise DataError(
            "tile-wise evaluation needs the results on the inputs' scale "
            f"(results {task.settings.result_scale_label}, inputs {task.settings.input_scale_label}); "
            "store both in DN, or use --tiled never for scenes that fit in memory"
        )
    return paths


def _evaluate_tiled(paths: dict[str, str], settings: DatasetSettings) -> dict[str, Any]:
    from pansharp_iqa import evaluate_full, evaluate_reduced

    if settings.resolution == "reduced":
        return evaluate_reduced(paths["fused"], paths["gt"], ratio=settings.ratio, bits=settings.bits,
                                protocol=settings.protocol, scale=settings.input_scale)
    return evaluate_full(paths["fused"], paths["ms"], paths["pan"], sensor=settings.resolved_sensor(),
                         ratio=settings.ratio, bits=settings.bits, protocol=settings.protocol,
                         scale=settings.input_scale)


def evaluate_scene(task: SceneTask) -> SceneOutcome:
    """Evaluate one method on one scene; failures are returned, never raised.

    Parameters
    ----------
    task : SceneTask

    Returns
    -------
    SceneOutcome
        ``status == "ok"`` with the index values and the protocol card, or ``"failed"`` with the
        reason (unreadable file, wrong shape or band count, NaNs, a value range that contradicts
        the declared scale, or the core's own input error).
    """
    settings = task.settings
    inputs: dict[str, np.ndarray] | None = None
    tiled: dict[str, str] | None = None
    try:
        if settings.result_scale is None:
            raise DataError("the result scale is not declared (result_scale in dataset.toml or --result-scale)")
        reduced = settings.resolution == "reduced"
        tiled = tiled_paths(task)
        if tiled is not None:
            result = _evaluate_tiled(tiled, settings)
            card = dict(result.get("protocol") or {})
            metrics = {k: float(v) for k, v in result.items() if k != "protocol"}
            return SceneOutcome(task.scene.name, task.method, "ok", metrics, card, None, None,
                                _display(task, tiled=tiled))
        inputs = load_scene(task.scene, settings, ("gt",) if reduced else ("ms", "pan"))
        if reduced:
            reference = inputs["gt"]
            expected = reference.shape
        else:
            reference = inputs["ms"]
            expected = (*inputs["pan"].shape, reference.shape[2])
        fused = load_result(task.result_file, expected, task.result_index) * settings.result_scale
        check_result_range(fused, reference, label=str(settings.result_scale_label))
        result = evaluate_arrays(fused, inputs, settings)
        card = dict(result.get("protocol") or {})
        metrics = {k: float(v) for k, v in result.items() if k != "protocol"}
        maps = quality_maps(fused, reference, card) if (task.want_maps and reduced) else None
        return SceneOutcome(task.scene.name, task.method, "ok", metrics, card, None, maps,
                            _display(task, fused=fused, inputs=inputs))
    except DataError as exc:
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - isolate every failure to its scene
        reason = f"{type(exc).__name__}: {exc}"
    # a failed pair still shows the scene's references when it is the pair that makes them
    if tiled is not None:
        tiled = {k: v for k, v in tiled.items() if k != "fused"}
    return SceneOutcome(task.scene.name, task.method, "failed", {}, None, reason, None,
                        _display(task, inputs=inputs, tiled=tiled) if task.display_reference else None)


def _display(task: SceneTask, *, fused: np.ndarray | None = None, inputs: dict[str, np.ndarray] | None = None,
             tiled: dict[str, str] | None = None) -> Any:
    """The pair's display images when the task asks for them (see :mod:`.scene_display`)."""
    if not task.display:
        return None
    from .scene_display import display_from_arrays, display_from_files

    options = {"method": task.method, "settings": task.settings, "max_side": task.display,
               "references": task.display_reference, "scene": task.scene.name}
    if tiled is not None:
        return display_from_files(tiled, **options)
    if inputs is not None:
        return display_from_arrays(fused, inputs, **options)
    return None


def display_pair(task: SceneTask) -> Any:
    """Read one pair again and make its display images (for pairs reused by ``--resume``).

    Parameters
    ----------
    task : SceneTask
        With ``display`` > 0 (the longer side of the display images, pixels).

    Returns
    -------
    PairDisplay or str
        The display (:mod:`.scene_display`), or why it could not be made; never raises.
    """
    from pansharp_iqa.reports.display import DISPLAY_SIDE

    settings = task.settings
    if not task.display:
        task = dataclasses.replace(task, display=DISPLAY_SIDE)
    try:
        paths = tiled_paths(task)
        if paths is not None:
            return _display(task, tiled=paths)
        reduced = settings.resolution == "reduced"
        inputs = load_scene(task.scene, settings, ("gt",) if reduced else ("ms", "pan"))
        expected = inputs["gt"].shape if reduced else (*inputs["pan"].shape, inputs["ms"].shape[2])
        fused = load_result(task.result_file, expected, task.result_index) * float(settings.result_scale or 1.0)
    except Exception as exc:  # noqa: BLE001 - a display problem never fails the report
        return f"no display: {type(exc).__name__}: {exc}"
    return _display(task, fused=fused, inputs=inputs)

"""``pansharp-eval degrade FULL_DATASET --out REDUCED_DATASET``: the Wald protocol as a command.

The first step of a reduced-resolution benchmark on real scenes: every scene's MS is filtered
with the sensor's MTF and decimated by the ratio, its PAN is shrunk by the same ratio
(:func:`pansharp_iqa.wald_degrade`, toolbox 2020), and the original MS becomes the ground truth.
The result is a dataset folder that ``pansharp-eval evaluate`` and ``pansharp-eval baselines`` read
directly: ``<scene>_gt/_ms/_pan.npy`` (or one ``<scene>.npz``) in digital numbers, and a
``dataset.toml`` with ``resolution = "reduced"`` and the full-resolution dataset's sensor, ratio,
bits and band names.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.io.discovery import SceneSource
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.scenes import load_scene

from .errors import EXIT_FAILURES, EXIT_OK, UsageError
from .evaluate_command import dataset_scenes, settings_from_args
from .output_dir import atomic_file, create_folder
from .scene_eval import check_inputs

__all__ = ["degrade_scene", "reduced_toml", "run_degrade"]


def degrade_scene(ms: np.ndarray, pan: np.ndarray, settings: DatasetSettings) -> dict[str, np.ndarray]:
    """Wald-protocol arrays of one scene (``ms``, ``pan`` as their files declare them): ``gt`` (the MS; uint16
    when it holds integers that fit), ``ms`` and ``pan`` degraded by the ratio with the sensor's MTF (``band_names``
    select bands), float64; an :class:`~pansharp_iqa.InputError` for sizes or bands that do not fit."""
    from pansharp_iqa import wald_degrade

    ms_lr, pan_lr = wald_degrade(ms, pan, settings.resolved_sensor(), settings.ratio)
    gt = np.asarray(ms)
    if gt.size and gt.min() >= 0 and gt.max() <= np.iinfo(np.uint16).max and np.array_equal(gt, np.round(gt)):
        gt = gt.astype(np.uint16)  # the same values, a quarter of the disk
    return {"gt": gt, "ms": np.asarray(ms_lr, dtype=np.float64), "pan": np.asarray(pan_lr, dtype=np.float64)}


def _toml_value(value: Any) -> str:
    return json.dumps(value)  # JSON strings, numbers and string lists are valid TOML


def reduced_toml(settings: DatasetSettings, *, source: str) -> str:
    """``dataset.toml`` of the degraded dataset: the full-resolution dataset's sensor, ratio, bits, scale, band
    names, protocol and result scale, and its ``source``."""
    from pansharp_iqa import __version__

    lines = [
        f"# Written by `pansharp-eval degrade` (pansharp_iqa {__version__}) from the full-resolution dataset",
        f"# {source}: Wald protocol (toolbox 2020): each MS filtered with the sensor's MTF and decimated",
        "# by the ratio (ms), each PAN shrunk by the ratio with bicubic imresize (pan); the original MS is",
        "# the ground truth (gt). Values are in the full-resolution dataset's unit (scale).",
        f"name = {_toml_value(settings.name + '-reduced')}",
        'resolution = "reduced"',
        f"sensor = {_toml_value(settings.sensor)}",
        f"ratio = {int(settings.ratio)}",
        f"bits = {int(settings.bits or 0)}",  # degrade refuses a dataset without bits first
        f"scale = {_toml_value(s if (s := settings.input_scale_label) in ('dn', 'unit') else settings.input_scale)}",
    ]
    if settings.band_names is not None:
        lines.append(f"band_names = {_toml_value(list(settings.band_names))}")
    if settings.sources.get("protocol") != "default":
        lines.append(f"protocol = {_toml_value(settings.protocol)}")
    if settings.result_scale_label is not None:
        label = settings.result_scale_label
        lines.append(f"result_scale = {_toml_value(label if label in ('dn', 'unit') else settings.result_scale)}")
    lines.append(f"source = {_toml_value(source)}")
    return "\n".join(lines) + "\n"


def _write_scene(out: Path, scene: SceneSource, arrays: dict[str, np.ndarray], layout: str) -> None:
    """Write one scene's arrays (a system error names the file)."""
    if layout == "npz":
        with atomic_file(out / f"{scene.name}.npz") as handle:
            np.savez(handle, **arrays)  # type: ignore[arg-type]  # numpy stub: **kwds also match allow_pickle
        return
    for role, arr in arrays.items():
        with atomic_file(out / f"{scene.name}_{role}.npy") as handle:
            np.save(handle, arr)


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        raise UsageError(f"--out {out} already exists and is not empty; degrade never overwrites: "
                         "choose a new folder")


def run_degrade(ns: argparse.Namespace, argv: list[str]) -> int:
    """Write the reduced-resolution (Wald protocol) version of a full-resolution dataset."""
    settings = settings_from_args(ns)
    if settings.resolution != "full":
        raise UsageError(
            f"{ns.dataset} is declared resolution = {settings.resolution!r}; degrade takes a full-resolution "
            "dataset (MS and PAN at their native scales) and writes its reduced-resolution version"
        )
    if settings.bits is None:  # the reduced dataset's ground truth is held to it
        raise UsageError(f"degrade needs the bit depth of {ns.dataset} for the reduced dataset it writes: set bits "
                         "in dataset.toml or --bits")
    scenes, warnings = dataset_scenes(ns.dataset)
    out = Path(ns.out)
    _check_out(out)
    for w in warnings:
        print(f"pansharp-eval: warning: {w}", file=sys.stderr)
    # written next to OUT, renamed to OUT when complete: never a half-written dataset
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    create_folder(partial, what=f"--out {out}")
    try:
        written, failures = _degrade_all(scenes, settings, partial, ns.layout)
        for f in failures:
            print(f"FAILED {f}", file=sys.stderr)
        if not written:
            print("pansharp-eval: no scene could be degraded (reasons above); nothing was written", file=sys.stderr)
            return EXIT_FAILURES
        with atomic_file(partial / "dataset.toml", "w") as handle:
            handle.write(reduced_toml(settings, source=settings.root))
        if out.is_dir():
            out.rmdir()  # checked empty above
        os.replace(partial, out)
    finally:
        if partial.exists():
            shutil.rmtree(partial)
    print(f"pansharp-eval: wrote the reduced-resolution dataset {out} ({len(written)} of {len(scenes)} scene(s), "
          f"sensor {settings.sensor}, ratio {settings.ratio}); next: pansharp-eval baselines {out} --out METHODS, "
          f"then pansharp-eval evaluate {out} METHODS/*")
    if failures:
        print(f"pansharp-eval: {len(failures)} scene(s) failed (exit status 1)", file=sys.stderr)
    return EXIT_FAILURES if failures else EXIT_OK


def _degrade_all(scenes: list[SceneSource], settings: DatasetSettings, folder: Path,
                 layout: str) -> tuple[list[str], list[str]]:
    from tqdm import tqdm

    written: list[str] = []
    failures: list[str] = []
    for scene in tqdm(scenes, desc="degrade", unit="scene", disable=None):
        try:
            data = load_scene(scene, settings, ("ms", "pan"))
            check_inputs(settings, scene, data)
            arrays = degrade_scene(data["ms"], data["pan"], settings)
        except DataError as exc:
            failures.append(f"{scene.name}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - one scene's problem is that scene's failure
            failures.append(f"{scene.name}: {type(exc).__name__}: {exc}")
            continue
        _write_scene(folder, scene, arrays, layout)  # a full disk is the run's error, not the scene's
        written.append(scene.name)
    return written, failures

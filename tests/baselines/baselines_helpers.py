"""Helpers for the baselines tests: the shared real data and small synthetic scenes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from scipy import ndimage


def shared_data_dir() -> Path | None:
    """``$PANSHARP_SHARED_DATA`` (or its ``data`` subfolder), else ``../shared/data`` beside the
    repository, when it holds ``imgWV2.mat``; ``None`` otherwise (the tests that need it skip)."""
    env = os.environ.get("PANSHARP_SHARED_DATA")
    # the variable overrides (PANSHARP_SHARED_DATA=/nonexistent: as if the data were absent)
    default = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    candidates = [Path(env), Path(env) / "data"] if env else [default]
    for c in candidates:
        if (c / "imgWV2.mat").is_file():
            return c.resolve()
    return None


def scene(seed: int, h: int, w: int, bands: int, ratio: int) -> tuple[np.ndarray, np.ndarray]:
    """Smooth, bright 11-bit MS ``(h, w, bands)`` (uint16) and a PAN ``(ratio*h, ratio*w)`` (uint16)
    that shares its structure, with independent noise (no dark areas: MTF-GLP-HPM's ratio stays tame)."""
    rng = np.random.default_rng(seed)
    coarse = rng.random((h // 4 + 2, w // 4 + 2))
    field = ndimage.zoom(coarse, 4 * ratio, order=3)[: h * ratio, : w * ratio]
    pan = 500.0 + 600.0 * field + 15.0 * rng.normal(size=field.shape)
    low = field.reshape(h, ratio, w, ratio).mean(axis=(1, 3))
    ms = np.stack([400.0 + (500.0 + 40.0 * b) * low + 10.0 * rng.normal(size=low.shape) for b in range(bands)], axis=2)
    return np.clip(ms, 1, 2047).round().astype(np.uint16), np.clip(pan, 1, 2047).round().astype(np.uint16)


def write_dataset(folder: Path, scenes: dict[str, tuple[np.ndarray, np.ndarray]], **settings: object) -> Path:
    """A full-resolution dataset folder of ``<scene>_ms.npy`` / ``<scene>_pan.npy`` files."""
    folder.mkdir(parents=True)
    (folder / "dataset.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items()))
    for name, (ms, pan) in scenes.items():
        np.save(folder / f"{name}_ms.npy", ms)
        np.save(folder / f"{name}_pan.npy", pan)
    return folder

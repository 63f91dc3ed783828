"""Per-(scene, method) JSON files under ``OUT/scenes/``: provenance of each value and the
basis of ``--resume``.

Each file embeds the core's protocol card, the SHA-256 of every input file of the scene and of
the result file, and a key that hashes all of them with the settings and the library version: a
file is reused only when the key matches.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.reports.json_report import json_text, to_jsonable

from .output_dir import atomic_file
from .scene_eval import SceneOutcome

__all__ = ["cache_key", "load_cached", "store_outcome", "scene_file"]

_SETTING_KEYS = ("sensor", "ratio", "bits", "resolution", "protocol", "input_scale", "result_scale", "band_names")
#: Settings in the key only away from their default (the keys of earlier runs stay valid).
_OPTIONAL_KEYS = {"exponents": "unitary"}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def scene_file(out_dir: Path, method: str, scene: str) -> Path:
    """``OUT/scenes/<method>/<scene>.json``."""
    return out_dir / "scenes" / _safe(method) / f"{_safe(scene)}.json"


def cache_key(
    settings: DatasetSettings, scene: str, method: str, inputs_sha: dict[str, str], result_sha: str,
    result_index: int | None,
) -> str:
    """SHA-256 over everything that determines a (scene, method) result."""
    from pansharp_iqa import __version__

    payload = {
        "settings": {k: getattr(settings, k) for k in _SETTING_KEYS}
        | ({"indexes": list(settings.indexes)} if settings.indexes is not None else {})
        | {k: v for k, default in _OPTIONAL_KEYS.items() if (v := getattr(settings, k)) != default},
        "scene": scene,
        "method": method,
        "inputs": inputs_sha,
        "result": result_sha,
        "result_index": result_index,
        "version": __version__,
    }
    return hashlib.sha256(json.dumps(to_jsonable(payload), sort_keys=True).encode()).hexdigest()


def store_outcome(path: Path, outcome: SceneOutcome, *, key: str, provenance: dict[str, Any]) -> None:
    """Write one outcome, and its maps (if any) beside it as ``.maps.npz``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    maps_path = path.with_suffix(".maps.npz")
    if outcome.maps:
        with atomic_file(maps_path) as handle:
            np.savez(handle, **outcome.maps)  # type: ignore[arg-type]  # numpy stub: **kwds also match allow_pickle
    elif maps_path.is_file():
        maps_path.unlink()
    doc = {
        "key": key,
        "scene": outcome.scene,
        "method": outcome.method,
        "status": outcome.status,
        "metrics": outcome.metrics,
        "reason": outcome.reason,
        "protocol": outcome.protocol,
        "maps_note": outcome.maps_note,
        **provenance,
    }
    with atomic_file(path, "w") as handle:
        handle.write(json_text(doc))


def load_cached(path: Path, key: str, *, need_maps: bool) -> SceneOutcome | None:
    """The stored outcome when its key (:func:`cache_key`) matches and it succeeded, else ``None`` (failed outcomes
    are never reused: the files may have been fixed since); ``need_maps`` (``--plots`` at reduced resolution):
    reused only with its ``.maps.npz``, unless it says why it has none (a tile-wise evaluation).

    Examples
    --------
    >>> from pathlib import Path
    >>> load_cached(Path("no/such/record.json"), "0" * 64, need_maps=False) is None
    True
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if doc.get("key") != key or doc.get("status") != "ok":
        return None
    maps = None
    maps_path = path.with_suffix(".maps.npz")
    note = doc.get("maps_note")
    if need_maps and not note:
        if not maps_path.is_file():
            return None
        try:
            with np.load(maps_path) as data:
                maps = {k: np.asarray(data[k]) for k in data.files}
        except (OSError, ValueError):
            return None
    metrics = {k: (float("nan") if v is None else float(v)) for k, v in doc["metrics"].items()}
    return SceneOutcome(doc["scene"], doc["method"], "ok", metrics, doc.get("protocol"), None, maps,
                        maps_note=note if need_maps else None)

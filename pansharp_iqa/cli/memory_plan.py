"""In memory or tile by tile: the choice ``pansharp-eval --tiled auto`` makes for each scene.

Both paths give the same numbers (the tile-wise engine matches the in-memory indexes to 1e-9
relative or better, see ``docs/scale.md``); they differ in memory and time. The in-memory path
holds the whole scene as float64 plus the working arrays of the indexes, so its peak grows with the
scene; the tile-wise path's peak is set by the tile (a few hundred MB). ``auto`` evaluates a scene
tile-wise when

* its estimated in-memory peak exceeds :data:`MEMORY_FRACTION` of the memory available to each
  concurrent evaluation (``MemAvailable`` and control-group limits, divided by ``--jobs``), or
* it is large enough that the tile-wise path is also faster (:data:`TILED_FASTER_SAMPLES`:
  64 M pixels x bands at reduced resolution, 8 M at full resolution),

and every file of the scene can be read window by window (``.npy``, GeoTIFF with rasterio,
single-dataset ``.h5`` results). The constants were measured with ``benchmarks/bench_scale.py
--calibrate`` (peak RSS of ``pansharp-eval evaluate --tiled never`` per pixel and band of the fused
image, and the time of both paths, at 512^2 to 4096^2 x 8); the figures are in ``docs/scale.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

__all__ = [
    "IN_MEMORY_BASE_BYTES", "IN_MEMORY_BYTES_PER_SAMPLE", "MEMORY_FRACTION", "PathChoice",
    "TILED_FASTER_SAMPLES", "TILE_SIZE", "choose_path", "estimate_in_memory_bytes", "format_bytes", "path_summary",
]

#: Peak RSS of the in-memory path per pixel and band of the fused image (bytes, measured, rounded up).
IN_MEMORY_BYTES_PER_SAMPLE = {"reduced": 36, "full": 44}
#: Interpreter, NumPy, SciPy, OpenCV and the package (bytes).
IN_MEMORY_BASE_BYTES = 150 * 2**20
#: Share of the available memory one evaluation may plan to use in memory.
MEMORY_FRACTION = 0.5
#: Pixels x bands of the fused image from which tile-wise evaluation is also the faster path (measured).
TILED_FASTER_SAMPLES = {"reduced": 2**26, "full": 2**23}
#: Tile side (pixels) of tile-wise evaluations (measured against the engine's default 512: docs/cli.md).
TILE_SIZE = 384


@dataclasses.dataclass(frozen=True)
class PathChoice:
    """How one scene is evaluated, and why.

    Attributes
    ----------
    path : str
        ``"in-memory"`` or ``"tile-wise"``.
    why : str
        Short reason, the same for every scene that took the path for the same reason (used to
        group scenes in the terminal).
    estimate : int or None
        Estimated in-memory peak (bytes), when known.
    budget : int or None
        Memory one evaluation may use in memory (bytes), when known.
    detail : str or None
        Scene-specific detail (which file cannot be read window by window, and why).
    """

    path: str
    why: str
    estimate: int | None = None
    budget: int | None = None
    detail: str | None = None

    def to_card(self) -> dict[str, object]:
        """Entries recorded in the scene's card: ``evaluation_path``, ``evaluation_path_why`` and,
        when known, ``in_memory_estimate_bytes`` (the memory budget depends on the machine and the
        moment, so it is printed, not recorded: cards of equal inputs stay equal)."""
        card: dict[str, object] = {"evaluation_path": self.path, "evaluation_path_why": self.why}
        if self.estimate is not None:
            card["in_memory_estimate_bytes"] = int(self.estimate)
        if self.detail:
            card["evaluation_path_detail"] = self.detail
        return card


def format_bytes(n: int) -> str:
    """``1.5 GB`` / ``268 MB`` (powers of 1024).

    Examples
    --------
    >>> format_bytes(5_583_457_484), format_bytes(268 * 2**20)
    ('5.2 GB', '268 MB')
    """
    if n >= 2**30:
        return f"{n / 2**30:.1f} GB"
    return f"{n / 2**20:.0f} MB"


def estimate_in_memory_bytes(resolution: str, height: int, width: int, bands: int) -> int:
    """Estimated peak memory of evaluating one scene in memory (bytes).

    Parameters
    ----------
    resolution : {"reduced", "full"}
    height, width : int
        Size of the fused image (pixels, PAN scale).
    bands : int

    Returns
    -------
    int
        ``IN_MEMORY_BASE_BYTES + IN_MEMORY_BYTES_PER_SAMPLE[resolution] * height * width * bands``.

    Examples
    --------
    >>> round(estimate_in_memory_bytes("full", 4096, 4096, 8) / 2**30, 1)
    5.6
    """
    return IN_MEMORY_BASE_BYTES + IN_MEMORY_BYTES_PER_SAMPLE[resolution] * int(height) * int(width) * int(bands)


def choose_path(
    mode: str,
    *,
    resolution: str,
    shape: tuple[int, ...] | None,
    available: int | None,
    jobs: int = 1,
    not_windowed: tuple[str, str] | None = None,
) -> PathChoice:
    """Decide how a scene is evaluated.

    Parameters
    ----------
    mode : {"auto", "always", "never"}
        ``--tiled``.
    resolution : {"reduced", "full"}
    shape : (int, int, int) or None
        ``(H, W, B)`` of the fused image, when it could be read from the file headers.
    available : int or None
        Bytes of memory available (:func:`pansharp_iqa.io.memory.available_memory`).
    jobs : int
        Evaluations running at the same time (each gets its share of ``available``).
    not_windowed : (str, str), optional
        Some file of the scene cannot be read window by window (then only in memory): a short
        category (``".npz scenes"``) and the detail.

    Returns
    -------
    PathChoice

    Examples
    --------
    >>> choose_path("auto", resolution="full", shape=(4096, 4096, 8), available=8 * 2**30).path
    'tile-wise'
    >>> choose_path("auto", resolution="reduced", shape=(512, 512, 8), available=8 * 2**30).path
    'in-memory'
    >>> choose_path("auto", resolution="full", shape=(2048, 2048, 8), available=64 * 2**30).why
    'large enough that tile-wise is faster'
    """
    if mode == "never":
        return PathChoice("in-memory", "--tiled never")
    estimate = estimate_in_memory_bytes(resolution, *shape) if shape is not None else None
    budget = int(MEMORY_FRACTION * available / max(1, jobs)) if available is not None else None
    if not_windowed is not None:
        return PathChoice("in-memory", f"{not_windowed[0]} are read whole", estimate, budget, not_windowed[1])
    if mode == "always":
        return PathChoice("tile-wise", "--tiled always")
    assert shape is not None
    if budget is not None and estimate is not None and estimate > budget:
        return PathChoice("tile-wise", "in-memory estimate above the memory budget", estimate, budget)
    if budget is None and estimate is not None and estimate > 4 * 2**30:
        return PathChoice("tile-wise", "available memory unknown, in-memory estimate above 4 GB", estimate)
    if shape[0] * shape[1] * shape[2] >= TILED_FASTER_SAMPLES[resolution]:
        return PathChoice("tile-wise", "large enough that tile-wise is faster", estimate, budget)
    return PathChoice("in-memory", "fits in memory", estimate, budget)


def _names(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... (+{len(items) - limit} more)" if len(items) > limit else "")


def path_summary(outcomes: Sequence[Any]) -> list[str]:
    """Terminal lines saying which scenes were evaluated in memory and which tile-wise, and why.

    Parameters
    ----------
    outcomes : sequence of SceneOutcome
        Evaluated in this run (successful ones carry ``evaluation_path`` in their card and the
        memory budget in ``memory_budget``).

    Returns
    -------
    list of str
        One line per (path, reason), e.g. ``pansharp-eval: tile-wise: big (2 evaluations; in-memory
        estimate above the memory budget: up to 5.2 GB, budget 3.9 GB)``.

    Examples
    --------
    >>> from types import SimpleNamespace as O
    >>> card = {"evaluation_path": "in-memory", "evaluation_path_why": "fits in memory"}
    >>> path_summary([O(status="ok", scene="s1", protocol=card), O(status="ok", scene="s2", protocol=card)])
    ['pansharp-eval: in memory: s1, s2 (2 evaluations; fits in memory)']
    """
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for o in outcomes:
        card = o.protocol or {}
        if o.status != "ok" or "evaluation_path" not in card:
            continue
        key = (card["evaluation_path"], card.get("evaluation_path_why", ""))
        g = groups.setdefault(key, {"scenes": [], "n": 0, "estimate": None, "budget": None})
        g["n"] += 1
        if o.scene not in g["scenes"]:
            g["scenes"].append(o.scene)
        est, budget = card.get("in_memory_estimate_bytes"), getattr(o, "memory_budget", None)
        if est is not None:
            g["estimate"] = max(est, g["estimate"] or 0)
        if budget is not None:
            g["budget"] = budget if g["budget"] is None else min(budget, g["budget"])
    lines = []
    for (path, why), g in groups.items():
        figures = []
        if g["estimate"] is not None:  # a budget means nothing without an estimate to compare
            figures.append(f"in-memory estimate up to {format_bytes(g['estimate'])}")
            if g["budget"] is not None:
                figures.append(f"budget {format_bytes(g['budget'])}")
        detail = why + (f": {', '.join(figures)}" if figures else "")
        label = "in memory" if path == "in-memory" else path
        lines.append(f"pansharp-eval: {label}: {_names(g['scenes'])} ({g['n']} evaluation"
                     f"{'s' if g['n'] != 1 else ''}; {detail})")
    return lines

"""Tile planning: whether to go tile by tile (the one rule of ``tiled="auto"``), and a grid of tiles
aligned to the index block grid.

Both paths give the same numbers (1e-9 relative or better, ``docs/scale.md``); they differ in memory
and time. :func:`choose_path` evaluates a scene tile-wise when its estimated in-memory peak exceeds
:data:`MEMORY_FRACTION` of the memory available to each concurrent evaluation, or when it is large
enough that tiles are also faster (:data:`TILED_FASTER_SAMPLES`); the constants were measured with
``benchmarks/bench_scale.py --calibrate`` (figures in ``docs/scale.md``). ``evaluate`` applies it to
arrays, ``pansharp-eval`` to each scene.

Reduced resolution: the grid lives in the coordinates of the evaluated (border-cut) image, so it
starts after the 20 leading rows/columns and every tile boundary is a boundary of Q2n's 32x32
blocks. Full resolution: the grid starts at (0, 0) and tile sides are multiples of both the block
size and the ratio, so every tile holds whole 32x32 blocks at PAN scale and whole (32/ratio) blocks
at MS scale.
"""

from __future__ import annotations

import dataclasses
import math

from ..validation import InputError

__all__ = [
    "Tile", "plan_tiles", "effective_tile_size", "DEFAULT_TILE_SIZE", "PathChoice", "choose_path",
    "estimate_in_memory_bytes", "IN_MEMORY_BASE_BYTES", "IN_MEMORY_BYTES_PER_SAMPLE", "MEMORY_FRACTION",
    "TILED_FASTER_SAMPLES",
]

#: Default tile side (pixels at the fused image's scale): 512 keeps a worker well under 1 GB for
#: 8-band images while the halos (at most ~64 pixels a side) cost little.
DEFAULT_TILE_SIZE = 512
#: Peak RSS of the in-memory path per pixel and band of the fused image (bytes, measured, rounded up).
IN_MEMORY_BYTES_PER_SAMPLE = {"reduced": 36, "full": 44}
#: Interpreter, NumPy, SciPy, OpenCV and the package (bytes).
IN_MEMORY_BASE_BYTES = 150 * 2**20
#: Share of the available memory one evaluation may plan to use in memory.
MEMORY_FRACTION = 0.5
#: Pixels x bands of the fused image from which tile-wise evaluation is also the faster path (measured:
#: reduced 2896^2 x 8; full 2048^2 x 8, where both benchmarks of docs/performance.md agree).
TILED_FASTER_SAMPLES = {"reduced": 2**26, "full": 2**25}


@dataclasses.dataclass(frozen=True)
class PathChoice:
    """How one scene is evaluated, and why.

    Parameters
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


def estimate_in_memory_bytes(resolution: str, height: int, width: int, bands: int) -> int:
    """Estimated peak memory of evaluating one scene in memory (bytes)."""
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
        Bytes of memory available (``pansharp_iqa.io.memory.available_memory()``).
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


@dataclasses.dataclass(frozen=True)
class Tile:
    """One tile of the grid."""

    index: int
    rows: tuple[int, int]
    cols: tuple[int, int]

    @property
    def pixels(self) -> int:
        """Number of pixels of the tile."""
        return (self.rows[1] - self.rows[0]) * (self.cols[1] - self.cols[0])


def effective_tile_size(tile_size: object, multiple: int) -> int:
    """Round a requested tile side up to a multiple of ``multiple`` (the block grid)."""
    if isinstance(tile_size, bool) or not isinstance(tile_size, (int,)) and not (
        isinstance(tile_size, float) and tile_size.is_integer()
    ):
        raise InputError(f"tile_size must be a positive integer number of pixels, got {tile_size!r}")
    t = int(tile_size)
    if t < 1:
        raise InputError(f"tile_size must be a positive integer number of pixels, got {tile_size!r}")
    return multiple * math.ceil(t / multiple)


def plan_tiles(height: int, width: int, tile_size: int) -> list[Tile]:
    """Row-major grid of ``tile_size`` tiles over ``height x width`` (the last ones may be smaller)."""
    tiles: list[Tile] = []
    for r0 in range(0, height, tile_size):
        for c0 in range(0, width, tile_size):
            tiles.append(Tile(len(tiles), (r0, min(r0 + tile_size, height)), (c0, min(c0 + tile_size, width))))
    return tiles

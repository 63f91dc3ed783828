"""Per-tile partial results and their deterministic, exact reduction.

A tile returns a :class:`Partial`: named vectors of sums (each statistic's fields, :func:`add_fields`),
named maxima (for the whole-image range checks) and, when quality maps are asked for, its windows of
each map (:meth:`Partial.add_map`; the tile owns whole blocks of a block map). Partials are combined in tile order with
:func:`math.fsum` (correctly rounded sums), so the reduction does not depend on the order in which
tiles finish, on the executor, or on the number of workers; :func:`sums_of` returns the statistics' fields.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..indexes.catalog import Statistic

__all__ = ["Partial", "combine", "add_fields", "sums_of", "assemble"]


@dataclasses.dataclass
class Partial:
    """Sums and maxima of one tile."""

    sums: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    maxima: dict[str, float] = dataclasses.field(default_factory=dict)
    pixels: int = 0
    maps: dict[str, list[tuple[int, int, np.ndarray]]] = dataclasses.field(default_factory=dict)

    def add_map(self, key: str, row: int, col: int, values: np.ndarray) -> None:
        """Store the tile's window of a map whose first sample is at (``row``, ``col``) of the map."""
        self.maps.setdefault(key, []).append((int(row), int(col), np.asarray(values, dtype=np.float64)))

    def add(self, key: str, values: object) -> None:
        """Store a vector (or scalar) of sums under ``key`` (adding to one already there)."""
        v = np.atleast_1d(np.asarray(values, dtype=np.float64))
        self.sums[key] = self.sums[key] + v if key in self.sums else v

    def maximum(self, key: str, value: float) -> None:
        """Keep the larger of ``value`` and the stored maximum."""
        self.maxima[key] = max(self.maxima.get(key, -math.inf), float(value))


def _exact_sum(column: Sequence[float]) -> float:
    try:
        return math.fsum(column)
    except (ValueError, OverflowError):  # inf - inf, or overflow
        return float(np.sum(column))


def combine(partials: Sequence[Partial]) -> Partial:
    """Reduce partials (in the given order) to one."""
    out = Partial()
    keys: dict[str, int] = {}
    for p in partials:
        for k, v in p.sums.items():
            if keys.setdefault(k, v.size) != v.size:
                raise ValueError(f"partial {k!r} has inconsistent lengths across tiles")
    for k, n in keys.items():
        stack = np.stack([p.sums[k] for p in partials if k in p.sums])
        out.sums[k] = np.array([_exact_sum(stack[:, i].tolist()) for i in range(n)])
    for p in partials:
        for k, m in p.maxima.items():
            out.maximum(k, m)
        out.pixels += p.pixels
        for k, windows in p.maps.items():
            out.maps.setdefault(k, []).extend(windows)
    return out


def assemble(windows: Sequence[tuple[int, int, np.ndarray]], shape: tuple[int, int]) -> np.ndarray:
    """A whole map of ``shape`` from its windows (:meth:`Partial.add_map`)."""
    out = np.full(shape, np.nan)
    for r, c, values in windows:
        out[r : r + values.shape[0], c : c + values.shape[1]] = values
    return out


def add_fields(out: Partial, stat: Statistic, fields: dict[str, Any]) -> None:
    """Store a statistic's fields in a tile's partial result (``"<statistic>:<field>"`` vectors)."""
    for key, value in fields.items():
        out.add(f"{stat.name}:{key}", value)


def sums_of(total: Partial, statistics: Sequence[Statistic]) -> dict[str, dict[str, Any]]:
    """The combined tile sums as each statistic's merged fields (those no tile contributed: ``reduce([])``)."""
    out = {}
    for stat in statistics:
        keys = [f"{stat.name}:{k}" for k in stat.fields]
        if all(k in total.sums for k in keys):
            out[stat.name] = {f: float(total.sums[k][0]) if f in stat.scalars else total.sums[k]
                              for f, k in zip(stat.fields, keys, strict=True)}
        else:
            out[stat.name] = stat.reduce([])
    return out

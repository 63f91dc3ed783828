"""Tile-wise full-resolution indexes: the one full-resolution engine on each tile.

Tiles are aligned to the block grid at PAN scale and to the ratio. Each tile reads the input pixels
its images need (:meth:`~pansharp_iqa.indexes.full_pass.Scene.support`: the declared halos, border
rules applied by global position, so the tile's images equal the whole-image ones), adds its share
of each input's value summary and each statistic's chunk fields over its own blocks
(:meth:`~pansharp_iqa.indexes.full_pass.Scene.sums`, as in memory on the whole image); the fields
are added exactly across tiles (:mod:`.accumulate`) and finalized by the catalogue.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..indexes.catalog import ROLE_SCALES, ChunkContext, get_statistic
from ..indexes.full_pass import Scene
from ..io.windows import Source
from ..settings import FullSettings
from .accumulate import Partial, add_fields
from .facts import add_facts
from .patch import Patch, fetch
from .plan import Tile

__all__ = ["FullContext", "full_tile"]


@dataclasses.dataclass
class FullContext:
    """Everything a worker needs to process full-resolution tiles (picklable)."""

    sources: dict[str, Source]
    settings: FullSettings
    chunk: ChunkContext
    shape: tuple[int, int]


def full_tile(ctx: FullContext, tile: Tile) -> Partial:
    """Partial sums of one tile (see the module docstring)."""
    stats = ctx.settings.statistics()
    patches: dict[str, Patch] = {}
    scene = Scene(lambda role, rows, cols: patches[role].take(rows, cols), tuple(ROLE_SCALES), ctx.shape, ctx.chunk)
    needs: tuple[dict[str, list[np.ndarray]], dict[str, list[np.ndarray]]] = ({}, {})
    for name in ROLE_SCALES:  # the inputs' own pixels (their summaries), then what each statistic reads
        for axis, at in enumerate(scene.positions(name, tile.rows, tile.cols)):
            scene.support(name, at, axis, needs[axis])
    for stat in stats:
        for name, rows, cols in scene.reads(stat, tile.rows, tile.cols)[0].values():
            scene.support(name, rows, 0, needs[0])
            scene.support(name, cols, 1, needs[1])
    out = Partial(pixels=tile.pixels)
    for role, source in ctx.sources.items():
        patches[role], stats_read = fetch(source, needs[0][role], needs[1][role], scale=ctx.settings.scale_of(role))
        own_rows, own_cols = scene.positions(role, tile.rows, tile.cols)
        add_facts(out, role, source, patches[role], stats_read, own_rows, own_cols)
    if ctx.settings.threshold:
        np.clip(patches["fused"].data, 0.0, ctx.settings.clip_max, out=patches["fused"].data)
    for name, fields in scene.sums(stats, tile.rows, tile.cols).items():
        add_fields(out, get_statistic(name), fields)
    return out


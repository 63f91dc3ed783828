"""Tile-wise full-resolution indexes: the one full-resolution engine on each tile.

Tiles are aligned to the block grid at PAN scale and to the ratio. Each tile reads the input pixels
its images need (:meth:`~pansharp_iqa.indexes.full_pass.Scene.support`: the declared halos, border
rules applied by global position, so the tile's images equal the whole-image ones), adds its share
of each input's value summary and each statistic's chunk fields over its own blocks
(:meth:`~pansharp_iqa.indexes.full_pass.Scene.pass_over`, as in memory on the whole image); the
fields are added exactly across tiles (:mod:`.accumulate`) and finalized by the catalogue. A later
pass (statistics that read a global fit, maps composed from whole block maps: D_s_R, RQNR, HQNR)
runs over the same tiles with the fitted values in its context; each pass returns the tile's
windows of the maps it makes (:mod:`.maps`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..indexes.catalog import ROLE_SCALES, ChunkContext, get_index, get_statistic
from ..indexes.full_pass import Scene, map_images
from ..io.windows import Source
from ..settings import FullSettings
from .accumulate import Partial, add_fields
from .facts import add_facts
from .patch import Patch, fetch
from .plan import Tile

__all__ = ["FullContext", "full_tile"]


@dataclasses.dataclass
class FullContext:
    """Everything a worker needs to process full-resolution tiles of one pass (picklable): the statistics it
    computes, the indexes whose maps it makes, and whether it adds the inputs' value summaries (the first pass)."""

    sources: dict[str, Source]
    settings: FullSettings
    chunk: ChunkContext
    shape: tuple[int, int]
    statistics: tuple[str, ...] = ()
    maps: tuple[str, ...] = ()
    facts: bool = True


def full_tile(ctx: FullContext, tile: Tile) -> Partial:
    """Partial sums (and map windows) of one tile (see the module docstring)."""
    stats = [get_statistic(n) for n in ctx.statistics]
    specs = [get_index(n, ctx.settings.protocol.name) for n in ctx.maps]
    patches: dict[str, Patch] = {}
    roles = (*ROLE_SCALES, *(r for r in ctx.sources if r not in ROLE_SCALES))  # a given EXP ("exp") too
    scene = Scene(lambda role, rows, cols: patches[role].take(rows, cols), roles, ctx.shape, ctx.chunk)
    needs: tuple[dict[str, list[np.ndarray]], dict[str, list[np.ndarray]]] = ({}, {})
    own = ROLE_SCALES if ctx.facts else ()  # the inputs' own pixels (their summaries) and what the maps read,
    for name in (*own, *map_images(scene, specs)):  # then what each statistic reads (its halo included)
        for axis, at in enumerate(scene.positions(name, tile.rows, tile.cols)):
            scene.support(name, at, axis, needs[axis])
    for stat in stats:
        for name, rows, cols in scene.reads(stat, tile.rows, tile.cols)[0].values():
            scene.support(name, rows, 0, needs[0])
            scene.support(name, cols, 1, needs[1])
    out = Partial(pixels=tile.pixels)
    for role, source in ctx.sources.items():
        if role not in needs[0]:
            continue
        scale = ctx.settings.scale_of("ms_exp" if role == "exp" else role)
        patches[role], stats_read = fetch(source, needs[0][role], needs[1][role], scale=scale)
        if ctx.facts and role in ROLE_SCALES:
            own_rows, own_cols = scene.positions(role, tile.rows, tile.cols)
            add_facts(out, role, source, patches[role], stats_read, own_rows, own_cols)
    if ctx.settings.threshold and "fused" in patches:
        np.clip(patches["fused"].data, 0.0, ctx.settings.clip_max, out=patches["fused"].data)
    fields, maps = scene.pass_over(stats, tile.rows, tile.cols, maps=specs)
    for name, f in fields.items():
        add_fields(out, get_statistic(name), f)
    for name, values in maps.items():
        step = ctx.chunk.block_size if get_index(name).map.grid == "blocks" else 1  # type: ignore[union-attr]
        out.add_map(name, tile.rows[0] // step, tile.cols[0] // step, values)
    return out

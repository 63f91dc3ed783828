"""Tile-wise reduced-resolution indexes: Q2n, Q_avg, SAM, ERGAS, SCC.

Coordinates of a tile are those of the evaluated image ``I[20:H-21, 20:W-21]`` (``h x w``).
What each index needs around a tile (all read from the file, never invented):

* Q2n: whole 32x32 blocks of the tile; the last partial block row/column is completed by the
  bottom/right symmetric mirror of the evaluated image (:func:`~pansharp_iqa.borders.border_index`),
  then the core's uint16 cast and hypercomplex block values run on the tile.
* Q_avg: the tile owns the sliding windows whose top-left corner lies in it, so it reads 31 more
  rows and columns (the windows' overlap); per-band sums of the UIQI map are accumulated.
* SAM, ERGAS: per-pixel; sums of angles (and valid-pixel count), of squared errors and of the
  reference, per band.
* SCC: a 1-pixel halo for the 3x3 Sobel, zero outside the (interior-cropped) image as the core's
  zero padding; sums of ``Gf Gr``, ``Gf^2``, ``Gr^2``.
* The whole-image checks (finite values, reference range, [0, 1] float data) also cover the 20/21
  border rows and columns: each edge tile reads its share of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Set as AbstractSet

import numpy as np

from ..borders import border_index
from ..indexes.catalog import Statistic, chunk_map, get_index
from ..indexes.q2n import q2n_padded_positions
from ..indexes.strips import StripImage
from ..io.windows import Source
from ..settings import ReducedSettings
from .accumulate import Partial, add_fields
from .facts import add_facts
from .patch import fetch
from .plan import Tile

__all__ = ["ReducedContext", "reduced_tile", "TILE_SUPPORTS"]

#: The chunk supports a tile provides (see :data:`pansharp_iqa.indexes.catalog.SUPPORTS`).
TILE_SUPPORTS = ("pixels", "windows", "blocks", "sobel")


@dataclasses.dataclass
class ReducedContext:
    """Everything a worker needs to process reduced-resolution tiles (picklable)."""

    fused: Source
    reference: Source
    settings: ReducedSettings
    lead: int
    trail: int
    shape: tuple[int, int]
    maps: tuple[str, ...] = ()  # the indexes whose quality maps the tiles make

    @property
    def block_size(self) -> int:
        """Q2n block and Q window side."""
        return self.settings.protocol.block_size

    @property
    def toolbox_q2n(self) -> bool:
        """Whether Q2n follows the toolbox (its blocks mirror-extended as the toolbox does)."""
        return self.settings.chunk_context(self.gradient).toolbox_q2n

    @property
    def gradient(self) -> str:
        """SCC's gradient form."""
        return self.settings.protocol.scc_gradient

    @property
    def statistics(self) -> tuple[Statistic, ...]:
        """The chunk statistics of the requested indexes."""
        return self.settings.statistics()

    @property
    def cut_shape(self) -> tuple[int, int]:
        """Size of the evaluated (border-cut) image."""
        return (self.shape[0] - self.lead - self.trail, self.shape[1] - self.lead - self.trail)


def _check_range(lo: int, hi: int, n: int, lead: int, full: int) -> np.ndarray:
    """Full-image positions this tile owns for the value rules: its own, plus the border cut at the edges."""
    a = 0 if lo == 0 else lo + lead
    b = full if hi == n else hi + lead
    return np.arange(a, b)


def _needs(lo: int, hi: int, n: int, n_other: int, ctx: ReducedContext,
           supports: AbstractSet[str]) -> dict[str, np.ndarray | None]:
    """Evaluated-image positions (``-1`` = zero) each support reads along one axis."""
    bs = ctx.block_size
    out: dict[str, np.ndarray | None] = {}
    if "blocks" in supports:
        if ctx.toolbox_q2n:
            end = hi if hi < n else -(-n // bs) * bs
            out["blocks"] = border_index(np.arange(lo, end), n, "symmetric")
        else:  # the protocol's Q2n padding (its amounts swapped between the axes under symmetric-swapped)
            grid = q2n_padded_positions(n, n_other, bs, ctx.settings.protocol.q2n_padding)
            out["blocks"] = grid[lo:hi] if hi < n else grid[lo:]
    if "windows" in supports:
        q_hi = min(hi, n - bs + 1)
        out["windows"] = np.arange(lo, q_hi + bs - 1) if q_hi > lo else None
    if "pixels" in supports:
        out["pixels"] = np.arange(lo, hi)
    if "sobel" in supports and ctx.gradient == "magnitude":
        a, b = max(lo, 1), min(hi, n - 1)
        # interior image = rows 1..n-2; zero outside it
        idx = (border_index(np.arange(a - 2, b), n - 2, "constant") + 1) if b > a else None
        out["sobel"] = None if idx is None else np.where(idx > 0, idx, -1)
    elif "sobel" in supports:
        out["sobel"] = border_index(np.arange(lo - 1, hi + 1), n, "constant")
    return out


def _g(idx: np.ndarray, lead: int) -> np.ndarray:
    """Evaluated-image positions to full-image positions (``-1`` kept)."""
    return np.where(idx >= 0, idx + lead, -1)


def reduced_tile(ctx: ReducedContext, tile: Tile) -> Partial:
    """Partial sums of one tile (see the module docstring), from the catalogue's chunk functions."""
    h, w = ctx.cut_shape
    stats = ctx.statistics
    supports = {s.support for s in stats}
    rn, cn = _needs(*tile.rows, h, w, ctx, supports), _needs(*tile.cols, w, h, ctx, supports)
    own_rows = _check_range(*tile.rows, h, ctx.lead, ctx.shape[0])
    own_cols = _check_range(*tile.cols, w, ctx.lead, ctx.shape[1])
    row_sets, col_sets = [own_rows], [own_cols]
    for key, r_idx in rn.items():
        c_idx = cn[key]
        if r_idx is not None and c_idx is not None:
            row_sets.append(_g(r_idx, ctx.lead))
            col_sets.append(_g(c_idx, ctx.lead))
    fus_p, fus_stats = fetch(ctx.fused, row_sets, col_sets, scale=ctx.settings.scale_of("fused"))
    ref_p, ref_stats = fetch(ctx.reference, row_sets, col_sets, scale=ctx.settings.scale_of("reference"))
    out = Partial(pixels=tile.pixels)
    add_facts(out, "fused", ctx.fused, fus_p, fus_stats, own_rows, own_cols)
    add_facts(out, "reference", ctx.reference, ref_p, ref_stats, own_rows, own_cols)
    if ctx.settings.clip_max is not None:  # threshold= and the protocol's rr_fused_clip, as in memory
        np.clip(fus_p.data, 0.0, ctx.settings.clip_max, out=fus_p.data)

    chunk_ctx = ctx.settings.chunk_context(ctx.gradient, col_halo=True, maps=bool(ctx.maps))
    chunk_maps: dict[str, np.ndarray] = {}
    for key in rn:  # one support at a time: its view is released before the next one is taken
        if rn[key] is None or cn[key] is None:
            continue
        ri, ci = _g(rn[key], ctx.lead), _g(cn[key], ctx.lead)  # type: ignore[arg-type]
        ref, fus = ref_p.take(ri, ci), fus_p.take(ri, ci)  # band planes
        width = ref.shape[2]
        # blocks: the tile's rows/columns plus the mirror at the image's end, read as images
        view = ((StripImage(ref, bands_first=True), StripImage(fus, bands_first=True), 0, ref.shape[1])
                if key == "blocks" else (np.ascontiguousarray(ref), np.ascontiguousarray(fus)))
        del ref, fus
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            for stat in stats:
                if stat.support == key:
                    fields, chunk_maps[stat.name] = chunk_map(stat.chunk(*view, chunk_ctx), chunk_ctx, width)  # type: ignore[misc]
                    add_fields(out, stat, stat.reduce([fields]))
        del view
    for name in ctx.maps:
        spec = get_index(name, ctx.settings.protocol.name).map
        assert spec is not None and spec.chunk is not None
        step = ctx.block_size if spec.grid == "blocks" else 1
        out.add_map(name, tile.rows[0] // step, tile.cols[0] // step, spec.chunk(chunk_maps, chunk_ctx))
    return out

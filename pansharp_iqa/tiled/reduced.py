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

import numpy as np

from ..borders import border_index
from ..indexes.ergas import ergas_sums
from ..indexes.q2n import q2n_strip
from ..indexes.reduced_pass import ReducedSums
from ..indexes.sam import sam_sums
from ..indexes.scc import scc_sums
from ..indexes.strips import StripImage
from ..indexes.uiqi import q_window_sums
from ..settings import ReducedSettings
from .accumulate import Partial
from .facts import add_facts
from .patch import fetch
from .plan import Tile
from .sources import Source

__all__ = ["ReducedContext", "reduced_tile", "reduced_sums_of"]


@dataclasses.dataclass
class ReducedContext:
    """Everything a worker needs to process reduced-resolution tiles (picklable).

    Attributes
    ----------
    fused, reference : Source
    settings : ReducedSettings
    lead, trail : int
        Border cut (rows/columns removed before and after).
    shape : (int, int)
        Full image size (pixels).
    """

    fused: Source
    reference: Source
    settings: ReducedSettings
    lead: int
    trail: int
    shape: tuple[int, int]

    @property
    def block_size(self) -> int:
        """Q2n block and Q window side."""
        return self.settings.protocol.block_size

    @property
    def gradient(self) -> str:
        """SCC's gradient form."""
        return self.settings.protocol.scc_gradient

    @property
    def cut_shape(self) -> tuple[int, int]:
        """Size of the evaluated (border-cut) image."""
        return (self.shape[0] - self.lead - self.trail, self.shape[1] - self.lead - self.trail)


def _check_range(lo: int, hi: int, n: int, lead: int, full: int) -> np.ndarray:
    """Full-image positions this tile owns for the value rules: its own, plus the border cut at the edges."""
    a = 0 if lo == 0 else lo + lead
    b = full if hi == n else hi + lead
    return np.arange(a, b)


def _needs(lo: int, hi: int, n: int, ctx: ReducedContext) -> dict[str, np.ndarray | None]:
    """Evaluated-image positions (``-1`` = zero) each index reads along one axis."""
    bs = ctx.block_size
    out: dict[str, np.ndarray | None] = {}
    end = hi if hi < n else -(-n // bs) * bs
    out["q2n"] = border_index(np.arange(lo, end), n, "symmetric")
    q_hi = min(hi, n - bs + 1)
    out["q"] = np.arange(lo, q_hi + bs - 1) if q_hi > lo else None
    out["pix"] = np.arange(lo, hi)
    if ctx.gradient == "magnitude":
        a, b = max(lo, 1), min(hi, n - 1)
        # interior image = rows 1..n-2; zero outside it
        out["scc"] = (border_index(np.arange(a - 2, b), n - 2, "constant") + 1) if b > a else None
        out["scc"] = None if out["scc"] is None else np.where(out["scc"] > 0, out["scc"], -1)
    else:
        out["scc"] = border_index(np.arange(lo - 1, hi + 1), n, "constant")
    return out


def _g(idx: np.ndarray, lead: int) -> np.ndarray:
    """Evaluated-image positions to full-image positions (``-1`` kept)."""
    return np.where(idx >= 0, idx + lead, -1)


def _planes(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(2, 0, 1))


def reduced_tile(ctx: ReducedContext, tile: Tile) -> Partial:
    """Partial sums of one tile (see the module docstring), from the indexes' own chunk functions.

    Parameters
    ----------
    ctx : ReducedContext
    tile : Tile
        In evaluated-image coordinates.

    Returns
    -------
    Partial
    """
    h, w = ctx.cut_shape
    rn, cn = _needs(*tile.rows, h, ctx), _needs(*tile.cols, w, ctx)
    own_rows = _check_range(*tile.rows, h, ctx.lead, ctx.shape[0])
    own_cols = _check_range(*tile.cols, w, ctx.lead, ctx.shape[1])
    row_sets, col_sets = [own_rows], [own_cols]
    for key in rn:
        if rn[key] is not None and cn[key] is not None:
            row_sets.append(_g(rn[key], ctx.lead))
            col_sets.append(_g(cn[key], ctx.lead))
    scale = ctx.settings.scale
    fus_p, fus_stats = fetch(ctx.fused, row_sets, col_sets, scale=scale)
    ref_p, ref_stats = fetch(ctx.reference, row_sets, col_sets, scale=scale)
    out = Partial(pixels=tile.pixels)
    add_facts(out, "fused", ctx.fused, fus_p, fus_stats, own_rows, own_cols)
    add_facts(out, "reference", ctx.reference, ref_p, ref_stats, own_rows, own_cols)
    if ctx.settings.threshold:
        np.clip(fus_p.data, 0.0, ctx.settings.clip_max, out=fus_p.data)

    def both(key: str) -> tuple[np.ndarray, np.ndarray]:
        ri, ci = _g(rn[key], ctx.lead), _g(cn[key], ctx.lead)  # type: ignore[arg-type]
        return ref_p.take(ri, ci), fus_p.take(ri, ci)

    bs = ctx.block_size
    ref, fus = both("q2n")  # whole blocks: the tile's rows/columns plus the mirror at the image's end
    blocks = q2n_strip(StripImage(ref), StripImage(fus), 0, ref.shape[0], bs)
    out.add("q2n", [blocks.sum(), blocks.size])

    if rn["q"] is not None and cn["q"] is not None:
        ref, fus = both("q")
        out.add("q_sum", q_window_sums(_planes(ref), _planes(fus), bs))
        out.add("q_count", (ref.shape[0] - bs + 1) * (ref.shape[1] - bs + 1))

    ref, fus = both("pix")
    rp, fp = _planes(ref), _planes(fus)
    angle_sum, n_valid, n_pix = sam_sums(rp, fp)
    out.add("sam", [angle_sum, n_valid, n_pix])  # radians
    sse, tot = ergas_sums(rp, fp)
    out.add("ergas_sse", sse)
    out.add("ergas_ref", tot)
    out.add("ergas_n", n_pix)

    if rn["scc"] is not None and cn["scc"] is not None:
        ref, fus = both("scc")
        out.add("scc", scc_sums(_planes(ref), _planes(fus), gradient=ctx.gradient, col_halo=True))  # type: ignore[arg-type]
    return out


def reduced_sums_of(total: Partial) -> ReducedSums:
    """The combined tile sums as the in-memory pass's :class:`ReducedSums` (one finalize for both).

    Parameters
    ----------
    total : Partial
        :func:`~pansharp_iqa.tiled.accumulate.combine` of every tile.

    Returns
    -------
    ReducedSums
    """
    s = total.sums
    return ReducedSums(
        q2n_sum=float(s["q2n"][0]), q2n_count=int(s["q2n"][1]),
        q_sums=s["q_sum"], q_count=int(s["q_count"][0]),
        sam_sum=float(s["sam"][0]), sam_valid=int(s["sam"][1]), sam_pixels=int(s["sam"][2]),
        ergas_sse=s["ergas_sse"], ergas_ref=s["ergas_ref"], ergas_n=int(s["ergas_n"][0]),
        scc=np.asarray(s.get("scc", np.zeros(3)), dtype=np.float64),
    )

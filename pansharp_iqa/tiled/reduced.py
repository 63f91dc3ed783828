"""Tile-wise reduced-resolution indexes: Q2n, Q_avg, SAM, ERGAS, SCC.

Coordinates of a tile are those of the evaluated image ``I[20:H-21, 20:W-21]`` (``h x w``).
What each index needs around a tile (all read from the file, never invented):

* Q2n: whole 32x32 blocks of the tile; the last partial block row/column is completed by the
  bottom/right symmetric mirror of the evaluated image (:func:`~pansharp_iqa.tiled.borders.symmetric`),
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

from ..indexes.ergas import ergas_value
from ..indexes.q2n import _q2n_core
from ..indexes.reduced_pass import ReducedSums, StripImage, reduced_sums
from ..indexes.sam import sam_degrees
from ..indexes.scc import _SOBEL, _filter_zero, scc_value, sobel_magnitude
from ..indexes.uiqi import q_avg, uiqi_map
from .accumulate import Partial
from .borders import constant, symmetric
from .patch import fetch
from .plan import Tile
from .sources import Source

__all__ = ["ReducedContext", "reduced_tile", "reduced_values"]


@dataclasses.dataclass
class ReducedContext:
    """Everything a worker needs to process reduced-resolution tiles (picklable).

    Attributes
    ----------
    fused, reference : Source
    ratio : int
    bits : int
    scale : float
    threshold : bool
    lead, trail : int
        Border cut (rows/columns removed before and after).
    block_size : int
    scc_variant : str
    shape : (int, int)
        Full image size (pixels).
    """

    fused: Source
    reference: Source
    ratio: int
    bits: int
    scale: float
    threshold: bool
    lead: int
    trail: int
    block_size: int
    scc_variant: str
    shape: tuple[int, int]

    @property
    def cut_shape(self) -> tuple[int, int]:
        """Size of the evaluated (border-cut) image."""
        return (self.shape[0] - self.lead - self.trail, self.shape[1] - self.lead - self.trail)


def _check_range(lo: int, hi: int, n: int, lead: int, full: int) -> np.ndarray:
    """Full-image positions this tile validates: its own, plus the border cut at the edges."""
    a = 0 if lo == 0 else lo + lead
    b = full if hi == n else hi + lead
    return np.arange(a, b)


def _needs(lo: int, hi: int, n: int, ctx: ReducedContext) -> dict[str, np.ndarray | None]:
    """Evaluated-image positions (``-1`` = zero) each index reads along one axis."""
    bs = ctx.block_size
    out: dict[str, np.ndarray | None] = {}
    end = hi if hi < n else -(-n // bs) * bs
    out["q2n"] = symmetric(np.arange(lo, end), n)
    q_hi = min(hi, n - bs + 1)
    out["q"] = np.arange(lo, q_hi + bs - 1) if q_hi > lo else None
    out["pix"] = np.arange(lo, hi)
    if ctx.scc_variant == "2020":
        a, b = max(lo, 1), min(hi, n - 1)
        # interior image = rows 1..n-2; zero outside it
        out["scc"] = (constant(np.arange(a - 2, b), n - 2) + 1) if b > a else None
        out["scc"] = None if out["scc"] is None else np.where(out["scc"] > 0, out["scc"], -1)
    else:
        out["scc"] = constant(np.arange(lo - 1, hi + 1), n)
    return out


def _g(idx: np.ndarray, lead: int) -> np.ndarray:
    """Evaluated-image positions to full-image positions (``-1`` kept)."""
    return np.where(idx >= 0, idx + lead, -1)


def reduced_tile(ctx: ReducedContext, tile: Tile) -> Partial:
    """Partial sums of one tile (see the module docstring).

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
    row_sets = [_check_range(*tile.rows, h, ctx.lead, ctx.shape[0])]
    col_sets = [_check_range(*tile.cols, w, ctx.lead, ctx.shape[1])]
    for key in rn:
        if rn[key] is not None and cn[key] is not None:
            row_sets.append(_g(rn[key], ctx.lead))
            col_sets.append(_g(cn[key], ctx.lead))
    fus_p, fus_stats = fetch(ctx.fused, row_sets, col_sets, scale=ctx.scale)
    ref_p, ref_stats = fetch(ctx.reference, row_sets, col_sets, scale=ctx.scale)
    out = Partial(pixels=tile.pixels)
    out.maximum("fused_maxabs", fus_stats["maxabs"])
    out.maximum("reference_maxabs", ref_stats["maxabs"])
    out.maximum("reference_max", ref_stats["max"])
    if ctx.threshold:
        np.clip(fus_p.data, 0.0, float(2**ctx.bits), out=fus_p.data)

    def both(key: str) -> tuple[np.ndarray, np.ndarray]:
        ri, ci = _g(rn[key], ctx.lead), _g(cn[key], ctx.lead)  # type: ignore[arg-type]
        return ref_p.take(ri, ci), fus_p.take(ri, ci)

    bs = ctx.block_size
    ref, fus = both("q2n")
    _, qmap = _q2n_core(ref, fus, bs, bs, True)
    out.add("q2n", [qmap.sum(), qmap.size])

    if rn["q"] is not None and cn["q"] is not None:
        ref, fus = both("q")
        maps = [uiqi_map(ref[:, :, b], fus[:, :, b], bs) for b in range(ref.shape[2])]
        out.add("q_sum", [m.sum() for m in maps])
        out.add("q_count", maps[0].size)

    ref, fus = both("pix")  # the in-memory pass's SAM/ERGAS sums of the tile's own pixels
    pix = reduced_sums(StripImage(ref), StripImage(fus), indexes={"SAM", "ERGAS"})
    out.add("sam", [pix.sam_sum, pix.sam_count])  # radians
    out.add("ergas_sse", pix.ergas_sse)
    out.add("ergas_ref", pix.ergas_ref)
    out.add("ergas_n", pix.ergas_n)

    if rn["scc"] is not None and cn["scc"] is not None:
        ref, fus = both("scc")
        if ctx.scc_variant == "2020":
            gf, gr = sobel_magnitude(fus), sobel_magnitude(ref)
        else:
            gf = _filter_zero(fus, _SOBEL).reshape(fus.shape)
            gr = _filter_zero(ref, _SOBEL).reshape(ref.shape)
        gf, gr = gf[1:-1, 1:-1], gr[1:-1, 1:-1]
        # einsum, not BLAS vdot: a thread-count-independent sum (identical on every executor)
        out.add("scc", [np.einsum("ijk,ijk->", gf, gr), np.einsum("ijk,ijk->", gf, gf),
                        np.einsum("ijk,ijk->", gr, gr)])
    return out


def reduced_values(total: Partial, ratio: int) -> dict[str, float]:
    """The five RR indexes from the combined sums.

    Parameters
    ----------
    total : Partial
        :func:`~pansharp_iqa.tiled.accumulate.combine` of every tile.
    ratio : int
        For ERGAS.

    Returns
    -------
    dict
        ``Q2n``, ``Q``, ``SAM`` (degrees), ``ERGAS``, ``SCC``.

    Raises
    ------
    InputError
        As the in-memory indexes: zero-mean reference band (ERGAS), flat images (SCC).
    """
    s = total.sums
    q2n_sum, q2n_n = s["q2n"]
    sums = ReducedSums(
        q_sums=s["q_sum"], q_count=int(s["q_count"][0]),
        sam_sum=float(s["sam"][0]), sam_count=int(s["sam"][1]),
        ergas_sse=s["ergas_sse"], ergas_ref=s["ergas_ref"], ergas_n=int(s["ergas_n"][0]),
        scc=np.asarray(s["scc"], dtype=np.float64),
    )
    return {
        "Q2n": float(q2n_sum / q2n_n),
        "Q": q_avg(sums),
        "SAM": sam_degrees(sums),
        "ERGAS": ergas_value(sums, float(ratio)),
        "SCC": scc_value(sums),
    }

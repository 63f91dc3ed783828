"""Tile-wise ``reprojected2022`` (Scarpa & Ciotola 2022): two passes over the tiles.

The in-memory protocol (:mod:`pansharp_iqa.reprojected`) needs one global decision before its
indexes: the per-band decimation phase, the argmax over 4 x 4 phases of a **global mean** of a
local correlation field. Tile-wise this is two passes of the same tile grid (PAN scale, sides
multiples of ``32 * ratio``, so every tile holds whole 32 x 32 MS-scale Q2n blocks):

1. **Coregistration** (:func:`coreg_tile`): per tile, the MS window plus a ``2 w`` halo
   (``w = max(1, ratio // 2)``; cut at the image edges, where the field's own zero padding then
   applies exactly as in memory) and the PAN window that covers it plus the 20-pixel halo of the
   41 x 41 band-0 kernel (replicate border); the tile returns, per phase and band, the sum of the
   correlation field over its own MS pixels. Combined (exact ``fsum``) and divided by ``h w``
   these are the in-memory means; the shifts are their argmax (first on ties).
2. **Indexes** (:func:`index_tile`), with the shifts: the reprojected image ``x`` is computed on the
   MS positions the tile needs (its own, the 31 extra rows/columns of R-Q's sliding windows with
   the edge row repeated, Q2n's reflect-padded last block row/column) from fused windows with the
   20-pixel replicate halo; sums returned: Q2n block moduli, per-band sums of the R-Q map, spectral
   angles, squared errors and MS values (R-ERGAS), and per-band sums of ``1 - rho`` for D_rho
   (fused and PAN windows with a ``2 ceil(ratio/2)`` halo, cut at the image edges).

The upper clip of the correlation sums by "their own maximum" (a no-op unless that maximum is
below 1e-20) is global: tiles report their maxima, and in the degenerate case (an all-zero image)
the pass is run again with the global maxima (a third pass).

Numbers equal the in-memory ones to rounding (integral images and cumulative window sums start at
the tile, not at the image origin; OpenCV's DFT filter has another size): measured <= 1e-14
relative, R-SAM <= 2e-12. Exactly constant areas are the exception (see ``docs/scale.md``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..borders import border_index, consecutive_runs
from ..indexes.ergas import ergas_from_sums, ergas_sums
from ..indexes.q2n import REPROJECTED_STD_FLOOR, q2n_block_grid, q2n_grid, to_int16_truncated
from ..indexes.sam import sam_from_sums, sam_sums
from ..indexes.uiqi import q_from_sums, q_window_sums
from ..io.windows import Source
from ..mtf import filter_replicate
from ..reprojected.coregistration import shifts_from_correlations
from ..reprojected.correlation import SXX_FLOOR, box_sum, centre_and_energy, clip_sums, one_minus_rho_sum, rho_from_sums
from ..reprojected.kernels import KERNEL_SIZE
from ..settings import FullSettings
from .accumulate import Partial
from .facts import add_facts
from .patch import Patch, fetch
from .plan import Tile

__all__ = [
    "ReprojectedContext", "coreg_tile", "index_tile", "index_positions", "kernel_support", "reprojected_at",
    "KERNEL_HALO",
]

#: Halo of the 41 x 41 reprojection kernels (PAN pixels).
KERNEL_HALO = KERNEL_SIZE // 2


@dataclasses.dataclass
class ReprojectedContext:
    """Everything a worker needs for either pass (picklable)."""

    fused: Source
    ms: Source
    pan: Source
    ratio: int
    bits: int
    scales: tuple[float, ...]  # fused, ms, pan: each role's declared multiplier to DN
    threshold: bool
    kernels: np.ndarray
    shape: tuple[int, int]
    search_window: int
    coreg_half_width: int
    drho_half_width: int
    block_size: int = 32
    shifts: tuple[tuple[int, int], ...] | None = None
    coreg_tops: tuple[float, tuple[float, ...]] | None = None
    drho_tops: tuple[float, float] | None = None

    @property
    def shape_lr(self) -> tuple[int, int]:
        """MS-scale size (samples)."""
        return (self.shape[0] // self.ratio, self.shape[1] // self.ratio)

    @property
    def n_bands(self) -> int:
        """Number of bands."""
        return int(self.kernels.shape[2])


def _ms_range(tile: Tile, ratio: int) -> tuple[int, int, int, int]:
    return tile.rows[0] // ratio, tile.rows[1] // ratio, tile.cols[0] // ratio, tile.cols[1] // ratio


def kernel_support(lo: int, hi: int, ratio: int, n_high: int) -> np.ndarray:
    """PAN positions (replicate border) whose filtered values at MS samples ``[lo, hi)`` need,
    for any phase ``0..ratio-1``."""
    return border_index(np.arange(lo * ratio - KERNEL_HALO, hi * ratio + KERNEL_HALO), n_high, "replicate")


# --------------------------------------------------------------------------- pass 1: coregistration


def coreg_tile(ctx: ReprojectedContext, tile: Tile) -> Partial:
    """Sums of the coregistration's correlation field over the tile's own MS pixels."""
    r = ctx.ratio
    big_h, big_w = ctx.shape
    h, w = ctx.shape_lr
    a, b, c, d = _ms_range(tile, r)
    hw = ctx.coreg_half_width
    # window: own samples plus 2 hw (what one correlation value reads), cut at the image edges
    ka, kb = max(0, a - 2 * hw), min(h, b + 2 * hw)
    la, lb = max(0, c - 2 * hw), min(w, d + 2 * hw)
    rows_k, cols_l = np.arange(ka, kb), np.arange(la, lb)
    ms_p, m_stats = fetch(ctx.ms, [rows_k], [cols_l], scale=ctx.scales[1])
    prow, pcol = kernel_support(ka, kb, r, big_h), kernel_support(la, lb, r, big_w)
    pan_p, p_stats = fetch(ctx.pan, [prow], [pcol], scale=ctx.scales[2])
    out = Partial(pixels=tile.pixels)
    add_facts(out, "ms", ctx.ms, ms_p, m_stats, np.arange(a, b), np.arange(c, d))
    add_facts(out, "pan", ctx.pan, pan_p, p_stats, np.arange(a * r, b * r), np.arange(c * r, d * r))

    k = KERNEL_HALO
    nr, nc = kb - ka, lb - la
    pan_lp = filter_replicate(pan_p.take(prow, pcol)[0], ctx.kernels[:, :, 0])
    pan_lp = pan_lp[k : k + nr * r, k : k + nc * r]  # PAN rows [ka*r, kb*r)

    xs = np.ascontiguousarray(ms_p.take(rows_k, cols_l))  # (B, nr, nc)
    own = (slice(None), slice(a - ka, b - ka), slice(c - la, d - la))
    xc, sxx = centre_and_energy(xs, hw)
    out.maximum("coreg_sxx_max", float(sxx[own].max()))
    tops = ctx.coreg_tops
    clip_sums(sxx, math.inf if tops is None else tops[0])
    sw = ctx.search_window
    sums = np.empty((sw * sw, ctx.n_bands))
    prod = np.empty_like(xc)
    for p in range(sw * sw):
        i, j = divmod(p, sw)
        phase = pan_lp[i::r, j::r][:nr, :nc]
        yc, syy = centre_and_energy(phase[None], hw)
        out.maximum(f"coreg_syy_max:{p}", float(syy[own].max()))
        clip_sums(syy, math.inf if tops is None else tops[1][p])
        np.multiply(xc, yc, out=prod)
        sxy = box_sum(prod, hw)
        rho = rho_from_sums(sxy, sxx, syy)
        sums[p] = rho[own].sum(axis=(1, 2))
    out.add("coreg_rho", sums.ravel())
    return out


def coreg_tops_needed(total: Partial, search_window: int) -> tuple[float, tuple[float, ...]] | None:
    """The global maxima when one of them is below 1e-20 (upper clip active), else None."""
    sxx = total.maxima["coreg_sxx_max"]
    syy = tuple(total.maxima[f"coreg_syy_max:{p}"] for p in range(search_window * search_window))
    if sxx < SXX_FLOOR or min(syy) < SXX_FLOOR:
        return (sxx, syy)
    return None


def coreg_result(total: Partial, ctx: ReprojectedContext) -> tuple[np.ndarray, np.ndarray]:
    """Mean correlations ``(S, S, B)`` and the shifts ``(B, 2)`` from the combined sums."""
    h, w = ctx.shape_lr
    sw = ctx.search_window
    rho = total.sums["coreg_rho"].reshape(sw, sw, ctx.n_bands) / float(h * w)
    return rho, shifts_from_correlations(rho)


# --------------------------------------------------------------------------- pass 2: the indexes


@dataclasses.dataclass(frozen=True)
class AxisPlan:
    """MS-scale positions one tile needs along one axis."""

    own: np.ndarray
    rq: np.ndarray
    rq_windows: int
    q2n: np.ndarray
    q2n_padded: bool

    def union(self) -> np.ndarray:
        """Sorted unique positions of all three sets."""
        return np.unique(np.concatenate([self.own, self.rq, self.q2n]))


def _axis_plan(lo: int, hi: int, n: int, bs: int, est: int, padded: bool) -> AxisPlan:
    own = np.arange(lo, hi)
    # R-Q map: n - bs + 2 window positions; window k reads rows k..k+bs-1 of the image with its
    # edge row repeated once (row n = row n-1)
    rq_hi = min(hi, n - bs + 2)
    if rq_hi > lo:
        rq = border_index(np.arange(lo, rq_hi + bs - 1), n, "replicate")
    else:
        rq = np.zeros(0, dtype=np.int64)
    # Q2n: the tile's block rows; the last tile also holds the padded rows when the protocol pads
    end = hi if hi < n or not padded else n + est
    q2n = border_index(np.arange(lo, end), n, "reflect") if padded else np.arange(lo, end)
    return AxisPlan(own, rq, max(0, rq_hi - lo), q2n, padded)


def index_positions(ctx: ReprojectedContext, tile: Tile) -> tuple[AxisPlan, AxisPlan]:
    """MS-scale row and column plans of a tile (pass 2)."""
    h, w = ctx.shape_lr
    a, b, c, d = _ms_range(tile, ctx.ratio)
    bs = ctx.block_size
    _, _, est1, est2 = q2n_grid(h, w, bs, bs)
    padded = est1 != 0 and est2 != 0
    return _axis_plan(a, b, h, bs, est1, padded), _axis_plan(c, d, w, bs, est2, padded)


def reprojected_at(ctx: ReprojectedContext, fus: Patch, rows: np.ndarray, cols: np.ndarray) -> Patch:
    """The reprojected image ``x`` (MS scale) at sorted unique positions, from fused windows."""
    r = ctx.ratio
    big_h, big_w = ctx.shape
    k = KERNEL_HALO
    shifts = ctx.shifts
    assert shifts is not None
    data = np.empty((ctx.n_bands, rows.size, cols.size))
    pos_r = 0
    for r0, r1 in consecutive_runs(rows):
        pr = kernel_support(r0, r1, r, big_h)
        pos_c = 0
        for c0, c1 in consecutive_runs(cols):
            pc = kernel_support(c0, c1, r, big_w)
            planes = fus.take(pr, pc)
            dst = np.empty(planes.shape[1:])
            for band in range(ctx.n_bands):
                filt = filter_replicate(planes[band], ctx.kernels[:, :, band], out=dst)
                sr, sc = shifts[band]
                dec = filt[k + sr :: r, k + sc :: r][: r1 - r0, : c1 - c0]
                data[band, pos_r : pos_r + r1 - r0, pos_c : pos_c + c1 - c0] = dec
            pos_c += c1 - c0
        pos_r += r1 - r0
    return Patch(rows, cols, data)


def _d_rho_sums(ctx: ReprojectedContext, fus: Patch, pan: Patch, tile: Tile, out: Partial) -> None:
    """Per-band sums of ``1 - clip(rho, -1, 1)`` over the tile's own PAN pixels."""
    big_h, big_w = ctx.shape
    hw = ctx.drho_half_width
    (r0, r1), (c0, c1) = tile.rows, tile.cols
    wr0, wr1 = max(0, r0 - 2 * hw), min(big_h, r1 + 2 * hw)
    wc0, wc1 = max(0, c0 - 2 * hw), min(big_w, c1 + 2 * hw)
    rows, cols = np.arange(wr0, wr1), np.arange(wc0, wc1)
    own = (slice(None), slice(r0 - wr0, r1 - wr0), slice(c0 - wc0, c1 - wc0))
    area = float(4 * hw * hw)
    y = np.ascontiguousarray(pan.take(rows, cols))
    yc, syy = centre_and_energy(y, hw)
    out.maximum("drho_syy_max", float(syy[own].max()))
    tops = ctx.drho_tops
    clip_sums(syy, math.inf if tops is None else tops[1])
    syy_own = np.ascontiguousarray(syy[own])
    planes = np.ascontiguousarray(fus.take(rows, cols))
    sums = np.empty(ctx.n_bands)
    for band in range(ctx.n_bands):
        xb = planes[band : band + 1]
        s = box_sum(xb, hw)
        s /= area
        xc = xb - s
        sxx = box_sum(xc * xc, hw)
        sxy = box_sum(xc * yc, hw)
        sxx_own = np.ascontiguousarray(sxx[own])
        out.maximum("drho_sxx_max", float(sxx_own.max()))
        sums[band] = one_minus_rho_sum(np.ascontiguousarray(sxy[own]), sxx_own, syy_own,
                                       None if tops is None else tops[0])
    out.add("drho", sums)


def index_tile(ctx: ReprojectedContext, tile: Tile) -> Partial:
    """Sums of every index over one tile, with the coregistration's shifts (pass 2)."""
    r = ctx.ratio
    big_h, big_w = ctx.shape
    bs = ctx.block_size
    prow, pcol = index_positions(ctx, tile)
    rows, cols = prow.union(), pcol.union()
    hw = ctx.drho_half_width
    (r0, r1), (c0, c1) = tile.rows, tile.cols
    d_rows = np.arange(max(0, r0 - 2 * hw), min(big_h, r1 + 2 * hw))
    d_cols = np.arange(max(0, c0 - 2 * hw), min(big_w, c1 + 2 * hw))
    f_rows = [kernel_support(a, b, r, big_h) for a, b in consecutive_runs(rows)] + [d_rows]
    f_cols = [kernel_support(a, b, r, big_w) for a, b in consecutive_runs(cols)] + [d_cols]

    fus_p, f_stats = fetch(ctx.fused, f_rows, f_cols, scale=ctx.scales[0])
    ms_p, _ = fetch(ctx.ms, [rows], [cols], scale=ctx.scales[1])
    pan_p, _ = fetch(ctx.pan, [d_rows], [d_cols], scale=ctx.scales[2])
    out = Partial(pixels=tile.pixels)
    add_facts(out, "fused", ctx.fused, fus_p, f_stats, np.arange(r0, r1), np.arange(c0, c1))
    if ctx.threshold:
        np.clip(fus_p.data, 0.0, float(2**ctx.bits), out=fus_p.data)

    x_p = reprojected_at(ctx, fus_p, rows, cols)
    padded = prow.q2n_padded

    def planes(patch: Patch, rr: np.ndarray, cc: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(patch.take(rr, cc))

    # R-Q2n: the tile's blocks (the MS is the reference)
    mq, xq = planes(ms_p, prow.q2n, pcol.q2n), planes(x_p, prow.q2n, pcol.q2n)
    if padded:
        mq, xq = to_int16_truncated(mq), to_int16_truncated(xq)
    blocks = q2n_block_grid(mq, xq, block_size=bs, shift=bs, std_floor=REPROJECTED_STD_FLOOR,
                            integer_valued=padded)
    out.add("rq2n", [blocks.sum(), blocks.size])

    # R-Q: the sliding windows whose corner lies in the tile
    if prow.rq_windows and pcol.rq_windows:
        out.add("rq_sum", q_window_sums(planes(ms_p, prow.rq, pcol.rq), planes(x_p, prow.rq, pcol.rq), bs))
        out.add("rq_n", [prow.rq_windows * pcol.rq_windows])
    else:
        out.add("rq_sum", np.zeros(ctx.n_bands))
        out.add("rq_n", [0])

    # R-SAM, R-ERGAS: per pixel
    m_own, x_own = planes(ms_p, prow.own, pcol.own), planes(x_p, prow.own, pcol.own)
    out.add("rsam", list(sam_sums(m_own, x_own)))
    sse, tot = ergas_sums(m_own, x_own)
    out.add("rergas_se", sse)
    out.add("rergas_ms", tot)

    _d_rho_sums(ctx, fus_p, pan_p, tile, out)
    return out


def drho_tops_needed(total: Partial) -> tuple[float, float] | None:
    """D_rho's global maxima when one is below 1e-20 (upper clip active), else None."""
    sxx, syy = total.maxima["drho_sxx_max"], total.maxima["drho_syy_max"]
    return (sxx, syy) if min(sxx, syy) < SXX_FLOOR else None


def index_values(total: Partial, ctx: ReprojectedContext) -> dict[str, float]:
    """R-Q2n, R-Q, R-SAM (degrees), R-ERGAS and D_rho from the combined sums (the in-memory finalizers)."""
    big_h, big_w = ctx.shape
    h, w = ctx.shape_lr
    s = total.sums
    q_sum, q_n = s["rq2n"]
    angle_sum, n_valid, n_pix = s["rsam"]
    return {
        "R-Q2n": float(q_sum / q_n),
        "R-Q": q_from_sums(s["rq_sum"], int(s["rq_n"][0])),
        "R-SAM": sam_from_sums(angle_sum, int(n_valid), int(n_pix), zero_norm="zero"),
        "R-ERGAS": ergas_from_sums(s["rergas_se"], s["rergas_ms"], h * w, float(ctx.ratio)),
        "D_rho": math.fsum(s["drho"].tolist()) / float(big_h * big_w * ctx.n_bands),
    }


def context_for(fused: Source, ms: Source, pan: Source, *, settings: FullSettings, gnyq: tuple[float, ...],
                block_size: int) -> ReprojectedContext:
    """Pass-1 context (kernels and half widths as the in-memory protocol chooses them)."""
    from ..reprojected.coregistration import coregistration_half_width, search_window_for
    from ..reprojected.indexes import d_rho_half_width
    from ..reprojected.kernels import reprojection_kernels

    ratio = settings.ratio
    return ReprojectedContext(
        fused, ms, pan, int(ratio), int(settings.bits or 0),
        tuple(settings.scale_of(r) for r in ("fused", "ms", "pan")), bool(settings.threshold),
        np.ascontiguousarray(reprojection_kernels(gnyq, ratio)), tuple(fused.shape[:2]),  # type: ignore[arg-type]
        search_window_for(ratio), coregistration_half_width(ratio), d_rho_half_width(ratio), int(block_size),
    )


def with_shifts(ctx: ReprojectedContext, shifts: np.ndarray) -> ReprojectedContext:
    """Pass-2 context."""
    sh = tuple((int(a), int(b)) for a, b in np.asarray(shifts).reshape(-1, 2))
    return dataclasses.replace(ctx, shifts=sh)


def describe(ctx: ReprojectedContext) -> dict[str, Any]:
    """Halo sizes for the tiling card."""
    return {
        "passes": ["coregistration (per-tile correlation sums)", "indexes (with the chosen shifts)"],
        "halos_pan_px": {
            "kernel": KERNEL_HALO,
            "coregistration_ms_samples": 2 * ctx.coreg_half_width,
            "r_q_ms_samples_after": ctx.block_size - 1,
            "d_rho": 2 * ctx.drho_half_width,
        },
    }

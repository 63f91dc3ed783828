"""Tile-wise full-resolution indexes: D_lambda, D_s, QNR, D_lambda_K, HQNR.

Tiles are aligned to the 32-pixel block grid at PAN scale (and so to the ``32/ratio`` grid at MS
scale). Per tile:

* block moments of ``[fused, PAN]`` on its 32x32 blocks (no halo);
* the low-resolution side, recomputed on the tile from windows with halos:
  EXP = ``interp23tap(MS)`` from the MS window plus 13 wrapped MS samples a side;
  the low-pass PAN: ``interp23tap(imresize(PAN, 1/ratio))`` (toolbox2020; the imresize samples
  themselves from PAN windows with a symmetric halo at the image edges),
  ``MTF_PAN(PAN)`` with a 20-pixel replicate halo (toolbox2015), or the MS and
  ``imresize(PAN, 1/ratio)`` on (32/ratio) blocks (qnr-paper);
* D_lambda_K's ``MTF(fused)`` with a 20-pixel replicate halo, then the core's Q2n block values
  (uint16 cast) against EXP.

Block UIQIs are summed per band pair / band (with NaN bookkeeping for the constant-block policy);
the final means and distortions are the core's formulas applied to the combined sums.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..indexes.catalog import FinalizeContext, derived_images, finalize, statistics_for
from ..indexes.full_resolution import BLOCK_FAMILIES, BlockSums, block_sums, fr_block_uiqi, khan_q2n_sums
from ..indexes.strips import StripImage
from ..io.windows import Source
from ..settings import FullSettings
from .accumulate import Partial
from .facts import add_facts
from .halos import exp_support, exp_window, imresize_at, imresize_support, mtf_support, mtf_window
from .patch import fetch
from .plan import Tile

__all__ = ["FullContext", "full_tile", "full_values"]


@dataclasses.dataclass
class FullContext:
    """Everything a worker needs to process full-resolution tiles (picklable)."""

    fused: Source
    ms: Source
    pan: Source
    settings: FullSettings
    gains: tuple[float, ...]
    pan_gnyq: float | None
    shape: tuple[int, int]

    @property
    def ratio(self) -> int:
        """PAN/MS ratio."""
        return self.settings.ratio

    @property
    def shape_lr(self) -> tuple[int, int]:
        """MS-scale size (samples)."""
        return (self.shape[0] // self.ratio, self.shape[1] // self.ratio)

    @property
    def statistics(self) -> set[str]:
        """Names of the statistics the requested indexes need (``block_uiqi``, ``khan_q2n``)."""
        return {s.name for s in statistics_for(self.settings.indexes)}

    @property
    def needs_exp(self) -> bool:
        """Whether tiles compute the EXP-upsampled MS."""
        return "exp" in derived_images(self.settings.indexes, self.settings.protocol.low_res_terms)


def _add_blocks(out: Partial, key: str, values: np.ndarray) -> None:
    bsum = block_sums(values)
    out.add(key + ":sum", bsum.total)
    out.add(key + ":nansum", bsum.defined_total)
    out.add(key + ":valid", bsum.defined)
    out.add(key + ":blocks", [bsum.n_blocks, bsum.n_bad])


def full_tile(ctx: FullContext, tile: Tile) -> Partial:
    """Partial sums of one tile (see the module docstring)."""
    r = ctx.ratio
    proto = ctx.settings.protocol
    stats = ctx.statistics
    khan, blocks_wanted = "khan_q2n" in stats, "block_uiqi" in stats
    (H, W), (h_lr, w_lr) = ctx.shape, ctx.shape_lr
    rows, cols = tile.rows, tile.cols
    rows_lr, cols_lr = (rows[0] // r, rows[1] // r), (cols[0] // r, cols[1] // r)
    own_r, own_c = np.arange(*rows), np.arange(*cols)
    own_rl, own_cl = np.arange(*rows_lr), np.arange(*cols_lr)

    f_rows, f_cols = [own_r], [own_c]
    if khan:
        f_rows.append(mtf_support(*rows, H))
        f_cols.append(mtf_support(*cols, W))
    p_rows, p_cols = [own_r], [own_c]
    if not blocks_wanted:
        pass
    elif proto.d_s_low_pass == "pan-mtf":
        p_rows.append(mtf_support(*rows, H))
        p_cols.append(mtf_support(*cols, W))
    elif proto.d_s_low_pass == "exp-imresize":
        p_rows.append(imresize_support(exp_support(*rows_lr, h_lr, r), H, r))
        p_cols.append(imresize_support(exp_support(*cols_lr, w_lr, r), W, r))
    else:
        p_rows.append(imresize_support(own_rl, H, r))
        p_cols.append(imresize_support(own_cl, W, r))
    m_rows, m_cols = [own_rl], [own_cl]
    if ctx.needs_exp:
        m_rows.append(exp_support(*rows_lr, h_lr, r))
        m_cols.append(exp_support(*cols_lr, w_lr, r))

    sc = ctx.settings.scale_of
    fus_p, f_stats = fetch(ctx.fused, f_rows, f_cols, scale=sc("fused"))
    pan_p, p_stats = fetch(ctx.pan, p_rows, p_cols, scale=sc("pan"))
    ms_p, m_stats = fetch(ctx.ms, m_rows, m_cols, scale=sc("ms"))
    out = Partial(pixels=tile.pixels)
    add_facts(out, "fused", ctx.fused, fus_p, f_stats, own_r, own_c)
    add_facts(out, "pan", ctx.pan, pan_p, p_stats, own_r, own_c)
    add_facts(out, "ms", ctx.ms, ms_p, m_stats, own_rl, own_cl)
    if ctx.settings.threshold:
        np.clip(fus_p.data, 0.0, ctx.settings.clip_max, out=fus_p.data)

    bs = proto.block_size
    exp = exp_window(ms_p.take, rows_lr, cols_lr, (h_lr, w_lr), r) if ctx.needs_exp else None
    if blocks_wanted:
        if proto.low_res_terms == "ms":
            low_pan = imresize_at(pan_p, own_rl, own_cl, (H, W), r)
        elif proto.d_s_low_pass == "pan-mtf":
            low_pan = mtf_window(pan_p, rows, cols, (H, W), float(ctx.pan_gnyq), r,  # type: ignore[arg-type]
                                 sigma_form=proto.sigma_form)
        else:
            low_pan = exp_window(lambda ri, ci: imresize_at(pan_p, ri, ci, (H, W), r), rows_lr, cols_lr,
                                 (h_lr, w_lr), r)
        uiqi = fr_block_uiqi(fus_p.take(own_r, own_c), ms_p.take(own_rl, own_cl), pan_p.take(own_r, own_c)[:, :, 0],
                             None if exp is None else StripImage(exp), r, bs, proto.low_res_terms,
                             low_pan=low_pan[:, :, 0])
        for key in BLOCK_FAMILIES:
            _add_blocks(out, key, uiqi[key])
    if khan:
        fused_lp = mtf_window(fus_p, rows, cols, (H, W), ctx.gains, r)
        q_sum, q_n = khan_q2n_sums(StripImage(exp), StripImage(fused_lp), bs)  # type: ignore[arg-type]
        out.add("khan_q2n", [q_sum, q_n])
    return out


def _block_sums_of(total: Partial, key: str) -> BlockSums:
    s = total.sums
    return BlockSums(s[key + ":sum"], s[key + ":nansum"], s[key + ":valid"],
                     int(s[key + ":blocks"][0]), int(s[key + ":blocks"][1]))


def full_values(total: Partial, n_bands: int, settings: FullSettings) -> dict[str, float]:
    """The requested indexes from the combined sums, by the catalogue's finalize
    (:func:`~pansharp_iqa.indexes.catalog.finalize`, as in memory)."""
    sums: dict[str, Any] = {}
    if "pairs_high:sum" in total.sums:
        sums["block_uiqi"] = {k: _block_sums_of(total, k) for k in BLOCK_FAMILIES}
    if "khan_q2n" in total.sums:
        q_sum, q_n = total.sums["khan_q2n"]
        sums["khan_q2n"] = {"sum": q_sum, "count": int(q_n)}
    return finalize(settings.indexes, sums, FinalizeContext(ratio=float(settings.ratio), bits=settings.bits,
                                                            n_bands=n_bands, nan_policy=settings.nan_policy))

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

import numpy as np

from ..indexes.full_resolution import BLOCK_FAMILIES, BlockSums, block_sums, toolbox_full_values
from ..indexes.q2n import q2n_strip
from ..indexes.strips import StripImage
from ..indexes.uiqi import against_last_uiqi, block_moments, pair_uiqi
from ..settings import FullSettings
from .accumulate import Partial
from .facts import add_facts
from .halos import exp_support, exp_window, imresize_at, imresize_support, mtf_support, mtf_window
from .patch import fetch
from .plan import Tile
from .sources import Source

__all__ = ["FullContext", "full_tile", "full_values"]


@dataclasses.dataclass
class FullContext:
    """Everything a worker needs to process full-resolution tiles (picklable).

    Attributes
    ----------
    fused, ms, pan : Source
    settings : FullSettings
    gains : tuple of float
        Per-band MS GNyq for D_lambda_K's MTF.
    pan_gnyq : float or None
        PAN GNyq (D_s's low-pass PAN under ``d_s_low_pass="pan-mtf"``).
    shape : (int, int)
        PAN-scale size (pixels).
    """

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
    def needs_exp(self) -> bool:
        """Whether tiles compute the EXP-upsampled MS."""
        proto = self.settings.protocol
        return proto.low_res_terms == "exp" or proto.khan


def _add_blocks(out: Partial, key: str, values: np.ndarray) -> None:
    bsum = block_sums(values)
    out.add(key + ":sum", bsum.total)
    out.add(key + ":nansum", bsum.defined_total)
    out.add(key + ":valid", bsum.defined)
    out.add(key + ":blocks", [bsum.n_blocks, bsum.n_bad])


def full_tile(ctx: FullContext, tile: Tile) -> Partial:
    """Partial sums of one tile (see the module docstring).

    Parameters
    ----------
    ctx : FullContext
    tile : Tile
        PAN-scale coordinates, multiples of the block size and of the ratio.

    Returns
    -------
    Partial
    """
    r = ctx.ratio
    proto = ctx.settings.protocol
    (H, W), (h_lr, w_lr) = ctx.shape, ctx.shape_lr
    rows, cols = tile.rows, tile.cols
    rows_lr, cols_lr = (rows[0] // r, rows[1] // r), (cols[0] // r, cols[1] // r)
    own_r, own_c = np.arange(*rows), np.arange(*cols)
    own_rl, own_cl = np.arange(*rows_lr), np.arange(*cols_lr)

    f_rows, f_cols = [own_r], [own_c]
    if proto.khan:
        f_rows.append(mtf_support(*rows, H))
        f_cols.append(mtf_support(*cols, W))
    p_rows, p_cols = [own_r], [own_c]
    if proto.d_s_low_pass == "pan-mtf":
        p_rows.append(mtf_support(*rows, H))
        p_cols.append(mtf_support(*cols, W))
    elif proto.d_s_low_pass == "exp-imresize":
        p_rows.append(imresize_support(exp_support(*rows_lr, h_lr), H, r))
        p_cols.append(imresize_support(exp_support(*cols_lr, w_lr), W, r))
    else:
        p_rows.append(imresize_support(own_rl, H, r))
        p_cols.append(imresize_support(own_cl, W, r))
    m_rows, m_cols = [own_rl], [own_cl]
    if ctx.needs_exp:
        m_rows.append(exp_support(*rows_lr, h_lr))
        m_cols.append(exp_support(*cols_lr, w_lr))

    scale = ctx.settings.scale
    fus_p, f_stats = fetch(ctx.fused, f_rows, f_cols, scale=scale)
    pan_p, p_stats = fetch(ctx.pan, p_rows, p_cols, scale=scale)
    ms_p, m_stats = fetch(ctx.ms, m_rows, m_cols, scale=scale)
    out = Partial(pixels=tile.pixels)
    add_facts(out, "fused", ctx.fused, fus_p, f_stats, own_r, own_c)
    add_facts(out, "pan", ctx.pan, pan_p, p_stats, own_r, own_c)
    add_facts(out, "ms", ctx.ms, ms_p, m_stats, own_rl, own_cl)
    if ctx.settings.threshold:
        np.clip(fus_p.data, 0.0, ctx.settings.clip_max, out=fus_p.data)

    nb, bs = ctx.fused.shape[2], proto.block_size
    fus = fus_p.take(own_r, own_c)
    high = np.concatenate([fus, pan_p.take(own_r, own_c)], axis=2)
    hm, hc = block_moments(high, bs)
    del high
    exp = exp_window(ms_p.take, rows_lr, cols_lr, (h_lr, w_lr), r) if ctx.needs_exp else None
    if proto.low_res_terms == "ms":
        low_bs = bs // r
        pan_small = imresize_at(pan_p, own_rl, own_cl, (H, W), r)
        low = np.concatenate([ms_p.take(own_rl, own_cl), pan_small], axis=2)
    else:
        low_bs = bs
        if proto.d_s_low_pass == "pan-mtf":
            pan_lp = mtf_window(pan_p, rows, cols, (H, W), float(ctx.pan_gnyq), r,  # type: ignore[arg-type]
                                sigma_form=proto.sigma_form)
        else:
            pan_lp = exp_window(lambda ri, ci: imresize_at(pan_p, ri, ci, (H, W), r), rows_lr, cols_lr,
                                (h_lr, w_lr), r)
        low = np.concatenate([exp, pan_lp], axis=2)  # type: ignore[list-item]
    lm, lc = block_moments(low, low_bs)
    del low
    _add_blocks(out, "pairs_high", pair_uiqi(hm, hc, nb))
    _add_blocks(out, "pairs_low", pair_uiqi(lm, lc, nb))
    _add_blocks(out, "pan_high", against_last_uiqi(hm, hc, nb))
    _add_blocks(out, "pan_low", against_last_uiqi(lm, lc, nb))

    if proto.khan:
        fused_lp = mtf_window(fus_p, rows, cols, (H, W), ctx.gains, r)
        blocks = q2n_strip(StripImage(exp), StripImage(fused_lp), 0, exp.shape[0], bs)  # type: ignore[union-attr]
        out.add("dlk", [blocks.sum(), blocks.size])
    return out


def _block_sums_of(total: Partial, key: str) -> BlockSums:
    s = total.sums
    return BlockSums(s[key + ":sum"], s[key + ":nansum"], s[key + ":valid"],
                     int(s[key + ":blocks"][0]), int(s[key + ":blocks"][1]))


def full_values(total: Partial, n_bands: int, settings: FullSettings) -> dict[str, float]:
    """D_lambda, D_s, QNR (and D_lambda_K, HQNR) from the combined sums, by the in-memory finalize
    (:func:`~pansharp_iqa.indexes.full_resolution.toolbox_full_values`).

    Parameters
    ----------
    total : Partial
    n_bands : int
    settings : FullSettings

    Returns
    -------
    dict of str to float

    Raises
    ------
    ConstantBlockError
        Constant blocks under ``nan_policy="raise"`` (scene-wide counts).
    """
    def khan_sums() -> tuple[float, int]:
        q_sum, q_n = total.sums["dlk"]
        return q_sum, int(q_n)

    return toolbox_full_values({k: _block_sums_of(total, k) for k in BLOCK_FAMILIES}, n_bands,
                               nan_policy=settings.nan_policy, khan_sums=khan_sums if settings.protocol.khan else None)

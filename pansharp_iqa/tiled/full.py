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

from ..indexes.full_resolution import _block_mean, _d_lambda_from, _d_s_from
from ..indexes.q2n import _q2n_core
from ..indexes.uiqi import against_last_uiqi, block_moments, pair_uiqi
from .accumulate import Partial
from .halos import exp_support, exp_window, imresize_at, imresize_support, mtf_support, mtf_window
from .patch import fetch
from .plan import Tile
from .sources import Source

__all__ = ["FullContext", "full_tile", "full_values", "BLOCK_KEYS"]

#: Block-UIQI families: (key, what for error messages).
BLOCK_KEYS = (
    ("pairs_high", "D_lambda (fused band pairs)"),
    ("pairs_low", "D_lambda (MS band pairs)"),
    ("pan_high", "D_s (fused vs PAN)"),
    ("pan_low", "D_s (MS vs low-pass PAN)"),
)


@dataclasses.dataclass
class FullContext:
    """Everything a worker needs to process full-resolution tiles (picklable).

    Attributes
    ----------
    fused, ms, pan : Source
    ratio, bits : int
    scale : float
    threshold : bool
    block_size : int
    variant : str
        ``"toolbox2020"``, ``"toolbox2015"`` or ``"qnr-paper"``.
    gains : tuple of float
        Per-band MS GNyq for D_lambda_K's MTF.
    pan_gnyq : float or None
        PAN GNyq (toolbox2015's low-pass PAN).
    with_dlk : bool
        Compute D_lambda_K.
    shape : (int, int)
        PAN-scale size (pixels).
    """

    fused: Source
    ms: Source
    pan: Source
    ratio: int
    bits: int
    scale: float
    threshold: bool
    block_size: int
    variant: str
    gains: tuple[float, ...]
    pan_gnyq: float | None
    with_dlk: bool
    shape: tuple[int, int]

    @property
    def shape_lr(self) -> tuple[int, int]:
        """MS-scale size (samples)."""
        return (self.shape[0] // self.ratio, self.shape[1] // self.ratio)

    @property
    def needs_exp(self) -> bool:
        """Whether tiles compute the EXP-upsampled MS."""
        return self.variant != "qnr-paper" or self.with_dlk


def _add_blocks(out: Partial, key: str, values: np.ndarray) -> None:
    bad = np.isnan(values)
    out.add(key + ":sum", values.sum(axis=0))
    out.add(key + ":nansum", np.where(bad, 0.0, values).sum(axis=0))
    out.add(key + ":valid", (~bad).sum(axis=0))
    out.add(key + ":blocks", [values.shape[0], int(bad.any(axis=1).sum())])


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
    (H, W), (h_lr, w_lr) = ctx.shape, ctx.shape_lr
    rows, cols = tile.rows, tile.cols
    rows_lr, cols_lr = (rows[0] // r, rows[1] // r), (cols[0] // r, cols[1] // r)
    own_r, own_c = np.arange(*rows), np.arange(*cols)
    own_rl, own_cl = np.arange(*rows_lr), np.arange(*cols_lr)

    f_rows, f_cols = [own_r], [own_c]
    if ctx.with_dlk:
        f_rows.append(mtf_support(*rows, H))
        f_cols.append(mtf_support(*cols, W))
    p_rows, p_cols = [own_r], [own_c]
    if ctx.variant == "toolbox2015":
        p_rows.append(mtf_support(*rows, H))
        p_cols.append(mtf_support(*cols, W))
    elif ctx.variant == "toolbox2020":
        p_rows.append(imresize_support(exp_support(*rows_lr, h_lr), H, r))
        p_cols.append(imresize_support(exp_support(*cols_lr, w_lr), W, r))
    else:
        p_rows.append(imresize_support(own_rl, H, r))
        p_cols.append(imresize_support(own_cl, W, r))
    m_rows, m_cols = [own_rl], [own_cl]
    if ctx.needs_exp:
        m_rows.append(exp_support(*rows_lr, h_lr))
        m_cols.append(exp_support(*cols_lr, w_lr))

    fus_p, f_stats = fetch(ctx.fused, f_rows, f_cols, scale=ctx.scale)
    pan_p, p_stats = fetch(ctx.pan, p_rows, p_cols, scale=ctx.scale)
    ms_p, m_stats = fetch(ctx.ms, m_rows, m_cols, scale=ctx.scale)
    out = Partial(pixels=tile.pixels)
    out.maximum("fused_maxabs", f_stats["maxabs"])
    out.maximum("pan_maxabs", p_stats["maxabs"])
    out.maximum("ms_maxabs", m_stats["maxabs"])
    out.maximum("ms_max", m_stats["max"])
    if ctx.threshold:
        np.clip(fus_p.data, 0.0, float(2**ctx.bits), out=fus_p.data)

    nb, bs = ctx.fused.shape[2], ctx.block_size
    fus = fus_p.take(own_r, own_c)
    high = np.concatenate([fus, pan_p.take(own_r, own_c)], axis=2)
    hm, hc = block_moments(high, bs)
    del high
    exp = exp_window(ms_p.take, rows_lr, cols_lr, (h_lr, w_lr), r) if ctx.needs_exp else None
    if ctx.variant == "qnr-paper":
        low_bs = bs // r
        pan_small = imresize_at(pan_p, own_rl, own_cl, (H, W), r)
        low = np.concatenate([ms_p.take(own_rl, own_cl), pan_small], axis=2)
    else:
        low_bs = bs
        if ctx.variant == "toolbox2015":
            pan_lp = mtf_window(pan_p, rows, cols, (H, W), float(ctx.pan_gnyq), r, sigma_form="2015")  # type: ignore[arg-type]
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

    if ctx.with_dlk:
        fused_lp = mtf_window(fus_p, rows, cols, (H, W), ctx.gains, r)
        _, qmap = _q2n_core(exp, fused_lp, bs, bs, True)  # type: ignore[arg-type]
        out.add("dlk", [qmap.sum(), qmap.size])
    return out


def _block_means(total: Partial, key: str, what: str, nan_policy: str) -> np.ndarray:
    s = total.sums
    n_blocks, n_bad = int(s[key + ":blocks"][0]), int(s[key + ":blocks"][1])
    if n_bad == 0 or nan_policy == "propagate":
        return s[key + ":sum"] / n_blocks
    if nan_policy == "omit":
        with np.errstate(invalid="ignore", divide="ignore"):
            return s[key + ":nansum"] / s[key + ":valid"]
    # the core's message, with the whole scene's counts
    fake = np.zeros((n_blocks, 1))
    fake[:n_bad] = np.nan
    _block_mean(fake, what=what, nan_policy="raise")
    raise AssertionError("unreachable")  # pragma: no cover


def full_values(total: Partial, n_bands: int, nan_policy: str, with_dlk: bool) -> dict[str, float]:
    """D_lambda, D_s, QNR (and D_lambda_K, HQNR) from the combined sums.

    Parameters
    ----------
    total : Partial
    n_bands : int
    nan_policy : {"raise", "omit", "propagate"}
    with_dlk : bool

    Returns
    -------
    dict of str to float

    Raises
    ------
    ConstantBlockError
        Constant blocks under ``nan_policy="raise"`` (the core's message, scene-wide counts).
    """
    means = {k: _block_means(total, k, what, nan_policy)[None, :] for k, what in BLOCK_KEYS}
    values = {
        "D_lambda": _d_lambda_from(means, n_bands, 1.0, "propagate"),
        "D_s": _d_s_from(means, 1.0, "propagate"),
    }
    values["QNR"] = (1.0 - values["D_lambda"]) * (1.0 - values["D_s"])
    if with_dlk:
        q_sum, q_n = total.sums["dlk"]
        values["D_lambda_K"] = 1.0 - float(q_sum / q_n)
        values["HQNR"] = (1.0 - values["D_lambda_K"]) * (1.0 - values["D_s"])
    return values

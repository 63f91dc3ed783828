"""Full-resolution (no reference) formulas: the chunk statistics and finalize steps of D_lambda,
D_s and Khan's D_lambda_K (QNR and HQNR are built from them in :mod:`.catalog`).

The formulas' home, chunk statistics over band planes (:func:`block_uiqi_sums` summed per family by
:func:`block_sums`, :func:`khan_q2n_sums`) and finalize steps (:func:`mean_block_uiqi` under the
constant-block policy, :func:`d_lambda_from_means`, :func:`d_s_from_means`, :func:`d_lambda_k_from_sums`),
shared by the one full-resolution engine (:mod:`.full_pass`) and :mod:`pansharp_iqa.no_reference`.
The images they read are the catalogue's (:data:`.catalog.DERIVED`); nothing here reads a protocol.

References
----------
Alparone et al., "Multispectral and panchromatic data fusion assessment without reference",
PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193. Khan, Alparone, Chanussot, "Pansharpening quality
assessment using the modulation transfer functions of instruments", IEEE TGRS 47(11), 2009,
doi:10.1109/TGRS.2009.2029094. Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..validation import ConstantBlockError, SettingError, ShapeError
from .q2n import q2n_strip
from .strips import StripImage, map_strips, within_unit
from .uiqi import against_last_uiqi, block_moments, pair_uiqi

__all__ = [
    "ConstantBlockError", "NanPolicy", "block_sums", "mean_block_uiqi", "block_uiqi_sums", "d_lambda_from_means",
    "d_s_from_means", "khan_q2n_sums", "khan_q2n_blocks", "d_lambda_k_from_sums", "low_res_block", "BLOCK_FAMILIES",
    "d_lambda_block_map", "d_s_block_map",
]

NanPolicy = Literal["raise", "omit", "propagate"]

#: Block-UIQI families of D_lambda and D_s, and what each compares (for messages).
BLOCK_FAMILIES = {
    "pairs_high": "D_lambda (fused band pairs)",
    "pairs_low": "D_lambda (MS band pairs)",
    "pan_high": "D_s (fused vs PAN)",
    "pan_low": "D_s (MS vs low-pass PAN)",
}


# --------------------------------------------------------------------------- block statistics


def block_sums(values: np.ndarray) -> np.ndarray:
    """Sums of block UIQIs ``(n_blocks, K)``, packed in one vector that adds up across chunks:
    ``[sum (K), sum over defined blocks (K), defined blocks (K), blocks, blocks with an undefined UIQI]``.

    Examples
    --------
    >>> block_sums(np.array([[1.0], [np.nan], [0.5]])).tolist()
    [nan, 1.5, 2.0, 3.0, 1.0]
    """
    bad = np.isnan(values)
    return np.concatenate([values.sum(axis=0), np.where(bad, 0.0, values).sum(axis=0), (~bad).sum(axis=0),
                           [values.shape[0], bad.any(axis=1).sum()]]).astype(np.float64)


def mean_block_uiqi(sums: np.ndarray, *, what: str, nan_policy: str) -> np.ndarray:
    """Mean block UIQI per band pair/band with the constant-block policy applied.

    Parameters
    ----------
    sums : ndarray, shape (3 K + 2,)
        :func:`block_sums` of the family (added over chunks).
    what : str
        The family, for the message (see :data:`BLOCK_FAMILIES`).
    nan_policy : {"raise", "omit", "propagate"}
        Constant blocks make UIQI 0/0: raise (default), average only defined blocks, or return NaN
        as the toolbox does.

    Returns
    -------
    ndarray, shape (K,)

    Raises
    ------
    ConstantBlockError
        Under ``"raise"`` when a block is undefined.

    Examples
    --------
    >>> mean_block_uiqi(block_sums(np.array([[1.0], [np.nan], [0.5]])), what="D_s", nan_policy="omit")
    array([0.75])
    """
    k = (sums.size - 2) // 3
    total, defined_total, defined = sums[:k], sums[k : 2 * k], sums[2 * k : 3 * k]
    n_blocks, n_bad = int(sums[-2]), int(sums[-1])
    if n_bad == 0 or nan_policy == "propagate":
        return total / n_blocks
    if nan_policy == "omit":
        with np.errstate(invalid="ignore", divide="ignore"):
            return defined_total / defined
    raise ConstantBlockError(
        f"{what}: {n_bad} of {n_blocks} blocks are constant (zero variance in both images, "
        "or zero means), where UIQI is 0/0 and the reference toolbox returns NaN. Crop the flat area "
        "(e.g. no-data borders), or pass nan_policy='omit' to average the defined blocks only "
        "(a documented deviation from the toolbox) or nan_policy='propagate' for the toolbox's NaN."
    )


def d_lambda_from_means(q_high: np.ndarray, q_low: np.ndarray, n_bands: int, p: float = 1.0) -> float:
    """D_lambda from mean block UIQIs of the band pairs: ``(sum |Qh - Ql|^p / (B(B-1)/2))^(1/p)``.

    Examples
    --------
    >>> round(d_lambda_from_means(np.array([0.9]), np.array([0.8]), 2), 12)
    0.1
    """
    if n_bands < 2:
        raise ShapeError("fused: D_lambda needs at least 2 bands (it compares band pairs)")
    return float((np.sum(np.abs(q_high - q_low) ** p) / (n_bands * (n_bands - 1) / 2)) ** (1.0 / p))


def d_s_from_means(q_high: np.ndarray, q_low: np.ndarray, q: float = 1.0) -> float:
    """D_s from mean block UIQIs of each band vs the PAN: ``(mean |Qh - Ql|^q)^(1/q)``.

    Examples
    --------
    >>> round(d_s_from_means(np.array([0.9, 0.7]), np.array([0.8, 0.8])), 12)
    0.1
    """
    return float(np.mean(np.abs(q_high - q_low) ** q) ** (1.0 / q))


def low_res_block(block_size: int, ratio: int) -> int:
    """Block side at MS scale for ``low_res_terms="ms"`` (the QNR paper): ``block_size / ratio``.

    Examples
    --------
    >>> low_res_block(32, 4)
    8
    """
    if block_size % ratio:
        raise SettingError(f"block_size={block_size} must be a multiple of ratio={ratio} for the MS-scale blocks")
    return block_size // ratio

def block_uiqi_sums(fused: np.ndarray, pan: np.ndarray | None, low: np.ndarray, low_pan: np.ndarray | None,
                    block_size: int, ratio: int, *,
                    blocks: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Block UIQIs behind D_lambda (band pairs) and, with the PAN, D_s (band vs PAN), summed per family.

    One moment pass per image: the PAN (or its low-pass version) rides along as an extra channel.
    The reference terms are read at their own scale: the EXP on ``block_size`` blocks, or the MS
    itself on ``block_size / ratio`` blocks (``low_res_terms="ms"``, the QNR paper).

    Parameters
    ----------
    fused, pan : ndarray, shapes (B, H, W) and (1, H, W)
        Fused band planes and PAN (DN; None: no D_s); H, W multiples of ``block_size``.
    low, low_pan : ndarray, shapes (B, h, w) and (1, h, w)
        The reference terms (the EXP-upsampled MS, or the MS) and D_s's low-pass PAN (or None).
    block_size, ratio : int
    blocks : dict, optional
        Filled with each family's block UIQIs as (H / block_size, W / block_size, K) arrays (the
        block maps' values: :func:`d_lambda_block_map`, :func:`d_s_block_map`).

    Returns
    -------
    dict of str to ndarray
        :func:`block_sums` of ``pairs_high``/``pairs_low`` and, with the PAN, ``pan_high``/``pan_low``.

    Examples
    --------
    >>> ms = np.random.default_rng(0).integers(100, 2000, (3, 8, 8)).astype(float)
    >>> fus = np.kron(ms, np.ones((1, 4, 4)))
    >>> sums = block_uiqi_sums(fus, None, ms, None, 32, 4)
    >>> sorted(sums), sums["pairs_high"].size
    (['pairs_high', 'pairs_low'], 11)
    """
    nb = fused.shape[0]
    low_bs = block_size if low.shape[1:] == fused.shape[1:] else low_res_block(block_size, ratio)
    hm, hc = block_moments(StripImage(fused, bands_first=True), block_size, extra=None if pan is None else pan[0])
    lm, lc = block_moments(StripImage(low, bands_first=True), low_bs, extra=None if low_pan is None else low_pan[0])
    fam = {"pairs_high": pair_uiqi(hm, hc, nb), "pairs_low": pair_uiqi(lm, lc, nb)}
    if pan is not None:
        fam["pan_high"], fam["pan_low"] = against_last_uiqi(hm, hc, nb), against_last_uiqi(lm, lc, nb)
    if blocks is not None:
        grid = (fused.shape[1] // block_size, fused.shape[2] // block_size)
        blocks.update({k: v.reshape(*grid, -1) for k, v in fam.items()})
    return {k: block_sums(v) for k, v in fam.items()}


def d_lambda_block_map(blocks: dict[str, np.ndarray]) -> np.ndarray:
    """D_lambda's block map as the GRSM 2022 code's ``D_lambda_Q`` returns it: the mean over band pairs of
    ``|Q(F_i, F_j) - Q(L_i, L_j)|`` per block (p = 1; NaN on constant blocks, as MATLAB).

    Examples
    --------
    >>> d_lambda_block_map({"pairs_high": np.full((1, 2, 3), 0.9), "pairs_low": np.full((1, 2, 3), 0.7)}).round(12)
    array([[0.2, 0.2]])
    """
    return np.abs(blocks["pairs_high"] - blocks["pairs_low"]).mean(axis=2)


def d_s_block_map(blocks: dict[str, np.ndarray]) -> np.ndarray:
    """D_s's block map as the GRSM 2022 code's ``D_s_Q`` returns it: the mean over bands of
    ``|Q(F_b, PAN) - Q(L_b, low-pass PAN)|`` per block (q = 1; NaN on constant blocks).

    Examples
    --------
    >>> d_s_block_map({"pan_high": np.full((2, 1, 4), 0.5), "pan_low": np.full((2, 1, 4), 0.75)}).tolist()
    [[0.25], [0.25]]
    """
    return np.abs(blocks["pan_high"] - blocks["pan_low"]).mean(axis=2)


def khan_q2n_blocks(exp: StripImage, fused_lp: StripImage, block_size: int) -> np.ndarray:
    """Q2n block values of ``(EXP, MTF(fused))`` as the (H / block_size, W / block_size) block map
    (the toolbox's ``q2n`` map; EXP is the reference argument).

    Examples
    --------
    >>> x = StripImage(np.random.default_rng(0).integers(0, 2048, (64, 96, 4)).astype(float))
    >>> khan_q2n_blocks(x, x, 32).round(12).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    h, w = exp.shape[:2]
    parts = map_strips(lambda r0, r1: q2n_strip(exp, fused_lp, r0, r1, block_size), h, block_size)
    return np.concatenate(parts).reshape(-(-h // block_size), -(-w // block_size))


def khan_q2n_sums(exp: np.ndarray, fused_lp: np.ndarray, block_size: int, *,
                  blocks: list[np.ndarray] | None = None) -> tuple[float, int]:
    """Sum and count of the Q2n block values of ``(EXP, MTF(fused))`` (D_lambda_K's chunk sums).

    Parameters
    ----------
    exp, fused_lp : ndarray, shape (B, H, W)
        The EXP-upsampled MS and ``MTF(fused)`` of the chunk (DN); H, W multiples of ``block_size``.
    block_size : int
    blocks : list, optional
        The block map (:func:`khan_q2n_blocks`) is appended to it.

    Returns
    -------
    (float, int)

    Examples
    --------
    >>> exp = np.random.default_rng(0).integers(100, 2000, (4, 64, 32)).astype(float)
    >>> khan_q2n_sums(exp, exp, 32)
    (2.0, 2)
    """
    values = khan_q2n_blocks(StripImage(exp, bands_first=True), StripImage(fused_lp, bands_first=True), block_size)
    if blocks is not None:
        blocks.append(values)
    return float(values.sum()), int(values.size)


def d_lambda_k_from_sums(q2n_sum: float, q2n_count: int) -> float:
    """D_lambda_K = 1 - mean Q2n block value.

    Examples
    --------
    >>> round(d_lambda_k_from_sums(9.0, 10), 12)
    0.1
    """
    return 1.0 - within_unit(float(q2n_sum / q2n_count))

"""Full-resolution (no reference) formulas: the chunk statistics and finalize steps of D_lambda,
D_s and Khan's D_lambda_K (QNR and HQNR are built from them in :mod:`.catalog`).

The formulas' home, split as chunk statistics and finalize steps that the in-memory entry points
(:mod:`pansharp_iqa.evaluation`, :mod:`.no_reference`) and the tile engine
(:mod:`pansharp_iqa.tiled.full`) share:

* :func:`fr_block_uiqi`: block UIQIs of a region (band pairs for D_lambda, band vs PAN for D_s);
* :class:`BlockSums` / :func:`block_sums` / :func:`mean_block_uiqi`: their per-family sums and
  the mean over blocks under the constant-block policy;
* :func:`d_lambda_from_means`, :func:`d_s_from_means`: the distortions from the block means;
* :func:`khan_filtered`, :func:`khan_q2n_sums` and :func:`d_lambda_k_from_sums`: D_lambda_K.

A protocol decides the reference terms (``low_res_terms``: the EXP-upsampled MS on the same
blocks, or the MS itself on ``block/ratio`` blocks) and D_s's low-pass PAN
(:func:`pansharp_iqa.indexes.no_reference.pan_low_pass`); nothing here reads a protocol.

References
----------
Alparone et al., "Multispectral and panchromatic data fusion assessment without reference",
PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193. Khan, Alparone, Chanussot, "Pansharpening quality
assessment using the modulation transfer functions of instruments", IEEE TGRS 47(11), 2009,
doi:10.1109/TGRS.2009.2029094. Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from ..mtf import filter_planes, mtf_kernel
from ..resample import interp23tap_planes
from ..validation import ConstantBlockError, SettingError, ShapeError, as_image
from .q2n import q2n_strip
from .strips import StripImage, map_strips, within_unit
from .uiqi import against_last_uiqi, block_moments, pair_uiqi

__all__ = [
    "ConstantBlockError", "NanPolicy",
    "BlockSums", "block_sums", "mean_block_uiqi", "fr_block_uiqi", "d_lambda_from_means",
    "d_s_from_means", "khan_filtered", "khan_q2n_sums", "d_lambda_k_from_sums", "expanded_ms",
    "low_res_block", "BLOCK_FAMILIES",
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


@dataclasses.dataclass
class BlockSums:
    """Sums of one family of block UIQIs, per band pair or band (combinable across tiles).

    Attributes
    ----------
    total : ndarray, shape (K,)
        Sum over blocks (NaN if any block is undefined).
    defined_total : ndarray, shape (K,)
        Sum over the blocks where the UIQI is defined.
    defined : ndarray, shape (K,)
        Number of such blocks.
    n_blocks : int
    n_bad : int
        Blocks where some UIQI of the family is undefined (a constant block, 0/0).
    """

    total: np.ndarray
    defined_total: np.ndarray
    defined: np.ndarray
    n_blocks: int
    n_bad: int


def block_sums(values: np.ndarray) -> BlockSums:
    """Sums of block UIQIs ``(n_blocks, K)`` for :func:`mean_block_uiqi`.

    Examples
    --------
    >>> s = block_sums(np.array([[1.0], [np.nan], [0.5]]))
    >>> (s.defined_total.tolist(), s.defined.tolist(), s.n_blocks, s.n_bad)
    ([1.5], [2], 3, 1)
    """
    bad = np.isnan(values)
    return BlockSums(values.sum(axis=0), np.where(bad, 0.0, values).sum(axis=0), (~bad).sum(axis=0),
                     int(values.shape[0]), int(bad.any(axis=1).sum()))


def mean_block_uiqi(sums: BlockSums, *, what: str, nan_policy: str) -> np.ndarray:
    """Mean block UIQI per band pair/band with the constant-block policy applied.

    Parameters
    ----------
    sums : BlockSums
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
    if sums.n_bad == 0 or nan_policy == "propagate":
        return sums.total / sums.n_blocks
    if nan_policy == "omit":
        with np.errstate(invalid="ignore", divide="ignore"):
            return sums.defined_total / sums.defined
    raise ConstantBlockError(
        f"{what}: {sums.n_bad} of {sums.n_blocks} blocks are constant (zero variance in both images, "
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

def fr_block_uiqi(fus: np.ndarray | StripImage, ms: np.ndarray, pan: np.ndarray | None, exp: StripImage | None,
                  ratio: int, block_size: int, low_res_terms: str = "exp",
                  *, low_pan: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Block UIQIs behind D_lambda (band pairs) and, when ``pan`` is given, D_s (band vs PAN).

    One moment pass per image: the PAN (or its low-pass version) rides along as an extra channel.

    Parameters
    ----------
    fus : ndarray (H, W, B) or StripImage
        Fused image, DN.
    ms : ndarray, shape (H/ratio, W/ratio, B)
        Low-resolution MS, DN.
    pan : ndarray, shape (H, W), or None
        PAN (D_s only).
    exp : StripImage or None
        EXP-upsampled MS (``low_res_terms="exp"``).
    ratio, block_size : int
    low_res_terms : {"exp", "ms"}
        Reference terms: the EXP on ``block_size`` blocks, or the MS on ``block_size/ratio``
        blocks (the QNR paper).
    low_pan : ndarray, optional
        D_s's low-pass PAN (required with ``pan``): at PAN scale for ``"exp"``, at MS scale for
        ``"ms"`` (:func:`pansharp_iqa.indexes.no_reference.pan_low_pass`).

    Returns
    -------
    dict of str to ndarray
        ``pairs_high``/``pairs_low`` (n_blocks, B(B-1)/2) and ``pan_high``/``pan_low`` (n_blocks, B).

    Examples
    --------
    >>> ms = np.random.default_rng(0).integers(100, 2000, (8, 8, 3)).astype(float)
    >>> fus = np.kron(ms, np.ones((4, 4, 1)))
    >>> sorted(fr_block_uiqi(fus, ms, None, expanded_ms(ms, 4, None, fus.shape), 4, 32))
    ['pairs_high', 'pairs_low']
    """
    nb = ms.shape[2]
    with_pan = pan is not None
    if with_pan and low_pan is None:
        raise ValueError("fr_block_uiqi: give the low-pass PAN with the PAN")
    low: np.ndarray | StripImage
    if low_res_terms == "ms":
        low_bs = low_res_block(block_size, ratio)
        low = ms
    else:
        assert exp is not None, "fr_block_uiqi: low_res_terms='exp' needs the EXP"
        low_bs = block_size
        low = exp
    hm, hc = block_moments(fus, block_size, extra=pan)
    lm, lc = block_moments(low, low_bs, extra=low_pan if with_pan else None)
    out = {"pairs_high": pair_uiqi(hm, hc, nb), "pairs_low": pair_uiqi(lm, lc, nb)}
    if with_pan:
        out["pan_high"] = against_last_uiqi(hm, hc, nb)
        out["pan_low"] = against_last_uiqi(lm, lc, nb)
    return out


def khan_filtered(fused_planes: np.ndarray, gnyq: tuple[float, ...], ratio: int) -> StripImage:
    """``MTF(fused)``: the fused band planes filtered with the sensor's per-band MTF (D_lambda_K).

    Parameters
    ----------
    fused_planes : ndarray, shape (B, H, W), float64
        The fused image as band planes (DN).
    gnyq : tuple of float
        Per-band MS GNyq of the sensor.
    ratio : int

    Returns
    -------
    StripImage
        Band planes, same size (replicate border, as :func:`pansharp_iqa.mtf_filter`).

    Examples
    --------
    >>> khan_filtered(np.ones((2, 8, 8)), (0.3, 0.3), 4).shape
    (8, 8, 2)
    """
    kernels = [mtf_kernel(g, ratio) for g in gnyq]
    return StripImage(filter_planes(fused_planes, kernels), bands_first=True)


def khan_q2n_sums(exp: StripImage, fused_lp: StripImage, block_size: int) -> tuple[float, int]:
    """Sum and count of the Q2n block values of ``(EXP, MTF(fused))`` (D_lambda_K's chunk sums).

    Parameters
    ----------
    exp : StripImage
        The EXP-upsampled MS (DN) of the chunk.
    fused_lp : StripImage
        ``MTF(fused)`` of the chunk (:func:`khan_filtered`, or a tile's windowed filter); H, W
        multiples of ``block_size``.
    block_size : int

    Returns
    -------
    (float, int)

    Examples
    --------
    >>> ms = np.random.default_rng(0).integers(100, 2000, (8, 8, 4)).astype(float)
    >>> exp = expanded_ms(ms, 4, None, (32, 32, 4))
    >>> khan_q2n_sums(exp, khan_filtered(np.ascontiguousarray(exp.array), (0.3,) * 4, 4), 32)[1]
    1
    """
    parts = map_strips(lambda r0, r1: q2n_strip(exp, fused_lp, r0, r1, block_size), exp.shape[0], block_size)
    blocks = np.concatenate(parts)
    return float(blocks.sum()), int(blocks.size)


def d_lambda_k_from_sums(q2n_sum: float, q2n_count: int) -> float:
    """D_lambda_K = 1 - mean Q2n block value.

    Examples
    --------
    >>> round(d_lambda_k_from_sums(9.0, 10), 12)
    0.1
    """
    return 1.0 - within_unit(float(q2n_sum / q2n_count))

def expanded_ms(ms_arr: np.ndarray, ratio: int, ms_exp: object, shape: tuple[int, ...]) -> StripImage:
    """The EXP-upsampled MS: ``interp23tap(ms, ratio)`` (kept as band planes), or the caller's
    precomputed one, checked against the fused image's shape.

    Examples
    --------
    >>> expanded_ms(np.ones((8, 8, 2)), 4, None, (32, 32, 2)).shape
    (32, 32, 2)
    """
    if ms_exp is None:
        return StripImage(interp23tap_planes(np.moveaxis(ms_arr, 2, 0), ratio), bands_first=True)
    exp = as_image("ms_exp", ms_exp)
    if exp.shape != tuple(shape):
        raise ShapeError(f"ms_exp {exp.shape} must have the fused image's shape {tuple(shape)}")
    return StripImage(exp)


"""Full-resolution (no reference) indexes: D_lambda, D_s, QNR, Khan's D_lambda_K and HQNR.

The formulas' home, split as chunk statistics and finalize steps that the in-memory entry points
here, :func:`pansharp_iqa.evaluate_full` and the tile engine (:mod:`pansharp_iqa.tiled.full`)
share:

* :func:`fr_block_uiqi`: block UIQIs of a region (band pairs for D_lambda, band vs PAN for D_s);
* :class:`BlockSums` / :func:`block_sums` / :func:`mean_block_uiqi`: their per-family sums and
  the mean over blocks under the constant-block policy;
* :func:`d_lambda_from_means`, :func:`d_s_from_means`: the distortions from the block means;
* :func:`khan_q2n_sums` and :func:`d_lambda_k_from_sums`: D_lambda_K.

The protocol decides the reference terms (``protocol.low_res_terms``: the EXP-upsampled MS on
the same blocks, or the MS itself on ``block/ratio`` blocks) and D_s's low-pass PAN
(``protocol.d_s_low_pass``); see :mod:`pansharp_iqa.protocols`.

References
----------
Alparone et al., "Multispectral and panchromatic data fusion assessment without reference",
PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193. Khan, Alparone, Chanussot, "Pansharpening quality
assessment using the modulation transfer functions of instruments", IEEE TGRS 47(11), 2009,
doi:10.1109/TGRS.2009.2022650. Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Literal

import numpy as np

from ..mtf import filter_planes, mtf_filter, mtf_kernel
from ..protocols import Protocol, get_protocol
from ..resample import imresize, interp23tap, interp23tap_planes
from ..sensors import Sensor, resolve_sensor
from ..validation import (
    ConstantBlockError,
    SensorMismatchError,
    SettingError,
    ShapeError,
    as_image,
    check_block_size,
    check_choice,
    check_multiple_of,
    check_pan_ratio,
    check_ratio,
    check_values,
    image_array,
    image_facts,
    pan_array,
)
from .q2n import q2n_strip
from .strips import StripImage, map_strips
from .uiqi import against_last_uiqi, block_moments, pair_uiqi

__all__ = [
    "d_lambda", "d_s", "qnr", "d_lambda_k", "hqnr", "ConstantBlockError",
    "BlockSums", "block_sums", "mean_block_uiqi", "fr_block_uiqi", "d_lambda_from_means",
    "d_s_from_means", "khan_q2n_sums", "d_lambda_k_from_sums", "toolbox_full_values", "expanded_ms",
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
_DN_WHAT = "D_lambda_K (Q2n)"


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


def pan_low_pass(pan: np.ndarray, ratio: int, protocol: Protocol, sensor: Sensor | None) -> np.ndarray:
    """D_s's low-pass PAN at PAN scale (``d_s_low_pass`` ``"exp-imresize"`` or ``"pan-mtf"``).

    Parameters
    ----------
    pan : ndarray, shape (H, W), float64
    ratio : int
    protocol : Protocol
    sensor : Sensor or None
        Required for ``"pan-mtf"``.

    Returns
    -------
    ndarray, shape (H, W)
    """
    if protocol.d_s_low_pass == "pan-mtf":
        if sensor is None:
            raise SensorMismatchError(
                f"sensor is required for D_s under {protocol.name!r} (its low-pass PAN uses the sensor's "
                "PAN MTF); pass sensor='WV2' etc."
            )
        return mtf_filter(pan, sensor.pan_gnyq_for(protocol=protocol.name), ratio, sigma_form=protocol.sigma_form)
    return interp23tap(imresize(pan, 1.0 / ratio), ratio)


def fr_block_uiqi(fus: np.ndarray | StripImage, ms: np.ndarray, pan: np.ndarray | None, exp: StripImage | None,
                  ratio: int, block_size: int, protocol: Protocol, sensor: Sensor | None,
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
    protocol : Protocol
    sensor : Sensor or None
    low_pan : ndarray, optional
        A precomputed low-pass PAN.

    Returns
    -------
    dict of str to ndarray
        ``pairs_high``/``pairs_low`` (n_blocks, B(B-1)/2) and ``pan_high``/``pan_low`` (n_blocks, B).

    Examples
    --------
    >>> from pansharp_iqa import get_protocol
    >>> ms = np.random.default_rng(0).integers(100, 2000, (8, 8, 3)).astype(float)
    >>> fus = np.kron(ms, np.ones((4, 4, 1)))
    >>> sorted(fr_block_uiqi(fus, ms, None, expanded_ms(ms, 4, None, fus.shape), 4, 32,
    ...                      get_protocol("toolbox2020"), None))
    ['pairs_high', 'pairs_low']
    """
    nb = ms.shape[2]
    with_pan = pan is not None
    if protocol.low_res_terms == "ms":
        low_bs = low_res_block(block_size, ratio)
        low = ms
        if with_pan and low_pan is None:
            low_pan = imresize(pan, 1.0 / ratio)
    else:
        low_bs = block_size
        low = exp
        if with_pan and low_pan is None:
            low_pan = pan_low_pass(pan, ratio, protocol, sensor)
    hm, hc = block_moments(fus, block_size, extra=pan)
    lm, lc = block_moments(low, low_bs, extra=low_pan if with_pan else None)  # type: ignore[arg-type]
    out = {"pairs_high": pair_uiqi(hm, hc, nb), "pairs_low": pair_uiqi(lm, lc, nb)}
    if with_pan:
        out["pan_high"] = against_last_uiqi(hm, hc, nb)
        out["pan_low"] = against_last_uiqi(lm, lc, nb)
    return out


def khan_q2n_sums(fused_planes: np.ndarray, exp: StripImage, gnyq: tuple[float, ...], ratio: int,
                  block_size: int) -> tuple[float, int]:
    """Sum and count of the Q2n block values of ``(EXP, MTF(fused))`` (D_lambda_K's chunk sums).

    Parameters
    ----------
    fused_planes : ndarray, shape (B, H, W), float64
        The fused image as band planes (DN); H, W multiples of ``block_size``.
    exp : StripImage
        The EXP-upsampled MS (DN).
    gnyq : tuple of float
        Per-band MS GNyq of the sensor.
    ratio, block_size : int

    Returns
    -------
    (float, int)

    Examples
    --------
    >>> ms = np.random.default_rng(0).integers(100, 2000, (8, 8, 4)).astype(float)
    >>> exp = expanded_ms(ms, 4, None, (32, 32, 4))
    >>> khan_q2n_sums(np.ascontiguousarray(exp.array), exp, (0.3,) * 4, 4, 32)[1]
    1
    """
    kernels = [mtf_kernel(g, ratio) for g in gnyq]
    fused_lp = StripImage(filter_planes(fused_planes, kernels), bands_first=True)
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
    return 1.0 - float(q2n_sum / q2n_count)


def toolbox_full_values(sums: Mapping[str, BlockSums], n_bands: int, *, nan_policy: str,
                        khan_sums: Callable[[], tuple[float, int]] | None = None) -> dict[str, float]:
    """D_lambda, D_s, QNR (and D_lambda_K, HQNR) from the block-UIQI sums of each family.

    The one finalize of the toolbox family's table, shared by the in-memory evaluation and the
    tile engine (whose sums are combined over tiles).

    Parameters
    ----------
    sums : mapping of str to BlockSums
        One entry per key of :data:`BLOCK_FAMILIES`.
    n_bands : int
    nan_policy : {"raise", "omit", "propagate"}
        See :func:`mean_block_uiqi`.
    khan_sums : callable, optional
        Returns D_lambda_K's Q2n ``(sum, count)``; called after the block means (whose policy may
        raise first). Without it the table has no D_lambda_K and HQNR.

    Returns
    -------
    dict of str to float

    Raises
    ------
    ConstantBlockError
        Constant blocks under ``nan_policy="raise"``.

    Examples
    --------
    >>> s = {k: block_sums(np.array([[0.9, 0.8]])) for k in BLOCK_FAMILIES}
    >>> sorted(toolbox_full_values(s, 2, nan_policy="raise", khan_sums=lambda: (0.9, 1)))
    ['D_lambda', 'D_lambda_K', 'D_s', 'HQNR', 'QNR']
    """
    means = {k: mean_block_uiqi(sums[k], what=what, nan_policy=nan_policy) for k, what in BLOCK_FAMILIES.items()}
    values = {
        "D_lambda": d_lambda_from_means(means["pairs_high"], means["pairs_low"], n_bands),
        "D_s": d_s_from_means(means["pan_high"], means["pan_low"]),
    }
    values["QNR"] = (1.0 - values["D_lambda"]) * (1.0 - values["D_s"])
    if khan_sums is not None:
        values["D_lambda_K"] = d_lambda_k_from_sums(*khan_sums())
        values["HQNR"] = (1.0 - values["D_lambda_K"]) * (1.0 - values["D_s"])
    return values


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


# --------------------------------------------------------------------------- public functions


@dataclasses.dataclass
class _Case:
    """Validated inputs of one public full-resolution call, and the statistics it needs."""

    protocol: Protocol
    ratio: int
    block_size: int
    fused: np.ndarray
    ms: np.ndarray
    pan: np.ndarray | None
    given_exp: StripImage | None  # the caller's ms_exp (checked), else computed on first use
    nan_policy: str
    sensor: Sensor | None

    @classmethod
    def build(cls, fused, ms, pan, *, ratio, block_size, ms_exp, protocol, variant, nan_policy, sensor,
              index: str, dn: bool = False) -> _Case:
        if variant is not None:
            warnings.warn(f"{index}(variant=...) is deprecated: use protocol=... (the same names)",
                          DeprecationWarning, stacklevel=3)
            protocol = variant
        proto = get_protocol(protocol)
        if proto.full_engine != "toolbox":
            raise SettingError(
                f"protocol {proto.name!r} has no {index}; use one of the toolbox-family protocols "
                "('toolbox2020', 'toolbox2015', 'qnr-paper')"
            )
        check_choice("nan_policy", nan_policy, ("raise", "omit", "propagate"))
        s = None if sensor is None else resolve_sensor(sensor)
        ratio = check_ratio(ratio if ratio is not None or s is None else s.ratio, exp=True)
        block_size = check_block_size(block_size)
        fus = image_array("fused", fused)
        ms_arr = image_array("ms", ms)
        pan_arr = None if pan is None else pan_array("pan", pan)
        check_pan_ratio(fus, ms_arr, fus if pan_arr is None else pan_arr, ratio,
                        pan_name="fused" if pan_arr is None else "pan")
        check_multiple_of("fused", fus.shape, block_size, why="the toolbox's block-wise indexes require it")
        check_values(test=image_facts("fused", fus), reference=image_facts("ms", ms_arr),
                     pan=None if pan_arr is None else image_facts("pan", pan_arr), dn_what=_DN_WHAT if dn else None)
        fus = np.asarray(fus, dtype=np.float64)
        ms_arr = np.asarray(ms_arr, dtype=np.float64)
        pan_arr = None if pan_arr is None else np.asarray(pan_arr, dtype=np.float64)
        given = None if ms_exp is None else expanded_ms(ms_arr, ratio, ms_exp, fus.shape)
        return cls(proto, ratio, block_size, fus, ms_arr, pan_arr, given, nan_policy, s)

    @functools.cached_property
    def exp(self) -> StripImage:
        """The EXP-upsampled MS, computed only when read (``"qnr-paper"``'s D_lambda and D_s do not)."""
        if self.given_exp is not None:
            return self.given_exp
        return expanded_ms(self.ms, self.ratio, None, self.fused.shape)

    @functools.cached_property
    def blocks(self) -> dict[str, np.ndarray]:
        """Block UIQIs (one moment pass serves D_lambda and D_s)."""
        exp = self.exp if self.protocol.low_res_terms == "exp" else None
        return fr_block_uiqi(self.fused, self.ms, self.pan, exp, self.ratio, self.block_size, self.protocol,
                             self.sensor)

    def _means(self, keys: tuple[str, str]) -> list[np.ndarray]:
        return [mean_block_uiqi(block_sums(self.blocks[k]), what=BLOCK_FAMILIES[k], nan_policy=self.nan_policy)
                for k in keys]

    def d_lambda(self, p: float) -> float:
        return d_lambda_from_means(*self._means(("pairs_high", "pairs_low")), self.fused.shape[2], float(p))

    def d_s(self, q: float) -> float:
        return d_s_from_means(*self._means(("pan_high", "pan_low")), float(q))

    def d_lambda_k(self) -> float:
        assert self.sensor is not None
        gnyq = tuple(self.sensor.gnyq_for(self.fused.shape[2]))
        planes = np.ascontiguousarray(np.moveaxis(self.fused, 2, 0), dtype=np.float64)
        return d_lambda_k_from_sums(*khan_q2n_sums(planes, self.exp, gnyq, self.ratio, self.block_size))


def d_lambda(
    fused: np.ndarray,
    ms: np.ndarray,
    *,
    ratio: int,
    block_size: int = 32,
    p: float = 1.0,
    ms_exp: np.ndarray | None = None,
    protocol: str | Protocol = "toolbox2020",
    nan_policy: NanPolicy = "raise",
    variant: str | None = None,
) -> float:
    """Spectral distortion D_lambda of QNR (toolbox ``D_lambda``).

    ``(sum_{i<j} |Q(F_i, F_j) - Q(L_i, L_j)|^p / (B(B-1)/2))^(1/p)`` with block-wise UIQI on
    non-overlapping ``block_size`` blocks; ``L`` is the EXP-upsampled MS (toolbox protocols) or the
    low-resolution MS on ``block_size/ratio`` blocks (``"qnr-paper"``).

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image at PAN scale (DN); H, W multiples of ``block_size``.
    ms : ndarray, shape (H/ratio, W/ratio, B)
        Original low-resolution MS (DN).
    ratio : int
        Resolution ratio (power of two).
    block_size : int, default 32
        Block side (pixels).
    p : float, default 1
        Exponent of the band-pair differences.
    ms_exp : ndarray, optional
        Precomputed ``interp23tap(ms, ratio)``.
    protocol : str or Protocol, default "toolbox2020"
        A toolbox-family protocol (``"toolbox2020"``, ``"toolbox2015"``, ``"qnr-paper"``).
    nan_policy : {"raise", "omit", "propagate"}
        Constant blocks make UIQI 0/0: raise (default), average only defined blocks, or return NaN
        as the toolbox does.
    variant : str, optional
        Deprecated name of ``protocol``.

    Returns
    -------
    float
        In [0, 1]; 0 = band relations preserved (F = EXP gives 0 under the toolbox protocols).

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008; Vivone et al., IEEE GRSM 2021.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> from pansharp_iqa.baselines import gsa
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> d_lambda(interp23tap(ms, 4), ms, ratio=4), round(d_lambda(gsa(ms, pan, ratio=4), ms, ratio=4), 4)
    (0.0, 0.0469)
    """
    case = _Case.build(fused, ms, None, ratio=ratio, block_size=block_size, ms_exp=ms_exp, protocol=protocol,
                       variant=variant, nan_policy=nan_policy, sensor=None, index="d_lambda")
    return case.d_lambda(p)


def d_s(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, ratio: int, block_size: int = 32, q: float = 1.0,
        ms_exp: np.ndarray | None = None, protocol: str | Protocol = "toolbox2020", sensor: str | Sensor | None = None,
        nan_policy: NanPolicy = "raise", variant: str | None = None) -> float:
    """Spatial distortion D_s of QNR (toolbox ``D_s``).

    ``(mean_b |Q(F_b, PAN) - Q(L_b, P_L)|^q)^(1/q)`` with block-wise UIQI. Toolbox 2020:
    ``L = EXP``, ``P_L = interp23tap(imresize(PAN, 1/ratio), ratio)`` (sensor-independent);
    ``"toolbox2015"``: ``P_L`` = PAN filtered with the sensor's PAN MTF (needs ``sensor``);
    ``"qnr-paper"``: ``L`` = low-resolution MS, ``P_L = imresize(PAN, 1/ratio)``, blocks of
    ``block_size/ratio``.

    Parameters
    ----------
    pan : ndarray, shape (H, W)
        PAN (DN).
    q : float, default 1
        Exponent of the band differences.
    sensor : str or Sensor, optional
        Required where D_s uses the sensor's PAN MTF (``"toolbox2015"``).
    fused, ms, ratio, block_size, ms_exp, protocol, nan_policy, variant
        As :func:`d_lambda`.

    Returns
    -------
    float
        In [0, 1]; 0 = spatial relations to the PAN preserved.

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008; Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> rng = np.random.default_rng(0)
    >>> ms = rng.integers(100, 2000, (16, 16, 4)).astype(float)
    >>> pan = rng.integers(100, 2000, (64, 64)).astype(float)
    >>> round(d_s(interp23tap(ms, 4), ms, pan, ratio=4), 4)
    0.0103
    """
    case = _Case.build(fused, ms, pan, ratio=ratio, block_size=block_size, ms_exp=ms_exp, protocol=protocol,
                       variant=variant, nan_policy=nan_policy, sensor=sensor, index="d_s")
    return case.d_s(q)


def qnr(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, ratio: int, block_size: int = 32, p: float = 1.0,
        q: float = 1.0, alpha: float = 1.0, beta: float = 1.0, ms_exp: np.ndarray | None = None,
        protocol: str | Protocol = "toolbox2020", sensor: str | Sensor | None = None, nan_policy: NanPolicy = "raise",
        variant: str | None = None) -> float:
    """Quality with no reference: ``(1 - D_lambda)^alpha (1 - D_s)^beta`` (toolbox ``QNR``).

    Built from :func:`d_lambda` and :func:`d_s`; ``alpha`` and ``beta`` weight the two terms, the
    other parameters are theirs.

    Returns
    -------
    float
        QNR, in [0, 1] (1: no spectral and no spatial distortion).

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> exp = interp23tap(ms, 4)
    >>> round(qnr(exp, ms, pan, ratio=4), 4) == round((1 - d_lambda(exp, ms, ratio=4)) * (1 - d_s(exp, ms, pan, ratio=4)), 4)
    True
    """
    case = _Case.build(fused, ms, pan, ratio=ratio, block_size=block_size, ms_exp=ms_exp, protocol=protocol,
                       variant=variant, nan_policy=nan_policy, sensor=sensor, index="qnr")
    return float((1.0 - case.d_lambda(p)) ** alpha * (1.0 - case.d_s(q)) ** beta)


def d_lambda_k(
    fused: np.ndarray,
    ms: np.ndarray,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    block_size: int = 32,
    ms_exp: np.ndarray | None = None,
) -> float:
    """Khan's spectral distortion at PAN scale, as in the 2020 toolbox (``D_lambda_K``).

    ``1 - Q2n(EXP, MTF(F))``: the fused image is filtered with the sensor's per-band MTF (not
    decimated) and compared by Q2n (with its uint16 cast: DN data only) with the EXP-upsampled MS.

    Parameters
    ----------
    sensor : str or Sensor
        Sensor whose MTF is used (its band count must match, or select a band subset).
    ratio : int, optional
        Defaults to the sensor's nominal ratio.
    fused, ms, block_size, ms_exp
        As :func:`d_lambda`.

    Returns
    -------
    float
        D_lambda_K, in [0, 1] (0: the fused image's low-pass content matches the MS).

    References
    ----------
    Khan et al., IEEE TGRS 47(11), 2009; Vivone et al., IEEE GRSM 2021.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> ms = np.random.default_rng(0).integers(100, 2000, (16, 16, 4)).astype(float)
    >>> 0.0 <= d_lambda_k(interp23tap(ms, 4), ms, sensor="QB") <= 1.0
    True
    """
    case = _Case.build(fused, ms, None, ratio=ratio, block_size=block_size, ms_exp=ms_exp, protocol="toolbox2020",
                       variant=None, nan_policy="raise", sensor=sensor, index="d_lambda_k", dn=True)
    return case.d_lambda_k()


def hqnr(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, sensor: str | Sensor, ratio: int | None = None,
         block_size: int = 32, q: float = 1.0, ms_exp: np.ndarray | None = None,
         protocol: str | Protocol = "toolbox2020", nan_policy: NanPolicy = "raise", variant: str | None = None) -> float:
    """Hybrid QNR: ``(1 - D_lambda_K)(1 - D_s)`` (toolbox 2020 ``HQNR``), built from
    :func:`d_lambda_k` and :func:`d_s` (whose parameters these are).

    Returns
    -------
    float
        In [0, 1]; 1 = best.

    References
    ----------
    Aiazzi et al., "Full scale assessment of pansharpening methods and data products", Proc. SPIE
    9244, 2014; Vivone et al., IEEE GRSM 2021.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> round(hqnr(interp23tap(ms, 4), ms, pan, sensor="none", ratio=4), 4)
    0.8683
    """
    case = _Case.build(fused, ms, pan, ratio=ratio, block_size=block_size, ms_exp=ms_exp, protocol=protocol,
                       variant=variant, nan_policy=nan_policy, sensor=sensor, index="hqnr", dn=True)
    return float((1.0 - case.d_lambda_k()) * (1.0 - case.d_s(q)))

"""The public full-resolution (no reference) indexes: D_lambda, D_s, QNR, Khan's D_lambda_K, HQNR.

Each function validates its inputs, computes its statistics with the one full-resolution engine
(``pansharp_iqa.indexes.full_pass``) under the protocol's conventions (its reference terms and
low-pass PAN are the catalogue's derived images) and finalizes them with the formulas of
``pansharp_iqa.indexes.full_resolution`` and its exponents. This module sits above
:mod:`pansharp_iqa.protocols`; the formulas below it do not read protocols.

References
----------
Alparone et al., PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193. Khan, Alparone, Chanussot, IEEE TGRS
47(11), 2009, doi:10.1109/TGRS.2009.2029094. Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np

from .foreign import Layout, batched
from .indexes.catalog import ChunkContext, get_statistic
from .indexes.full_pass import Scene, given_planes
from .indexes.full_resolution import (
    BLOCK_FAMILIES,
    NanPolicy,
    d_lambda_from_means,
    d_lambda_k_from_sums,
    d_s_from_means,
    mean_block_uiqi,
)
from .protocols import Protocol, get_protocol
from .rules import Evidence, apply_rules
from .sensors import Sensor, resolve_sensor
from .validation import (
    SettingError,
    check_block_size,
    check_choice,
    check_multiple_of,
    check_pan_ratio,
    check_ratio,
    image_array,
    image_facts,
    pan_array,
)

__all__ = ["d_lambda", "d_s", "qnr", "d_lambda_k", "hqnr"]


# --------------------------------------------------------------------------- public functions


@dataclasses.dataclass
class _Case:
    """Validated inputs of one public full-resolution call, and the statistics it has computed."""

    scene: Scene
    n_bands: int
    nan_policy: str
    fields: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def build(cls, fused: np.ndarray, ms: np.ndarray, pan: np.ndarray | None, *, ratio: int | None, block_size: int,
              ms_exp: np.ndarray | None, protocol: str | Protocol, variant: str | None, nan_policy: str,
              sensor: str | Sensor | None, index: str, dn: bool = False) -> _Case:
        if variant is not None:
            warnings.warn(f"{index}(variant=...) is deprecated: use protocol=... (the same names)",
                          DeprecationWarning, stacklevel=3)
            protocol = variant
        proto = get_protocol(protocol)
        if proto.full_engine != "toolbox" or proto.fr_decimation_start is not None:  # HS/S2: other index forms
            own = (f"; its own form of {index} comes from evaluate_full(..., protocol={proto.name!r})"
                   if proto.fr_decimation_start is not None else "")
            raise SettingError(
                f"protocol {proto.name!r} has no toolbox-family {index}{own}; use one of the toolbox-family protocols "
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
        facts = {"fused": image_facts("fused", fus), "reference": image_facts("ms", ms_arr)}
        apply_rules(Evidence({**facts, "pan": image_facts("pan", pan_arr)} if pan_arr is not None else facts, casts=dn))
        planes: dict[str, Any] = {"fused": np.moveaxis(np.asarray(fus, dtype=np.float64), 2, 0),
                                  "ms": np.moveaxis(np.asarray(ms_arr, dtype=np.float64), 2, 0)}
        if pan_arr is not None:
            planes["pan"] = np.asarray(pan_arr, dtype=np.float64)[None]
        if ms_exp is not None:
            planes["exp"] = given_planes("ms_exp", ms_exp, fus.shape)
        ctx = ChunkContext(block_size=block_size, ratio=ratio, protocol=proto,
                           ms_gnyq=() if s is None else tuple(s.gnyq_for(fus.shape[2])),
                           pan_gnyq=s.pan_gnyq_for(protocol=proto.name) if s is not None and proto.d_s_uses_sensor
                           else None)
        return cls(Scene.of(planes, ctx), fus.shape[2], nan_policy)

    def sums(self, name: str) -> dict[str, Any]:
        """One statistic's fields over the whole image (computed once per call)."""
        if name not in self.fields:
            self.fields[name] = self.scene.sums([get_statistic(name)])[name]
        return self.fields[name]

    def _means(self, keys: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
        fields = self.sums("block_uiqi")
        high, low = (mean_block_uiqi(fields[k], what=BLOCK_FAMILIES[k], nan_policy=self.nan_policy) for k in keys)
        return high, low

    def d_lambda(self, p: float) -> float:
        return d_lambda_from_means(*self._means(("pairs_high", "pairs_low")), self.n_bands, float(p))

    def d_s(self, q: float) -> float:
        return d_s_from_means(*self._means(("pan_high", "pan_low")), float(q))

    def d_lambda_k(self) -> float:
        fields = self.sums("khan_q2n")
        return d_lambda_k_from_sums(fields["sum"], fields["count"])


@batched("fused", "ms", "ms_exp")
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
    layout: Layout | None = None,
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
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

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


@batched("fused", "ms", "ms_exp", pans=("pan",))
def d_s(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, ratio: int, block_size: int = 32, q: float = 1.0,
        ms_exp: np.ndarray | None = None, protocol: str | Protocol = "toolbox2020", sensor: str | Sensor | None = None,
        nan_policy: NanPolicy = "raise", variant: str | None = None, layout: Layout | None = None) -> float:
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
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

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


@batched("fused", "ms", "ms_exp", pans=("pan",))
def qnr(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, ratio: int, block_size: int = 32, p: float = 1.0,
        q: float = 1.0, alpha: float = 1.0, beta: float = 1.0, ms_exp: np.ndarray | None = None,
        protocol: str | Protocol = "toolbox2020", sensor: str | Sensor | None = None, nan_policy: NanPolicy = "raise",
        variant: str | None = None, layout: Layout | None = None) -> float:
    """Quality with no reference: ``(1 - D_lambda)^alpha (1 - D_s)^beta`` (toolbox ``QNR``).

    Built from :func:`d_lambda` and :func:`d_s`; ``alpha`` and ``beta`` weight the two terms, the
    other parameters are theirs.

    Parameters
    ----------
    alpha, beta : float, default 1
        Exponents of the spectral ``(1 - D_lambda)`` and spatial ``(1 - D_s)`` terms.
    fused, ms, pan, ratio, block_size, p, q, ms_exp, protocol, sensor, nan_policy, variant
        As :func:`d_lambda` and :func:`d_s`.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

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
    >>> parts = (1 - d_lambda(exp, ms, ratio=4)) * (1 - d_s(exp, ms, pan, ratio=4))
    >>> round(qnr(exp, ms, pan, ratio=4), 4) == round(parts, 4)
    True
    """
    case = _Case.build(fused, ms, pan, ratio=ratio, block_size=block_size, ms_exp=ms_exp, protocol=protocol,
                       variant=variant, nan_policy=nan_policy, sensor=sensor, index="qnr")
    return float((1.0 - case.d_lambda(p)) ** alpha * (1.0 - case.d_s(q)) ** beta)


@batched("fused", "ms", "ms_exp")
def d_lambda_k(
    fused: np.ndarray,
    ms: np.ndarray,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    block_size: int = 32,
    ms_exp: np.ndarray | None = None,
    layout: Layout | None = None,
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
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

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


@batched("fused", "ms", "ms_exp", pans=("pan",))
def hqnr(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, sensor: str | Sensor, ratio: int | None = None,
         block_size: int = 32, q: float = 1.0, ms_exp: np.ndarray | None = None,
         protocol: str | Protocol = "toolbox2020", nan_policy: NanPolicy = "raise", variant: str | None = None,
         layout: Layout | None = None) -> float:
    """Hybrid QNR: ``(1 - D_lambda_K)(1 - D_s)`` (toolbox 2020 ``HQNR``), built from
    :func:`d_lambda_k` and :func:`d_s` (whose parameters these are).

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, block_size, q, ms_exp, protocol, nan_policy, variant
        As :func:`d_lambda_k` and :func:`d_s`.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

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

"""Differentiable full-resolution indexes for training: D_s, D_lambda_K, HQNR, D_s_R and RQNR in PyTorch.

Unsupervised pansharpening networks train on the full-resolution indexes themselves (Z-PNN and
lambda-PNN on D_lambda/D_s-like losses, Ciotola et al., IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2022.3184474; Restaino et al., Remote Sensing 17(1):16, 2025, on RQNR). These
functions compute them on batches ``(N, C, H, W)`` of PyTorch tensors, on the tensors' device, in
their dtype (float32 or float64), and back-propagate to the fused image:

* :func:`d_s`: the 2020 toolbox's D_s (block UIQI of each fused band with the PAN against the EXP
  band with the low-pass PAN);
* :func:`d_lambda_k`: Khan's ``1 - Q2n(EXP, MTF(fused))`` with the hypercomplex Q2n;
* :func:`hqnr`: ``(1 - D_lambda_K)^alpha (1 - D_s)^beta``;
* :func:`d_s_r`: the GRSM 2022 regression D_s_R = ``var(P - F w) / var(P)``, ``w`` the global
  no-intercept least-squares fit of the PAN on the fused bands;
* :func:`rqnr`: ``(1 - D_lambda_K)^alpha (1 - D_s_R)^beta``.

Each returns one value per image, shape ``(N,)`` (``reduction="mean"``: their mean). Only the fused
image carries gradients: the MS, the PAN, the EXP-upsampled MS and the low-pass PAN are data, computed
without gradient by the library's float64 device operators (``pansharp_iqa.torch_ops``) and
cast to the fused image's dtype.

**Equal to the exact indexes** (:func:`pansharp_iqa.d_s`, :func:`pansharp_iqa.d_lambda_k`,
:func:`pansharp_iqa.hqnr`, ``pansharp_iqa.indexes.regression.d_s_r`` and ``rqnr``) within
1e-10 relative in float64 wherever the reference is differentiable, and D_lambda_K with
``cast="straight-through"`` (the reference's uint16 cast in the forward pass) too; the D_s_R and
RQNR of the authors' MATLAB code run in Octave (``tests/spec/data/grsm2022``) within 1e-10
(``tests/tensor/test_losses.py``). The sums are taken in another order than the host's (centred
block moments, not the exact integer sums of Q2n's host path): the largest difference measured
there is 9.6e-14 relative.

**The deviation: Q2n's uint16 cast.** The reference rounds both Q2n operands to integers
(MATLAB ``uint16``: round half away from zero, saturate to [0, 65535]), a step function whose
gradient is 0 almost everywhere. ``cast="none"`` (the default) omits it on both operands: Q2n of the
real-valued images, invariant to a common scale of the data (networks on [0, 1] data need no
rescaling). Measured against the exact D_lambda_K on the real 11-bit scenes of ``../shared/data``
(``benchmarks/measure_losses.py``: WV2 and IKONOS, two 96 x 96 and two 512 x 512 PAN-pixel crops
each, EXP and GSA fusions, D_lambda_K from 0.033 to 0.15): absolute difference <= 8.0e-5 (<= 8.2e-4
relative) on WV2, <= 4.8e-4 (<= 7.5e-3 relative) on IKONOS (8-bit data scaled by 8); the uncast
index is mostly the lower (the cast's rounding adds noise to both operands). HQNR and RQNR
inherit it: <= 4.5e-4 and <= 3.6e-4. ``cast="straight-through"`` applies the reference's cast in
the forward pass (the exact values, measured difference <= 1.1e-16) and passes the gradient
through it as the identity (a straight-through estimator: the gradient of the uncast Q2n at the
cast images). Float32 inputs give the float64 values within 4.1e-7.

**Where the functions are not differentiable**, and what the gradient is there:

* ``|Q(F_b, P) - Q(EXP_b, P_L)|`` in D_s at 0: PyTorch's subgradient ``sign(0) = 0`` (the
  midpoint of the subdifferential [-1, 1]); for ``q != 1`` the outer ``^(1/q)`` has an infinite
  derivative where D_s = 0;
* a constant block (UIQI 0/0, the toolbox's NaN): undefined, refused by ``nan_policy="raise"``
  (a block of the PAN or the EXP, which are data, and of the fused band at once);
* Q2n's block value ``|q|`` (the modulus) at ``q = 0`` (the block's weighted cross-covariances
  cancel, e.g. a constant EXP block): subgradient 0 (:func:`torch.linalg.vector_norm`, where
  ``sqrt(sum q^2)`` would give NaN); a block whose two operands both have zero variance takes the
  reference's ``mean_bias`` branch, whose gradient is computed with a safe denominator (no NaN);
* Q2n's zero EXP block standard deviation is replaced by machine epsilon as in the reference
  (the EXP is data: no gradient goes through it);
* the cast (``"straight-through"``): see above;
* D_s_R: the fit ``w`` is :func:`torch.linalg.lstsq`'s (LAPACK QR, as NumPy's), computed without
  gradient; the gradient comes from one Gauss-Newton step from it, ``w + G^+ F^T (P - F w)`` with
  ``G = F^T F`` held constant, whose value is ``w`` (to rounding) and whose first derivative is that
  of the least-squares solution, ``G^-1 (dF^T e - F^T dF w)``, in O(H W C^2) memory
  (:func:`torch.linalg.lstsq`'s own backward builds (H W)^2 matrices: 2 GiB for 128 x 128 pixels).
  Second derivatives are not those of D_s_R in general (``gradgradcheck`` fails on inputs whose
  residual has a large mean): no double back-propagation through D_s_R;
* D_s_R at linearly dependent fused bands: the regression's column space changes dimension, so
  D_s_R is not even continuous there. On the CPU ``lstsq`` (LAPACK ``gelsy``, rank-revealing,
  ``rcond = eps max(H W, C)`` as NumPy's) returns the residual of the minimum-norm fit, equal to
  the exact index, and the pseudo-inverse ``G^+`` gives the gradient of that rank (finite); on
  CUDA only the ``gels`` driver exists (QR without pivoting), which assumes full rank.

References
----------
Vivone et al., "A New Benchmark Based on Recent Advances in Multispectral Pansharpening", IEEE GRSM
9(1), 2021, doi:10.1109/MGRS.2020.3019315 (D_s, D_lambda_K, HQNR of the 2020 toolbox). Khan,
Alparone, Chanussot, IEEE TGRS 47(11), 2009, doi:10.1109/TGRS.2009.2029094 (D_lambda_K).
Garzelli & Nencini, IEEE GRSL 6(4), 2009, doi:10.1109/LGRS.2009.2022650 (Q2n). Arienzo et al.,
"Full-resolution quality assessment of pansharpening", IEEE GRSM 10(3), 2022,
doi:10.1109/MGRS.2022.3170092 (D_s_R, RQNR). Alparone, Garzelli, Vivone, Proc. IGARSS 2018
(D_s_R). Bengio, Leonard, Courville, arXiv:1308.3432, 2013 (straight-through estimator).
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch

from .. import torch_ops as ops
from ..foreign import check_same_device
from ..hypercomplex import structure_constants
from ..indexes.uiqi import uiqi_from_moments
from ..mtf import mtf_kernel
from ..sensors import Sensor, resolve_sensor
from ..validation import (
    ConstantBlockError,
    InputError,
    SettingError,
    ShapeError,
    check_block_size,
    check_choice,
    check_gnyq,
    check_multiple_of,
    check_pan_ratio,
    check_ratio,
    check_sensor_bands,
)

__all__ = ["d_s", "d_lambda_k", "hqnr", "d_s_r", "rqnr", "Cast", "Reduction"]

Cast = Literal["none", "straight-through"]
Reduction = Literal["none", "mean"]

_DTYPES = (torch.float32, torch.float64)
_EPS = float(np.finfo(np.float64).eps)  # the reference's floor of a zero block std (MATLAB eps)


# --------------------------------------------------------------------------- inputs


def _fused(x: object) -> torch.Tensor:
    """The fused batch: a float32/float64 (N, C, H, W) tensor."""
    if not isinstance(x, torch.Tensor):
        raise InputError(f"fused must be a torch.Tensor (N, C, H, W), got {type(x).__name__}")
    if x.dtype not in _DTYPES:
        raise InputError(f"fused must be float32 or float64 (the dtype the index is computed in), got {x.dtype}")
    if x.ndim != 4:
        raise ShapeError(f"fused must be a batch (N, C, H, W), got shape {tuple(x.shape)}")
    return x


def _data(name: str, x: object, fused: torch.Tensor, *, pan: bool = False) -> torch.Tensor:
    """A data batch (MS, PAN, EXP) detached, in the fused image's dtype; a PAN as (N, 1, H, W)."""
    if not isinstance(x, torch.Tensor):
        raise InputError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.is_complex():
        raise InputError(f"{name} must be real, got dtype {x.dtype}")
    check_same_device({"fused": fused, name: x})
    if pan and x.ndim == 3:
        x = x[:, None]
    if x.ndim != 4 or (pan and x.shape[1] != 1):
        want = "(N, 1, H, W) or (N, H, W)" if pan else "(N, C, H, W)"
        raise ShapeError(f"{name} must be a batch {want}, got shape {tuple(x.shape)}")
    if x.shape[0] != fused.shape[0]:
        raise ShapeError(f"{name} has {x.shape[0]} images but fused has {fused.shape[0]}")
    return x.detach().to(fused.dtype)


def _hwc(t: torch.Tensor) -> types.SimpleNamespace:
    """A shape holder (H, W, C) of a batch, for the geometry checks."""
    return types.SimpleNamespace(shape=(int(t.shape[2]), int(t.shape[3]), int(t.shape[1])))


def _geometry(fused: torch.Tensor, ms: torch.Tensor, pan: torch.Tensor | None, ratio: int, block_size: int) -> None:
    """PAN = fused grid = ratio x MS grid, same bands, H and W multiples of the block size."""
    check_pan_ratio(_hwc(fused), _hwc(ms), _hwc(fused if pan is None else pan), ratio,
                    pan_name="fused" if pan is None else "pan")
    check_multiple_of("fused", _hwc(fused).shape, block_size, why="the toolbox's block-wise indexes require it")


def _exp(ms: torch.Tensor, ms_exp: object, fused: torch.Tensor, ratio: int) -> torch.Tensor:
    """The EXP-upsampled MS (23-tap, float64 then the fused dtype), or the caller's, checked."""
    if ms_exp is None:
        with torch.no_grad():
            return ops.interp23tap(ms, ratio).to(fused.dtype)
    exp = _data("ms_exp", ms_exp, fused)
    if exp.shape != fused.shape:
        raise ShapeError(f"ms_exp {tuple(exp.shape)} must have the fused image's shape {tuple(fused.shape)}")
    return exp


def _gnyq(sensor: str | Sensor | None, gnyq: Sequence[float] | None, n_bands: int) -> tuple[float, ...]:
    """The per-band MS GNyq: from the sensor or given, exactly one of them."""
    if (sensor is None) == (gnyq is None):
        raise SettingError("give the MTF as sensor=... (a registry name or Sensor) or gnyq=... (per-band gains), "
                           f"exactly one of them; got sensor={sensor!r}, gnyq={gnyq!r}")
    if sensor is not None:
        return check_sensor_bands(resolve_sensor(sensor), n_bands, name="fused")
    values = tuple(check_gnyq(g) for g in gnyq)  # type: ignore[union-attr]
    if len(values) != n_bands:
        raise SettingError(f"gnyq has {len(values)} values for {n_bands} bands")
    return values


def _reduce(values: torch.Tensor, reduction: str) -> torch.Tensor:
    """Per-image values (N,), or their mean."""
    check_choice("reduction", reduction, ("none", "mean"))
    return values.mean() if reduction == "mean" else values


# --------------------------------------------------------------------------- operators


def _blocks(x: torch.Tensor, bs: int) -> torch.Tensor:
    """Non-overlapping blocks of a (N, C, H, W) batch as (N, n_blocks, C, bs*bs), row-major blocks."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // bs, bs, w // bs, bs).permute(0, 2, 4, 1, 3, 5).reshape(n, -1, c, bs * bs)


def _mtf_filter(x: torch.Tensor, kernels: np.ndarray) -> torch.Tensor:
    """Per-band 2-D correlation, same size, replicate border (``imfilter(I, h, 'replicate')``) in x's dtype, by FFT."""
    k = torch.from_numpy(np.ascontiguousarray(kernels)).to(device=x.device, dtype=x.dtype)
    kh, kw = int(k.shape[1]), int(k.shape[2])
    h, w = int(x.shape[2]), int(x.shape[3])
    padded = torch.nn.functional.pad(x, (kw // 2, kw // 2, kh // 2, kh // 2), mode="replicate")
    size = (-(-(h + kh - 1) // 32) * 32, -(-(w + kw - 1) // 32) * 32)  # no wrap-around into the first H x W
    spec = torch.fft.rfft2(padded, s=size) * torch.fft.rfft2(k, s=size).conj()
    return torch.fft.irfft2(spec, s=size)[:, :, :h, :w]


def _band_vs_pan_uiqi(x: torch.Tensor, y: torch.Tensor, bs: int) -> torch.Tensor:
    """Block UIQI (toolbox ``uqi``, sample moments) of each band of x with y (N, 1, H, W): (N, n_blocks, C)."""
    xb, yb = _blocks(x, bs), _blocks(y, bs)
    n_pix = bs * bs
    mx, my = xb.mean(dim=3), yb.mean(dim=3)
    xc, yc = xb - mx[..., None], yb - my[..., None]
    vx, vy = (xc * xc).sum(dim=3) / (n_pix - 1), (yc * yc).sum(dim=3) / (n_pix - 1)
    cxy = (xc * yc).sum(dim=3) / (n_pix - 1)
    moments: Any = (cxy, vx, vy, mx, my)  # the core's formula is plain arithmetic: tensors in, a tensor out
    return typing.cast(torch.Tensor, uiqi_from_moments(*moments))


def _q2n_blocks(ref: torch.Tensor, fus: torch.Tensor, bs: int) -> torch.Tensor:
    """Q2n block values ``|q|`` (N, n_blocks): the formula of ``hypercomplex.block_q_from_moments``, in torch."""
    rb, fb = _blocks(ref, bs), _blocks(fus, bs)
    n_pix = bs * bs
    mean_r, mean_f = rb.mean(dim=3), fb.mean(dim=3)
    rc, fc = rb - mean_r[..., None], fb - mean_f[..., None]
    var_r, var_f = (rc * rc).sum(dim=3) / n_pix, (fc * fc).sum(dim=3) / n_pix  # biased (1/n)
    cross = torch.matmul(rc, fc.transpose(2, 3)) / n_pix  # (N, K, C, C)
    c = int(ref.shape[1])
    n_comp = 1 << (c - 1).bit_length()
    if n_comp != c:  # the band axis zero-padded to a power of two: zero moments
        pad = n_comp - c
        mean_r, mean_f, var_r, var_f = (torch.nn.functional.pad(m, (0, pad)) for m in (mean_r, mean_f, var_r, var_f))
        cross = torch.nn.functional.pad(cross, (0, pad, 0, pad))
    k = n_pix / (n_pix - 1.0)
    std = torch.sqrt(var_r * (n_pix / (n_pix - 1)))  # MATLAB std2 (N-1) of the reference block
    std = torch.where(std == 0, torch.full_like(std, _EPS), std)
    a_r = 1.0 / std
    zero_mean = mean_r == 0
    a_f = torch.where(zero_mean, torch.ones_like(a_r), a_r)
    w_mean = torch.where(zero_mean, mean_f + 1.0, (mean_f - mean_r) * a_r + 1.0)
    sign = torch.ones(n_comp, dtype=ref.dtype, device=ref.device)
    sign[1:] = -1.0  # conjugation of the fused number
    m2 = w_mean * sign
    mod1 = float(n_comp)  # the normalised reference's block means are exactly 1
    mod2 = (m2 * m2).sum(dim=-1)
    term3 = k * ((a_r * a_r * var_r).sum(dim=-1) + (a_f * a_f * var_f).sum(dim=-1))
    mean_bias = 2.0 * torch.sqrt(mod1 * mod2) / (mod1 + mod2)
    table = torch.tensor(structure_constants(n_comp), dtype=ref.dtype, device=ref.device)
    scaled = cross * a_r[..., :, None] * (a_f * sign)[..., None, :]
    qv = k * torch.einsum("kij,nbij->nbk", table, scaled)
    degenerate = term3 == 0
    q = qv * (mean_bias * 2.0 / torch.where(degenerate, torch.ones_like(term3), term3))[..., None]
    return torch.where(degenerate, mean_bias.abs(), torch.linalg.vector_norm(q, dim=-1))


def _to_uint16(x: torch.Tensor) -> torch.Tensor:
    """MATLAB ``uint16(x)`` (round half away from zero, saturate) in x's dtype, without gradient."""
    with torch.no_grad():
        return ops.to_uint16_matlab(x.detach()).to(x.dtype)


# --------------------------------------------------------------------------- the indexes


def _exponent(name: str, value: object, *, positive: bool = False) -> float:
    """A finite exponent, >= 0 (> 0 if ``positive``)."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and (v > 0 if positive else v >= 0)):
        raise SettingError(f"{name} must be a finite number {'>' if positive else '>='} 0, got {value!r}")
    return v


def _d_s(fused: torch.Tensor, ms: object, pan: object, ratio: int, block_size: int, q: float, ms_exp: object,
         nan_policy: str) -> torch.Tensor:
    """Per-image D_s of validated settings."""
    check_choice("nan_policy", nan_policy, ("raise", "propagate"))
    q = _exponent("q", q, positive=True)
    ms_t, pan_t = _data("ms", ms, fused), _data("pan", pan, fused, pan=True)
    _geometry(fused, ms_t, pan_t, ratio, block_size)
    exp = _exp(ms_t, ms_exp, fused, ratio)
    with torch.no_grad():
        low_pan = ops.interp23tap(ops.imresize(pan_t, 1.0 / ratio), ratio).to(fused.dtype)
        q_low = _band_vs_pan_uiqi(exp, low_pan, block_size)  # (N, K, C)
    q_high = _band_vs_pan_uiqi(fused, pan_t, block_size)
    if nan_policy == "raise" and bool(torch.isnan(q_low).any() | torch.isnan(q_high.detach()).any()):
        raise ConstantBlockError(
            "D_s: some blocks are constant (zero variance in both images, or zero means), where UIQI is 0/0 and "
            "the reference toolbox returns NaN. Crop the flat area, or pass nan_policy='propagate' for the NaN")
    diff = torch.abs(q_high.mean(dim=1) - q_low.mean(dim=1))  # (N, C)
    if q == 1.0:
        return diff.mean(dim=1)
    return (diff**q).mean(dim=1) ** (1.0 / q)


def _d_lambda_k(fused: torch.Tensor, ms: object, ratio: int, sensor: str | Sensor | None,
                gnyq: Sequence[float] | None, block_size: int, cast: str, ms_exp: object) -> torch.Tensor:
    """Per-image D_lambda_K of validated settings."""
    check_choice("cast", cast, ("none", "straight-through"))
    ms_t = _data("ms", ms, fused)
    _geometry(fused, ms_t, None, ratio, block_size)
    gains = _gnyq(sensor, gnyq, int(fused.shape[1]))
    exp = _exp(ms_t, ms_exp, fused, ratio)
    low = _mtf_filter(fused, np.stack([mtf_kernel(g, ratio) for g in gains]))
    if cast == "straight-through":
        exp = _to_uint16(exp)
        low = low + (_to_uint16(low) - low).detach()
    return 1.0 - _q2n_blocks(exp, low, block_size).mean(dim=1)


def _settings(ratio: object, block_size: object) -> tuple[int, int]:
    """The checked ratio (one the EXP interpolator takes) and block size."""
    return check_ratio(ratio, exp=True), check_block_size(block_size)


def d_s(fused: torch.Tensor, ms: torch.Tensor, pan: torch.Tensor, *, ratio: int, block_size: int = 32,
        q: float = 1.0, ms_exp: torch.Tensor | None = None, nan_policy: Literal["raise", "propagate"] = "raise",
        reduction: Reduction = "none") -> torch.Tensor:
    """Spatial distortion D_s of the 2020 toolbox, differentiable with respect to the fused image.

    ``(mean_b |Q(F_b, P) - Q(EXP_b, P_L)|^q)^(1/q)`` with Q the mean block UIQI (non-overlapping
    ``block_size`` blocks, sample moments), ``EXP = interp23tap(MS, ratio)`` and the low-pass PAN
    ``P_L = interp23tap(imresize(P, 1/ratio), ratio)``; EXP and ``P_L`` do not depend on the fused
    image and are computed without gradient.

    Parameters
    ----------
    fused : torch.Tensor, shape (N, C, H, W), float32 or float64
        Fused images (DN, or any unit common to the three inputs); H, W multiples of ``block_size``.
    ms : torch.Tensor, shape (N, C, H/ratio, W/ratio)
        Low-resolution MS, same unit.
    pan : torch.Tensor, shape (N, 1, H, W) or (N, H, W)
        PAN, same unit.
    ratio : int
        PAN/MS resolution ratio, one the EXP interpolator takes (``interp23tap``: a power of two).
    block_size : int, default 32
        Block side (pixels).
    q : float, default 1
        Exponent of the band differences.
    ms_exp : torch.Tensor, optional
        Precomputed EXP-upsampled MS, shape of ``fused``.
    nan_policy : {"raise", "propagate"}
        A constant block makes UIQI 0/0: raise :class:`~pansharp_iqa.validation.ConstantBlockError`
        (the library's default; one host synchronisation per call) or return the toolbox's NaN.
    reduction : {"none", "mean"}
        Per-image values (N,) or their mean.

    Returns
    -------
    torch.Tensor, shape (N,) or ()
        D_s (dimensionless, in [0, 1]; 0 = spatial relations to the PAN preserved), in the fused
        image's dtype; gradients flow to ``fused`` only.

    Notes
    -----
    Equal to :func:`pansharp_iqa.d_s` within 1e-10 relative in float64. ``|.|`` has a kink where a
    band's two mean UIQIs are equal: there the gradient uses PyTorch's subgradient ``sign(0) = 0``.
    See the module's notes for the other non-differentiable points.

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193; Vivone et al., IEEE GRSM 9(1), 2021,
    doi:10.1109/MGRS.2020.3019315.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> ms = 100 + 1900 * torch.rand(2, 4, 16, 16, generator=g, dtype=torch.float64)
    >>> pan = 100 + 1900 * torch.rand(2, 1, 64, 64, generator=g, dtype=torch.float64)
    >>> fused = torch.nn.functional.interpolate(ms, scale_factor=4, mode="bilinear").requires_grad_()
    >>> value = d_s(fused, ms, pan, ratio=4)
    >>> value.shape, bool(((0 <= value) & (value <= 1)).all())
    (torch.Size([2]), True)
    >>> value.sum().backward()
    >>> fused.grad.shape
    torch.Size([2, 4, 64, 64])
    """
    f = _fused(fused)
    r, bs = _settings(ratio, block_size)
    return _reduce(_d_s(f, ms, pan, r, bs, q, ms_exp, nan_policy), reduction)


def d_lambda_k(fused: torch.Tensor, ms: torch.Tensor, *, ratio: int, sensor: str | Sensor | None = None,
               gnyq: Sequence[float] | None = None, block_size: int = 32, cast: Cast = "none",
               ms_exp: torch.Tensor | None = None, reduction: Reduction = "none") -> torch.Tensor:
    """Khan's spectral distortion D_lambda_K of the 2020 toolbox, differentiable with respect to the fused image.

    ``1 - Q2n(EXP, MTF(F))``: the fused bands filtered with the sensor's per-band MTF (41 x 41
    kernels of :func:`pansharp_iqa.mtf.mtf_kernel`, replicate border, not decimated) against the
    EXP-upsampled MS by the hypercomplex Q2n on non-overlapping ``block_size`` blocks (band axis
    zero-padded to a power of two, each block normalised by the EXP block's mean and std).

    Parameters
    ----------
    fused : torch.Tensor, shape (N, C, H, W), float32 or float64
        Fused images; H, W multiples of ``block_size``. DN for ``cast="straight-through"``;
        any unit common with ``ms`` for ``cast="none"``.
    ms : torch.Tensor, shape (N, C, H/ratio, W/ratio)
        Low-resolution MS, same unit.
    ratio : int
        PAN/MS resolution ratio, one the EXP interpolator takes (``interp23tap``: a power of two).
    sensor : str or Sensor, optional
        Sensor whose MS MTF filters the fused image (its band count must fit).
    gnyq : sequence of float, optional
        Per-band MTF gains at Nyquist instead of ``sensor`` (exactly one of the two).
    block_size : int, default 32
        Block side (pixels).
    cast : {"none", "straight-through"}
        ``"none"``: Q2n of the real-valued images (the reference's uint16 cast omitted: the
        deviation, measured below). ``"straight-through"``: the reference's cast in the forward
        pass (the exact index), the identity in the backward pass.
    ms_exp : torch.Tensor, optional
        Precomputed EXP-upsampled MS, shape of ``fused``.
    reduction : {"none", "mean"}
        Per-image values (N,) or their mean.

    Returns
    -------
    torch.Tensor, shape (N,) or ()
        D_lambda_K (dimensionless, in [0, 1]; 0 = the fused image's low-pass content matches the
        MS), in the fused image's dtype; gradients flow to ``fused`` only.

    Notes
    -----
    ``cast="straight-through"`` equals :func:`pansharp_iqa.d_lambda_k` within 1e-10 relative in
    float64. ``cast="none"`` differs from it by the cast alone (it equals the library's float Q2n
    of the uncast images, ``pansharp_iqa.hypercomplex.block_q_values``, within 1e-10): on real
    11-bit crops (96 x 96 and 512 x 512 PAN pixels, EXP and GSA fusions) by at most 8.0e-5
    absolute (8.2e-4 relative) on WV2, 4.8e-4 (7.5e-3 relative) on IKONOS
    (``benchmarks/measure_losses.py``). Q2n's modulus has subgradient 0 at ``q = 0``.

    References
    ----------
    Khan, Alparone, Chanussot, IEEE TGRS 47(11), 2009, doi:10.1109/TGRS.2009.2029094; Garzelli &
    Nencini, IEEE GRSL 6(4), 2009, doi:10.1109/LGRS.2009.2022650; Vivone et al., IEEE GRSM 9(1),
    2021, doi:10.1109/MGRS.2020.3019315.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> ms = 100 + 1900 * torch.rand(2, 4, 16, 16, generator=g, dtype=torch.float64)
    >>> fused = torch.nn.functional.interpolate(ms, scale_factor=4, mode="bicubic").requires_grad_()
    >>> value = d_lambda_k(fused, ms, ratio=4, sensor="QB")
    >>> value.shape, bool(((0 <= value) & (value <= 1)).all())
    (torch.Size([2]), True)
    >>> d_lambda_k(fused, ms, ratio=4, sensor="QB", reduction="mean").backward()
    >>> bool(torch.isfinite(fused.grad).all())
    True
    """
    f = _fused(fused)
    r, bs = _settings(ratio, block_size)
    return _reduce(_d_lambda_k(f, ms, r, sensor, gnyq, bs, cast, ms_exp), reduction)


def _compose(dl: torch.Tensor, ds: torch.Tensor, alpha: float, beta: float) -> torch.Tensor:
    """``(1 - dl)^alpha (1 - ds)^beta`` (plain products for the unit exponents)."""
    a = 1.0 - dl if alpha == 1.0 else (1.0 - dl) ** alpha
    b = 1.0 - ds if beta == 1.0 else (1.0 - ds) ** beta
    return a * b


def hqnr(fused: torch.Tensor, ms: torch.Tensor, pan: torch.Tensor, *, ratio: int,
         sensor: str | Sensor | None = None, gnyq: Sequence[float] | None = None, block_size: int = 32,
         q: float = 1.0, alpha: float = 1.0, beta: float = 1.0, cast: Cast = "none",
         ms_exp: torch.Tensor | None = None, nan_policy: Literal["raise", "propagate"] = "raise",
         reduction: Reduction = "none") -> torch.Tensor:
    """Hybrid QNR ``(1 - D_lambda_K)^alpha (1 - D_s)^beta``, differentiable with respect to the fused image.

    Built from :func:`d_lambda_k` and :func:`d_s` (one EXP for both); with ``alpha = beta = 1``
    the 2020 toolbox's HQNR, other exponents as the GRSM 2022 code's ``HQNR``
    (``pansharp_iqa.indexes.regression.QNR_LIKE_EXPONENTS``).

    Parameters
    ----------
    fused, ms, pan, ratio, block_size, q, ms_exp, nan_policy
        As :func:`d_s`.
    sensor, gnyq, cast
        As :func:`d_lambda_k`.
    alpha, beta : float, default 1
        Exponents of the spectral and spatial terms.
    reduction : {"none", "mean"}
        Per-image values (N,) or their mean.

    Returns
    -------
    torch.Tensor, shape (N,) or ()
        HQNR (dimensionless, in [0, 1]; 1 = best). A loss: ``1 - hqnr(...)``.

    Notes
    -----
    With ``cast="straight-through"`` equal to :func:`pansharp_iqa.hqnr` within 1e-10 relative in
    float64; ``cast="none"`` deviates by D_lambda_K's cast only (:func:`d_lambda_k`).

    References
    ----------
    Aiazzi et al., Proc. SPIE 9244, 2014, doi:10.1117/12.2067770; Vivone et al., IEEE GRSM 9(1),
    2021, doi:10.1109/MGRS.2020.3019315; Arienzo et al., IEEE GRSM 10(3), 2022,
    doi:10.1109/MGRS.2022.3170092.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> ms = 100 + 1900 * torch.rand(1, 4, 16, 16, generator=g, dtype=torch.float64)
    >>> pan = 100 + 1900 * torch.rand(1, 64, 64, generator=g, dtype=torch.float64)
    >>> fused = torch.nn.functional.interpolate(ms, scale_factor=4, mode="bicubic").requires_grad_()
    >>> loss = 1 - hqnr(fused, ms, pan, ratio=4, sensor="QB", reduction="mean")
    >>> loss.backward()
    >>> 0 < loss.item() < 1, fused.grad.dtype
    (True, torch.float64)
    """
    f = _fused(fused)
    r, bs = _settings(ratio, block_size)
    a, b = _exponent("alpha", alpha), _exponent("beta", beta)
    ms_t = _data("ms", ms, f)
    _geometry(f, ms_t, None, r, bs)
    exp = _exp(ms_t, ms_exp, f, r)
    dl = _d_lambda_k(f, ms_t, r, sensor, gnyq, bs, cast, exp)
    ds = _d_s(f, ms_t, pan, r, bs, q, exp, nan_policy)
    return _reduce(_compose(dl, ds, a, b), reduction)


def _d_s_r(fused: torch.Tensor, pan: object) -> torch.Tensor:
    """Per-image D_s_R of a validated fused batch."""
    pan_t = _data("pan", pan, fused, pan=True)
    if pan_t.shape[2:] != fused.shape[2:]:
        raise ShapeError(f"pan {tuple(pan_t.shape[2:])} and fused {tuple(fused.shape[2:])} must have the same size "
                         "(PAN scale)")
    if fused.shape[2] * fused.shape[3] <= fused.shape[1]:
        raise ShapeError(f"fused: {fused.shape[2]}x{fused.shape[3]} pixels are too few to regress the PAN on "
                         f"{fused.shape[1]} bands")
    f = fused.flatten(2).transpose(1, 2)  # (N, H W, C)
    p = pan_t.flatten(2).transpose(1, 2)  # (N, H W, 1)
    e = _regression_residual(f, p)
    return torch.var(e, dim=(1, 2)) / torch.var(p, dim=(1, 2))


def _regression_residual(f: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """``p - f w``, w the least-squares fit (no intercept): exact value and first derivative in O(H W C^2) memory."""
    with torch.no_grad():
        w0 = torch.linalg.lstsq(f.detach(), p).solution  # (N, C, 1); LAPACK QR, as numpy.linalg.lstsq
        gram_pinv = torch.linalg.pinv(torch.matmul(f.detach().transpose(1, 2), f.detach()), hermitian=True)
    # one Gauss-Newton step from the solution: its value is w0 (the step is rounding-sized, a refinement), its
    # derivative that of argmin_w ||p - f w||, G^-1 (df^T r - f^T df w); torch.linalg.lstsq's own backward
    # builds (H W)^2 matrices (2 GiB for a 128 x 128 image)
    w = w0 + torch.matmul(gram_pinv, torch.matmul(f.transpose(1, 2), p - torch.matmul(f, w0)))
    return p - torch.matmul(f, w)


def d_s_r(fused: torch.Tensor, pan: torch.Tensor, *, reduction: Reduction = "none") -> torch.Tensor:
    """Regression-based spatial distortion D_s_R (GRSM 2022), differentiable with respect to the fused image.

    The PAN regressed on the fused bands, globally (all pixels), at PAN scale, without intercept:
    ``w = argmin ||P - F w||`` (:func:`torch.linalg.lstsq`, differentiable), then
    ``D_s_R = var(P - F w) / var(P)`` with sample (N - 1) variances.

    Parameters
    ----------
    fused : torch.Tensor, shape (N, C, H, W), float32 or float64
        Fused images (any unit common with ``pan``).
    pan : torch.Tensor, shape (N, 1, H, W) or (N, H, W)
        PAN.
    reduction : {"none", "mean"}
        Per-image values (N,) or their mean.

    Returns
    -------
    torch.Tensor, shape (N,) or ()
        D_s_R (dimensionless, >= 0; 0 when the PAN is a linear combination of the fused bands;
        above 1 only for a fit worse than the PAN's mean, possible without an intercept), in the
        fused image's dtype.

    Notes
    -----
    Equal to ``pansharp_iqa.indexes.regression.d_s_r`` within 1e-10 relative in float64, and
    to the authors' MATLAB ``D_s_R`` (run in Octave). Differentiable wherever the fused bands are
    linearly independent; see the module's notes for rank-deficient bands.

    References
    ----------
    Alparone, Garzelli, Vivone, "Spatial consistency for full-scale assessment of pansharpening",
    Proc. IGARSS 2018, pp. 5132-5134; Arienzo et al., IEEE GRSM 10(3), 2022,
    doi:10.1109/MGRS.2022.3170092.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> fused = (100 + 900 * torch.rand(2, 3, 32, 32, generator=g, dtype=torch.float64)).requires_grad_()
    >>> pan = (fused.detach() * torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)[:, None, None]).sum(dim=1)
    >>> d_s_r(fused, pan).abs().max() < 1e-20
    tensor(True)
    >>> d_s_r(fused, pan + 10 * torch.rand(2, 32, 32, generator=g, dtype=torch.float64), reduction="mean").backward()
    >>> fused.grad.shape
    torch.Size([2, 3, 32, 32])
    """
    return _reduce(_d_s_r(_fused(fused), pan), reduction)


def rqnr(fused: torch.Tensor, ms: torch.Tensor, pan: torch.Tensor, *, ratio: int,
         sensor: str | Sensor | None = None, gnyq: Sequence[float] | None = None, block_size: int = 32,
         alpha: float = 1.0, beta: float = 1.0, cast: Cast = "none", ms_exp: torch.Tensor | None = None,
         reduction: Reduction = "none") -> torch.Tensor:
    """Regression-based QNR ``(1 - D_lambda_K)^alpha (1 - D_s_R)^beta`` (GRSM 2022), differentiable.

    D_lambda_K as :func:`d_lambda_k` (the code's ``D_lambda_F``), D_s_R as :func:`d_s_r`.

    Parameters
    ----------
    fused, ms, ratio, sensor, gnyq, block_size, cast, ms_exp
        As :func:`d_lambda_k`.
    pan : torch.Tensor, shape (N, 1, H, W) or (N, H, W)
        PAN.
    alpha, beta : float, default 1
        The code's callers pass (1, 1) ("unitary") or (1.81, 0.90) ("overall"),
        ``pansharp_iqa.indexes.regression.QNR_LIKE_EXPONENTS``.
    reduction : {"none", "mean"}
        Per-image values (N,) or their mean.

    Returns
    -------
    torch.Tensor, shape (N,) or ()
        RQNR (dimensionless, 1 = best; in [0, 1] unless D_s_R exceeds 1, see :func:`d_s_r`). A loss:
        ``1 - rqnr(...)`` (Restaino et al., 2025).

    Notes
    -----
    With ``cast="straight-through"`` equal to ``pansharp_iqa.indexes.regression.rqnr`` and to
    the authors' MATLAB ``RQNR`` within 1e-10 relative in float64; ``cast="none"`` deviates by
    D_lambda_K's cast only.

    References
    ----------
    Arienzo et al., IEEE GRSM 10(3), 2022, doi:10.1109/MGRS.2022.3170092; Restaino et al., Remote
    Sensing 17(1):16, 2025, doi:10.3390/rs17010016 (RQNR as a training loss).

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> ms = 100 + 1900 * torch.rand(1, 4, 16, 16, generator=g, dtype=torch.float64)
    >>> fused = torch.nn.functional.interpolate(ms, scale_factor=4, mode="bicubic").requires_grad_()
    >>> pan = fused.detach().mean(dim=1) + 50 * torch.rand(1, 64, 64, generator=g, dtype=torch.float64)
    >>> loss = 1 - rqnr(fused, ms, pan, ratio=4, gnyq=(0.3,) * 4, reduction="mean")
    >>> loss.backward()
    >>> 0 < loss.item() < 1, tuple(fused.grad.shape)
    (True, (1, 4, 64, 64))
    """
    f = _fused(fused)
    r, bs = _settings(ratio, block_size)
    a, b = _exponent("alpha", alpha), _exponent("beta", beta)
    dl = _d_lambda_k(f, ms, r, sensor, gnyq, bs, cast, ms_exp)
    return _reduce(_compose(dl, _d_s_r(f, pan), a, b), reduction)

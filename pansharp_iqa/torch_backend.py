"""The PyTorch backend: every index's chunk statistics for a whole batch on the tensor's device.

For each statistic the catalogue (:mod:`pansharp_iqa.indexes.catalog`) declares with the
``"torch"`` backend this module has a device implementation, ``stat_<name>``, that computes the
same fields as the strip pass and the tile engine, one set per image, in float64 on the inputs'
device, from the operators of :mod:`.torch_ops`
(``interp23tap``, MATLAB's ``imresize``, the MTF filters, Sobel, window and block sums, the uint16
cast). Only per-image sums and per-block moments leave the device (never an image); the finalize
steps are the catalogue's shared ones, and the per-window UIQI
(:func:`~pansharp_iqa.indexes.uiqi.uiqi_from_window_sums`)
and per-block Q2n (:func:`~pansharp_iqa.hypercomplex.block_q_from_band_moments`) formulas are the
core's own functions. A reduced-resolution statistic declared for the host only is computed by
the strip pass on each image copied to the host (recorded in the card's ``batch.host_statistics``);
a full-resolution one is refused in one line. The value rules of :mod:`pansharp_iqa.validation` decide on per-image
summaries computed on the device, with the host path's messages.

Q2n (and D_lambda_K) are bit-identical to the host on blocks of up to 45 x 45 pixels: after the
uint16 cast every raw block sum is an exact integer whatever the summation order. The other indexes
equal the host within 1e-12 relative (``tests/tensor/test_torch_backend.py``).

Examples
--------
>>> import torch
>>> import pansharp_iqa as pi
>>> gt = torch.rand(2, 4, 96, 96, dtype=torch.float64) * 1500 + 100
>>> r = pi.evaluate_reduced(gt + 3.0, gt, ratio=4, bits=11, layout="NCHW", backend="torch")
>>> r["protocol"]["batch"]["backend"], r["Q2n"].shape
('torch', (2,))
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from . import torch_ops as ops
from .foreign import Layout, framework_of, image_of_batch, to_numpy
from .hypercomplex import block_q_from_band_moments, integer_block_moments, sums_exact
from .indexes.catalog import DERIVED, ChunkContext, Statistic, image_of, later_pass
from .indexes.full_pass import following_context
from .indexes.full_resolution import BLOCK_FAMILIES, block_sums, low_res_block
from .indexes.reduced_pass import reduced_sums
from .indexes.scc import check_gradient
from .indexes.strips import StripImage
from .indexes.uiqi import against_last_uiqi, pair_uiqi, uiqi_from_window_sums
from .settings import EvaluationSettings, FullSettings, ReducedSettings
from .validation import (
    ImageFacts,
    SettingError,
    ShapeError,
    check_image_shape,
    check_pan_ratio,
    check_same_shape,
    facts_from_sums,
    sample_step,
)

__all__ = ["evaluate_torch", "torch_computes", "as_torch_batch", "device_statistic", "device_facts"]

#: Bytes of float64 intermediates one chunk of images may hold on the device (images are processed
#: in chunks of the batch so that memory stays bounded whatever the batch size).
CHUNK_BYTES = 2 * 2**30


# --------------------------------------------------------------------------- inputs


def _dtype_name(t: Any) -> str:
    name = str(getattr(t, "dtype", "float64")).replace("torch.", "")
    try:
        return str(np.dtype(name))
    except TypeError:
        return "float32"  # e.g. bfloat16: a float type


def as_torch_batch(name: str, x: object, layout: Layout | None, *, pan: bool = False) -> tuple[torch.Tensor, str]:
    """A batch as an (N, C, H, W) tensor on its own device (no copy where the framework allows),
    and the stored dtype's name.

    Parameters
    ----------
    name : str
    x : tensor, array, or sequence of them
        PyTorch tensors stay on their device (detached); CuPy / DLPack arrays come in through
        DLPack; numpy and other host arrays through :func:`torch.from_numpy`.
    layout : {"NCHW", "NHWC"} or None
        None: one (H, W, B) image (one (H, W) PAN).
    pan : bool
        A PAN: (N, 1, H, W) / (N, H, W, 1) or (N, H, W) in a batch.

    Returns
    -------
    (torch.Tensor, str)

    Examples
    --------
    >>> t, dtype = as_torch_batch("gt", np.zeros((2, 8, 8, 4), dtype=np.uint16), "NHWC")
    >>> tuple(t.shape), dtype
    ((2, 4, 8, 8), 'uint16')
    """
    if isinstance(x, (list, tuple)):
        items = [_one_tensor(v) for v in x]
        shapes = {tuple(t.shape) for t in items}
        if len(shapes) > 1:
            raise ShapeError(f"{name}: the batch mixes image sizes {sorted(shapes)}; a batch holds images of one "
                             "size (evaluate the others in another call or update)")
        t, dtype = torch.stack(items), _dtype_name(items[0])
    else:
        t, dtype = _one_tensor(x), _dtype_name(x)
    if layout is None:
        t = t[None] if (pan and t.ndim == 2) or (not pan and t.ndim == 3) else t
        if not pan and t.ndim == 4:
            t = t.permute(0, 3, 1, 2)
        layout_ = "NCHW"
    else:
        layout_ = layout
    if pan:
        if t.ndim == 3:
            t = t[:, None]
        elif t.ndim == 4 and layout_ == "NHWC":
            t = t.permute(0, 3, 1, 2)
        if t.ndim != 4 or t.shape[1] != 1:
            want = "(N, 1, H, W)" if layout_ == "NCHW" else "(N, H, W, 1)"
            raise ShapeError(f"{name}: a PAN batch is {want} or (N, H, W), got shape {tuple(t.shape)}")
    else:
        if t.ndim != 4:
            what = "(N, C, H, W)" if layout_ == "NCHW" else "(N, H, W, C)"
            raise ShapeError(f"{name}: layout={layout_!r} needs a 4-D {what} batch, got shape {tuple(t.shape)}")
        if layout_ == "NHWC" and layout is not None:
            t = t.permute(0, 3, 1, 2)
    if t.shape[0] == 0:
        raise ShapeError(f"{name}: empty batch")
    return t, dtype


def _one_tensor(x: object) -> torch.Tensor:
    kind = framework_of(x)
    if kind == "torch":
        return x.detach()  # type: ignore[attr-defined]
    if kind in ("cupy", "dlpack"):
        return torch.from_dlpack(x)
    return torch.from_numpy(np.asarray(to_numpy("input", x)))


def _float(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.float64)


def device_facts(name: str, x: torch.Tensor, dtype: str, scale: float) -> list[ImageFacts]:
    """The value summaries of the gate (:class:`~pansharp_iqa.validation.ImageFacts`), one per
    image of an (N, C, H, W) batch, computed on the device: non-finite count, minimum and maximum
    (DN, after the scale), and the sums of the :func:`~pansharp_iqa.validation.sample_step` grid.

    Examples
    --------
    >>> f = device_facts("ms", torch.full((1, 2, 4, 4), 3.0, dtype=torch.float64), "uint16", 2.0)[0]
    >>> (f.lo, f.hi, f.mean, f.integer)
    (6.0, 6.0, 6.0, True)
    """
    n, c, h, w = x.shape
    finite = torch.isfinite(x)
    bad = (~finite).sum(dim=(1, 2, 3))
    safe = torch.where(finite, x, torch.zeros((), dtype=x.dtype, device=x.device))
    lo, hi = safe.amin(dim=(1, 2, 3)) * scale, safe.amax(dim=(1, 2, 3)) * scale
    if scale < 0:
        lo, hi = hi, lo
    step = sample_step(h, w)
    grid = safe[:, :, ::step, ::step] * scale
    count = float(grid[0].numel())
    # per band too: the gate's per-band rules (a band on another scale) decide on the same evidence
    per_band = torch.stack([grid.sum(dim=(2, 3)), (grid * grid).sum(dim=(2, 3)), grid.amin(dim=(2, 3)),
                            grid.amax(dim=(2, 3)), (grid != torch.round(grid)).sum(dim=(2, 3)).to(grid.dtype)],
                           dim=1).cpu().numpy()  # (N, 5, C)
    stats = torch.stack([bad.to(torch.float64), lo, hi], dim=1).cpu().numpy()
    return [facts_from_sums(name, (h, w, c), dtype, lo=s[1], hi=s[2], n=count, total=float(b[0].sum()),
                            total_sq=float(b[1].sum()), non_finite=int(s[0]), band_total=b[0], band_total_sq=b[1],
                            band_lo=b[2], band_hi=b[3], band_nonint=b[4]) for s, b in zip(stats, per_band, strict=True)]


# --------------------------------------------------------------------------- statistics


def _host(*tensors: torch.Tensor) -> list[np.ndarray]:
    return [t.cpu().numpy() for t in tensors]


def _q2n_values(ref: torch.Tensor, fus: torch.Tensor, bs: int) -> list[np.ndarray]:
    """Toolbox Q2n block values of each image (uint16 cast, mirror-extended blocks)."""
    rb = ops.toolbox_blocks(ops.to_uint16_matlab(ref), bs)
    fb = ops.toolbox_blocks(ops.to_uint16_matlab(fus), bs)
    n_pix = bs * bs
    if sums_exact(n_pix, 65535.0):
        raw = _host(*ops.block_raw_moments(rb, fb))
        moments = [integer_block_moments(raw[0][i], raw[1][i], raw[2][i], raw[3][i], raw[4][i], n_pix)
                   for i in range(ref.shape[0])]
    else:  # blocks too large for exact raw sums: centred moments, as the core's float path
        mr, mf = rb.mean(dim=3), fb.mean(dim=3)
        rc, fc = rb - mr[..., None], fb - mf[..., None]
        raw = _host(mr, mf, (rc * rc).sum(dim=3) / n_pix, (fc * fc).sum(dim=3) / n_pix,
                    torch.matmul(rc, fc.transpose(2, 3)) / n_pix)
        moments = [tuple(r[i] for r in raw) for i in range(ref.shape[0])]
    return [block_q_from_band_moments(*m, n_pix=n_pix) for m in moments]


def stat_q2n_blocks(ref: torch.Tensor, fus: torch.Tensor, ctx: ChunkContext) -> list[dict[str, Any]]:
    return [{"sum": float(v.sum()), "count": int(v.size)} for v in _q2n_values(ref, fus, ctx.block_size)]


def stat_q_windows(ref: torch.Tensor, fus: torch.Tensor, ctx: ChunkContext) -> list[dict[str, Any]]:
    bs = ctx.block_size
    shift_r = torch.round(ref.mean(dim=(2, 3), keepdim=True))
    shift_f = torch.round(fus.mean(dim=(2, 3), keepdim=True))
    c_sum, c_diff = shift_r + shift_f, shift_r - shift_f
    p, m = ref + fus - c_sum, ref - fus - c_diff
    q = uiqi_from_window_sums(ops.window_sums(p, bs), ops.window_square_sums(p, bs), ops.window_sums(m, bs),
                              ops.window_square_sums(m, bs), n=float(bs * bs), c_sum=c_sum, c_diff=c_diff)
    count = int(q.shape[2] * q.shape[3])
    return [{"sums": s, "count": count} for s in q.sum(dim=(2, 3)).cpu().numpy()]


def stat_sam_angles(ref: torch.Tensor, fus: torch.Tensor, ctx: ChunkContext) -> list[dict[str, Any]]:
    dot = (ref * fus).sum(dim=1)
    norm = torch.sqrt((ref * ref).sum(dim=1) * (fus * fus).sum(dim=1))
    valid = norm != 0
    cos = torch.where(valid, dot / torch.where(valid, norm, torch.ones_like(norm)), torch.zeros_like(norm))
    angle = torch.where(valid, torch.arccos(torch.clip(cos, -1.0, 1.0)), torch.zeros_like(norm))
    sums = torch.stack([angle.sum(dim=(1, 2)), valid.sum(dim=(1, 2)).to(torch.float64)], dim=1).cpu().numpy()
    pixels = int(ref.shape[2] * ref.shape[3])
    return [{"angle_sum": float(s[0]), "valid": int(s[1]), "pixels": pixels} for s in sums]


def stat_squared_errors(ref: torch.Tensor, fus: torch.Tensor, ctx: ChunkContext) -> list[dict[str, Any]]:
    d = ref - fus
    sse, tot = _host((d * d).sum(dim=(2, 3)), ref.sum(dim=(2, 3)))
    pixels = int(ref.shape[2] * ref.shape[3])
    return [{"sse": a, "ref_sum": b, "pixels": pixels} for a, b in zip(sse, tot, strict=True)]


def stat_sobel_products(ref: torch.Tensor, fus: torch.Tensor, ctx: ChunkContext) -> list[dict[str, Any]]:
    if ctx.gradient == "magnitude":  # the 2020 form: the interior, zero padded around it
        ref, fus = ref[:, :, 1:-1, 1:-1], fus[:, :, 1:-1, 1:-1]
    gr, gf = ops.sobel(ref, ctx.gradient), ops.sobel(fus, ctx.gradient)
    sums = torch.stack([(gf * gr).sum(dim=(1, 2, 3)), (gf * gf).sum(dim=(1, 2, 3)), (gr * gr).sum(dim=(1, 2, 3))],
                       dim=1).cpu().numpy()
    return [{"sums": s} for s in sums]


def stat_band_moments(ref: torch.Tensor, fus: torch.Tensor, ctx: ChunkContext) -> list[dict[str, Any]]:
    parts = _host(ref.sum(dim=(2, 3)), fus.sum(dim=(2, 3)), (ref * ref).sum(dim=(2, 3)),
                  (fus * fus).sum(dim=(2, 3)), (ref * fus).sum(dim=(2, 3)))
    pixels = int(ref.shape[2] * ref.shape[3])
    keys = ("sx", "sy", "sxx", "syy", "sxy")
    return [{**{k: p[i] for k, p in zip(keys, parts, strict=True)}, "pixels": pixels} for i in range(ref.shape[0])]


def device_statistic(stat: Statistic, ctx: ChunkContext | None = None) -> Callable[..., list[dict[str, Any]]] | None:
    """This backend's ``stat_<name>`` for a statistic the catalogue declares with ``"torch"``, else None (also for
    Q2n under other settings than the toolbox's in ``ctx``: the device computes the uint16 cast and float64 blocks).

    Reduced resolution: ``fn(ref, fus, ctx)``; full resolution: ``fn(images, ctx)`` (``images``: the
    tensors of the statistic's ``reads``, inputs and derived images); both return the fields of each image.

    >>> from pansharp_iqa.indexes.catalog import get_statistic
    >>> device_statistic(get_statistic("q_windows")).__name__
    'stat_q_windows'
    """
    fn = globals().get(f"stat_{stat.name}") if "torch" in stat.backends else None
    return None if ctx is not None and stat.name == "q2n_blocks" and not ctx.toolbox_q2n else fn


def _host_sums(ref: torch.Tensor, fus: torch.Tensor, stats: list[Statistic], ctx: ChunkContext
               ) -> list[dict[str, Any]]:
    """Statistics without a device implementation, by the host strip pass on each image."""
    if not stats:
        return [{} for _ in range(ref.shape[0])]
    r, f = _host(ref, fus)
    return [reduced_sums(StripImage(r[i], bands_first=True), StripImage(f[i], bands_first=True), statistics=stats,
                         ctx=ctx) for i in range(r.shape[0])]


# --------------------------------------------------------------------------- evaluations


def _chunks(n: int, per_image_bytes: float) -> list[slice]:
    step = max(1, int(CHUNK_BYTES // max(per_image_bytes, 1.0)))
    return [slice(i, min(n, i + step)) for i in range(0, n, step)]


def _check_batches(tensors: dict[str, torch.Tensor]) -> int:
    sizes = {k: int(t.shape[0]) for k, t in tensors.items()}
    if len(set(sizes.values())) > 1:
        raise ShapeError(f"batches of different sizes: {sizes}")
    return next(iter(sizes.values()))


def _shape(t: torch.Tensor) -> tuple[int, int, int]:
    return (int(t.shape[2]), int(t.shape[3]), int(t.shape[1]))


def _reduced(settings: ReducedSettings, t: dict[str, torch.Tensor], dtypes: dict[str, str]) -> list[dict[str, Any]]:
    fus_t, ref_t = t["fused"], t["reference"]
    shape = check_image_shape("reference", _shape(ref_t))
    check_image_shape("fused", _shape(fus_t))
    check_same_shape("reference", types.SimpleNamespace(shape=shape), "fused",
                     types.SimpleNamespace(shape=_shape(fus_t)))
    proto = settings.protocol
    n = _check_batches(t)
    facts = {k: device_facts(k, _float(v), dtypes[k], settings.scale_of(k)) for k, v in t.items()}
    for i in range(n):
        with image_of_batch(i):
            settings.check({k: f[i] for k, f in facts.items()})
    lead, trail = settings.cut_bounds(shape)
    h, w, nb = shape
    names = settings.indexes
    gradient = check_gradient(proto.scc_gradient, (h - lead - trail, w - lead - trail, nb)) if "SCC" in names \
        else proto.scc_gradient
    ctx = settings.chunk_context(gradient, grid=(h - lead - trail, w - lead - trail))
    stats = settings.statistics()
    card = settings.card(image_shape=list(shape), evaluated_shape=[h - lead - trail, w - lead - trail, nb])
    out: list[dict[str, Any]] = []
    for part in _chunks(n, 12.0 * nb * h * w * 8):
        ref = _float(ref_t[part, :, lead : h - trail, lead : w - trail]) * settings.scale_of("reference")
        fus = _float(fus_t[part, :, lead : h - trail, lead : w - trail]) * settings.scale_of("fused")
        if settings.clip_max is not None:
            fus = torch.clip(fus, 0.0, settings.clip_max)
        per_stat = {s.name: fn(ref, fus, ctx) for s in stats if (fn := device_statistic(s, ctx)) is not None}
        on_host = _host_sums(ref, fus, [s for s in stats if s.name not in per_stat], ctx)
        for i in range(ref.shape[0]):
            with image_of_batch(part.start + i):
                values = settings.results({**{k: v[i] for k, v in per_stat.items()}, **on_host[i]}, nb)
            out.append({**values, "protocol": card})
    return out


def _image(name: str, t: dict[str, torch.Tensor], ctx: ChunkContext) -> torch.Tensor:
    """An input, or a derived image of the catalogue computed on the device from its source (whole images)."""
    if name not in t:
        d = DERIVED[name]
        if d.torch is None:
            raise SettingError(f"backend='torch' cannot compute the derived image {name!r}; use backend='host'")
        t[name] = d.torch(_image(d.source, t, ctx), ctx, ops)
    return t[name]


def stat_block_uiqi(im: Mapping[str, torch.Tensor], ctx: ChunkContext) -> list[dict[str, Any]]:
    fus, low = im["fused"], im["low_res"]
    bs, nb = ctx.block_size, fus.shape[1]
    low_bs = bs if low.shape[2:] == fus.shape[2:] else low_res_block(bs, ctx.ratio)
    hm, hc = _host(*ops.block_centered_moments(ops.toolbox_blocks(torch.cat([fus, im["pan"]], dim=1), bs)))
    lm, lc = _host(*ops.block_centered_moments(ops.toolbox_blocks(torch.cat([low, im["low_pan"]], dim=1), low_bs)))
    out = []
    for i in range(fus.shape[0]):
        fam = {"pairs_high": pair_uiqi(hm[i], hc[i], nb), "pairs_low": pair_uiqi(lm[i], lc[i], nb),
               "pan_high": against_last_uiqi(hm[i], hc[i], nb), "pan_low": against_last_uiqi(lm[i], lc[i], nb)}
        out.append({k: block_sums(fam[k]) for k in BLOCK_FAMILIES})
    return out


def stat_khan_q2n(im: Mapping[str, torch.Tensor], ctx: ChunkContext) -> list[dict[str, Any]]:
    return [{"sum": float(v.sum()), "count": int(v.size)} for v in _q2n_values(im["exp"], im["mtf_fused"],
                                                                                ctx.block_size)]


def stat_lsr_gram(im: Mapping[str, torch.Tensor], ctx: ChunkContext) -> list[dict[str, Any]]:
    f, p = im["fused"].flatten(2), im["pan"].flatten(2)[:, 0]
    gram, ftp, fsum, psum = _host(torch.einsum("nbk,nck->nbc", f, f), torch.einsum("nbk,nk->nb", f, p), f.sum(dim=2),
                                  p.sum(dim=1))
    return [{"gram": gram[i].ravel(), "ftp": ftp[i], "fused_sum": fsum[i], "pan_sum": float(psum[i]),
             "pixels": int(p.shape[1])} for i in range(f.shape[0])]


def stat_lsr_residual(im: Mapping[str, torch.Tensor], ctx: ChunkContext) -> list[dict[str, Any]]:
    fit = ctx.fitted["lsr"]  # one image's fit: called per image
    f, p = im["fused"], im["pan"][:, 0]
    w = torch.as_tensor(fit.weights, dtype=f.dtype, device=f.device)
    de = p - torch.einsum("b,nbhw->nhw", w, f) - fit.residual_mean
    dp = p - fit.pan_mean
    parts = _host(de.sum(dim=(1, 2)), (de * de).sum(dim=(1, 2)), dp.sum(dim=(1, 2)), (dp * dp).sum(dim=(1, 2)))
    return [{"residual_dev": float(parts[0][i]), "residual_sq": float(parts[1][i]), "pan_dev": float(parts[2][i]),
             "pan_sq": float(parts[3][i]), "pixels": int(p.shape[1] * p.shape[2])} for i in range(f.shape[0])]


def _full(settings: FullSettings, t: dict[str, torch.Tensor], dtypes: dict[str, str]) -> list[dict[str, Any]]:
    fus_t, ms_t, pan_t = t["fused"], t["ms"], t["pan"]
    fshape, mshape = check_image_shape("fused", _shape(fus_t)), check_image_shape("ms", _shape(ms_t))
    pshape = (int(pan_t.shape[2]), int(pan_t.shape[3]))
    check_pan_ratio(types.SimpleNamespace(shape=fshape), types.SimpleNamespace(shape=mshape),
                    types.SimpleNamespace(shape=pshape), settings.ratio)
    ms_gnyq = settings.ms_gnyq(fshape[2])
    proto = settings.protocol
    n = _check_batches(t)
    facts = {k: device_facts(k, _float(v), dtypes[k], settings.scale_of(k)) for k, v in t.items()}
    for i in range(n):
        with image_of_batch(i):
            settings.check({k: f[i] for k, f in facts.items()})
    ctx = settings.chunk_context(ms_gnyq, fshape)
    stats = settings.statistics()
    if fshape[2] < 2 and "block_uiqi" in {s.name for s in stats}:
        raise ShapeError("fused: D_lambda needs at least 2 bands (it compares band pairs)")
    first, later = later_pass(stats)
    card = settings.card(ms_gnyq, list(fshape))
    h, w, nb = fshape
    out: list[dict[str, Any]] = []
    for part in _chunks(n, 16.0 * (nb + 1) * h * w * 8):
        fus = _float(fus_t[part]) * settings.scale_of("fused")
        if settings.threshold:
            fus = torch.clip(fus, 0.0, settings.clip_max)
        ms, pan = _float(ms_t[part]) * settings.scale_of("ms"), _float(pan_t[part]) * settings.scale_of("pan")
        images = {"fused": fus, "ms": ms, "pan": pan}
        per_stat = {s.name: device_statistic(s)({r: _image(image_of(r, proto), images, ctx)  # type: ignore[misc]
                                                  for r in s.reads}, ctx) for s in first}
        for i in range(fus.shape[0]):
            sums = {k: v[i] for k, v in per_stat.items()}
            if later:  # statistics that read a fit of the image's own sums (D_s_R's residual): per image
                ctx_i = following_context(ctx, sums, {})
                for s in later:
                    one = {r: _image(image_of(r, proto), images, ctx)[i : i + 1] for r in s.reads}
                    sums[s.name] = device_statistic(s)(one, ctx_i)[0]  # type: ignore[misc]
            with image_of_batch(part.start + i):
                values = settings.results(sums, fshape[2])
            out.append({**values, "protocol": card})
    return out


def torch_computes(settings: EvaluationSettings) -> bool:
    """Whether this backend computes the settings' protocol (the toolbox family; the reprojected protocol's pipeline
    and the HS/S2 full-resolution indexes run on the host)."""
    return not (isinstance(settings, FullSettings) and (settings.protocol.full_engine != "toolbox"
                                                        or settings.ms_scale_blocks))


def evaluate_torch(settings: EvaluationSettings, inputs: Mapping[str, object], *, layout: Layout | None,
                   pans: tuple[str, ...] = ()) -> dict[str, Any]:
    """A batch (or one image) evaluated by the PyTorch backend on the inputs' device."""
    if not torch_computes(settings):
        raise SettingError(f"backend='torch' computes the toolbox-family protocols (and every reduced-resolution "
                           f"table); {settings.protocol.name!r} at full resolution runs on the host (backend='host')")
    assert isinstance(settings, (ReducedSettings, FullSettings))
    probe = settings.chunk_context("magnitude") if isinstance(settings, ReducedSettings) else None
    host_only = [s.name for s in settings.statistics() if device_statistic(s, probe) is None]
    if host_only and isinstance(settings, FullSettings):
        raise SettingError(f"backend='torch' has no device implementation of {', '.join(host_only)} (for "
                           f"{', '.join(settings.indexes)}); use backend='host'")
    tensors, dtypes = {}, {}
    for k, v in inputs.items():
        tensors[k], dtypes[k] = as_torch_batch(k, v, layout, pan=k in pans)
    devices = {str(t.device) for t in tensors.values()}
    device = devices.pop() if len(devices) == 1 else "mixed"
    with torch.no_grad():
        results = (_full if isinstance(settings, FullSettings) else _reduced)(settings, tensors, dtypes)  # type: ignore[arg-type]
    batch = {"images": len(results), "layout": layout or "HWB", "backend": "torch", "device": device}
    card = {**results[0]["protocol"], "batch": {**batch, **({"host_statistics": host_only} if host_only else {})}}
    if layout is None:
        return {**results[0], "protocol": card}
    names = [k for k in results[0] if k not in ("protocol", "per_band")]
    out: dict[str, Any] = {k: np.array([r[k] for r in results], dtype=np.float64) for k in names}
    if "per_band" in results[0]:
        out["per_band"] = {k: np.array([r["per_band"][k] for r in results]) for k in results[0]["per_band"]}
    return {**out, "protocol": card}

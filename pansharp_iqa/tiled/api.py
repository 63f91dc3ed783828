"""Public tile-wise entry points: the same results as ``evaluate_reduced``/``evaluate_full``.

The returned dict has the same keys and values (to floating-point rounding, 1e-9 relative or
better) and the same provenance card, with one more card entry, ``"tiling"``, recording the tile
grid (it does not change the numbers).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..evaluate import _check_reference_range, _check_scale, _reduced_settings, cut_bounds, _resolve_fr_settings, fr_common_settings, full_card, reduced_card
from ..indexes.full_resolution import NanPolicy, _low_res_block
from ..protocols import Protocol, get_protocol
from ..sensors import Sensor
from ..validation import InputError, check_dn_scale, check_multiple_of, check_pan_ratio, check_same_shape
from .accumulate import Partial
from .executor import TiledJob, run_jobs
from .full import FullContext, full_tile, full_values
from .plan import DEFAULT_TILE_SIZE, effective_tile_size, plan_tiles
from .reduced import ReducedContext, reduced_tile, reduced_values
from .sources import Source, open_source

__all__ = ["evaluate_reduced_tiled", "evaluate_full_tiled", "prepare_reduced", "prepare_full"]

_NAN_POLICIES = ("raise", "omit", "propagate")


def _image_source(x: Any, name: str) -> Source:
    src = open_source(x, name)
    if src.stored_ndim == 2 and name != "pan":
        raise InputError(
            f"{name}: expected a 3-D (H, W, B) image, got a 2-D array of shape {src.shape[:2]}; "
            f"for a single band pass {name}[..., None]"
        )
    return src


def _dn_checks(total: Partial, sources: list[Source], scale: float) -> None:
    if scale != 1.0:
        return
    for src in sources:
        if not np.issubdtype(src.dtype, np.integer):
            check_dn_scale(src.name, np.empty(0, dtype=src.dtype), np.array([total.maxima[src.name + "_maxabs"]]),
                           what="this protocol (Q2n and D_lambda_K)")


def _tiling_card(sources: list[Source], tile: int, n_tiles: int, origin: str) -> dict[str, Any]:
    return {
        "tile_size": tile,
        "n_tiles": n_tiles,
        "grid_origin": origin,
        "readers": {s.name: s.describe() for s in sources},
        "reduction": "per-tile block/window sums combined in tile order with math.fsum",
    }


def prepare_reduced(
    fused: Any,
    reference: Any,
    *,
    ratio: int,
    bits: int,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
    tile_size: int = DEFAULT_TILE_SIZE,
    name: str = "scene",
) -> TiledJob:
    """Validate the settings and shapes of a reduced-resolution evaluation and plan its tiles.

    Parameters are those of :func:`evaluate_reduced_tiled`; ``name`` labels the job.

    Returns
    -------
    TiledJob
        Run it with :func:`pansharp_iqa.tiled.executor.run_jobs` (or
        :func:`pansharp_iqa.tiled.distributed.evaluate_scenes`).
    """
    proto, ratio, bits, scale = _reduced_settings(protocol, ratio, bits, scale)
    fus = _image_source(fused, "fused")
    ref = _image_source(reference, "reference")
    check_same_shape("reference", ref, "fused", fus)
    lead, trail = cut_bounds(proto, ref.shape)
    h, w = ref.shape[:2]
    bs = proto.block_size
    ctx = ReducedContext(fus, ref, ratio, bits, scale, bool(threshold), lead, trail, bs, proto.scc_variant, (h, w))
    tile = effective_tile_size(tile_size, bs)
    tiles = plan_tiles(*ctx.cut_shape, tile)
    nb = ref.shape[2]

    def finalize(total: Partial) -> dict[str, Any]:
        _dn_checks(total, [fus, ref], scale)
        _check_reference_range("reference", np.array([total.maxima["reference_max"]]), bits)
        values = reduced_values(total, ratio)
        card = reduced_card(
            proto, ratio=ratio, bits=bits, scale=scale, threshold=threshold,
            image_shape=[h, w, nb], evaluated_shape=[*ctx.cut_shape, nb],
            tiling=_tiling_card([fus, ref], tile, len(tiles), f"after the {lead}-pixel leading cut"),
        )
        return {**{k: values[k] for k in proto.reduced_indexes}, "protocol": card}

    return TiledJob(name, ctx, tiles, reduced_tile, finalize)


def prepare_full(
    fused: Any,
    ms: Any,
    pan: Any,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    bits: int | None = None,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
    nan_policy: NanPolicy = "raise",
    tile_size: int = DEFAULT_TILE_SIZE,
    name: str = "scene",
) -> TiledJob:
    """Validate the settings and shapes of a full-resolution evaluation and plan its tiles.

    Parameters are those of :func:`evaluate_full_tiled`; ``name`` labels the job.

    Returns
    -------
    TiledJob
    """
    proto = get_protocol(protocol)
    s, ratio, bits = _resolve_fr_settings(sensor, ratio, bits)
    scale = _check_scale(scale)
    if nan_policy not in _NAN_POLICIES:
        raise InputError(f"nan_policy must be one of {_NAN_POLICIES}, got {nan_policy!r}")
    fus = _image_source(fused, "fused")
    ms_src = _image_source(ms, "ms")
    pan_src = _image_source(pan, "pan")
    if pan_src.shape[2] != 1:
        raise InputError(f"pan: expected a 2-D (H, W) panchromatic image, got shape {pan_src.shape}")
    check_pan_ratio(fus, ms_src, pan_src, ratio)
    nb = fus.shape[2]
    ms_gnyq = list(s.gnyq_for(nb, protocol=proto.name))
    if proto.fr_variant == "reprojected2022":
        return _prepare_reprojected(fus, ms_src, pan_src, proto, s, ms_gnyq, ratio=ratio, bits=bits, scale=scale,
                                    threshold=threshold, tile_size=tile_size, name=name)
    bs = proto.block_size
    check_multiple_of("fused", fus, bs, why="the toolbox's block-wise QNR indexes require it")
    if nb < 2:
        raise InputError("fused: D_lambda needs at least 2 bands (it compares band pairs)")
    variant = proto.fr_variant
    if variant == "qnr-paper":
        _low_res_block(bs, ratio)
    with_dlk = "D_lambda_K" in proto.full_indexes
    ctx = FullContext(
        fus, ms_src, pan_src, ratio, bits, scale, bool(threshold), bs, variant,
        tuple(float(g) for g in ms_gnyq),
        float(s.pan_gnyq_for(protocol="toolbox2015")) if variant == "toolbox2015" else None,
        with_dlk, fus.shape[:2],
    )
    tile = effective_tile_size(tile_size, math.lcm(bs, ratio))
    tiles = plan_tiles(*fus.shape[:2], tile)

    def finalize(total: Partial) -> dict[str, Any]:
        _dn_checks(total, [fus, ms_src, pan_src], scale)
        _check_reference_range("ms", np.array([total.maxima["ms_max"]]), bits)
        values = full_values(total, nb, nan_policy, with_dlk)
        common = fr_common_settings(s, ms_gnyq, ratio=ratio, bits=bits, scale=scale,
                                    threshold=threshold, image_shape=list(fus.shape))
        card = full_card(
            proto, s, common, nan_policy=nan_policy,
            tiling=_tiling_card([fus, ms_src, pan_src], tile, len(tiles), "(0, 0) at PAN scale"),
        )
        return {**{k: float(values[k]) for k in proto.full_indexes}, "protocol": card}

    return TiledJob(name, ctx, tiles, full_tile, finalize)


def _prepare_reprojected(
    fus: Source, ms_src: Source, pan_src: Source, proto: Protocol, s: Sensor, ms_gnyq: list[float], *,
    ratio: int, bits: int, scale: float, threshold: bool, tile_size: int, name: str,
) -> TiledJob:
    """``reprojected2022`` tile-wise: a coregistration pass whose finalize returns the index pass
    (see :mod:`pansharp_iqa.tiled.reprojected`)."""
    from ..evaluate import protocol_card
    from ..reprojected._common import input_error
    from ..reprojected.protocol import SETTINGS, reprojection_details
    from . import reprojected as rp

    nb = fus.shape[2]
    # the in-memory protocol's own checks (resolve_inputs, uiqi_index), before any tile runs
    gnyq = tuple(float(g) for g in s.gnyq_for(nb))
    if any(not 0.0 < g < 1.0 for g in gnyq) or len(gnyq) != nb:
        raise input_error(f"sensor {s.name!r} gives invalid MS GNyq values {gnyq}; need one in (0, 1) per band")
    bs = int(SETTINGS["block_size"])
    h, w = ms_src.shape[:2]
    if bs > min(h, w) + 1:
        raise input_error(f"block_size {bs} too large for images of {(h, w)} (at most min(h, w) + 1)")
    ctx = rp.context_for(fus, ms_src, pan_src, ratio=ratio, bits=bits, scale=scale, threshold=threshold,
                         gnyq=gnyq, block_size=bs)
    tile = effective_tile_size(tile_size, bs * ratio)
    tiles = plan_tiles(*fus.shape[:2], tile)
    sources = [fus, ms_src, pan_src]

    def finalize_coreg(total: Partial, ctx: rp.ReprojectedContext = ctx) -> TiledJob:
        _dn_checks(total, [ms_src, pan_src], scale)
        _check_reference_range("ms", np.array([total.maxima["ms_max"]]), bits)
        tops = rp.coreg_tops_needed(total, ctx.search_window)
        if tops is not None and ctx.coreg_tops is None:  # degenerate (all-zero) data: global upper clip
            again = dataclasses.replace(ctx, coreg_tops=tops)
            return TiledJob(name, again, tiles, rp.coreg_tile, lambda t: finalize_coreg(t, again))
        rho, shifts = rp.coreg_result(total, ctx)
        ctx2 = rp.with_shifts(ctx, shifts)
        return TiledJob(name, ctx2, tiles, rp.index_tile, lambda t: finalize_indexes(t, ctx2, rho, shifts))

    def finalize_indexes(total: Partial, ctx2: rp.ReprojectedContext, rho: np.ndarray,
                         shifts: np.ndarray) -> dict[str, Any] | TiledJob:
        _dn_checks(total, [fus], scale)
        tops = rp.drho_tops_needed(total)
        if tops is not None and ctx2.drho_tops is None:
            again = dataclasses.replace(ctx2, drho_tops=tops)
            return TiledJob(name, again, tiles, rp.index_tile, lambda t: finalize_indexes(t, again, rho, shifts))
        values = rp.index_values(total, ctx2)
        details = reprojection_details(
            sensor=s.name, ratio=ratio, gnyq=gnyq, shifts=shifts, correlations=rho,
            search_window=ctx2.search_window, coregistration_half_width=ctx2.coreg_half_width,
            d_rho_half_width=ctx2.drho_half_width, integral="ordered",
        )
        common = fr_common_settings(s, ms_gnyq, ratio=ratio, bits=bits, scale=scale, threshold=threshold,
                                    image_shape=list(fus.shape))
        tiling = {**_tiling_card(sources, tile, len(tiles), "(0, 0) at PAN scale"), **rp.describe(ctx2)}
        card = protocol_card(proto, **common, reprojection=details, tiling=tiling)
        return {**{k: float(values[k]) for k in proto.full_indexes}, "protocol": card}

    return TiledJob(name, ctx, tiles, rp.coreg_tile, finalize_coreg)


def evaluate_reduced_tiled(
    fused: Any,
    reference: Any,
    *,
    ratio: int,
    bits: int,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
    tile_size: int = DEFAULT_TILE_SIZE,
    jobs: int = 1,
    scheduler: Any = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Reduced-resolution indexes of a scene of any size, tile by tile, in bounded memory.

    Same numbers (to 1e-9 relative or better) and card as
    :func:`pansharp_iqa.evaluate.evaluate_reduced`, plus ``card["tiling"]``.

    Parameters
    ----------
    fused, reference : path-like, rasterio dataset, ndarray, np.memmap or array-like
        ``(H, W, B)`` images (GeoTIFF bands = B) in DN, or multiplied to DN by ``scale``.
    ratio : int
        Resolution ratio (ERGAS).
    bits : int
        Radiometric resolution (bits) for the range check and the threshold.
    protocol : str or Protocol, default "toolbox2020"
        Any protocol with reduced-resolution indexes.
    scale : float, default 1.0
        Multiplier to DN.
    threshold : bool, default False
        Clip the fused image to [0, 2^bits].
    tile_size : int, default 512
        Tile side in pixels of the evaluated image, rounded up to a multiple of the 32-pixel block;
        memory per worker grows with its square (about 150 MB for 8 bands at 512).
    jobs : int, default 1
        Local worker processes.
    scheduler : str or distributed.Client, optional
        Dask scheduler address (``"tcp://host:8786"``): tiles run on that cluster.
    progress : bool
        tqdm bar with tiles done / total and megapixels per second.

    Returns
    -------
    dict
        ``Q2n``, ``Q``, ``SAM`` (degrees), ``ERGAS``, ``SCC`` and ``"protocol"`` (the card).

    Raises
    ------
    InputError
        As :func:`~pansharp_iqa.evaluate.evaluate_reduced`.
    SceneReadError
        A file is corrupt, truncated or unreadable.

    References
    ----------
    Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315; Wald et al., PE&RS 63(6), 1997.
    """
    job = prepare_reduced(fused, reference, ratio=ratio, bits=bits, protocol=protocol, scale=scale,
                          threshold=threshold, tile_size=tile_size)
    return run_jobs([job], workers=jobs, scheduler=scheduler, progress=progress)[0].unwrap()


def evaluate_full_tiled(
    fused: Any,
    ms: Any,
    pan: Any,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    bits: int | None = None,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
    nan_policy: NanPolicy = "raise",
    tile_size: int = DEFAULT_TILE_SIZE,
    jobs: int = 1,
    scheduler: Any = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Full-resolution indexes of a scene of any size, tile by tile, in bounded memory.

    Same numbers (to 1e-9 relative or better) and card as
    :func:`pansharp_iqa.evaluate.evaluate_full`, plus ``card["tiling"]``. ``reprojected2022``
    runs two passes over the tiles (coregistration sums, then the indexes with the chosen shifts;
    see :mod:`pansharp_iqa.tiled.reprojected`).

    Parameters
    ----------
    fused : path-like, rasterio dataset, ndarray, np.memmap or array-like, (H, W, B)
        Fused image at PAN scale (DN); H and W multiples of 32 (toolbox protocols).
    ms : same kinds, (H/ratio, W/ratio, B)
        Low-resolution MS (DN).
    pan : same kinds, (H, W) or one band
        PAN (DN).
    sensor : str or Sensor
    ratio, bits : int, optional
        Default to the sensor's nominal values.
    protocol : str or Protocol, default "toolbox2020"
        ``toolbox2020``, ``toolbox2015``, ``qnr-paper`` or ``reprojected2022``.
    scale : float, default 1.0
    threshold : bool, default False
    nan_policy : {"raise", "omit", "propagate"}
        Constant blocks, as :func:`~pansharp_iqa.evaluate.evaluate_full` (counts are scene-wide).
    tile_size : int, default 512
        Tile side at PAN scale, rounded up to a multiple of lcm(32, ratio) (``reprojected2022``:
        of 32 ratio, so tiles hold whole 32 x 32 MS-scale blocks).
    jobs : int, default 1
    scheduler : str or distributed.Client, optional
    progress : bool

    Returns
    -------
    dict
        The protocol's FR indexes and ``"protocol"`` (the card).

    Raises
    ------
    InputError, ConstantBlockError
        As :func:`~pansharp_iqa.evaluate.evaluate_full`.
    SceneReadError
        A file is corrupt, truncated or unreadable.

    References
    ----------
    Vivone et al., IEEE GRSM 2021; Alparone et al., PE&RS 74(2), 2008; Khan et al., IEEE TGRS 47(11), 2009.
    """
    job = prepare_full(fused, ms, pan, sensor=sensor, ratio=ratio, bits=bits, protocol=protocol, scale=scale,
                       threshold=threshold, nan_policy=nan_policy, tile_size=tile_size)
    return run_jobs([job], workers=jobs, scheduler=scheduler, progress=progress)[0].unwrap()

"""Public tile-wise entry points: the same results as ``evaluate_reduced``/``evaluate_full``.

The returned dict has the same keys and values (to floating-point rounding, 1e-9 relative or
better) and the same provenance card, with one more card entry, ``"tiling"``, recording the tile
grid (it does not change the numbers). Settings are validated once into the objects of
:mod:`pansharp_iqa.settings`; the data are checked by the same rules as in memory
(:mod:`pansharp_iqa.validation`), on value summaries combined from the tiles
(:mod:`pansharp_iqa.tiled.facts`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..indexes import catalog
from ..indexes.full_pass import following_context, split_maps
from ..indexes.strips import check_block_fits
from ..io.declared import scene_names
from ..io.inputs import check_image_path, check_path_grid
from ..io.windows import Source, open_source
from ..quality_maps import MapSink, map_infos
from ..settings import FullSettings, ReducedSettings, full_settings, protocol_card, reduced_settings
from ..validation import (
    SettingError,
    ShapeError,
    check_not_masked,
    check_pan_ratio,
    check_same_shape,
)
from .accumulate import Partial, sums_of
from .executor import TiledJob, run_jobs
from .facts import facts_of
from .full import FullContext, full_tile
from .maps import MapStream, block_maps
from .plan import DEFAULT_TILE_SIZE, effective_tile_size, plan_tiles
from .reduced import TILE_SUPPORTS, ReducedContext, reduced_tile

__all__ = ["evaluate_reduced_tiled", "evaluate_full_tiled", "evaluate_tiled", "job", "reduced_job", "full_job"]


def _image_source(x: Any, name: str) -> Source:
    src = open_source(check_image_path(name, check_not_masked(name, x)), name)
    if src.stored_ndim == 2 and name != "pan":
        raise ShapeError(
            f"{name}: expected a 3-D (H, W, B) image, got a 2-D array of shape {src.shape[:2]}; "
            f"for a single band pass {name}[..., None]"
        )
    return src


def _tiling_card(sources: list[Source], tile: int, n_tiles: int, origin: str) -> dict[str, Any]:
    return {
        "tile_size": tile,
        "n_tiles": n_tiles,
        "grid_origin": origin,
        "readers": {s.name: s.describe() for s in sources},
        "reduction": "per-tile block/window sums combined in tile order with math.fsum",
    }


def _declaring(settings: Any, sources: dict[str, Source]) -> Any:
    """The settings with the multiplier each file declares (``file_scale``: which messages blame)."""
    for role, src in sources.items():
        if (value := src.file_scale()) is not None:
            settings = settings.declaring(role, "file_scale", value, src.declared.where)
    return settings


def reduced_job(fused: Any, reference: Any, settings: ReducedSettings, *,
                tile_size: int = DEFAULT_TILE_SIZE, name: str = "scene", maps: MapSink | None = None) -> TiledJob:
    """Plan the tiles of a reduced-resolution evaluation with validated settings (its maps to ``maps``)."""
    fus = _image_source(fused, "fused")
    ref = _image_source(reference, "reference")
    check_same_shape("reference", ref, "fused", fus)
    check_path_grid(fused, reference)
    fus.follow_bands(ref)
    settings = _declaring(settings, {"fused": fus, "reference": ref})
    lead, trail = settings.cut_bounds(ref.shape)
    h, w = ref.shape[:2]
    names = settings.indexes
    specs = [i for i in catalog.map_indexes(names, settings.protocol.name) if i.name in names] if maps else []
    ctx = ReducedContext(fus, ref, settings, lead, trail, (h, w), tuple(i.name for i in specs))
    tile = effective_tile_size(tile_size, settings.protocol.block_size)
    tiles = plan_tiles(*ctx.cut_shape, tile)
    nb = ref.shape[2]
    infos = map_infos(specs, ctx.cut_shape, settings.protocol.block_size, (lead, lead))
    stream = MapStream(maps, infos) if maps is not None else None

    def finalize(total: Partial) -> dict[str, Any]:
        settings.check({r: facts_of(total, r, src) for r, src in (("fused", fus), ("reference", ref))})
        values = settings.results(sums_of(total, ctx.statistics), nb)
        card = settings.card(
            image_shape=[h, w, nb], evaluated_shape=[*ctx.cut_shape, nb],
            tiling=_tiling_card([fus, ref], tile, len(tiles), f"after the {lead}-pixel leading cut"),
        )
        if maps is not None:
            card["maps"] = {k: info.to_card() for k, info in infos.items()}
        return {**values, "protocol": card}

    return TiledJob(name, ctx, tiles, reduced_tile, finalize, on_tile=stream)


def full_job(fused: Any, ms: Any, pan: Any, settings: FullSettings, *,
             tile_size: int = DEFAULT_TILE_SIZE, name: str = "scene", maps: MapSink | None = None,
             ms_exp: Any = None) -> TiledJob:
    """Plan the tiles of a full-resolution evaluation with validated settings (its maps to ``maps``; ``ms_exp``:
    the upsampled MS, given under ``upsampled="given"``, read as the EXP)."""
    fus = _image_source(fused, "fused")
    ms_src = _image_source(ms, "ms")
    pan_src = _image_source(pan, "pan")
    if pan_src.shape[2] != settings.pan_bands:
        raise ShapeError(f"pan: expected a 2-D (H, W) panchromatic image, got shape {pan_src.shape}"
                         if settings.pan_bands == 1 else f"pan: expected the {settings.pan_bands} high-resolution "
                         f"bands (H, W, {settings.pan_bands}) in the PAN's place, got shape {pan_src.shape}")
    check_pan_ratio(fus, ms_src, pan_src, settings.ratio)
    check_path_grid(fused, pan, scene_name="pan")
    names = scene_names(ms_src.declared, sensor=settings.sensor, n_bands=ms_src.shape[2])[0]
    fus.follow_bands(ms_src, names)
    settings = _declaring(settings.for_bands(names), {"fused": fus, "ms": ms_src, "pan": pan_src})  # the MS's bands
    ms_gnyq = settings.ms_gnyq(fus.shape[2])
    exp_src = None
    if ms_exp is not None:
        exp_src = _image_source(ms_exp, "ms_exp")
        if exp_src.shape != fus.shape:
            raise ShapeError(f"ms_exp {exp_src.shape} must have the fused image's shape {fus.shape}")
    return _JOB_BUILDERS[settings.protocol.full_engine](fus, ms_src, pan_src, settings, ms_gnyq, tile_size, name,
                                                        maps, exp_src)


def _toolbox_job(fus: Source, ms_src: Source, pan_src: Source, settings: FullSettings,
                 ms_gnyq: tuple[float, ...], tile_size: int, name: str, maps: MapSink | None = None,
                 exp_src: Source | None = None) -> TiledJob:
    """The toolbox family tile-wise: a first pass, then, where a statistic reads a global fit or a map is composed
    from the whole block maps, a later pass over the same tiles with the fitted values."""
    bs = settings.protocol.block_size
    nb = fus.shape[2]
    if nb < 2 and not settings.ms_scale_blocks:
        raise ShapeError("fused: D_lambda needs at least 2 bands (it compares band pairs)")
    names = settings.indexes
    chunk = settings.chunk_context(ms_gnyq, fus.shape, maps=maps is not None)
    first, later = catalog.later_pass(settings.statistics())
    early, late = split_maps(catalog.map_indexes(names, settings.protocol.name) if maps is not None else ())
    sources_by_role = {"fused": fus, "ms": ms_src, "pan": pan_src, **({"exp": exp_src} if exp_src else {})}
    ctx = FullContext(sources_by_role, settings, chunk, fus.shape[:2], tuple(s.name for s in first),
                      tuple(i.name for i in early))
    tile = effective_tile_size(tile_size, settings.tile_multiple)
    tiles = plan_tiles(*fus.shape[:2], tile)
    sources = [fus, ms_src, pan_src, *([exp_src] if exp_src else [])]
    infos = map_infos([i for i in (*early, *late) if i.name in names], fus.shape[:2], bs)
    stream = MapStream(maps, infos) if maps is not None else None
    block_shapes = {i.name: (fus.shape[0] // bs, fus.shape[1] // bs) for i in early}

    def finalize(total: Partial) -> dict[str, Any] | TiledJob:
        settings.check({r: facts_of(total, r, src) for r, src in (("fused", fus), ("ms", ms_src), ("pan", pan_src))})
        sums = sums_of(total, first)
        if not (later or late):
            return finish(sums)
        chunk2 = following_context(chunk, sums, block_maps(total, block_shapes))
        ctx2 = FullContext(sources_by_role, settings, chunk2, fus.shape[:2], tuple(s.name for s in later),
                           tuple(i.name for i in late), facts=False)
        return TiledJob(name, ctx2, tiles, full_tile, lambda t: finish({**sums, **sums_of(t, later)}), on_tile=stream)

    def finish(sums: dict[str, Any]) -> dict[str, Any]:
        values = settings.results(sums, nb)
        card = settings.card(ms_gnyq, list(fus.shape),
                             tiling=_tiling_card(sources, tile, len(tiles), "(0, 0) at PAN scale"))
        if maps is not None:
            card["maps"] = {k: info.to_card() for k, info in infos.items()}
        return {**values, "protocol": card}

    return TiledJob(name, ctx, tiles, full_tile, finalize, on_tile=stream)


def _reprojected_job(fus: Source, ms_src: Source, pan_src: Source, settings: FullSettings,
                     ms_gnyq: tuple[float, ...], tile_size: int, name: str, maps: MapSink | None = None,
                     exp_src: Source | None = None) -> TiledJob:
    """``reprojected2022`` tile-wise: a coregistration pass whose finalize returns the index pass
    (see :mod:`pansharp_iqa.tiled.reprojected`)."""
    from ..reprojected.protocol import SETTINGS, reprojection_details
    from . import reprojected as rp

    ratio = settings.ratio
    bs = int(SETTINGS["block_size"])
    check_block_fits("ms", ms_src.shape, bs)
    ctx = rp.context_for(fus, ms_src, pan_src, settings=settings, gnyq=ms_gnyq, block_size=bs)
    tile = effective_tile_size(tile_size, bs * ratio)
    tiles = plan_tiles(*fus.shape[:2], tile)
    sources = [fus, ms_src, pan_src]

    def finalize_coreg(total: Partial, ctx: rp.ReprojectedContext = ctx) -> TiledJob:
        ms_facts, pan_facts = facts_of(total, "ms", ms_src), facts_of(total, "pan", pan_src)
        settings.check({"ms": ms_facts, "pan": pan_facts})
        tops = rp.coreg_tops_needed(total, ctx.search_window)
        if tops is not None and ctx.coreg_tops is None:  # degenerate (all-zero) data: global upper clip
            again = dataclasses.replace(ctx, coreg_tops=tops)
            return TiledJob(name, again, tiles, rp.coreg_tile, lambda t: finalize_coreg(t, again))
        rho, shifts = rp.coreg_result(total, ctx)
        ctx2 = rp.with_shifts(ctx, shifts)
        return TiledJob(name, ctx2, tiles, rp.index_tile,
                        lambda t: finalize_indexes(t, ctx2, rho, shifts, ms_facts, pan_facts))

    def finalize_indexes(total: Partial, ctx2: rp.ReprojectedContext, rho: np.ndarray, shifts: np.ndarray,
                         ms_facts: Any, pan_facts: Any) -> dict[str, Any] | TiledJob:
        settings.check({"fused": facts_of(total, "fused", fus), "ms": ms_facts, "pan": pan_facts})
        tops = rp.drho_tops_needed(total)
        if tops is not None and ctx2.drho_tops is None:
            again = dataclasses.replace(ctx2, drho_tops=tops)
            return TiledJob(name, again, tiles, rp.index_tile,
                            lambda t: finalize_indexes(t, again, rho, shifts, ms_facts, pan_facts))
        values = rp.index_values(total, ctx2)
        details = reprojection_details(
            sensor=settings.sensor.name, ratio=ratio, gnyq=ms_gnyq, shifts=shifts, correlations=rho,
            search_window=ctx2.search_window, coregistration_half_width=ctx2.coreg_half_width,
            d_rho_half_width=ctx2.drho_half_width, integral="ordered",
        )
        tiling = {**_tiling_card(sources, tile, len(tiles), "(0, 0) at PAN scale"), **rp.describe(ctx2)}
        card = protocol_card(settings.protocol, **settings.common_card(ms_gnyq, list(fus.shape)),
                             reprojection=details, tiling=tiling, **({"maps": {}} if maps is not None else {}))
        return {**{k: float(values[k]) for k in settings.indexes}, "protocol": card}

    return TiledJob(name, ctx, tiles, rp.coreg_tile, finalize_coreg)


#: Tile-job builder of each ``Protocol.full_engine``.
_JOB_BUILDERS: dict[str, Callable[..., TiledJob]] = {
    "toolbox": _toolbox_job,
    "reprojected": _reprojected_job,
}


def job(inputs: dict[str, Any], settings: ReducedSettings | FullSettings, *, tile_size: int = DEFAULT_TILE_SIZE,
        name: str = "scene", maps: MapSink | None = None) -> TiledJob:
    """Plan the tiles of one evaluation with validated settings (opens file headers; raises on bad input).

    Parameters
    ----------
    inputs : dict
        ``{"fused", "reference"}`` (reduced-resolution settings) or ``{"fused", "ms", "pan"}``:
        path-likes, rasterio datasets, arrays, memmaps or array-likes.
    settings : ReducedSettings or FullSettings
        The settings value (:func:`~pansharp_iqa.reduced_settings`, :func:`~pansharp_iqa.full_settings`).
    tile_size : int
        Tile side in pixels (rounded up to the block grid).
    name : str
        Label of the job (progress, outcomes).
    maps : MapSink, optional
        Where the quality maps of the requested indexes go, window by window as tiles finish
        (:mod:`pansharp_iqa.quality_maps`); its ``close()`` is the caller's.

    Returns
    -------
    TiledJob
        Run it with :func:`pansharp_iqa.tiled.run_jobs`.
    """
    if isinstance(settings, ReducedSettings):
        whole = [s.name for s in settings.statistics() if s.support not in TILE_SUPPORTS]
        if whole:  # SSIM's 11x11 windows cross the tiles
            raise SettingError(f"{', '.join(whole)} (SSIM) is computed in memory only, not tile-wise: evaluate with "
                               "tiled='never' (--tiled never), or leave SSIM out of the indexes")
        return reduced_job(inputs["fused"], inputs["reference"], settings, tile_size=tile_size, name=name, maps=maps)
    return full_job(inputs["fused"], inputs["ms"], inputs["pan"], settings, tile_size=tile_size, name=name, maps=maps,
                    ms_exp=inputs.get("ms_exp"))


def evaluate_tiled(inputs: dict[str, Any], settings: ReducedSettings | FullSettings, *,
                   tile_size: int = DEFAULT_TILE_SIZE, jobs: int = 1, scheduler: Any = None,
                   progress: bool = False, maps: MapSink | None = None) -> dict[str, Any]:
    """The tile engine's result of one evaluation (what :func:`pansharp_iqa.evaluation.evaluate` runs tile-wise).

    Parameters
    ----------
    inputs, settings, tile_size
        As :func:`job`.
    jobs : int
        Local worker processes.
    scheduler : str or distributed.Client, optional
        Dask scheduler address or client.
    progress : bool
        tqdm bar over the tiles.
    maps : MapSink, optional
        Where the quality maps go (see :func:`job`).

    Returns
    -------
    dict
        As :func:`pansharp_iqa.evaluation.evaluate`, with ``card["tiling"]``.
    """
    return run_jobs([job(inputs, settings, tile_size=tile_size, maps=maps)], workers=jobs, scheduler=scheduler,
                    progress=progress)[0].unwrap()


def evaluate_reduced_tiled(fused: Any, reference: Any, *, tile_size: int = DEFAULT_TILE_SIZE, jobs: int = 1,
                           scheduler: Any = None, progress: bool = False, **settings: Any) -> dict[str, Any]:
    """Reduced-resolution indexes of a scene of any size, tile by tile, in bounded memory.

    Same numbers (to 1e-9 relative or better) and card as
    :func:`pansharp_iqa.evaluation.evaluate_reduced`, plus ``card["tiling"]``.

    Parameters
    ----------
    fused, reference : path-like, rasterio dataset, ndarray, np.memmap or array-like
        ``(H, W, B)`` images (GeoTIFF bands = B) in DN, or multiplied to DN by ``scale``.
    tile_size : int, default 512
        Tile side in pixels of the evaluated image, rounded up to a multiple of the 32-pixel block;
        memory per worker grows with its square (about 150 MB for 8 bands at 512).
    jobs : int, default 1
        Local worker processes.
    scheduler : str or distributed.Client, optional
        Dask scheduler address (``"tcp://host:8786"``): tiles run on that cluster.
    progress : bool
        tqdm bar with tiles done / total and megapixels per second.
    **settings
        The keywords of :func:`~pansharp_iqa.settings.reduced_settings` (``ratio``, ``bits``,
        ``protocol``, ``scale``, ``threshold``, ``indexes``, ``scale_mismatch``), as for
        :func:`~pansharp_iqa.evaluation.evaluate_reduced`.

    Returns
    -------
    dict
        ``Q2n``, ``Q``, ``SAM`` (degrees), ``ERGAS``, ``SCC`` (or the ``indexes`` asked for) and
        ``"protocol"`` (the card).

    Raises
    ------
    InputError
        As :func:`~pansharp_iqa.evaluation.evaluate_reduced`.
    SceneReadError
        A file is corrupt, truncated or unreadable.

    References
    ----------
    Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315; Wald et al., PE&RS 63(6), 1997.

    Examples
    --------
    >>> from pansharp_iqa import evaluate_reduced, wald_degrade
    >>> from pansharp_iqa.baselines import gsa
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> fused = gsa(*wald_degrade(ms, pan, "none", ratio=4), ratio=4)
    >>> tiled = evaluate_reduced_tiled(fused, ms, ratio=4, bits=11, tile_size=64)
    >>> whole = evaluate_reduced(fused, ms, ratio=4, bits=11)
    >>> tiled["protocol"]["tiling"]["n_tiles"], max(abs(tiled[k] - whole[k]) for k in ("Q2n", "SAM", "ERGAS")) < 1e-12
    (4, True)
    """
    return evaluate_tiled({"fused": fused, "reference": reference}, reduced_settings(**settings), tile_size=tile_size,
                          jobs=jobs, scheduler=scheduler, progress=progress)


def evaluate_full_tiled(fused: Any, ms: Any, pan: Any, *, tile_size: int = DEFAULT_TILE_SIZE, jobs: int = 1,
                        scheduler: Any = None, progress: bool = False, **settings: Any) -> dict[str, Any]:
    """Full-resolution indexes of a scene of any size, tile by tile, in bounded memory.

    Same numbers (to 1e-9 relative or better) and card as
    :func:`pansharp_iqa.evaluation.evaluate_full`, plus ``card["tiling"]``. ``reprojected2022``
    runs two passes over the tiles (coregistration sums, then the indexes with the chosen shifts;
    see ``pansharp_iqa.tiled.reprojected``).

    Parameters
    ----------
    fused : path-like, rasterio dataset, ndarray, np.memmap or array-like, (H, W, B)
        Fused image at PAN scale (DN); H and W multiples of 32 (toolbox protocols).
    ms : same kinds, (H/ratio, W/ratio, B)
        Low-resolution MS (DN).
    pan : same kinds, (H, W) or one band
        PAN (DN).
    tile_size : int, default 512
        Tile side at PAN scale, rounded up to a multiple of lcm(32, ratio) (``reprojected2022``:
        of 32 ratio, so tiles hold whole 32 x 32 MS-scale blocks).
    jobs : int, default 1
        Local worker processes.
    scheduler : str or distributed.Client, optional
        Dask scheduler address (``"tcp://host:8786"``) or client: tiles run on that cluster.
    progress : bool
        tqdm bar with tiles done / total and megapixels per second.
    **settings
        The keywords of :func:`~pansharp_iqa.settings.full_settings` (``sensor``, required,
        ``ratio``, ``bits``, ``protocol`` among ``toolbox2020``, ``toolbox2015``, ``qnr-paper`` and
        ``reprojected2022``, ``scale``, ``threshold``, ``nan_policy``, ``indexes``,
        ``scale_mismatch``), as for :func:`~pansharp_iqa.evaluation.evaluate_full`.

    Returns
    -------
    dict
        The protocol's FR indexes and ``"protocol"`` (the card).

    Raises
    ------
    InputError, ConstantBlockError
        As :func:`~pansharp_iqa.evaluation.evaluate_full`.
    SceneReadError
        A file is corrupt, truncated or unreadable.

    References
    ----------
    Vivone et al., IEEE GRSM 2021; Alparone et al., PE&RS 74(2), 2008; Khan et al., IEEE TGRS 47(11), 2009.

    Examples
    --------
    >>> from pansharp_iqa import evaluate_full, interp23tap
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> exp = interp23tap(ms, 4)
    >>> tiled = evaluate_full_tiled(exp, ms, pan, sensor="none", ratio=4, bits=11, tile_size=256)
    >>> whole = evaluate_full(exp, ms, pan, sensor="none", ratio=4, bits=11)
    >>> tiled["protocol"]["tiling"]["n_tiles"], abs(tiled["QNR"] - whole["QNR"]) < 1e-12
    (9, True)
    """
    return evaluate_tiled({"fused": fused, "ms": ms, "pan": pan}, full_settings(**settings), tile_size=tile_size,
                          jobs=jobs, scheduler=scheduler, progress=progress)

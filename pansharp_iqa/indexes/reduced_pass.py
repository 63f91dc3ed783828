"""One pass over row strips that computes the sums behind every requested reduced-resolution index.

Each task takes a strip of rows of the reference and fused images (plus the halo its statistics'
supports need), converts it to float64 band planes once (scale and threshold applied there, so
whole-image float64 copies are never made) and hands each :class:`~.catalog.Statistic` of the
requested indexes its view of the strip while the strip is in cache: ``"blocks"`` statistics the
strip's block rows, ``"windows"`` ones the rows their windows read, ``"pixels"`` ones the strip's
own rows, ``"sobel"`` ones the rows of the SCC form's frame with a one-row halo. The partial sums
are merged in strip order by each statistic's own :meth:`~.catalog.Statistic.reduce` (results
independent of the thread count) and finalized by the catalogue (:func:`~.catalog.finalize`).
The tile engine (:mod:`pansharp_iqa.tiled.reduced`) feeds the same chunk functions with tiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .catalog import ChunkContext, Statistic, chunk_map, get_statistic
from .scc import scc_strip_planes
from .strips import STRIP_ROWS, StripImage, map_strips

__all__ = ["reduced_sums", "STRIP_SUPPORTS"]

#: The chunk supports the strip pass provides.
STRIP_SUPPORTS = ("pixels", "windows", "blocks", "sobel", "ssim")


def reduced_sums(
    reference: StripImage,
    fused: StripImage,
    *,
    statistics: Sequence[Statistic | str],
    ctx: ChunkContext,
    strip_rows: int = STRIP_ROWS,
    maps: dict[str, np.ndarray] | None = None,
) -> dict[str, dict[str, Any]]:
    """Merged sums of the given statistics, in one pass over row strips; under ``ctx.maps`` each statistic's
    chunk maps (``catalog.chunk_map``) are put together, strip under strip, in ``maps``."""
    stats = [get_statistic(s) if isinstance(s, str) else s for s in statistics]
    unknown = [s.name for s in stats if s.support not in STRIP_SUPPORTS]
    if unknown:
        raise ValueError(f"the strip pass has no support for {unknown}")
    supports = {s.support for s in stats}
    h, w, _ = reference.shape
    bs = int(ctx.block_size)
    q_h = h - bs + 1
    planes_needed = bool(supports - {"blocks"})
    gradient = ctx.gradient

    def task(r0: int, r1: int) -> dict[str, Any]:
        lo, hi = max(r0 - 1, 0), min(h, r1 + max(bs - 1, 10))  # halos: sobel 1 row, windows bs - 1, ssim 10
        if planes_needed:
            ref, fus = reference.planes(lo, hi), fused.planes(lo, hi)
        views: dict[str, tuple[Any, ...] | None] = {}
        if "blocks" in supports:
            views["blocks"] = (reference, fused, r0, r1)
        if "windows" in supports:
            rows = slice(r0 - lo, min(r1, q_h) + bs - 1 - lo)
            views["windows"] = (ref[:, rows], fus[:, rows]) if r0 < q_h else None
        if "pixels" in supports:
            own = slice(r0 - lo, r1 - lo)
            views["pixels"] = (ref[:, own], fus[:, own])
        if "ssim" in supports:  # valid 11x11 windows starting in the strip: 10 rows after it
            views["ssim"] = (ref[:, r0 - lo : min(r1, h - 10) + 10 - lo], fus[:, r0 - lo : min(r1, h - 10) + 10 - lo]) \
                if r0 < h - 10 else None
        if "sobel" in supports:
            rp = scc_strip_planes(lambda a, b: ref[:, a - lo : b - lo], h, w, r0, r1, gradient)  # type: ignore[arg-type]
            views["sobel"] = None if rp is None else (
                rp, scc_strip_planes(lambda a, b: fus[:, a - lo : b - lo], h, w, r0, r1, gradient))  # type: ignore[arg-type]
        out: dict[str, Any] = {}
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            for s in stats:
                view = views[s.support]
                if view is not None:
                    out[s.name] = s.chunk(*view, ctx)  # type: ignore[misc]
        return out

    parts = map_strips(task, h, bs, strip_rows)
    out = {}
    for s in stats:
        pieces = [chunk_map(p[s.name], ctx, w) for p in parts if s.name in p]
        out[s.name] = s.reduce([f for f, _ in pieces])
        if ctx.maps and maps is not None and pieces and pieces[0][1] is not None:
            maps[s.name] = np.concatenate([m for _, m in pieces])
    return out

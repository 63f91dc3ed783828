"""Whole-image value summaries from tiles: the evidence of the validation rules, tile by tile.

Each tile adds, for each image it reads, the minimum and maximum of what it read and, per band,
the count, sum, sum of squares, minimum and maximum of the pixels it owns on the fixed sample grid
of :func:`pansharp_iqa.validation.sample_step` (by :func:`pansharp_iqa.validation.grid_band_sums`,
the in-memory summary's own formula); :func:`facts_of` turns the combined sums into the same
:class:`~pansharp_iqa.validation.ImageFacts` the in-memory path computes, so both paths apply the
same rules (:mod:`pansharp_iqa.validation`), band by band, to the same evidence. The values equal to a file's
declared no-data value are counted where a tile owns them, and refused (the scene is read once).
"""

from __future__ import annotations

import numpy as np

from ..io.geotiff import check_nodata_count
from ..io.windows import Source
from ..validation import ImageFacts, facts_from_sums, grid_band_sums, sample_step
from .accumulate import Partial
from .patch import Patch

__all__ = ["add_facts", "facts_of"]


def add_facts(out: Partial, name: str, source: Source, patch: Patch, stats: dict[str, float],
              rows: np.ndarray, cols: np.ndarray, scale: float = 1.0) -> None:
    """Record one tile's share of an image's value summary."""
    out.maximum(name + "_max", stats["max"])
    out.maximum(name + "_negmin", -stats["min"])
    step = sample_step(*source.shape[:2])
    r = np.asarray(rows)[np.asarray(rows) % step == 0]
    c = np.asarray(cols)[np.asarray(cols) % step == 0]
    bands = int(source.shape[2])
    if r.size and c.size:
        count, total, total_sq, lo, hi, nonint = grid_band_sums(np.moveaxis(patch.take(r, c), 0, 2))
    else:
        count, total, total_sq, lo, hi, nonint = grid_band_sums(np.zeros((0, 0, bands)))
    out.add(name + "_grid", np.concatenate([[count], total, total_sq, nonint]))
    nodata = source.declared.geo.nodata
    if nodata is not None and not np.isnan(nodata):  # in the units the windows give (declared, scaled, reordered)
        value = source.declared.values(np.full((1, 1, bands), nodata))[:, :, list(source.band_index or range(bands))]
        planes = value.reshape(bands, 1, 1) * patch.scale  # patches hold band planes
        out.add(name + "_nodata", [np.count_nonzero(patch.take(rows, cols) == planes)])
    for b in range(bands):
        out.maximum(f"{name}_gridmax{b}", hi[b])
        out.maximum(f"{name}_gridnegmin{b}", -lo[b])


def facts_of(total: Partial, name: str, source: Source) -> ImageFacts:
    """The :class:`~pansharp_iqa.validation.ImageFacts` of an image from the combined partials."""
    if name + "_nodata" in total.sums:
        check_nodata_count(int(total.sums[name + "_nodata"][0]), float(source.declared.geo.nodata or 0),
                           name=source.label, where=source.declared.where)
    sums = total.sums[name + "_grid"]
    bands = int(source.shape[2])
    count, band_total, band_sq = sums[0], sums[1 : 1 + bands], sums[1 + bands : 1 + 2 * bands]
    nonint = sums[1 + 2 * bands : 1 + 3 * bands]
    hi = [total.maxima[f"{name}_gridmax{b}"] for b in range(bands)]
    lo = [-total.maxima[f"{name}_gridnegmin{b}"] for b in range(bands)]
    return facts_from_sums(name, source.shape, source.dtype, lo=-total.maxima[name + "_negmin"],
                           hi=total.maxima[name + "_max"], n=count * bands, total=float(np.sum(band_total)),
                           total_sq=float(np.sum(band_sq)), band_total=band_total, band_total_sq=band_sq,
                           band_lo=lo, band_hi=hi, band_nonint=nonint)

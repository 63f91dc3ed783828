"""Quality maps tile by tile: each tile's windows go to the sink as the tile arrives.

A tile returns its window of each map (:meth:`~.accumulate.Partial.add_map`). :class:`MapStream`
runs in the calling process as each tile's partial arrives (``TiledJob.on_tile``): it writes the
windows of the requested maps to the :class:`~pansharp_iqa.quality_maps.MapSink` and drops the
windows of pixel maps from the partial, so that a whole-scene map is never held; block maps (one
value per block: small) stay in the partials, to be assembled (:func:`block_maps`) where a later
pass composes a PAN-grid map from them (RQNR, HQNR).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..indexes.catalog import get_index
from ..quality_maps import MapInfo, MapSink
from .accumulate import Partial, assemble
from .plan import Tile

__all__ = ["MapStream", "block_maps"]


def _is_block_map(name: str) -> bool:
    spec = get_index(name).map
    return spec is not None and spec.grid == "blocks"


class MapStream:
    """``TiledJob.on_tile`` for quality maps: opens each map of ``infos`` in ``sink``, then writes every tile's
    windows of them (see the module docstring)."""

    def __init__(self, sink: MapSink, infos: Mapping[str, MapInfo]) -> None:
        self.sink, self.infos = sink, dict(infos)
        for info in self.infos.values():
            sink.open(info)

    def __call__(self, tile: Tile, part: Partial) -> None:
        """Write the tile's map windows; keep only the block maps' windows in ``part``."""
        for name in list(part.maps):
            windows = part.maps[name]
            if name in self.infos:
                for r, c, values in windows:
                    self.sink.write(name, (r, r + values.shape[0]), (c, c + values.shape[1]), values)
            if not _is_block_map(name):
                del part.maps[name]


def block_maps(total: Partial, shapes: Mapping[str, tuple[int, int]]) -> dict[str, np.ndarray]:
    """The whole block maps of ``shapes`` (by index) from the combined partial's windows."""
    return {name: assemble(total.maps.get(name, []), shape) for name, shape in shapes.items()}

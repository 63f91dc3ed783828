"""``--maps``: each pair's quality maps as GeoTIFFs under ``OUT/maps/<method>/<scene>/<index>.tif``, and their
previews for ``report.html`` and ``--plots``.

The files are listed in the output folder's manifest before the run writes them (:func:`map_files`), written by the
pair's evaluation window by window (tile-wise evaluations never hold a whole map) under temporary names and renamed
when complete (:class:`~pansharp_iqa.quality_maps.GeoTiffMaps`); they take the scene's georeference (the PAN's at full
resolution, the GT's at reduced resolution; a block map's pixel is a block).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from pansharp_iqa import quality_maps
from pansharp_iqa.quality_maps import MAP_FILE_SUFFIX, GeoTiffMaps, MapInfo, PreviewMaps
from pansharp_iqa.reports.display import DISPLAY_SIDE

__all__ = ["MAPS_DIR", "PairMaps", "map_files", "map_folder", "map_names"]

#: The folder of the GeoTIFF maps in OUT.
MAPS_DIR = "maps"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def map_names(settings: Any) -> list[str]:
    """The indexes of a run whose maps are made (those of its table that have one in its protocol's form), as the
    library writes them (:func:`pansharp_iqa.quality_maps.map_names`)."""
    return list(quality_maps.map_names(settings))


def map_folder(out_dir: Path, method: str, scene: str) -> Path:
    """``OUT/maps/<method>/<scene>``."""
    return Path(out_dir) / MAPS_DIR / _safe(method) / _safe(scene)


def map_files(out_dir: Path, method: str, scene: str, names: list[str]) -> list[Path]:
    """The GeoTIFF of each map of one pair."""
    return [map_folder(out_dir, method, scene) / f"{_safe(n)}{MAP_FILE_SUFFIX}" for n in names]


class PairMaps:
    """The maps of one pair: GeoTIFFs in ``folder`` (none without one) and previews of at most
    :data:`~pansharp_iqa.reports.display.DISPLAY_SIDE` pixels (what ``close`` returns)."""

    def __init__(self, folder: str | None, like: str | None) -> None:
        # OUT's map files are the run's own (listed in its manifest; --force / --resume decide): replaced
        self.files = GeoTiffMaps(folder, like=like, names={}, overwrite=True) if folder else None
        self.preview = PreviewMaps(DISPLAY_SIDE)

    def open(self, info: MapInfo) -> None:
        """Open the map in both."""
        if self.files is not None:
            self.files.names[info.index] = _safe(info.index)
            self.files.open(info)
        self.preview.open(info)

    def write(self, index: str, rows: tuple[int, int], cols: tuple[int, int], values: np.ndarray) -> None:
        """Write a window to both."""
        if self.files is not None:
            self.files.write(index, rows, cols, values)
        self.preview.write(index, rows, cols, values)

    def close(self) -> dict[str, Any]:
        """Complete the files; the previews, by index."""
        if self.files is not None:
            self.files.close()
        return self.preview.close()

    def abort(self) -> None:
        """Remove the unfinished files."""
        if self.files is not None:
            self.files.abort()

"""Quality maps as heat maps: one colour scale per index shared by every method of a scene.

The maps come as previews (``pansharp_iqa.quality_maps.PreviewMaps``: at most 256 pixels a side,
nearest samples); this module only draws them. For display only: no number is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .display import colourise

__all__ = ["MAP_CMAP", "MapScale", "map_scales", "heat_map_png", "map_label", "ordered_indexes"]

#: Matplotlib colour map of the quality maps (perceptually uniform, readable in grey).
MAP_CMAP = "viridis"
#: Colour of map samples without a value (NaN: a constant block's 0/0, as the reference code gives).
_NAN_RGB = (200, 200, 200)


class MapScale:
    """The colour scale of one index on one scene: ``[low, high]``, shared by every method.

    Examples
    --------
    >>> s = MapScale(0.0, 0.5)
    >>> s.fraction(np.array([0.0, 0.25, 1.0])).tolist()
    [0.0, 0.5, 1.0]
    """

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = float(low), float(high)

    def fraction(self, values: np.ndarray) -> np.ndarray:
        """Values as fractions of the scale, clipped to [0, 1]."""
        span = self.high - self.low
        return np.clip((np.asarray(values, dtype=np.float64) - self.low) / span if span > 0 else
                       np.zeros(np.shape(values)), 0.0, 1.0)


def map_scales(maps: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, MapScale]:
    """One :class:`MapScale` per index: the range of its finite values over every method (``maps`` by method,
    then index); a constant map gets a unit-wide scale around its value.

    Examples
    --------
    >>> s = map_scales({"A": {"Q2n": np.array([[0.5, 0.9]])}, "B": {"Q2n": np.array([[0.2, np.nan]])}})
    >>> (s["Q2n"].low, s["Q2n"].high)
    (0.2, 0.9)
    """
    ranges: dict[str, list[float]] = {}
    for per_method in maps.values():
        for index, values in per_method.items():
            finite = np.asarray(values, dtype=np.float64)
            finite = finite[np.isfinite(finite)]
            if finite.size:
                lo, hi = ranges.setdefault(index, [math.inf, -math.inf])
                ranges[index] = [min(lo, float(finite.min())), max(hi, float(finite.max()))]
    out = {}
    for index, (lo, hi) in ranges.items():
        out[index] = MapScale(lo, hi) if hi > lo else MapScale(lo - 0.5, hi + 0.5)
    return out


def heat_map_png(values: np.ndarray, scale: MapScale | None, *, cmap: str = MAP_CMAP) -> bytes:
    """PNG bytes of a map coloured on ``scale`` (NaN in light grey; no scale: all grey).

    Examples
    --------
    >>> heat_map_png(np.eye(3), MapScale(0.0, 1.0))[:4]
    b'\\x89PNG'
    """
    import cv2

    arr = np.asarray(values, dtype=np.float64)
    rgb = colourise(scale.fraction(arr) if scale is not None else np.zeros(arr.shape), 1.0, cmap=cmap)
    rgb[~np.isfinite(arr) | (scale is None)] = _NAN_RGB
    ok, encoded = cv2.imencode(".png", np.ascontiguousarray(rgb[:, :, ::-1]))
    if not ok:  # pragma: no cover - OpenCV always encodes a uint8 RGB image
        raise ValueError("OpenCV could not encode the map as PNG")
    return encoded.tobytes()


def map_label(index: str) -> str:
    """The heading of an index's maps: its name, direction and unit (from the catalogue).

    Examples
    --------
    >>> map_label("SAM"), map_label("D_s_R")
    ('SAM ↓ (radians)', 'D_s_R ↓')
    """
    from pansharp_iqa.indexes.catalog import get_index

    spec = get_index(index)
    unit = spec.map.unit if spec.map is not None else ""
    return f"{index} {'↑' if spec.higher_is_better else '↓'}" + (f" ({unit})" if unit else "")


def ordered_indexes(maps: Mapping[str, Mapping[str, np.ndarray]], methods: Sequence[str]) -> list[str]:
    """The indexes with a map for some method, in the order the first method that has each lists them."""
    out: list[str] = []
    for m in methods:
        out += [k for k in maps.get(m, {}) if k not in out]
    return out

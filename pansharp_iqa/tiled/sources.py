"""The tile engine's readers: :mod:`pansharp_iqa.io.windows`, named here for the tile modules."""

from __future__ import annotations

from ..io.windows import ArraySource, MemmapSource, RasterioSource, Source, is_lazy_input, open_source

__all__ = ["Source", "ArraySource", "MemmapSource", "RasterioSource", "open_source", "is_lazy_input"]

"""Exceptions of tile-wise evaluation: :mod:`pansharp_iqa.io.errors`, named here for the tile modules."""

from __future__ import annotations

from ..io.errors import SceneReadError

__all__ = ["SceneReadError"]

"""Exceptions of tile-wise evaluation."""

from __future__ import annotations

from ..io.errors import DataError

__all__ = ["SceneReadError"]


class SceneReadError(DataError):
    """A scene's file cannot be read (corrupt, truncated, missing, unsupported layout).

    Subclass of :class:`pansharp_iqa.io.errors.DataError`, so ``pansharp-eval`` reports it as that
    scene's failure and goes on with the other scenes. The message names the file, the window being
    read and the underlying GDAL/OS error.
    """

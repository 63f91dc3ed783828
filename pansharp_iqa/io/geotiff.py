"""The one GeoTIFF reader of the package.

All TIFF/GeoTIFF input goes through :func:`read_geotiff`, so a later tile-wise reader (windowed
reads of huge scenes, e.g. with rasterio) replaces this single function.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

import numpy as np

from .errors import DataError

__all__ = ["quiet_tifffile", "read_geotiff"]


@contextlib.contextmanager
def quiet_tifffile() -> Iterator[None]:
    """Silence tifffile's log messages (e.g. on truncated files) for the duration of a read.

    tifffile reports parsing trouble through :mod:`logging`, which prints on stderr when no
    handler is configured; the readers here turn every failure into one reason of their own.

    Examples
    --------
    >>> from pansharp_iqa.io.geotiff import quiet_tifffile
    >>> with quiet_tifffile():
    ...     pass
    """
    log = logging.getLogger("tifffile")
    level = log.level
    log.setLevel(logging.CRITICAL + 1)  # it logs broken files at ERROR level
    try:
        yield
    finally:
        log.setLevel(level)


def read_geotiff(path: str | os.PathLike[str]) -> np.ndarray:
    """Read a (Geo)TIFF image into memory.

    Parameters
    ----------
    path : path-like
        A single-image TIFF; multi-band files may be stored band-interleaved ``(B, H, W)`` or
        pixel-interleaved ``(H, W, B)`` (orientation is resolved by the caller from the shape).

    Returns
    -------
    numpy.ndarray
        The stored array, dtype unchanged (values in the file's units).

    Raises
    ------
    DataError
        If the file cannot be read.
    """
    import tifffile

    try:
        with quiet_tifffile():
            return np.asarray(tifffile.imread(os.fspath(path)))
    except Exception as exc:  # noqa: BLE001 - any reader failure becomes a per-scene reason
        raise DataError(f"cannot read TIFF {os.fspath(path)}: {type(exc).__name__}: {exc}") from None

"""A float64 ``.npy`` file written and read by whole rows, never mapped: the baselines' disk output.

:class:`NpyRows` is the ``out`` that :func:`write_baseline` gives a baseline: rows go to the file
with unbuffered writes at their offset and come back with reads into the strip's own array, so
the fused image never sits in the process's memory (a memory map would count every touched page
as resident).
:func:`write_baseline` writes into a temporary file beside the target and renames it at the end:
the target is either the complete result or untouched.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["NpyRows", "write_baseline"]


class NpyRows:
    """An ``(H, W, B)`` little-endian float64 ``.npy`` file, sliced by rows: ``f[r0:r1]``, ``f[r0:r1] = x``."""

    dtype = np.dtype("<f8")

    def __init__(self, path: str | os.PathLike[str], shape: tuple[int, int, int]) -> None:
        self.path, self.shape = os.fspath(path), tuple(int(s) for s in shape)
        self.file: io.FileIO | None = io.FileIO(self.path, "w+")  # unbuffered: no copy of the rows
        np.lib.format.write_array_header_1_0(
            self.file, {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": self.shape})
        self.offset = self.file.tell()
        self.file.truncate(self.offset + int(np.prod(self.shape)) * self.dtype.itemsize)
        self.row_bytes = self.shape[1] * self.shape[2] * self.dtype.itemsize

    def _seek(self, key: Any) -> tuple[io.FileIO, int, int]:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("NpyRows is sliced by row ranges only (f[r0:r1])")
        if self.file is None:
            raise ValueError(f"{self.path} is closed")
        r0, r1, _ = key.indices(self.shape[0])
        self.file.seek(self.offset + r0 * self.row_bytes)
        return self.file, r0, max(r0, r1)

    def __getitem__(self, key: slice) -> np.ndarray:
        handle, r0, r1 = self._seek(key)
        out = np.empty((r1 - r0, *self.shape[1:]), dtype=self.dtype)
        view, pos = memoryview(out).cast("B"), 0  # type: ignore[arg-type]
        while pos < view.nbytes:
            got = handle.readinto(view[pos:])
            if not got:
                raise OSError(f"{self.path}: short read")
            pos += got
        return out

    def __setitem__(self, key: slice, value: np.ndarray) -> None:
        handle, r0, r1 = self._seek(key)
        data = np.ascontiguousarray(np.broadcast_to(value, (r1 - r0, *self.shape[1:])), dtype=self.dtype)
        view, pos = memoryview(data).cast("B"), 0  # type: ignore[arg-type]
        while pos < view.nbytes:
            pos += handle.write(view[pos:]) or 0

    def close(self) -> None:
        """Flush to disk (``fsync``) and close."""
        if self.file is not None:
            os.fsync(self.file.fileno())
            self.file.close()
            self.file = None


def write_baseline(fuse: Callable[..., Any], ms: Any, pan: Any, path: str | os.PathLike[str], *,
                   sensor: object, ratio: int, scale: float = 1.0, strip_rows: int | None = None) -> Path:
    """Run a baseline straight into a ``.npy`` file, in bounded memory, atomically."""
    from .inputs import fused_shape

    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    out = NpyRows(tmp, fused_shape(ms, pan))
    try:
        fuse(ms, pan, sensor=sensor, ratio=ratio, out=out, strip_rows=strip_rows)
        if scale != 1.0:
            step = max(1, (32 * 2**20) // out.row_bytes)
            for r0 in range(0, out.shape[0], step):
                out[r0 : r0 + step] = out[r0 : r0 + step] / scale  # (freed before the next strip)
        out.close()
        os.replace(tmp, target)
    except BaseException:
        out.close()
        tmp.unlink(missing_ok=True)
        raise
    return target

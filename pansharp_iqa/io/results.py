"""Locating and loading a method's fused image for a scene (``<method>/<scene>.<ext>``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .arrays import h5_dataset_shapes, read_h5_item, read_mat, read_npy, read_npz
from .discovery import SceneSource
from .errors import DataError
from .geotiff import read_geotiff
from .orientation import match_expected_shape
from .scale import check_finite

__all__ = ["RESULT_EXTENSIONS", "RESULT_KEYS", "find_result_file", "load_result"]

RESULT_EXTENSIONS = (".mat", ".tif", ".tiff", ".npy", ".npz", ".h5", ".hdf5")
#: Variable names tried, in order, when a container holds more than one array.
RESULT_KEYS = ("I_F", "sr", "fused", "I_Fus", "output")


def find_result_file(method_dir: str | Path, source: SceneSource) -> tuple[Path, int | None] | None:
    """Find the result file of one scene in a method folder.

    Parameters
    ----------
    method_dir : path-like
        ``RESULTS/<method>``.
    source : SceneSource
        The scene. For scenes from a PanCollection ``.h5`` (``<stem>_<i>``), a stacked result
        ``<method>/<stem>.h5`` (N x C x H x W) is accepted too, and item ``i`` is used.

    Returns
    -------
    (Path, int or None) or None
        The file and the item index in a stacked file; ``None`` when the scene has no result.

    Raises
    ------
    DataError
        If several files claim the scene.
    """
    method_dir = Path(method_dir)
    found = [method_dir / f"{source.name}{ext}" for ext in RESULT_EXTENSIONS]
    found = [p for p in found if p.is_file()]
    if len(found) > 1:
        raise DataError(
            f"several result files for scene {source.name!r}: {', '.join(p.name for p in found)}"
        )
    if found:
        return found[0], None
    if source.kind == "h5" and source.index is not None:
        stem = Path(source.file_for("bundle") or "").stem
        for ext in (".h5", ".hdf5"):
            stacked = method_dir / f"{stem}{ext}"
            if stacked.is_file():
                return stacked, source.index
    return None


def _only_or_named(arrays: dict[str, object], path: Path) -> str:
    if len(arrays) == 1:
        return next(iter(arrays))
    lower = {k.lower(): k for k in arrays}
    for key in RESULT_KEYS:
        if key.lower() in lower:
            return lower[key.lower()]
    raise DataError(
        f"{path.name}: holds several arrays ({', '.join(sorted(arrays))}); name the fused one "
        f"{' or '.join(RESULT_KEYS)}"
    )


def load_result(path: str | Path, expected_shape: Sequence[int], index: int | None = None) -> np.ndarray:
    """Read a fused image and return it as ``(H, W, B)`` float64 in stored units.

    Parameters
    ----------
    path : path-like
        ``.mat`` (the only array, or ``I_F``/``sr``/``fused``/...), ``.tif``, ``.npy``, ``.npz``
        or ``.h5``.
    expected_shape : sequence of int
        ``(H, W, B)`` of the reference; ``(B, H, W)`` storage is recognised from it.
    index : int, optional
        Item of a stacked (N x C x H x W) file.

    Returns
    -------
    numpy.ndarray
        float64, not yet multiplied by the result scale.

    Raises
    ------
    DataError
        Unreadable file, ambiguous content, wrong shape or band count, NaN/Inf values.
    """
    path = Path(path)
    ext = path.suffix.lower()
    if ext == ".mat":
        arrays = read_mat(path)
        raw = arrays[_only_or_named(arrays, path)] if arrays else None
    elif ext == ".npz":
        arrays = read_npz(path)
        raw = arrays[_only_or_named(arrays, path)] if arrays else None
    elif ext == ".npy":
        raw = read_npy(path)
    elif ext in (".tif", ".tiff"):
        raw = read_geotiff(path)
    elif ext in (".h5", ".hdf5"):
        shapes = h5_dataset_shapes(path)
        key = _only_or_named(shapes, path) if shapes else None
        raw = read_h5_item(path, key, index) if key is not None else None
        index = None
    else:
        raise DataError(f"{path.name}: unsupported result format {ext!r}")
    if raw is None:
        raise DataError(f"{path.name}: holds no numeric array")
    if index is not None:
        raw = raw[index]
    if raw.dtype.kind not in "biuf":
        raise DataError(f"{path.name}: non-numeric data (dtype {raw.dtype})")
    arr = match_expected_shape(raw, expected_shape, name=path.name)
    check_finite(arr, name=path.name)
    return np.ascontiguousarray(arr, dtype=np.float64)

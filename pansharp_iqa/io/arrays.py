"""Readers for array containers: MATLAB ``.mat`` (v5 and v7.3), ``.npy``, ``.npz`` and HDF5.

Each returns raw arrays (values in stored units, dtype unchanged) keyed by variable name; the
orientation and meaning of the arrays are decided elsewhere (:mod:`.orientation`, :mod:`.scenes`,
:mod:`.results`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .errors import DataError

__all__ = ["read_h5_item", "read_mat", "read_npy", "read_npz", "h5_dataset_shapes"]


def read_mat(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Read the numeric arrays of a MATLAB ``.mat`` file."""
    import scipy.io

    path = Path(path)
    try:
        raw = scipy.io.loadmat(os.fspath(path))
    except NotImplementedError:  # v7.3 = HDF5
        return _read_mat73(path)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read MATLAB file {path}: {type(exc).__name__}: {exc}") from None
    return {
        k: np.asarray(v)
        for k, v in raw.items()
        if not k.startswith("__") and isinstance(v, np.ndarray) and v.dtype.kind in "biuf"
    }


def _read_mat73(path: Path) -> dict[str, np.ndarray]:
    import h5py

    out: dict[str, np.ndarray] = {}
    try:
        with h5py.File(path, "r") as handle:
            for key, item in handle.items():
                if isinstance(item, h5py.Dataset) and item.dtype.kind in "biuf":
                    out[key] = np.asarray(item[()]).T  # MATLAB is column-major
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read MATLAB v7.3 file {path}: {type(exc).__name__}: {exc}") from None
    return out


def read_npy(path: str | os.PathLike[str]) -> np.ndarray:
    """Read a ``.npy`` array (pickles refused)."""
    try:
        return np.load(os.fspath(path), allow_pickle=False)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read {os.fspath(path)}: {type(exc).__name__}: {exc}") from None


def read_npz(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Read all arrays of a ``.npz`` archive (pickles refused)."""
    try:
        with np.load(os.fspath(path), allow_pickle=False) as archive:
            return {k: np.asarray(archive[k]) for k in archive.files}
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read {os.fspath(path)}: {type(exc).__name__}: {exc}") from None


def h5_dataset_shapes(path: str | os.PathLike[str]) -> dict[str, tuple[int, ...]]:
    """Shapes of the numeric datasets of an HDF5 file, at any depth (nothing is loaded)."""
    import h5py

    found: dict[str, tuple[int, ...]] = {}

    def visit(name: str, item: object) -> None:
        if isinstance(item, h5py.Dataset) and item.dtype.kind in "biuf":
            found[name] = tuple(item.shape)

    try:
        with h5py.File(os.fspath(path), "r") as handle:
            handle.visititems(visit)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read HDF5 file {os.fspath(path)}: {type(exc).__name__}: {exc}") from None
    return found


def read_h5_item(path: str | os.PathLike[str], key: str, index: int | None = None) -> np.ndarray:
    """Read one dataset of an HDF5 file, or one item ``[index]`` along its first axis."""
    import h5py

    try:
        with h5py.File(os.fspath(path), "r") as handle:
            if key not in handle:
                raise DataError(f"{os.fspath(path)} has no dataset {key!r} (has {sorted(handle)})")
            data = handle[key]
            return np.asarray(data[index] if index is not None else data[()])
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read {key!r} from {os.fspath(path)}: {type(exc).__name__}: {exc}") from None

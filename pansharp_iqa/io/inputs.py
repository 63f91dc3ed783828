"""Files given by path to the library's tile engine (``evaluate_reduced("fused.tif", "gt.tif", ...)``).

:func:`check_image_path` says plainly what a path cannot be (a missing file, a MATLAB/``.npz``/HDF5
container, which holds several arrays) (a GeoTIFF's declared no-data values are refused by the tiles that read
them, pixels its GDAL mask band leaves out by its reader);
:func:`check_path_grid` holds a fused image's georeference against its reference's when both are
GeoTIFF paths (or rasterio datasets), as ``pansharp-eval`` does for its scenes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import DataError
from .geotiff import check_same_grid_files

__all__ = ["check_image_path", "check_path_grid"]

_CONTAINERS = {".mat": "a MATLAB file", ".npz": "an .npz archive", ".h5": "an HDF5 file", ".hdf5": "an HDF5 file"}
_LOADERS = {".mat": "scipy.io.loadmat(path)['I_MS']", ".npz": "np.load(path)['ms']",
            ".h5": "h5py.File(path)['gt'] (an h5py dataset is read tile by tile)",
            ".hdf5": "h5py.File(path)['gt'] (an h5py dataset is read tile by tile)"}


def _path_of(value: Any) -> str | None:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    mod = type(value).__module__ or ""
    if mod.startswith("rasterio") and hasattr(value, "name"):  # an open rasterio dataset
        return str(value.name)
    return None


def check_image_path(name: str, value: Any) -> Any:
    """Refuse paths the tile engine cannot read as one image, with what to do instead."""
    if not isinstance(value, (str, os.PathLike)):
        return value
    path = os.fspath(value)
    suffix = Path(path).suffix.lower()
    if suffix in _CONTAINERS:
        raise DataError(
            f"{name}: {path} is {_CONTAINERS[suffix]}, which holds named arrays; paths are read tile by tile as one "
            f"raster (GeoTIFF) or one .npy array. Load the array and pass it, e.g. {_LOADERS[suffix]} (or evaluate "
            f"the folder with pansharp-eval, which reads {suffix} scenes)"
        )
    if not os.path.exists(path):
        raise DataError(f"{name}: {path} does not exist")
    return value


def check_path_grid(test: Any, scene: Any, *, test_name: str = "fused", scene_name: str = "reference") -> None:
    """A fused GeoTIFF must be on its reference's grid when both are georeferenced files."""
    a, b = _path_of(test), _path_of(scene)
    if a is None or b is None:
        return
    check_same_grid_files(a, b, result_name=f"{test_name} ({Path(a).name})",
                          scene_name=f"{scene_name} ({Path(b).name})")

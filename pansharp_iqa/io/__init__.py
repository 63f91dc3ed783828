"""Readers for pansharpening datasets and results (the input side of ``pansharp-eval``).

* ``dataset_config`` -- ``dataset.toml``, ``method.toml``, presets and command-line flags made into the one
  settings value (sensor, ratio, bits, resolution, protocol, each role's declared scale);
* ``discovery`` -- which scenes a dataset folder (or PanCollection ``.h5`` file) holds;
* ``arrays`` -- the format readers (``.mat``, ``.npy``, ``.npz``, ``.h5``);
* ``declared`` -- what a file declares (scale/offset, no-data, mask band, band names, georeference),
  one record per file, applied by every reader;
* ``geotiff`` -- the one GeoTIFF reader;
* ``orientation`` -- ``(H, W, B)`` / ``(B, H, W)`` recognition;
* ``scenes`` -- loading one scene's MS, PAN and GT as their files declare them;
* ``results`` -- locating and loading a method's fused image for a scene;
* ``sha256_file`` -- SHA-256 of input files (from ``pansharp_iqa.hashing``);
* ``windows`` -- ``.npy``/HDF5/GeoTIFF files read window by window (headers only until then),
  for tile-wise evaluation of scenes of any size (imported on demand, not here);
* ``memory`` -- memory available to the process (``MemAvailable``, cgroup limits).
"""

from ..hashing import sha256_file
from .dataset_config import DatasetSettings, load_settings, parse_scale
from .discovery import SceneSource, discover_scenes
from .errors import DataError, DatasetConfigError
from .results import find_result_file, load_result
from .scenes import load_scene

__all__ = [
    "DataError",
    "DatasetConfigError",
    "DatasetSettings",
    "SceneSource",
    "discover_scenes",
    "find_result_file",
    "load_result",
    "load_scene",
    "load_settings",
    "parse_scale",
    "sha256_file",
]

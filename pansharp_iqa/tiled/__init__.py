"""Whole satellite scenes: tile-wise evaluation in bounded memory, locally or on a Dask cluster.

``pansharp_iqa.evaluation.evaluate`` runs this engine for file paths, rasterio datasets, lazy
array-likes and arrays its rule (:func:`choose_path`) sends here (:func:`evaluate_tiled`); the
same dict as in memory (equal to 1e-9 relative or better), reading GeoTIFF windows (rasterio),
``.npy``/memmap files or array-likes tile by tile with the halos each index needs, and accumulating
block/window sums. ``evaluate_reduced_tiled`` / ``evaluate_full_tiled`` take the settings'
keywords. See ``docs/scale.md``.
"""

from ..io.errors import SceneReadError
from ..io.windows import is_lazy_input, open_source
from .api import evaluate_full_tiled, evaluate_reduced_tiled, evaluate_tiled, job
from .distributed import Scene, connect, evaluate_scenes
from .executor import JobOutcome, TiledJob, run_jobs
from .plan import DEFAULT_TILE_SIZE, PathChoice, choose_path

__all__ = [
    "evaluate_reduced_tiled", "evaluate_full_tiled", "evaluate_tiled", "job",
    "is_lazy_input", "open_source", "SceneReadError", "run_jobs", "TiledJob", "JobOutcome",
    "DEFAULT_TILE_SIZE", "Scene", "evaluate_scenes", "connect", "choose_path", "PathChoice",
]

"""Whole satellite scenes: tile-wise evaluation in bounded memory, locally or on a Dask cluster.

``evaluate_reduced_tiled`` / ``evaluate_full_tiled`` give the same dict as the in-memory
``evaluate_reduced`` / ``evaluate_full`` (equal to 1e-9 relative or better), reading GeoTIFF
windows (rasterio), ``.npy``/memmap files or array-likes tile by tile with the halos each index
needs, and accumulating block/window sums. See ``docs/scale.md``.
"""

from ..io.errors import SceneReadError
from ..io.windows import is_lazy_input, open_source
from .api import evaluate_full_tiled, evaluate_reduced_tiled, prepare_full, prepare_reduced
from .distributed import Scene, connect, evaluate_scenes
from .executor import JobOutcome, TiledJob, run_jobs
from .plan import DEFAULT_TILE_SIZE

__all__ = [
    "evaluate_reduced_tiled", "evaluate_full_tiled", "prepare_reduced", "prepare_full",
    "is_lazy_input", "open_source", "SceneReadError", "run_jobs", "TiledJob", "JobOutcome",
    "DEFAULT_TILE_SIZE", "Scene", "evaluate_scenes", "connect",
]

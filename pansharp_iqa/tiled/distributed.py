"""Many scenes, many tiles: local process pools and Dask distributed clusters.

* :func:`evaluate_scenes` evaluates a list of :class:`Scene` tile-wise; all tiles of all scenes
  share one pool (``jobs`` local processes, or the workers of the Dask cluster at ``scheduler``).
  Each scene's outcome is its result dict or the exception that failed it (a corrupt or
  truncated GeoTIFF gives :class:`~pansharp_iqa.io.errors.SceneReadError`); the other scenes
  are not affected.
* :func:`connect` (:func:`pansharp_iqa.parallel.connect`) opens a client to a running scheduler
  (``dask scheduler`` / ``dask worker tcp://HOST:8786``; see ``docs/scale.md``).

Results do not depend on where tiles ran: each tile's partial sums are computed by the same code
on the same pixels and combined in tile order with exact (``math.fsum``) sums.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any, Literal

from ..parallel import connect
from ..settings import FullSettings, ReducedSettings, Settings, full_settings, reduced_settings
from ..validation import InputError
from .api import job
from .executor import JobOutcome, TiledJob, run_jobs
from .plan import DEFAULT_TILE_SIZE

__all__ = ["Scene", "evaluate_scenes", "connect"]


@dataclasses.dataclass
class Scene:
    """One scene to evaluate tile-wise.

    Parameters
    ----------
    name : str
        Label in outcomes and progress.
    resolution : {"reduced", "full"}
        Which evaluation (``reference`` or ``ms`` and ``pan`` are then required).
    fused : path-like or array-like
        Fused image (GeoTIFF path, ``.npy`` path, array...).
    reference : path-like or array-like, optional
        Ground truth (reduced resolution).
    ms, pan : path-like or array-like, optional
        Low-resolution MS and PAN (full resolution).
    settings : ReducedSettings, FullSettings or dict
        The settings value (:func:`~pansharp_iqa.settings.reduced_settings`,
        :func:`~pansharp_iqa.settings.full_settings`), or the keywords that build it (``ratio``,
        ``bits``, ``sensor``, ``protocol``, ``scale``, ``threshold``, ``nan_policy``, ...).
    """

    name: str
    resolution: Literal["reduced", "full"]
    fused: Any
    reference: Any = None
    ms: Any = None
    pan: Any = None
    settings: Settings | dict[str, Any] = dataclasses.field(default_factory=dict)

    def prepare(self, tile_size: int) -> TiledJob:
        """Validate and plan the scene (opens file headers; raises on bad input).

        Parameters
        ----------
        tile_size : int
            Tile side in pixels (rounded up to the block grid).

        Returns
        -------
        TiledJob
        """
        if self.resolution not in ("reduced", "full"):
            raise InputError(f"scene {self.name!r}: resolution must be 'reduced' or 'full', got {self.resolution!r}")
        settings = self.settings
        if not isinstance(settings, (ReducedSettings, FullSettings)):
            settings = (reduced_settings if self.resolution == "reduced" else full_settings)(**settings)
        inputs = ({"fused": self.fused, "reference": self.reference} if self.resolution == "reduced"
                  else {"fused": self.fused, "ms": self.ms, "pan": self.pan})
        return job(inputs, settings, tile_size=tile_size, name=self.name)


def evaluate_scenes(
    scenes: Sequence[Scene],
    *,
    jobs: int = 1,
    scheduler: Any = None,
    tile_size: int = DEFAULT_TILE_SIZE,
    progress: bool = False,
) -> list[JobOutcome]:
    """Evaluate scenes tile-wise; one scene's failure does not stop the others.

    Parameters
    ----------
    scenes : sequence of Scene
        The scenes, each with its inputs and settings.
    jobs : int, default 1
        Local worker processes (ignored with ``scheduler``).
    scheduler : str or distributed.Client, optional
        Dask scheduler address or client; the workers must read the files at the same paths.
    tile_size : int, default 512
        Tile side in pixels (rounded up to the block grid).
    progress : bool
        tqdm bar: tiles done / total, megapixels per second.

    Returns
    -------
    list of JobOutcome
        In the order of ``scenes``: ``outcome.result`` (the same dict as ``evaluate_reduced`` /
        ``evaluate_full`` plus ``card["tiling"]``) or ``outcome.error`` (``SceneReadError`` for
        unreadable files, ``InputError`` for bad inputs, ...).
    """
    start = time.perf_counter()
    prepared: list[TiledJob | JobOutcome] = []
    for scene in scenes:
        try:
            prepared.append(scene.prepare(tile_size))
        except Exception as exc:  # noqa: BLE001 - fails this scene only
            prepared.append(JobOutcome(scene.name, None, exc, time.perf_counter() - start))
    runnable = [p for p in prepared if isinstance(p, TiledJob)]
    ran = iter(run_jobs(runnable, workers=jobs, scheduler=scheduler, progress=progress, desc="scenes' tiles")
               if runnable else [])
    return [next(ran) if isinstance(p, TiledJob) else p for p in prepared]

"""Running tiles: in this process, on a local process pool, or on a Dask distributed cluster.

The unit of work is one tile of one scene (a :class:`TiledJob`). Tiles of all scenes go to the
same pool; each scene is reduced (in tile order, exactly) and finalised in the calling process as
soon as its last tile arrives. A tile that raises fails its scene only: the scene's other tiles are
cancelled and the other scenes go on. The numbers do not depend on the executor: the same code
runs on the same windows, and :func:`~pansharp_iqa.tiled.accumulate.combine` is order-free.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..parallel import dask_client, dask_finished, finished, in_worker, process_pool
from .accumulate import Partial, combine
from .plan import Tile

__all__ = ["TiledJob", "JobOutcome", "run_jobs"]


@dataclasses.dataclass
class TiledJob:
    """One scene's tile-wise evaluation.

    Parameters
    ----------
    name : str
        Label for progress and outcomes (e.g. the scene name).
    ctx : object
        Picklable context passed to ``tile_fn`` (readers and settings).
    tiles : list of Tile
        The tiles to run (``pansharp_iqa.tiled.plan``).
    tile_fn : callable
        Module-level ``tile_fn(ctx, tile) -> Partial`` (runs in workers).
    finalize : callable
        ``finalize(total) -> dict`` on the combined partials (runs in the calling process). It may
        instead return another ``TiledJob``: the scene's next pass (e.g. ``reprojected2022``'s
        coregistration, then its indexes with the shifts found), which :func:`run_jobs` runs once
        the current pass of every scene is done; the scene's result is its last pass's dict.
    on_tile : callable, optional
        ``on_tile(tile, partial)``, in the calling process as each tile's partial arrives (before
        it is kept for the reduction): e.g. writes its map windows out and drops the large ones
        (``pansharp_iqa.tiled.maps``), so that whole-image maps are never held.
    """

    name: str
    ctx: Any
    tiles: list[Tile]
    tile_fn: Callable[[Any, Tile], Partial]
    finalize: Callable[[Partial], dict[str, Any] | TiledJob]
    on_tile: Callable[[Tile, Partial], None] | None = None


@dataclasses.dataclass
class JobOutcome:
    """Result of one job: the index dict, or the exception that failed the scene.

    Parameters
    ----------
    name : str
        The job's label.
    result : dict or None
        The index dict (``None`` when the job failed).
    error : Exception or None
        The exception that failed the job (``None`` when it succeeded).
    seconds : float
        Wall time from the start of the run to the job's completion (s).
    """

    name: str
    result: dict[str, Any] | None
    error: BaseException | None
    seconds: float

    @property
    def ok(self) -> bool:
        """Whether the scene was evaluated."""
        return self.error is None

    def unwrap(self) -> dict[str, Any]:
        """The result, or raise the scene's error."""
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


_POOL_JOBS: list[tuple[Callable[[Any, Tile], Partial], Any]] = []


def _pool_init(jobs: list[tuple[Callable[[Any, Tile], Partial], Any]]) -> None:
    global _POOL_JOBS
    _POOL_JOBS = jobs


def _pool_task(job_index: int, tile: Tile) -> Partial:
    fn, ctx = _POOL_JOBS[job_index]
    return fn(ctx, tile)


Event = tuple[int, int, "Partial | BaseException"]


def _serial(jobs: Sequence[TiledJob]) -> Iterator[Event]:
    """Tiles here, one after the other, OpenCV single-threaded as in the workers: its box filter's running sums depend
    on how rows are split among threads, and the numbers must not depend on the executor."""
    import cv2

    before = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        for j, job in enumerate(jobs):
            for t, tile in enumerate(job.tiles):
                try:
                    part: Partial | BaseException = job.tile_fn(job.ctx, tile)
                except Exception as exc:  # noqa: BLE001 - fails this scene only
                    part = exc
                yield j, t, part
                if isinstance(part, BaseException):
                    break
    finally:
        cv2.setNumThreads(before)


def _failing_first(futures: Mapping[Any, tuple[int, int]],
                   events: Iterator[tuple[tuple[int, int], Any]]) -> Iterator[Event]:
    """Events of a pool's tile ``futures``: a job's first failure is reported, its other tiles cancelled."""
    failed: set[int] = set()
    for (j, t), part in events:
        if j in failed:
            continue
        if isinstance(part, BaseException):
            failed.add(j)
            for future, (other, _) in futures.items():
                if other == j and not future.done():
                    future.cancel()
        yield j, t, part


def _pool(jobs: Sequence[TiledJob], workers: int) -> Iterator[Event]:
    calls = {(j, t): (j, tile) for j, job in enumerate(jobs) for t, tile in enumerate(job.tiles)}
    with process_pool(workers, _pool_task, calls, initializer=_pool_init,
                      initargs=([(job.tile_fn, job.ctx) for job in jobs],)) as futures:
        yield from _failing_first(futures, finished(futures))


def _dask(jobs: Sequence[TiledJob], scheduler: Any) -> Iterator[Event]:
    with dask_client(scheduler) as client:
        futures = {}
        for j, job in enumerate(jobs):
            ctx_future = client.scatter(job.ctx, hash=False)
            for t, tile in enumerate(job.tiles):
                futures[client.submit(in_worker, job.tile_fn, ctx_future, tile, pure=False)] = (j, t)
        yield from _failing_first(futures, dask_finished(client, futures))


def run_jobs(
    jobs: Sequence[TiledJob],
    *,
    workers: int = 1,
    scheduler: Any = None,
    progress: bool = False,
    desc: str = "tiles",
) -> list[JobOutcome]:
    """Run every tile of every job and finalise each job.

    Parameters
    ----------
    jobs : sequence of TiledJob
        Prepared jobs (:func:`pansharp_iqa.tiled.job`).
    workers : int, default 1
        Local processes (``pansharp-eval --jobs``); 1 runs in this process.
    scheduler : str or distributed.Client, optional
        Dask scheduler address (``"tcp://host:8786"``) or a connected client: tiles run on that
        cluster instead (``workers`` is then ignored). Files must be readable by the workers at the
        same paths.
    progress : bool
        Show a tqdm bar: tiles done / total and throughput in megapixels per second (PAN-scale
        pixels of the finished tiles over wall time).
    desc : str
        Bar label.

    Returns
    -------
    list of JobOutcome
        In the order of ``jobs``; a failed job has ``error`` set (its exception), others ``result``.
        A job whose ``finalize`` returns a next-pass ``TiledJob`` is followed through all its passes
        (each pass is one round over the same executor; rounds run one after the other).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        from ..validation import InputError

        raise InputError(f"jobs must be a positive integer number of worker processes, got {workers!r}")
    start = time.perf_counter()
    outcomes = _run_round(jobs, workers, scheduler, progress, desc, start)
    rounds = 1
    while True:
        waiting = [i for i, o in enumerate(outcomes) if isinstance(o.result, TiledJob)]
        if not waiting:
            return outcomes
        rounds += 1
        following = [outcomes[i].result for i in waiting]
        again = _run_round(following, workers, scheduler, progress, f"{desc} (pass {rounds})",  # type: ignore[arg-type]
                           start)
        for i, outcome in zip(waiting, again, strict=True):
            outcomes[i] = outcome


def _run_round(
    jobs: Sequence[TiledJob], workers: int, scheduler: Any, progress: bool, desc: str, start: float
) -> list[JobOutcome]:
    """One pass over every tile of ``jobs`` (see :func:`run_jobs`)."""
    from tqdm.auto import tqdm

    parts: list[list[Partial | None]] = [[None] * len(job.tiles) for job in jobs]
    remaining = [len(job.tiles) for job in jobs]
    outcomes: list[JobOutcome | None] = [None] * len(jobs)
    total = sum(len(job.tiles) for job in jobs)
    if scheduler is not None:
        events = _dask(jobs, scheduler)
    elif workers > 1 and total > 1:
        events = _pool(jobs, workers)
    else:
        events = _serial(jobs)
    pixels, round_start = 0, time.perf_counter()
    with tqdm(total=total, unit="tile", desc=desc, disable=not progress, dynamic_ncols=True) as bar:
        for j, t, part in events:
            job = jobs[j]
            if outcomes[j] is not None:  # failed already (on_tile): its other tiles are dropped
                continue
            if isinstance(part, BaseException):
                outcomes[j] = JobOutcome(job.name, None, part, time.perf_counter() - start)
                bar.total -= remaining[j]
                remaining[j] = 0
                bar.refresh()
                continue
            if job.on_tile is not None:
                try:
                    job.on_tile(job.tiles[t], part)
                except Exception as exc:  # noqa: BLE001 - fails this scene only
                    outcomes[j] = JobOutcome(job.name, None, exc, time.perf_counter() - start)
                    bar.total -= remaining[j]
                    remaining[j] = 0
                    parts[j] = []
                    continue
            parts[j][t] = part
            remaining[j] -= 1
            pixels += job.tiles[t].pixels
            bar.update(1)
            elapsed = max(time.perf_counter() - round_start, 1e-9)
            bar.set_postfix_str(f"{pixels / 1e6 / elapsed:.2f} MP/s", refresh=False)
            if remaining[j] == 0:
                try:
                    result = job.finalize(combine([p for p in parts[j] if p is not None]))
                    # a next pass (TiledJob) rides in result until run_jobs runs it; callers get dicts
                    outcomes[j] = JobOutcome(job.name, result, None, time.perf_counter() - start)  # type: ignore[arg-type]
                except Exception as exc:  # noqa: BLE001 - fails this scene only
                    outcomes[j] = JobOutcome(job.name, None, exc, time.perf_counter() - start)
                parts[j] = []
    for j, job in enumerate(jobs):
        if outcomes[j] is None:  # a job without tiles cannot happen; keep the contract anyway
            outcomes[j] = JobOutcome(job.name, None, RuntimeError("no tiles were run"), 0.0)
    return [o for o in outcomes if o is not None]

"""Running tiles: in this process, on a local process pool, or on a Dask distributed cluster.

The unit of work is one tile of one scene (a :class:`TiledJob`). Tiles of all scenes go to the
same pool; each scene is reduced (in tile order, exactly) and finalised in the calling process as
soon as its last tile arrives. A tile that raises fails its scene only: the scene's other tiles are
cancelled and the other scenes go on. The numbers do not depend on the executor: the same code
runs on the same windows, and :func:`~pansharp_iqa.tiled.accumulate.combine` is order-free.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .accumulate import Partial, combine
from .plan import Tile

__all__ = ["TiledJob", "JobOutcome", "run_jobs", "limit_worker_threads"]

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PANSHARP_THREADS")


@dataclasses.dataclass
class TiledJob:
    """One scene's tile-wise evaluation.

    Attributes
    ----------
    name : str
        Label for progress and outcomes (e.g. the scene name).
    ctx : object
        Picklable context passed to ``tile_fn`` (readers and settings).
    tiles : list of Tile
    tile_fn : callable
        Module-level ``tile_fn(ctx, tile) -> Partial`` (runs in workers).
    finalize : callable
        ``finalize(total) -> dict`` on the combined partials (runs in the calling process). It may
        instead return another ``TiledJob``: the scene's next pass (e.g. ``reprojected2022``'s
        coregistration, then its indexes with the shifts found), which :func:`run_jobs` runs once
        the current pass of every scene is done; the scene's result is its last pass's dict.
    """

    name: str
    ctx: Any
    tiles: list[Tile]
    tile_fn: Callable[[Any, Tile], Partial]
    finalize: Callable[[Partial], "dict[str, Any] | TiledJob"]


@dataclasses.dataclass
class JobOutcome:
    """Result of one job: the index dict, or the exception that failed the scene.

    Attributes
    ----------
    name : str
    result : dict or None
    error : Exception or None
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


_WORKER_LIMITED = False


def limit_worker_threads() -> None:
    """One compute thread per worker process (OpenCV and the core's band/strip threads,
    ``PANSHARP_THREADS``), so N workers use N cores without oversubscription."""
    global _WORKER_LIMITED
    if not _WORKER_LIMITED:
        import cv2

        from ..allocator import keep_freed_memory

        cv2.setNumThreads(1)
        os.environ["PANSHARP_THREADS"] = "1"
        keep_freed_memory()  # single-threaded workers: reuse freed buffers (see pansharp_iqa.allocator)
        _WORKER_LIMITED = True


_POOL_JOBS: list[tuple[Callable[[Any, Tile], Partial], Any]] = []


def _pool_init(jobs: list[tuple[Callable[[Any, Tile], Partial], Any]]) -> None:
    global _POOL_JOBS
    from .sources import forget_open_datasets

    forget_open_datasets()
    _POOL_JOBS = jobs
    limit_worker_threads()


def _pool_task(job_index: int, tile: Tile) -> Partial:
    fn, ctx = _POOL_JOBS[job_index]
    return fn(ctx, tile)


def _dask_task(fn: Callable[[Any, Tile], Partial], ctx: Any, tile: Tile) -> Partial:
    limit_worker_threads()
    return fn(ctx, tile)


@contextlib.contextmanager
def _single_threaded_children() -> Iterator[None]:
    """BLAS/OpenMP one thread in spawned workers (set while they start)."""
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: "1" for k in _THREAD_VARS})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


Event = tuple[int, int, "Partial | BaseException"]


@contextlib.contextmanager
def _one_opencv_thread() -> Iterator[None]:
    """OpenCV single-threaded while tiles run here, as in workers: its box filter's running sums
    depend on how rows are split among threads, and the numbers must not depend on the executor."""
    import cv2

    before = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        cv2.setNumThreads(before)


def _serial(jobs: Sequence[TiledJob]) -> Iterator[Event]:
    with _one_opencv_thread():
        yield from _serial_run(jobs)


def _serial_run(jobs: Sequence[TiledJob]) -> Iterator[Event]:
    for j, job in enumerate(jobs):
        for t, tile in enumerate(job.tiles):
            try:
                part: Partial | BaseException = job.tile_fn(job.ctx, tile)
            except Exception as exc:  # noqa: BLE001 - fails this scene only
                part = exc
            yield j, t, part
            if isinstance(part, BaseException):
                break


def _pool(jobs: Sequence[TiledJob], workers: int) -> Iterator[Event]:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # spawn: fresh interpreters inherit no locks held by the parent's threads (GDAL, Dask, tqdm)
    # nor its open file offsets; scripts need the usual ``if __name__ == "__main__":`` guard
    ctx = multiprocessing.get_context("spawn")
    with _single_threaded_children(), ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_pool_init,
        initargs=([(job.tile_fn, job.ctx) for job in jobs],),
    ) as pool:
        pending = {}
        for j, job in enumerate(jobs):
            for t, tile in enumerate(job.tiles):
                pending[pool.submit(_pool_task, j, tile)] = (j, t)
        failed: set[int] = set()
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                j, t = pending.pop(fut)
                if fut.cancelled() or j in failed:
                    continue
                exc = fut.exception()
                if exc is not None:
                    failed.add(j)
                    for other, (oj, _) in list(pending.items()):
                        if oj == j:
                            other.cancel()
                    yield j, t, exc
                else:
                    yield j, t, fut.result()


def _dask(jobs: Sequence[TiledJob], scheduler: Any) -> Iterator[Event]:
    import distributed

    own = not isinstance(scheduler, distributed.Client)
    client = distributed.Client(scheduler, set_as_default=False) if own else scheduler
    try:
        where = {}
        for j, job in enumerate(jobs):
            ctx_future = client.scatter(job.ctx, hash=False)
            for t, tile in enumerate(job.tiles):
                fut = client.submit(_dask_task, job.tile_fn, ctx_future, tile, pure=False)
                where[fut.key] = (j, t, fut)
        failed: set[int] = set()
        for fut in distributed.as_completed([v[2] for v in where.values()], loop=client.loop):
            j, t, _ = where[fut.key]
            if j in failed or fut.cancelled():
                continue
            if fut.status == "error":
                exc = fut.exception()
                failed.add(j)
                client.cancel([f for (oj, _, f) in where.values() if oj == j and not f.done()])
                yield j, t, exc
            else:
                yield j, t, fut.result()
    finally:
        if own:
            client.close()


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
        for i, outcome in zip(waiting, again):
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
            if isinstance(part, BaseException):
                outcomes[j] = JobOutcome(job.name, None, part, time.perf_counter() - start)
                bar.total -= remaining[j]
                remaining[j] = 0
                bar.refresh()
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
                    outcomes[j] = JobOutcome(job.name, result, None, time.perf_counter() - start)
                except Exception as exc:  # noqa: BLE001 - fails this scene only
                    outcomes[j] = JobOutcome(job.name, None, exc, time.perf_counter() - start)
                parts[j] = []
    for j, job in enumerate(jobs):
        if outcomes[j] is None:  # a job without tiles cannot happen; keep the contract anyway
            outcomes[j] = JobOutcome(job.name, None, RuntimeError("no tiles were run"), 0.0)
    return [o for o in outcomes if o is not None]

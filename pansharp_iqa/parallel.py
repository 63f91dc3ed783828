"""Where work runs: threads over bands and strips, worker processes, a Dask cluster.

* Threads (:func:`parallel_map`, :func:`map_bands`): NumPy's element-wise kernels and OpenCV's
  filters release the GIL, so independent per-band work runs concurrently. ``PANSHARP_THREADS``
  sets the number of threads (default: the CPU count, at most 8; 1 disables threading).
* Processes (:func:`process_pool`, :func:`finished`): spawned workers, one compute thread each
  (:func:`limit_worker_threads`), so N workers use N cores; used for scenes (``pansharp-eval
  --jobs``) and for tiles (:mod:`pansharp_iqa.tiled.executor`).
* A Dask cluster (:func:`connect`, :func:`dask_client`, :func:`dask_finished`, :func:`in_worker`).

Each unit of work is computed exactly as it would be serially, so results do not depend on the
number of threads, processes or workers.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

__all__ = [
    "map_bands", "n_threads", "parallel_map", "chunks", "limit_worker_threads", "process_pool", "finished",
    "connect", "dask_client", "dask_finished", "in_worker",
]

T = TypeVar("T")
K = TypeVar("K")
_POOL: ThreadPoolExecutor | None = None


def n_threads() -> int:
    """Number of worker threads: ``PANSHARP_THREADS`` if set, else the usable CPUs (at most 8)."""
    env = os.environ.get("PANSHARP_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        count = os.cpu_count() or 1
    return max(1, min(8, count))


def chunks(n: int, parts: int) -> list[slice]:
    """Split ``range(n)`` into at most ``parts`` contiguous, near-equal slices."""
    parts = max(1, min(parts, n))
    bounds = [round(i * n / parts) for i in range(parts + 1)]
    return [slice(bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i + 1] > bounds[i]]


def _forget_pool_in_child() -> None:
    # a forked child inherits the pool object but none of its threads: never reuse it there
    global _POOL
    _POOL = None


os.register_at_fork(after_in_child=_forget_pool_in_child)


def _pool(threads: int) -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None or _POOL._max_workers != threads:  # noqa: SLF001 - resize on env change
        _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pansharp_iqa")
    return _POOL


def parallel_map(func: Callable[[T], object], items: Sequence[T], workers: int | None = None) -> list:
    """``[func(i) for i in items]``, on threads when there is more than one item and worker.

    Calls made from inside a pool task run serially (no nested pools, so no deadlock).
    """
    workers = n_threads() if workers is None else workers
    nested = threading.current_thread().name.startswith("pansharp_iqa")
    if workers <= 1 or len(items) <= 1 or nested:
        return [func(i) for i in items]
    return list(_pool(workers).map(func, items))


def map_bands(fn: Callable[[int], T], n: int) -> list[T]:
    """Evaluate ``fn(b)`` for ``b = 0..n-1``, in threads when it pays; results in band order."""
    return parallel_map(fn, range(n))


_WORKER_LIMITED = False
#: Thread counts of BLAS/OpenMP (read once, when a library loads) and of the band threads.
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PANSHARP_THREADS")


def limit_worker_threads() -> None:
    """In a worker process: one compute thread (OpenCV and the band/strip threads,
    ``PANSHARP_THREADS``), so N workers use N cores without oversubscription, and freed buffers
    kept for reuse (:func:`pansharp_iqa.allocator.keep_freed_memory`)."""
    global _WORKER_LIMITED
    if not _WORKER_LIMITED:
        import cv2

        from .allocator import keep_freed_memory

        cv2.setNumThreads(1)
        os.environ["PANSHARP_THREADS"] = "1"
        keep_freed_memory()
        _WORKER_LIMITED = True


def _init_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops its workers
    limit_worker_threads()
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def process_pool(workers: int, fn: Callable[..., Any], calls: Mapping[K, tuple[Any, ...]], *,
                 initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> Iterator[dict[Future, K]]:
    """``fn(*args)`` for every ``key: args`` of ``calls``, on ``workers`` spawned processes.

    Each worker is single-threaded (:func:`limit_worker_threads`, and BLAS/OpenMP through the
    environment it starts with, set only while the work is submitted), then runs
    ``initializer(*initargs)``. Spawned, not forked: fresh interpreters inherit no locks held by
    this process's threads (GDAL, Dask, tqdm, the report threads) nor its open files; scripts need
    the usual ``if __name__ == "__main__":`` guard, and ``fn`` must be importable. A block that
    ends with an exception (Ctrl-C; SIGTERM in ``pansharp-eval``) cancels the calls not started and
    stops the workers at once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: "1" for k in _THREAD_VARS})
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(initializer, initargs))
    try:
        try:  # the workers start as the calls are submitted
            futures = {pool.submit(fn, *args): key for key, args in calls.items()}
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        yield futures
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown()


def _stop(pool: Any) -> None:
    """Cancel a process pool's pending calls and end its workers now (they hold no files)."""
    import time

    workers = list((pool._processes or {}).values())  # noqa: SLF001 - no public handle before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
    deadline = time.monotonic() + 5.0  # one bound for all of them; then SIGKILL (a loaded machine, a stuck read)
    for process in workers:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in workers:
        if process.is_alive():
            process.kill()
            process.join(5)


def finished(futures: Mapping[Future, K]) -> Iterator[tuple[K, Any]]:
    """``(key, result)`` of each future as it finishes, the exception it raised as its result;
    cancelled futures are skipped."""
    for future in as_completed(futures):
        if not future.cancelled():
            error = future.exception()
            yield futures[future], (future.result() if error is None else error)


def connect(scheduler: str, *, timeout: float = 30.0) -> Any:
    """Client of a running Dask scheduler.

    Parameters
    ----------
    scheduler : str
        Address, e.g. ``"tcp://10.0.0.5:8786"`` (printed by ``dask scheduler``).
    timeout : float
        Seconds to wait for the connection.

    Returns
    -------
    distributed.Client
        Close it when done (``client.close()``), or use it as a context manager.

    Raises
    ------
    OSError
        The scheduler cannot be reached (message names the address).
    """
    import distributed

    try:
        return distributed.Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise OSError(
            f"cannot reach the Dask scheduler at {scheduler!r} ({exc}); start one with 'dask scheduler' "
            "and workers with 'dask worker tcp://HOST:8786', and check the address and firewall"
        ) from None


@contextlib.contextmanager
def dask_client(scheduler: Any) -> Iterator[Any]:
    """``scheduler`` itself when it is a connected ``distributed.Client``; else a client of the
    scheduler at that address (:func:`connect`), closed when the block ends."""
    import distributed

    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    client = connect(scheduler)
    try:
        yield client
    finally:
        client.close()


def dask_finished(client: Any, futures: Mapping[Any, K]) -> Iterator[tuple[K, Any]]:
    """:func:`finished` for the ``distributed.Future`` objects of ``client``."""
    import distributed

    for future in distributed.as_completed(list(futures), loop=client.loop):
        if not future.cancelled():
            yield futures[future], (future.exception() if future.status == "error" else future.result())


def in_worker(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a cluster worker, single-threaded as :func:`process_pool`'s workers are."""
    limit_worker_threads()
    return fn(*args)

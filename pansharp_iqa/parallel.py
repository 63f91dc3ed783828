"""Band-parallel execution in threads.

NumPy's element-wise kernels and OpenCV's filters release the GIL, so independent per-band work
runs concurrently in threads. Each band's result is computed exactly as it would be serially, so
results do not depend on the thread count. ``PANSHARP_THREADS`` sets the number of threads
(default: the CPU count, at most 8; 1 disables threading).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["map_bands", "n_threads", "parallel_map", "chunks"]

T = TypeVar("T")
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
    """Evaluate ``fn(b)`` for ``b = 0..n-1``, in threads when it pays; results in band order.

    Parameters
    ----------
    fn : callable
        Work for one band index.
    n : int
        Number of bands.

    Returns
    -------
    list
        ``[fn(0), ..., fn(n-1)]``.
    """
    return parallel_map(fn, range(n))

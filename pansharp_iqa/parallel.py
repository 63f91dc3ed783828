"""Band-parallel execution in threads.

NumPy's element-wise kernels and OpenCV's filters release the GIL, so independent per-band work
runs concurrently in threads. Each band's result is computed exactly as it would be serially, so
results do not depend on the thread count. ``PANSHARP_THREADS`` sets the number of threads
(default: the CPU count, at most 8; 1 disables threading).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["map_bands", "n_threads"]

T = TypeVar("T")
_POOL: ThreadPoolExecutor | None = None


def n_threads() -> int:
    """Number of worker threads used for band-parallel work."""
    env = os.environ.get("PANSHARP_THREADS")
    if env:
        return max(1, int(env))
    return max(1, min(8, os.cpu_count() or 1))


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
    global _POOL
    threads = n_threads()
    if threads == 1 or n < 2:
        return [fn(b) for b in range(n)]
    if _POOL is None or _POOL._max_workers != threads:  # noqa: SLF001 - resize on env change
        _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pansharp_iqa")
    return list(_POOL.map(fn, range(n)))

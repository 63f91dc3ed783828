"""Tiny thread helper: numpy releases the GIL in its loops, so independent planes run in parallel."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

__all__ = ["n_workers", "chunks", "parallel_map"]


def n_workers() -> int:
    """Worker threads to use: ``PANSHARP_IQA_THREADS`` if set, else the usable CPU count (max 8)."""
    env = os.environ.get("PANSHARP_IQA_THREADS")
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


def parallel_map(func: Callable[[T], object], items: Sequence[T], workers: int | None = None) -> list:
    """``[func(i) for i in items]``, run on threads when there is more than one item and worker."""
    workers = n_workers() if workers is None else workers
    if workers <= 1 or len(items) <= 1:
        return [func(i) for i in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(func, items))

"""Keep large temporary buffers in the process heap instead of mapping fresh pages each time.

glibc serves large ``malloc`` requests with ``mmap`` and returns them with ``munmap`` on free, so a
loop that allocates the same temporaries over and over page-faults its memory in anew every time.
That makes the sliding-window Q several times slower in a single-threaded process (the figures
are in ``docs/performance.md``). :func:`keep_freed_memory` raises the mmap and trim
thresholds so freed buffers are reused. It is process-wide, so the library never calls it on
import: the command-line tools and their worker processes do (and users may, or set
``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` themselves).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_DONE = False


def keep_freed_memory(mmap_threshold: int = 256 * 2**20, trim_threshold: int = 1024 * 2**20) -> bool:
    """Raise glibc's mmap/trim thresholds for this process (no-op elsewhere)."""
    global _DONE
    if _DONE:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold))) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, int(trim_threshold))
        )
    except (OSError, AttributeError):  # not glibc
        return False
    _DONE = ok
    return ok

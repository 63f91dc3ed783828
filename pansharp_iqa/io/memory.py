"""How much memory this process may still use: the machine's available memory, capped by the
limits of its control group (containers, batch jobs)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["available_memory"]

_CGROUP = Path("/sys/fs/cgroup")
#: cgroup v1 reports "no limit" as a huge number (about 2**63, rounded down to the page size).
_UNLIMITED = 2**60


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text or text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if 0 <= value < _UNLIMITED else None


def _meminfo_available(meminfo: Path) -> int | None:
    try:
        lines = meminfo.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        if line.startswith("MemAvailable:"):
            parts = line.split()
            try:
                return int(parts[1]) * 1024  # kB
            except (IndexError, ValueError):
                return None
    return None


def _own_cgroup_dirs(root: Path) -> list[Path]:
    """The memory-controller folders of this process's control group and of its parents."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return [root, root / "memory"]
    dirs: list[Path] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, rel = parts[1], parts[2].lstrip("/")
        base = root if controllers == "" else root / "memory" if "memory" in controllers.split(",") else None
        if base is None:
            continue
        here = base / rel
        while True:
            dirs.append(here)
            if here == base:
                break
            here = here.parent
    return dirs or [root, root / "memory"]


def _cgroup_headroom(root: Path) -> int | None:
    """Smallest ``limit - usage`` over the process's control groups (v2 and v1), if any is set."""
    room: list[int] = []
    for folder in _own_cgroup_dirs(root):
        for limit_name, usage_name in (("memory.max", "memory.current"),
                                       ("memory.limit_in_bytes", "memory.usage_in_bytes")):
            limit = _read_int(folder / limit_name)
            if limit is None:
                continue
            usage = _read_int(folder / usage_name) or 0
            room.append(max(limit - usage, 0))
    return min(room) if room else None


def available_memory(*, meminfo: str | os.PathLike[str] = "/proc/meminfo",
                     cgroup_root: str | os.PathLike[str] = _CGROUP) -> int | None:
    """Bytes of memory this process can still allocate without swapping or being killed."""
    candidates = [_meminfo_available(Path(meminfo)), _cgroup_headroom(Path(cgroup_root))]
    found = [c for c in candidates if c is not None]
    if not found:
        try:
            import psutil

            found.append(int(psutil.virtual_memory().available))
        except Exception:  # noqa: BLE001 - optional; no estimate then
            return None
    return min(found)

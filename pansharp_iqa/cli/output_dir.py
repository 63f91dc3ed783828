"""The output folders of ``pansharp-eval``: write only there, replace only what the tool wrote.

Each command keeps a manifest in the folder it writes (:data:`MANIFEST_NAME` for ``evaluate``,
``.pansharp-eval-baselines.json`` and ``.pansharp-eval-demo.json`` for ``baselines`` and ``demo``)
listing the files it wrote there. The rules (``docs/cli.md``, "What --force and --resume touch"):

* **One run at a time.** A run holds an exclusive lock on the folder (``flock`` on the folder
  itself, so no lock file is left behind) from its first check to its last write; a second run
  on the same folder refuses at once, with one line.
* **Checked first.** Every path a run writes is checked before anything is written: it must be
  new or listed in the manifest, with every folder on the way new or holding listed files, no
  link on the way, and no folder the run reads at or under it (:meth:`OutputFolder.check`).
* **Atomic.** Every file is written to a temporary name beside it, then renamed
  (:func:`atomic_file`); reports (and, with ``--force``, every file) go into a staging folder
  inside the output folder and replace the earlier ones only once the run is complete
  (:meth:`OutputFolder.commit`), which also removes the files the manifest lists that this run
  did not write or keep. Nothing the manifest does not list is ever replaced or removed.
* **Recorded.** The manifest lists what a run may write before it writes it; a run that fails or
  is interrupted marks it ``failed`` or ``interrupted`` (never ``running``) and removes its
  staging folder; a killed run's staging folder is removed by the next run. While a run holds
  its folder, SIGTERM (``kill``, ``timeout``, SLURM, ``docker stop``) interrupts it as Ctrl-C
  does, worker processes included.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shutil
import signal
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, Any

from .errors import UsageError

__all__ = ["MANIFEST_NAME", "OutputFolder", "atomic_file", "create_folder"]

MANIFEST_NAME = ".pansharp-eval-manifest.json"
_STAGING_PREFIX = ".pansharp-eval-staging-"


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` and rename it to ``path`` when the block succeeds."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, mode, encoding=None if "b" in mode else "utf-8") as handle:
            yield handle
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def create_folder(folder: Path, *, what: str) -> None:
    """Create ``folder`` (and its parents) or raise a usage error that says why it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise UsageError(f"cannot create {what}: {blocker} is a file, not a folder") from None
        raise UsageError(f"cannot create {what}: {exc.strerror or exc}"
                         + (f" ({exc.filename})" if exc.filename else "")) from None


def _clean_rel(text: Any) -> str | None:
    """A manifest entry as a safe relative path inside the folder, or None."""
    if not isinstance(text, str) or not text or "\\" in text:
        return None
    p = PurePosixPath(text)
    if p.is_absolute() or any(part in ("..", "") for part in p.parts) or str(p) == ".":
        return None
    return p.as_posix()


def _parents(rels: Iterable[str]) -> set[str]:
    return {parent.as_posix() for rel in rels for parent in PurePosixPath(rel).parents if str(parent) != "."}


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class OutputFolder:
    """The output folder of one run: a context manager that locks it, reads its manifest and, on
    leaving, records how the run ended and releases it."""

    def __init__(self, path: Path, *, manifest: str = MANIFEST_NAME, protected: Sequence[Path] = (),
                 argv: Sequence[str] = ()) -> None:
        self.path, self.manifest = Path(path), manifest
        self.protected = [Path(p).resolve() for p in protected]
        self.argv = list(argv)
        self.run_id = uuid.uuid4().hex[:12]
        self.listed: set[str] = set()
        self._staging: Path | None = None
        self._status: str | None = None  # set once this run writes the manifest
        self._lock: int | None = None
        self._created = False
        self._sigterm: tuple[Any] | None = None  # the SIGTERM handler to restore on leaving

    # -- entering and leaving -------------------------------------------------------------------
    def __enter__(self) -> OutputFolder:
        if self.path.exists() and not self.path.is_dir():
            raise UsageError(f"--out {self.path} exists and is not a folder")
        if self.path.resolve() in self.protected:
            raise UsageError(f"--out {self.path} is a folder the run reads (a method's results or the dataset); "
                             "choose another --out")
        self._created = not self.path.exists()
        create_folder(self.path, what=f"--out {self.path}")
        self._lock = _lock(self.path)
        if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread
            self._sigterm = (signal.signal(signal.SIGTERM, _terminate_as_interrupt),)
        try:
            doc = self._read_manifest()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.listed = set(doc.get("files", []))
        staging = _clean_rel(doc.get("staging"))
        if staging and staging.startswith(_STAGING_PREFIX) and "/" not in staging:
            shutil.rmtree(self.path / staging, ignore_errors=True)  # a killed run's staging folder
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        try:
            if self._staging is not None:
                shutil.rmtree(self._staging, ignore_errors=True)
                self._staging = None
            if self._status == "running":
                with contextlib.suppress(OSError):  # the run's own error is the one to report
                    self._write_manifest("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
            if self._created and self._status is None:
                with contextlib.suppress(OSError):
                    self.path.rmdir()  # made for a run that wrote nothing
        finally:
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None
            if self._sigterm is not None:
                signal.signal(signal.SIGTERM, self._sigterm[0] or signal.SIG_DFL)
                self._sigterm = None

    # -- checks ---------------------------------------------------------------------------------
    def _read_manifest(self) -> dict[str, Any]:
        path = self.path / self.manifest
        if not path.exists():
            return {}
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise UsageError(f"{path} cannot be read ({exc}); it is not a manifest of pansharp-eval: remove it "
                             "yourself or choose another --out") from None
        if not isinstance(doc, dict) or doc.get("tool") != "pansharp-eval":
            raise UsageError(f"{path} is not a manifest of pansharp-eval; remove it yourself or choose another --out")
        files = doc.get("files", [])
        cleaned = [_clean_rel(f) for f in files] if isinstance(files, list) else [None]
        if None in cleaned:
            raise UsageError(f"{path} lists paths outside the output folder; it was not written by pansharp-eval: "
                             "remove it yourself or choose another --out")
        return {**doc, "files": cleaned}

    def earlier(self) -> list[str]:
        """Files of earlier runs that are still there."""
        return sorted(rel for rel in self.listed if os.path.lexists(self.path / rel))

    def _conflict(self, rel: str, folder: bool, made: set[str]) -> str | None:
        """Why writing ``rel`` (a file, or a folder) would touch what the tool did not write (it
        made the folders in ``made``), or ``None``."""
        parts = PurePosixPath(rel).parts
        for i in range(1, len(parts) + 1):
            sub, target = "/".join(parts[:i]), self.path.joinpath(*parts[:i])
            if any(_inside(p, target.resolve()) for p in self.protected):
                return (f"{target} is or holds a folder this run reads (a method's results or the dataset), and "
                        "pansharp-eval never writes there")
            if not os.path.lexists(target):
                return None
            if target.is_symlink():
                return f"{target} is a link that pansharp-eval did not make"
            if i < len(parts) or folder:
                if not target.is_dir():
                    return f"{target} is a file where pansharp-eval writes a folder"
                if sub not in made:
                    return f"{target} is a folder that pansharp-eval did not make"
            elif target.is_dir() or sub not in self.listed:
                return f"{target} exists and was not written by pansharp-eval"
        return None

    def check(self, files: Iterable[str], folders: Iterable[str] = ()) -> None:
        """Refuse (:class:`UsageError`, nothing written) if writing any of these paths would
        touch what the tool did not write."""
        made = _parents(self.listed)
        for rel, folder in [*((f, False) for f in files), *((d, True) for d in folders)]:
            why = self._conflict(rel, folder, made)
            if why:
                raise UsageError(f"{why}; move it or choose another --out (nothing was written)")

    # -- writing --------------------------------------------------------------------------------
    def _write_manifest(self, status: str) -> None:
        from pansharp_iqa import __version__

        self._status = status
        doc = {
            "tool": "pansharp-eval", "format": 2, "version": __version__, "run_id": self.run_id, "status": status,
            "written": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "command": ["pansharp-eval", *self.argv], "files": sorted(self.listed),
            "staging": self._staging.name if self._staging is not None else None,
        }
        with atomic_file(self.path / self.manifest, "w") as handle:
            handle.write(json.dumps(doc, indent=1) + "\n")

    def claim(self, files: Iterable[str]) -> None:
        """Record paths this run may write, before writing them (status ``running``)."""
        self.listed |= set(files)
        self._write_manifest("running")

    def staging(self) -> Path:
        """The run's staging folder inside OUT (made on the first call), moved in by :meth:`commit`."""
        if self._staging is None:
            self._staging = self.path / f"{_STAGING_PREFIX}{self.run_id}"
            self._write_manifest("running")
            self._staging.mkdir()
        return self._staging

    def commit(self, keep: Iterable[str] | None = None) -> list[str]:
        """Move the staged files in and drop what earlier runs left: the run is complete."""
        staging = self._staging
        staged = [] if staging is None else sorted(
            p.relative_to(staging).as_posix() for p in staging.rglob("*") if not p.is_dir())
        self.check(staged)
        kept = set(self.listed if keep is None else keep) | set(staged)
        stale = self.listed - kept
        self.claim(staged)
        for rel in sorted(stale):
            target = self.path / rel
            if (target.is_symlink() or target.is_file()) and _inside(target.parent.resolve(), self.path.resolve()):
                target.unlink()
        for rel in staged:
            (self.path / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, self.path / rel)  # type: ignore[operator]
        for rel in sorted(_parents(stale) - _parents(kept), key=lambda r: -r.count("/")):
            with contextlib.suppress(OSError):  # a folder that holds something else stays
                (self.path / rel).rmdir()
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
            self._staging = None
        self.listed = {rel for rel in kept if (self.path / rel).is_file()}
        self._write_manifest("complete")
        return staged


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    """SIGTERM handler: raise KeyboardInterrupt, so a terminated run ends as an interrupted one."""
    raise KeyboardInterrupt(f"signal {signum}")


def _lock(folder: Path) -> int | None:
    """An exclusive lock on ``folder`` (released when the descriptor is closed, or the process
    ends), or refuse; no lock where the system has no ``flock`` (Windows)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise UsageError(f"{folder} is being written by another pansharp-eval run; wait for it to finish or "
                         "choose another --out (nothing was written)") from None
    return fd

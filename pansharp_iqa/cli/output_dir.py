"""The output folder: refusing to overwrite without ``--force``."""

from __future__ import annotations

import shutil
from pathlib import Path

from .errors import UsageError

__all__ = ["REPORT_FILES", "prepare_output"]

REPORT_FILES = ("results.json", "results.csv", "results.md", "results.tex")
_SUBDIRS = ("scenes", "plots")


def prepare_output(out_dir: Path, *, force: bool, resume: bool) -> None:
    """Create the output folder, or check that writing into it is allowed.

    Parameters
    ----------
    out_dir : Path
        Output folder.
    force : bool
        Remove the previous outputs (report files, ``scenes/``, ``plots/``) first.
    resume : bool
        Keep ``scenes/`` for reuse; the report files are rewritten.

    Raises
    ------
    UsageError
        If previous outputs exist and neither ``force`` nor ``resume`` is set, or the path is a file.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir} exists and is not a folder")
    existing = [n for n in (*REPORT_FILES, *_SUBDIRS) if (out_dir / n).exists()]
    if existing and not (force or resume):
        raise UsageError(
            f"{out_dir} already holds results ({', '.join(existing)}); pass --force to overwrite "
            "them or --resume to reuse the scenes already evaluated"
        )
    if force:
        for name in existing:
            target = out_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)

#!/usr/bin/env python3
"""Strip outputs and execution counts from notebooks so that diffs stay readable.

Usage::

    python notebooks/strip_outputs.py            # strip every notebooks/*.ipynb in place
    python notebooks/strip_outputs.py A.ipynb    # strip the given notebooks
    python notebooks/strip_outputs.py --check    # list notebooks that still hold outputs; exit 1 if any

Code cells keep their source and metadata (tags, ...) but lose ``outputs``, ``execution_count``
and the timing metadata that executors add (``execution``, ``ExecuteTime``); the
notebook's ``language_info`` is reduced to its name (the kernel fills in versions). Plain ``json`` in
and out (no dependency), written the way ``nbformat`` writes (indent 1, sorted keys).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

VOLATILE_CELL_METADATA = ("execution", "ExecuteTime", "collapsed", "scrolled")


def strip_notebook(nb: dict) -> dict:
    """Return ``nb`` without outputs, execution counts and execution timing metadata."""
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {})
        for key in VOLATILE_CELL_METADATA:
            meta.pop(key, None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    meta = nb.get("metadata", {})
    meta.pop("widgets", None)
    if isinstance(meta.get("language_info"), dict):  # filled in by the kernel (version, lexer, ...)
        meta["language_info"] = {"name": meta["language_info"].get("name", "python")}
    return nb


def has_outputs(nb: dict) -> list[int]:
    """Indexes of code cells with outputs or an execution count."""
    return [i for i, c in enumerate(nb.get("cells", []))
            if c.get("cell_type") == "code" and (c.get("outputs") or c.get("execution_count") is not None)]


def dumps(nb: dict) -> str:
    """Serialise as nbformat does."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: notebooks/*.ipynb)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook is not stripped")
    a = parser.parse_args(argv)
    paths = a.paths or sorted(Path(__file__).resolve().parent.glob("*.ipynb"))
    dirty = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        stripped = dumps(strip_notebook(json.loads(text)))
        if stripped != text:
            dirty.append(path)
            if not a.check:
                path.write_text(stripped, encoding="utf-8")
    for path in dirty:
        print(f"{'not stripped' if a.check else 'stripped'}: {path}")
    return 1 if (a.check and dirty) else 0


if __name__ == "__main__":
    sys.exit(main())

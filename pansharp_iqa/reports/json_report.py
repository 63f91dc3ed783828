"""``results.json`` writer (strict JSON: non-finite numbers become ``null``)."""

from __future__ import annotations

import json
import math
import os
from typing import Any

__all__ = ["json_text", "to_jsonable", "write_json"]


def to_jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and non-finite floats to plain JSON values."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_text(document: dict[str, Any]) -> str:
    """``document`` as indented, key-ordered-as-given, strict JSON text (with a final newline)."""
    return json.dumps(to_jsonable(document), indent=2, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    """Write ``document`` as indented, key-ordered-as-given, strict JSON (UTF-8).

    Parameters
    ----------
    path : path-like
        Destination.
    document : dict
        The results document (see ``docs/cli.md`` for its layout).
    """
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json_text(document))

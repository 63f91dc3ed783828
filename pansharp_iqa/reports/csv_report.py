"""``results.csv``: one row per method and scene."""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["write_csv"]


def write_csv(path: str | os.PathLike[str], records: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> None:
    """Write the per-(scene, method) values.

    Parameters
    ----------
    path : path-like
        Destination.
    records : sequence of mapping
        ``scene``, ``method``, ``status``, ``metrics``, ``reason``.
    metrics : sequence of str
        Column order; values are written with ``repr`` precision (full float64), empty for
        failures.
    """
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["method", "scene", "status", *metrics, "reason"])
        for rec in records:
            values = rec.get("metrics") or {}
            writer.writerow(
                [rec["method"], rec["scene"], rec["status"]]
                + [repr(float(values[m])) if m in values else "" for m in metrics]
                + [rec.get("reason") or ""]
            )

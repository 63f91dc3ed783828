"""``results.csv``: one row per method and scene."""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["write_csv", "write_per_band_csv", "PER_BAND_FILE"]

#: The per-band table of ``pansharp-eval --per-band``.
PER_BAND_FILE = "per_band.csv"


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


def write_per_band_csv(path: str | os.PathLike[str], records: Sequence[Mapping[str, Any]]) -> None:
    """Write the per-band values (``--per-band``): one row per method, scene, index and band (a long table that stays
    readable with hundreds of bands; a spreadsheet or pandas pivots it).

    Parameters
    ----------
    path : path-like
        Destination.
    records : sequence of mapping
        ``scene``, ``method`` and, where computed, ``per_band``: index -> one value per band.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "per_band.csv"
    >>> write_per_band_csv(out, [{"scene": "a", "method": "m", "per_band": {"ERGAS": [1.5, 2.0]}}])
    >>> out.read_text().splitlines()
    ['method,scene,index,band,value', 'm,a,ERGAS,1,1.5', 'm,a,ERGAS,2,2.0']
    """
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["method", "scene", "index", "band", "value"])
        for rec in records:
            for index, values in (rec.get("per_band") or {}).items():
                for band, value in enumerate(values, start=1):
                    writer.writerow([rec["method"], rec["scene"], index, band, repr(float(value))])

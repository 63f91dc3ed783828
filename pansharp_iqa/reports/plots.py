"""PNG figures: per-index box plots across scenes, and per-scene quality maps (Q2n, SAM, ...).

Matplotlib runs with the non-interactive Agg backend (no display needed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .summary import METRIC_DIRECTIONS

__all__ = ["plot_boxplots", "plot_scene_maps", "plot_per_band"]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def _figure(**kwargs: Any) -> Any:
    """A stand-alone Agg figure: never touches pyplot's global backend (safe inside Jupyter)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def plot_boxplots(
    out_dir: str | Path, records: Sequence[Mapping[str, Any]], methods: Sequence[str], metrics: Sequence[str]
) -> list[Path]:
    """One PNG per index: box plot of its values across scenes, one box per method."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for metric in metrics:
        data = [
            [float(r["metrics"][metric]) for r in records
             if r["method"] == m and r["status"] == "ok" and metric in r["metrics"]]
            for m in methods
        ]
        fig = _figure(figsize=(1.2 + 1.1 * len(methods), 3.6), dpi=120)
        ax = fig.subplots()
        ax.boxplot([d if d else [np.nan] for d in data], tick_labels=list(methods))
        sign = METRIC_DIRECTIONS.get(metric)
        ax.set_title(metric + ("" if sign is None else " (higher is better)" if sign > 0 else " (lower is better)"))
        ax.set_ylabel(metric + (" [deg]" if metric == "SAM" else ""))
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        path = out / f"box_{_safe(metric)}.png"
        fig.savefig(path)
        written.append(path)
    return written


def plot_per_band(out_dir: str | Path, records: Sequence[Mapping[str, Any]], methods: Sequence[str]) -> list[Path]:
    """One PNG per index with per-band values (``--per-band``): its mean over the scenes against the band number, one
    line per method (a spectrum: readable with hundreds of bands, where a table of columns is not)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys(k for r in records for k in (r.get("per_band") or {})))
    written = []
    for name in names:
        fig = _figure(figsize=(7.0, 3.6), dpi=120)
        ax = fig.subplots()
        for m in methods:
            rows = [r["per_band"][name] for r in records if r["method"] == m and name in (r.get("per_band") or {})]
            if rows and len({len(v) for v in rows}) == 1:
                values = np.mean(np.asarray(rows, dtype=np.float64), axis=0)
                ax.plot(np.arange(1, values.size + 1), values, label=f"{m} ({len(rows)} scenes)", lw=1.2)
        sign = METRIC_DIRECTIONS.get(name)
        ax.set_title(f"{name} per band" + ("" if sign is None else " (higher is better)" if sign > 0
                                           else " (lower is better)"))
        ax.set_xlabel("band")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"bands_{_safe(name)}.png"
        fig.savefig(path)
        written.append(path)
    return written


def plot_scene_maps(
    out_dir: str | Path, scene: str, maps: Mapping[str, Mapping[str, np.ndarray]]
) -> Path | None:
    """One PNG per scene: a row per index with a map (Q2n, SAM, ...; the maps' previews), a column per method, one
    colour scale per index shared by the methods."""
    from .heatmaps import MAP_CMAP, map_label, map_scales, ordered_indexes

    methods = [m for m in maps if maps[m]]
    if not methods:
        return None
    indexes = ordered_indexes(maps, methods)
    scales = map_scales(maps)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig = _figure(figsize=(2.6 * len(methods) + 1, 2.7 * len(indexes)), dpi=110)
    axes = fig.subplots(len(indexes), len(methods), squeeze=False)
    for i, index in enumerate(indexes):
        scale = scales.get(index)
        image = None
        for j, method in enumerate(methods):
            ax = axes[i, j]
            ax.set_xticks([])
            ax.set_yticks([])
            values = maps[method].get(index)
            if values is None:
                continue
            image = ax.imshow(values, vmin=scale.low if scale else None, vmax=scale.high if scale else None,
                              cmap=MAP_CMAP, interpolation="nearest")
            ax.set_title(f"{method}\n{map_label(index)}", fontsize=8)
        if image is not None:
            fig.colorbar(image, ax=list(axes[i]), shrink=0.8)
    fig.suptitle(scene, fontsize=9)
    path = out / f"maps_{_safe(scene)}.png"
    fig.savefig(path)
    return path

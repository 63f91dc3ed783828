"""``OUT/report.html`` and ``OUT/figures/`` of one run, from its outcomes' display images."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pansharp_iqa.io.settings import DatasetSettings
from pansharp_iqa.reports.pair_display import PairDisplay, SceneView, assemble_scene
from pansharp_iqa.reports.stats import IndexStatistics
from pansharp_iqa.reports.summary import Summary

from .scene_eval import SceneOutcome
from .scene_queue import SceneQueue

__all__ = [
    "FIGURES_DIR", "HTML_FILE", "MAX_HTML_IMAGE_SCENES", "display_side", "drop_repeated_references", "html_scenes",
    "scene_views", "write_html_report", "write_visual_reports",
]

HTML_FILE = "report.html"
FIGURES_DIR = "figures"
#: Scenes shown with images in ``report.html`` (the others get their tables only), so that the
#: page stays a size a browser opens quickly (about 0.2 MB per scene and 5 methods).
MAX_HTML_IMAGE_SCENES = 50


def display_side(ns: argparse.Namespace, scene_number: int) -> int:
    """Longer side (pixels) of the display images the evaluation of a scene should return.

    Parameters
    ----------
    ns : argparse.Namespace
        The run's options (``format``, ``figures``).
    scene_number : int
        0-based position of the scene in the report.

    Returns
    -------
    int
        :data:`~pansharp_iqa.reports.display.DISPLAY_SIDE` when ``--format html`` shows this scene's
        images (the first :data:`MAX_HTML_IMAGE_SCENES`) or ``--figures`` is set; 0 otherwise.
    """
    from pansharp_iqa.reports.display import DISPLAY_SIDE

    html = "html" in (getattr(ns, "format", None) or ()) and _page_shows_images(scene_number)
    return DISPLAY_SIDE if (html or getattr(ns, "figures", False)) else 0


def _page_shows_images(scene_number: int) -> bool:
    return scene_number < MAX_HTML_IMAGE_SCENES


def html_scenes(scenes: Sequence[str]) -> list[str]:
    """The scenes ``report.html`` shows with images: the first :data:`MAX_HTML_IMAGE_SCENES`
    (the rule :func:`display_side` applies too).

    Examples
    --------
    >>> len(html_scenes([f"s{i}" for i in range(60)])) == MAX_HTML_IMAGE_SCENES
    True
    """
    return [s for i, s in enumerate(scenes) if _page_shows_images(i)]


def drop_repeated_references(outcome: SceneOutcome, scenes_with_references: set[str]) -> None:
    """Keep a scene's reference panels on one outcome only (they are the same on every pair).

    Every pair makes them, so that they do not depend on which pair fails; the first outcome of a
    scene that has them keeps them (:func:`scene_views` takes those), the later ones drop theirs,
    so the main process holds one copy per scene.

    Parameters
    ----------
    outcome : SceneOutcome
        Changed in place (its ``display``).
    scenes_with_references : set of str
        Scenes whose references an earlier outcome kept (updated).

    Examples
    --------
    >>> o = SceneOutcome("s1", "m", "failed", {}, reason="missing result")
    >>> seen = set(); drop_repeated_references(o, seen); seen
    set()
    """
    display = outcome.display
    if not isinstance(display, PairDisplay) or not display.references:
        return
    if outcome.scene in scenes_with_references:
        outcome.display = dataclasses.replace(display, references=())
    else:
        scenes_with_references.add(outcome.scene)


def scene_views(outcomes: Sequence[SceneOutcome], scenes: Sequence[str], methods: Sequence[str]) -> dict[str, SceneView | None]:
    """Assemble each scene's comparison grid from its pairs' display images.

    Parameters
    ----------
    outcomes : sequence of SceneOutcome
        With ``display`` set where display images were made.
    scenes, methods : sequence of str
        Report order.

    Returns
    -------
    dict of str to SceneView or None
    """
    by_scene: dict[str, dict[str, Any]] = {s: {} for s in scenes}
    for o in outcomes:
        if o.display is not None:
            by_scene.setdefault(o.scene, {})[o.method] = o.display
    return {s: assemble_scene(s, methods, by_scene[s]) for s in scenes}


def _provenance(settings: DatasetSettings, card: Mapping[str, Any], argv: Sequence[str],
                inputs_sha: Mapping[str, str], results_sha: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    from pansharp_iqa import __version__

    flat = {f: sha for files in results_sha.values() for f, sha in files.items()}
    return {
        "library": f"pansharp_iqa {card.get('version', __version__)}",
        "protocol": card.get("name", settings.protocol),
        "resolution": settings.resolution,
        "sensor": settings.sensor,
        "ratio": settings.ratio,
        "bits": settings.bits,
        "band names": list(settings.band_names) if settings.band_names else "(from the sensor registry)",
        "input scale": settings.input_scale_label,
        "result scale": settings.result_scale_label,
        "dataset": settings.root,
        "command": " ".join(["pansharp-eval", *argv]),
        "protocol card": {k: v for k, v in card.items() if k not in ("name",)},
        "inputs_sha256": dict(inputs_sha),
        "results_sha256": flat,
    }


def write_html_report(path: Path, *, title: str, notes: Sequence[str], settings: DatasetSettings,
                      card: Mapping[str, Any], summary: Summary, statistics: Mapping[str, IndexStatistics],
                      records: Sequence[Mapping[str, Any]], failures: Sequence[Mapping[str, Any]],
                      scenes: Sequence[str], views: Mapping[str, SceneView | None], argv: Sequence[str],
                      inputs_sha: Mapping[str, str], results_sha: Mapping[str, Mapping[str, str]],
                      grids: Mapping[str, str] | None = None) -> Path:
    """Write ``report.html`` (see :func:`pansharp_iqa.reports.html.render_html`).

    Images are shown for the first :data:`MAX_HTML_IMAGE_SCENES` scenes (:func:`html_scenes`);
    ``grids`` holds those of their image grids already rendered.

    Returns
    -------
    Path
        The file written.
    """
    from pansharp_iqa.reports.html import render_html

    names = set(html_scenes(list(views)))
    shown = {s: v for s, v in views.items() if s in names}
    notes = list(notes)
    if len(views) > MAX_HTML_IMAGE_SCENES:
        notes.append(f"Images are shown for the first {MAX_HTML_IMAGE_SCENES} of {len(views)} scenes "
                     "(--figures writes a figure for every scene).")
    text = render_html(title=title, summary=summary, statistics=statistics, records=records, failures=failures,
                       scenes=scenes, provenance=_provenance(settings, card, argv, inputs_sha, results_sha),
                       views=shown, notes=notes, grids=grids)
    path.write_text(text, encoding="utf-8")
    return path


def write_visual_reports(
    out_dir: Path,
    outcomes: Sequence[SceneOutcome],
    *,
    html: bool,
    figures: bool,
    title: str,
    notes: Sequence[str],
    settings: DatasetSettings,
    card: Mapping[str, Any],
    summary: Summary,
    statistics: Mapping[str, IndexStatistics],
    records: Sequence[Mapping[str, Any]],
    failures: Sequence[Mapping[str, Any]],
    scenes: Sequence[str],
    methods: Sequence[str],
    argv: Sequence[str],
    inputs_sha: Mapping[str, str],
    results_sha: Mapping[str, Mapping[str, str]],
    jobs: int = 1,
    scene_queue: SceneQueue | None = None,
) -> list[Path]:
    """Write ``report.html`` (``html``) and ``figures/`` (``figures``) of a run.

    Parameters
    ----------
    out_dir : Path
        Output folder (exists).
    outcomes : sequence of SceneOutcome
        With their display images (``SceneTask.display`` > 0).
    html, figures : bool
        Which outputs to write.
    title, notes, settings, card, summary, statistics, records, failures, scenes, methods, argv, inputs_sha, results_sha
        The run's report material (see :func:`.report_writer.write_reports`).
    jobs : int
        Threads doing the scenes' work not done yet (the run's ``--jobs``).
    scene_queue : SceneQueue, optional
        Where the run has been making its scenes' figures and page grids as they finished (for
        these same ``html`` and ``figures`` and into ``out_dir/figures``): it does the rest;
        without it, all of them are made here.

    Returns
    -------
    list of Path
        ``report.html`` and the figure files written.
    """
    if not (html or figures):
        return []
    views = scene_views(outcomes, scenes, methods)
    queue = scene_queue or SceneQueue(methods, tasks=(), known={}, figures_dir=out_dir / FIGURES_DIR if figures else None,
                                      html_scenes=html_scenes(scenes) if html else (), threads=jobs)
    figure_files, grids = queue.finish(views)
    written: list[Path] = []
    if html:
        written.append(write_html_report(
            out_dir / HTML_FILE, title=title, notes=notes, settings=settings, card=card, summary=summary,
            statistics=statistics, records=records, failures=failures, scenes=scenes, views=views, argv=argv,
            inputs_sha=inputs_sha, results_sha=results_sha, grids=grids,
        ))
    return written + figure_files

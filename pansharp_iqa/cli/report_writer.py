"""Turning outcomes into the reports of one run (terminal, CSV, JSON, Markdown, LaTeX, HTML, PNG)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pansharp_iqa.io.settings import DatasetSettings
from pansharp_iqa.reports import render_latex, render_markdown, render_table, summarise, write_csv, write_json
from pansharp_iqa.reports.stats import statistics_to_dict

from .scene_eval import SceneOutcome
from .visual_reports import write_visual_reports

if TYPE_CHECKING:
    from .scene_queue import SceneQueue

__all__ = ["EXP_NOTE", "common_card", "write_reports"]

#: Footnote of full-resolution reports: why plain upsampling tops QNR.
EXP_NOTE = (
    "At full resolution D_lambda compares the fused image's inter-band similarities with those of the MS "
    "upsampled by interp23tap, so EXP (that upsampling) has D_lambda = 0 by construction, and pixel "
    "replication nearly so: their high QNR means they add no spectral distortion, not that they fuse well "
    "(they add no PAN detail). Read QNR with D_s, D_lambda_K/HQNR and the reduced-resolution indexes."
)

_SHAPE_KEYS = ("image_shape", "evaluated_shape")


def common_card(cards: Sequence[dict[str, Any]], settings: DatasetSettings) -> dict[str, Any]:
    """The protocol card shared by all successful evaluations (keys whose values agree).

    Scene-specific entries (image shapes) stay in the per-scene records. Without any successful
    evaluation, a card is made from the protocol registry and the settings.
    """
    if not cards:
        from pansharp_iqa import __version__, get_protocol

        proto = get_protocol(settings.protocol)
        card: dict[str, Any] = {
            "name": proto.name, "library": "pansharp_iqa", "version": __version__,
            "description": proto.description, **proto.settings(),
            "resolution": settings.resolution, "ratio": settings.ratio, "bits": settings.bits,
            "note": "no scene was evaluated; card made from the protocol registry",
        }
        if settings.resolution == "full":
            card["sensor"] = settings.resolved_sensor().to_dict()
        return card
    first = cards[0]
    return {k: v for k, v in first.items() if k not in _SHAPE_KEYS and all(c.get(k) == v for c in cards[1:])}


def _notes(settings: DatasetSettings, card: dict[str, Any]) -> list[str]:
    return [
        f"Protocol {card.get('name', settings.protocol)} (pansharp_iqa {card.get('version', '?')}), "
        f"{settings.resolution} resolution, sensor {settings.sensor}, ratio {settings.ratio}, "
        f"bits {settings.bits}, results scale {settings.result_scale_label}."
    ] + ([EXP_NOTE] if settings.resolution == "full" else [])


def write_reports(
    out_dir: Path,
    outcomes: Sequence[SceneOutcome],
    *,
    settings: DatasetSettings,
    methods: list[str],
    scenes: list[str],
    formats: Sequence[str],
    plots: bool,
    figures: bool = False,
    inputs_sha: dict[str, str],
    results_sha: dict[str, dict[str, str]],
    warnings: list[str],
    argv: list[str],
    run_info: dict[str, Any],
    shown_dir: Path | None = None,
    scene_queue: SceneQueue | None = None,
) -> int:
    """Write the requested reports and print the terminal table.

    Parameters
    ----------
    out_dir : Path
        Output folder (exists).
    outcomes : sequence of SceneOutcome
        In scene-major order.
    settings : DatasetSettings
    methods, scenes : list of str
        Report order.
    formats : sequence of str
        Among ``table``, ``csv``, ``json``, ``md``, ``tex``, ``html``.
    plots : bool
        Write PNG figures under ``out_dir/plots``.
    figures : bool
        Write each scene's comparison grid under ``out_dir/figures`` (PNG 300 dpi and PDF);
        needs the outcomes' display images.
    inputs_sha, results_sha : dict
        SHA-256 of every input file and every result file.
    warnings : list of str
        Non-fatal notes (ignored files, ...).
    argv : list of str
        The command line.
    run_info : dict
        Execution details recorded in the JSON (jobs, reused results).
    shown_dir : Path, optional
        Folder named in the terminal (the output folder when ``out_dir`` is a staging folder).
    scene_queue : SceneQueue, optional
        Makes the scenes' figures and page grids as the scenes finish; waited for here.

    Returns
    -------
    int
        Number of failed (scene, method) pairs.
    """
    from pansharp_iqa import __version__

    records = [
        {"scene": o.scene, "method": o.method, "status": o.status, "metrics": o.metrics, "reason": o.reason,
         "protocol": o.protocol}
        for o in outcomes
    ]
    failures = [{"scene": r["scene"], "method": r["method"], "reason": r["reason"]} for r in records if r["status"] != "ok"]
    summary = summarise(records, methods)
    card = common_card([r["protocol"] for r in records if r["status"] == "ok" and r["protocol"]], settings)
    notes = _notes(settings, card)
    title = (
        f"pansharp-eval: {settings.name} - {len(scenes)} scene(s) x {len(methods)} method(s); " + notes[0]
    )
    statistics = {}
    if {"json", "md", "html"} & set(formats) and len(scenes) >= 2:
        from pansharp_iqa.reports.stats import compare_methods

        statistics = compare_methods(records, methods, summary.metrics)
    if "csv" in formats:
        write_csv(out_dir / "results.csv", records, summary.metrics)
    if "json" in formats:
        per_scene: dict[str, dict[str, Any]] = {s: {} for s in scenes}
        for r in records:
            entry = {"status": r["status"], "metrics": r["metrics"], "reason": r["reason"]}
            if r["protocol"]:
                entry["protocol"] = r["protocol"]
            per_scene[r["scene"]][r["method"]] = entry
        write_json(out_dir / "results.json", {
            "tool": "pansharp-eval",
            "version": __version__,
            "command": ["pansharp-eval", *argv],
            "dataset": {**settings.to_dict(), "scenes": scenes},
            "protocol": card,
            "inputs_sha256": inputs_sha,
            "results_sha256": results_sha,
            "methods": methods,
            "metrics": summary.metrics,
            "summary": summary.to_dict(),
            "statistics": statistics_to_dict(statistics, len(scenes)),
            "scenes": per_scene,
            "failures": failures,
            "warnings": warnings,
            "run": run_info,
        })
    if "md" in formats:
        (out_dir / "results.md").write_text(
            render_markdown(summary, failures, title=f"pansharp-eval: {settings.name}", notes=notes,
                            statistics=statistics, n_scenes=len(scenes)),
            encoding="utf-8",
        )
    if "tex" in formats:
        (out_dir / "results.tex").write_text(
            render_latex(summary, caption=f"Quality indexes on {settings.name}.", notes=notes,
                         label=f"tab:pansharp-eval-{settings.name}"),
            encoding="utf-8",
        )
    if plots:
        from pansharp_iqa.reports.plots import plot_boxplots, plot_scene_maps

        plot_dir = out_dir / "plots"
        plot_boxplots(plot_dir, records, methods, summary.metrics)
        by_scene: dict[str, dict[str, Any]] = {}
        for o in outcomes:
            if o.maps:
                by_scene.setdefault(o.scene, {})[o.method] = o.maps
        for scene, maps in by_scene.items():
            plot_scene_maps(plot_dir, scene, maps)
        if settings.resolution == "full":
            print("pansharp-eval: note: Q2n/SAM maps need a reference; at full resolution only box plots are drawn")
    extra = write_visual_reports(
        out_dir, outcomes, html="html" in formats, figures=figures, title=f"pansharp-eval: {settings.name}",
        notes=notes, settings=settings, card=card, summary=summary, statistics=statistics, records=records,
        failures=failures, scenes=scenes, methods=methods, argv=argv, inputs_sha=inputs_sha, results_sha=results_sha,
        jobs=int(run_info.get("jobs", 1) or 1), scene_queue=scene_queue,
    )
    if "table" in formats:
        print(render_table(summary, failures, title=title))
    else:
        for f in failures:
            print(f"FAILED {f['scene']} / {f['method']}: {f['reason']}")
    written = [n for n, f in (("results.csv", "csv"), ("results.json", "json"), ("results.md", "md"), ("results.tex", "tex")) if f in formats]
    written += [p.name for p in extra if p.suffix == ".html"]
    print(f"pansharp-eval: wrote {', '.join(written) or 'no report files'}"
          f"{' and plots/' if plots else ''}{' and figures/' if figures else ''} in {shown_dir or out_dir}")
    if "html" in formats:
        print(f"pansharp-eval: report: {(Path(shown_dir or out_dir) / 'report.html').resolve()}")
    if failures:
        print(f"pansharp-eval: {len(failures)} of {len(records)} evaluation(s) failed (exit status 1)", file=sys.stderr)
    return len(failures)

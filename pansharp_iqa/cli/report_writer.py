"""The reports of one run: the terminal table, ``results.csv/json/md/tex``, ``plots/``,
``report.html`` and ``figures/``, all made from one :class:`RunRecord`."""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.reports import (
    PER_BAND_FILE,
    render_latex,
    render_markdown,
    render_table,
    summarise,
    write_csv,
    write_json,
    write_per_band_csv,
)
from pansharp_iqa.reports.band_groups import html_per_band, markdown_per_band
from pansharp_iqa.reports.pair_display import PairDisplay, SceneView, assemble_scene
from pansharp_iqa.reports.stats import IndexStatistics, statistics_to_dict
from pansharp_iqa.reports.summary import Summary

from .misregistration import html_section, markdown_section
from .scene_eval import SceneOutcome

__all__ = ["EXP_NOTE", "exp_note_applies", "FIGURES_DIR", "HTML_FILE", "MAX_HTML_IMAGE_SCENES", "Outputs", "RunRecord",
           "drop_repeated_references", "write_reports"]

#: Footnote of full-resolution reports: why plain upsampling tops QNR.
EXP_NOTE = (
    "At full resolution D_lambda compares the fused image's inter-band similarities with those of the MS "
    "upsampled by interp23tap, so EXP (that upsampling) has D_lambda = 0 by construction, and pixel "
    "replication nearly so: their high QNR means they add no spectral distortion, not that they fuse well "
    "(they add no PAN detail). Read QNR with D_s, D_lambda_K/HQNR and the reduced-resolution indexes."
)
HTML_FILE = "report.html"


def exp_note_applies(settings: Any) -> bool:
    """Whether a run's table has the QNR family's D_lambda (full resolution), the index :data:`EXP_NOTE` explains
    (not the hyperspectral/Sentinel-2 protocols' D_lambda, a Q2n against the MS of the filtered, decimated image)."""
    if settings.resolution != "full":
        return False
    from pansharp_iqa.indexes.catalog import get_index
    from pansharp_iqa.protocols import get_protocol

    if get_index("D_lambda", settings.protocol) is not get_index("D_lambda"):
        return False
    names = {n.lower() for n in settings.indexes or ["default"]}
    return "d_lambda" in names or ("default" in names and "D_lambda" in get_protocol(settings.protocol).full_indexes)
FIGURES_DIR = "figures"
#: Scenes shown with images in ``report.html`` (the others get their tables only), so that the
#: page stays a size a browser opens quickly (about 0.2 MB per scene and 5 methods).
MAX_HTML_IMAGE_SCENES = 50
_TABLE_FILES = {"csv": "results.csv", "json": "results.json", "md": "results.md", "tex": "results.tex"}
_SHAPE_KEYS = ("image_shape", "evaluated_shape")


@dataclasses.dataclass(frozen=True)
class Outputs:
    """What a run writes besides its per-pair records (``--format``, ``--plots``, ``--figures``)."""

    formats: tuple[str, ...]
    plots: bool = False
    figures: bool = False
    per_band: bool = False
    maps: bool = False

    def files(self) -> list[str]:
        """Report files in OUT (``table`` writes none; ``per_band.csv`` with ``--per-band`` and csv)."""
        return [n for f, n in _TABLE_FILES.items() if f in self.formats] + [HTML_FILE] * ("html" in self.formats) \
            + [PER_BAND_FILE] * (self.per_band and "csv" in self.formats)

    def folders(self) -> list[str]:
        """Report folders in OUT."""
        return ["plots"] * self.plots + [FIGURES_DIR] * self.figures + ["maps"] * self.maps

    def html_scenes(self, scenes: Sequence[str]) -> list[str]:
        """The scenes ``report.html`` shows with images: the first :data:`MAX_HTML_IMAGE_SCENES`."""
        return list(scenes[:MAX_HTML_IMAGE_SCENES]) if "html" in self.formats else []

    def display_side(self, scene_number: int) -> int:
        """Longer side (pixels) of the display images the evaluation of the ``scene_number``-th
        scene (0-based) returns: for the page's first scenes or ``--figures``; 0: none."""
        from pansharp_iqa.reports.display import DISPLAY_SIDE

        shown = "html" in self.formats and scene_number < MAX_HTML_IMAGE_SCENES
        return DISPLAY_SIDE if (shown or self.figures) else 0


@dataclasses.dataclass
class RunRecord:
    """One run's outcomes and provenance, and the tables every report is made from."""

    settings: DatasetSettings
    scenes: list[str]
    methods: list[str]
    outcomes: list[SceneOutcome]
    inputs_sha: dict[str, str]
    results_sha: dict[str, dict[str, str]]
    warnings: list[str]
    argv: list[str]
    info: dict[str, Any]
    method_scales: dict[str, str] = dataclasses.field(default_factory=dict)
    misregistration: dict[str, Any] | None = None  # --misregistration: per scene (cli.misregistration)

    @functools.cached_property
    def records(self) -> list[dict[str, Any]]:
        return [{"scene": o.scene, "method": o.method, "status": o.status, "metrics": o.metrics, "reason": o.reason,
                 "protocol": o.protocol, **({"per_band": o.per_band} if o.per_band else {})} for o in self.outcomes]

    @functools.cached_property
    def failures(self) -> list[dict[str, Any]]:
        return [{"scene": r["scene"], "method": r["method"], "reason": r["reason"]}
                for r in self.records if r["status"] != "ok"]

    @functools.cached_property
    def summary(self) -> Summary:
        return summarise(self.records, self.methods)

    @functools.cached_property
    def statistics(self) -> dict[str, IndexStatistics]:
        from pansharp_iqa.reports.stats import compare_methods

        complete = self.summary.complete  # an incomplete method costs the others nothing
        records = [r for r in self.records if r["method"] in complete]
        return compare_methods(records, complete, self.summary.metrics) if len(self.scenes) >= 2 else {}

    @functools.cached_property
    def card(self) -> dict[str, Any]:
        """The protocol card shared by every successful evaluation (the keys whose values agree;
        image shapes stay in the per-scene records), else one made from the protocol registry."""
        cards = [r["protocol"] for r in self.records if r["status"] == "ok" and r["protocol"]]
        if cards:
            return {k: v for k, v in cards[0].items() if k not in _SHAPE_KEYS and all(c.get(k) == v for c in cards[1:])}
        from pansharp_iqa.settings import protocol_card

        core = self.settings.settings  # no scene was evaluated: the settings value's own entries
        sensor = {"sensor": getattr(core, "sensor").to_dict()} if core.resolution == "full" else {}  # noqa: B009
        return protocol_card(core.protocol, resolution=core.resolution, ratio=core.ratio, bits=core.bits, **sensor,
                             note="no scene was evaluated; card made from the settings")

    @functools.cached_property
    def notes(self) -> list[str]:
        s = self.settings
        return [
            f"Protocol {self.card.get('name', s.protocol)} (pansharp_iqa {self.card.get('version', '?')}), "
            f"{s.resolution} resolution, sensor {s.sensor}, ratio {s.ratio}, bits {s.bits}, "
            f"results scale {s.result_scale_label or 'per method'}"
            + "".join(f"; {m}: {v} (method.toml)" for m, v in self.method_scales.items()) + "."
        ] + ([f"Preset {s.preset['name']}: {s.preset.get('data_note')}."] if s.preset else []) \
            + ([EXP_NOTE] if exp_note_applies(s) else [])

    def results_document(self) -> dict[str, Any]:
        """The content of ``results.json``."""
        from pansharp_iqa import __version__

        per_scene: dict[str, dict[str, Any]] = {s: {} for s in self.scenes}
        for r in self.records:
            entry = {"status": r["status"], "metrics": r["metrics"], "reason": r["reason"],
                     **({"per_band": r["per_band"]} if "per_band" in r else {})}
            if r["protocol"]:
                entry["protocol"] = r["protocol"]
            per_scene[r["scene"]][r["method"]] = entry
        return {
            "tool": "pansharp-eval", "version": __version__, "command": ["pansharp-eval", *self.argv],
            "dataset": {**self.settings.to_dict(), "scenes": self.scenes}, "protocol": self.card,
            **({"method_result_scales": self.method_scales} if self.method_scales else {}),
            "inputs_sha256": self.inputs_sha, "results_sha256": self.results_sha, "methods": self.methods,
            "metrics": self.summary.metrics, "summary": self.summary.to_dict(),
            "statistics": statistics_to_dict(self.statistics, len(self.scenes)), "scenes": per_scene,
            "failures": self.failures, "warnings": self.warnings, "run": self.info,
            **({"misregistration": self.misregistration} if self.misregistration else {}),
        }

    def provenance(self) -> dict[str, Any]:
        """The provenance card of ``report.html``."""
        from pansharp_iqa import __version__

        s, card = self.settings, self.card
        return {
            "library": f"pansharp_iqa {card.get('version', __version__)}", "protocol": card.get("name", s.protocol),
            "resolution": s.resolution, "sensor": s.sensor, "ratio": s.ratio, "bits": s.bits,
            "band names": list(s.band_names) if s.band_names else "(from the sensor registry)",
            "input scale": s.input_scale_label, "result scale": s.result_scale_label, "dataset": s.root,
            "command": " ".join(["pansharp-eval", *self.argv]), **({"preset": dict(s.preset)} if s.preset else {}),
            "protocol card": {k: v for k, v in card.items() if k != "name"},
            "inputs_sha256": dict(self.inputs_sha),
            "results_sha256": {f: sha for files in self.results_sha.values() for f, sha in files.items()},
        }

    def scene_maps(self) -> dict[str, dict[str, Any]]:
        """Each scene's quality-map previews, by method (pairs evaluated with maps)."""
        out: dict[str, dict[str, Any]] = {}
        for o in self.outcomes:
            if o.maps:
                out.setdefault(o.scene, {})[o.method] = o.maps
        return out

    def scene_views(self) -> dict[str, SceneView | None]:
        """Each scene's comparison grid, assembled from its pairs' display images."""
        by_scene: dict[str, dict[str, Any]] = {s: {} for s in self.scenes}
        for o in self.outcomes:
            if o.display is not None:
                by_scene[o.scene][o.method] = o.display
        return {s: assemble_scene(s, self.methods, by_scene[s]) for s in self.scenes}


def drop_repeated_references(outcome: SceneOutcome, scenes_with_references: set[str]) -> None:
    """Keep a scene's reference panels on its first outcome that has them (every pair makes them, so that they do not
    depend on which pair fails; they are the same on every pair), so the main process holds one copy per scene."""
    display = outcome.display
    if not isinstance(display, PairDisplay) or not display.references:
        return
    if outcome.scene in scenes_with_references:
        outcome.display = dataclasses.replace(display, references=())
    else:
        scenes_with_references.add(outcome.scene)


def write_reports(out_dir: Path, run: RunRecord, outputs: Outputs, *, shown_dir: Path | None = None) -> int:
    """Write the run's reports into ``out_dir`` and print the terminal table."""
    shown = Path(shown_dir or out_dir)
    _write_tables(out_dir, run, outputs.formats)
    if outputs.plots:
        _write_plots(out_dir / "plots", run)
    if "html" in outputs.formats or outputs.figures:
        _write_visual(out_dir, run, outputs)
    if "table" in outputs.formats:
        title = f"pansharp-eval: {run.settings.name} - {len(run.scenes)} scene(s) x {len(run.methods)} method(s); "
        print(render_table(run.summary, run.failures, title=title + run.notes[0]))
    else:
        for f in run.failures:
            print(f"FAILED {f['scene']} / {f['method']}: {f['reason']}")
    print(f"pansharp-eval: wrote {', '.join(outputs.files()) or 'no report files'}"
          f"{' and plots/' if outputs.plots else ''}{' and figures/' if outputs.figures else ''} in {shown}")
    if "html" in outputs.formats:
        print(f"pansharp-eval: report: {(shown / HTML_FILE).resolve()}")
    if run.failures:
        print(f"pansharp-eval: {len(run.failures)} of {len(run.records)} evaluation(s) failed (exit status 1)",
              file=sys.stderr)
    return len(run.failures)


def _write_tables(out_dir: Path, run: RunRecord, formats: Sequence[str]) -> None:
    name = run.settings.name
    if "csv" in formats:
        write_csv(out_dir / "results.csv", run.records, run.summary.metrics)
        if any("per_band" in r for r in run.records):
            write_per_band_csv(out_dir / PER_BAND_FILE, run.records)
    if "json" in formats:
        write_json(out_dir / "results.json", run.results_document())
    if "md" in formats:
        (out_dir / "results.md").write_text(
            render_markdown(run.summary, run.failures, title=f"pansharp-eval: {name}", notes=run.notes,
                            statistics=run.statistics, n_scenes=len(run.scenes))
            + markdown_per_band(run.records, run.methods)
            + (markdown_section(run.misregistration) if run.misregistration else ""), encoding="utf-8")
    if "tex" in formats:
        # the caption is one line (settings, no prose): the notes are in results.md and report.html
        (out_dir / "results.tex").write_text(
            render_latex(run.summary, caption=f"Quality indexes on {name}{_preset_caption(run.settings.preset)}.",
                         notes=run.notes[:1],
                         label=f"tab:pansharp-eval-{name}"), encoding="utf-8")


def _preset_caption(preset: Any) -> str:
    """`` (preset NAME)``, with ``NOT the published test set`` when it was forced onto other data."""
    if not preset:
        return ""
    forced = ", NOT the published test set" if preset.get("published_test_set") is False else ""
    return f" (preset {preset['name']}{forced})"


def _write_plots(plot_dir: Path, run: RunRecord) -> None:
    from pansharp_iqa.reports.plots import plot_boxplots, plot_per_band, plot_scene_maps

    plot_boxplots(plot_dir, run.records, run.methods, run.summary.metrics)
    plot_per_band(plot_dir, run.records, run.methods)  # with --per-band: one spectrum per index
    for scene, maps in run.scene_maps().items():
        plot_scene_maps(plot_dir, scene, maps)
    if run.settings.resolution == "full" and not any(o.maps for o in run.outcomes):
        print("pansharp-eval: note: at full resolution --plots draws box plots; --maps adds the quality maps")


def _write_visual(out_dir: Path, run: RunRecord, outputs: Outputs) -> None:
    """``report.html`` (images for :meth:`Outputs.html_scenes`) and ``figures/<scene>.png|pdf``."""
    views = run.scene_views()
    if outputs.figures:
        from pansharp_iqa.reports.figures import write_scene_figure

        for view in views.values():
            if view is not None:
                write_scene_figure(out_dir / FIGURES_DIR, view)
    if "html" not in outputs.formats:
        return
    from pansharp_iqa.reports.html import render_html

    notes = list(run.notes) + ([run.summary.legend()] if run.summary.legend() else [])
    if len(views) > MAX_HTML_IMAGE_SCENES:
        notes.append(f"Images are shown for the first {MAX_HTML_IMAGE_SCENES} of {len(views)} scenes "
                     "(--figures writes a figure for every scene).")
    shown = set(outputs.html_scenes(run.scenes))
    maps = run.scene_maps() if outputs.maps else {}
    page = render_html(title=f"pansharp-eval: {run.settings.name}", summary=run.summary, statistics=run.statistics,
                       records=run.records, failures=run.failures, scenes=run.scenes, provenance=run.provenance(),
                       views={s: v for s, v in views.items() if s in shown}, notes=notes,
                       sections=[s for s in (html_per_band(run.records, run.methods),
                                             html_section(run.misregistration) if run.misregistration else "") if s],
                       maps={s: m for s, m in maps.items() if s in shown})
    (out_dir / HTML_FILE).write_text(page, encoding="utf-8")

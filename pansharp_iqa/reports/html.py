"""``report.html``: one self-contained page with the tables, the statistics and the images.

Everything is inline: CSS, a few lines of JavaScript that sort the tables, and the images as
``data:`` URIs (JPEG). The page loads nothing else, so it opens from disk in any browser, offline,
and can be mailed or archived as one file.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .display import RESIDUAL_CMAP, colourise
from .formatting import DIGITS, direction_arrow, format_p, format_value
from .heatmaps import MAP_CMAP, heat_map_png, map_label, map_scales, ordered_indexes
from .image_codec import data_uri, encode_jpeg
from .pair_display import Panel, SceneView
from .stats import ALPHA, MIN_SCENES, IndexStatistics, method_note
from .summary import METRIC_DIRECTIONS, Summary

__all__ = ["render_html", "render_scene_grid", "render_map_grid"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:1.5em auto;
max-width:1400px;padding:0 1em;color:#1d1d1f;background:#fff;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
h3{font-size:1.05em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.4em 0 .8em;font-size:.9em}
th,td{border:1px solid #d0d0d0;padding:.25em .55em;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
th{background:#f3f3f5}table.sortable th{cursor:pointer}table.sortable th:hover{background:#e6e6ee}
td.best{font-weight:bold;background:#e8f5e9}td.tie{background:#f4fbf4}
tr.failed td{color:#a00}
.card td{text-align:left;white-space:normal;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
.card th{text-align:left;width:14em}
.note{color:#555;font-size:.88em;margin:.2em 0}
.grid{display:grid;grid-template-columns:repeat(var(--n),minmax(0,200px));gap:6px 8px;align-items:start}
.cell{font-size:.8em;text-align:center}
.cell .lab{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.pic{position:relative;line-height:0}
.pic img{width:100%;height:auto;display:block;border:1px solid #ccc}
img.zoom{image-rendering:pixelated}
.box{position:absolute;border:2px solid #ffd400;box-sizing:border-box;pointer-events:none}
.missing{border:1px dashed #c00;color:#a00;padding:.6em;font-size:.85em;min-height:4em;text-align:left}
.cbar{display:flex;align-items:center;gap:.5em;font-size:.8em;margin:.3em 0}
.cbar span.bar{display:inline-block;width:220px;height:12px;border:1px solid #999}
nav a{margin-right:.8em}
table.maps td,table.maps th{text-align:center;vertical-align:middle;white-space:normal}
table.maps img{width:160px;height:auto;image-rendering:pixelated;border:1px solid #ccc;display:block}
table.maps .bar{display:inline-block;width:80px;height:10px;border:1px solid #999;vertical-align:middle}
table.maps td.scale{white-space:nowrap;font-size:.85em}
"""

_JS = """
document.querySelectorAll('table.sortable').forEach(function(t){
 t.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){
  var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=th.getAttribute('data-dir')!=='asc';
  t.querySelectorAll('th').forEach(function(h){h.removeAttribute('data-dir')});th.setAttribute('data-dir',asc?'asc':'desc');
  function key(r){var c=r.cells[i],v=c.getAttribute('data-v');return v===null?c.textContent:(v===''?NaN:parseFloat(v));}
  rows.sort(function(a,c){var x=key(a),y=key(c);
   if(typeof x==='string'||typeof y==='string'){return (asc?1:-1)*String(x).localeCompare(String(y));}
   if(isNaN(x))return 1;if(isNaN(y))return -1;return asc?x-y:y-x;});
  rows.forEach(function(r){b.appendChild(r);});});});});
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(x: float | None, digits: int = DIGITS) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.{digits}f}"


def _index_head(metric: str) -> str:
    arrow = direction_arrow(METRIC_DIRECTIONS.get(metric), up=" ↑", down=" ↓")
    title = "higher is better" if arrow == " ↑" else "lower is better" if arrow else ""
    return f"<th title='{_e(title)}'>{_e(metric)}{arrow}</th>"


def _summary_table(summary: Summary, statistics: Mapping[str, IndexStatistics]) -> str:
    rows = []
    for method in summary.methods:
        c = summary.counts[method]
        cells = [f"<td>{_e(summary.label(method))}</td>",
                 f"<td data-v='{c['ok']}'>{c['ok']}/{c['ok'] + c['failed']}</td>"]
        for metric in summary.metrics:
            s = summary.stats[method][metric]
            text = format_value(s["mean"], s["std"], s["n"], pm=" ± ")
            best = method in summary.best.get(metric, ()) and text != "-"
            st = statistics.get(metric)
            tie = bool(st and st.tested and not best and method in st.not_distinguishable())
            cls = " class='best'" if best else " class='tie'" if tie else ""
            mark = " ★" if best else " ≈" if tie else ""
            v = s["mean"] if math.isfinite(s["mean"]) else ""
            cells.append(f"<td{cls} data-v='{v}'>{_e(text)}{mark}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "<tr><th>Method</th><th>ok</th>" + "".join(_index_head(m) for m in summary.metrics) + "</tr>"
    return (f"<table class='sortable' id='summary'><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
            "<p class='note'>Mean ± sample standard deviation over scenes. ↑ higher is better, ↓ lower is better. "
            f"★ best mean; ≈ not distinguishable from the best (Holm-corrected Wilcoxon p ≥ {ALPHA}, "
            f"with {MIN_SCENES} or more scenes). Click a column header to sort.</p>")


def _statistics_section(statistics: Mapping[str, IndexStatistics], n_scenes: int, summary: Summary) -> str:
    if not statistics:
        why = summary.untested_reason(n_scenes)
        return f"<p class='note'>No statistics across scenes: {why}.</p>"
    parts = [f"<p class='note'>{_e(method_note())}</p>"]
    for metric, st in statistics.items():
        arrow = "higher is better" if st.direction > 0 else "lower is better"
        fried = ""
        if st.friedman is not None:
            fried = (f"Friedman χ² = {st.friedman['statistic']:.3f}, p = {format_p(st.friedman['p'])}. ")
        parts.append(f"<h3>{_e(metric)} <span class='note'>({arrow}; best: {_e(st.best)})</span></h3>")
        parts.append(f"<p class='note'>{_e(fried)}{_e(st.note)}.</p>")
        head = ("<tr><th>Method</th><th>mean rank</th><th>mean diff. vs best</th><th>95 % CI</th>"
                "<th>Wilcoxon p</th><th>p (Holm)</th><th>verdict</th></tr>")
        rows = [f"<tr><td>{_e(st.best)}</td><td data-v='{st.mean_rank[st.best]}'>{st.mean_rank[st.best]:.2f}</td>"
                "<td data-v='0'>0</td><td>-</td><td>-</td><td>-</td><td>best</td></tr>"]
        for c in st.comparisons:
            ci = f"[{_num(c.ci95[0])}, {_num(c.ci95[1])}]" if c.ci95 else "-"
            rows.append(
                f"<tr><td>{_e(c.method)}</td><td data-v='{st.mean_rank[c.method]}'>{st.mean_rank[c.method]:.2f}</td>"
                f"<td data-v='{c.mean_difference}'>{_num(c.mean_difference)}</td><td>{ci}</td>"
                f"<td data-v='{'' if c.p is None else c.p}'>{format_p(c.p)}</td>"
                f"<td data-v='{'' if c.p_holm is None else c.p_holm}'>{format_p(c.p_holm)}</td>"
                f"<td>{c.verdict}</td></tr>"
            )
        parts.append(f"<table class='sortable'><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>")
    return "".join(parts)


def _card(provenance: Mapping[str, Any]) -> str:
    rows = []
    for key, value in provenance.items():
        if isinstance(value, Mapping) and key.endswith("sha256"):
            inner = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in value.items())
            cell = (f"<details><summary>{len(value)} file(s)</summary><table>{inner}</table></details>"
                    if value else "-")
        elif isinstance(value, Mapping):
            inner = "<br>".join(
                f"{_e(k)} = {'; '.join(map(_e, v)) if isinstance(v, (list, tuple)) else _e(v)}"
                for k, v in value.items()
            )
            cell = f"<details><summary>{len(value)} entries</summary>{inner}</details>" if value else "-"
        elif isinstance(value, (list, tuple)):
            cell = "<br>".join(_e(v) for v in value)
        else:
            cell = _e(value)
        rows.append(f"<tr><th>{_e(key)}</th><td>{cell}</td></tr>")
    return f"<table class='card'>{''.join(rows)}</table>"


def _scene_table(scene: str, methods: Sequence[str], metrics: Sequence[str],
                 records: Sequence[Mapping[str, Any]]) -> str:
    mine = {r["method"]: r for r in records if r["scene"] == scene}
    head = "<tr><th>Method</th>" + "".join(_index_head(m) for m in metrics) + "</tr>"
    rows = []
    for m in methods:
        r = mine.get(m)
        if r is None:
            continue
        if r["status"] != "ok":
            rows.append(f"<tr class='failed'><td>{_e(m)}</td><td colspan='{len(metrics)}' style='text-align:left'>"
                        f"failed: {_e(r.get('reason'))}</td></tr>")
            continue
        vals = r.get("metrics") or {}
        cells = []
        for k in metrics:
            v = vals.get(k)
            x = math.nan if v is None else float(v)
            fin = math.isfinite(x)
            cells.append(f"<td data-v='{x if fin else ''}'>{_num(x) if fin else '-'}</td>")
        rows.append(f"<tr><td>{_e(m)}</td>{''.join(cells)}</tr>")
    return f"<table class='sortable'><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _gradient(cmap: str) -> str:
    import matplotlib

    colours = matplotlib.colormaps[cmap](np.linspace(0, 1, 11))
    stops = ",".join("#" + "".join(f"{int(round(255 * c)):02x}" for c in rgba[:3]) for rgba in colours)
    return f"linear-gradient(to right,{stops})"


def _pic(uri: str, box: tuple[float, float, float, float] | None, *, zoom: bool, alt: str) -> str:
    overlay = ""
    if box is not None:
        top, left, h, w = box
        overlay = f"<div class='box' style='top:{top:.3f}%;left:{left:.3f}%;height:{h:.3f}%;width:{w:.3f}%'></div>"
    cls = " class='zoom'" if zoom else ""
    return f"<div class='pic'><img{cls} alt='{_e(alt)}' src='{uri}'>{overlay}</div>"


def _cell(label: str, body: str) -> str:
    return f"<div class='cell'><div class='lab' title='{_e(label)}'>{_e(label)}</div>{body}</div>"


def render_scene_grid(view: SceneView) -> str:
    """The image grid of one scene in ``report.html``: every panel (whole scene with the crop's
    box, the zoomed crop), the residual maps on the scene's colour scale, and notes."""
    H, W = view.full_shape
    row, col, side = view.crop
    box = (100 * row / H, 100 * col / W, 100 * side / H, 100 * side / W)
    columns: list[tuple[str, Panel | str, bool]] = [(p.label, p, False) for p in view.references]
    columns += [(m, view.panels[m], True) for m in view.methods]
    n = len(columns)
    overview, crops, residual = [], [], []
    for label, panel, is_method in columns:
        if isinstance(panel, Panel):
            overview.append(_cell(label, _pic(data_uri(panel.image), box, zoom=False, alt=f"{label}: whole scene")))
            crops.append(_cell(f"{label} (zoom)", _pic(data_uri(panel.crop), None, zoom=True, alt=f"{label}: crop")))
        else:
            overview.append(_cell(label, f"<div class='missing'>{_e(panel)}</div>"))
            crops.append(_cell(label, ""))
        res = view.residuals.get(label) if is_method else None
        if res is not None:
            img = encode_jpeg(colourise(res, view.residual_max))
            residual.append(_cell(f"|{label} − GT|", _pic(data_uri(img), box, zoom=False, alt=f"{label}: residual")))
        else:
            residual.append("<div class='cell'></div>")
    out = [f"<div class='grid' style='--n:{n}'>{''.join(overview)}</div>",
           f"<p class='note'>Zoom: rows {row}–{row + side - 1}, columns {col}–{col + side - 1} "
           f"({side} × {side} full-resolution pixels, yellow box).</p>",
           f"<div class='grid' style='--n:{n}'>{''.join(crops)}</div>"]
    if view.residuals:
        out.append(f"<div class='grid' style='--n:{n}'>{''.join(residual)}</div>")
        out.append(f"<div class='cbar'>mean over bands of |fused − GT| (DN): 0 <span class='bar' "
                   f"style='background:{_gradient(RESIDUAL_CMAP)}'></span> {view.residual_max:.4g} and above "
                   "(one scale for every method of this scene)</div>")
    dh, dw = view.display_shape
    shown = "shown at its own size" if (dh, dw) == (H, W) else f"downsampled for display to {dh} × {dw}"
    out.append(f"<p class='note'>Scene {H} × {W} pixels, {shown}; the same contrast stretch for every "
               f"panel ({'reference' if len(view.references) == 1 else 'MS'} 1st–99th percentiles per "
               "channel; PAN on its own). " + " ".join(_e(n_[:1].upper() + n_[1:]) + "." for n_ in view.notes) + "</p>")
    return "".join(out)


def render_map_grid(scene: str, methods: Sequence[str], maps: Mapping[str, Mapping[str, np.ndarray]]) -> str:
    """The quality maps of one scene in ``report.html``: a row per method, a column per index, each index on one
    colour scale shared by every method (its colour bar under the column)."""
    indexes = ordered_indexes(maps, methods)
    if not indexes:
        return ""
    scales = map_scales(maps)
    head = "<tr><th>Method</th>" + "".join(f"<th>{_e(map_label(k))}</th>" for k in indexes) + "</tr>"
    rows = []
    for m in methods:
        if m not in maps:
            continue
        cells = []
        for k in indexes:
            values = maps[m].get(k)
            if values is None:
                cells.append("<td>-</td>")
                continue
            uri = data_uri(heat_map_png(values, scales.get(k)))
            cells.append(f"<td><img alt='{_e(m)}: {_e(k)} map' src='{uri}'></td>")
        rows.append(f"<tr><td>{_e(m)}</td>{''.join(cells)}</tr>")
    bar = f"<span class='bar' style='background:{_gradient(MAP_CMAP)}'></span>"
    bars = "".join(f"<td class='scale'>{_num(scales[k].low, 4)} {bar} {_num(scales[k].high, 4)}</td>" if k in scales
                   else "<td>no finite value</td>" for k in indexes)
    return (f"<h4>Quality maps</h4><table class='maps' id='maps-{_e(scene)}'><thead>{head}</thead><tbody>"
            f"{''.join(rows)}<tr><td>colour scale</td>{bars}</tr></tbody></table>"
            "<p class='note'>Each index's map as the reference code returns it (block maps: one value per 32 x 32 "
            "block; D_s_R, RQNR, HQNR and SAM: per pixel, shown downsampled to at most 256 pixels); one colour scale "
            "per index, shared by every method of this scene (its range over them); grey: no value (NaN). The "
            "GeoTIFFs are in maps/&lt;method&gt;/&lt;scene&gt;/.</p>")


def render_html(
    *,
    title: str,
    summary: Summary,
    statistics: Mapping[str, IndexStatistics],
    records: Sequence[Mapping[str, Any]],
    failures: Sequence[Mapping[str, Any]],
    scenes: Sequence[str],
    provenance: Mapping[str, Any],
    views: Mapping[str, SceneView | None],
    notes: Sequence[str] = (),
    sections: Sequence[str] = (),
    maps: Mapping[str, Mapping[str, Mapping[str, np.ndarray]]] | None = None,
) -> str:
    """Render the whole report as one HTML document (``sections``: more HTML sections, after the statistics;
    ``maps``: each scene's quality-map previews, by method)."""
    nav = "".join(f"<a href='#scene-{i}'>{_e(s)}</a>" for i, s in enumerate(scenes))
    body = [
        f"<h1>{_e(title)}</h1>",
        "".join(f"<p class='note'>{_e(n)}</p>" for n in notes),
        "<h2>Summary</h2>", _summary_table(summary, statistics),
        "<h2>Statistics across scenes</h2>", _statistics_section(statistics, len(scenes), summary),
        *sections, "<h2>Provenance</h2>", _card(provenance),
    ]
    if failures:
        items = "".join(f"<li><b>{_e(f['scene'])}</b> / <b>{_e(f['method'])}</b>: {_e(f['reason'])}</li>"
                        for f in failures)
        body += [f"<h2>Failed evaluations ({len(failures)})</h2><ul>{items}</ul>"]
    body += [f"<h2>Scenes ({len(scenes)})</h2><nav>{nav}</nav>"]
    for i, scene in enumerate(scenes):
        body.append(f"<h3 id='scene-{i}'>{_e(scene)}</h3>")
        body.append(_scene_table(scene, summary.methods, summary.metrics, records))
        view = views.get(scene)
        if view is not None:
            body.append(render_scene_grid(view))
        elif views:
            body.append("<p class='note'>No images for this scene (no method was evaluated on it, or the scene "
                        "is past the image limit of the report).</p>")
        if maps and maps.get(scene):
            body.append(render_map_grid(scene, summary.methods, maps[scene]))
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        + "\n".join(body)
        + f"<script>{_JS}</script></body></html>\n"
    )

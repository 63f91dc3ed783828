"""One paper table from several runs (``results.json``): per method the reduced-resolution columns
beside the full-resolution ones, mean ± std, best in bold, ranks.

Runs made on other machines merge like local ones: a run is its ``results.json``. Runs that differ
in anything that changes a number (protocol and its settings, sensor, ratio, bits, input scale,
band order, preset, or, between runs of one resolution, the data: scene names and SHA-256) are
refused, naming the difference. Fair comparison as in :mod:`.summary`: a method missing or failing
a scene of any run is incomplete and gets no best mark and no rank.
"""

from __future__ import annotations

import dataclasses
import html
import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..validation import InputError
from .formatting import direction_arrow, format_value
from .latex import latex_escape
from .summary import METRIC_DIRECTIONS, best_and_ranks, summarise

__all__ = ["PaperTable", "load_run", "paper_table"]

_RESOLUTIONS = ("reduced", "full")
_SHORT = {"reduced": "RR", "full": "FR"}
#: Dataset settings that change a number, compared between every pair of runs.
_SHARED = ("protocol", "sensor", "ratio", "bits", "band_names", "preset")
#: ... and between runs of one resolution.
_SAME_DATA = ("resolution", "input_scale")
#: Card entries that describe the run, not the numbers.
_VOLATILE = {"library", "version", "numpy", "python", "description", "sources", "note", "evaluation_path",
             "evaluation_path_why", "evaluation_path_detail", "in_memory_estimate_bytes", "tiling"}


def load_run(run: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """A run's ``results.json`` document (from a run folder, the file, or the document itself)."""
    if isinstance(run, Mapping):
        return dict(run)
    path = Path(run)
    path = path / "results.json" if path.is_dir() else path
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{run}: not a run of pansharp-eval evaluate (needs its results.json: {exc})") from None
    if not isinstance(doc, dict) or doc.get("tool") != "pansharp-eval" or "scenes" not in doc:
        raise InputError(f"{path}: not the results.json of a pansharp-eval evaluate run")
    doc.setdefault("source", str(path))
    return doc


@dataclasses.dataclass
class PaperTable:
    """A merged table: build it with :func:`paper_table`, write it with ``to_markdown``,
    ``to_latex``, ``to_csv`` or ``to_html``.

    Parameters
    ----------
    methods : list of str
        Row order (first appearance across the runs, reduced resolution first).
    columns : list of (str, str)
        ``(resolution, index)`` in column order.
    cells : dict
        ``cells[method][index] = {"mean", "std", "n"}`` (sample std over the method's scenes).
    counts : dict
        ``counts[method][resolution] = (scenes evaluated, compared scenes)``.
    complete : dict of str to bool
        Evaluated on every compared scene of every run.
    best : dict
        ``best[index]``: the complete methods with the best mean.
    ranks : dict
        ``ranks[index][method]``: 1 = best mean among the complete methods.
    mean_rank : dict of str to float
        Mean of each complete method's ranks over the indexes.
    settings : dict
        Protocol, preset, sensor, ratio, bits and the runs merged.
    """

    methods: list[str]
    columns: list[tuple[str, str]]
    cells: dict[str, dict[str, dict[str, float]]]
    counts: dict[str, dict[str, tuple[int, int]]]
    complete: dict[str, bool]
    best: dict[str, list[str]]
    ranks: dict[str, dict[str, int]]
    mean_rank: dict[str, float]
    settings: dict[str, Any]

    def label(self, method: str) -> str:
        """The method's name, with what it misses when incomplete.

        Parameters
        ----------
        method : str
            A method of the table.

        Returns
        -------
        str
            ``method``, or ``"method (incomplete RR k/N, ...)"``.
        """
        if self.complete[method]:
            return method
        parts = [f"{_SHORT[r]} {k}/{n}" for r, (k, n) in self.counts[method].items()]
        return f"{method} (incomplete {', '.join(parts)})"

    def caption(self) -> str:
        """One line: sensor, preset, protocol, scenes per resolution."""
        s = self.settings
        scenes = ", ".join(f"{n} {r}-resolution" for r, n in s["scenes"].items())
        preset = f"preset {s['preset']}, " if s.get("preset") else ""
        preset += "NOT the published test set, " if s.get("not_published") else ""
        return f"{s['sensor']}: {preset}protocol {s['protocol']}; mean ± std over {scenes} scenes."

    def _cell(self, method: str, index: str, pm: str) -> tuple[str, bool]:
        c = self.cells[method].get(index)
        text = format_value(c["mean"], c["std"], c["n"], pm=pm) if c else "-"
        return text, text != "-" and method in self.best.get(index, ())

    def _rank(self, method: str) -> str:
        return f"{self.mean_rank[method]:.2f}" if method in self.mean_rank else "-"

    def to_markdown(self) -> str:
        """GitHub Markdown: best mean in bold, the mean rank last."""
        head = ["Method"] + [f"{i} {direction_arrow(METRIC_DIRECTIONS.get(i), up='↑', down='↓')} ({_SHORT[r]})"
                             for r, i in self.columns] + ["Rank"]
        lines = [f"{self.caption()}", "", "| " + " | ".join(head) + " |",
                 "|" + "|".join(["---"] + [":---:"] * (len(head) - 1)) + "|"]
        for m in self.methods:
            cells = [self.label(m).replace("|", "\\|")]
            for _, index in self.columns:
                text, best = self._cell(m, index, " ± ")
                cells.append(f"**{text}**" if best else text)
            lines.append("| " + " | ".join(cells + [self._rank(m)]) + " |")
        return "\n".join(lines) + "\n"

    def to_latex(self, label: str = "tab:pansharp-eval") -> str:
        """A booktabs ``table`` (needs ``\\usepackage{booktabs}``) with a one-line caption.

        Parameters
        ----------
        label : str
            The table's ``\\label``.

        Returns
        -------
        str
            The LaTeX source.
        """
        groups = [(r, [i for rr, i in self.columns if rr == r]) for r in _RESOLUTIONS]
        groups = [(r, idx) for r, idx in groups if idx]
        top, rules, col = ["", *(f"\\multicolumn{{{len(idx)}}}{{c}}{{{r.capitalize()} resolution}}"
                                 for r, idx in groups), ""], [], 2
        for _, idx in groups:
            rules.append(f"\\cmidrule(lr){{{col}-{col + len(idx) - 1}}}")
            col += len(idx)
        head = ["Method"] + [latex_escape(i) + direction_arrow(METRIC_DIRECTIONS.get(i), up=" $\\uparrow$",
                                                               down=" $\\downarrow$") for _, i in self.columns]
        lines = ["\\begin{table}[t]", "\\centering",
                 "\\caption{" + latex_escape(self.caption()).replace("±", "$\\pm$") + "}",
                 "\\label{" + label + "}", "\\begin{tabular}{l" + "c" * len(self.columns) + "c}", "\\toprule",
                 " & ".join(top) + " \\\\", " ".join(rules), " & ".join(head + ["Rank"]) + " \\\\", "\\midrule"]
        for m in self.methods:
            cells = [latex_escape(self.label(m))]
            for _, index in self.columns:
                text, best = self._cell(m, index, " $\\pm$ ")
                cells.append("\\textbf{" + text + "}" if best else text)
            lines.append(" & ".join(cells + [self._rank(m)]) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        """One row per method: ``method``, ``complete``, ``<INDEX>``, ``<INDEX>_std`` (full
        precision; empty where undefined), ``mean_rank``."""
        import csv

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["method", "complete", *(f"{i}{s}" for _, i in self.columns for s in ("", "_std")),
                         "mean_rank"])
        for m in self.methods:
            values = []
            for _, index in self.columns:
                c = self.cells[m].get(index) or {}
                values += [_number(c.get("mean")), _number(c.get("std"))]
            writer.writerow([m, str(self.complete[m]).lower(), *values, _number(self.mean_rank.get(m))])
        return buffer.getvalue()

    def to_html(self) -> str:
        """A self-contained page holding the table (best mean in bold)."""
        e = html.escape
        groups = "".join(f"<th colspan='{sum(1 for rr, _ in self.columns if rr == r)}'>{r.capitalize()} "
                         "resolution</th>" for r in _RESOLUTIONS if any(rr == r for rr, _ in self.columns))
        head = "".join(f"<th>{e(i)}{direction_arrow(METRIC_DIRECTIONS.get(i), up=' ↑', down=' ↓')}</th>"
                       for _, i in self.columns)
        rows = []
        for m in self.methods:
            cells = [f"<td>{e(self.label(m))}</td>"]
            for _, index in self.columns:
                text, best = self._cell(m, index, " ± ")
                cells.append(f"<td><b>{e(text)}</b></td>" if best else f"<td>{e(text)}</td>")
            rows.append("<tr>" + "".join(cells) + f"<td>{self._rank(m)}</td></tr>")
        return ("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>pansharp-eval table</title><style>"
                "table{border-collapse:collapse}th,td{padding:2px 8px;border-bottom:1px solid #ccc;text-align:center}"
                "</style></head><body>"
                f"<table><caption>{e(self.caption())}</caption><thead><tr><th></th>{groups}<th></th></tr>"
                f"<tr><th>Method</th>{head}<th>Rank</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
                "</body></html>\n")


def _number(value: Any) -> str:
    return repr(float(value)) if value is not None and math.isfinite(value) else ""


def _where(doc: Mapping[str, Any]) -> str:
    return str(doc.get("source") or doc.get("dataset", {}).get("name", "a run"))


def _numbers_key(doc: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """What a run's numbers depend on, among ``keys`` (settings first, then the protocol card)."""
    dataset, card = doc.get("dataset") or {}, doc.get("protocol") or {}
    out = {k: dataset.get(k, card.get(k)) for k in keys}
    if "sensor" in out:  # the data's sensor: the card's satellite where the MTF used is another sensor's
        out["sensor"] = card.get("satellite", out["sensor"])
    preset = dataset.get("preset")
    if isinstance(preset, Mapping) and "preset" in out:
        out["preset"] = preset.get("name")
    if "band_names" in out and out["band_names"] is None:
        out.pop("band_names")
    return out


def _check_same(docs: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> None:
    """Refuse runs that differ in one of ``keys``, naming it and the two runs."""
    first = _numbers_key(docs[0], keys)
    for doc in docs[1:]:
        other = _numbers_key(doc, keys)
        for key in sorted(set(first) | set(other)):
            if first.get(key) != other.get(key):
                raise InputError(f"runs {_where(docs[0])} and {_where(doc)} differ in {key} ({first.get(key)!r} vs "
                                 f"{other.get(key)!r}): their numbers cannot share a table")


def _check_same_data(docs: Sequence[Mapping[str, Any]]) -> None:
    """Runs of one resolution: the same scenes, data (SHA-256), input scale and protocol card."""
    _check_same(docs, _SAME_DATA)
    ref = docs[0]
    for doc in docs[1:]:
        pair = f"runs {_where(ref)} and {_where(doc)}"
        if list(ref["dataset"].get("scenes", [])) != list(doc["dataset"].get("scenes", [])):
            raise InputError(f"{pair} differ in their scenes: their numbers cannot share a table")
        if sorted(ref.get("inputs_sha256", {}).values()) != sorted(doc.get("inputs_sha256", {}).values()):
            raise InputError(f"{pair} differ in the data's hash (inputs_sha256): they were not made on the same files")
        a, b = ref.get("protocol") or {}, doc.get("protocol") or {}
        for key in sorted((set(a) & set(b)) - _VOLATILE):
            if a[key] != b[key]:
                raise InputError(f"{pair} differ in the protocol's {key} ({a[key]!r} vs {b[key]!r}): their numbers "
                                 "cannot share a table")


def _records(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"scene": scene, "method": method, "status": entry.get("status"), "metrics": entry.get("metrics") or {}}
            for scene, by_method in doc["scenes"].items() for method, entry in by_method.items()]


def paper_table(runs: Sequence[str | Path | Mapping[str, Any]]) -> PaperTable:
    """Merge the ``results.json`` of several ``pansharp-eval evaluate`` runs into one paper table.

    Parameters
    ----------
    runs : sequence of path-like or mapping
        Run folders, their ``results.json`` files, or the loaded documents: typically one run at
        reduced and one at full resolution, or several runs of one resolution made on other machines
        (other methods, the same data).

    Returns
    -------
    PaperTable
        Per method, the reduced-resolution indexes beside the full-resolution ones (mean ± sample
        std over scenes); the best mean of each index among the complete methods, each complete
        method's rank per index and mean rank. A method evaluated on fewer scenes than another in
        any run is incomplete (``k/N``): shown, never marked best or ranked.

    Raises
    ------
    InputError
        A run that cannot be read, or runs whose numbers cannot share a table: another protocol,
        sensor, ratio, bits, band order or preset, or, at one resolution, other scenes, data
        (SHA-256), input scale or protocol settings; or one method with different values in two runs.

    Examples
    --------
    A run is its ``results.json``; a minimal one, by hand:

    >>> ok = lambda q: {"status": "ok", "metrics": {"Q2n": q}}
    >>> run = {"tool": "pansharp-eval", "scenes": {"a": {"GSA": ok(0.75)}, "b": {"GSA": ok(0.85)}},
    ...        "dataset": {"resolution": "reduced", "sensor": "WV3", "protocol": "toolbox2020", "scenes": ["a", "b"]}}
    >>> table = paper_table([run])
    >>> table.best, table.to_markdown().splitlines()[-1]
    ({'Q2n': ['GSA']}, '| GSA | **0.8000 ± 0.0707** | 1.00 |')

    From the folders of two ``pansharp-eval evaluate`` runs:

    >>> table = paper_table(["out_reduced", "out_full"])  # doctest: +SKIP
    >>> print(table.to_markdown())  # doctest: +SKIP
    WV3: protocol toolbox2020; mean ± std over 20 reduced-resolution, 20 full-resolution scenes.
    ...
    >>> _ = Path("table.tex").write_text(table.to_latex())  # doctest: +SKIP
    """
    docs = [load_run(r) for r in runs]
    if not docs:
        raise InputError("no run to merge: pass one or more folders written by pansharp-eval evaluate")
    _check_same(docs, _SHARED)
    by_resolution: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        by_resolution.setdefault(str((doc.get("dataset") or {}).get("resolution")), []).append(doc)
    methods: list[str] = []
    columns: list[tuple[str, str]] = []
    cells: dict[str, dict[str, dict[str, float]]] = {}
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    scenes: dict[str, int] = {}
    for resolution in sorted(by_resolution, key=lambda r: _RESOLUTIONS.index(r) if r in _RESOLUTIONS else 2):
        group = by_resolution[resolution]
        _check_same_data(group)
        records = _merge_methods(group)
        names = list(dict.fromkeys(r["method"] for r in records))
        summary = summarise(records, names)
        columns += [(resolution, i) for i in summary.metrics if (resolution, i) not in columns]
        scenes[resolution] = summary.n_scenes
        for m in names:
            cells.setdefault(m, {}).update(summary.stats[m])
            counts.setdefault(m, {})[resolution] = (summary.counts[m]["ok"], summary.n_scenes)
        methods += [m for m in names if m not in methods]
    for m in methods:
        cells.setdefault(m, {})
        counts[m] = {r: counts[m].get(r, (0, n)) for r, n in scenes.items()}
    complete = {m: all(k == n for k, n in counts[m].values()) for m in methods}
    best, ranks = {}, {}
    for _, index in columns:
        best[index], ranks[index] = best_and_ranks(
            {m: cells[m][index]["mean"] for m in methods if complete[m] and index in cells[m]}, index)
    mean_rank = {}
    for m in methods:
        mine = [r[m] for r in ranks.values() if m in r]
        if complete[m] and mine:
            mean_rank[m] = sum(mine) / len(mine)
    first = docs[0].get("dataset") or {}
    preset = _numbers_key(docs[0], ("preset", "sensor"))
    cards = [(d.get("dataset") or {}).get("preset") for d in docs]
    published = [c.get("published_test_set") for c in cards if isinstance(c, Mapping)]
    settings = {"protocol": first.get("protocol"), "preset": preset["preset"], "sensor": preset["sensor"],
                "not_published": preset["preset"] is not None and False in published,
                "ratio": first.get("ratio"), "bits": first.get("bits"), "scenes": scenes,
                "runs": [_where(d) for d in docs]}
    return PaperTable(methods, columns, cells, counts, complete, best, ranks, mean_rank, settings)


def _merge_methods(group: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The records of every method in runs of one resolution; a method in two runs must have the same values there."""
    seen: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    records: list[dict[str, Any]] = []
    for doc in group:
        mine: dict[str, list[dict[str, Any]]] = {}
        for rec in _records(doc):
            mine.setdefault(rec["method"], []).append(rec)
        for method, recs in mine.items():
            if method in seen:
                if _values(seen[method][1]) != _values(recs):
                    raise InputError(f"method {method!r} is in runs {seen[method][0]} and {_where(doc)} with different "
                                     "values: rename one of them (method names come from folder names)")
                continue
            seen[method] = (_where(doc), recs)
            records += recs
    return records


def _values(recs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    return sorted((r["scene"], str(r["status"]), json.dumps(r["metrics"], sort_keys=True)) for r in recs)

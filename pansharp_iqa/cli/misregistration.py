"""``pansharp-eval evaluate --misregistration``: after the evaluation, each scene's full-resolution indexes again
with the MS shifted by +-1/2 and +-1 PAN pixel along the rows and the columns
(:func:`pansharp_iqa.misregistration.misregistration_sensitivity`), for every method evaluated on it, and how far
each index and each ranking of the methods moves: ``results.json`` ``"misregistration"``, a section of
``results.md`` and ``report.html``.

It runs in this process, scene by scene, in memory (scenes the evaluation read tile by tile get a reason instead),
with each method's own settings (its declared scale, the scene's band names) as the evaluation had them; the work
is 1 + 8 evaluations per (scene, method) pair.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.validation import InputError

from .errors import UsageError

__all__ = ["check_request", "html_section", "markdown_section", "scene_sensitivities"]

_SHIFTS = (-1.0, -0.5, 0.5, 1.0)
_DIRECTIONS = ("rows", "cols")


def check_request(ns: Any, settings: DatasetSettings) -> None:
    """``--misregistration`` where it cannot apply is a usage error (one line)."""
    if not getattr(ns, "misregistration", False):
        return
    if settings.resolution != "full":
        raise UsageError("--misregistration re-evaluates the full-resolution indexes with the MS shifted: it needs "
                         "--resolution full (at reduced resolution there is no MS-PAN registration to vary)")
    if "ms_exp" in settings.settings.roles:
        raise UsageError("--misregistration: these settings take the upsampled MS from the files (lms), which would "
                         "not move with the shifted MS")
    if getattr(ns, "tiled", "auto") == "always":
        raise UsageError("--misregistration evaluates each scene in memory (the MS shifted in memory), which "
                         "--tiled always forbids: use --tiled auto (scenes too large for memory get a reason)")


class _Results(Mapping[str, np.ndarray]):
    """Each method's fused image of one scene, read from its file when asked for (one in memory at a time)."""

    def __init__(self, pairs: dict[str, tuple[str, int | None]], expected: tuple[int, ...], like: str | None,
                 names: tuple[str | None, ...]) -> None:
        self._pairs, self._expected, self._like, self._names = pairs, expected, like, names

    def __getitem__(self, method: str) -> np.ndarray:
        from pansharp_iqa.io.results import load_result

        path, index = self._pairs[method]
        return load_result(path, self._expected, index, like=self._like, names=self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._pairs)

    def __len__(self) -> int:
        return len(self._pairs)


def _one_scene(scene: Any, pairs: dict[str, tuple[str, int | None]], settings: dict[str, DatasetSettings]) -> dict:
    """The sensitivity of one scene's methods (JSON-ready), each method with its own settings value."""
    from pansharp_iqa.io.declared import scene_names
    from pansharp_iqa.io.results import result_record
    from pansharp_iqa.io.scenes import load_scene, scene_records
    from pansharp_iqa.misregistration import misregistration_sensitivity, sensitivity_to_json
    from pansharp_iqa.sensors import get_sensor

    from .scene_eval import pair_settings

    first = settings[next(iter(pairs))]
    inputs = load_scene(scene, first, ("ms", "pan"))
    records = scene_records(scene, ("ms", "pan"))
    names = scene_names(records["ms"], n_bands=inputs["ms"].shape[2], band_names=first.band_names,
                        sensor=get_sensor(first.sensor))[0] if "ms" in records else ()
    cores = {m: pair_settings(settings[m], scene, {**records, "fused": result_record(path)}, names, path)
             for m, (path, _) in pairs.items()}
    fused = _Results(pairs, (*inputs["pan"].shape[:2], inputs["ms"].shape[2]), scene.file_for("ms"), names)
    result = misregistration_sensitivity(fused, inputs["ms"], inputs["pan"], settings=cores, shifts=_SHIFTS,
                                         directions=_DIRECTIONS, tiled="never")
    result["protocol"] = result["protocol"]["misregistration"]  # the pairs' own cards are in "scenes"
    return sensitivity_to_json(result)


def scene_sensitivities(plan: Any, outcomes: Mapping[tuple[str, str], Any]) -> dict[str, dict[str, Any]]:
    """Each scene's sensitivity over the methods evaluated on it, or ``{"reason": ...}``."""
    out: dict[str, dict[str, Any]] = {}
    for scene in plan.scenes:
        pairs = {m: (str(path), index) for _, s, m, (path, index) in plan.found
                 if s.name == scene.name and outcomes[(s.name, m)].status == "ok"}
        paths = {(outcomes[(scene.name, m)].protocol or {}).get("evaluation_path") for m in pairs}
        if not pairs:
            out[scene.name] = {"reason": "no method was evaluated on this scene"}
        elif "tile-wise" in paths:
            out[scene.name] = {"reason": "the scene was evaluated tile by tile (larger than the memory an evaluation "
                                         "may use): --misregistration evaluates in memory"}
        else:
            try:
                out[scene.name] = _one_scene(scene, pairs, plan.method_settings)
            except InputError as exc:
                out[scene.name] = {"reason": str(exc)}
            except Exception as exc:  # noqa: BLE001 - one scene's failure is its reason, as in the evaluation
                out[scene.name] = {"reason": f"{type(exc).__name__}: {exc}"}
    return out


_INTRO = ("The full-resolution indexes evaluated again with the MS shifted against the PAN by -1, -1/2, +1/2 and "
          "+1 PAN pixel along the rows and along the columns (the MS interpolated by the EXP and its 23-tap "
          "half-band step; the fused images and the PAN unchanged; results.json \"misregistration\" has every "
          "value). Per index: the largest |change| of each method over the 8 shifts (relative to the unshifted "
          "value in parentheses), and whether the ranking of the methods changes under some shift.")


def _rows(entry: Mapping[str, Any]) -> list[tuple[str, list[str], str]]:
    """(index, per-method cells, ranking cell) of one scene."""
    rows = []
    n_shifts = len(entry["labels"]) - 1
    for name in entry["indexes"]:
        cells = []
        for a, r in zip(entry["max_abs_change"][name], entry["max_rel_change"][name], strict=True):
            cells.append("n/a" if a is None else f"{a:.4f}" + ("" if r is None else f" ({100 * r:.1f}%)"))
        swaps = entry["swaps"][name]
        if len(entry["methods"]) < 2:
            ranking = "one method"
        elif not entry["ranking_changed"][name]:
            ranking = "unchanged"
        else:
            pairs = sorted({f"{a} <-> {b}" for shift in swaps for a, b in shift})
            taus = [t for t in entry["kendall_tau"][name] if t is not None]
            ranking = (f"changes at {sum(1 for s in swaps if s)} of {n_shifts} shifts (Kendall's tau down to "
                       f"{min(taus):.2f}): {', '.join(pairs)}")
        rows.append((name, cells, ranking))
    return rows


def markdown_section(results: Mapping[str, Mapping[str, Any]]) -> str:
    """The ``results.md`` section."""
    lines = ["", "## Misregistration sensitivity", "", _INTRO]
    for scene, entry in results.items():
        lines += ["", f"### {scene}", ""]
        if "reason" in entry:
            lines.append(f"Not computed: {entry['reason']}")
            continue
        lines.append("| index | " + " | ".join(entry["methods"]) + " | ranking |")
        lines.append("|---" * (len(entry["methods"]) + 2) + "|")
        lines += [f"| {name} | " + " | ".join(cells) + f" | {ranking} |" for name, cells, ranking in _rows(entry)]
    return "\n".join(lines) + "\n"


def html_section(results: Mapping[str, Mapping[str, Any]]) -> str:
    """The ``report.html`` section."""
    e = html.escape
    parts = ["<h2>Misregistration sensitivity</h2>", f"<p class='note'>{e(_INTRO)}</p>"]
    for scene, entry in results.items():
        parts.append(f"<h3>{e(scene)}</h3>")
        if "reason" in entry:
            parts.append(f"<p class='note'>Not computed: {e(entry['reason'])}</p>")
            continue
        head = "".join(f"<th>{e(m)}</th>" for m in ["index", *entry["methods"], "ranking"])
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in [name, *cells, ranking]) + "</tr>"
                       for name, cells, ranking in _rows(entry))
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)

"""Misregistration sensitivity: how far the full-resolution indexes, and the rankings of methods, move when
the MS is shifted against the PAN by a fraction of a PAN pixel.

Real MS and PAN are never perfectly co-registered (the instruments look from different positions along the
orbit; heights, resampling). A full-resolution index that moves a lot under a sub-pixel shift can rank methods
by their response to the misregistration rather than by their quality (Baronti et al. 2011: component
substitution tolerates shifts, multiresolution analysis does not; Alparone, Garzelli & Lolli: full-scale
rankings contradict reduced-scale ones for that reason). :func:`misregistration_sensitivity` re-evaluates
the indexes with the MS shifted by :func:`shift_ms` and reports how far each index and each ranking moves.

The shift is band-limited and exact for whole MS pixels: the MS, mirror-extended at its edges, is upsampled
with the library's EXP (:func:`pansharp_iqa.interp23tap`, MS pixel ``i`` at PAN pixel ``ratio*i + ratio/2``),
once more by 2 with the same 23-tap half-band step (``interp23tap(., 2)``: the half-PAN-pixel positions), and
sampled back at the MS grid moved by the shift (see :func:`shift_ms`).

References
----------
Baronti, Aiazzi, Selva, Garzelli, Alparone, "A theoretical analysis of the effects of aliasing and
misregistration on pansharpened imagery", IEEE J. Sel. Topics Signal Process. 5(3), 446-453, 2011,
doi:10.1109/JSTSP.2011.2104938.
Alparone, Garzelli, Lolli, "Full-scale assessment of pansharpening: why literature indexes may give
contradictory results and how to avoid such an inconvenience" (University of Florence repository FLORE,
hdl:2158/1358380).
Aiazzi, Alparone, Baronti, Garzelli, IEEE TGRS 40(10), 2002 (the 23-tap interpolator).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .evaluation import evaluate
from .indexes.catalog import direction
from .io.windows import is_lazy_input
from .resample import interp23tap
from .settings import FullSettings, Settings, full_settings
from .validation import SettingError, check_ratio, image_array

__all__ = ["DIRECTIONS", "DEFAULT_SHIFTS", "shift_ms", "misregistration_sensitivity", "sensitivity_to_json"]

#: ``directions=`` choices: a shift ``s`` moves the MS by ``(s, 0)``, ``(0, s)`` or ``(s, s)`` PAN pixels.
DIRECTIONS = {"rows": (1, 0), "cols": (0, 1), "diagonal": (1, 1)}
#: Default shifts, in PAN pixels (both signs, half and whole PAN pixels).
DEFAULT_SHIFTS = (-1.0, -0.5, 0.5, 1.0)
#: MS samples of mirror extension per side: more than the EXP reads (powers of two: fewer than 12 samples, the
#: 23-tap cascade; ratio 6: 31, the x3 sinc) plus the half-band step (6 EXP samples) and the largest shift (one MS
#: pixel), so that no sample of the shifted MS depends on a circular wrap of the filters.
_PAD = {6: 36}
_PAD_POW2 = 17
#: Bytes of the doubled EXP of one strip of MS rows (the shift runs strip by strip, band by band).
_STRIP_BYTES = 128 * 2**20

_SHIFT_CARD = (
    "the MS mirror-extended (numpy 'symmetric') by {pad} samples, upsampled with interp23tap(ms, {ratio}) (MS pixel "
    "i at PAN pixel {ratio}*i + {half}) and once more with interp23tap(., 2) (the 23-tap half-band step: sample "
    "2p + 1 is the EXP's p, sample 2p its value at p - 1/2), then sampled at rows {r2}*i + {ratio} + 1 - 2*s_r and "
    "columns {r2}*j + {ratio} + 1 - 2*s_c: the MS content moved by (s_r, s_c) PAN pixels (down, right); a shift of "
    "{ratio} PAN pixels is the MS moved by one pixel exactly"
)


def _pad(ratio: int) -> int:
    """MS samples of mirror extension for ``ratio``."""
    return _PAD.get(ratio, _PAD_POW2)


def _shift_pairs(shifts: Sequence[Sequence[float]], ratio: int) -> list[tuple[float, float]]:
    """The (rows, cols) shifts as floats, refused unless multiples of 1/2 PAN pixel within one MS pixel."""
    pairs = []
    for item in shifts:
        pair = tuple(float(v) for v in item)
        if len(pair) != 2:
            raise SettingError(f"shifts: each shift is a (rows, cols) pair in PAN pixels, got {item!r}")
        for v in pair:
            if not np.isfinite(v) or 2 * v != round(2 * v) or abs(v) > ratio:
                raise SettingError(f"shifts: {v!r} PAN pixels is not a multiple of 1/2 within one MS pixel "
                                   f"(|shift| <= ratio = {ratio})")
        pairs.append((pair[0], pair[1]))
    return pairs


def shift_ms(ms: np.ndarray, shifts: Sequence[Sequence[float]], *, ratio: int) -> np.ndarray:
    """The MS shifted against the PAN grid by multiples of half a PAN pixel (band-limited interpolation).

    ``out[k][i, j] = V(ratio*i + ratio/2 - s_r, ratio*j + ratio/2 - s_c)`` for the k-th shift ``(s_r, s_c)``,
    where ``V`` is the MS interpolated at PAN scale by the library's EXP (:func:`~pansharp_iqa.interp23tap`,
    which puts MS pixel ``i`` at PAN pixel ``ratio*i + ratio/2`` and keeps its value there exactly) and at the
    half-PAN-pixel positions by one more 23-tap x2 step (``interp23tap(EXP, 2)``: the same half-band filter; in
    the interior equal to :func:`~pansharp_iqa.resample.fineshift`'s half-pixel shift of the EXP). Positive
    shifts move the MS content down / right, as :func:`~pansharp_iqa.resample.fineshift` does. The MS is
    mirror-extended at its edges first (numpy ``"symmetric"``, edge sample repeated: a shifted edge row takes
    its own values, not the opposite edge's as the EXP's circular filters would), by more samples than the
    filters read, so no value depends on a wrap-around. Hence: shift ``(0, 0)`` returns the MS bit for bit; a
    shift of ``ratio`` PAN pixels (one MS pixel) moves it by one row / column exactly (the first row repeated);
    on a band-limited scene the result is the analytically shifted scene to the 23-tap filter's passband
    accuracy. Computed band by band in strips of MS rows (bounded memory: about 128 MiB at a time).

    Parameters
    ----------
    ms : ndarray, shape (h, w, B) or (h, w)
        The MS (any real dtype; computed in float64).
    shifts : sequence of (float, float)
        ``(rows, cols)`` shifts in PAN pixels: multiples of 1/2 with ``|shift| <= ratio``.
    ratio : int
        PAN/MS resolution ratio (a power of two or 6, as for the EXP).

    Returns
    -------
    ndarray, shape (len(shifts), h, w, B) (or (len(shifts), h, w)), float64

    Raises
    ------
    SettingError
        A shift that is not a multiple of 1/2 PAN pixel within one MS pixel; a ratio the EXP does not take.

    References
    ----------
    Aiazzi et al., IEEE TGRS 40(10), 2002 (23-tap filter); Vivone et al., IEEE GRSM 2021,
    doi:10.1109/MGRS.2020.3019315 (``interp23tap``).

    Examples
    --------
    >>> ms = np.random.default_rng(0).random((40, 40, 2))
    >>> out = shift_ms(ms, [(0, 0), (4, 0), (0.5, -1)], ratio=4)
    >>> out.shape, bool(np.array_equal(out[0], ms)), bool(np.array_equal(out[1][1:], ms[:-1]))
    ((3, 40, 40, 2), True, True)
    """
    arr = np.asarray(ms)
    planes = image_array("ms", arr if arr.ndim == 3 else arr[..., None])
    ratio = check_ratio(ratio, exp=True)
    pairs = _shift_pairs(shifts, ratio)
    h, w, nb = planes.shape
    pad, step = _pad(ratio), 2 * ratio
    out = np.empty((len(pairs), h, w, nb))
    strip = max(1, _STRIP_BYTES // (8 * step * step * (w + 2 * pad)) - 2 * pad)
    # column j of the doubled EXP of the padded MS: 2*ratio*(j + pad) + ratio + 1 - 2*s_c (no wrap: see _PAD)
    cols = [step * (np.arange(w) + pad) + ratio + 1 - round(2 * sc) for _, sc in pairs]
    for b in range(nb):
        ext = np.pad(np.asarray(planes[:, :, b], dtype=np.float64), pad, mode="symmetric")
        for r0 in range(0, h, strip):
            r1 = min(h, r0 + strip)
            doubled = interp23tap(interp23tap(ext[r0 : r1 + 2 * pad], ratio), 2)  # MS rows r0 - pad .. r1 + pad
            for k, (sr, _) in enumerate(pairs):
                rows = step * (np.arange(r1 - r0) + pad) + ratio + 1 - round(2 * sr)
                out[k, r0:r1, :, b] = doubled[np.ix_(rows, cols[k])]
    return out if arr.ndim == 3 else out[..., 0]


def _shift_list(shifts: Sequence[float], directions: Sequence[str]) -> tuple[list[tuple[float, float]], list[str]]:
    """The (rows, cols) shifts of every direction and shift, and their labels (``"rows +0.5"``)."""
    if isinstance(directions, str):
        directions = (directions,)
    if not directions or len(set(directions)) < len(directions):
        raise SettingError(f"directions: give one or more of {', '.join(DIRECTIONS)}, each once; got {directions!r}")
    values = [float(s) for s in shifts]
    if not values or 0.0 in values or len(set(values)) < len(values):
        raise SettingError(f"shifts: give distinct non-zero shifts in PAN pixels (the unshifted baseline is always "
                           f"evaluated); got {tuple(shifts)!r}")
    pairs, labels = [], []
    for d in directions:
        if d not in DIRECTIONS:
            raise SettingError(f"directions: {d!r} is not one of {', '.join(DIRECTIONS)}")
        dr, dc = DIRECTIONS[d]
        for s in values:
            pairs.append((s * dr + 0.0, s * dc + 0.0))  # + 0.0: no -0.0 in the results
            labels.append(f"{d} {s:+g}")
    return pairs, labels


def _settings_by_method(settings: object, methods: list[str], keywords: dict[str, Any]) -> dict[str, FullSettings]:
    """One full-resolution settings value per method (built from the keywords when none is given)."""
    if settings is None:
        settings = full_settings(**keywords)
    elif keywords:
        raise SettingError(f"give either settings= or the keywords of full_settings ({', '.join(sorted(keywords))}), "
                           "not both")
    given = settings if isinstance(settings, Mapping) else dict.fromkeys(methods, settings)
    if set(given) != set(methods):
        raise SettingError(f"settings: one per method of fused ({', '.join(methods)}); got "
                           f"{', '.join(map(str, given))}")
    out: dict[str, FullSettings] = {}
    for m in methods:
        s = given[m]
        if not isinstance(s, FullSettings):
            raise SettingError(f"settings ({m}): misregistration sensitivity is a full-resolution analysis: build "
                               f"the settings with full_settings(...), got {type(s).__name__}")
        if s.upsampled == "given":
            raise SettingError("settings: upsampled='given' is refused: the given EXP would not move with the MS "
                               "(the analysis upsamples each shifted MS itself)")
        out[m] = s
    first = out[methods[0]]
    if any(s.ratio != first.ratio or s.indexes != first.indexes for s in out.values()):
        raise SettingError("settings: every method's settings must have the same ratio and indexes")
    return out


def _summary(values: dict[str, np.ndarray], methods: list[str]) -> dict[str, Any]:
    """Largest changes per index and method; ranks, Kendall's tau and swapped pairs per index and shift."""
    from scipy.stats import kendalltau, rankdata

    out: dict[str, Any] = {k: {} for k in ("max_abs_change", "max_rel_change", "ranks", "kendall_tau", "swaps",
                                           "ranking_changed")}
    for name, v in values.items():
        change = np.abs(v[1:] - v[0])
        out["max_abs_change"][name] = change.max(axis=0)
        base = np.abs(v[0])
        out["max_rel_change"][name] = np.divide(out["max_abs_change"][name], base, out=np.full(base.shape, np.nan),
                                                where=base > 0)
        sign = direction(name) or 1
        out["ranks"][name] = np.array([rankdata(-sign * row, method="min") for row in v])
        if len(methods) < 2:
            out["kendall_tau"][name] = np.full(v.shape[0], np.nan)
            out["swaps"][name] = [[] for _ in range(v.shape[0])]
        else:
            out["kendall_tau"][name] = np.array([kendalltau(v[0], row)[0] for row in v])
            above = sign * (v[0][:, None] - v[0][None, :]) > 0  # [a, b]: a ranks above b at the baseline
            out["swaps"][name] = [[(methods[a], methods[b]) for a, b in np.argwhere(above & (sign * (
                row[:, None] - row[None, :]) < 0))] for row in v]
        out["ranking_changed"][name] = any(out["swaps"][name])
    return out


def misregistration_sensitivity(
    fused: object,
    ms: np.ndarray,
    pan: object,
    *,
    settings: Settings | Mapping[str, Settings] | None = None,
    shifts: Sequence[float] = DEFAULT_SHIFTS,
    directions: Sequence[str] = ("rows", "cols"),
    tiled: str = "auto",
    **keywords: Any,
) -> dict[str, Any]:
    """Full-resolution indexes of one or several fused images with the MS shifted against the PAN, and how far
    each index and each ranking of the methods moves.

    Every shift ``s`` of ``shifts`` is applied in every direction of ``directions`` (``"rows"``: the MS moves
    down by ``s`` PAN pixels, ``"cols"``: right, ``"diagonal"``: both) by :func:`shift_ms`, and each method is
    evaluated by the one evaluation path :func:`pansharp_iqa.evaluate` with the shifted MS (and the same fused
    image and PAN), after its evaluation with the MS as given (the baseline: the numbers of
    :func:`~pansharp_iqa.evaluate_full`). The work is ``1 + len(shifts) * len(directions)`` evaluations per
    method. The fused images and the PAN may be anything :func:`pansharp_iqa.evaluate` takes (``tiled=`` is
    passed on: big or lazy scenes are evaluated tile by tile); the MS is shifted in memory (an array: it is
    ``ratio**2`` times smaller than the PAN; the shifted copies are held as float64, together
    ``len(shifts) * len(directions)`` times the MS).

    Parameters
    ----------
    fused : image or mapping of str to image
        One fused image (reported as method ``"fused"``) or ``{method: image}``; each image is read from the
        mapping once, when its method is evaluated (a lazy mapping keeps one in memory at a time).
    ms : ndarray, shape (h, w, B)
        The MS, as for :func:`~pansharp_iqa.evaluate_full`.
    pan : image, shape (ratio*h, ratio*w)
        The PAN.
    settings : FullSettings or mapping of str to FullSettings, optional
        Built with :func:`~pansharp_iqa.full_settings` (one for every method, or one per method, e.g. with
        each method's declared scale); with the same ratio and indexes. Omitted: built from ``keywords``.
        ``upsampled="given"`` is refused (a given EXP would not move with the MS).
    shifts : sequence of float, default (-1, -0.5, 0.5, 1)
        Shifts in PAN pixels: distinct, non-zero multiples of 1/2 with ``|shift| <= ratio``.
    directions : sequence of {"rows", "cols", "diagonal"}, default ("rows", "cols")
        The directions each shift is applied in.
    tiled : {"auto", "always", "never"}
        Passed to :func:`pansharp_iqa.evaluate` for every evaluation.
    **keywords
        The keywords of :func:`~pansharp_iqa.full_settings` (``sensor=`` is required), when ``settings`` is
        not given.

    Returns
    -------
    dict
        ``methods`` (list of str), ``indexes`` (list of str), ``shifts`` ((S + 1, 2) float64: the (rows, cols)
        shift in PAN pixels, row 0 the baseline ``(0, 0)``), ``labels`` (``"none"``, ``"rows +0.5"``, ...),
        ``values`` ({index: (S + 1, M) float64}: row k, column m is method m at shift k), and per index:
        ``max_abs_change`` ((M,): the largest ``|value - baseline|`` over the shifts), ``max_rel_change``
        ((M,): that over ``|baseline|``, NaN where the baseline is 0), ``ranks`` ((S + 1, M): 1 is the best,
        ties share the lower rank), ``kendall_tau`` ((S + 1,): Kendall's tau-b between the baseline values and
        each shift's, ``scipy.stats.kendalltau``; NaN for one method), ``swaps`` (per shift, the pairs
        ``(a, b)`` with ``a`` ranked above ``b`` at the baseline and below it after the shift) and
        ``ranking_changed`` (bool: any swap); ``protocol``: the baseline card of the first method with
        ``"misregistration"``, how the shifts were made (JSON-serialisable).
        :func:`~pansharp_iqa.misregistration.sensitivity_to_json` makes the whole result JSON-serialisable.

    Raises
    ------
    InputError
        The rules of :func:`pansharp_iqa.evaluate`; shifts or directions that are not as above; reduced-resolution
        or ``upsampled="given"`` settings; a lazy MS.

    References
    ----------
    Baronti et al., IEEE J. Sel. Topics Signal Process. 5(3), 2011, doi:10.1109/JSTSP.2011.2104938; Alparone,
    Garzelli, Lolli, "Full-scale assessment of pansharpening: why literature indexes may give contradictory
    results and how to avoid such an inconvenience" (hdl:2158/1358380).

    Examples
    --------
    >>> from pansharp_iqa.baselines import exp, gsa
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> ms, pan = ms[:32, :32], pan[:128, :128]
    >>> fused = {m: f(ms, pan, sensor="none", ratio=4) for m, f in (("GSA", gsa), ("EXP", exp))}
    >>> out = misregistration_sensitivity(fused, ms, pan, sensor="none", ratio=4, shifts=(1,), directions="rows")
    >>> out["labels"], out["values"]["D_s"].round(4).tolist()  # rows: shifts, columns: methods
    (['none', 'rows +1'], [[0.0794, 0.1291], [0.1247, 0.0838]])
    >>> out["ranks"]["D_s"].tolist(), out["swaps"]["D_s"][1], out["ranking_changed"]["HQNR"]
    ([[1, 2], [2, 1]], [('GSA', 'EXP')], False)
    """
    if is_lazy_input(ms):
        raise SettingError("ms: misregistration_sensitivity shifts the MS in memory: give it as a numpy array (it "
                           "is ratio**2 times smaller than the PAN; the fused images and PAN may be lazy)")
    images = fused if isinstance(fused, Mapping) else {"fused": fused}
    methods = [str(m) for m in images]
    if not methods:
        raise SettingError("fused: give at least one fused image")
    by_method = _settings_by_method(settings, methods, keywords)
    first = by_method[methods[0]]
    pairs, labels = _shift_list(shifts, directions)
    shifted = shift_ms(image_array("ms", ms), pairs, ratio=first.ratio)
    names = list(first.indexes)
    values = {n: np.empty((len(pairs) + 1, len(methods))) for n in names}
    card: dict[str, Any] = {}
    for j, m in enumerate(methods):
        image = images[m]
        # the MS as given is checked by the rules; its shifted copies are the library's resampling of it
        moved = dataclasses.replace(by_method[m], declared=by_method[m].declared.with_value(
            "ms", "resampled", "shift_ms", "misregistration_sensitivity (the MS as given, shifted)"))
        for k, ms_k in enumerate([ms, *shifted]):
            result = evaluate({"fused": image, "ms": ms_k, "pan": pan}, moved if k else by_method[m], tiled=tiled)
            for n in names:
                values[n][k, j] = result[n]
            if k == 0 and j == 0:
                card = dict(result["protocol"])
    ratio = first.ratio
    card["misregistration"] = {
        "shifts_pan_pixels": [[0.0, 0.0], *[list(p) for p in pairs]], "labels": ["none", *labels],
        "directions": list((directions,) if isinstance(directions, str) else directions),
        "baseline": "the MS as given", "evaluations_per_method": len(pairs) + 1,
        "shift": _SHIFT_CARD.format(pad=_pad(ratio), ratio=ratio, half=ratio // 2, r2=2 * ratio),
        "rankings": "rank 1 = best by the index's direction; Kendall's tau-b (scipy.stats.kendalltau) against the "
                    "baseline; a swap: a pair ranked in the opposite order",
    }
    return {"methods": methods, "indexes": names, "shifts": np.array([[0.0, 0.0], *pairs]), "labels": ["none", *labels],
            "values": values, **_summary(values, methods), "protocol": card}


def _jsonable(x: Any) -> Any:
    """Arrays as lists and non-finite floats as None, recursively."""
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def sensitivity_to_json(result: Mapping[str, Any]) -> dict[str, Any]:
    """A :func:`misregistration_sensitivity` result with plain lists and numbers (NaN as None), for ``json.dump``.

    Parameters
    ----------
    result : dict
        As returned by :func:`misregistration_sensitivity`.

    Returns
    -------
    dict

    Examples
    --------
    >>> sensitivity_to_json({"values": {"QNR": np.array([[0.9, np.nan]])}, "ranking_changed": {"QNR": np.bool_(0)}})
    {'values': {'QNR': [[0.9, None]]}, 'ranking_changed': {'QNR': False}}
    """
    return _jsonable(dict(result))

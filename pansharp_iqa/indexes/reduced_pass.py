"""One pass over row strips that computes the sums behind every reduced-resolution index.

Each task takes a strip of rows of the reference and fused images (plus the halo its indexes
need), converts it to float64 band planes once (scale and threshold applied there, so whole-image
float64 copies are never made) and hands it to each index's chunk function while the strip is in
cache: :func:`~.q2n.q2n_strip`, :func:`~.uiqi.q_window_sums`, :func:`~.sam.sam_sums`,
:func:`~.ergas.ergas_sums`, :func:`~.scc.scc_sums`. The partial sums are combined in strip order
(:class:`ReducedSums`, results independent of the thread count) and turned into the index values
by each index's finalize function (:func:`reduced_values`). The tile engine
(:mod:`pansharp_iqa.tiled.reduced`) feeds the same chunk and finalize functions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from .ergas import ergas_from_sums, ergas_sums
from .q2n import q2n_strip
from .sam import sam_from_sums, sam_sums
from .scc import scc_from_sums, scc_strip_planes, scc_sums
from .strips import STRIP_ROWS, StripImage, map_strips
from .uiqi import q_from_sums, q_window_sums

__all__ = ["ReducedSums", "reduced_sums", "reduced_values", "INDEX_NAMES"]

#: The reduced-resolution indexes, in report order.
INDEX_NAMES = ("Q2n", "Q", "SAM", "ERGAS", "SCC")


@dataclass
class ReducedSums:
    """Combined partial sums of the reduced-resolution indexes (absent indexes keep their defaults).

    The in-memory pass (:func:`reduced_sums`) and the tile engine fill the same fields.
    """

    q2n_sum: float = 0.0  # sum of Q2n block values
    q2n_count: int = 0
    q_sums: np.ndarray | None = None  # (B,) sums of each band's UIQI map
    q_count: int = 0  # windows per band
    sam_sum: float = 0.0  # sum of angles (radians) over pixels with non-zero norms
    sam_valid: int = 0
    sam_pixels: int = 0
    ergas_sse: np.ndarray | None = None  # (B,) sums of squared errors
    ergas_ref: np.ndarray | None = None  # (B,) sums of the reference
    ergas_n: int = 0
    scc: np.ndarray = field(default_factory=lambda: np.zeros(3))  # [sum Gf Gr, sum Gf^2, sum Gr^2]


def reduced_values(sums: ReducedSums, indexes: Collection[str], *, ratio: float) -> dict[str, float]:
    """The requested indexes from combined sums, each through its own finalize function.

    Parameters
    ----------
    sums : ReducedSums
    indexes : collection of {"Q2n", "Q", "SAM", "ERGAS", "SCC"}
    ratio : float
        PAN/MS ratio (ERGAS).

    Returns
    -------
    dict of str to float
        In :data:`INDEX_NAMES` order; SAM in degrees.

    Raises
    ------
    InputError
        Zero-mean reference band (ERGAS), flat images (SCC).
    """
    finalize = {
        "Q2n": lambda: float(sums.q2n_sum / sums.q2n_count),
        "Q": lambda: q_from_sums(sums.q_sums, sums.q_count),
        "SAM": lambda: sam_from_sums(sums.sam_sum, sums.sam_valid, sums.sam_pixels),
        "ERGAS": lambda: ergas_from_sums(sums.ergas_sse, sums.ergas_ref, sums.ergas_n, ratio),
        "SCC": lambda: scc_from_sums(sums.scc),
    }
    return {k: finalize[k]() for k in INDEX_NAMES if k in set(indexes)}


def reduced_sums(
    reference: StripImage,
    fused: StripImage,
    *,
    indexes: Collection[str],
    block_size: int = 32,
    scc_gradient: str = "magnitude",
    strip_rows: int = STRIP_ROWS,
) -> ReducedSums:
    """Sums behind the requested reduced-resolution indexes, in one pass over row strips.

    Parameters
    ----------
    reference, fused : StripImage
        Same (H, W, B) shape; H, W at least ``block_size`` when Q2n or Q is requested.
    indexes : collection of {"Q2n", "Q", "SAM", "ERGAS", "SCC"}
    block_size : int
        Q2n block and Q window side (non-overlapping Q2n blocks; the image is mirror-extended at
        the bottom/right to whole blocks as the toolbox does).
    scc_gradient : {"magnitude", "vertical"}
        See :func:`~.scc.scc`.
    strip_rows : int
        Rows per task (rounded up to a multiple of ``block_size``).

    Returns
    -------
    ReducedSums
    """
    want = set(indexes)
    h, w, _ = reference.shape
    bs = int(block_size)
    q_h, q_w = h - bs + 1, w - bs + 1
    planes_needed = bool(want & {"Q", "SAM", "ERGAS", "SCC"})

    def task(r0: int, r1: int) -> dict[str, object]:
        lo, hi = max(r0 - 1, 0), min(h, r1 + bs - 1)  # halos: SCC one row, Q bs - 1 rows
        if planes_needed:
            ref, fus = reference.planes(lo, hi), fused.planes(lo, hi)
        out: dict[str, object] = {}
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if "Q2n" in want:
                out["q2n"] = q2n_strip(reference, fused, r0, r1, bs)
            if "Q" in want and r0 < q_h:
                q1 = min(r1, q_h)
                rows = slice(r0 - lo, q1 + bs - 1 - lo)
                out["q"] = q_window_sums(ref[:, rows], fus[:, rows], bs)
            own = slice(r0 - lo, r1 - lo)
            if "SAM" in want:
                out["sam"] = sam_sums(ref[:, own], fus[:, own])
            if "ERGAS" in want:
                out["ergas"] = ergas_sums(ref[:, own], fus[:, own])
            if "SCC" in want:
                rp = scc_strip_planes(lambda a, b: ref[:, a - lo : b - lo], h, w, r0, r1, scc_gradient)
                if rp is not None:
                    fp = scc_strip_planes(lambda a, b: fus[:, a - lo : b - lo], h, w, r0, r1, scc_gradient)
                    out["scc"] = scc_sums(rp, fp, gradient=scc_gradient)  # type: ignore[arg-type]
        return out

    parts = map_strips(task, h, bs, strip_rows)
    res = ReducedSums()
    if "Q2n" in want:
        blocks = np.concatenate([p["q2n"] for p in parts])
        res.q2n_sum, res.q2n_count = float(blocks.sum()), int(blocks.size)
    if "Q" in want:
        res.q_sums = np.sum([p["q"] for p in parts if "q" in p], axis=0)
        res.q_count = q_h * q_w
    if "SAM" in want:
        res.sam_sum = float(sum(p["sam"][0] for p in parts))
        res.sam_valid = int(sum(p["sam"][1] for p in parts))
        res.sam_pixels = h * w
    if "ERGAS" in want:
        res.ergas_sse = np.sum([p["ergas"][0] for p in parts], axis=0)
        res.ergas_ref = np.sum([p["ergas"][1] for p in parts], axis=0)
        res.ergas_n = h * w
    if "SCC" in want:
        res.scc = np.sum([p["scc"] for p in parts if "scc" in p], axis=0) if any("scc" in p for p in parts) \
            else np.zeros(3)
    return res

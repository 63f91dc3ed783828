"""Whole-image statistics gathered strip by strip: what lets the baselines run in bounded memory.

The baselines' global quantities (band means and standard deviations, covariances with the
intensity, least-squares weights, haze percentiles) are computed here from a sequence of row strips,
with results equal to the whole-image computation to rounding:

* :class:`Moments` -- count, means and co-moments of K variables (pairwise update of Chan, Golub &
  LeVeque, so no sum of squares loses precision);
* :class:`LeastSquares` -- ``argmin_w ||A w - b||`` from row blocks of ``A`` and ``b`` (tall-skinny QR:
  the triangular factor of each block stacked on the previous one, as stable as one QR of ``A``);
* :func:`hazen_percentiles` -- exact percentiles (MATLAB ``prctile``, NumPy's ``"hazen"`` method) of
  long columns read in several passes, holding a histogram and a bounded number of values.

References
----------
Chan, Golub & LeVeque, "Algorithms for computing the sample variance", Am. Stat. 37(3), 1983,
doi:10.1080/00031305.1983.10483115; Demmel, Grigori, Hoemmen & Langou, "Communication-optimal
parallel and sequential QR and LU factorizations", SIAM J. Sci. Comput. 34(1), 2012,
doi:10.1137/080731992; Hyndman & Fan, Am. Stat. 50(4), 1996 (definition 5, "hazen").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from scipy import linalg

__all__ = ["CHUNK_ROWS", "COLLECT_LIMIT", "HISTOGRAM_BINS", "LeastSquares", "Moments", "hazen_percentiles"]

#: Bins of each histogram pass of :func:`hazen_percentiles`.
HISTOGRAM_BINS = 65536
#: Values one column's search may hold to sort them (1 MiB as float64; at most two per column). One
#: histogram pass brings the candidates of any image under 2**17 * 2**16 = 8.6e9 pixels below it.
COLLECT_LIMIT = 2**17
#: Rows :class:`Moments` and :class:`LeastSquares` fold in at a time (bounds their temporaries).
CHUNK_ROWS = 2**16


class Moments:
    """Running count, means and co-moment matrix of ``k`` variables, fed by blocks of rows."""

    def __init__(self, k: int) -> None:
        self.n = 0
        self.mean = np.zeros(k)
        self.m2 = np.zeros((k, k))

    def add(self, block: np.ndarray) -> None:
        """Fold in a block ``(N, k)`` of observations (float64)."""
        for c0 in range(0, block.shape[0], CHUNK_ROWS):
            self._add(block[c0 : c0 + CHUNK_ROWS])

    def _add(self, block: np.ndarray) -> None:
        nb = block.shape[0]
        if nb == 0:
            return
        mean_b = block.mean(axis=0)
        d = block - mean_b
        m2_b = d.T @ d
        n = self.n + nb
        delta = mean_b - self.mean
        self.mean = self.mean + delta * (nb / n)
        self.m2 = self.m2 + m2_b + np.outer(delta, delta) * (self.n * nb / n)
        self.n = n

    def cov(self) -> np.ndarray:
        """Sample covariance matrix (``n - 1`` normalisation, as MATLAB's ``cov``/``std2``)."""
        return self.m2 / (self.n - 1)

    def std(self) -> np.ndarray:
        """Sample standard deviations (``n - 1`` normalisation)."""
        return np.sqrt(np.diag(self.cov()))


class LeastSquares:
    """Least-squares solution of a tall system given by blocks of rows (preconditioned QR)."""

    #: Largest condition number of a preconditioned block's Gram matrix folded in by Cholesky QR.
    GRAM_COND_LIMIT = 1e3

    def __init__(self, k: int) -> None:
        self.k = k
        self.r = np.zeros((0, k + 1))
        self.gram: np.ndarray | None = None  # sum of C^T C since r was last updated by QR

    def _factor(self) -> np.ndarray:
        if self.gram is None:
            return self.r
        upper = np.linalg.cholesky(np.eye(self.k + 1) + self.gram).T
        return upper @ self.r

    def _qr(self, block: np.ndarray) -> None:
        self.r = np.linalg.qr(np.concatenate([self._factor(), block], axis=0), mode="r")  # type: ignore[assignment]
        self.gram = None

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        """Fold in rows ``a`` ``(N, k)`` and right-hand side ``b`` ``(N,)``."""
        for c0 in range(0, a.shape[0], CHUNK_ROWS):
            self._add(np.column_stack([a[c0 : c0 + CHUNK_ROWS], b[c0 : c0 + CHUNK_ROWS]]))

    def _add(self, block: np.ndarray) -> None:
        diag = np.abs(np.diag(self.r)) if self.r.shape[0] == self.k + 1 else np.zeros(0)
        if diag.size == 0 or diag.min() <= 1e-7 * diag.max():
            self._qr(block)
            return
        c = linalg.solve_triangular(self.r, block.T, trans="T", check_finite=False).T  # block @ r^-1
        g = c.T @ c
        eig = np.linalg.eigvalsh(np.eye(self.k + 1) + g)
        if eig[0] <= 0 or eig[-1] > self.GRAM_COND_LIMIT * eig[0]:
            self._qr(block)
            return
        self.gram = g if self.gram is None else self.gram + g

    def solve(self) -> np.ndarray:
        """The weights ``w`` (minimum norm if ``A`` is rank deficient), ``(k,)``."""
        r = self._factor()[: self.k]
        return np.linalg.lstsq(r[:, : self.k], r[:, self.k], rcond=None)[0]


def _hazen_ranks(n: int, q: float) -> tuple[int, int, float]:
    """Order statistics (0-based) and weight of NumPy's ``"hazen"`` percentile ``q`` (%) of ``n`` values."""
    pos = n * (q / 100.0) + 0.5 - 1.0
    if pos <= 0:
        return 0, 0, 0.0
    if pos >= n - 1:
        return n - 1, n - 1, 0.0
    lo = int(np.floor(pos))
    return lo, lo + 1, float(pos - lo)


def _lerp(a: float, b: float, t: float) -> float:
    """NumPy's percentile interpolation (from the nearer end, for symmetry)."""
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t


class _Search:
    """Where the ``rank``-th smallest value of one column lies: ``[lo, hi)`` (``hi`` included if ``closed``)."""

    def __init__(self, column: int, rank: int, lo: float, hi: float) -> None:
        self.column, self.rank = column, rank
        self.lo, self.hi, self.closed, self.below = lo, hi, True, 0
        self.count = -1  # values in range (unknown)
        self.value: float | None = lo if lo == hi else None

    def mask(self, v: np.ndarray) -> np.ndarray:
        return (v >= self.lo) & ((v <= self.hi) if self.closed else (v < self.hi))


def _scan(v: np.ndarray, s: _Search, ext: list[float], kept: list[np.ndarray] | None,
          hist: np.ndarray | None) -> None:
    """One block's values of one column, folded into a search's extremes and histogram (or kept values)."""
    sel = v[s.mask(v)]
    if sel.size == 0:
        return
    ext[0], ext[1] = min(ext[0], float(sel.min())), max(ext[1], float(sel.max()))
    if kept is not None:
        kept.append(sel)
    else:
        hist += np.histogram(sel, bins=HISTOGRAM_BINS, range=(s.lo, s.hi))[0]


def hazen_percentiles(blocks: Callable[[], Iterable[np.ndarray]], q: float, *, n: int,
                      lo: Sequence[float] | np.ndarray, hi: Sequence[float] | np.ndarray) -> np.ndarray:
    """Exact ``q``-th percentiles of the columns of a long matrix read block by block, in a few passes."""
    k = len(lo)
    i0, i1, frac = _hazen_ranks(n, q)
    searches = [_Search(c, r, float(lo[c]), float(hi[c])) for c in range(k) for r in sorted({i0, i1})]
    for s in searches:
        s.count = n
    for _ in range(64):
        active = [s for s in searches if s.value is None]
        if not active:
            break
        # searches with the same column and range (both ranks, at first) share one scan
        groups: dict[tuple[int, float, float, bool], list[_Search]] = {}
        for s in active:
            groups.setdefault((s.column, s.lo, s.hi, s.closed), []).append(s)
        hist = {g: np.zeros(HISTOGRAM_BINS, dtype=np.int64) for g, m in groups.items() if m[0].count > COLLECT_LIMIT}
        kept: dict[tuple[int, float, float, bool], list[np.ndarray]] = {g: [] for g in groups if g not in hist}
        extremes = {g: [np.inf, -np.inf] for g in groups}
        for block in blocks():
            for g, members in groups.items():
                _scan(block[:, g[0]], members[0], extremes[g], kept.get(g), hist.get(g))
            del block  # free this block before the next is read
        for g, members in groups.items():
            ext = extremes[g]
            values = np.sort(np.concatenate(kept[g])) if g in kept and ext[0] != ext[1] else None
            for s in members:
                if ext[0] == ext[1]:  # one distinct value left in range
                    s.value = ext[0]
                elif values is not None:
                    s.value = float(values[s.rank - s.below])
                else:
                    counts = hist[g]
                    cum = np.cumsum(counts)
                    b = int(np.searchsorted(cum, s.rank - s.below, side="right"))
                    edges = np.linspace(s.lo, s.hi, HISTOGRAM_BINS + 1)
                    s.below += int(cum[b - 1]) if b else 0
                    s.lo, s.hi = float(edges[b]), float(edges[b + 1])
                    s.closed = s.closed and b == HISTOGRAM_BINS - 1
                    s.count = int(counts[b])
    found = {(s.column, s.rank): s.value for s in searches}
    out = np.empty(k)
    for c in range(k):
        out[c] = _lerp(found[(c, i0)], found[(c, i1)], frac)  # type: ignore[arg-type]
    return out

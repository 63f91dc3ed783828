"""Universal image quality index (UIQI, "Q"): sliding-window Q_avg and block-wise Q for QNR.

The formula's home: the sliding-window map (:func:`uiqi_rows`, the toolbox's ``img_qi`` rules,
used by Q_avg in every path and by the reprojected protocol's R-Q), its per-chunk sums
(:func:`q_window_sums`) and finalize (:func:`q_from_sums`), and the block moments behind the
block-wise UIQIs of D_lambda and D_s.

References
----------
Wang & Bovik, "A universal image quality index", IEEE SPL 9(3), 2002, doi:10.1109/97.995823.
Vivone et al., IEEE GRSM 2021 (toolbox ``Q``/``img_qi`` and ``uqi`` in ``D_lambda``/``D_s``).
Scarpa & Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808 (R-Q window placement).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import cv2
import numpy as np

from ..foreign import Layout, batched
from ..parallel import parallel_map
from ..rules import checked_pair
from ..validation import ShapeError, check_block_size, check_choice, check_min_size
from .strips import StripImage, check_block_fits, map_strips, within_unit

__all__ = [
    "q_index", "uiqi_rows", "uiqi_from_window_sums", "q_window_sums", "q_from_sums", "edge_extended_q",
    "block_moments", "pair_uiqi", "against_last_uiqi", "uiqi_from_moments",
]

Windows = Literal["valid", "edge-extended"]


def uiqi_rows(x: np.ndarray, y: np.ndarray, block_size: int, shift: tuple[float, float]) -> np.ndarray:
    """UIQI map of two 2-D bands on a sliding window ('valid' windows), toolbox ``img_qi`` rules.

    With window sums of ``p = x + y`` and ``m = x - y`` (shifted by integers near the data so
    the sums of integer data stay exact and others avoid cancellation),
    ``A = N Spp - P^2`` and ``B = N Smm - M^2`` give ``4 (N Sxy - Sx Sy) = A - B`` and
    ``2 d1 = A + B``; the unshifted sums give ``4 Sx Sy = P'^2 - M'^2`` and ``2 d2 = P'^2 + M'^2``.
    So ``Q = (A - B)(P'^2 - M'^2) / ((A + B)(P'^2 + M'^2))`` where ``d1 d2 != 0``;
    ``(P'^2 - M'^2)/(P'^2 + M'^2)`` (= ``2 Sx Sy / d2``) where only ``d1 == 0``; 1 where ``d2 == 0``.

    Parameters
    ----------
    x, y : ndarray, shape (H, W)
        Reference and test band (float64, rows contiguous).
    block_size : int
        Window side.
    shift : (float, float)
        Integers subtracted from ``x`` and ``y`` before the second-moment sums (e.g. rounded means).

    Returns
    -------
    ndarray, shape (H - block_size + 1, W - block_size + 1)
        Q per window (dimensionless, in [-1, 1]).

    Examples
    --------
    >>> x = np.arange(16.0).reshape(4, 4)
    >>> uiqi_rows(x, x, 2, (8.0, 8.0)).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    bs = int(block_size)
    n = float(bs * bs)
    h_out, w_out = x.shape[0] - bs + 1, x.shape[1] - bs + 1
    c_sum, c_diff = shift[0] + shift[1], shift[0] - shift[1]

    def sums(plane: np.ndarray, square: bool) -> np.ndarray:
        # full-width rows (contiguous); the last bs-1 columns are partial windows, dropped at the end
        f = cv2.sqrBoxFilter if square else cv2.boxFilter
        return f(plane, cv2.CV_64F, (bs, bs), anchor=(0, 0), normalize=False,
                 borderType=cv2.BORDER_CONSTANT)[:h_out]

    p = cv2.addWeighted(x, 1.0, y, 1.0, -c_sum)  # x + y - c_sum in one pass
    m = cv2.addWeighted(x, 1.0, y, -1.0, -c_diff)
    ps, pp, ms, mm = sums(p, False), sums(p, True), sums(m, False), sums(m, True)
    del p, m
    return uiqi_from_window_sums(ps, pp, ms, mm, n=n, c_sum=c_sum, c_diff=c_diff, width=w_out)


def uiqi_from_window_sums(ps: Any, pp: Any, ms: Any, mm: Any, *, n: float, c_sum: Any, c_diff: Any,
                          width: int | None = None) -> Any:
    """The UIQI of each window from its sums (the formula of :func:`uiqi_rows`, with the toolbox's
    special cases), on numpy arrays or on PyTorch tensors alike (the device backend runs it too).

    Parameters
    ----------
    ps, pp, ms, mm : array or tensor, same shape (..., h, w)
        Window sums of ``p = x + y - c_sum`` and ``p^2``, of ``m = x - y - c_diff`` and ``m^2``
        (overwritten: the computation runs in place).
    n : float
        Pixels per window.
    c_sum, c_diff : float, or array/tensor broadcasting against the sums
        The shifts of ``p`` and ``m``.
    width : int, optional
        Keep the first ``width`` columns (full-width rows whose last ``bs - 1`` columns are
        partial windows).

    Returns
    -------
    array or tensor, shape (..., h, width)
        Q per window.

    Examples
    --------
    >>> ones = np.ones((1, 1))
    >>> uiqi_from_window_sums(4 * ones, 4 * ones, 0 * ones, 0 * ones, n=4.0, c_sum=0.0, c_diff=0.0).tolist()
    [[1.0]]
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        pp *= n
        pp -= ps * ps  # A
        mm *= n
        mm -= ms * ms  # B
        num = pp - mm  # 4 (N Sxy - Sx Sy)
        pp += mm  # 2 d1
        ps += n * c_sum  # unshifted window sums of x + y and x - y
        ms += n * c_diff
        ps *= ps
        ms *= ms
        num2 = ps - ms  # 4 Sx Sy
        ps += ms  # 2 d2
        num *= num2
        den = pp * ps
        num /= den
    w = num.shape[-1] if width is None else width
    q = num[..., :w]
    if not math.isfinite(float(q.sum())):  # some window has d1 d2 == 0: the toolbox's special cases
        d1, d2, num2, den = pp[..., :w], ps[..., :w], num2[..., :w], den[..., :w]
        bad = den == 0
        q[bad] = 1.0
        flat = bad & (d1 == 0) & (d2 != 0)
        q[flat] = num2[flat] / d2[flat]
    return q


def _shift_of(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    return float(np.round(x.mean())), float(np.round(y.mean()))


def q_window_sums(ref_planes: np.ndarray, fus_planes: np.ndarray, block_size: int, *,
                  q_map: np.ndarray | None = None) -> np.ndarray:
    """Per-band sums of the UIQI map over every valid window of a chunk of band planes.

    Parameters
    ----------
    ref_planes, fus_planes : ndarray, shape (B, h, w), float64
        A chunk of rows (and columns) including the ``block_size - 1`` halo its windows read.
    block_size : int
    q_map : ndarray, shape (h - bs + 1, w - bs + 1, B), optional
        Filled with the map when given.

    Returns
    -------
    ndarray, shape (B,)
        Sum of Q over the chunk's windows, per band.

    Examples
    --------
    >>> x = np.random.default_rng(0).integers(1, 99, (2, 5, 5)).astype(float)
    >>> q_window_sums(x, x, 4).tolist()
    [4.0, 4.0]
    """
    sums = np.empty(ref_planes.shape[0])
    for b in range(ref_planes.shape[0]):
        x, y = ref_planes[b], fus_planes[b]
        qm = uiqi_rows(x, y, block_size, _shift_of(x, y))
        sums[b] = qm.sum()
        if q_map is not None:
            q_map[:, :, b] = qm
    return sums


def q_from_sums(q_sums: np.ndarray, q_count: int) -> float:
    """Q_avg from per-band sums of the UIQI map: mean over windows, then over bands.

    Parameters
    ----------
    q_sums : ndarray, shape (B,)
    q_count : int
        Windows per band.

    Returns
    -------
    float
        Dimensionless, in [-1, 1] (1 = identical).

    Examples
    --------
    >>> q_from_sums(np.array([10.0, 5.0]), 10)
    0.75
    """
    return within_unit(float(np.mean(np.asarray(q_sums) / q_count)))



@batched("reference", "fused")
def q_index(
    reference: np.ndarray,
    fused: np.ndarray,
    *,
    block_size: int = 32,
    windows: Windows = "valid",
    return_map: bool = False,
    layout: Layout | None = None,
) -> float | tuple[float, np.ndarray]:
    """Q_avg: band-averaged UIQI on a sliding window (toolbox ``Q``; R-Q's windows by option).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Ground truth and fused image (any consistent unit; DN in the protocols).
    block_size : int, default 32
        Sliding-window side (stride 1).
    windows : {"valid", "edge-extended"}
        ``"valid"`` (toolbox): windows fully inside the image, an ``(H-bs+1, W-bs+1)`` map.
        ``"edge-extended"`` (reprojected protocol's R-Q): the image is extended by one repeated
        edge row and column first, an ``(H-bs+2, W-bs+2)`` map (``block_size`` even, at most
        ``min(H, W) + 1``).
    return_map : bool
        Also return the (.., .., B) map.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

    Returns
    -------
    float or (float, ndarray)
        Mean over bands of the mean UIQI map, in [-1, 1] (1 = identical).

    References
    ----------
    Wang & Bovik, IEEE SPL 9(3), 2002; Vivone et al., IEEE GRSM 2021; Scarpa & Ciotola, Remote
    Sensing 14(8):1808, 2022 (edge-extended windows).

    Examples
    --------
    >>> ref = np.random.default_rng(0).integers(1, 2048, (40, 40, 3)).astype(float)
    >>> q_index(ref, ref)
    1.0
    """
    bs = check_block_size(block_size)
    check_choice("windows", windows, ("valid", "edge-extended"))
    ref, fus = checked_pair(reference, fused)
    if windows == "edge-extended":
        value, edge_map = edge_extended_q(ref, fus, bs)
        return (value, edge_map) if return_map else value
    check_min_size("reference", ref.shape, bs)
    h, w, nb = ref.shape
    q_h = h - bs + 1
    qmap = np.empty((q_h, w - bs + 1, nb)) if return_map else None
    rs, fs = StripImage(ref), StripImage(fus)

    def strip(r0: int, r1: int) -> np.ndarray:
        if r0 >= q_h:
            return np.zeros(nb)
        q1 = min(r1, q_h)
        return q_window_sums(rs.planes(r0, q1 + bs - 1), fs.planes(r0, q1 + bs - 1), bs,
                             q_map=None if qmap is None else qmap[r0:q1])

    sums = np.sum(map_strips(strip, h, bs), axis=0)
    value = q_from_sums(sums, q_h * (w - bs + 1))
    return value if qmap is None else (value, qmap)


def edge_extended_q(ref: np.ndarray, fus: np.ndarray, block_size: int, *,
                    name: str = "reference") -> tuple[float, np.ndarray]:
    """R-Q's placement: one repeated edge row/column, then every valid window (value and map).

    Parameters
    ----------
    ref, fus : ndarray, shape (h, w, B)
    block_size : int
    name : str
        The reference's name in messages.

    Returns
    -------
    (float, ndarray of shape (h - bs + 2, w - bs + 2, B))

    Raises
    ------
    ShapeError
        An odd ``block_size``, or one larger than ``min(h, w) + 1``.

    Examples
    --------
    >>> x = np.random.default_rng(0).integers(1, 99, (8, 8, 2)).astype(float)
    >>> value, qmap = edge_extended_q(x, x, 4)
    >>> value, qmap.shape
    (1.0, (6, 6, 2))
    """
    if block_size % 2:
        raise ShapeError(f"block_size must be even for edge-extended windows, got {block_size}")
    check_block_fits(name, ref.shape, block_size)
    x = np.ascontiguousarray(np.pad(ref, ((0, 1), (0, 1), (0, 0)), mode="edge").transpose(2, 0, 1), dtype=np.float64)
    y = np.ascontiguousarray(np.pad(fus, ((0, 1), (0, 1), (0, 0)), mode="edge").transpose(2, 0, 1), dtype=np.float64)
    qmap = np.empty((x.shape[1] - block_size + 1, x.shape[2] - block_size + 1, x.shape[0]))
    sums = q_window_sums(x, y, block_size, q_map=qmap)
    return q_from_sums(sums, qmap.shape[0] * qmap.shape[1]), qmap


def block_moments(
    img: np.ndarray | StripImage, block_size: int, *, extra: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-block means and sample (N-1) covariance matrices of all channels.

    Parameters
    ----------
    img : ndarray, shape (H, W, C), or StripImage
        H and W multiples of ``block_size``; a :class:`StripImage` may hold band planes.
    block_size : int
    extra : ndarray, shape (H, W), optional
        One more channel (e.g. the PAN), appended last, without concatenating whole images.

    Returns
    -------
    mean : ndarray, shape (n_blocks, C)
    cov : ndarray, shape (n_blocks, C, C)
        As MATLAB's ``cov`` (centred, divided by N-1).

    Examples
    --------
    >>> m, c = block_moments(np.arange(16.0).reshape(4, 4, 1), 2)
    >>> m.ravel().tolist()
    [2.5, 4.5, 10.5, 12.5]
    """
    src = img if isinstance(img, StripImage) else StripImage(np.asarray(img))
    bs = int(block_size)
    ny = src.shape[0] // bs
    n_pix = bs * bs

    def rows(i0: int) -> tuple[np.ndarray, np.ndarray]:
        blocks = src.blocks(slice(i0 * bs, min(i0 + 2, ny) * bs), bs, extra=extra)  # (n, C, N)
        mean = blocks.mean(axis=2)
        blocks -= mean[:, :, None]
        return mean, np.matmul(blocks, blocks.transpose(0, 2, 1)) / (n_pix - 1)

    # two block rows per task: a cache-sized working set, in threads
    parts = parallel_map(rows, list(range(0, ny, 2)))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def uiqi_from_moments(cxy: np.ndarray, vx: np.ndarray, vy: np.ndarray, mx: np.ndarray, my: np.ndarray) -> np.ndarray:
    """``4 cxy mx my / (vx + vy) / (mx^2 + my^2)`` (MATLAB ``uqi``); NaN where 0/0.

    Examples
    --------
    >>> float(uiqi_from_moments(2.0, 2.0, 2.0, 3.0, 3.0))
    1.0
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return 4.0 * cxy * mx * my / (vx + vy) / (mx * mx + my * my)


def pair_uiqi(mean: np.ndarray, cov: np.ndarray, n_bands: int) -> np.ndarray:
    """Block UIQI of every band pair i < j among the first ``n_bands`` channels: (n_blocks, n_pairs).

    Examples
    --------
    >>> m, c = block_moments(np.random.default_rng(0).integers(1, 99, (4, 4, 3)).astype(float), 4)
    >>> pair_uiqi(m, c, 3).shape
    (1, 3)
    """
    iu, ju = np.triu_indices(n_bands, k=1)
    var = np.diagonal(cov, axis1=1, axis2=2)
    return uiqi_from_moments(cov[:, iu, ju], var[:, iu], var[:, ju], mean[:, iu], mean[:, ju])


def against_last_uiqi(mean: np.ndarray, cov: np.ndarray, n_bands: int) -> np.ndarray:
    """Block UIQI of each of the first ``n_bands`` channels against channel ``n_bands``: (n_blocks, B).

    Examples
    --------
    >>> x = np.ones((8, 8, 2)) * [2.0, 5.0] + np.arange(64.0).reshape(8, 8, 1)
    >>> against_last_uiqi(*block_moments(x, 8), 1).round(6).tolist()
    [[0.996333]]
    """
    var = np.diagonal(cov, axis1=1, axis2=2)
    return uiqi_from_moments(
        cov[:, :n_bands, n_bands], var[:, :n_bands], var[:, n_bands : n_bands + 1],
        mean[:, :n_bands], mean[:, n_bands : n_bands + 1],
    )

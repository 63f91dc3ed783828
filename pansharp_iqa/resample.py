"""Resampling as the reference toolboxes do it: the EXP upsampler, MATLAB's ``imresize``, half-pixel shifts.

The EXP upsampler is the 23-tap interpolator for powers of two and, at ratio 6, the composite of
the hyperspectral and Sentinel-2 toolboxes (a x3 sinc interpolator, then one 23-tap x2 step).

References
----------
Aiazzi, Alparone, Baronti, Garzelli, "Context-driven fusion of high spatial and spectral resolution
images based on oversampled multiresolution analysis", IEEE TGRS 40(10), 2002 (23-tap filter).
Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315 (``interp23tap``).
Keys, "Cubic convolution interpolation for digital image processing", IEEE TASSP 29(6), 1981.
Ciotola et al., arXiv 2407.01355, 2024, and Remote Sensing 17(12):1983, 2025, doi:10.3390/rs17121983
(``ideal_interpolator`` at ratio 6, ``fineshift``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Literal

import cv2
import numpy as np

from .borders import border_index, consecutive_runs
from .parallel import map_bands
from .validation import SettingError, ShapeError, check_choice, check_ratio

if TYPE_CHECKING:  # scipy.sparse costs about 0.2 s to import: loaded by resize_matrix on first use
    from scipy import sparse

__all__ = [
    "interp23tap", "interp23tap_planes", "imresize", "resize_matrix", "EXP_HALF_TAPS", "SINC3_HALF_TAPS",
    "sinc3_taps", "exp_halo_support", "exp_halo_window", "fineshift",
]

#: Half length N of the toolboxes' x3 sinc interpolator (``interp_3x_2d``: 2N + 1 = 61 taps).
SINC3_HALF_TAPS = 30
#: The x3 sinc taps: float32 as the toolboxes' PyTorch code computes them, or float64.
SincTaps = Literal["float32", "float64"]
#: Low-resolution samples of halo per side of a windowed 23-tap x2 cascade: every x2 step mixes
#: samples at most 6 input samples away, so a window's own wrap-around reaches fewer than
#: ``6 + 6/2 + 6/4 + ... < 12`` samples in.
EXP_HALO_LR = 13

#: Half of the symmetric 23-tap EXP filter (centre first), as in the toolbox's ``interp23tap``.
EXP_HALF_TAPS = 2.0 * np.array(
    [0.5, 0.305334091185, 0.0, -0.072698593239, 0.0, 0.021809577942, 0.0,
     -0.005192756653, 0.0, 0.000807762146, 0.0, -0.000060081482]
)
# taps at odd distances 1, 3, ..., 11 from the centre (the even ones are 0 except the centre = 1)
_ODD_TAPS = EXP_HALF_TAPS[1::2]


_POLYPHASE = np.concatenate([_ODD_TAPS[::-1], _ODD_TAPS])  # c6..c1 c1..c6


def _upsample2_axis(x: np.ndarray, axis: int, samples_at_odd: bool, dst: np.ndarray | None = None) -> np.ndarray:
    """One x2 step along one axis of a 2-D array: zero-stuff, circular 23-tap filtering."""
    n = x.shape[axis]
    pad = ((7, 7), (0, 0)) if axis == 0 else ((0, 0), (7, 7))
    padded = np.pad(x, pad, mode="wrap")
    kernel = _POLYPHASE.reshape(-1, 1) if axis == 0 else _POLYPHASE.reshape(1, -1)
    # d[y] = sum_j P[j] * padded[y + j] along the axis (correlation anchored at the first tap)
    d = cv2.filter2D(padded, cv2.CV_64F, kernel, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
    shape = (2 * n, x.shape[1]) if axis == 0 else (x.shape[0], 2 * n)
    out = np.empty(shape, dtype=np.float64) if dst is None else dst
    # samples at odd positions: new sample 2i lies between old i-1 and i (old neighbours i-6..i+5);
    # samples at even positions: new sample 2i+1 lies between old i and i+1 (old i-5..i+6)
    keep, new, first = (slice(1, None, 2), slice(0, None, 2), 1) if samples_at_odd else (
        slice(0, None, 2), slice(1, None, 2), 2)
    if axis == 0:
        out[keep], out[new] = x, d[first : first + n]
    else:
        out[:, keep], out[:, new] = x, d[:, first : first + n]
    return out


def interp23tap(image: np.ndarray, ratio: int, *, sinc_taps: SincTaps = "float32") -> np.ndarray:
    """Upsample by ``ratio`` with the EXP interpolator (toolbox ``interp23tap``; ratio 6: the
    hyperspectral/Sentinel-2 toolboxes' ``ideal_interpolator``).

    Powers of two work in x2 steps: the first step places the samples at the odd (0-based)
    positions, later steps at the even ones; each step filters columns then rows with the 23-tap
    filter and circular borders. Unlike the 2020 toolbox, whose loop runs ``ratio/2`` times (so
    ratio 8 upsamples by 16), this runs ``log2(ratio)`` steps and is correct for every power of
    two; for ratios 2 and 4 the two agree.

    Ratio 6 is the composite of the hyperspectral and Sentinel-2 toolboxes: a x3 sinc interpolator
    (rows of ``2N + 1 = 61`` taps, ``h1 = sinc(n + 1/3)`` and ``h2 = sinc(n + 2/3)``, ``n = -N..N``,
    each divided by its sum; the image extended by symmetric mirroring, edge included; sample
    ``3k + 1`` is the input sample ``k``, ``3k + 2`` its ``h1`` interpolation at ``k + 1/3``, ``3k`` its
    ``h2`` interpolation at ``k - 1/3``; along the columns index first, then the rows), then one 23-tap
    x2 step with the x3 grid at the odd positions. Low-resolution pixel ``i`` lands on fine pixel
    ``6i + 3``. It needs at least ``N + 1 = 31`` low-resolution pixels a side (the toolboxes' mirror
    padding fails below).

    Parameters
    ----------
    image : ndarray, shape (h, w) or (h, w, B)
        Low-resolution image (any real dtype; not modified).
    ratio : int
        A power of two (2, 4, 8, ...) or 6.
    sinc_taps : {"float32", "float64"}, default "float32"
        Ratio 6 only: the x3 taps as the toolboxes' PyTorch code computes them (float32 sinc values
        and sum, :func:`sinc3_taps`) or in float64.

    Returns
    -------
    ndarray, shape (ratio*h, ratio*w) or (ratio*h, ratio*w, B), float64

    Raises
    ------
    SettingError
        Another ratio.
    ShapeError
        Ratio 6 on an image with a side below 31 pixels.

    References
    ----------
    Aiazzi et al., IEEE TGRS 40(10), 2002; Vivone et al., IEEE GRSM 2021; Ciotola et al., arXiv
    2407.01355 (2024); Ciotola et al., Remote Sensing 17(12):1983 (2025), doi:10.3390/rs17121983.

    Examples
    --------
    >>> low = np.random.default_rng(0).random((32, 33))
    >>> up = interp23tap(low, 6)
    >>> up.shape, bool(np.allclose(up[3::6, 3::6], low, rtol=0, atol=1e-12))
    ((192, 198), True)
    """
    ratio = check_ratio(ratio, exp=True)
    arr = np.asarray(image, dtype=np.float64)
    if arr.ndim not in (2, 3):
        raise ShapeError(f"image must be (h, w) or (h, w, B), got shape {arr.shape}")
    bands = arr[:, :, None] if arr.ndim == 2 else arr
    planes = interp23tap_planes(np.moveaxis(bands, 2, 0), ratio, sinc_taps=sinc_taps)
    return planes[0] if arr.ndim == 2 else np.ascontiguousarray(np.moveaxis(planes, 0, 2))


def interp23tap_planes(planes: np.ndarray, ratio: int, *, sinc_taps: SincTaps = "float32") -> np.ndarray:
    """:func:`interp23tap` on band planes, bands in threads.

    Parameters
    ----------
    planes : ndarray, shape (B, h, w)
        Low-resolution band planes (any real dtype; not modified).
    ratio : int
        A power of two (2, 4, 8, ...) or 6.
    sinc_taps : {"float32", "float64"}, default "float32"
        Ratio 6 only: the x3 taps' precision (:func:`sinc3_taps`).

    Returns
    -------
    ndarray, shape (B, ratio*h, ratio*w), float64, C-contiguous

    Examples
    --------
    >>> low = np.random.default_rng(0).random((2, 8, 9))
    >>> up = interp23tap_planes(low, 4)
    >>> up.shape, bool(np.array_equal(up[1], interp23tap(low[1], 4)))
    ((2, 32, 36), True)
    """
    ratio = check_ratio(ratio, exp=True)
    nb, h, w = planes.shape
    if ratio == 6:
        check_sinc3_size((h, w))
        taps = sinc3_taps(precision=sinc_taps)
        result6 = np.empty((nb, 6 * h, 6 * w))

        def one6(b: int) -> None:
            x3 = _sinc3_plane(np.asarray(planes[b], dtype=np.float64), _sinc3_whole(h), _sinc3_whole(w), taps)
            _upsample2_axis(_upsample2_axis(x3, 0, samples_at_odd=True), 1, samples_at_odd=True, dst=result6[b])

        map_bands(one6, nb)
        return result6
    steps = ratio.bit_length() - 1
    result = np.empty((nb, h << steps, w << steps))

    def one(b: int) -> None:
        out = np.ascontiguousarray(planes[b], dtype=np.float64)
        for step in range(steps):
            first = step == 0
            out = _upsample2_axis(out, 0, samples_at_odd=first)
            out = _upsample2_axis(out, 1, samples_at_odd=first, dst=result[b] if step == steps - 1 else None)

    map_bands(one, nb)
    return result


def check_sinc3_size(shape: tuple[int, ...]) -> None:
    """Refuse a low-resolution side below ``N + 1 = 31`` pixels for the ratio-6 upsampler."""
    small = min(int(n) for n in shape)
    if small < SINC3_HALF_TAPS + 1:
        raise ShapeError(
            f"ratio 6 upsampling needs at least {SINC3_HALF_TAPS + 1} low-resolution pixels a side (the x3 sinc "
            f"interpolator mirrors {SINC3_HALF_TAPS + 1} samples), got {tuple(int(n) for n in shape)}"
        )


def _torch_order_sum_f32(v: np.ndarray) -> np.float32:
    """Float32 sum in PyTorch's CPU reduction order (AVX2: 8-lane vectors into 4 accumulators, then lanes)."""
    lanes, ilp = 8, 4
    v = np.asarray(v, dtype=np.float32)
    nvec = v.size // lanes
    vecs = v[: nvec * lanes].reshape(nvec, lanes)
    acc = [np.zeros(lanes, np.float32) for _ in range(ilp)]
    rows = nvec // ilp
    for r in range(rows):
        for k in range(ilp):
            acc[k] = acc[k] + vecs[r * ilp + k]
    for i in range(rows * ilp, nvec):
        acc[0] = acc[0] + vecs[i]
    for k in range(1, ilp):
        acc[0] = acc[0] + acc[k]
    total = np.float32(0.0)
    for x in v[nvec * lanes :]:
        total = np.float32(total + x)
    for x in acc[0]:
        total = np.float32(total + x)
    return total


@functools.lru_cache(maxsize=8)
def sinc3_taps(half_taps: int = SINC3_HALF_TAPS, precision: SincTaps = "float32") -> tuple[np.ndarray, np.ndarray]:
    """Taps of the x3 sinc interpolator, in correlation order (flipped), as float64 arrays.

    ``h1[t] = s1(N - t) / sum(s1)`` and ``h2[t] = s2(N - t) / sum(s2)`` (``t = 0..2N``), with
    ``s1(n) = sinc(n + 1/3)``, ``s2(n) = sinc(n + 2/3)`` (normalised sinc). ``"float32"`` computes
    them as the toolboxes' PyTorch code does (``torch.sinc`` on a float32 ``n + 1/3``, i.e. the
    correctly rounded float32 ``sin(pi x) / (pi x)``; the sum in PyTorch's CPU reduction order; the
    division in float32): bit-identical to ``torch.sinc(...) / torch.sum(...)`` on AVX2 CPUs
    (checked by the test suite against PyTorch 2.13). ``"float64"``: the same formula in float64.

    Parameters
    ----------
    half_taps : int
        N (taps ``2N + 1``).
    precision : {"float32", "float64"}
        ``"float32"``: as the toolboxes' PyTorch code (see above); ``"float64"``: the formula in float64.

    Returns
    -------
    (ndarray, ndarray), each shape (2N + 1,), float64, read-only
        ``h1`` (interpolates at ``k + 1/3``) and ``h2`` (at ``k + 2/3``).

    Examples
    --------
    >>> h1, h2 = sinc3_taps()
    >>> h1.size, round(float(h1.sum()), 6), bool(np.array_equal(h1, h2[::-1]))
    (61, 1.0, False)
    """
    check_choice("precision", precision, ("float32", "float64"))
    n = int(half_taps)
    out = []
    for frac in (1.0 / 3.0, 2.0 / 3.0):
        if precision == "float32":
            x = np.arange(-n, n + 1).astype(np.float32) + np.float32(frac)
            prod = np.float32(np.pi) * x
            s = (np.sin(prod.astype(np.float64)).astype(np.float32) / prod).astype(np.float32)
            h = (s / _torch_order_sum_f32(s)).astype(np.float32).astype(np.float64)
        else:
            s64 = np.sinc(np.arange(-n, n + 1) + frac)
            h = s64 / s64.sum()
        h = np.ascontiguousarray(h[::-1])
        h.setflags(write=False)
        out.append(h)
    return out[0], out[1]


def _sinc3_whole(n: int) -> list[tuple[int, int, np.ndarray]]:
    """The x3 plan of a whole axis: one run ``[0, 3n)`` from the mirror-extended samples."""
    return [(0, 3 * n, border_index(np.arange(-SINC3_HALF_TAPS - 1, n + SINC3_HALF_TAPS), n, "symmetric"))]


def _sinc3_axis0(ext: np.ndarray, taps: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """x3 along axis 0 of samples extended by N+1 before and N after: ``(m + 2N + 1, ...) -> (3m, ...)``."""
    h1, h2 = taps
    m = ext.shape[0] - 2 * SINC3_HALF_TAPS - 1
    out = np.empty((m, 3) + ext.shape[1:])
    tmp = np.empty((m,) + ext.shape[1:])
    for h, col, first in ((h2, 0, 0), (h1, 2, 1)):  # 3k: h2 at k - 1/3; 3k + 2: h1 at k + 1/3
        acc = out[:, col]
        np.multiply(ext[first : first + m], h[0], out=acc)
        for t in range(1, h.size):
            np.multiply(ext[first + t : first + t + m], h[t], out=tmp)
            acc += tmp
    out[:, 1] = ext[SINC3_HALF_TAPS + 1 : SINC3_HALF_TAPS + 1 + m]
    return out.reshape((3 * m,) + ext.shape[1:])


def _sinc3_runs(x: np.ndarray, plan: list[tuple[int, int, np.ndarray]], taps: tuple[np.ndarray, np.ndarray],
                lookup: np.ndarray | None) -> np.ndarray:
    """x3 values along axis 0 at the plan's runs ``(q0, q1, extended positions)``, concatenated."""
    parts = []
    for q0, q1, ext_pos in plan:
        k0 = q0 // 3
        rows = ext_pos if lookup is None else np.searchsorted(lookup, ext_pos)
        up = _sinc3_axis0(np.take(x, rows, axis=0), taps)
        parts.append(up[q0 - 3 * k0 : q1 - 3 * k0])
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)


def _sinc3_plane(x: np.ndarray, rows: list[tuple[int, int, np.ndarray]], cols: list[tuple[int, int, np.ndarray]],
                 taps: tuple[np.ndarray, np.ndarray], row_lookup: np.ndarray | None = None,
                 col_lookup: np.ndarray | None = None) -> np.ndarray:
    """x3 of a plane (columns index first, then rows) at the runs of the row and column plans."""
    t = _sinc3_runs(np.ascontiguousarray(x.T), cols, taps, col_lookup)
    return _sinc3_runs(np.ascontiguousarray(t.T), rows, taps, row_lookup)


def _sinc3_plan(lo: int, hi: int, n: int) -> list[tuple[int, int, np.ndarray]]:
    """Runs of the x3 grid (wrapped) that a windowed x2 step of x3 positions ``[3lo, 3hi)`` reads."""
    q = border_index(np.arange(3 * lo - EXP_HALO_LR, 3 * hi + EXP_HALO_LR), 3 * n, "wrap")
    plan = []
    for q0, q1 in consecutive_runs(q):
        k0, k1 = q0 // 3, -(-q1 // 3)
        ext = border_index(np.arange(k0 - SINC3_HALF_TAPS - 1, k1 + SINC3_HALF_TAPS), n, "symmetric")
        plan.append((q0, q1, ext))
    return plan


def exp_halo_support(lo: int, hi: int, n_low: int, ratio: int) -> np.ndarray:
    """Low-resolution positions that the EXP upsampling of ``[lo, hi)`` (low-resolution units) reads.

    Powers of two: ``[lo - 13, hi + 13)`` wrapped (the 23-tap filter's circular border, in the order
    of the window). Ratio 6: the sorted positions the x3 sinc stage (symmetric mirror, 31 samples a
    side) needs for the x3 samples that the x2 step of the window reads (wrapped on the x3 grid).

    Parameters
    ----------
    lo, hi : int
        Low-resolution range of the window.
    n_low : int
        Low-resolution length of the axis.
    ratio : int
        A power of two or 6.

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> exp_halo_support(0, 2, 30, 4)[:3].tolist(), exp_halo_support(40, 42, 100, 6)[[0, -1]].tolist()
    ([17, 18, 19], [4, 76])
    """
    if ratio == 6:
        return np.unique(np.concatenate([ext for _, _, ext in _sinc3_plan(lo, hi, n_low)]))
    return border_index(np.arange(lo - EXP_HALO_LR, hi + EXP_HALO_LR), n_low, "wrap")


def exp_halo_window(low: np.ndarray, rows_lr: tuple[int, int], cols_lr: tuple[int, int], shape_lr: tuple[int, int],
                    ratio: int, *, sinc_taps: SincTaps = "float32") -> np.ndarray:
    """``interp23tap(image, ratio)`` on a window of the low-resolution image, from the image's values at the
    positions :func:`exp_halo_support` gives: the same values as the whole-image computation, for tile-wise
    evaluation.

    Parameters
    ----------
    low : ndarray, shape (r, c) or (r, c, B)
        The image's values at ``exp_halo_support(*rows_lr, shape_lr[0], ratio)`` (rows) and
        ``exp_halo_support(*cols_lr, shape_lr[1], ratio)`` (columns).
    rows_lr, cols_lr : (int, int)
        The window's half-open low-resolution row and column ranges.
    shape_lr : (int, int)
        The whole low-resolution image's rows and columns.
    ratio : int
        A power of two or 6.
    sinc_taps : {"float32", "float64"}, default "float32"
        Ratio 6 only: the x3 taps' precision (:func:`sinc3_taps`).

    Returns
    -------
    ndarray, shape (ratio * rows, ratio * cols) or (ratio * rows, ratio * cols, B), float64
        The upsampled window (``rows``, ``cols``: the window's low-resolution size).

    Examples
    --------
    >>> img = np.random.default_rng(1).random((40, 36))
    >>> r, c = exp_halo_support(5, 9, 40, 6), exp_halo_support(30, 36, 36, 6)
    >>> win = exp_halo_window(img[np.ix_(r, c)], (5, 9), (30, 36), (40, 36), 6)
    >>> bool(np.array_equal(win, interp23tap(img, 6)[30:54, 180:216]))
    True
    """
    arr = np.asarray(low, dtype=np.float64)
    bands = arr[:, :, None] if arr.ndim == 2 else arr
    (r0, r1), (c0, c1) = rows_lr, cols_lr
    m = EXP_HALO_LR
    if ratio == 6:
        check_sinc3_size(shape_lr)
        taps = sinc3_taps(precision=sinc_taps)
        rows, cols = _sinc3_plan(r0, r1, shape_lr[0]), _sinc3_plan(c0, c1, shape_lr[1])
        r_sup, c_sup = exp_halo_support(r0, r1, shape_lr[0], 6), exp_halo_support(c0, c1, shape_lr[1], 6)
        out = np.empty((6 * (r1 - r0), 6 * (c1 - c0), bands.shape[2]))
        for b in range(bands.shape[2]):
            x3 = _sinc3_plane(bands[:, :, b], rows, cols, taps, r_sup, c_sup)
            up = _upsample2_axis(_upsample2_axis(x3, 0, samples_at_odd=True), 1, samples_at_odd=True)
            out[:, :, b] = up[2 * m : 2 * m + 6 * (r1 - r0), 2 * m : 2 * m + 6 * (c1 - c0)]
    else:
        up = interp23tap(bands, ratio)
        out = up[m * ratio : (m + r1 - r0) * ratio, m * ratio : (m + c1 - c0) * ratio]
    return out[:, :, 0] if arr.ndim == 2 else out


def _cubic(x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    ax2, ax3 = ax * ax, ax * ax * ax
    return (1.5 * ax3 - 2.5 * ax2 + 1.0) * (ax <= 1) + (-0.5 * ax3 + 2.5 * ax2 - 4.0 * ax + 2.0) * (
        (ax > 1) & (ax <= 2)
    )


@functools.lru_cache(maxsize=64)
def resize_matrix(in_len: int, scale: float) -> sparse.csr_matrix:
    """Sparse (out_len, in_len) weight matrix of MATLAB's bicubic ``imresize`` along one axis
    (antialiased when shrinking; samples outside mirrored, edge repeated; mirrored duplicates
    summed). :func:`imresize` and the device backend apply it.

    Parameters
    ----------
    in_len : int
        Input length (samples).
    scale : float
        Scale factor (``1/4`` shrinks by 4).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (ceil(in_len * scale), in_len)

    Examples
    --------
    >>> resize_matrix(8, 0.5).shape
    (4, 8)
    """
    from scipy import sparse

    out_len = int(np.ceil(in_len * scale))
    width = 4.0
    if scale < 1:
        kernel = lambda t: scale * _cubic(scale * t)  # noqa: E731 - antialiasing stretch
        width = width / scale
    else:
        kernel = _cubic
    x = np.arange(1, out_len + 1, dtype=np.float64)
    u = x / scale + 0.5 * (1.0 - 1.0 / scale)
    left = np.floor(u - width / 2.0)
    taps = int(np.ceil(width)) + 2
    idx = left[:, None] + np.arange(taps)[None, :]
    w = kernel(u[:, None] - idx)
    w = w / w.sum(axis=1, keepdims=True)
    aux = np.concatenate([np.arange(1, in_len + 1), np.arange(in_len, 0, -1)])
    idx0 = aux[np.mod(idx - 1, aux.size).astype(np.int64)] - 1
    # sparse (each output sample has ceil(width) + 2 taps); duplicates from mirroring are summed
    return sparse.csr_matrix(
        (w.ravel(), (np.repeat(np.arange(out_len), taps), idx0.ravel())), shape=(out_len, in_len)
    )


def imresize(image: np.ndarray, scale: float) -> np.ndarray:
    """MATLAB ``imresize(I, scale)`` with the default bicubic kernel and antialiasing.

    Rows are resized first, then columns; output size ``ceil(n*scale)``; out-of-range samples are
    mirrored symmetrically (edge pixel repeated). Computed in float64 (as the toolbox does on
    double images; no rounding to the input's integer class).

    Parameters
    ----------
    image : ndarray, shape (H, W) or (H, W, B)
        The image (any dtype; computed in float64).
    scale : float
        Scale factor, e.g. ``1/4`` to shrink by 4.

    Returns
    -------
    ndarray, float64, shape (ceil(H*scale), ceil(W*scale)[, B])

    References
    ----------
    Keys, IEEE TASSP 29(6), 1981; MATLAB Image Processing Toolbox ``imresize`` documentation.
    """
    arr = np.asarray(image, dtype=np.float64)
    if arr.ndim not in (2, 3):
        raise ShapeError(f"image must be (H, W) or (H, W, B), got shape {arr.shape}")
    if not scale > 0:
        raise SettingError(f"scale must be positive, got {scale!r}")
    rows = resize_matrix(arr.shape[0], float(scale))
    cols = resize_matrix(arr.shape[1], float(scale))
    h, w = arr.shape[:2]
    rest = arr.shape[2:]
    tmp = rows @ arr.reshape(h, -1)  # rows first, as MATLAB (scales are equal)
    tmp = tmp.reshape((rows.shape[0], w) + rest)
    tmp = np.moveaxis(tmp, 1, 0).reshape(w, -1)
    out = (cols @ tmp).reshape((cols.shape[0], rows.shape[0]) + rest)
    return np.ascontiguousarray(np.moveaxis(out, 0, 1))


def _half_shift_axis0(x: np.ndarray) -> np.ndarray:
    """``out[i] = x(i - 1/2)`` along axis 0 by the 12 polyphase taps of the 23-tap filter, zeros outside."""
    n = x.shape[0]
    ext = np.concatenate([np.zeros((6,) + x.shape[1:]), x, np.zeros((5,) + x.shape[1:])])
    out = ext[0:n] * _POLYPHASE[0]
    for t in range(1, _POLYPHASE.size):
        out += ext[t : t + n] * _POLYPHASE[t]
    return out


def _integer_shift_axis0(x: np.ndarray, k: int) -> np.ndarray:
    """``out[i] = x[i - k]`` along axis 0, zeros outside."""
    out = np.zeros_like(x)
    n = x.shape[0]
    if abs(k) < n:
        if k >= 0:
            out[k:] = x[: n - k]
        else:
            out[: n + k] = x[-k:]
    return out


def fineshift(image: np.ndarray, shift_r: int, shift_c: int) -> np.ndarray:
    """Shift an image by half-pixel steps with the 23-tap interpolator (Sentinel-2 code's ``fineshift``).

    ``out[i, j] = image(i - shift_r/2, j - shift_c/2)``: an odd step interpolates the half pixel
    with the 12 polyphase taps of the 23-tap EXP filter (``out[i] = sum_t p_t x[i + t - 6]``, so
    that ``out[i]`` is the value at ``i - 1/2``), then the integer part ``floor(shift/2)`` moves the
    samples; both with zeros outside the image (the code's zero-padded 'same' convolutions). The code
    applies the half-pixel kernel in 2-D (outer product of the taps); here rows then columns (the same
    sums in another order). ``fineshift(x, 1, 1)`` is the Sentinel-2 full-resolution protocol's
    half-pixel shift before its ``[1::ratio]`` decimation. The code's 5x5 integer kernel limits it to
    ``|floor(shift/2)| <= 2``; any integer works here.

    Parameters
    ----------
    image : ndarray, shape (H, W) or (H, W, B)
        Any real dtype; computed in float64.
    shift_r, shift_c : int
        Shifts along rows and columns, in half pixels (positive: content moves down / right).

    Returns
    -------
    ndarray, same shape, float64

    References
    ----------
    Ciotola et al., Remote Sensing 17(12):1983, 2025, doi:10.3390/rs17121983 (code
    ``Metrics/coregistration.py``); Aiazzi et al., IEEE TGRS 40(10), 2002 (23-tap filter).

    Examples
    --------
    >>> ramp = np.tile(np.arange(40.0)[:, None], (1, 30))
    >>> round(float(fineshift(ramp, 1, 0)[20, 10]), 6)  # the 12 taps sum to 1 - 4e-10
    19.5
    """
    arr = np.asarray(image, dtype=np.float64)
    if arr.ndim not in (2, 3):
        raise ShapeError(f"image must be (H, W) or (H, W, B), got shape {arr.shape}")
    shifts = []
    for name, value in (("shift_r", shift_r), ("shift_c", shift_c)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise SettingError(f"{name} must be an integer number of half pixels, got {value!r}")
        shifts.append(int(value))
    out = arr
    if shifts[0] % 2:
        out = _half_shift_axis0(out)
    if shifts[1] % 2:
        out = np.swapaxes(_half_shift_axis0(np.swapaxes(out, 0, 1)), 0, 1)
    out = _integer_shift_axis0(out, shifts[0] // 2)
    out = np.swapaxes(_integer_shift_axis0(np.swapaxes(out, 0, 1), shifts[1] // 2), 0, 1)
    return np.ascontiguousarray(out)

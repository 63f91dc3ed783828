"""Indexes of the reprojected full-resolution protocol: R-Q2n, R-Q, R-SAM, R-ERGAS, D_rho, and
Khan's D_lambda at MS scale.

Protocol: G. Scarpa, M. Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote
Sensing 14(8):1808, 2022, doi:10.3390/rs14081808 (facts in ``fullres2022.md``). The fused image is
filtered with the sensor's MTF-matched kernels (:mod:`.kernels`), decimated per band at the phase
found by coregistration (:mod:`.coregistration`) and compared with the real MS (R-indexes, the MS is
the reference); D_rho measures the local correlation of every fused band with the PAN.

Everything is float64. The low-level functions ``q2n_index``, ``uiqi_index``, ``sam_index`` and
``ergas_index`` take two MS-scale images; ``r_*`` take the full-resolution triple.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pansharp_iqa.hypercomplex import block_q_values

from ._common import as_image, as_pan, input_error, resolve_inputs
from ..parallel import n_threads as n_workers
from ..parallel import parallel_map
from .coregistration import coregister
from .correlation import IntegralMethod, field_parts, mean_one_minus_rho, rho_from_sums
from .filtering import reproject
from .kernels import reprojection_kernels

__all__ = [
    "Q2N_STD_FLOOR",
    "q2n_index",
    "uiqi_index",
    "sam_index",
    "ergas_index",
    "reprojected_image",
    "r_q2n",
    "r_q",
    "r_sam",
    "r_ergas",
    "d_rho",
    "d_lambda_k_ms",
]

#: Replacement for a zero block standard deviation in the protocol's Q2n (toolbox: eps).
Q2N_STD_FLOOR = 1e-10


def _pair(reference: Any, fused: Any) -> tuple[np.ndarray, np.ndarray]:
    ref = as_image(reference, "reference")
    fus = as_image(fused, "fused")
    if ref.shape != fus.shape:
        raise input_error(f"reference and fused must have the same shape, got {ref.shape} and {fus.shape}")
    return ref, fus


def _to_int16_truncated(a: np.ndarray) -> np.ndarray:
    # float -> int16 by truncation toward zero, wrapping outside the int16 range (two's complement).
    return np.trunc(a).astype(np.int64).astype(np.int16).astype(np.float64)


def q2n_layout(h: int, w: int, block_size: int, shift: int) -> tuple[int, int, int, int, bool]:
    """Block grid of the protocol's Q2n on an ``h x w`` image.

    Returns
    -------
    stepx, stepy : int
        Block rows and columns (``ceil(h/shift)``, ``ceil(w/shift)``).
    est1, est2 : int
        ``(stepx-1)*shift + block_size - h`` and the same on the columns.
    padded : bool
        Whether both images are reflect-padded and cast to int16 (only if both ``est`` are non-zero).
    """
    stepx, stepy = math.ceil(h / shift), math.ceil(w / shift)
    est1 = (stepx - 1) * shift + block_size - h
    est2 = (stepy - 1) * shift + block_size - w
    return stepx, stepy, est1, est2, bool(est1 != 0 and est2 != 0)


def reflect_index(idx: np.ndarray, n: int) -> np.ndarray:
    """Positions that NumPy's ``"reflect"`` padding (mirror without repeating the edge) reads.

    Parameters
    ----------
    idx : ndarray of int
        Positions along one axis, possibly outside ``[0, n)``.
    n : int
        Length of the axis.

    Returns
    -------
    ndarray of int
        Positions in ``[0, n)`` (``n -> n-2``, ``-1 -> 1``; periodic with period ``2(n-1)``).
    """
    i = np.asarray(idx, dtype=np.int64)
    if n == 1:
        return np.zeros_like(i)
    period = 2 * (n - 1)
    m = np.mod(i, period)
    return np.where(m >= n, period - m, m)


def to_int16_truncated(a: np.ndarray) -> np.ndarray:
    """The protocol's Q2n cast: truncation toward zero to int16 (wrapping), returned as float64."""
    return _to_int16_truncated(a)


def q2n_block_values(
    ref: np.ndarray, fus: np.ndarray, stepx: int, stepy: int, *, block_size: int, shift: int
) -> np.ndarray:
    """Per-block hypercomplex moduli of the protocol's Q2n on a grid of blocks starting at (0, 0).

    ``ref`` and ``fus`` are already padded/cast as :func:`q2n_index` does; block ``(j, i)`` covers
    rows ``j*shift .. j*shift + block_size - 1`` (cut at the end of the arrays: a partial block keeps
    ``N = block_size**2``). Bands are zero-padded to a power of two here.

    Returns
    -------
    ndarray, shape (stepx, stepy)
    """
    bs, sh = int(block_size), int(shift)
    n_bands = ref.shape[2]
    n_comp = 1 << max(0, (n_bands - 1).bit_length())
    if n_comp != n_bands:
        zeros = np.zeros(ref.shape[:2] + (n_comp - n_bands,))
        ref = np.concatenate([ref, zeros], axis=2)
        fus = np.concatenate([fus, zeros], axis=2)
    # Group the blocks by their actual shape (partial blocks at the end of a row/column).
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for j in range(stepx):
        for i in range(stepy):
            r0, c0 = j * sh, i * sh
            nr = min(bs, ref.shape[0] - r0)
            nc = min(bs, ref.shape[1] - c0)
            groups.setdefault((nr, nc), []).append((j, i))
    values = np.empty((stepx, stepy))
    for (nr, nc), idx in groups.items():
        rb = np.stack([ref[j * sh : j * sh + nr, i * sh : i * sh + nc].reshape(-1, n_comp) for j, i in idx])
        fb = np.stack([fus[j * sh : j * sh + nr, i * sh : i * sh + nc].reshape(-1, n_comp) for j, i in idx])
        q = block_q_values(rb, fb, n_norm=bs * bs, std_floor=Q2N_STD_FLOOR)
        for (j, i), v in zip(idx, q):
            values[j, i] = v
    return values


def q2n_index(
    reference: np.ndarray,
    fused: np.ndarray,
    *,
    block_size: int = 32,
    shift: int = 32,
    return_blocks: bool = False,
) -> float | tuple[float, np.ndarray]:
    """Q2n as computed by the protocol's reference code (blocks of the MS-scale images).

    Rules (protocol facts section 6): ``stepx = ceil(h/shift)``, ``est1 = (stepx-1)*shift +
    block_size - h`` (likewise ``est2`` on the columns). **Only if both** ``est1`` and ``est2`` are
    non-zero, both images are padded at the bottom/right with NumPy ``"reflect"`` (mirror without
    repeating the edge) and cast to int16 by truncation toward zero (wrapping outside int16);
    otherwise float values are used as they are, and if exactly one is non-zero the last block
    row/column is partial but keeps ``N = block_size**2`` in the ``N/(N-1)`` factors. Bands are
    zero-padded to a power of two; per block the toolbox's hypercomplex Q with a zero standard
    deviation replaced by 1e-10; the index is the mean block modulus.

    Parameters
    ----------
    reference, fused : array_like, shape (h, w, B)
        Reference (the MS) and the image under test (DN).
    block_size, shift : int
        Block side and step (pixels).
    return_blocks : bool
        Also return the per-block moduli, shape ``(n_block_rows, n_block_cols)``.

    Returns
    -------
    float
        Q2n (dimensionless, 1 = identical).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808; Garzelli &
    Nencini, IEEE GRSL 6(4), 2009 (Q2n).
    """
    ref, fus = _pair(reference, fused)
    bs, sh = int(block_size), int(shift)
    if bs < 2 or sh < 1:
        raise input_error(f"block_size must be >= 2 and shift >= 1, got {block_size!r}, {shift!r}")
    h, w, _ = ref.shape
    stepx, stepy, est1, est2, padded = q2n_layout(h, w, bs, sh)
    if padded:
        pad = ((0, max(est1, 0)), (0, max(est2, 0)), (0, 0))
        ref = _to_int16_truncated(np.pad(ref, pad, mode="reflect"))
        fus = _to_int16_truncated(np.pad(fus, pad, mode="reflect"))
    values = q2n_block_values(ref, fus, stepx, stepy, block_size=bs, shift=sh)
    result = float(values.mean())
    return (result, values) if return_blocks else result


def _window_sums(a: np.ndarray, size: int) -> np.ndarray:
    # Sums over size x size windows of a (H, W, B) array, valid positions, float64, separable.
    c = np.zeros((a.shape[0] + 1,) + a.shape[1:])
    np.cumsum(a, axis=0, out=c[1:])
    rows = c[size:] - c[:-size]
    c2 = np.zeros((rows.shape[0], rows.shape[1] + 1) + rows.shape[2:])
    np.cumsum(rows, axis=1, out=c2[:, 1:])
    return c2[:, size:] - c2[:, :-size]


def uiqi_valid_map(x: np.ndarray, y: np.ndarray, block_size: int) -> np.ndarray:
    """UIQI of every valid ``block_size`` window of two already-extended images (R-Q's map).

    Parameters
    ----------
    x, y : ndarray, shape (H, W, B), float64
        Reference and image under test, including any border extension.
    block_size : int

    Returns
    -------
    ndarray, shape (H - block_size + 1, W - block_size + 1, B)
    """
    bs = int(block_size)
    n = float(bs * bs)
    sx = _window_sums(x, bs)
    sy = _window_sums(y, bs)
    sxx = _window_sums(x * x, bs)
    syy = _window_sums(y * y, bs)
    sxy = _window_sums(x * y, bs)
    prod = sx * sy
    sq = sx * sx + sy * sy
    num = 4.0 * (n * sxy - prod) * prod
    d1 = n * (sxx + syy) - sq
    den = d1 * sq
    qmap = np.ones_like(num)
    sel = (d1 == 0) & (sq != 0)
    qmap[sel] = 2.0 * prod[sel] / sq[sel]
    sel = den != 0
    qmap[sel] = num[sel] / den[sel]
    return qmap


def uiqi_index(
    reference: np.ndarray,
    fused: np.ndarray,
    *,
    block_size: int = 32,
    return_map: bool = False,
) -> float | tuple[float, np.ndarray]:
    """Mean over bands of the UIQI map, with the protocol's window placement (R-Q).

    Per band, from ``block_size x block_size`` window sums (``N = block_size**2``):
    ``num = 4 (N Sxy - Sx Sy) Sx Sy``, ``d1 = N (Sxx + Syy) - Sx^2 - Sy^2``, ``d2 = Sx^2 + Sy^2``;
    ``Q = num/(d1 d2)`` where ``d1 d2 != 0``, ``2 Sx Sy / d2`` where ``d1 == 0`` and ``d2 != 0``, else 1.
    The map is ``(h - block_size + 2) x (w - block_size + 2)`` (``(h-30) x (w-30)`` for 32):
    entry ``(k, l)`` sums rows ``k..k+block_size-1``; the last row/column of windows reaches one row
    past the image, where the edge row/column is repeated (the reference's SciPy "reflect" border).

    Parameters
    ----------
    reference, fused : array_like, shape (h, w, B)
        Images at MS scale (DN); symmetric in its arguments.
    block_size : int
        Even window side (pixels), ``2 <= block_size <= min(h, w) + 1``.
    return_map : bool
        Also return the ``(h-bs+2, w-bs+2, B)`` map.

    Returns
    -------
    float
        Mean of the map over pixels and bands (dimensionless, in [-1, 1]).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808; Wang & Bovik,
    IEEE SPL 9(3), 2002 (UIQI).
    """
    ref, fus = _pair(reference, fused)
    bs = int(block_size)
    if bs < 2 or bs % 2:
        raise input_error(f"block_size must be an even integer >= 2, got {block_size!r}")
    if bs > min(ref.shape[:2]) + 1:
        raise input_error(
            f"block_size {bs} too large for images of {ref.shape[:2]} (at most min(h, w) + 1)"
        )
    x = np.pad(ref, ((0, 1), (0, 1), (0, 0)), mode="edge")
    y = np.pad(fus, ((0, 1), (0, 1), (0, 0)), mode="edge")
    qmap = uiqi_valid_map(x, y, bs)
    value = float(np.mean(qmap.mean(axis=(0, 1))))
    return (value, qmap) if return_map else value


def sam_angles(ref: np.ndarray, fus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel spectral angles (radians, 0 where ``|x| |m| = 0``) and the mask of defined pixels.

    Parameters
    ----------
    ref, fus : ndarray, shape (h, w, B), float64

    Returns
    -------
    angles : ndarray, shape (h, w)
    valid : ndarray of bool, shape (h, w)
    """
    inner = np.einsum("ijb,ijb->ij", fus, ref)
    norms = np.sqrt(np.einsum("ijb,ijb->ij", fus, fus)) * np.sqrt(np.einsum("ijb,ijb->ij", ref, ref))
    valid = norms != 0
    angles = np.zeros(inner.shape)
    angles[valid] = np.arccos(np.clip(inner[valid] / norms[valid], -1.0, 1.0))
    return angles, valid


def sam_index(reference: np.ndarray, fused: np.ndarray, *, return_map: bool = False) -> float | tuple[float, np.ndarray]:
    """Spectral Angle Mapper with the protocol's zero handling (R-SAM), in degrees.

    Per pixel ``arccos(clip(<x, m> / (|x| |m|), -1, 1))``; pixels with ``|x| |m| = 0`` contribute 0
    but **are counted** in the denominator (sum over valid pixels / number of all pixels); the
    toolbox drops them instead. A perfect match gives ~1e-7 to 1e-6 deg (arccos of a rounded cosine).

    Parameters
    ----------
    reference, fused : array_like, shape (h, w, B)
    return_map : bool
        Also return the (h, w) angle map in degrees (0 where undefined).

    Returns
    -------
    float
        Mean spectral angle (degrees).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    ref, fus = _pair(reference, fused)
    angles, valid = sam_angles(ref, fus)
    value = float(angles[valid].sum() / angles.size * 180.0 / np.pi)
    return (value, np.degrees(angles)) if return_map else value


def ergas_index(reference: np.ndarray, fused: np.ndarray, *, ratio: int) -> float:
    """ERGAS with the reference as the MS (R-ERGAS).

    ``100/ratio * sqrt((1/B) sum_b MSE_b / mean(reference_b)^2)``.

    Parameters
    ----------
    reference, fused : array_like, shape (h, w, B)
    ratio : int
        PAN/MS scale ratio (integer).

    Returns
    -------
    float
        ERGAS (dimensionless, 0 = identical).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808; Wald, 2002.
    """
    ref, fus = _pair(reference, fused)
    if isinstance(ratio, bool) or int(ratio) != ratio or int(ratio) < 1:
        raise input_error(f"ratio must be a positive integer, got {ratio!r}")
    diff = fus - ref
    mse = np.mean(diff * diff, axis=(0, 1))
    mu = np.mean(ref, axis=(0, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 100.0 / int(ratio) * np.sqrt(np.mean(mse / (mu * mu)))
    return float(value)


def reprojected_image(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray | None,
    *,
    sensor: Any,
    ratio: int | None = None,
    shifts: Sequence[Sequence[int]] | np.ndarray | None = None,
    integral: IntegralMethod = "ordered",
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Reprojection of the fused image onto the MS grid (filter, coregister, decimate).

    Parameters
    ----------
    fused : array_like, shape (H, W, B)
        Fused image at PAN scale (DN).
    ms : array_like, shape (H/ratio, W/ratio, B)
        Original MS (DN).
    pan : array_like, shape (H, W), or None
        PAN (DN); needed unless ``shifts`` is given.
    sensor : str or Sensor
        Registry sensor giving one MS GNyq per band.
    ratio : int, optional
        Default: the sensor's ratio, else the PAN/MS size ratio.
    shifts : array_like, shape (B, 2), optional
        Per-band ``(r_b, c_b)``; default: :func:`~pansharp_iqa.reprojected.coregistration.coregister`.
    integral : {"ordered", "opencv"}
        Integral-image order in the coregistration's correlation field.

    Returns
    -------
    x : ndarray, shape (h, w, B), float64
        Reprojected fused image (DN).
    ms : ndarray, shape (h, w, B), float64
        The MS as float64.
    info : dict
        ``shifts`` (B, 2) int array, ``gnyq`` tuple, ``ratio``, ``sensor`` (name), ``kernels``.
    """
    inp = resolve_inputs(fused, ms, pan, sensor=sensor, ratio=ratio, need_pan=shifts is None)
    kernels = reprojection_kernels(inp.gnyq, inp.ratio)
    if shifts is None:
        assert inp.pan is not None
        sh = coregister(inp.ms, inp.pan, kernels[:, :, 0], inp.ratio, integral=integral)
    else:
        sh = np.asarray(shifts, dtype=np.int64).reshape(-1, 2)
        if sh.shape[0] != inp.ms.shape[2]:
            raise input_error(
                f"shifts must hold one (r, c) pair per band: {inp.ms.shape[2]} bands, got {sh.shape[0]}"
            )
    x = reproject(inp.fused, kernels, inp.ratio, sh)
    info = {"shifts": sh, "gnyq": inp.gnyq, "ratio": inp.ratio, "sensor": inp.sensor, "kernels": kernels}
    return x, inp.ms, info


def r_q2n(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: Any,
    ratio: int | None = None,
    shifts: Any = None,
    block_size: int = 32,
    shift: int = 32,
) -> float:
    """R-Q2n: Q2n of the reprojected fused image against the MS (Scarpa & Ciotola 2022).

    Parameters
    ----------
    fused : array_like, shape (H, W, B)
        Fused image (DN).
    ms : array_like, shape (H/ratio, W/ratio, B)
        MS (DN); the reference.
    pan : array_like, shape (H, W)
        PAN (DN), for the coregistration (ignored when ``shifts`` is given).
    sensor : str or Sensor
        Registry sensor (MS GNyq per band).
    ratio : int, optional
        Default: sensor ratio, else PAN/MS size ratio.
    shifts : array_like, shape (B, 2), optional
        Precomputed per-band phases.
    block_size, shift : int
        Q2n blocks (32, 32 in the protocol).

    Returns
    -------
    float
        R-Q2n (dimensionless, 1 = perfect).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    x, m, _ = reprojected_image(fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts)
    return float(q2n_index(m, x, block_size=block_size, shift=shift))  # type: ignore[arg-type]


def r_q(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: Any,
    ratio: int | None = None,
    shifts: Any = None,
    block_size: int = 32,
) -> float:
    """R-Q: mean UIQI of the reprojected fused image against the MS (see :func:`uiqi_index`).

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, shifts
        As in :func:`r_q2n`.
    block_size : int
        UIQI window (32).

    Returns
    -------
    float
        R-Q (dimensionless, 1 = perfect).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    x, m, _ = reprojected_image(fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts)
    return float(uiqi_index(m, x, block_size=block_size))  # type: ignore[arg-type]


def r_sam(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: Any,
    ratio: int | None = None,
    shifts: Any = None,
) -> float:
    """R-SAM (degrees) of the reprojected fused image against the MS (see :func:`sam_index`).

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, shifts
        As in :func:`r_q2n`.

    Returns
    -------
    float
        Mean spectral angle in degrees (0 = perfect, ~1e-6 floor).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    x, m, _ = reprojected_image(fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts)
    return float(sam_index(m, x))  # type: ignore[arg-type]


def r_ergas(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: Any,
    ratio: int | None = None,
    shifts: Any = None,
) -> float:
    """R-ERGAS of the reprojected fused image against the MS (see :func:`ergas_index`).

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, shifts
        As in :func:`r_q2n`.

    Returns
    -------
    float
        R-ERGAS (dimensionless, 0 = perfect).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    x, m, info = reprojected_image(fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts)
    return float(ergas_index(m, x, ratio=info["ratio"]))


def d_rho_half_width(ratio: int) -> int:
    """D_rho half width ``ceil(ratio/2)`` (``sigma = ratio`` as in the reference ``main.py``)."""
    return int(math.ceil(int(ratio) / 2))


def d_rho(
    fused: np.ndarray,
    pan: np.ndarray,
    *,
    ratio: int,
    half_width: int | None = None,
    integral: IntegralMethod = "ordered",
    return_map: bool = False,
) -> float | tuple[float, np.ndarray]:
    """D_rho: mean of ``1 - rho`` between every fused band and the PAN (Scarpa & Ciotola 2022).

    ``rho`` is the local cross-correlation field (:func:`~pansharp_iqa.reprojected.correlation.
    local_cross_correlation`) of each fused band (PAN scale, unfiltered) with the PAN, half width
    ``ceil(ratio/2)`` (window ratio x ratio for even ratios), clipped to [-1, 1]; D_rho is one
    global mean over all pixels (borders included) and bands. Sensor-independent; invariant to a
    positive gain on the fused image; 0 when every band equals the PAN; in [0, 2].

    Parameters
    ----------
    fused : array_like, shape (H, W, B)
        Fused image (DN).
    pan : array_like, shape (H, W)
        PAN (DN).
    ratio : int
        PAN/MS scale ratio (sets the window).
    half_width : int, optional
        Override the half width.
    integral : {"ordered", "opencv"}
        Integral-image summation order.
    return_map : bool
        Also return the (H, W, B) map of ``1 - rho``.

    Returns
    -------
    float
        D_rho (dimensionless, 0 = perfect spatial consistency).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    fus = as_image(fused, "fused")
    pan_a = as_pan(pan, "pan")
    if fus.shape[:2] != pan_a.shape:
        raise input_error(
            f"fused must have the PAN's height and width: fused {fus.shape[:2]}, pan {pan_a.shape}"
        )
    if isinstance(ratio, bool) or int(ratio) != ratio or int(ratio) < 1:
        raise input_error(f"ratio must be a positive integer, got {ratio!r}")
    w = d_rho_half_width(int(ratio)) if half_width is None else int(half_width)
    if w < 1:
        raise input_error(f"half_width must be >= 1, got {half_width!r}")
    if not return_map:
        return float(mean_one_minus_rho(fus, pan_a, w, integral=integral))
    xs = np.ascontiguousarray(np.moveaxis(fus, -1, 0))
    del fus
    workers = n_workers()
    parts = field_parts(xs, pan_a, w, integral=integral, workers=workers)

    def finish(item: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        sxy, sxx = item
        rho = rho_from_sums(sxy, sxx, parts.syy)
        np.clip(rho, -1.0, 1.0, out=rho)
        np.subtract(1.0, rho, out=rho)
        return rho

    maps = parallel_map(finish, parts.chunks, workers)
    total = sum(float(m.sum()) for m in maps)
    count = sum(m.size for m in maps)
    value = total / count
    if return_map:
        return value, np.ascontiguousarray(np.moveaxis(np.concatenate(maps, axis=0), 0, -1))
    return value


def d_lambda_k_ms(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray | None = None,
    *,
    sensor: Any,
    ratio: int | None = None,
    shifts: Any = None,
    block_size: int = 32,
) -> float:
    """Khan's spectral distortion at MS scale: ``1 - Q2n(MS, MTF(F) decimated)``.

    The fused image is filtered with the protocol's MTF-matched kernels and decimated onto the MS
    grid, then compared with the MS by the protocol's Q2n (:func:`q2n_index`, MS as reference).
    The decimation phase per band is ``shifts`` if given, else the coregistration's when ``pan`` is
    given (then this equals ``1 - R-Q2n``), else the toolbox's Wald offset ``ratio // 2`` for every
    band. Differences from the toolbox's ``D_lambda_K`` (``1 - Q2n(EXP(MS), MTF(F))`` at **PAN**
    scale, toolbox kernel, uint16 cast) and from Lambda-PNN's ``ReproDLambdaKhan`` (power-of-two
    replication padding, rounding, half-pixel shifts) are in ``docs/reprojected.md``.

    Parameters
    ----------
    fused : array_like, shape (H, W, B)
        Fused image (DN).
    ms : array_like, shape (H/ratio, W/ratio, B)
        MS (DN).
    pan : array_like, shape (H, W), optional
        PAN for the coregistration.
    sensor : str or Sensor
        Registry sensor (MS GNyq per band).
    ratio : int, optional
        Default: sensor ratio, else PAN/MS size ratio.
    shifts : array_like, shape (B, 2), optional
        Explicit per-band phases.
    block_size : int
        Q2n block (and shift).

    Returns
    -------
    float
        D_lambda_K at MS scale (dimensionless, 0 = no spectral distortion).

    References
    ----------
    M. M. Khan, L. Alparone, J. Chanussot, IEEE TGRS 47(11), 2009 (D_lambda_K); G. Scarpa,
    M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808 (reprojection).
    """
    inp = resolve_inputs(fused, ms, pan, sensor=sensor, ratio=ratio, need_pan=False)
    if shifts is None and pan is None:
        shifts = np.full((inp.ms.shape[2], 2), inp.ratio // 2, dtype=np.int64)
    x, m, _ = reprojected_image(inp.fused, inp.ms, inp.pan, sensor=inp.sensor_obj, ratio=inp.ratio, shifts=shifts)
    return 1.0 - float(q2n_index(m, x, block_size=block_size, shift=block_size))  # type: ignore[arg-type]

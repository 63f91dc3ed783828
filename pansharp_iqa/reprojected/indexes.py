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
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ..indexes.ergas import ergas, ergas_from_sums, ergas_sums
from ..indexes.q2n import REPROJECTED_STD_FLOOR, q2n, q2n_grid_values
from ..indexes.sam import sam, sam_from_sums, sam_sums
from ..indexes.uiqi import edge_extended_q, q_index
from ..parallel import n_threads as n_workers
from ..parallel import parallel_map
from ..validation import ShapeError, as_image, check_block_size, check_choice, check_ratio, image_and_pan
from .coregistration import coregister
from .correlation import IntegralMethod, field_parts, mean_one_minus_max_rho, mean_one_minus_rho, rho_from_sums
from .filtering import reproject
from .inputs import ResolvedInputs, band_planes, resolve_inputs
from .kernels import reprojection_kernels

__all__ = [
    "R_INDEXES",
    "reprojected_values",
    "reprojected_image",
    "r_q2n",
    "r_q",
    "r_sam",
    "r_ergas",
    "d_rho",
    "d_rho_half_width",
    "d_lambda_k_ms",
    "q2n_index",
    "uiqi_index",
    "sam_index",
    "ergas_index",
]

#: The reprojection indexes, in report order.
R_INDEXES = ("R-Q2n", "R-Q", "R-SAM", "R-ERGAS")


def reprojected_values(ms: np.ndarray, x: np.ndarray, ratio: int, *, indexes: Sequence[str] = R_INDEXES,
                       block_size: int = 32, shift: int = 32) -> dict[str, float]:
    """R-Q2n, R-Q, R-SAM (degrees) and R-ERGAS of a reprojected image against the MS.

    Each index is the package's own formula with the protocol's conventions as named options:
    Q2n with reflect padding and the int16-truncated cast (:func:`pansharp_iqa.q2n`), Q on
    edge-extended windows (:func:`pansharp_iqa.q_index`), SAM counting zero-norm pixels as 0
    (:func:`pansharp_iqa.sam`), ERGAS (:func:`pansharp_iqa.ergas`). The MS is the reference.

    Parameters
    ----------
    ms, x : ndarray, shape (h, w, B), float64
        MS and reprojected fused image (DN), already validated.
    ratio : int
        For R-ERGAS.
    indexes : sequence of str
        Which of ``R_INDEXES``.
    block_size, shift : int
        Q2n blocks and Q window.

    Returns
    -------
    dict of str to float
    """
    mp, xp = band_planes(ms), band_planes(x)
    out: dict[str, float] = {}
    if "R-Q2n" in indexes:
        blocks = q2n_grid_values(mp, xp, block_size=block_size, shift=shift, cast="int16-truncated",
                                 padding="reflect", std_floor=REPROJECTED_STD_FLOOR, name="ms")
        out["R-Q2n"] = float(blocks.mean())
    if "R-Q" in indexes:
        out["R-Q"] = edge_extended_q(ms, x, block_size, name="ms")[0]
    if "R-SAM" in indexes:
        out["R-SAM"] = sam_from_sums(*sam_sums(mp, xp), zero_norm="zero")
    if "R-ERGAS" in indexes:
        se, tot = ergas_sums(mp, xp)
        out["R-ERGAS"] = ergas_from_sums(se, tot, ms.shape[0] * ms.shape[1], float(ratio))
    return out


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3)


def q2n_index(reference: np.ndarray, fused: np.ndarray, *, block_size: int = 32, shift: int = 32,
              return_blocks: bool = False) -> float | tuple[float, np.ndarray]:
    """Deprecated: ``pansharp_iqa.q2n(reference, fused, cast="int16-truncated", padding="reflect")``.

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Reference (the MS) and reprojected fused image.
    block_size, shift : int
        Q2n blocks and their step.
    return_blocks : bool
        Also return the block values.
    """
    _deprecated("q2n_index", "pansharp_iqa.q2n(..., cast='int16-truncated', padding='reflect')")
    return q2n(reference, fused, block_size=block_size, shift=shift, cast="int16-truncated", padding="reflect",
               return_map=return_blocks)


def uiqi_index(reference: np.ndarray, fused: np.ndarray, *, block_size: int = 32,
               return_map: bool = False) -> float | tuple[float, np.ndarray]:
    """Deprecated: ``pansharp_iqa.q_index(reference, fused, windows="edge-extended")``.

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Reference (the MS) and reprojected fused image.
    block_size : int
        UIQI window side.
    return_map : bool
        Also return the UIQI map.
    """
    _deprecated("uiqi_index", "pansharp_iqa.q_index(..., windows='edge-extended')")
    return q_index(reference, fused, block_size=block_size, windows="edge-extended", return_map=return_map)


def sam_index(reference: np.ndarray, fused: np.ndarray, *,
              return_map: bool = False) -> float | tuple[float, np.ndarray]:
    """Deprecated: ``pansharp_iqa.sam(reference, fused, zero_norm="zero")``.

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Reference (the MS) and reprojected fused image.
    return_map : bool
        Also return the angle map (degrees).
    """
    _deprecated("sam_index", "pansharp_iqa.sam(..., zero_norm='zero')")
    return sam(reference, fused, zero_norm="zero", return_map=return_map)


def ergas_index(reference: np.ndarray, fused: np.ndarray, *, ratio: int) -> float:
    """Deprecated: ``pansharp_iqa.ergas(reference, fused, ratio=ratio)``.

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Reference (the MS) and reprojected fused image.
    ratio : int
        PAN/MS resolution ratio.
    """
    _deprecated("ergas_index", "pansharp_iqa.ergas")
    return ergas(reference, fused, ratio=ratio)


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
    return _reprojected(inp, shifts, integral)


def _reprojected(inp: ResolvedInputs, shifts: Any,
                 integral: IntegralMethod) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """:func:`reprojected_image` on resolved inputs (the PAN needed unless ``shifts`` is given)."""
    kernels = reprojection_kernels(inp.gnyq, inp.ratio)
    if shifts is None:
        assert inp.pan is not None
        sh = coregister(inp.ms, inp.pan, kernels[:, :, 0], inp.ratio, integral=integral)
    else:
        sh = np.asarray(shifts, dtype=np.int64).reshape(-1, 2)
        if sh.shape[0] != inp.ms.shape[2]:
            raise ShapeError(
                f"shifts must hold one (r, c) pair per band: {inp.ms.shape[2]} bands, got {sh.shape[0]}"
            )
    x = reproject(inp.fused, kernels, inp.ratio, sh)
    info = {"shifts": sh, "gnyq": inp.gnyq, "ratio": inp.ratio, "sensor": inp.sensor, "kernels": kernels}
    return x, inp.ms, info


def _r_index(name: str, fused: Any, ms: Any, pan: Any, *, sensor: Any, ratio: Any, shifts: Any,
             block_size: int = 32, shift: int = 32) -> float:
    x, m, info = reprojected_image(fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts)
    return reprojected_values(m, x, info["ratio"], indexes=(name,), block_size=check_block_size(block_size),
                              shift=check_block_size(shift, name="shift", minimum=1))[name]


def r_q2n(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, sensor: Any, ratio: int | None = None,
          shifts: Any = None, block_size: int = 32, shift: int = 32) -> float:
    """R-Q2n: Q2n of the reprojected fused image against the MS (Scarpa & Ciotola 2022).

    Each ``r_*`` function reprojects (and, without ``shifts``, coregisters) on its own; for all
    indexes at once use ``evaluate_full(..., protocol="reprojected2022")``.

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

    Examples
    --------
    The ``r_*`` functions on EXP of the bundled real scene (each one reprojects on its own):

    >>> from pansharp_iqa import interp23tap
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> fused = interp23tap(ms, 4)
    >>> [round(f(fused, ms, pan, sensor="none", ratio=4), 4) for f in (r_q2n, r_q, r_sam, r_ergas)]
    [0.8782, 0.8952, 5.6347, 8.7866]
    """
    return _r_index("R-Q2n", fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts, block_size=block_size,
                    shift=shift)


def r_q(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, sensor: Any, ratio: int | None = None,
        shifts: Any = None, block_size: int = 32) -> float:
    """R-Q: mean UIQI of the reprojected fused image against the MS (edge-extended windows).

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, shifts
        As :func:`r_q2n`.
    block_size : int
        UIQI window side (32 in the protocol).

    Returns
    -------
    float
        R-Q (dimensionless, 1 = perfect).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    return _r_index("R-Q", fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts, block_size=block_size)


def r_sam(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, sensor: Any, ratio: int | None = None,
          shifts: Any = None) -> float:
    """R-SAM (degrees) of the reprojected fused image against the MS (zero-norm pixels count as 0).

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, shifts
        As :func:`r_q2n`.

    Returns
    -------
    float
        Mean spectral angle in degrees (0 = perfect, ~1e-6 floor).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    return _r_index("R-SAM", fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts)


def r_ergas(fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, *, sensor: Any, ratio: int | None = None,
            shifts: Any = None) -> float:
    """R-ERGAS of the reprojected fused image against the MS.

    Parameters
    ----------
    fused, ms, pan, sensor, ratio, shifts
        As :func:`r_q2n`.

    Returns
    -------
    float
        R-ERGAS (dimensionless, 0 = perfect).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    return _r_index("R-ERGAS", fused, ms, pan, sensor=sensor, ratio=ratio, shifts=shifts)


def d_rho_half_width(ratio: int, *, rule: Literal["ceil-half", "floor-half-min4"] = "ceil-half") -> int:
    """D_rho half width: ``ceil(ratio/2)`` (``sigma = ratio`` as in the reprojected protocol's ``main.py``)
    or, with ``rule="floor-half-min4"``, ``max(4, ratio) // 2`` (Sentinel-2 code: 2 at ratio 2, 3 at 6).

    Examples
    --------
    >>> d_rho_half_width(4), d_rho_half_width(2, rule="floor-half-min4"), d_rho_half_width(6, rule="floor-half-min4")
    (2, 2, 3)
    """
    if rule == "floor-half-min4":
        return max(4, int(ratio)) // 2
    check_choice("rule", rule, ("ceil-half", "floor-half-min4"))
    return int(math.ceil(int(ratio) / 2))


def d_rho(
    fused: np.ndarray,
    pan: np.ndarray,
    *,
    ratio: int,
    half_width: int | None = None,
    integral: IntegralMethod = "ordered",
    references: Literal["single", "max"] = "single",
    return_map: bool = False,
) -> float | tuple[float, np.ndarray]:
    """D_rho: mean of ``1 - rho`` between every fused band and the PAN (Scarpa & Ciotola 2022).

    ``rho`` is the local cross-correlation field
    (:func:`~pansharp_iqa.reprojected.local_cross_correlation`) of each fused band (PAN scale,
    unfiltered) with the PAN, half width
    ``ceil(ratio/2)`` (window ratio x ratio for even ratios), clipped to [-1, 1]; D_rho is one
    global mean over all pixels (borders included) and bands. Sensor-independent; invariant to a
    positive gain on the fused image; 0 when every band equals the PAN; in [0, 2].

    With ``references="max"`` the "PAN" is several high-resolution bands (H, W, J) and each fused
    band's field is the maximum over them of ``max(rho_j, -1)`` (Sentinel-2 protocol: the four 10 m
    bands, ``half_width = d_rho_half_width(ratio, rule="floor-half-min4")``,
    ``integral="ordered-wh"``; Ciotola et al., Remote Sensing 17(12):1983, 2025). Its code keeps the
    fields in float32, so its D_rho agrees with this float64 one to about 1e-8.

    Parameters
    ----------
    fused : array_like, shape (H, W, B)
        Fused image (DN).
    pan : array_like, shape (H, W), or (H, W, J) with ``references="max"``
        PAN (DN), or the J reference bands.
    ratio : int
        PAN/MS scale ratio (sets the window).
    half_width : int, optional
        Override the half width.
    integral : {"ordered", "ordered-wh", "opencv"}
        Integral-image summation order.
    references : {"single", "max"}
        One PAN, or the maximum correlation over the bands of ``pan``.
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
    check_choice("references", references, ("single", "max"))
    ratio = check_ratio(ratio, exp=False)
    w = d_rho_half_width(ratio) if half_width is None else check_block_size(half_width, name="half_width", minimum=1)
    if references == "max":
        fus = as_image("fused", fused, allow_2d=True)
        refs = as_image("pan", pan, allow_2d=True)
        if fus.shape[:2] != refs.shape[:2]:
            raise ShapeError(f"fused and pan must have the same height and width: fused {fus.shape[:2]}, "
                             f"pan {refs.shape[:2]}")
        return mean_one_minus_max_rho(fus, refs, w, integral=integral, return_map=return_map)
    fus, pan_a = image_and_pan("fused", fused, "pan", pan)
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
    return total / count, np.ascontiguousarray(np.moveaxis(np.concatenate(maps, axis=0), 0, -1))


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
    grid, then compared with the MS by the protocol's Q2n (reflect padding, int16-truncated cast; MS as
    reference).
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
    x, m, _ = _reprojected(inp, shifts, "ordered")
    return 1.0 - reprojected_values(m, x, inp.ratio, indexes=("R-Q2n",), block_size=check_block_size(block_size),
                                    shift=check_block_size(block_size))["R-Q2n"]

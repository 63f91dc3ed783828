"""The ``"reprojected2022"`` full-resolution protocol: all indexes in one pass.

G. Scarpa, M. Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote Sensing
14(8):1808, 2022, doi:10.3390/rs14081808. Settings of the reference code's ``main.py``: block 32,
shift 32, no border cut (``dim_cut = 0``), D_rho with ``sigma = ratio`` (half width
``ceil(ratio/2)``), coregistration over a fixed 4 x 4 phase window, all in float64 here.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..indexes.catalog import indexes_of
from ..indexes.q2n import REPROJECTED_STD_FLOOR
from .coregistration import coregister, search_window_for
from .correlation import IntegralMethod, mean_one_minus_rho
from .filtering import reproject
from .indexes import d_rho_half_width, reprojected_values
from .inputs import PROTOCOL_NAME, REFERENCE, ResolvedInputs, band_planes, resolve_inputs
from .kernels import KAISER_BETA, KERNEL_SIZE, reprojection_kernels

__all__ = ["PROTOCOL_NAME", "INDEX_NAMES", "SETTINGS", "evaluate_reprojected", "evaluate_resolved"]

#: Keys of the indexes returned by :func:`evaluate_reprojected`.
INDEX_NAMES = tuple(i.name for i in indexes_of(PROTOCOL_NAME, "full"))
#: Fixed settings of the protocol (the reference code's defaults).
SETTINGS: dict[str, Any] = {
    "block_size": 32,
    "shift": 32,
    "dim_cut": 0,
    "search_window": 4,
    "kernel_size": KERNEL_SIZE,
    "kaiser_beta": KAISER_BETA,
    "q2n_std_floor": REPROJECTED_STD_FLOOR,
    "dtype": "float64",
}


def reprojection_details(
    *,
    sensor: str,
    ratio: int,
    gnyq: Any,
    shifts: np.ndarray,
    correlations: Any,
    search_window: int,
    coregistration_half_width: int,
    d_rho_half_width: int,
    integral: str,
) -> dict[str, Any]:
    """The ``details`` dict of :func:`evaluate_reprojected` (without timings)."""
    shifts = np.asarray(shifts, dtype=np.int64).reshape(-1, 2)
    return {
        "protocol": PROTOCOL_NAME,
        "reference": REFERENCE,
        "sensor": sensor,
        "ratio": ratio,
        "ms_gnyq": list(gnyq),
        "shifts": shifts.tolist(),
        "shifts_r": shifts[:, 0].tolist(),
        "shifts_c": shifts[:, 1].tolist(),
        "coregistration_correlations": np.asarray(correlations).tolist(),
        **SETTINGS,
        "search_window": int(search_window),
        "coregistration_half_width": int(coregistration_half_width),
        "coregistration_kernel": "MS kernel of band 0",
        "d_rho_half_width": d_rho_half_width,
        "d_rho_window": 2 * d_rho_half_width,
        "integral": integral,
    }


def evaluate_reprojected(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: Any,
    ratio: int | None = None,
) -> dict[str, Any]:
    """Evaluate a fused image with the reprojected full-resolution protocol.

    The fused image is filtered band by band with the sensor's MTF-matched kernels, decimated at
    the per-band phase found by coregistering the MS with the low-pass PAN, and compared with the
    MS: R-Q2n (block 32, shift 32), R-Q (UIQI, window 32), R-SAM (degrees), R-ERGAS. D_rho measures
    the local correlation of each fused band with the PAN (window ratio x ratio).

    Parameters
    ----------
    fused : array_like, shape (H, W, B)
        Fused image at PAN scale (DN, any real dtype; not modified).
    ms : array_like, shape (H/ratio, W/ratio, B)
        Original MS (DN).
    pan : array_like, shape (H, W)
        PAN (DN).
    sensor : str or Sensor
        Registry sensor; only its per-band MS GNyq (and nominal ratio) are used, so every registry
        sensor works, including those the reference code lacks (the generic ``"none"`` needs
        ``ratio`` or sizes that give it).
    ratio : int, optional
        PAN/MS scale ratio; default the sensor's nominal ratio, else the size ratio.

    Returns
    -------
    dict
        ``"R-Q2n"``, ``"R-Q"``, ``"R-SAM"`` (degrees), ``"R-ERGAS"``, ``"D_rho"`` as Python floats,
        and ``"details"``: per-band ``shifts_r``/``shifts_c`` (lists of int, PAN pixels),
        ``shifts`` (list of [r, c]), ``coregistration_correlations`` (search x search x B nested
        lists), ``ms_gnyq`` (kernels' GNyq, list), ``ratio``, ``sensor``, every setting
        (``block_size`` 32, ``shift`` 32, ``dim_cut`` 0, ``d_rho_half_width``,
        ``coregistration_half_width``, ``search_window``, ``kernel_size``, ``kaiser_beta``,
        ``q2n_std_floor``, ``dtype`` "float64"), ``integral`` order, ``reference`` (citation) and
        ``timings_s`` per step.

    Raises
    ------
    ValueError
        (``pansharp_iqa.InputError``) on inconsistent sizes, band counts, ratio or sensor.

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    t0 = time.perf_counter()
    return evaluate_resolved(resolve_inputs(fused, ms, pan, sensor=sensor, ratio=ratio, need_pan=True), started=t0)


def evaluate_resolved(inp: ResolvedInputs, *, started: float | None = None) -> dict[str, Any]:
    """:func:`evaluate_reprojected` on inputs already validated and resolved (with the PAN)."""
    integral: IntegralMethod = "ordered"
    timings: dict[str, float] = {}
    t0 = time.perf_counter() if started is None else started
    assert inp.pan is not None
    r = inp.ratio
    kernels = reprojection_kernels(inp.gnyq, r)
    t1 = time.perf_counter()
    timings["inputs_kernels"] = t1 - t0
    shifts, coreg = coregister(inp.ms, inp.pan, kernels[:, :, 0], r, integral=integral, return_details=True)
    t2 = time.perf_counter()
    timings["coregistration"] = t2 - t1
    planes = band_planes(inp.fused)
    x = reproject(inp.fused, kernels, r, shifts, planes=planes)
    t3 = time.perf_counter()
    timings["reprojection"] = t3 - t2
    values: dict[str, Any] = reprojected_values(inp.ms, x, r, block_size=SETTINGS["block_size"],
                                                shift=SETTINGS["shift"])
    t4 = time.perf_counter()
    timings["r_indexes"] = t4 - t3
    hw = d_rho_half_width(r)
    values["D_rho"] = float(mean_one_minus_rho(inp.fused, inp.pan, hw, integral=integral, planes=planes))
    t5 = time.perf_counter()
    timings["d_rho"] = t5 - t4
    timings["total"] = t5 - t0
    details = reprojection_details(
        sensor=inp.sensor, ratio=r, gnyq=inp.gnyq, shifts=shifts, correlations=coreg["correlations"],
        search_window=int(coreg["search_window"]), coregistration_half_width=int(coreg["half_width"]),
        d_rho_half_width=hw, integral=integral,
    )
    details["timings_s"] = timings
    values["details"] = details
    return values


assert search_window_for(4) == SETTINGS["search_window"]

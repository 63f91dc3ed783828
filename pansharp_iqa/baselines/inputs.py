"""What every baseline starts from: the checked MS/PAN pair and the EXP-upsampled MS.

Every baseline has the common signature ``method(ms, pan, *, sensor, ratio) -> fused`` (see
:mod:`pansharp_iqa.baselines`): ``ms`` the low-resolution MS ``(h, w, B)`` and ``pan`` the PAN
``(ratio*h, ratio*w)``, both in DN, ``ratio`` a power of two; the result is
``(ratio*h, ratio*w, B)`` float64 in DN.
"""

from __future__ import annotations

import numpy as np

from ..resample import interp23tap
from ..validation import (
    ShapeError,
    as_image,
    as_pan,
    check_ratio,
    check_values,
    image_facts,
)

__all__ = ["check_pair", "baseline_inputs"]


def check_pair(ms: np.ndarray, pan: np.ndarray, ratio: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate an MS/PAN pair and return float64 copies.

    Parameters
    ----------
    ms : numpy.ndarray
        Low-resolution MS, ``(h, w, B)`` in DN (any numeric dtype; not modified).
    pan : numpy.ndarray
        PAN, ``(ratio*h, ratio*w)`` in DN.
    ratio : int
        PAN/MS resolution ratio (a power of two: the baselines use the 23-tap EXP).

    Returns
    -------
    (ms, pan, ratio)
        float64 arrays and the ratio as ``int``.

    Raises
    ------
    InputError
        Wrong dimensionality or layout, sizes that do not fit the ratio, a bad ratio, NaN/Inf,
        negative values or a PAN on another scale than the MS (:mod:`pansharp_iqa.validation`).

    Examples
    --------
    >>> ms, pan, r = check_pair(np.ones((4, 4, 3)), np.ones((16, 16)), 4)
    >>> ms.shape, pan.shape, r
    ((4, 4, 3), (16, 16), 4)
    """
    ratio = check_ratio(ratio, exp=True)
    ms_arr = as_image("ms", ms, allow_2d=True)
    pan_arr = as_pan("pan", pan)
    if pan_arr.shape != (ms_arr.shape[0] * ratio, ms_arr.shape[1] * ratio):
        raise ShapeError(
            f"pan must be ratio={ratio} times the MS size: pan {pan_arr.shape}, ms {ms_arr.shape[:2]}"
        )
    check_values(reference=image_facts("ms", ms_arr), pan=image_facts("pan", pan_arr))
    return ms_arr, pan_arr, ratio


def baseline_inputs(ms: np.ndarray, pan: np.ndarray, ratio: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """:func:`check_pair` and the EXP-upsampled MS, ``interp23tap(ms, ratio)`` (DN).

    Examples
    --------
    >>> ms, pan, r, up = baseline_inputs(np.ones((4, 4, 3)), np.ones((16, 16)), 4)
    >>> up.shape
    (16, 16, 3)
    """
    ms_arr, pan_arr, ratio = check_pair(ms, pan, ratio)
    return ms_arr, pan_arr, ratio, np.asarray(interp23tap(ms_arr, ratio), dtype=np.float64)

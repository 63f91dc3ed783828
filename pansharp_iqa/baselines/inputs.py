"""Input checks shared by the baseline fusion methods."""

from __future__ import annotations

import numpy as np

__all__ = ["check_pair"]


def check_pair(ms: np.ndarray, pan: np.ndarray, ratio: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate an MS/PAN pair and return float64 copies.

    Parameters
    ----------
    ms : numpy.ndarray
        Low-resolution MS, ``(h, w, B)`` in DN (any numeric dtype; not modified).
    pan : numpy.ndarray
        PAN, ``(ratio*h, ratio*w)`` in DN.
    ratio : int
        PAN/MS resolution ratio (power of two, >= 2).

    Returns
    -------
    (ms, pan, ratio)
        float64 arrays and the ratio as ``int``.

    Raises
    ------
    ValueError
        Wrong dimensionality, sizes that do not match the ratio, or a bad ratio.
    """
    if ratio is None or int(ratio) != ratio or int(ratio) < 2 or int(ratio) & (int(ratio) - 1):
        raise ValueError(f"ratio must be a power of two >= 2, got {ratio!r}")
    ratio = int(ratio)
    ms_arr = np.asarray(ms, dtype=np.float64)
    pan_arr = np.asarray(pan, dtype=np.float64)
    if ms_arr.ndim == 2:
        ms_arr = ms_arr[:, :, None]
    if ms_arr.ndim != 3:
        raise ValueError(f"ms must be (h, w, B), got shape {np.shape(ms)}")
    if pan_arr.ndim != 2:
        raise ValueError(f"pan must be (H, W), got shape {np.shape(pan)}")
    if pan_arr.shape != (ms_arr.shape[0] * ratio, ms_arr.shape[1] * ratio):
        raise ValueError(
            f"pan must be ratio={ratio} times the MS size: pan {pan_arr.shape}, ms {ms_arr.shape[:2]}"
        )
    return ms_arr, pan_arr, ratio

"""Spectral angle mapper (SAM).

References
----------
Yuhas, Goetz, Boardman, "Discrimination among semi-arid landscape endmembers using the spectral
angle mapper (SAM) algorithm", JPL AVIRIS Workshop, 1992. Vivone et al., IEEE GRSM 2021 (``SAM``).
"""

from __future__ import annotations

import numpy as np

from ..parallel import parallel_map
from ..validation import as_image, check_same_shape

__all__ = ["sam"]


def sam(
    reference: np.ndarray, fused: np.ndarray, *, return_map: bool = False
) -> float | tuple[float, np.ndarray]:
    """Mean spectral angle between reference and fused pixels, in degrees (toolbox ``SAM``).

    Pixels where either vector has zero norm are left out of the mean (map value 0 there); the
    cosine is clipped to [-1, 1], equivalent to MATLAB's ``real(acos(c))``.

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
    return_map : bool
        Also return the (H, W) angle map in degrees.

    Returns
    -------
    float or (float, ndarray)
        Mean angle in degrees (0 = identical spectra up to a gain).

    References
    ----------
    Yuhas et al., 1992; Vivone et al., IEEE GRSM 2021.
    """
    ref = as_image("reference", reference)
    fus = as_image("fused", fused)
    check_same_shape("reference", ref, "fused", fus)
    return _sam_core(ref, fus, return_map)


_STRIP_ROWS = 128


def _sam_core(ref: np.ndarray, fus: np.ndarray, return_map: bool = False):
    h = ref.shape[0]
    angle_map = np.zeros(ref.shape[:2]) if return_map else None

    def one(r0: int) -> tuple[float, int]:
        r, f = ref[r0 : r0 + _STRIP_ROWS], fus[r0 : r0 + _STRIP_ROWS]
        dot = np.einsum("ijk,ijk->ij", r, f)
        norm = np.sqrt(np.einsum("ijk,ijk->ij", r, r) * np.einsum("ijk,ijk->ij", f, f))
        valid = norm != 0
        angle = np.arccos(np.clip(dot[valid] / norm[valid], -1.0, 1.0))
        if angle_map is not None:
            angle_map[r0 : r0 + _STRIP_ROWS][valid] = angle
        return float(angle.sum()), int(valid.sum())

    parts = parallel_map(one, list(range(0, h, _STRIP_ROWS)))
    total = sum(p[0] for p in parts)
    n_valid = sum(p[1] for p in parts)
    value = float(total / n_valid * 180.0 / np.pi) if n_valid else 0.0
    if return_map:
        return value, np.degrees(angle_map)
    return value

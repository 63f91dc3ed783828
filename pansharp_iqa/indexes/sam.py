"""Spectral angle mapper (SAM).

References
----------
Yuhas, Goetz, Boardman, "Discrimination among semi-arid landscape endmembers using the spectral
angle mapper (SAM) algorithm", JPL AVIRIS Workshop, 1992. Vivone et al., IEEE GRSM 2021 (``SAM``).
"""

from __future__ import annotations

import numpy as np

from ..validation import checked_pair
from .reduced_pass import ReducedSums, StripImage, reduced_sums

__all__ = ["sam", "sam_degrees"]


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
    ref, fus = checked_pair(reference, fused)
    return _sam_core(ref, fus, return_map)


def sam_degrees(sums: ReducedSums) -> float:
    """Mean spectral angle in degrees from a pass's sums (0 when every pixel has a zero norm).

    Parameters
    ----------
    sums : ReducedSums
        From :func:`~pansharp_iqa.indexes.reduced_pass.reduced_sums` with ``"SAM"`` (radians).

    Returns
    -------
    float
        Degrees (0 = identical spectra up to a gain).
    """
    return float(sums.sam_sum / sums.sam_count * 180.0 / np.pi) if sums.sam_count else 0.0


def _sam_core(ref: np.ndarray, fus: np.ndarray, return_map: bool = False):
    """SAM of validated (H, W, B) arrays; with ``return_map`` also the map in degrees."""
    angle_map = np.zeros(ref.shape[:2]) if return_map else None
    sums = reduced_sums(StripImage(ref), StripImage(fus), indexes={"SAM"}, sam_map=angle_map)
    value = sam_degrees(sums)
    if return_map:
        return value, np.degrees(angle_map)
    return value

"""ERGAS: relative dimensionless global error in synthesis.

References
----------
Wald, "Quality of high resolution synthesised images: is there a simple criterion?", Proc. Fusion of
Earth Data, 2000. Vivone et al., IEEE GRSM 2021 (``ERGAS``).
"""

from __future__ import annotations

import numpy as np

from ..parallel import parallel_map
from .uiqi import band_planes
from ..validation import InputError, as_image, check_same_shape

__all__ = ["ergas"]


def ergas(reference: np.ndarray, fused: np.ndarray, *, ratio: float) -> float:
    """ERGAS = ``100/ratio * sqrt(mean_b(MSE_b / mean(reference_b)^2))`` (toolbox ``ERGAS``).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
    ratio : float
        PAN/MS resolution ratio (e.g. 4); required, no default.

    Returns
    -------
    float
        Dimensionless, >= 0 (0 = identical).

    References
    ----------
    Wald, 2000; Vivone et al., IEEE GRSM 2021.
    """
    ref = as_image("reference", reference)
    fus = as_image("fused", fused)
    check_same_shape("reference", ref, "fused", fus)
    if ratio is None or not float(ratio) > 0:
        raise InputError(f"ratio must be a positive number (the PAN/MS resolution ratio), got {ratio!r}")
    return _ergas_core(ref, fus, float(ratio))


def _ergas_core(ref: np.ndarray, fus: np.ndarray, ratio: float) -> float:
    ref, fus = band_planes(ref), band_planes(fus)  # (B, H, W)

    def band(b: int) -> tuple[float, float]:
        diff = ref[b] - fus[b]
        return float(np.einsum("ij,ij->", diff, diff)) / diff.size, float(ref[b].mean())

    mse, mu = np.array(parallel_map(band, list(range(ref.shape[0])))).T
    if np.any(mu == 0):
        raise InputError(
            f"reference: band(s) {np.flatnonzero(mu == 0).tolist()} have zero mean; ERGAS is undefined"
        )
    return float(100.0 / ratio * np.sqrt(np.mean(mse / mu**2)))

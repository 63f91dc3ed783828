"""ERGAS: relative dimensionless global error in synthesis.

References
----------
Wald, "Quality of high resolution synthesised images: is there a simple criterion?", Proc. Fusion of
Earth Data, 2000. Vivone et al., IEEE GRSM 2021 (``ERGAS``).
"""

from __future__ import annotations

import numpy as np

from ..validation import InputError, checked_pair
from .reduced_pass import ReducedSums, StripImage, reduced_sums

__all__ = ["ergas", "ergas_value"]


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
    ref, fus = checked_pair(reference, fused)
    if ratio is None or not float(ratio) > 0:
        raise InputError(f"ratio must be a positive number (the PAN/MS resolution ratio), got {ratio!r}")
    return ergas_value(reduced_sums(StripImage(ref), StripImage(fus), indexes={"ERGAS"}), float(ratio))


def ergas_value(sums: ReducedSums, ratio: float) -> float:
    """ERGAS from a pass's per-band sums of squared errors and of the reference.

    Parameters
    ----------
    sums : ReducedSums
        From :func:`~pansharp_iqa.indexes.reduced_pass.reduced_sums` with ``"ERGAS"``.
    ratio : float
        PAN/MS resolution ratio.

    Returns
    -------
    float
        Dimensionless, >= 0 (0 = identical).

    Raises
    ------
    InputError
        A reference band with zero mean (ERGAS undefined).
    """
    mse, mu = sums.ergas_sse / sums.ergas_n, sums.ergas_ref / sums.ergas_n
    if np.any(mu == 0):
        raise InputError(
            f"reference: band(s) {np.flatnonzero(mu == 0).tolist()} have zero mean; ERGAS is undefined"
        )
    return float(100.0 / ratio * np.sqrt(np.mean(mse / mu**2)))

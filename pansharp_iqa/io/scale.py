"""Value-range checks: a declared scale that contradicts the data is a failure with a reason,
never silently "fixed"."""

from __future__ import annotations

import numpy as np

from .errors import DataError

__all__ = ["check_finite", "check_input_range", "check_result_range", "RESULT_MEAN_FACTOR"]

#: A result whose mean (in DN, after applying the declared result scale) differs from the
#: reference's mean by more than this factor contradicts the declared scale. Real fusion results
#: stay within a few percent of the reference mean; a DN/[0, 1] confusion is a factor 2**bits - 1.
RESULT_MEAN_FACTOR = 8.0


def check_finite(array: np.ndarray, *, name: str) -> None:
    """Raise :class:`DataError` if ``array`` holds NaN or infinite values."""
    arr = np.asarray(array)
    if arr.dtype.kind == "f" or arr.dtype.kind == "c":
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        if bad:
            raise DataError(f"{name}: {bad} NaN/Inf value(s) out of {arr.size}")


def check_input_range(stored: np.ndarray, *, name: str, label: str, multiplier: float, bits: int) -> None:
    """Check an input image's stored values against its declared scale.

    Parameters
    ----------
    stored : numpy.ndarray
        Values as stored in the file.
    name : str
        Used in the reason.
    label : str
        Declared scale (``"dn"``, ``"unit"`` or a number).
    multiplier : float
        Stored-to-DN multiplier implied by ``label``.
    bits : int
        Declared radiometric resolution.

    Raises
    ------
    DataError
        If values declared as DN all lie in [0, 1] (they look like [0, 1] data), if values declared
        as [0, 1] exceed 1.5, or if the DN values exceed ``2**bits - 1`` by more than 1 %.
    """
    arr = np.asarray(stored)
    vmax = float(arr.max()) if arr.size else 0.0
    peak = 2 ** bits - 1
    if label == "dn" and vmax <= 1.0 and peak > 1:
        raise DataError(
            f"{name}: values lie in [{float(arr.min()):g}, {vmax:g}] but the inputs are declared as "
            f"digital numbers (scale = 'dn', bits = {bits}); declare scale = 'unit' if they are [0, 1] data"
        )
    if label == "unit" and vmax > 1.5:
        raise DataError(
            f"{name}: maximum {vmax:g} contradicts the declared [0, 1] scale (scale = 'unit'); "
            "declare scale = 'dn' if the values are digital numbers"
        )
    if vmax * multiplier > peak * 1.01:
        raise DataError(
            f"{name}: maximum {vmax * multiplier:g} DN exceeds 2**bits - 1 = {peak} for the declared "
            f"bits = {bits} (scale {label!r}); check 'bits' and 'scale' in dataset.toml"
        )


def check_result_range(fused_dn: np.ndarray, reference_dn: np.ndarray, *, label: str) -> None:
    """Check that a fused result, brought to DN with its declared scale, matches the reference.

    Parameters
    ----------
    fused_dn : numpy.ndarray
        The result after multiplication by the declared result scale (DN).
    reference_dn : numpy.ndarray
        The reference in DN (GT at reduced resolution, the MS at full resolution).
    label : str
        Declared result scale, for the reason.

    Raises
    ------
    DataError
        If the means differ by more than :data:`RESULT_MEAN_FACTOR` (e.g. a [0, 1] result declared
        as DN, or the reverse).
    """
    ref_mean = float(np.mean(reference_dn))
    fus_mean = float(np.mean(fused_dn))
    if ref_mean <= 0:
        return
    factor = fus_mean / ref_mean
    if not (1.0 / RESULT_MEAN_FACTOR <= factor <= RESULT_MEAN_FACTOR):
        hint = ""
        if factor < 1.0 / RESULT_MEAN_FACTOR:
            hint = " (the result looks like [0, 1] data: use result_scale = 'unit' / --result-scale unit)"
        elif factor > RESULT_MEAN_FACTOR:
            hint = " (the result looks like digital numbers: use result_scale = 'dn' / --result-scale dn)"
        raise DataError(
            f"value range contradicts the declared result scale {label!r}: mean {fus_mean:.4g} DN "
            f"after scaling vs reference mean {ref_mean:.4g} DN (factor {factor:.3g}){hint}"
        )

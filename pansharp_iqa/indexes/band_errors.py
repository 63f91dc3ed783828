"""Band-mean PSNR (MPSNR) and peak-normalised RMSE: the PanCollection evaluation scripts' error indexes.

Extras offered on request (``indexes=`` / ``--indexes``) and in the ``pancollection-*`` presets
(:mod:`pansharp_iqa.presets`). Both are computed from the per-band sums of squared errors that ERGAS
sums (:func:`~.ergas.ergas_sums`), so the strip pass, the tile engine and the torch backend give them
with no pass of their own.

* **MPSNR** = mean over bands b of ``10 log10(peak^2 / MSE_b)``, MSE_b over the band's pixels: the
  PSNR of ``quality_assess.m`` (``psnr_index`` per band on ``image / const``, then ``mean``) in the
  PanCollection MATLAB package, with ``peak = const = 2**bits - 1`` DN (2047; 1023 for GF2). It is
  not the library's ``PSNR`` (one MSE over all pixels and bands): the two differ when the bands'
  errors differ.
* **RMSE** = ``sqrt(MSE) / peak``, MSE over all pixels and bands: the RMSE the PanCollection tables
  print, computed on images divided by the peak (dimensionless).

References
----------
Efficient-MIF, ``Pansharpening_Hyper_SR_Matlab_Test_Package/quality_assess.m`` lines 24-29 and
``Quality_Indices/psnr_index.m`` line 3 (github.com/294coder/Efficient-MIF, commit daa5afa).
XiaoXiao-Woo/PanCollection, ``pancollection/common/evaluate.py`` lines 341-346 and 494-504 (RMSE of
data divided by 2047).
"""

from __future__ import annotations

import math

import numpy as np

from ..rules import checked_pair
from ..validation import InputError, SettingError
from .ergas import ergas_sums
from .strips import StripImage, map_strips

__all__ = ["mpsnr", "rmse", "mpsnr_from_sums", "rmse_from_sums", "peak_of"]


def peak_of(bits: int | None, name: str) -> float:
    """The peak ``2**bits - 1`` DN of a finalize step; refused when ``bits`` is not known.

    Parameters
    ----------
    bits : int or None
        Radiometric resolution.
    name : str
        The index, for the message.

    Returns
    -------
    float

    Examples
    --------
    >>> peak_of(10, "MPSNR")
    1023.0
    """
    if bits is None:
        raise SettingError(f"{name} needs bits (its peak is 2**bits - 1 DN)")
    return float(2**bits - 1)


def mpsnr_from_sums(sse: np.ndarray, n_pixels: int, peak: float) -> float:
    """Mean over bands of ``10 log10(peak^2 / MSE_b)`` from per-band sums of squared errors.

    Parameters
    ----------
    sse : ndarray, shape (B,)
        Summed squared errors per band (DN^2).
    n_pixels : int
        Pixels per band.
    peak : float
        Data range (DN), ``2**bits - 1``.

    Returns
    -------
    float
        Decibels; ``inf`` when a band is identical.

    Examples
    --------
    >>> round(mpsnr_from_sums(np.array([4.0, 400.0]), 4, 10.0), 4)
    10.0
    """
    mse = np.asarray(sse, dtype=np.float64) / n_pixels
    with np.errstate(divide="ignore"):
        return float(np.mean(10.0 * np.log10(peak * peak / mse)))


def rmse_from_sums(sse: np.ndarray, n_pixels: int, peak: float) -> float:
    """``sqrt(MSE) / peak`` with the MSE over all pixels and bands, from per-band sums.

    Parameters
    ----------
    sse : ndarray, shape (B,)
        Summed squared errors per band (DN^2).
    n_pixels : int
        Pixels per band.
    peak : float
        Data range (DN), ``2**bits - 1``.

    Returns
    -------
    float
        Dimensionless (the RMSE of the images divided by the peak).

    Examples
    --------
    >>> rmse_from_sums(np.array([4.0, 4.0]), 4, 10.0)
    0.1
    """
    return float(math.sqrt(float(np.sum(sse)) / (n_pixels * len(sse))) / peak)


def _band_sse(reference: object, fused: object, data_range: float) -> tuple[np.ndarray, int, float]:
    """Validated inputs' per-band squared errors, pixel count and peak."""
    peak = float(data_range)
    if not math.isfinite(peak) or peak <= 0:
        raise InputError(f"data_range must be a positive number (the peak, e.g. 2**bits - 1), got {data_range!r}")
    ref, fus = checked_pair(reference, fused)
    rs, fs = StripImage(ref), StripImage(fus)
    parts = map_strips(lambda r0, r1: ergas_sums(rs.planes(r0, r1), fs.planes(r0, r1))[0], ref.shape[0], 1)
    return np.sum(parts, axis=0), ref.shape[0] * ref.shape[1], peak


def mpsnr(reference: np.ndarray, fused: np.ndarray, *, data_range: float) -> float:
    """Band-mean PSNR of a fused image against its reference (the PanCollection scripts' PSNR)."""
    return mpsnr_from_sums(*_band_sse(reference, fused, data_range))


def rmse(reference: np.ndarray, fused: np.ndarray, *, data_range: float) -> float:
    """RMSE over all pixels and bands divided by the peak (the PanCollection tables' RMSE)."""
    return rmse_from_sums(*_band_sse(reference, fused, data_range))

"""Spatial correlation coefficient (SCC) on Sobel gradients.

References
----------
Zhou, Civco, Silander, "A wavelet transform method to merge Landsat TM and SPOT panchromatic data",
IJRS 19(4), 1998. Vivone et al., IEEE GRSM 2021 (``SCC``, 2020 gradient-magnitude form) and IEEE
TGRS 2015 (vertical Sobel form).
"""

from __future__ import annotations

from typing import Literal

import cv2
import numpy as np

from ..validation import InputError, checked_pair
from .reduced_pass import ReducedSums, StripImage, reduced_sums, sobel_rows

__all__ = ["scc", "scc_value", "sobel_magnitude"]

_SOBEL = np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 0.0], [-1.0, -2.0, -1.0]])  # fspecial('sobel')


def _filter_zero(img: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Correlation, same size, zero padding (MATLAB ``imfilter`` default); multi-channel."""
    return cv2.filter2D(np.ascontiguousarray(img), cv2.CV_64F, kernel, borderType=cv2.BORDER_CONSTANT)


def sobel_magnitude(img: np.ndarray) -> np.ndarray:
    """Gradient magnitude from MATLAB's Sobel kernel and its transpose, zero-padded, same size.

    Parameters
    ----------
    img : ndarray, shape (H, W) or (H, W, B)

    Returns
    -------
    ndarray, same shape
    """
    arr = np.asarray(img, dtype=np.float64)
    planes = arr[:, :, None] if arr.ndim == 2 else arr
    out = np.empty(planes.shape)
    for b in range(planes.shape[2]):
        out[:, :, b] = sobel_rows(np.ascontiguousarray(planes[:, :, b]), "2020")
    return out.reshape(arr.shape)


def scc_value(sums: ReducedSums) -> float:
    """SCC from a pass's sums ``[sum Gf Gr, sum Gf^2, sum Gr^2]``.

    Parameters
    ----------
    sums : ReducedSums
        From :func:`~pansharp_iqa.indexes.reduced_pass.reduced_sums` with ``"SCC"``.

    Returns
    -------
    float
        In [-1, 1] (1 = identical gradients up to a gain).

    Raises
    ------
    InputError
        A flat image (no gradient): SCC undefined.
    """
    num, sff, srr = sums.scc
    den = float(np.sqrt(sff)) * float(np.sqrt(srr))
    if den == 0:
        raise InputError("SCC is undefined: the reference or the fused image has no gradient (flat image)")
    return float(num) / den


def check_scc_variant(variant: str, shape: tuple[int, ...]) -> str:
    """Validate the SCC variant (and the image size the 2020 frame crop needs).

    Parameters
    ----------
    variant : {"2020", "2015"}
    shape : tuple of int
        Image shape (H, W, ...).

    Returns
    -------
    str
        The variant.
    """
    if variant not in ("2020", "2015"):
        raise InputError(f"variant must be '2020' or '2015', got {variant!r}")
    if variant == "2020" and min(shape[:2]) < 3:
        raise InputError("reference: SCC needs images of at least 3x3 pixels")
    return variant


def scc(
    reference: np.ndarray, fused: np.ndarray, *, variant: Literal["2020", "2015"] = "2020"
) -> float:
    """Spatial correlation coefficient (toolbox ``SCC``).

    ``"2020"``: per band, crop the one-pixel frame, Sobel gradient magnitude (both directions, zero
    padding); ``sum(Gf Gr) / sqrt(sum Gf^2) / sqrt(sum Gr^2)`` over all pixels and bands (no mean
    removal). ``"2015"``: the same normalised inner product of the vertical Sobel responses of
    the whole image (zero padding).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
    variant : {"2020", "2015"}

    Returns
    -------
    float
        In [-1, 1] (1 = identical gradients up to a gain).

    References
    ----------
    Zhou et al., IJRS 19(4), 1998; Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.
    """
    ref, fus = checked_pair(reference, fused)
    check_scc_variant(variant, ref.shape)
    return scc_value(reduced_sums(StripImage(ref), StripImage(fus), indexes={"SCC"}, scc_variant=variant))

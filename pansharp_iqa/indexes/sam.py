"""Spectral angle mapper (SAM).

The formula's home: per-chunk sums of the angles (:func:`sam_sums`), the finalize step with the
ecosystem's conventions for pixels of zero norm (:func:`sam_from_sums`), and :func:`sam`.

References
----------
Yuhas, Goetz, Boardman, "Discrimination among semi-arid landscape endmembers using the spectral
angle mapper (SAM) algorithm", JPL AVIRIS Workshop, 1992. Vivone et al., IEEE GRSM 2021 (``SAM``).
Scarpa & Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808 (R-SAM's zero handling).
Ciotola et al., arXiv 2407.01355 (2024) and Remote Sensing 17(12):1983 (2025) (hyperspectral and
Sentinel-2 code: the same as R-SAM). TorchMetrics ``SpectralAngleMapper`` (NaN; issue #3322).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..foreign import Layout, batched
from ..rules import checked_pair
from ..validation import check_choice
from .strips import StripImage, map_strips

__all__ = ["sam", "sam_sums", "sam_from_sums", "ZERO_NORM_CONVENTIONS"]

#: Pixels where either vector has zero norm: left out of the mean (``"exclude"``, MATLAB toolbox
#: ``SAM.m``), counted as 0 degrees (``"zero"``, alias ``"count"``: R-SAM, hyperspectral/Sentinel-2
#: code), counted as 90 degrees (``"right_angle"``), or the result is NaN (``"nan"``: TorchMetrics).
ZeroNorm = Literal["exclude", "zero", "count", "right_angle", "nan"]
ZERO_NORM_CONVENTIONS = ("exclude", "zero", "count", "right_angle", "nan")


def sam_sums(ref_planes: np.ndarray, fus_planes: np.ndarray, *,
             angle_map: np.ndarray | None = None) -> tuple[float, int, int]:
    """Sum of the spectral angles of a chunk of pixels, in radians.

    Per pixel ``arccos(clip(<x, m> / (|x| |m|), -1, 1))`` (MATLAB's ``real(acos(c))``); pixels where
    a norm is 0 have no angle.

    Parameters
    ----------
    ref_planes, fus_planes : ndarray, shape (B, h, w), float64
    angle_map : ndarray, shape (h, w), optional
        Filled with the angles (radians) where defined; left untouched elsewhere.

    Returns
    -------
    (float, int, int)
        Sum of the defined angles (radians), the number of defined pixels, and of all pixels.

    Examples
    --------
    >>> x = np.ones((2, 1, 2))
    >>> sam_sums(x, x[::-1] * [[[1.0, 0.0]]])[1:]
    (1, 2)
    """
    dot = np.einsum("bij,bij->ij", ref_planes, fus_planes)
    norm = np.sqrt(np.einsum("bij,bij->ij", ref_planes, ref_planes) * np.einsum("bij,bij->ij", fus_planes, fus_planes))
    valid = norm != 0
    n_valid = int(np.count_nonzero(valid))
    with np.errstate(invalid="ignore", divide="ignore"):
        if n_valid == valid.size:  # the usual case: no masked copies
            dot /= norm
            angle = np.arccos(np.clip(dot, -1.0, 1.0, out=dot), out=dot)
        else:
            angle = np.arccos(np.clip(dot[valid] / norm[valid], -1.0, 1.0))
    if angle_map is not None:
        angle_map[valid] = angle.ravel()
    return float(angle.sum()), n_valid, int(valid.size)


def sam_from_sums(angle_sum: float, n_valid: int, n_pixels: int, *, zero_norm: ZeroNorm = "exclude") -> float:
    """Mean spectral angle in degrees from chunk sums.

    Parameters
    ----------
    angle_sum : float
        Sum of the defined angles (radians).
    n_valid, n_pixels : int
        Defined pixels and all pixels.
    zero_norm : {"exclude", "zero", "count", "right_angle", "nan"}
        Pixels with a zero norm are left out of the mean (``"exclude"``: MATLAB toolbox ``SAM.m``),
        count as 0 degrees in it (``"zero"``, or its older name ``"count"``: the reprojected
        protocol's R-SAM and the hyperspectral/Sentinel-2 code, whose NaN angles are skipped in the
        sum but counted in the divisor), count as 90 degrees (``"right_angle"``), or make the result
        NaN (``"nan"``: TorchMetrics' ``SpectralAngleMapper``, TorchMetrics issue #3322).

    Returns
    -------
    float
        Degrees (0 = identical spectra up to a gain; 0 when no pixel is defined, except ``"nan"``).

    Examples
    --------
    >>> [sam_from_sums(np.pi, 2, 4, zero_norm=z) for z in ("exclude", "zero", "right_angle", "nan")]
    [90.0, 45.0, 90.0, nan]
    """
    check_choice("zero_norm", zero_norm, ZERO_NORM_CONVENTIONS)
    if zero_norm == "exclude":
        n, total = n_valid, angle_sum
    elif zero_norm == "nan" and n_valid < n_pixels:
        return float("nan")
    else:
        n = n_pixels
        total = angle_sum + (0.5 * np.pi * (n_pixels - n_valid) if zero_norm == "right_angle" else 0.0)
    return float(total / n * 180.0 / np.pi) if n else 0.0



@batched("reference", "fused")
def sam(
    reference: np.ndarray, fused: np.ndarray, *, zero_norm: ZeroNorm = "exclude", return_map: bool = False
, layout: Layout | None = None) -> float | tuple[float, np.ndarray]:
    """Mean spectral angle between reference and fused pixels, in degrees (toolbox ``SAM``).

    Pixels where either vector has zero norm are left out of the mean (map value 0 there), or
    treated by another convention (``zero_norm``); the cosine is clipped to [-1, 1], equivalent to
    MATLAB's ``real(acos(c))`` (the hyperspectral/Sentinel-2 code's NaN for a cosine rounded above 1
    counts 0 degrees, as here; one rounded below -1, possible only for opposite spectra, counts 0
    there and 180 here).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Reference (ground truth) and fused image, DN (any dtype; float64 inside).
    zero_norm : {"exclude", "zero", "count", "right_angle", "nan"}
        Treatment of zero-norm pixels (see ``indexes.sam.sam_from_sums``; ``"count"`` is the
        older name of ``"zero"``).
    return_map : bool
        Also return the (H, W) angle map in degrees.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

    Returns
    -------
    float or (float, ndarray)
        Mean angle in degrees (0 = identical spectra up to a gain).

    References
    ----------
    Yuhas et al., 1992; Vivone et al., IEEE GRSM 2021.

    Examples
    --------
    >>> ref = np.ones((4, 4, 2))
    >>> fus = np.concatenate([np.ones((4, 4, 1)), np.zeros((4, 4, 1))], axis=2) * 1.4
    >>> round(sam(ref, fus), 6)
    45.0
    """
    check_choice("zero_norm", zero_norm, ZERO_NORM_CONVENTIONS)
    ref, fus = checked_pair(reference, fused)
    h = ref.shape[0]
    angle_map = np.zeros(ref.shape[:2]) if return_map else None
    rs, fs = StripImage(ref), StripImage(fus)

    def strip(r0: int, r1: int) -> tuple[float, int, int]:
        return sam_sums(rs.planes(r0, r1), fs.planes(r0, r1),
                        angle_map=None if angle_map is None else angle_map[r0:r1])

    parts = map_strips(strip, h, 1)
    value = sam_from_sums(sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts),
                          zero_norm=zero_norm)
    return value if angle_map is None else (value, np.degrees(angle_map))

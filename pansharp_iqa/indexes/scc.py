"""Spatial correlation coefficient (SCC) on Sobel gradients.

The formula's home: the Sobel responses (:func:`sobel_rows`), per-chunk sums of the gradient
products (:func:`scc_sums`), the finalize step (:func:`scc_from_sums`) and :func:`scc`.

References
----------
Zhou, Civco, Silander, "A wavelet transform method to merge Landsat TM and SPOT panchromatic data",
IJRS 19(4), 1998. Vivone et al., IEEE GRSM 2021 (``SCC``, 2020 gradient-magnitude form) and IEEE
TGRS 2015 (vertical Sobel form).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Literal

import cv2
import numpy as np

from ..foreign import Layout, batched
from ..rules import checked_pair
from ..validation import InputError, ShapeError, check_choice
from .strips import StripImage, map_strips, within_unit

__all__ = [
    "scc", "scc_sums", "scc_from_sums", "scc_strip_planes", "sobel_rows", "scc_frame",
    "check_gradient",
]

Gradient = Literal["magnitude", "vertical"]
_VARIANTS = {"2020": "magnitude", "2015": "vertical"}


def sobel_rows(plane: np.ndarray, gradient: Gradient) -> np.ndarray:
    """Sobel response of a 2-D plane, zero padding, same size (toolbox ``SCC`` gradients).

    ``"magnitude"``: gradient magnitude from ``fspecial('sobel')`` and its transpose;
    ``"vertical"``: the vertical response only. OpenCV's separable Sobel returns the negated
    correlation of MATLAB's kernel, which changes neither the magnitude nor the SCC products
    ``Gf * Gr``; on integer data the responses are exact.

    Parameters
    ----------
    plane : ndarray, shape (H, W), float64
    gradient : {"magnitude", "vertical"}

    Returns
    -------
    ndarray, shape (H, W)

    Examples
    --------
    >>> sobel_rows(np.outer(np.arange(4.0), np.ones(4)), "vertical")[1:3, 1:3].tolist()
    [[8.0, 8.0], [8.0, 8.0]]
    """
    gy = cv2.Sobel(plane, cv2.CV_64F, 0, 1, ksize=3, borderType=cv2.BORDER_CONSTANT)
    if gradient == "vertical":
        return gy
    gx = cv2.Sobel(plane, cv2.CV_64F, 1, 0, ksize=3, borderType=cv2.BORDER_CONSTANT)
    return cv2.magnitude(gx, gy)


def scc_frame(gradient: Gradient, h: int, w: int) -> tuple[int, int, slice]:
    """Rows ``[top, bottom)`` and columns the SCC sums run over, and that the Sobel sees.

    The 2020 form crops a one-pixel frame first (the image is the interior, zero padded around it);
    the 2015 form uses the whole image.

    Examples
    --------
    >>> scc_frame("magnitude", 10, 8)
    (1, 9, slice(1, 7, None))
    """
    if gradient == "magnitude":
        return 1, h - 1, slice(1, w - 1)
    return 0, h, slice(None)


def scc_sums(ref_planes: np.ndarray, fus_planes: np.ndarray, *, gradient: Gradient,
             col_halo: bool = False) -> np.ndarray:
    """``[sum Gf Gr, sum Gf^2, sum Gr^2]`` over the interior rows of a chunk of band planes.

    Parameters
    ----------
    ref_planes, fus_planes : ndarray, shape (B, k + 2, w)
        The chunk's ``k`` rows plus one halo row above and below (zero rows where the image ends),
        already cut to the columns the form uses.
    gradient : {"magnitude", "vertical"}
    col_halo : bool
        The planes also carry one halo column each side (a tile): those are not summed either.

    Returns
    -------
    ndarray, shape (3,)

    Examples
    --------
    >>> x = np.arange(25.0).reshape(1, 5, 5)
    >>> s = scc_sums(x, x, gradient="vertical")
    >>> bool(s[0] == s[1] == s[2])
    True
    """
    acc = np.zeros(3)
    keep = (slice(1, -1), slice(1, -1)) if col_halo else (slice(1, -1),)
    for band in range(ref_planes.shape[0]):
        gf = sobel_rows(np.ascontiguousarray(fus_planes[band]), gradient)[keep]
        gr = sobel_rows(np.ascontiguousarray(ref_planes[band]), gradient)[keep]
        # einsum, not BLAS vdot: a thread-count-independent sum (identical on every executor)
        acc += (np.einsum("ij,ij->", gf, gr), np.einsum("ij,ij->", gf, gf), np.einsum("ij,ij->", gr, gr))
    return acc


def scc_strip_planes(rows_of: Callable[[int, int], np.ndarray], h: int, w: int, r0: int, r1: int,
                     gradient: Gradient) -> np.ndarray | None:
    """The planes :func:`scc_sums` needs for image rows ``[r0, r1)``, or None when none is in the frame.

    Parameters
    ----------
    rows_of : callable
        ``rows_of(a, b)`` returns image rows ``[a, b)`` as (B, b - a, W) float64 planes.
    h, w : int
        Image size.
    r0, r1 : int
        The chunk's rows.
    gradient : {"magnitude", "vertical"}

    Returns
    -------
    ndarray, shape (B, k + 2, w'), or None
        The chunk's rows inside the frame with one halo row each side (image rows where they exist
        inside the frame, zero rows outside it), cut to the frame's columns.

    Examples
    --------
    >>> img = np.ones((1, 6, 5))
    >>> scc_strip_planes(lambda a, b: img[:, a:b], 6, 5, 0, 3, "magnitude").shape
    (1, 4, 3)
    """
    top, bottom, cols = scc_frame(gradient, h, w)
    a, b = max(r0, top), min(r1, bottom)
    if a >= b:
        return None
    src0, src1 = max(a - 1, top), min(b + 1, bottom)
    planes = rows_of(src0, src1)[:, :, cols]
    pad_top, pad_bottom = 1 - (a - src0), 1 - (src1 - b)
    if pad_top or pad_bottom:
        planes = np.pad(planes, ((0, 0), (pad_top, pad_bottom), (0, 0)))
    return planes


def scc_from_sums(sums: np.ndarray) -> float:
    """SCC from ``[sum Gf Gr, sum Gf^2, sum Gr^2]``.

    Returns
    -------
    float
        In [-1, 1] (1 = identical gradients up to a gain).

    Raises
    ------
    InputError
        A flat image (no gradient): SCC undefined.

    Examples
    --------
    >>> scc_from_sums(np.array([2.0, 4.0, 1.0]))
    1.0
    """
    num, sff, srr = sums
    den = float(np.sqrt(sff * srr))  # sqrt(a * a) == a exactly: identical gradients give 1.0
    if den == 0:
        raise InputError("SCC is undefined: the reference or the fused image has no gradient (flat image)")
    return within_unit(float(num) / den)


def check_gradient(gradient: str, shape: tuple[int, ...], *, variant: str | None = None) -> Gradient:
    """Validate the SCC form (and the image size the 2020 frame crop needs).

    ``variant`` is the deprecated name (``"2020"``/``"2015"``); it warns and maps to a gradient.

    Examples
    --------
    >>> check_gradient("vertical", (8, 8, 1))
    'vertical'
    """
    if variant is not None:
        warnings.warn("scc(variant=...) is deprecated: use gradient='magnitude' (2020) or 'vertical' (2015)",
                      DeprecationWarning, stacklevel=3)
        gradient = _VARIANTS[check_choice("variant", str(variant), tuple(_VARIANTS))]
    check_choice("gradient", gradient, ("magnitude", "vertical"))
    if gradient == "magnitude" and min(shape[:2]) < 3:
        raise ShapeError("reference: SCC needs images of at least 3x3 pixels")
    return gradient  # type: ignore[return-value]


@batched("reference", "fused")
def scc(reference: np.ndarray, fused: np.ndarray, *, gradient: Gradient = "magnitude",
        variant: str | None = None, layout: Layout | None = None) -> float:
    """Spatial correlation coefficient (toolbox ``SCC``).

    ``"magnitude"`` (toolbox 2020): per band, crop the one-pixel frame, Sobel gradient magnitude
    (both directions, zero padding); ``sum(Gf Gr) / sqrt(sum Gf^2) / sqrt(sum Gr^2)`` over all
    pixels and bands (no mean removal). ``"vertical"`` (toolbox 2015): the same normalised inner
    product of the vertical Sobel responses of the whole image (zero padding).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Reference (ground truth) and fused image, DN (any dtype; float64 inside).
    gradient : {"magnitude", "vertical"}
        Sobel magnitude of the frame-cropped image (toolbox 2020) or the vertical Sobel response
        (toolbox 2015).
    variant : {"2020", "2015"}, optional
        Deprecated name of ``gradient``.
    layout : {"NCHW", "NHWC"}, optional
        The images are batches in this layout (arrays or framework tensors): the index of each
        image is returned as a (N,) float64 array. Tensors (PyTorch, MindSpore, CuPy, DLPack) are
        also accepted without it, as one (H, W, B) image (computed on the host).

    Returns
    -------
    float
        In [-1, 1] (1 = identical gradients up to a gain).

    References
    ----------
    Zhou et al., IJRS 19(4), 1998; Vivone et al., IEEE GRSM 2021 and IEEE TGRS 2015.

    Examples
    --------
    >>> ref = np.random.default_rng(0).integers(1, 2048, (16, 16, 2)).astype(float)
    >>> round(scc(ref, ref), 12)
    1.0
    """
    ref, fus = checked_pair(reference, fused)
    grad = check_gradient(gradient, ref.shape, variant=variant)
    rs, fs = StripImage(ref), StripImage(fus)

    h, w = ref.shape[:2]

    def strip(r0: int, r1: int) -> np.ndarray:
        rp = scc_strip_planes(rs.planes, h, w, r0, r1, grad)
        if rp is None:
            return np.zeros(3)
        fp = scc_strip_planes(fs.planes, h, w, r0, r1, grad)
        assert fp is not None  # the same rows as rp
        return scc_sums(rp, fp, gradient=grad)

    return scc_from_sums(np.sum(map_strips(strip, ref.shape[0], 1), axis=0))

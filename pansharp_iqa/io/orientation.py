"""Axis order of images: ``(H, W, B)`` (MATLAB, GeoTIFF pixel-interleaved) or ``(B, H, W)``
(PyTorch/PanCollection, band-interleaved TIFF), recognised from the shape."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import DataError

__all__ = ["as_hwb", "as_hw", "match_expected_shape", "as_pan", "AmbiguousLayout"]


class AmbiguousLayout(DataError):
    """A 3-D shape whose band axis the shape alone does not tell (more bands than pixels a side)."""


def _squeeze_leading(arr: np.ndarray) -> np.ndarray:
    while arr.ndim > 3 and arr.shape[0] == 1:
        arr = arr[0]
    while arr.ndim > 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    return arr


def as_hwb(array: np.ndarray, *, name: str, spatial: Sequence[int] | None = None) -> np.ndarray:
    """Return a multi-band image as ``(H, W, B)``: the band axis is the one smaller than the other two, or,
    where the shape alone does not tell (a cube with more bands than pixels a side), the one that is not
    ``spatial`` (the rows and columns the scene's other images give it)."""
    arr = _squeeze_leading(np.asarray(array))
    if arr.ndim == 2:
        return arr[:, :, None]
    if arr.ndim != 3:
        raise DataError(f"{name}: expected a 2-D or 3-D image, got shape {tuple(array.shape)}")
    h, w, b = arr.shape
    if b < h and b < w:
        return arr
    if h < w and h < b:
        return np.moveaxis(arr, 0, -1)
    size = None if spatial is None else tuple(int(n) for n in spatial)
    if size is not None and (size == (h, w)) != (size == (w, b)):
        return arr if size == (h, w) else np.moveaxis(arr, 0, -1)
    told = "" if size is None else f", nor does the size the scene's other images give it ({size[0]} x {size[1]})"
    raise AmbiguousLayout(
        f"{name}: cannot tell the band axis of shape {tuple(arr.shape)}: no axis is smaller than the other two, so "
        f"(H, W, B) and (B, H, W) are both possible{told}; give the scene's PAN (which tells the size) or store "
        "images whose bands outnumber their rows or columns as H x W x B beside it"
    )


def as_pan(array: np.ndarray, *, name: str) -> np.ndarray:
    """The PAN role: one band as ``(H, W)`` (:func:`as_hw`), or several high-resolution bands in its place (Sentinel-2's
    10 m bands) as ``(H, W, B)`` (:func:`as_hwb`).

    Examples
    --------
    >>> as_pan(np.zeros((1, 8, 8)), name="pan").shape, as_pan(np.zeros((4, 8, 8)), name="pan").shape
    ((8, 8), (8, 8, 4))
    """
    arr = np.asarray(array)
    return as_hw(arr, name=name) if sum(n > 1 for n in arr.shape) <= 2 else as_hwb(arr, name=name)


def as_hw(array: np.ndarray, *, name: str) -> np.ndarray:
    """Return a single-band image (PAN) as ``(H, W)``, dropping singleton axes."""
    arr = np.asarray(array)
    arr = arr.reshape([n for n in arr.shape if n != 1]) if arr.ndim > 2 else arr
    if arr.ndim != 2:
        raise DataError(f"{name}: expected a single-band (H, W) image, got shape {tuple(array.shape)}")
    return arr


def match_expected_shape(array: np.ndarray, expected: Sequence[int], *, name: str) -> np.ndarray:
    """Return ``array`` as ``(H, W, B)`` equal to ``expected``, accepting ``(B, H, W)`` too."""
    exp = tuple(int(n) for n in expected)
    arr = _squeeze_leading(np.asarray(array))
    if arr.ndim == 2 and exp[2] == 1:
        arr = arr[:, :, None]
    if arr.shape == exp:
        return arr
    if arr.ndim == 3 and arr.shape == (exp[2], exp[0], exp[1]):
        return np.moveaxis(arr, 0, -1)
    shape = tuple(arr.shape)
    if arr.ndim == 3:
        bands = shape[2] if shape[:2] == exp[:2] else shape[0] if shape[1:] == exp[:2] else None
        if bands is not None:
            raise DataError(f"{name}: wrong band count {bands}, expected {exp[2]} (shape {shape}, expected {exp})")
    raise DataError(
        f"{name}: wrong shape {shape}, expected (H, W, B) = {exp} or (B, H, W) = {(exp[2], exp[0], exp[1])}"
    )

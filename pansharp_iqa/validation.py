"""Input checks shared by every index: shapes, dtypes, finiteness, data scale, ratios.

Every check raises :class:`InputError` (a ``ValueError``) whose message names the argument and says
how to fix the input. Arrays are returned as new float64 arrays, so callers never modify the
user's data in place.
"""

from __future__ import annotations

import numpy as np

from .parallel import chunks, parallel_map

__all__ = [
    "InputError",
    "as_image",
    "as_pan",
    "check_same_shape",
    "check_dn_scale",
    "check_ratio",
    "check_min_size",
    "check_multiple_of",
    "check_pan_ratio",
    "image_array",
    "finite_range",
    "check_dn_range",
    "checked_pair",
]


class InputError(ValueError):
    """Invalid input to an index or protocol; the message names the argument and the fix."""


def _as_float(name: str, value: object) -> np.ndarray:
    arr = _real_array(name, value)
    out = np.array(arr, dtype=np.float64, copy=True, order="C")
    if not np.isfinite(out).all():
        _raise_non_finite(name, int(np.size(out) - np.count_nonzero(np.isfinite(out))))
    return out


def _real_array(name: str, value: object) -> np.ndarray:
    arr = value if isinstance(value, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise InputError(f"{name}: cannot convert to an array ({exc})") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError(f"{name}: expected an integer or float array, got dtype {arr.dtype}")
    return arr


def image_array(name: str, value: object) -> np.ndarray:
    """Validate an (H, W, B) image of a real dtype and return it without copying.

    For read-only use (the reduced-resolution pass converts strips to float64 itself); call
    :func:`finite_range` for the value checks.

    Parameters
    ----------
    name : str
        Argument name used in error messages.
    value : array_like
        Integer or float image.

    Returns
    -------
    ndarray, shape (H, W, B)
        The input (or ``np.asarray`` of it); never modify it.
    """
    return _image_dims(name, _real_array(name, value), allow_2d=False)


def _image_dims(name: str, arr: np.ndarray, *, allow_2d: bool) -> np.ndarray:
    if arr.ndim == 2:
        if not allow_2d:
            raise InputError(
                f"{name}: expected a 3-D (H, W, B) image, got a 2-D array of shape {arr.shape}; "
                f"for a single band pass {name}[..., None]"
            )
        arr = arr[:, :, None]
    if arr.ndim != 3:
        raise InputError(f"{name}: expected a 3-D (H, W, B) image, got shape {arr.shape}")
    if min(arr.shape) == 0:
        raise InputError(f"{name}: empty image of shape {arr.shape}")
    return arr


def finite_range(name: str, arr: np.ndarray) -> tuple[float, float]:
    """Minimum and maximum of an array, refusing NaN/Inf with a message that names the argument.

    Parameters
    ----------
    name : str
    arr : ndarray
        Integer or float values.

    Returns
    -------
    (float, float)
        ``(min, max)``.
    """
    parts = parallel_map(lambda sl: (np.min(arr[sl]), np.max(arr[sl])), chunks(arr.shape[0], 4))
    lo = float(min(p[0] for p in parts))
    hi = float(max(p[1] for p in parts))
    if not (np.isfinite(lo) and np.isfinite(hi)):  # min/max propagate NaN and reach +-Inf
        _raise_non_finite(name, int(np.size(arr) - np.count_nonzero(np.isfinite(arr))))
    return lo, hi


def _raise_non_finite(name: str, n_bad: int) -> None:
    raise InputError(
        f"{name}: contains {n_bad} non-finite values (NaN/Inf); indexes are undefined there. "
        "Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window)."
    )


def check_dn_range(name: str, dtype: np.dtype, maxabs: float, *, what: str) -> None:
    """Refuse float data whose largest magnitude ``maxabs`` is <= 1 where ``what`` rounds to DN.

    See :func:`check_dn_scale`; this form takes the precomputed maximum of ``|data|``.

    Parameters
    ----------
    name : str
        Argument name for the message.
    dtype : numpy dtype
        The data's dtype (integer data are DN by definition and pass).
    maxabs : float
        Largest absolute value of the data.
    what : str
        The index or protocol that rounds to DN.
    """
    if np.issubdtype(dtype, np.floating) and maxabs <= 1.0:
        raise InputError(
            f"{name}: float data within [0, 1], but {what} rounds to integer digital numbers "
            "(uint16, as the reference toolbox does), which would collapse these values to 0/1. "
            "Pass DN values, or give the data scale (e.g. scale=2**bits - 1, i.e. 2047 for 11-bit data) "
            "so the inputs are converted to DN first."
        )


def checked_pair(
    reference: object, fused: object, *, dn_what: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (reference, fused) pair of (H, W, B) images without copying them.

    Checks dtypes, dimensions, equal shapes and finiteness; with ``dn_what`` also refuses float
    data within [0, 1] (:func:`check_dn_range`).

    Parameters
    ----------
    reference, fused : array_like, shape (H, W, B)
    dn_what : str, optional
        Name of the index that rounds to integer DN (enables the [0, 1] check).

    Returns
    -------
    (ndarray, ndarray)
        The inputs as arrays (never modify them).
    """
    ref = image_array("reference", reference)
    fus = image_array("fused", fused)
    check_same_shape("reference", ref, "fused", fus)
    for name, arr in (("reference", ref), ("fused", fus)):
        lo, hi = finite_range(name, arr)
        if dn_what is not None:
            check_dn_range(name, arr.dtype, max(abs(lo), abs(hi)), what=dn_what)
    return ref, fus


def as_image(name: str, value: object, *, allow_2d: bool = False) -> np.ndarray:
    """Validate an (H, W, B) image and return it as a new float64 array.

    Parameters
    ----------
    name : str
        Argument name used in error messages.
    value : array_like
        Integer or float image.
    allow_2d : bool
        Accept an (H, W) image and return it as (H, W, 1).

    Returns
    -------
    ndarray, shape (H, W, B), float64
    """
    return _image_dims(name, _as_float(name, value), allow_2d=allow_2d)


def as_pan(name: str, value: object) -> np.ndarray:
    """Validate a PAN image: (H, W) or (H, W, 1); returns (H, W) float64."""
    arr = _as_float(name, value)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim != 2:
        raise InputError(f"{name}: expected a 2-D (H, W) panchromatic image, got shape {arr.shape}")
    return arr


def check_same_shape(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    """Raise if two images differ in shape (names both, and the band counts if those differ)."""
    if a.shape != b.shape:
        what = "band counts" if a.shape[:2] == b.shape[:2] else "shapes"
        raise InputError(
            f"{name_a} and {name_b} differ in {what}: {a.shape} vs {b.shape}; both must be (H, W, B) "
            "on the same grid with the same bands"
        )


def check_dn_scale(name: str, original: object, arr: np.ndarray, *, what: str) -> None:
    """Refuse float data that look normalised to [0, 1] where the index rounds to integer DN.

    The toolbox casts to uint16 (round half away from zero) inside Q2n; [0, 1] data collapse to
    0/1 there and every number becomes meaningless.
    """
    dtype = np.asarray(original).dtype if not isinstance(original, np.ndarray) else original.dtype
    if np.issubdtype(dtype, np.floating) and arr.size:
        check_dn_range(name, dtype, float(np.max(np.abs(arr))), what=what)


def check_ratio(ratio: object, *, power_of_two: bool = True, name: str = "ratio") -> int:
    """Validate a resolution ratio (a positive integer, a power of two if required)."""
    if ratio is None:
        raise InputError(f"{name} is required (no silent default): pass the PAN/MS resolution ratio, e.g. 4")
    if isinstance(ratio, (bool, np.bool_)) or not float(ratio).is_integer() or int(ratio) < 1:
        raise InputError(f"{name} must be a positive integer, got {ratio!r}")
    r = int(ratio)
    if power_of_two and (r < 2 or r & (r - 1)):
        raise InputError(
            f"{name} must be a power of two (2, 4, 8, ...) for the 23-tap EXP interpolator, got {r}"
        )
    return r


def check_bits(bits: object) -> int:
    """Validate the radiometric resolution in bits."""
    if bits is None:
        raise InputError("bits is required (no silent default): pass the radiometric resolution, e.g. 11")
    if isinstance(bits, (bool, np.bool_)) or not float(bits).is_integer() or not 1 <= int(bits) <= 16:
        raise InputError(f"bits must be an integer in 1..16, got {bits!r}")
    return int(bits)


def check_min_size(name: str, arr: np.ndarray, block_size: int) -> None:
    """Raise if the image is smaller than one block."""
    if arr.shape[0] < block_size or arr.shape[1] < block_size:
        raise InputError(
            f"{name}: image of {arr.shape[0]}x{arr.shape[1]} pixels is smaller than one "
            f"{block_size}x{block_size} block; use a larger image or a smaller block_size"
        )


def check_multiple_of(name: str, arr: np.ndarray, block_size: int, *, why: str) -> None:
    """Raise if the spatial size is not a multiple of the block size, saying how to crop."""
    h, w = arr.shape[:2]
    if h % block_size or w % block_size:
        hh, ww = h - h % block_size, w - w % block_size
        raise InputError(
            f"{name}: size {h}x{w} is not a multiple of the block size {block_size} ({why}). "
            f"Crop to {hh}x{ww}, e.g. {name}[:{hh}, :{ww}] (and the low-resolution MS accordingly)"
        )


def check_pan_ratio(
    fused: np.ndarray, ms: np.ndarray, pan: np.ndarray, ratio: int, *, fused_name: str = "fused"
) -> None:
    """Check the full-resolution geometry: PAN = fused grid = ratio x MS grid, same bands."""
    if pan.shape[:2] != fused.shape[:2]:
        raise InputError(
            f"pan {pan.shape[:2]} and {fused_name} {fused.shape[:2]} must have the same size (PAN scale)"
        )
    if (ms.shape[0] * ratio, ms.shape[1] * ratio) != pan.shape[:2]:
        raise InputError(
            f"pan must be exactly ratio={ratio} times the MS size: pan {pan.shape[:2]}, ms {ms.shape[:2]} "
            f"(expected ms {(pan.shape[0] / ratio, pan.shape[1] / ratio)}); check the ratio or crop "
            "both consistently"
        )
    if ms.shape[2] != fused.shape[2]:
        raise InputError(
            f"ms has {ms.shape[2]} bands but {fused_name} has {fused.shape[2]}; they must match"
        )

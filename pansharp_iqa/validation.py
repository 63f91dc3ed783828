"""The one gate: every input check of the package, and its exception family.

Every public entry point (the index functions, ``evaluate_reduced``/``evaluate_full`` in memory
and tile-wise, the reprojected protocol, the baselines, ``pansharp-eval`` and NLRNet) checks its
inputs through the rules below, so that a rule is written, worded and tested once. A rule raises
an :class:`InputError` subclass whose message names the input, says what is wrong and how to fix
it; nothing is guessed and nothing is "fixed" silently.

The rules work on two kinds of evidence:

* **arrays or shapes** (dimensions, layout, sizes, ratios, band counts), checked before any work;
* :class:`ImageFacts`: a value summary of one image (finite or not, minimum, maximum and the
  moments of a fixed subsample) made in one pass over an in-memory array
  (:func:`image_facts`) or combined from tiles (:func:`facts_from_sums`), so that the in-memory
  and tile-wise paths decide the same way on the same data.

Rules on values (all in digital numbers, DN, after any ``scale``; the table of every rule, with
its reason and override, is ``docs/validation.md``):

* NaN/Inf anywhere, and masked arrays with masked values: refused (the indexes cannot skip pixels).
* A fused image whose negatives wrapped around in an unsigned cast (65534 next to an 11-bit
  reference): refused.
* Two images on different scales (:func:`check_scales_agree`), band by band: refused when a band's
  mean and spread are both more than :data:`SCALE_FACTOR_LIMIT` times the other's, or both near a
  bit-depth factor 2**k (1/2 and 2 included); ``scale_mismatch="warn"`` scores a fused image anyway.
  Where the sensor is known, the MS's bands are held against each other (:func:`check_bands_agree`).
* Float data on a unit scale (each band within +-:data:`UNIT_SCALE_MAX`: reflectance, [0, 1] with
  overshoot) where an index rounds to integer DN (the uint16 cast of Q2n and D_lambda_K): refused.
* A reference, MS or PAN of offset or standardised data (negatives beyond resampling undershoot):
  refused. Fused images may overshoot both ways.
* A reduced-resolution reference above ``2**bits - 1`` (and a full-resolution MS only under
  ``threshold``, the one place a full-resolution number depends on ``bits``); an image above 65535
  where the uint16 cast would saturate it.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .parallel import chunks, parallel_map

__all__ = [
    # the exception family
    "InputError", "ShapeError", "LayoutError", "ScaleError", "NonFiniteError", "SettingError",
    "SensorMismatchError", "MetadataConflictError", "ConstantBlockError", "DatasetConfigError", "DataError",
    # arrays
    "image_array", "pan_array", "as_image", "as_pan", "check_image_shape", "image_and_pan",
    # value summaries
    "ImageFacts", "image_facts", "facts_from_sums", "grid_band_sums", "sample_step", "SCALE_FACTOR_LIMIT",
    "BIT_DEPTH_TOLERANCE", "BIT_DEPTH_SPREAD_TOLERANCE", "BAND_FACTOR_LIMIT", "UNIT_SCALE_MAX", "UNDERSHOOT",
    "UINT16_MAX", "SCALE_MISMATCH_POLICIES", "ScaleMismatchWarning",
    # rules
    "check_same_shape", "check_ratio", "check_bits", "check_scale", "check_choice",
    "check_block_size", "check_gnyq", "check_kernel_size", "check_min_size", "check_multiple_of", "check_pan_ratio",
    "check_reduced_geometry", "check_sensor_bands", "check_metadata",
    "check_finite_facts", "check_dn_range", "check_bits_range", "check_cast_range", "check_non_negative",
    "check_not_wrapped", "check_scales_agree", "check_bands_agree", "check_values", "checked_pair", "factor_hint",
    "bit_depth_factor", "scale_mismatches", "unit_scale_max", "check_not_masked", "integer_setting",
    "check_band_names",
    "finite_range",
]


# --------------------------------------------------------------------------- exceptions


class InputError(ValueError):
    """Invalid input to an index, protocol or command; the message names the input and the fix."""


class ShapeError(InputError):
    """Sizes, dimensions or band counts that do not fit together (or the ratio)."""


class LayoutError(ShapeError):
    """An array in another axis order than (H, W, B), e.g. channel-first (B, H, W)."""


class ScaleError(InputError):
    """Values on the wrong scale: [0, 1] data where DN are needed, mixed scales, out-of-range DN."""


class NonFiniteError(InputError):
    """NaN or infinite values."""


class SettingError(InputError):
    """A setting (ratio, bits, scale, protocol, option) that is invalid in itself."""


class SensorMismatchError(InputError):
    """A sensor that does not fit the data (band count) or the operation (missing MTF values)."""


class MetadataConflictError(InputError):
    """A setting given by the user contradicts what the data's own metadata records."""


class ConstantBlockError(InputError):
    """A block UIQI is undefined (0/0) because a block is constant: the toolbox would give NaN."""


class DatasetConfigError(SettingError):
    """A dataset's settings (``dataset.toml`` and flags) are missing or inconsistent.

    ``pansharp-eval`` reports it as a usage error (exit status 2): nothing is evaluated.
    """


class DataError(InputError):
    """One scene's files cannot be used (unreadable, wrong shape, NaNs, contradicting scale).

    ``pansharp-eval`` reports the message as that scene's failure and goes on with the others.
    """


# --------------------------------------------------------------------------- arrays


def check_not_masked(name: str, value: object) -> object:
    """Refuse a ``numpy.ma`` masked array with masked values; return the data of one without.

    The indexes cannot leave pixels out, and the values under a mask are whatever was stored there:
    scoring them (what dropping the mask does) gives a wrong number. A masked array whose mask is
    empty is its data.

    Parameters
    ----------
    name : str
        Argument name used in the message.
    value : object
        Any input image.

    Returns
    -------
    object
        ``value``, or the plain ndarray of a masked array without masked values.

    Raises
    ------
    InputError
        Masked values.

    Examples
    --------
    >>> check_not_masked("fused", np.ma.masked_array(np.ones((2, 2)), mask=[[0, 1], [0, 0]]))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.InputError: fused: a masked array with 1 masked values; the indexes cannot leave pixels out, and the values under the mask would be scored as data. Crop the images to a window without masked pixels, or fill them (np.ma.filled(fused, value)) if scoring the filled values is intended
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if not isinstance(value, np.ma.MaskedArray):
        return value
    mask = np.ma.getmask(value)
    n = 0 if mask is np.ma.nomask else int(np.count_nonzero(mask))
    if n:
        raise InputError(
            f"{name}: a masked array with {n} masked values; the indexes cannot leave pixels out, and the "
            f"values under the mask would be scored as data. Crop the images to a window without masked "
            f"pixels, or fill them (np.ma.filled({name}, value)) if scoring the filled values is intended"
        )
    return np.ma.getdata(value)


def _real_array(name: str, value: object) -> np.ndarray:
    value = check_not_masked(name, value)
    arr = value if isinstance(value, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise InputError(f"{name}: cannot convert to an array ({exc})") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError(f"{name}: expected an integer or float array, got dtype {arr.dtype}")
    return arr


def _looks_channel_first(shape: tuple[int, ...]) -> bool:
    """A 3-D shape that reads as (B, H, W): a band-count-sized first axis, two image-sized others."""
    b, h, w = shape
    return b <= 16 and min(h, w) >= max(32, 4 * b) and w > b


def _layout_error(name: str, shape: tuple[int, ...]) -> LayoutError:
    b, h, w = shape
    return LayoutError(
        f"{name}: shape {tuple(shape)} looks channel-first (B, H, W) = ({b} bands of {h}x{w}); "
        f"images are (H, W, B) here (the library never guesses the layout): pass "
        f"np.moveaxis({name}, 0, -1)"
    )


def check_image_shape(name: str, shape: Sequence[int]) -> tuple[int, int, int]:
    """An image shape must be (H, W, B), non-empty, and not read as channel-first.

    Parameters
    ----------
    name : str
        Role of the image in messages.
    shape : sequence of int
        The shape (a 2-D shape is one band).

    Returns
    -------
    (int, int, int)

    Raises
    ------
    ShapeError, LayoutError

    Examples
    --------
    >>> check_image_shape("fused", (64, 64))
    (64, 64, 1)
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) == 2:
        shape = (*shape, 1)
    if len(shape) != 3:
        raise ShapeError(f"{name}: expected a 3-D (H, W, B) image, got shape {shape}")
    if min(shape) == 0:
        raise ShapeError(f"{name}: empty image of shape {shape}")
    if _looks_channel_first(shape):
        raise _layout_error(name, shape)
    return shape


def _image_dims(name: str, arr: np.ndarray, *, allow_2d: bool) -> np.ndarray:
    if arr.ndim == 2:
        if not allow_2d:
            raise ShapeError(
                f"{name}: expected a 3-D (H, W, B) image, got a 2-D array of shape {arr.shape}; "
                f"for a single band pass {name}[..., None]"
            )
        arr = arr[:, :, None]
    check_image_shape(name, arr.shape)
    return arr


def image_array(name: str, value: object, *, allow_2d: bool = False) -> np.ndarray:
    """Validate an (H, W, B) image of a real dtype and return it without copying.

    Parameters
    ----------
    name : str
        Argument name used in error messages.
    value : array_like
        Integer or float image, (H, W, B).
    allow_2d : bool
        Accept an (H, W) array as one band (returned as an (H, W, 1) view).

    Returns
    -------
    ndarray, shape (H, W, B)
        The input (or ``np.asarray`` of it); never modify it.

    Raises
    ------
    InputError
        Not a real-valued array; :class:`ShapeError` for other dimensions or an empty image;
        :class:`LayoutError` for an array that looks channel-first.

    Examples
    --------
    >>> image_array("fused", np.zeros((64, 64, 4))).shape
    (64, 64, 4)
    >>> image_array("fused", np.zeros((4, 64, 64)))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.LayoutError: fused: shape (4, 64, 64) looks channel-first (B, H, W) = (4 bands of 64x64); images are (H, W, B) here (the library never guesses the layout): pass np.moveaxis(fused, 0, -1)
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    return _image_dims(name, _real_array(name, value), allow_2d=allow_2d)


def pan_array(name: str, value: object) -> np.ndarray:
    """Validate a PAN image, (H, W) or (H, W, 1), and return it as (H, W) without copying.

    Parameters
    ----------
    name : str
        Role of the image in messages.
    value : array_like
        The PAN, (H, W) or (H, W, 1).

    Returns
    -------
    ndarray, shape (H, W)

    Examples
    --------
    >>> pan_array("pan", np.zeros((64, 64, 1))).shape
    (64, 64)
    """
    arr = _real_array(name, value)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim == 3 and arr.shape[0] == 1 and min(arr.shape[1:]) > 1:
        raise LayoutError(
            f"{name}: shape {arr.shape} looks channel-first (1, H, W); pass {name}[0] (an (H, W) array)"
        )
    if arr.ndim != 2:
        raise ShapeError(f"{name}: expected a 2-D (H, W) panchromatic image, got shape {arr.shape}")
    if min(arr.shape) == 0:
        raise ShapeError(f"{name}: empty image of shape {arr.shape}")
    return arr


def _as_float(arr: np.ndarray, name: str) -> np.ndarray:
    out = np.array(arr, dtype=np.float64, copy=True, order="C")
    if not np.isfinite(out).all():
        _raise_non_finite(name, int(np.size(out) - np.count_nonzero(np.isfinite(out))))
    return out


def as_image(name: str, value: object, *, allow_2d: bool = False) -> np.ndarray:
    """:func:`image_array`, returned as a new C-contiguous float64 array of finite values.

    Parameters
    ----------
    name : str
        Role of the image in messages (``"fused"``, ``"ms"``, ...).
    value : array_like
        The image, (H, W, B) (or (H, W) with ``allow_2d``).
    allow_2d : bool
        Accept an (H, W) image as one band.

    Returns
    -------
    ndarray, shape (H, W, B), float64

    Raises
    ------
    InputError
        As :func:`image_array`; :class:`NonFiniteError` for NaN/Inf.

    Examples
    --------
    >>> as_image("ms", np.ones((8, 8), dtype=np.uint16), allow_2d=True).dtype
    dtype('float64')
    """
    return _as_float(image_array(name, value, allow_2d=allow_2d), name)


def as_pan(name: str, value: object) -> np.ndarray:
    """Validate a PAN image, (H, W) or (H, W, 1), and return it as a new (H, W) float64 array.

    Parameters
    ----------
    name : str
        Role of the image in messages.
    value : array_like
        The PAN, (H, W) or (H, W, 1).

    Returns
    -------
    ndarray, shape (H, W), float64

    Examples
    --------
    >>> as_pan("pan", np.ones((8, 8, 1))).shape
    (8, 8)
    """
    return _as_float(pan_array(name, value), name)


# --------------------------------------------------------------------------- value summaries

#: Largest factor between the means and between the spreads of a band of two images that should be
#: on the same scale (fused vs reference, fused vs MS, PAN vs MS): a factor beyond it in both, alike,
#: is a scale mistake whatever its value. Measured on real scenes: fused vs reference band means
#: within a few percent, spreads 0.70-1.96 (EXP to MTF-GLP-HPM, WV2 and IKONOS at both
#: resolutions); PAN/MS means 0.84-1.10 and spreads 0.48-1.26 (WV2, IKONOS, WV3, SpaceNet).
#: Smaller factors are refused only when they are bit-depth factors (:data:`BIT_DEPTH_TOLERANCE`).
SCALE_FACTOR_LIMIT = 3.0
#: A band mean within this factor of a power of two 2**k (k = +-1..+-16: a bit-depth re-export such
#: as (2**12 - 1)/(2**11 - 1), an 8-bit product scaled by 8, a [0, 1] normalisation), with the band
#: spread within :data:`BIT_DEPTH_SPREAD_TOLERANCE` of the same factor, is refused whatever its size:
#: real fusions keep each band's mean within a few percent, and every (2**a - 1)/(2**b - 1) ratio
#: lies within 0.5 % of its power of two; methods biased by up to 40 % and a briefly trained network
#: whose band means are 1.85 times the reference's (NLRNet's smoke run) stay outside (0.6, 1.4 and
#: 1.85 are not within 5 % of 1/2 or 2: a bias, not a re-export, gives those numbers).
BIT_DEPTH_TOLERANCE = 1.05
#: How far (a factor) the spread may stray from a bit-depth factor found on the mean: a re-export
#: multiplies the fusion's own spread ratio (0.70 for EXP at reduced resolution, about 1 to 1.2 for
#: most methods) by the factor; a poor method that moves the mean by 70 % but the spread by 20 % is
#: outside (1.22 is not within 1.6 of 2).
BIT_DEPTH_SPREAD_TOLERANCE = 1.6
#: Where the sensor is known, a band of the MS (or reduced-resolution reference) whose mean and
#: spread are both beyond this factor of the bands' medians is on another scale than its other bands
#: (measured on real scenes: 0.51-3.13, SpaceNet's NIR being the largest; one band left on [0, 1]
#: is a factor 255-65535).
BAND_FACTOR_LIMIT = 32.0
#: Float bands whose values all lie within +-this (DN, after ``scale``) are on a unit scale
#: (reflectance, [0, 1]-normalised values with their overshoot) where an index rounds to integer DN:
#: the uint16 cast keeps at most 5 levels of them. Lowered to ``(2**bits - 1) / 64`` for bit depths
#: below 8, so that genuine low-bit DN stay legitimate.
UNIT_SCALE_MAX = 4.0
#: Negative values of a reference, MS or PAN below ``-UNDERSHOOT * max`` are not resampling
#: undershoot (bicubic shrinking of real and synthetic scenes: at most 3.2 % of the maximum, steps
#: 1.3 %) but offset or standardised data.
UNDERSHOOT = 0.15
#: Samples per band of the scale summary (a regular grid of pixels, the same in memory and tile-wise):
#: plenty for a mean and a spread, and cheap (its cost: ``docs/performance.md``).
_SCALE_SAMPLES = 2**14


def sample_step(height: int, width: int) -> int:
    """Grid step of the scale summary: pixels at rows and columns that are multiples of it.

    Parameters
    ----------
    height, width : int
        Image size (pixels).

    Returns
    -------
    int
        ``max(1, isqrt(height * width // 16384))``: about 16,384 pixels per band at most.

    Examples
    --------
    >>> sample_step(1024, 1024), sample_step(100, 100)
    (8, 1)
    """
    return max(1, math.isqrt(int(height) * int(width) // _SCALE_SAMPLES))


def _spread(n: float, total: float, total_sq: float) -> float:
    if not n:
        return 0.0
    mean = total / n
    spread = math.sqrt(max(total_sq / n - mean**2, 0.0))
    # sums of squares lose ~sqrt(eps) of the mean: below that, the image is constant
    return spread if spread > 1e-7 * abs(mean) else 0.0


@dataclasses.dataclass(frozen=True)
class ImageFacts:
    """Value summary of one image, the evidence the value rules decide on.

    Parameters
    ----------
    name : str
        Role of the image in messages (``"fused"``, ``"reference"``, ``"ms"``, ``"pan"``).
    shape : tuple of int
        ``(H, W, B)`` (``(H, W, 1)`` for a PAN).
    dtype : str
        Stored dtype (integer data are DN by definition).
    non_finite : int
        Number of NaN/Inf values (0 when finite).
    lo, hi : float
        Minimum and maximum over every value (DN, after the scale).
    n, total, total_sq : float
        Count, sum and sum of squares of the values on the :func:`sample_step` grid (DN), all bands.
    band_total, band_total_sq : tuple of float
        The same sums per band (empty: only the pooled sums are known).
    band_lo, band_hi : tuple of float
        Minimum and maximum per band on the sample grid (empty: not known).
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    non_finite: int
    lo: float
    hi: float
    n: float
    total: float
    total_sq: float
    band_total: tuple[float, ...] = ()
    band_total_sq: tuple[float, ...] = ()
    band_lo: tuple[float, ...] = ()
    band_hi: tuple[float, ...] = ()

    @property
    def integer(self) -> bool:
        """Whether the stored dtype is an integer type."""
        return np.issubdtype(np.dtype(self.dtype), np.integer)

    @property
    def mean(self) -> float:
        """Mean of the sampled values (DN)."""
        return self.total / self.n if self.n else 0.0

    @property
    def spread(self) -> float:
        """Standard deviation of the sampled values (DN)."""
        return _spread(self.n, self.total, self.total_sq)

    @property
    def n_bands(self) -> int:
        """Bands the per-band sums describe (1 when only pooled sums are known)."""
        return len(self.band_total) or 1

    def band_means(self) -> np.ndarray:
        """Mean of each band's sampled values (DN); the pooled mean when bands are not known."""
        if not self.band_total:
            return np.array([self.mean])
        per = self.n / len(self.band_total)
        return np.array([t / per if per else 0.0 for t in self.band_total])

    def band_spreads(self) -> np.ndarray:
        """Standard deviation of each band's sampled values (DN)."""
        if not self.band_total:
            return np.array([self.spread])
        per = self.n / len(self.band_total)
        return np.array([_spread(per, t, q) for t, q in zip(self.band_total, self.band_total_sq, strict=True)])

    def band_peaks(self) -> np.ndarray:
        """Largest magnitude of each band's sampled values (DN); of every value when bands are not known."""
        if not self.band_hi:
            return np.array([max(abs(self.lo), abs(self.hi))])
        return np.maximum(np.abs(self.band_lo), np.abs(self.band_hi))


def _raise_non_finite(name: str, n_bad: int) -> None:
    raise NonFiniteError(
        f"{name}: contains {n_bad} non-finite values (NaN/Inf); indexes are undefined there. "
        "Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window)."
    )


def finite_range(name: str, arr: np.ndarray) -> tuple[float, float]:
    """Minimum and maximum of an array, refusing NaN/Inf with a message that names it.

    Parameters
    ----------
    name : str
        Role of the array in messages.
    arr : ndarray
        Integer or float values.

    Returns
    -------
    (float, float)
        ``(min, max)``.

    Examples
    --------
    >>> finite_range("ms", np.array([[1.0, 5.0]]))
    (1.0, 5.0)
    """
    parts = np.array(parallel_map(lambda sl: (np.min(arr[sl]), np.max(arr[sl])), chunks(arr.shape[0], 4)),
                     dtype=np.float64)
    lo, hi = float(np.min(parts[:, 0])), float(np.max(parts[:, 1]))  # numpy's min/max propagate NaN
    if not (np.isfinite(lo) and np.isfinite(hi)):  # min/max propagate NaN and reach +-Inf
        _raise_non_finite(name, int(np.size(arr) - np.count_nonzero(np.isfinite(arr))))
    return lo, hi


def grid_band_sums(sample: np.ndarray,
                   scale: float = 1.0) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-band sums of sampled pixels: the one formula of the in-memory and tile-wise summaries.

    Parameters
    ----------
    sample : ndarray, shape (h, w, B) or (h, w)
        Pixels of the :func:`sample_step` grid (any real dtype).
    scale : float
        Multiplier to DN.

    Returns
    -------
    (int, ndarray, ndarray, ndarray, ndarray)
        Values per band, and per band the sum, the sum of squares, the minimum and the maximum (DN;
        minimum +inf and maximum -inf for an empty sample).

    Examples
    --------
    >>> n, total, total_sq, lo, hi = grid_band_sums(np.arange(8.0).reshape(2, 2, 2))
    >>> n, total.tolist(), hi.tolist()
    (4, [12.0, 16.0], [6.0, 7.0])
    """
    s = np.asarray(sample, dtype=np.float64)
    bands = s.shape[2] if s.ndim == 3 else 1
    per = s.reshape(-1, bands)
    if scale != 1.0:
        per = per * scale
    if not per.shape[0]:
        empty = np.zeros(bands)
        return 0, empty, empty.copy(), np.full(bands, np.inf), np.full(bands, -np.inf)
    return (per.shape[0], per.sum(axis=0), np.einsum("ij,ij->j", per, per), per.min(axis=0), per.max(axis=0))


def image_facts(name: str, arr: np.ndarray, *, scale: float = 1.0) -> ImageFacts:
    """Value summary of an in-memory image (one min/max pass plus a fixed subsample, per band).

    Parameters
    ----------
    name : str
        Role of the image in messages.
    arr : ndarray, shape (H, W, B) or (H, W)
        Any real dtype (read only).
    scale : float
        Multiplier to DN applied to the summary.

    Returns
    -------
    ImageFacts

    Raises
    ------
    NonFiniteError
        NaN/Inf values (counted in the message).

    Examples
    --------
    >>> f = image_facts("ms", np.full((4, 4, 2), 3, dtype=np.uint16), scale=2.0)
    >>> (f.lo, f.hi, f.mean, f.spread, f.integer, f.band_means().tolist())
    (6.0, 6.0, 6.0, 0.0, True, [6.0, 6.0])
    """
    lo, hi = finite_range(name, arr)
    step = sample_step(arr.shape[0], arr.shape[1])
    count, total, total_sq, g_lo, g_hi = grid_band_sums(arr[::step, ::step], scale)
    shape = tuple(arr.shape) if arr.ndim == 3 else (*arr.shape, 1)
    lo, hi = (lo * scale, hi * scale) if scale >= 0 else (hi * scale, lo * scale)
    return facts_from_sums(name, shape, arr.dtype, lo=lo, hi=hi, n=count * len(total), total=float(total.sum()),
                           total_sq=float(total_sq.sum()), band_total=total, band_total_sq=total_sq,
                           band_lo=g_lo, band_hi=g_hi)


def facts_from_sums(name: str, shape: Sequence[int], dtype: Any, *, lo: float, hi: float, n: float,
                    total: float, total_sq: float, non_finite: int = 0,
                    band_total: Sequence[float] | np.ndarray = (), band_total_sq: Sequence[float] | np.ndarray = (),
                    band_lo: Sequence[float] | np.ndarray = (),
                    band_hi: Sequence[float] | np.ndarray = ()) -> ImageFacts:
    """An :class:`ImageFacts` from sums combined over tiles (see :func:`grid_band_sums`).

    Parameters
    ----------
    name : str
        Role of the image in messages.
    shape : sequence of int
        Shape of the whole image, (H, W, B).
    dtype : dtype-like
        Stored dtype (integer data are DN by definition).
    lo, hi : float
        Minimum and maximum over every pixel (DN).
    n, total, total_sq : float
        Count, sum and sum of squares over the values on the :func:`sample_step` grid (DN), all bands.
    non_finite : int
        NaN/Inf values found.
    band_total, band_total_sq, band_lo, band_hi : sequence of float, optional
        Per band: sum, sum of squares, minimum and maximum on the grid (omitted: pooled sums only,
        and the per-band rules see one band).

    Returns
    -------
    ImageFacts

    Examples
    --------
    >>> facts_from_sums("ms", (4, 4, 1), "uint16", lo=0, hi=4, n=4, total=8, total_sq=20).spread
    1.0
    """
    shape = tuple(int(s) for s in shape)

    def floats(values: Sequence[float] | np.ndarray) -> tuple[float, ...]:
        return tuple(float(v) for v in np.asarray(values, dtype=np.float64).ravel())

    return ImageFacts(name, shape, str(np.dtype(dtype)), int(non_finite), float(lo), float(hi),
                      float(n), float(total), float(total_sq), floats(band_total), floats(band_total_sq),
                      floats(band_lo), floats(band_hi))


# --------------------------------------------------------------------------- rules: settings


def _number(value: object) -> float:
    """``float(value)`` for real numbers (not bools or strings), NaN otherwise."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        return math.nan
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _integer(value: object) -> int | None:
    """The integer a value stands for (``4``, ``4.0``, ``np.int64(4)``, ``"4"``), else None."""
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        number = _number(value)
    return int(number) if math.isfinite(number) and number.is_integer() else None


def integer_setting(name: str, value: object, *, lo: int | None = None, hi: int | None = None) -> int:
    """The one rule for integer settings (ratio, bits, block sizes, ...), everywhere.

    Accepted: an integer, an integral float (``4.0``) or a string that spells one (``"4"``, as a
    TOML file or a command-line flag gives it); the library, ``dataset.toml`` and the flags of
    ``pansharp-eval`` all call this function. Refused: booleans, ``None``, fractions (``4.5``) and
    other strings; values outside ``[lo, hi]``.

    Parameters
    ----------
    name : str
        The setting, for the message.
    value : object
        The value given.
    lo, hi : int, optional
        Bounds (inclusive).

    Returns
    -------
    int

    Raises
    ------
    SettingError

    Examples
    --------
    >>> integer_setting("ratio", "4"), integer_setting("ratio", 4.0), integer_setting("bits", np.int64(11))
    (4, 4, 11)
    >>> integer_setting("ratio", 4.5)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.SettingError: ratio must be an integer, got 4.5
    """
    number = _integer(value)
    if number is None:
        got = f"the string {value!r}" if isinstance(value, str) else repr(value)
        raise SettingError(f"{name} must be an integer, got {got}")
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        span = f"between {lo} and {hi}" if lo is not None and hi is not None else (
            f">= {lo}" if lo is not None else f"<= {hi}")
        raise SettingError(f"{name} must be an integer {span}, got {number}")
    return number


def check_choice(name: str, value: object, choices: Sequence[object]) -> Any:
    """Refuse a value outside a fixed set of options.

    Parameters
    ----------
    name : str
        Name of the setting in messages.
    value : object
        The value given.
    choices : sequence
        The accepted values.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    SettingError
        A value outside ``choices`` (the message lists them).

    Examples
    --------
    >>> check_choice("nan_policy", "omit", ("raise", "omit", "propagate"))
    'omit'
    """
    if value not in choices:
        raise SettingError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_ratio(ratio: object, *, exp: bool = True, name: str = "ratio") -> int:
    """The one ratio rule: an integer >= 2, a power of two where the 23-tap EXP runs.

    The PAN/MS resolution ratio is required everywhere (no silent default). Wherever the toolbox's
    23-tap EXP interpolator runs (the toolbox-family full-resolution indexes, ``interp23tap``, the
    baselines) it must be a power of two; elsewhere (reduced resolution, where it only scales
    ERGAS; Wald degradation; the reprojected protocol) any integer >= 2 is accepted, by the
    library and by ``pansharp-eval`` alike.

    Parameters
    ----------
    ratio : int
        PAN/MS resolution ratio (an integral float or a string that spells one is accepted).
    exp : bool
        The operation uses the EXP interpolator (power of two required).
    name : str
        Name of the setting in messages.

    Returns
    -------
    int

    Examples
    --------
    >>> check_ratio(4), check_ratio(3, exp=False)
    (4, 3)
    >>> check_ratio(3)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.SettingError: ratio must be a power of two (2, 4, 8, ...) for the 23-tap EXP interpolator, got 3
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if ratio is None:
        raise SettingError(f"{name} is required (no silent default): pass the PAN/MS resolution ratio, e.g. 4")
    r = _integer(ratio)
    if r is None or r < 2:
        got = f"the string {ratio!r}" if isinstance(ratio, str) else repr(ratio)
        raise SettingError(f"{name} must be an integer >= 2 (the PAN/MS resolution ratio), got {got}")
    if exp and r & (r - 1):
        raise SettingError(
            f"{name} must be a power of two (2, 4, 8, ...) for the 23-tap EXP interpolator, got {r}"
        )
    return r


def check_bits(bits: object) -> int:
    """Validate the radiometric resolution in bits (1..16, required).

    Parameters
    ----------
    bits : int
        Radiometric resolution (bits); an integral float or a string that spells one is accepted.

    Returns
    -------
    int

    Raises
    ------
    SettingError
        Missing, not an integer, or outside 1..16.

    Examples
    --------
    >>> check_bits(11)
    11
    """
    if bits is None:
        raise SettingError("bits is required (no silent default): pass the radiometric resolution, e.g. 11")
    b = _integer(bits)
    if b is None or not 1 <= b <= 16:
        raise SettingError(f"bits must be an integer in 1..16, got {bits!r}")
    return b


def check_scale(scale: object) -> float:
    """Validate a multiplier to digital numbers (a positive finite number).

    Parameters
    ----------
    scale : float
        Multiplier from the stored values to DN.

    Returns
    -------
    float

    Raises
    ------
    SettingError
        Not a positive finite number.

    Examples
    --------
    >>> check_scale(2047)
    2047.0
    """
    value = _number(scale)
    if not (math.isfinite(value) and value > 0):
        raise SettingError(f"scale must be a positive number (multiplier to DN), got {scale!r}")
    return value


def check_block_size(block_size: object, *, name: str = "block_size", minimum: int = 2) -> int:
    """Validate a block or window side in pixels (an integer >= ``minimum``).

    Parameters
    ----------
    block_size : int
        The side (pixels).
    name : str
        Name of the setting in messages.
    minimum : int
        Smallest side accepted.

    Returns
    -------
    int

    Raises
    ------
    SettingError
        Not an integer, or below ``minimum``.

    Examples
    --------
    >>> check_block_size(32)
    32
    """
    size = _integer(block_size)
    if size is None or size < minimum:
        raise SettingError(f"{name} must be an integer >= {minimum}, got {block_size!r}")
    return size


def check_gnyq(gnyq: object, *, name: str = "gnyq") -> float:
    """Validate an MTF gain at the Nyquist frequency: a number in (0, 1).

    Parameters
    ----------
    gnyq : float
        MTF gain at the Nyquist frequency (dimensionless).
    name : str
        Name of the setting in messages.

    Returns
    -------
    float

    Raises
    ------
    SettingError
        Not a number in (0, 1).

    Examples
    --------
    >>> check_gnyq(0.3)
    0.3
    """
    value = _number(gnyq)
    if not 0.0 < value < 1.0:
        raise SettingError(f"{name} must be in (0, 1), got {gnyq!r}")
    return value


def check_kernel_size(size: object) -> int:
    """Validate a filter kernel side in taps: an odd integer >= 3.

    Parameters
    ----------
    size : int
        Kernel side (taps).

    Returns
    -------
    int

    Raises
    ------
    SettingError
        Not an odd integer >= 3.

    Examples
    --------
    >>> check_kernel_size(41)
    41
    """
    taps = _integer(size)
    if taps is None or taps < 3 or taps % 2 == 0:
        raise SettingError(f"size must be an odd integer >= 3, got {size!r}")
    return taps


def check_sensor_bands(sensor: Any, n_bands: int, *, name: str = "ms",
                       protocol: str | None = None) -> tuple[float, ...]:
    """The sensor must fit the data's band count; returns its per-band MS GNyq.

    Parameters
    ----------
    sensor : Sensor
        A resolved :class:`pansharp_iqa.sensors.Sensor`.
    n_bands : int
        Bands of the data.
    name : str
        The image the band count comes from.
    protocol : str, optional
        Protocol name, for a protocol override recorded in the sensor file.

    Returns
    -------
    tuple of float
        One MS GNyq per band.

    Raises
    ------
    SensorMismatchError
        The sensor has another band count (the message says how to select a band subset).

    Examples
    --------
    >>> from pansharp_iqa import get_sensor
    >>> check_sensor_bands(get_sensor("QB"), 4)
    (0.34, 0.32, 0.3, 0.22)
    """
    try:
        return tuple(float(g) for g in sensor.gnyq_for(int(n_bands), protocol=protocol))
    except ValueError as exc:
        raise SensorMismatchError(f"{name} has {n_bands} bands, which does not fit: {exc}") from None


def check_band_names(sensor: Any, names: object, *, what: str = "band_names") -> tuple[str, ...]:
    """Validate an MS band order against a sensor: every name one of its bands, none twice.

    A named sensor applies its MTF per named band (:meth:`pansharp_iqa.Sensor.select_bands`),
    so a typo or a duplicate would give a band another band's MTF; the generic sensor (one MTF for
    every band) takes any distinct labels.

    Parameters
    ----------
    sensor : Sensor
        The sensor the MS comes from.
    names : sequence of str
        MS band names in file order (case-insensitive).
    what : str
        Where the names come from, for the message.

    Returns
    -------
    tuple of str
        The names, spelled as the sensor spells them (generic sensor: as given).

    Raises
    ------
    SettingError
        Not a list of strings, or a name given twice.
    SensorMismatchError
        A name the sensor does not have (the message lists its bands and the closest one).

    Examples
    --------
    >>> from pansharp_iqa import get_sensor
    >>> check_band_names(get_sensor("IKONOS"), ["nir", "Red", "Green", "Blue"])
    ('NIR', 'Red', 'Green', 'Blue')
    >>> check_band_names(get_sensor("WV2"), ["Blue", "NIR3"])
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.SensorMismatchError: sensor 'WV2' has no band 'NIR3' (band_names); its bands are ['Coastal', 'Blue', 'Green', 'Yellow', 'Red', 'RedEdge', 'NIR1', 'NIR2'] (closest: 'NIR2')
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    import difflib

    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(b, str) for b in names):
        raise SettingError(f"{what} must be a list of band names (strings), got {names!r}")
    seen: dict[str, str] = {}
    for b in names:
        if b.strip().lower() in seen:
            raise SettingError(f"{what} lists band {b!r} twice ({list(names)}); each band of the MS once, in the "
                               "order the files store them")
        seen[b.strip().lower()] = b
    own = getattr(sensor, "band_names", None)
    if own is None:  # the generic sensor: labels only
        return tuple(names)
    lookup = {b.lower(): b for b in own}
    out = []
    for b in names:
        canonical = lookup.get(b.strip().lower())
        if canonical is None:
            close = difflib.get_close_matches(b, list(own), n=1, cutoff=0.5)
            hint = f" (closest: {close[0]!r})" if close else ""
            raise SensorMismatchError(
                f"sensor {sensor.name!r} has no band {b!r} ({what}); its bands are {list(own)}{hint}"
            )
        out.append(canonical)
    return tuple(out)


def check_metadata(setting: str, given: object, recorded: object, *, source: str, flag: str) -> None:
    """A setting given by the user must agree with what the data records about itself.

    Parameters
    ----------
    setting : str
        Name of the setting (``"sensor"``, ``"ratio"``, ...).
    given : object
        The user's value (``None``: not given, nothing to compare).
    recorded : object
        The value recorded in the data (``None``: not recorded).
    source : str
        Where it is recorded (e.g. ``"imgIK.mat: sensor"``).
    flag : str
        How the user gave it (e.g. ``"dataset.toml sensor"``), for the message.

    Raises
    ------
    MetadataConflictError
        Both known and different (strings compared case-insensitively; sensor aliases are compared
        by ``pansharp_iqa.io.metadata.check_setting``).

    Examples
    --------
    >>> check_metadata("ratio", 4, 4, source="a.mat: ratio", flag="--ratio")
    >>> check_metadata("ratio", 2, 4, source="a.mat: ratio", flag="--ratio")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.MetadataConflictError: --ratio says ratio = 2 but a.mat: ratio records 4; the data's own metadata wins unless you are sure: fix the setting (or remove it and let the file decide)
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if given is None or recorded is None:
        return
    a, b = given, recorded
    if isinstance(a, str) or isinstance(b, str):
        a, b = str(a).strip().lower(), str(b).strip().lower()
    elif isinstance(a, (int, float, np.integer, np.floating)) and isinstance(b, (int, float, np.integer, np.floating)):
        a, b = float(a), float(b)
    if a != b:
        raise MetadataConflictError(
            f"{flag} says {setting} = {given!r} but {source} records {recorded!r}; the data's own "
            "metadata wins unless you are sure: fix the setting (or remove it and let the file decide)"
        )


# --------------------------------------------------------------------------- rules: geometry


def check_same_shape(name_a: str, a: Any, name_b: str, b: Any) -> None:
    """Raise if two images differ in shape (names both, and the band counts if those differ).

    ``a`` and ``b`` are arrays or anything with a ``shape``.

    Parameters
    ----------
    name_a : str
        Role of the first image in messages.
    a : array_like or shape holder
        The first image.
    name_b : str
        Role of the second image in messages.
    b : array_like or shape holder
        The second image.

    Raises
    ------
    ShapeError
        The shapes differ.

    Examples
    --------
    >>> check_same_shape("reference", np.zeros((4, 4, 3)), "fused", np.zeros((4, 4, 3)))
    """
    if tuple(a.shape) != tuple(b.shape):
        what = "band counts" if tuple(a.shape[:2]) == tuple(b.shape[:2]) else "shapes"
        raise ShapeError(
            f"{name_a} and {name_b} differ in {what}: {tuple(a.shape)} vs {tuple(b.shape)}; both must be "
            "(H, W, B) on the same grid with the same bands"
        )


def image_and_pan(image_name: str, image: object, pan_name: str, pan: object) -> tuple[np.ndarray, np.ndarray]:
    """An (H, W, B) image and a single-band (H, W) image on the same grid, as float64 copies.

    Parameters
    ----------
    image_name : str
        Role of the image in messages.
    image : array_like, (H, W, B) or (H, W)
        The image.
    pan_name : str
        Role of the PAN in messages.
    pan : array_like, (H, W) or (H, W, 1)
        The PAN.

    Returns
    -------
    (ndarray, ndarray)
        Float64 copies: the image and the PAN as (H, W).

    Raises
    ------
    InputError
        As :func:`as_image` and :func:`as_pan`; :class:`ShapeError` for another grid.

    Examples
    --------
    >>> x, p = image_and_pan("fused", np.ones((8, 8, 3)), "pan", np.ones((8, 8)))
    >>> x.shape, p.shape
    ((8, 8, 3), (8, 8))
    """
    img = as_image(image_name, image, allow_2d=True)
    pan_a = as_pan(pan_name, pan)
    if img.shape[:2] != pan_a.shape:
        raise ShapeError(f"{image_name} and {pan_name} must have the same height and width: {image_name} "
                         f"{img.shape[:2]}, {pan_name} {pan_a.shape}")
    return img, pan_a


def check_min_size(name: str, shape: Sequence[int], block_size: int, *, why: str = "") -> None:
    """Raise if the image is smaller than one ``block_size`` block.

    Parameters
    ----------
    name : str
        Role of the image in messages.
    shape : sequence of int
        Its shape, (H, W[, B]).
    block_size : int
        Block side (pixels).
    why : str
        What needs whole blocks, for the message.

    Raises
    ------
    ShapeError
        Smaller than one block.

    Examples
    --------
    >>> check_min_size("reference", (64, 64, 4), 32)
    """
    h, w = int(shape[0]), int(shape[1])
    if h < block_size or w < block_size:
        reason = f" ({why})" if why else ""
        raise ShapeError(
            f"{name}: image of {h}x{w} pixels is smaller than one {block_size}x{block_size} block"
            f"{reason}; use a larger image or a smaller block_size"
        )


def check_multiple_of(name: str, shape: Sequence[int], block_size: int, *, why: str) -> None:
    """Raise if the spatial size is not a multiple of the block size, saying how to crop.

    Parameters
    ----------
    name : str
        Role of the image in messages.
    shape : sequence of int
        Its shape, (H, W[, B]).
    block_size : int
        Block side (pixels).
    why : str
        What needs whole blocks, for the message.

    Raises
    ------
    ShapeError
        Smaller than one block, or not a multiple of it (the message says how to crop).

    Examples
    --------
    >>> check_multiple_of("fused", (16, 16, 4), 32, why="block-wise QNR")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ShapeError: fused: image of 16x16 pixels is smaller than one 32x32 block (block-wise QNR); use a larger image or a smaller block_size
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    check_min_size(name, shape, block_size, why=why)
    h, w = int(shape[0]), int(shape[1])
    if h % block_size or w % block_size:
        hh, ww = h - h % block_size, w - w % block_size
        raise ShapeError(
            f"{name}: size {h}x{w} is not a multiple of the block size {block_size} ({why}). "
            f"Crop to {hh}x{ww}, e.g. {name}[:{hh}, :{ww}] (and the low-resolution MS accordingly)"
        )


def check_pan_ratio(fused: Any, ms: Any, pan: Any, ratio: int, *, fused_name: str = "fused",
                    pan_name: str = "pan") -> None:
    """Full-resolution geometry: PAN = fused grid = ratio x MS grid, same bands in fused and MS.

    Arguments are arrays or anything with ``shape`` ((H, W, B) for fused and MS, (H, W[, 1]) for
    the PAN).

    Parameters
    ----------
    fused : array_like or shape holder, (H, W, B)
        Fused image at PAN scale.
    ms : array_like or shape holder, (H/ratio, W/ratio, B)
        Low-resolution MS.
    pan : array_like or shape holder, (H, W[, 1])
        PAN.
    ratio : int
        PAN/MS resolution ratio.
    fused_name, pan_name : str
        Roles of the fused image and the PAN in messages.

    Raises
    ------
    ShapeError
        A size or band count that does not fit.

    Examples
    --------
    >>> check_pan_ratio(np.zeros((8, 8, 4)), np.zeros((2, 2, 4)), np.zeros((8, 8)), 4)
    """
    fs, ms_s, ps = tuple(fused.shape), tuple(ms.shape), tuple(pan.shape)
    if ps[:2] != fs[:2]:
        raise ShapeError(f"{pan_name} {ps[:2]} and {fused_name} {fs[:2]} must have the same size (PAN scale)")
    if (ms_s[0] * ratio, ms_s[1] * ratio) != ps[:2]:
        hint = ""
        if ps[0] % ms_s[0] == 0 and ps[1] % ms_s[1] == 0 and ps[0] // ms_s[0] == ps[1] // ms_s[1]:
            hint = f" (the sizes say ratio {ps[0] // ms_s[0]})"
        raise ShapeError(
            f"{pan_name} must be exactly ratio={ratio} times the MS size: {pan_name} {ps[:2]}, ms {ms_s[:2]}{hint}; "
            "check the ratio, or crop both consistently"
        )
    if ms_s[2] != fs[2]:
        raise ShapeError(f"ms has {ms_s[2]} bands but {fused_name} has {fs[2]}; they must match")


def check_reduced_geometry(reference: Any, *, ratio: int, ms: Any = None, pan: Any = None) -> None:
    """Reduced-resolution scene geometry: ``reference = ratio x ms``, ``pan = reference`` in size.

    Parameters
    ----------
    reference : array or shape holder, (H, W, B)
        Ground truth at PAN scale.
    ratio : int
        PAN/MS resolution ratio.
    ms : (H/ratio, W/ratio, B), optional
        Low-resolution MS of the scene.
    pan : (H, W), optional
        PAN of the scene.

    Raises
    ------
    ShapeError
        A size or band count that does not fit (e.g. a ratio that contradicts the scene).

    Examples
    --------
    >>> check_reduced_geometry(np.zeros((8, 8, 4)), ratio=4, ms=np.zeros((2, 2, 4)))
    >>> check_reduced_geometry(np.zeros((8, 8, 4)), ratio=2, ms=np.zeros((2, 2, 4)))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ShapeError: reference (8, 8) must be exactly ratio=2 times the MS size (2, 2) (the sizes say ratio 4); check the ratio
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    rs = tuple(reference.shape)
    if pan is not None and tuple(pan.shape)[:2] != rs[:2]:
        raise ShapeError(f"pan {tuple(pan.shape)[:2]} and reference {rs[:2]} must have the same size (PAN scale)")
    if ms is not None:
        ms_s = tuple(ms.shape)
        if (ms_s[0] * ratio, ms_s[1] * ratio) != rs[:2]:
            hint = ""
            if rs[0] % ms_s[0] == 0 and rs[1] % ms_s[1] == 0 and rs[0] // ms_s[0] == rs[1] // ms_s[1]:
                hint = f" (the sizes say ratio {rs[0] // ms_s[0]})"
            raise ShapeError(
                f"reference {rs[:2]} must be exactly ratio={ratio} times the MS size {ms_s[:2]}{hint}; "
                "check the ratio"
            )
        if len(ms_s) == 3 and len(rs) == 3 and ms_s[2] != rs[2]:
            raise ShapeError(f"ms has {ms_s[2]} bands but reference has {rs[2]}; they must match")


# --------------------------------------------------------------------------- rules: values


class ScaleMismatchWarning(UserWarning):
    """A fused image on another scale than its reference, scored because ``scale_mismatch="warn"``."""


#: Settings of the scale-mismatch override (``scale_mismatch=``): refuse, or score with a warning.
SCALE_MISMATCH_POLICIES = ("raise", "warn")
#: Largest value the toolbox's uint16 cast keeps (Q2n, D_lambda_K): above it values saturate.
UINT16_MAX = 65535


def _bands_text(bands: Sequence[int], n_bands: int) -> str:
    shown = ", ".join(str(b + 1) for b in bands[:4]) + (", ..." if len(bands) > 4 else "")
    return f"band{'s' if len(bands) > 1 else ''} {shown} (of {n_bands})"


def check_finite_facts(facts: ImageFacts) -> None:
    """Refuse NaN/Inf recorded in a summary (the in-memory summary refuses them itself).

    Parameters
    ----------
    facts : ImageFacts
        Value summary of the image (DN, after the scale).

    Raises
    ------
    NonFiniteError
        The summary counts NaN/Inf values.

    Examples
    --------
    >>> check_finite_facts(facts_from_sums("ms", (2, 2, 1), "f8", lo=0, hi=1, n=4, total=2, total_sq=2,
    ...                                     non_finite=1))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.NonFiniteError: ms: contains 1 non-finite values (NaN/Inf); indexes are undefined there. Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window).
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if facts.non_finite:
        _raise_non_finite(facts.name, facts.non_finite)


def unit_scale_max(bits: int | None = None) -> float:
    """Largest magnitude (DN) of float data that are on a unit scale rather than in DN.

    :data:`UNIT_SCALE_MAX`, or ``(2**bits - 1) / 64`` when smaller (bit depths below 8).

    Parameters
    ----------
    bits : int, optional
        Radiometric resolution (bits).

    Returns
    -------
    float

    Examples
    --------
    >>> unit_scale_max(11), unit_scale_max(6)
    (4.0, 0.984375)
    """
    return UNIT_SCALE_MAX if bits is None else min(UNIT_SCALE_MAX, (2.0**int(bits) - 1) / 64)


def check_dn_range(facts: ImageFacts, *, what: str, fix: str | None = None, bits: int | None = None) -> None:
    """Refuse float data on a unit scale (each band within +-:func:`unit_scale_max`) where ``what``
    rounds to integer digital numbers.

    The toolbox casts to uint16 (round half away from zero) inside Q2n and D_lambda_K; reflectance or
    [0, 1] data, overshoot included, collapse to a few levels there and every number becomes
    meaningless. Checked per band (one band left on a unit scale is the same mistake); a dark
    scene in DN (a maximum of a few hundred) is far from it. Integer data are DN by definition and
    pass, and so do bands that are all zero.

    Parameters
    ----------
    facts : ImageFacts
        Value summary of the image (DN, after the scale).
    what : str
        The index that rounds to integer DN (``"Q2n"``, ``"D_lambda_K"``), for the message.
    fix : str, optional
        The advice ending the message (default: pass DN, or give ``scale``).
    bits : int, optional
        Radiometric resolution; below 8 bits it lowers the unit-scale bound (:func:`unit_scale_max`).

    Raises
    ------
    ScaleError
        Float data on a unit scale.

    Examples
    --------
    >>> check_dn_range(image_facts("fused", np.full((4, 4, 1), 0.5)), what="Q2n")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: fused: float data within [0.5, 0.5], a unit scale (reflectance, or [0, 1] values) rather than digital numbers, but Q2n rounds to integer digital numbers (uint16, as the reference toolbox does), which would collapse these values to a few levels. Pass DN values, or give the data scale (e.g. scale=2**bits - 1, i.e. 2047 for 11-bit data) so the inputs are converted to DN first.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if facts.integer:
        return
    peaks = facts.band_peaks()
    small = [b for b, p in enumerate(peaks) if 0 < p <= unit_scale_max(bits)]
    if not small:
        return
    fix = fix or ("Pass DN values, or give the data scale (e.g. scale=2**bits - 1, i.e. 2047 for 11-bit "
                  "data) so the inputs are converted to DN first.")
    if len(small) == int(np.count_nonzero(peaks)):
        where = f"{facts.name}: float data within [{facts.lo:.3g}, {facts.hi:.3g}]"
    else:
        where = (f"{facts.name} {_bands_text(small, facts.n_bands)}: float data within about "
                 f"+-{max(peaks[b] for b in small):.3g} while the other bands are DN")
    raise ScaleError(
        f"{where}, a unit scale (reflectance, or [0, 1] values) rather than digital numbers, but {what} "
        f"rounds to integer digital numbers (uint16, as the reference toolbox does), which would collapse "
        f"these values to a few levels. {fix}"
    )


def _scale_note(facts: ImageFacts, scale: float, limit: float) -> str | None:
    """The fix when ``scale`` made DN data too large: the stored values fit ``limit`` already."""
    if scale != 1.0 and facts.hi / scale <= limit * (1 + 1e-6):
        return (f"the stored values (maximum {facts.hi / scale:g}) already are digital numbers: drop "
                f"scale={scale:g} (it multiplies every input alike)")
    return None


def check_bits_range(facts: ImageFacts, bits: int, *, fix: str | None = None, scale: float = 1.0) -> None:
    """Refuse a reference whose maximum exceeds ``2**bits - 1`` (DN, after ``scale``).

    A relative excess below 1e-6 (float rounding of [0, 1] data times ``2**bits - 1``) passes.
    ``fix`` may use ``{needed}`` (the bit depth the data need).

    Parameters
    ----------
    facts : ImageFacts
        Value summary of the reference, MS or PAN (DN, after ``scale``).
    bits : int
        Radiometric resolution (bits).
    fix : str, optional
        The advice ending the message (default: give the right bits or scale).
    scale : float
        Multiplier to DN that was applied (the message tells the stored values apart).

    Raises
    ------
    ScaleError
        The maximum exceeds ``2**bits - 1``.

    Examples
    --------
    >>> check_bits_range(image_facts("ms", np.full((2, 2, 1), 4095.0)), 11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: ms: maximum 4095 exceeds the 11-bit range [0, 2047]; give the right bits (at least 12) or the right scale, so thresholds and casts match the data
    >>> check_bits_range(image_facts("ms", np.full((2, 2, 1), 2047.0), scale=2047), 11, scale=2047)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: ms: maximum 4.19021e+06 (after scale=2047) exceeds the 11-bit range [0, 2047]; the stored values (maximum 2047) already are digital numbers: drop scale=2047 (it multiplies every input alike)
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    peak = 2**bits - 1
    if facts.hi <= peak * (1 + 1e-6):
        return
    after = f" (after scale={scale:g})" if scale != 1.0 else ""
    head = f"{facts.name}: maximum {facts.hi:g}{after} exceeds the {bits}-bit range [0, {peak}]; "
    note = _scale_note(facts, scale, peak)
    if note is not None:
        raise ScaleError(head + note)
    needed = int(np.ceil(np.log2(facts.hi + 1)))
    if needed > 16:
        raise ScaleError(head + "no bit depth up to 16 holds it, so these are not a sensor's digital numbers: "
                                "check the scale of the data (e.g. values multiplied twice)")
    fix = fix or "give the right bits (at least {needed}) or the right scale, so thresholds and casts match the data"
    raise ScaleError(head + fix.format(needed=needed))


def check_cast_range(facts: ImageFacts, *, what: str, scale: float = 1.0) -> None:
    """Refuse an image above 65535 DN where ``what`` casts it to uint16 (the cast saturates there).

    Parameters
    ----------
    facts : ImageFacts
        Value summary of the image (DN, after the scale).
    what : str
        The index whose cast this is (``"Q2n"``, ``"D_lambda_K"``), for the message.
    scale : float
        Multiplier to DN that was applied (for the message).

    Raises
    ------
    ScaleError
        The maximum exceeds 65535.

    Examples
    --------
    >>> check_cast_range(image_facts("ms", np.full((2, 2, 1), 7.0e5)), what="D_lambda_K")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: ms: maximum 700000 exceeds 65535, where D_lambda_K's uint16 cast (as in the reference toolbox) saturates, so the numbers would be wrong; no sensor's digital numbers go there: check the scale of the data
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if facts.hi <= UINT16_MAX * (1 + 1e-6):
        return
    after = f" (after scale={scale:g})" if scale != 1.0 else ""
    note = _scale_note(facts, scale, UINT16_MAX) or "no sensor's digital numbers go there: check the scale of the data"
    raise ScaleError(f"{facts.name}: maximum {facts.hi:g}{after} exceeds {UINT16_MAX}, where {what}'s uint16 cast "
                     f"(as in the reference toolbox) saturates, so the numbers would be wrong; {note}")


def check_non_negative(facts: ImageFacts, *, fix: str | None = None) -> None:
    """Refuse offset or standardised data given as a reference, MS or PAN.

    Digital numbers are non-negative; resampled DN (the library's own Wald degradation, any
    bicubic shrink) undershoot 0 slightly near bright edges, and rounding leaves values above -0.5
    unchanged by the uint16 cast. Refused: a minimum below -0.5 that is also below
    ``-UNDERSHOOT * max`` (:data:`UNDERSHOOT`) or comes with a mean near 0 (below a quarter of the
    spread): mean-subtracted, standardised or offset data, whose numbers would be meaningless (the
    casts set negatives to 0; UIQI compares means). Fused images may undershoot and are not checked.

    Parameters
    ----------
    facts : ImageFacts
        Value summary of the image (DN, after the scale).
    fix : str, optional
        The advice ending the message (default: pass the sensor's DN).

    Raises
    ------
    ScaleError
        Negative values beyond resampling undershoot.

    Examples
    --------
    >>> check_non_negative(image_facts("ms", np.array([[[-200.0], [5.0]]])))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: ms: minimum -200 is negative beyond resampling undershoot (the maximum is 5), but inputs are digital numbers (non-negative). Pass the sensor's DN (not mean-subtracted, standardised or offset data)
    >>> check_non_negative(image_facts("pan", np.array([[[-30.0], [1500.0], [900.0]]])))  # bicubic undershoot
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    lo, hi = facts.lo, facts.hi
    if lo >= -0.5:
        return
    if lo >= -UNDERSHOOT * max(hi, 0.0) and facts.mean >= 0.25 * facts.spread:
        return
    fix = fix or "Pass the sensor's DN (not mean-subtracted, standardised or offset data)"
    raise ScaleError(
        f"{facts.name}: minimum {lo:g} is negative beyond resampling undershoot (the maximum is {hi:g}), but "
        f"inputs are digital numbers (non-negative). {fix}"
    )


def check_not_wrapped(test: ImageFacts, reference: ImageFacts) -> None:
    """Refuse a fused image whose negative values wrapped around in an unsigned cast.

    ``x.astype(np.uint16)`` turns -2 into 65534: values in the top quarter of the uint16 (or uint32)
    range next to a reference below its bottom quarter cannot be overshoot, and a few of them
    change every index (ERGAS by a factor 20). A re-export to 16 bits moves every value and keeps the
    shape of the distribution (the scale rule's case); wrapped values are a far tail, which changes
    it: the maximum's distance from the mean in spreads, or the spread relative to the mean, differs
    from the reference's by more than 25 % (a rescale keeps both to rounding).

    Parameters
    ----------
    test : ImageFacts
        Value summary of the fused image.
    reference : ImageFacts
        Value summary of its reference (or MS).

    Raises
    ------
    ScaleError
        Values that wrapped around.

    Examples
    --------
    >>> ref = image_facts("reference", np.full((4, 4, 1), 900.0))
    >>> check_not_wrapped(image_facts("fused", np.array([[[900.0], [65534.0]]])), ref)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: fused: values up to 65534 next to a reference of at most 900: negative values wrapped around when the image was cast to an unsigned integer type (x.astype(np.uint16) makes -2 into 65534), which changes every index. Save the result as float, or clip it first: np.clip(x, 0, None).astype(np.uint16)
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if test.lo < 0:
        return
    if min(test.mean, reference.mean, test.spread, reference.spread) > 0:
        lim = math.log(1.25)
        cv = math.log((test.spread / test.mean) / (reference.spread / reference.mean))
        z = math.log(((test.hi - test.mean) / test.spread) / max((reference.hi - reference.mean) / reference.spread,
                                                                  1e-12))
        if abs(cv) < lim and abs(z) < lim:
            return  # every value moved alike: another scale (a re-export), not a wrapped tail
    for bits in (16, 32):
        top, quarter = 2.0**bits, 2.0 ** (bits - 2)
        if top - quarter <= test.hi < top and reference.hi < quarter:
            raise ScaleError(
                f"{test.name}: values up to {test.hi:g} next to a {reference.name} of at most {reference.hi:g}: "
                f"negative values wrapped around when the image was cast to an unsigned integer type "
                f"(x.astype(np.uint{bits}) makes -2 into {int(top) - 2}), which changes every index. Save the "
                f"result as float, or clip it first: np.clip(x, 0, None).astype(np.uint{bits})"
            )


_KNOWN_FACTORS: tuple[tuple[float, str], ...] = (
    *((2.0**b - 1, f"2**{b} - 1, as for [0, 1]-normalised {b}-bit data") for b in (8, 10, 11, 12, 14, 16)),
    *(((2.0**a - 1) / (2.0**b - 1), f"(2**{a} - 1)/(2**{b} - 1), as for {a}-bit data exported as {b}-bit")
      for a in (10, 11, 12, 14, 16) for b in (8, 10, 11, 12, 14) if a > b),
    *((2.0**k, f"2**{k}, as for values shifted by {k} bit{'s' if k > 1 else ''}") for k in range(1, 7)),
)


def factor_hint(factor: float) -> str:
    """`` (close to 2**11 - 1, as for ...)`` when a scale factor is near a usual cause, else ``""``.

    Parameters
    ----------
    factor : float
        Ratio of two scales (e.g. of the means of two images).

    Returns
    -------
    str

    Examples
    --------
    >>> factor_hint(2040.0)
    ' (close to 2**11 - 1, as for [0, 1]-normalised 11-bit data)'
    >>> factor_hint(2.0003)
    ' (close to (2**12 - 1)/(2**11 - 1), as for 12-bit data exported as 11-bit)'
    >>> factor_hint(3.0)
    ''
    """
    best = min(_KNOWN_FACTORS, key=lambda kv: abs(math.log(kv[0] / factor)))
    return f" (close to {best[1]})" if abs(math.log(best[0] / factor)) < 0.2 else ""


def bit_depth_factor(factor: float) -> float | None:
    """The power of two 2**k (k = +-1..+-16) within :data:`BIT_DEPTH_TOLERANCE` of a factor, else None.

    Every bit-depth confusion, (2**a - 1)/(2**b - 1), ``2**b - 1`` or a shift by k bits, is within
    0.1 % of one.

    Parameters
    ----------
    factor : float
        Ratio of two scales (e.g. of the means of two images).

    Returns
    -------
    float or None

    Examples
    --------
    >>> bit_depth_factor(4095 / 2047), bit_depth_factor(1 / 2047), bit_depth_factor(1.4)
    (2.0, 0.00048828125, None)
    """
    if not factor > 0:
        return None
    k = round(math.log2(factor))
    if k == 0 or abs(k) > 16:
        return None
    power = 2.0**k
    return power if abs(math.log(factor / power)) < math.log(BIT_DEPTH_TOLERANCE) else None


@dataclasses.dataclass(frozen=True)
class _Mismatch:
    band: int
    factor: float
    bit_depth: bool


def _band_mismatch(b: int, m_t: float, m_r: float, s_t: float, s_r: float) -> _Mismatch | None:
    if not (m_r > 0 and m_t > 0):
        return None  # all-zero/negative data: other rules (or the indexes) speak
    lim = SCALE_FACTOR_LIMIT
    factor = m_t / m_r  # the means: a fusion keeps the reference's mean, not its spread
    if not (s_r > 0 and s_t > 0):  # a constant band: the means alone
        return None if 1 / lim <= factor <= lim else _Mismatch(b, factor, False)
    k_spread = s_t / s_r
    # a scale mistake multiplies mean and spread alike; wildly different factors are a broken
    # image (e.g. an untrained network), whose poor numbers are the truth about it
    alike = abs(math.log(factor / k_spread)) < math.log(lim)
    if alike and ((factor > lim and k_spread > lim) or (factor < 1 / lim and k_spread < 1 / lim)):
        return _Mismatch(b, factor, False)
    power = bit_depth_factor(factor)
    if power is not None and abs(math.log(k_spread / power)) < math.log(BIT_DEPTH_SPREAD_TOLERANCE):
        return _Mismatch(b, factor, True)
    return None


def scale_mismatches(test: ImageFacts, reference: ImageFacts) -> list[Any]:
    """The bands of ``test`` on another scale than the same bands of ``reference`` (see
    :func:`check_scales_agree`); images with other band counts (a PAN vs an MS) are compared pooled.

    Parameters
    ----------
    test : ImageFacts
        Value summary of the image checked (fused image, PAN).
    reference : ImageFacts
        Value summary of the image it is compared with (reference, MS).

    Returns
    -------
    list
        One record per band on another scale (``band``, ``factor``, ...); empty when they agree.

    Examples
    --------
    >>> ref = image_facts("reference", np.arange(128.0).reshape(8, 8, 2) * 30)
    >>> fused = image_facts("fused", np.arange(128.0).reshape(8, 8, 2) * 60)
    >>> [(m.band, round(m.factor, 3)) for m in scale_mismatches(fused, ref)]
    [(0, 2.0), (1, 2.0)]
    """
    if test.n_bands == reference.n_bands:
        table = np.stack([test.band_means(), reference.band_means(), test.band_spreads(), reference.band_spreads()])
    else:
        table = np.array([[test.mean], [reference.mean], [test.spread], [reference.spread]])
    found = [_band_mismatch(b, *(float(v) for v in table[:, b])) for b in range(table.shape[1])]
    return [m for m in found if m is not None]


def check_scales_agree(test: ImageFacts, reference: ImageFacts, *,
                       fix: str | Callable[[float], str] | None = None, scale: float = 1.0,
                       policy: str = "raise", override: str | None = None) -> str | None:
    """Refuse two images, or bands of them, that should share a scale but do not (mixed scales).

    Each band of ``test`` is compared with the same band of ``reference`` (pooled when their band
    counts differ, as a PAN against an MS). Refused when

    * the band's mean and spread are both more than :data:`SCALE_FACTOR_LIMIT` times those of the
      reference band (or both less than its inverse), by factors within :data:`SCALE_FACTOR_LIMIT` of
      each other: a scale mistake multiplies both by the same factor, while a bias (offset) or a
      poor fusion moves only one, and a broken image (an untrained network) moves them by unrelated
      amounts; those get their (poor) numbers;
    * or the band's mean is within :data:`BIT_DEPTH_TOLERANCE` of a bit-depth factor 2**k
      (:func:`bit_depth_factor`: 1/2 and 2 included) and its spread within
      :data:`BIT_DEPTH_SPREAD_TOLERANCE` of it: a re-export to another bit depth, whatever its size.

    Parameters
    ----------
    test, reference : ImageFacts
        E.g. fused vs reference (reduced resolution), fused vs MS and PAN vs MS (full resolution).
    fix : str or callable, optional
        The fix to suggest when every band is off, or a function of the factor that returns it;
        default: bring ``test`` to the reference's scale.
    scale : float
        The ``scale`` the caller applied to both (named in the fix: it cannot fix one image).
    policy : {"raise", "warn"}
        ``"warn"``: emit a :class:`ScaleMismatchWarning` instead of raising (the override).
    override : str, optional
        How to override, appended to a bit-depth refusal (e.g. ``"pass scale_mismatch='warn'"``).

    Returns
    -------
    str or None
        The warning's message under ``policy="warn"`` when a mismatch was found, else None.

    Raises
    ------
    ScaleError
        Naming the factor, the bands and the usual cause when it is a known one (such as 2**11 - 1).

    Examples
    --------
    >>> ref = image_facts("reference", np.arange(64.0).reshape(8, 8, 1) * 30)
    >>> check_scales_agree(image_facts("fused", np.arange(64.0).reshape(8, 8, 1) * 30 + 5), ref)
    >>> check_scales_agree(image_facts("fused", np.arange(64.0).reshape(8, 8, 1) * 30 / 2047), ref)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: fused is on another scale than reference: its values are about 0.000489 times theirs (means 0.462 vs 945, spreads 0.271 vs 554), so every index would measure the factor, not the fusion. Bring fused to the scale of reference: multiply it by about 2047 (close to 2**11 - 1, as for [0, 1]-normalised 11-bit data), or pass both in digital numbers.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    check_choice("scale_mismatch", policy, SCALE_MISMATCH_POLICIES)
    found = scale_mismatches(test, reference)
    if not found:
        return None
    nb = test.n_bands if test.n_bands == reference.n_bands else 1
    scaled = (f" (scale={scale:g} multiplies every input alike, so it cannot bring one image to the other's "
              "scale)") if scale != 1.0 else ""
    if len(found) == nb:  # the whole image
        m_t, m_r, s_t, s_r = test.mean, reference.mean, test.spread, reference.spread
        factor = m_t / m_r if m_r > 0 and m_t > 0 else found[0].factor
        head = (f"{test.name} is on another scale than {reference.name}: its values are about {factor:.3g} times "
                f"theirs (means {m_t:.3g} vs {m_r:.3g}, spreads {s_t:.3g} vs {s_r:.3g})")
        if callable(fix):
            fix = fix(factor)
        if fix is None:
            how = (f"divide it by about {factor:.4g}{factor_hint(factor)}" if factor > 1 else
                   f"multiply it by about {1 / factor:.4g}{factor_hint(1 / factor)}")
            fix = f"Bring {test.name} to the scale of {reference.name}{scaled}: {how}, or pass both in digital numbers."
    else:  # some bands: no scale setting can fix them
        bands = [m.band for m in found]
        first = found[0]
        means, spreads = test.band_means(), test.band_spreads()
        r_means, r_spreads = reference.band_means(), reference.band_spreads()
        b = first.band
        hint = factor_hint(max(first.factor, 1 / first.factor))
        head = (f"{test.name} {_bands_text(bands, nb)} {'is' if len(bands) == 1 else 'are'} on another scale than "
                f"the same band{'s' if len(bands) > 1 else ''} of {reference.name}: band {b + 1} is about "
                f"{first.factor:.3g} times theirs (means {means[b]:.3g} vs {r_means[b]:.3g}, spreads "
                f"{spreads[b]:.3g} vs {r_spreads[b]:.3g}{'; ' + hint[2:-1] if hint else ''})")
        fix = (f"A scale setting multiplies every band alike, so it cannot fix this: re-export {test.name}'s "
               f"{_bands_text(bands, nb).split(' (of')[0]} on the scale of the others (or fix the same bands of "
               f"{reference.name} if they are the wrong ones).")
    if override and any(m.bit_depth for m in found):
        fix = f"{fix} If the factor is real (the method changes the radiometry), {override}."
    message = f"{head}, so every index would measure the factor, not the fusion. {fix}"
    if policy == "warn":
        warnings.warn(message, ScaleMismatchWarning, stacklevel=3)
        return message
    raise ScaleError(message)


def check_bands_agree(facts: ImageFacts) -> None:
    """Refuse an MS whose bands are not on one scale (one band left on [0, 1], or divided by 2047).

    Applied where the sensor is known (its bands are DN of one bit depth): a band whose mean and
    spread are both more than :data:`BAND_FACTOR_LIMIT` times the bands' medians (or both less than
    its inverse), alike (within :data:`SCALE_FACTOR_LIMIT` of each other).

    Parameters
    ----------
    facts : ImageFacts
        Value summary of the MS (with per-band sums).

    Raises
    ------
    ScaleError
        A band on another scale than the others.

    Examples
    --------
    >>> ms = np.stack([np.arange(64.0).reshape(8, 8) * k for k in (30, 28, 33, 30 / 2047)], axis=2)
    >>> check_bands_agree(image_facts("ms", ms))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: ms band 4 (of 4) is on another scale than its other bands: about 0.000505 times their median (mean 0.462 vs 914, spread 0.271 vs 536; close to 2**11 - 1, as for [0, 1]-normalised 11-bit data), so every index would be meaningless. Re-export that band in the sensor's digital numbers, as the others.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    means, spreads = facts.band_means(), facts.band_spreads()
    if len(means) < 3:
        return
    m_med, s_med = float(np.median(means)), float(np.median(spreads))
    if not (m_med > 0 and s_med > 0):
        return
    lim, alike_lim = BAND_FACTOR_LIMIT, math.log(SCALE_FACTOR_LIMIT)
    off = []
    for b, (m, s) in enumerate(zip(means / m_med, spreads / s_med, strict=True)):
        far = (m > lim and s > lim) or (m < 1 / lim and s < 1 / lim)
        if m > 0 and s > 0 and abs(math.log(m / s)) < alike_lim and far:
            off.append(b)
    if not off:
        return
    b = off[0]
    factor = means[b] / m_med
    hint = factor_hint(max(factor, 1 / factor))
    raise ScaleError(
        f"{facts.name} {_bands_text(off, len(means))} {'is' if len(off) == 1 else 'are'} on another scale than "
        f"its other bands: about {factor:.3g} times their median (mean {means[b]:.3g} vs {m_med:.3g}, spread "
        f"{spreads[b]:.3g} vs {s_med:.3g}{'; ' + hint[2:-1] if hint else ''}), so every index would be "
        f"meaningless. Re-export that band in the sensor's digital numbers, as the others."
    )


def check_values(*, test: ImageFacts | None = None, reference: ImageFacts, pan: ImageFacts | None = None,
                 bits: int | None = None, dn_what: str | None = None, scaled: bool = False,
                 scale: float | None = None, bits_range: bool = True, bands_agree: bool = False,
                 scale_mismatch: str = "raise", override: str | None = None) -> None:
    """The value rules of an evaluation, applied in a fixed order to its images' summaries.

    Order: NaN/Inf; a fused image wrapped around by an unsigned cast; PAN vs MS scale; the MS's
    bands against each other (``bands_agree``); fused vs reference scale, per band; unit-scale float
    data where ``dn_what`` rounds to DN; offset/standardised references; the reference within
    ``bits`` (``bits_range``) and within the uint16 cast (``dn_what``). See ``docs/validation.md``.

    Parameters
    ----------
    test : ImageFacts, optional
        The image under test (fused); may overshoot the bit depth both ways.
    reference : ImageFacts
        The reference (GT at reduced resolution, MS at full resolution).
    pan : ImageFacts, optional
        The PAN (full resolution): on the MS's scale, not offset data.
    bits : int, optional
        Radiometric resolution: the range rule (with ``bits_range``) and the unit-scale limit.
    dn_what : str, optional
        Index that rounds to integer DN (enables the unit-scale and uint16-range rules).
    scaled : bool
        Kept for callers of earlier versions (no effect: the summaries are after the scale; pass
        ``scale`` to have it named in the messages).
    scale : float, optional
        The ``scale`` applied to every input (the summaries are after it).
    bits_range : bool
        Refuse a reference above ``2**bits - 1``: where a number depends on ``bits`` (the threshold
        clip) or the reference is an original product (reduced resolution).
    bands_agree : bool
        Hold the reference's bands against each other (:func:`check_bands_agree`; where the sensor
        is known).
    scale_mismatch : {"raise", "warn"}
        What a fused image on another scale than its reference gets (the override).
    override : str, optional
        How to override, for the message (e.g. ``"pass scale_mismatch='warn'"``).

    Raises
    ------
    InputError
        The first rule that fails (NonFiniteError, ScaleError).

    Examples
    --------
    >>> ms = image_facts("ms", np.full((8, 8, 4), 400, dtype=np.uint16))
    >>> check_values(reference=ms, pan=image_facts("pan", np.full((32, 32), 380, dtype=np.uint16)), bits=11)
    >>> check_values(reference=ms, pan=image_facts("pan", np.full((32, 32), 0.2)), bits=11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: pan is on another scale than ms: its values are about 0.0005 times theirs (means 0.2 vs 400, spreads 0 vs 0), so every index would measure the factor, not the fusion. Bring pan to the scale of ms: multiply it by about 2000 (close to 2**11 - 1, as for [0, 1]-normalised 11-bit data), or pass both in digital numbers.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    shown = float(scale) if scale is not None else 1.0  # ``scaled`` alone: a scale of unknown value, not named
    images = [f for f in (test, reference, pan) if f is not None]
    for f in images:
        check_finite_facts(f)
    if test is not None:
        check_not_wrapped(test, reference)
    # mixed scales first: one image in [0, 1] next to DN needs that image fixed, not a global scale
    if pan is not None:
        check_scales_agree(pan, reference, scale=shown)
    if bands_agree:
        check_bands_agree(reference)
    if test is not None:
        check_scales_agree(test, reference, scale=shown, policy=scale_mismatch, override=override)
    if dn_what is not None:
        for f in images:
            check_dn_range(f, what=dn_what, bits=bits)
    for dn in (reference, pan):
        if dn is not None:
            check_non_negative(dn)
    if bits is not None and bits_range:
        check_bits_range(reference, bits, scale=shown)
    if dn_what is not None:
        check_cast_range(reference, what=dn_what, scale=shown)


def checked_pair(reference: object, fused: object, *, dn_what: str | None = None,
                 scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (reference, fused) pair of (H, W, B) images without copying them.

    Layout, dtypes, equal shapes, finite values, a reference of DN (not offset data) when
    ``dn_what`` names a cast, unit-scale data where ``dn_what`` rounds to DN, and the two images
    on one scale, band by band.

    Parameters
    ----------
    reference, fused : array_like, shape (H, W, B)
        The reference (ground truth) and the fused image, DN.
    dn_what : str, optional
        Name of the index that rounds to integer DN (enables the unit-scale and sign rules).
    scale : float
        Multiplier to DN the caller applies (the value summaries use it).

    Returns
    -------
    (ndarray, ndarray)
        The inputs as arrays (never modify them).

    Examples
    --------
    >>> r, f = checked_pair(np.ones((8, 8, 3)), np.ones((8, 8, 3)))
    >>> r.shape
    (8, 8, 3)
    """
    ref = image_array("reference", reference)
    fus = image_array("fused", fused)
    check_same_shape("reference", ref, "fused", fus)
    fr = image_facts("reference", ref, scale=scale)
    ff = image_facts("fused", fus, scale=scale)
    if dn_what is not None:
        check_values(test=ff, reference=fr, dn_what=dn_what, scale=scale)
    else:
        check_not_wrapped(ff, fr)
        check_scales_agree(ff, fr, scale=scale)
    return ref, fus

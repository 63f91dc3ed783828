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

Rules on values (all in digital numbers, DN, after any ``scale``):

* NaN/Inf anywhere: refused (:class:`NonFiniteError`).
* Float data within [0, 1] where an index rounds to integer DN (Q2n's uint16 cast): refused.
* A reference, MS or PAN above ``2**bits - 1`` or below 0: refused (digital numbers are
  non-negative integers of ``bits`` bits). Fused images may overshoot both ways.
* Two images on different scales (:func:`check_scales_agree`): refused when both the mean and the
  spread of one are more than :data:`SCALE_FACTOR_LIMIT` times those of the other; real fused
  images stay within a few percent of their reference, PAN and MS within a factor 2.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .parallel import chunks, parallel_map

__all__ = [
    # the exception family
    "InputError", "ShapeError", "LayoutError", "ScaleError", "NonFiniteError", "SettingError",
    "SensorMismatchError", "MetadataConflictError", "ConstantBlockError", "SettingsError", "DataError",
    # arrays
    "image_array", "pan_array", "as_image", "as_pan", "check_image_shape", "image_and_pan",
    # value summaries
    "ImageFacts", "image_facts", "facts_from_sums", "sample_step", "SCALE_FACTOR_LIMIT",
    # rules
    "check_same_shape", "check_ratio", "check_bits", "check_scale", "check_choice",
    "check_block_size", "check_gnyq", "check_kernel_size", "check_min_size", "check_multiple_of", "check_pan_ratio",
    "check_reduced_geometry", "check_sensor_bands", "check_metadata",
    "check_finite_facts", "check_dn_range", "check_bits_range", "check_non_negative",
    "check_scales_agree", "check_values", "checked_pair", "factor_hint",
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


class SettingsError(SettingError):
    """A dataset's settings (``dataset.toml`` and flags) are missing or inconsistent.

    ``pansharp-eval`` reports it as a usage error (exit status 2): nothing is evaluated.
    """


class DataError(InputError):
    """One scene's files cannot be used (unreadable, wrong shape, NaNs, contradicting scale).

    ``pansharp-eval`` reports the message as that scene's failure and goes on with the others.
    """


# --------------------------------------------------------------------------- arrays


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
    return shape  # type: ignore[return-value]


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
    """
    return _image_dims(name, _real_array(name, value), allow_2d=allow_2d)


def pan_array(name: str, value: object) -> np.ndarray:
    """Validate a PAN image, (H, W) or (H, W, 1), and return it as (H, W) without copying.

    Parameters
    ----------
    name : str
    value : array_like

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

    Examples
    --------
    >>> as_pan("pan", np.ones((8, 8, 1))).shape
    (8, 8)
    """
    return _as_float(pan_array(name, value), name)


# --------------------------------------------------------------------------- value summaries

#: Largest factor between the means and between the spreads of two images that should be on the
#: same scale (fused vs reference, fused vs MS, PAN vs MS). Measured on real scenes: fused vs
#: reference within a few percent; PAN/MS means 0.84-1.10 and spreads 0.48-1.26 (WV2, IKONOS,
#: WV3, SpaceNet). A [0, 1]/DN confusion is a factor 2**bits - 1, an 8-bit export of 11-bit data 8.
SCALE_FACTOR_LIMIT = 3.0
#: Samples per band of the scale summary (a regular grid of pixels, the same in memory and tile-wise):
#: plenty for a mean and a spread, and cheap (a 1280 x 1280 x 8 image is summarised in about 1 ms).
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


@dataclasses.dataclass(frozen=True)
class ImageFacts:
    """Value summary of one image, the evidence the value rules decide on.

    Attributes
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
        Minimum and maximum (DN, after the scale).
    n, total, total_sq : float
        Count, sum and sum of squares of the values on the :func:`sample_step` grid (DN).
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
        if not self.n:
            return 0.0
        spread = math.sqrt(max(self.total_sq / self.n - self.mean**2, 0.0))
        # sums of squares lose ~sqrt(eps) of the mean: below that, the image is constant
        return spread if spread > 1e-7 * abs(self.mean) else 0.0


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


def _grid_sums(sample: np.ndarray, scale: float) -> tuple[float, float, float]:
    s = np.asarray(sample, dtype=np.float64)
    if scale != 1.0:
        s = s * scale
    return float(s.size), float(s.sum()), float(np.sum(s * s))


def image_facts(name: str, arr: np.ndarray, *, scale: float = 1.0) -> ImageFacts:
    """Value summary of an in-memory image (one min/max pass plus a fixed subsample).

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
    >>> (f.lo, f.hi, f.mean, f.spread, f.integer)
    (6.0, 6.0, 6.0, 0.0, True)
    """
    lo, hi = finite_range(name, arr)
    step = sample_step(arr.shape[0], arr.shape[1])
    n, total, total_sq = _grid_sums(arr[::step, ::step], scale)
    shape = tuple(arr.shape) if arr.ndim == 3 else (*arr.shape, 1)
    lo, hi = (lo * scale, hi * scale) if scale >= 0 else (hi * scale, lo * scale)
    return ImageFacts(name, shape, str(arr.dtype), 0, lo, hi, n, total, total_sq)


def facts_from_sums(name: str, shape: Sequence[int], dtype: Any, *, lo: float, hi: float, n: float,
                    total: float, total_sq: float, non_finite: int = 0) -> ImageFacts:
    """An :class:`ImageFacts` from sums combined over tiles (see :func:`grid_positions`).

    Parameters
    ----------
    name : str
    shape : sequence of int
    dtype : dtype-like
    lo, hi : float
        Minimum and maximum over every pixel (DN).
    n, total, total_sq : float
        Count, sum and sum of squares over the pixels on the :func:`sample_step` grid (DN).
    non_finite : int
        NaN/Inf values found.

    Returns
    -------
    ImageFacts

    Examples
    --------
    >>> facts_from_sums("ms", (4, 4, 1), "uint16", lo=0, hi=4, n=4, total=8, total_sq=20).spread
    1.0
    """
    shape = tuple(int(s) for s in shape)
    return ImageFacts(name, shape, str(np.dtype(dtype)), int(non_finite), float(lo), float(hi),
                      float(n), float(total), float(total_sq))


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
    """The integer a real number equals (``4``, ``4.0``, ``np.int64(4)``), else None."""
    number = _number(value)
    return int(number) if math.isfinite(number) and number.is_integer() else None


def check_choice(name: str, value: object, choices: Sequence[object]) -> Any:
    """Refuse a value outside a fixed set of options.

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
    """
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

    Examples
    --------
    >>> check_kernel_size(41)
    41
    """
    taps = _integer(size)
    if taps is None or taps < 3 or taps % 2 == 0:
        raise SettingError(f"size must be an odd integer >= 3, got {size!r}")
    return taps


def check_sensor_bands(sensor: Any, n_bands: int, *, name: str = "ms", protocol: str | None = None) -> tuple[float, ...]:
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
        by :func:`pansharp_iqa.io.metadata.check_setting`).

    Examples
    --------
    >>> check_metadata("ratio", 4, 4, source="a.mat: ratio", flag="--ratio")
    >>> check_metadata("ratio", 2, 4, source="a.mat: ratio", flag="--ratio")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.MetadataConflictError: --ratio says ratio = 2 but a.mat: ratio records 4; the data's own metadata wins unless you are sure: fix the setting (or remove it and let the file decide)
    """
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

    Examples
    --------
    >>> check_multiple_of("fused", (16, 16, 4), 32, why="block-wise QNR")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ShapeError: fused: image of 16x16 pixels is smaller than one 32x32 block (block-wise QNR); use a larger image or a smaller block_size
    """
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
    """
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


def check_finite_facts(facts: ImageFacts) -> None:
    """Refuse NaN/Inf recorded in a summary (the in-memory summary refuses them itself).

    Examples
    --------
    >>> check_finite_facts(facts_from_sums("ms", (2, 2, 1), "f8", lo=0, hi=1, n=4, total=2, total_sq=2,
    ...                                     non_finite=1))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.NonFiniteError: ms: contains 1 non-finite values (NaN/Inf); indexes are undefined there. Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window).
    """
    if facts.non_finite:
        _raise_non_finite(facts.name, facts.non_finite)


def check_dn_range(facts: ImageFacts, *, what: str, fix: str | None = None) -> None:
    """Refuse float data within [0, 1] where ``what`` rounds to integer digital numbers.

    The toolbox casts to uint16 (round half away from zero) inside Q2n; [0, 1] data collapse to
    0/1 there and every number becomes meaningless. Integer data are DN by definition and pass.

    Examples
    --------
    >>> check_dn_range(image_facts("fused", np.full((4, 4, 1), 0.5)), what="Q2n")
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: fused: float data within [0, 1], but Q2n rounds to integer digital numbers (uint16, as the reference toolbox does), which would collapse these values to 0/1. Pass DN values, or give the data scale (e.g. scale=2**bits - 1, i.e. 2047 for 11-bit data) so the inputs are converted to DN first.
    """
    if not facts.integer and max(abs(facts.lo), abs(facts.hi)) <= 1.0:
        fix = fix or ("Pass DN values, or give the data scale (e.g. scale=2**bits - 1, i.e. 2047 for 11-bit "
                      "data) so the inputs are converted to DN first.")
        raise ScaleError(
            f"{facts.name}: float data within [0, 1], but {what} rounds to integer digital numbers "
            f"(uint16, as the reference toolbox does), which would collapse these values to 0/1. {fix}"
        )


def check_bits_range(facts: ImageFacts, bits: int, *, fix: str | None = None) -> None:
    """Refuse a reference, MS or PAN whose maximum exceeds ``2**bits - 1`` (DN).

    A relative excess below 1e-6 (float rounding of [0, 1] data times ``2**bits - 1``) passes.

    Examples
    --------
    >>> check_bits_range(image_facts("ms", np.full((2, 2, 1), 4095.0)), 11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: ms: maximum 4095 exceeds the 11-bit range [0, 2047]; give the right bits (at least 12) or the right scale, so thresholds and casts match the data
    """
    if facts.hi > (2**bits - 1) * (1 + 1e-6):
        needed = int(np.ceil(np.log2(facts.hi + 1)))
        fix = fix or "give the right bits (at least {needed}) or the right scale, so thresholds and casts match the data"
        raise ScaleError(
            f"{facts.name}: maximum {facts.hi:g} exceeds the {bits}-bit range [0, {2**bits - 1}]; "
            + fix.format(needed=needed)
        )


def check_non_negative(facts: ImageFacts, *, fix: str | None = None) -> None:
    """Refuse negative values in a reference, MS or PAN (digital numbers are non-negative).

    Negative "DN" mean other data (mean-subtracted, standardised, radiance with an offset) or a
    wrong scale; Q2n's uint16 cast would silently set them to 0. Fused images may undershoot and
    are not checked.

    Examples
    --------
    >>> check_non_negative(image_facts("ms", np.array([[[-2.0], [5.0]]])))
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: ms: minimum -2 is negative, but inputs are digital numbers (non-negative; the Q2n cast would set negatives to 0). Pass the sensor's DN (not standardised or offset data); clip true sensor noise first, e.g. np.clip(ms, 0, None)
    """
    if facts.lo < 0:
        fix = fix or (f"Pass the sensor's DN (not standardised or offset data); clip true sensor noise first, "
                      f"e.g. np.clip({facts.name}, 0, None)")
        raise ScaleError(
            f"{facts.name}: minimum {facts.lo:g} is negative, but inputs are digital numbers (non-negative; "
            f"the Q2n cast would set negatives to 0). {fix}"
        )


_KNOWN_FACTORS: tuple[tuple[float, str], ...] = (
    *((2.0**b - 1, f"2**{b} - 1, as for [0, 1]-normalised {b}-bit data") for b in (8, 10, 11, 12, 14, 16)),
    *(((2.0**a - 1) / (2.0**b - 1), f"(2**{a} - 1)/(2**{b} - 1), as for {a}-bit data exported as {b}-bit")
      for a in (10, 11, 12, 14, 16) for b in (8, 10, 11, 12, 14) if a > b),
)


def factor_hint(factor: float) -> str:
    """`` (close to 2**11 - 1, as for ...)`` when a scale factor is near a usual cause, else ``""``.

    Examples
    --------
    >>> factor_hint(2040.0)
    ' (close to 2**11 - 1, as for [0, 1]-normalised 11-bit data)'
    >>> factor_hint(3.0)
    ''
    """
    best = min(_KNOWN_FACTORS, key=lambda kv: abs(math.log(kv[0] / factor)))
    return f" (close to {best[1]})" if abs(math.log(best[0] / factor)) < 0.2 else ""


def check_scales_agree(test: ImageFacts, reference: ImageFacts, *,
                       fix: str | Callable[[float], str] | None = None) -> None:
    """Refuse two images that should share a scale but do not (mixed scales).

    Refused when the mean and the spread (standard deviation) of ``test`` are both more than
    :data:`SCALE_FACTOR_LIMIT` times those of ``reference`` (or both less than its inverse), by
    factors within :data:`SCALE_FACTOR_LIMIT` of each other: a scale mistake multiplies both by the
    same factor, while a bias (offset) or a poor fusion moves only one, and a broken image (an
    untrained network) moves them by unrelated amounts; those get their (poor) numbers.

    Parameters
    ----------
    test, reference : ImageFacts
        E.g. fused vs reference (reduced resolution), fused vs MS and PAN vs MS (full resolution).
    fix : str or callable, optional
        The fix to suggest, or a function of the factor that returns it; default: bring ``test``
        to the reference's scale.

    Raises
    ------
    ScaleError
        Naming the factor (and the usual cause when it is a known one, such as 2**11 - 1).

    Examples
    --------
    >>> ref = image_facts("reference", np.arange(64.0).reshape(8, 8, 1) * 30)
    >>> check_scales_agree(image_facts("fused", np.arange(64.0).reshape(8, 8, 1) * 30 + 5), ref)
    >>> check_scales_agree(image_facts("fused", np.arange(64.0).reshape(8, 8, 1) * 30 / 2047), ref)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: fused is on another scale than reference: its values are about 0.000489 times theirs (means 0.462 vs 945, spreads 0.271 vs 554), so every index would be meaningless. Bring fused to the scale of reference: multiply it by about 2047 (close to 2**11 - 1, as for [0, 1]-normalised 11-bit data), or pass both in digital numbers.
    """
    m_t, m_r, s_t, s_r = test.mean, reference.mean, test.spread, reference.spread
    if not (m_r > 0 and m_t > 0):
        return  # all-zero/negative data: other rules (or the indexes) speak
    lim = SCALE_FACTOR_LIMIT
    factor = m_t / m_r  # the means: a fusion keeps the reference's mean, not its spread
    if s_r > 0 and s_t > 0:
        k_spread = s_t / s_r
        # a scale mistake multiplies mean and spread alike; wildly different factors are a broken
        # image (e.g. an untrained network), whose poor numbers are the truth about it
        alike = abs(math.log(factor / k_spread)) < math.log(lim)
        off = alike and ((factor > lim and k_spread > lim) or (factor < 1 / lim and k_spread < 1 / lim))
    else:  # a constant image: the means alone
        off = not (1 / lim <= factor <= lim)
    if not off:
        return
    if callable(fix):
        fix = fix(factor)
    if fix is None:
        how = (f"divide it by about {factor:.4g}{factor_hint(factor)}" if factor > 1 else
               f"multiply it by about {1 / factor:.4g}{factor_hint(1 / factor)}")
        fix = f"Bring {test.name} to the scale of {reference.name}: {how}, or pass both in digital numbers."
    raise ScaleError(
        f"{test.name} is on another scale than {reference.name}: its values are about {factor:.3g} times "
        f"theirs (means {m_t:.3g} vs {m_r:.3g}, spreads {s_t:.3g} vs {s_r:.3g}), so every index would be "
        f"meaningless. {fix}"
    )


def check_values(*, test: ImageFacts | None = None, reference: ImageFacts, pan: ImageFacts | None = None,
                 bits: int | None = None, dn_what: str | None = None,
                 scaled: bool = False) -> None:
    """The value rules of an evaluation, applied in a fixed order to its images' summaries.

    Parameters
    ----------
    test : ImageFacts, optional
        The image under test (fused); may overshoot the bit depth both ways.
    reference : ImageFacts
        The reference (GT at reduced resolution, MS at full resolution): finite, non-negative,
        within ``bits``.
    pan : ImageFacts, optional
        The PAN (full resolution): finite, non-negative, on the MS's scale.
    bits : int, optional
        Radiometric resolution for the range rule.
    dn_what : str, optional
        Index that rounds to integer DN (enables the [0, 1] rule), unless ``scaled``.
    scaled : bool
        A ``scale`` other than 1 was given (the data were declared non-DN; the [0, 1] rule then
        does not apply, the others do).

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
    pansharp_iqa.validation.ScaleError: pan is on another scale than ms: its values are about 0.0005 times theirs (means 0.2 vs 400, spreads 0 vs 0), so every index would be meaningless. Bring pan to the scale of ms: multiply it by about 2000 (close to 2**11 - 1, as for [0, 1]-normalised 11-bit data), or pass both in digital numbers.
    """
    images = [f for f in (test, reference, pan) if f is not None]
    for f in images:
        check_finite_facts(f)
    # mixed scales first: one image in [0, 1] next to DN needs that image fixed, not a global scale
    if pan is not None:
        check_scales_agree(pan, reference)
    if test is not None:
        check_scales_agree(test, reference)
    if dn_what is not None and not scaled:
        for f in images:
            check_dn_range(f, what=dn_what)
    for f in (reference, pan):
        if f is not None:
            check_non_negative(f)
            if bits is not None:
                check_bits_range(f, bits)


def checked_pair(reference: object, fused: object, *, dn_what: str | None = None,
                 scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (reference, fused) pair of (H, W, B) images without copying them.

    Layout, dtypes, equal shapes, finite values, a reference of non-negative DN when ``dn_what``
    names a cast, [0, 1] data where ``dn_what`` rounds to DN, and the two images on one scale.

    Parameters
    ----------
    reference, fused : array_like, shape (H, W, B)
    dn_what : str, optional
        Name of the index that rounds to integer DN (enables the [0, 1] and sign rules).
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
        check_values(test=ff, reference=fr, dn_what=dn_what, scaled=scale != 1.0)
    else:
        check_scales_agree(ff, fr)
    return ref, fus

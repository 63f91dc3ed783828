"""The one gate: every exact input check of the package, its exception family, and the value summaries.

Every entry point (index functions, ``evaluate_*`` in memory and tile-wise, the reprojected protocol, the baselines,
``pansharp-eval``, NLRNet) checks here what was declared (arrays and layout, settings, geometry, NaN/Inf and masked
values) and summarises each image's values (:class:`ImageFacts`, the same in memory, tile-wise and on the device):
the evidence of the plausibility rules of :mod:`pansharp_iqa.rules`. A refusal is an :class:`InputError` naming the
input, what is wrong and the fix.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .parallel import chunks, parallel_map

__all__ = [
    "InputError", "ShapeError", "LayoutError", "ScaleError", "NonFiniteError", "SettingError",  # the exceptions
    "SensorMismatchError", "MetadataConflictError", "ConstantBlockError", "DatasetConfigError", "DataError",
    "integer_setting", "check_ratio", "check_metadata", "check_pan_ratio",  # settings and geometry
    "ImageFacts", "image_facts", "sample_step", "grid_band_sums", "raise_non_finite",
]

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
    """A dataset's settings (``dataset.toml``, flags) are missing or inconsistent (``pansharp-eval``: exit 2)."""


class DataError(InputError):
    """One scene's files cannot be used (``pansharp-eval`` reports that scene's failure and goes on)."""


def check_not_masked(name: str, value: object) -> object:
    """Refuse a ``numpy.ma`` array with masked values (they would be scored); return the data of one without."""
    if not isinstance(value, np.ma.MaskedArray):
        return value
    mask = np.ma.getmask(value)  # nomask: no array is made
    if n := (0 if mask is np.ma.nomask else int(np.count_nonzero(mask))):
        raise InputError(f"{name}: a masked array with {n} masked values; the indexes cannot leave pixels out, and the "
                         f"values under the mask would be scored as data. Crop the images to a window without masked "
                         f"pixels, or fill them (np.ma.filled({name}, value)) if scoring the filled values is intended")
    return np.ma.getdata(value)


def _real_array(name: str, value: object) -> np.ndarray:
    """``value`` as an integer or float ndarray (no copy), refusing masked values and other dtypes."""
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


def layout_hint(shape: Sequence[int]) -> str:
    """A note for an (H, W, B) shape with more bands than one of its sides (a batch's axes mixed up), else ``""``."""
    h, w, b = (tuple(int(s) for s in shape) + (1,))[:3]
    if b > min(h, w):
        return (f" (shape {tuple(int(s) for s in shape)} reads as {b} bands of {h}x{w} pixels: if it comes from a "
                "batch, its axes are mixed up; check layout= ('NHWC' for (N, H, W, C), 'NCHW' for (N, C, H, W)))")
    return ""


def check_image_shape(name: str, shape: Sequence[int]) -> tuple[int, int, int]:
    """An image shape as (H, W, B): 3-D (2-D is one band), non-empty, not channel-first (B, H, W)."""
    shape = tuple(int(s) for s in shape) + ((1,) if len(shape) == 2 else ())
    if len(shape) == 4:
        raise ShapeError(f"{name}: expected a 3-D (H, W, B) image, got a 4-D array of shape {shape}; for a batch "
                         "of images declare its axis order with layout='NHWC' or layout='NCHW'")
    if len(shape) != 3:
        raise ShapeError(f"{name}: expected a 3-D (H, W, B) image, got shape {shape}")
    if min(shape) == 0:
        raise ShapeError(f"{name}: empty image of shape {shape}")
    b, h, w = shape
    if b <= 16 and min(h, w) >= max(32, 4 * b) and w > b:  # reads as (B, H, W): the layout is never guessed
        raise LayoutError(f"{name}: shape {shape} looks channel-first (B, H, W) = ({b} bands of {h}x{w}); images "
                          f"are (H, W, B) here (the library never guesses the layout): pass np.moveaxis({name}, 0, -1)")
    return shape


def image_array(name: str, value: object, *, allow_2d: bool = False) -> np.ndarray:
    """Validate an (H, W, B) image of a real dtype (``allow_2d``: an (H, W) array is one band); no copy."""
    arr = _real_array(name, value)
    if arr.ndim == 2:
        if not allow_2d:
            raise ShapeError(f"{name}: expected a 3-D (H, W, B) image, got a 2-D array of shape {arr.shape}; "
                             f"for a single band pass {name}[..., None]")
        arr = arr[:, :, None]
    check_image_shape(name, arr.shape)
    return arr


def pan_array(name: str, value: object) -> np.ndarray:
    """Validate a PAN, (H, W) or (H, W, 1), and return it as (H, W) without copying."""
    arr = _real_array(name, value)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim == 3 and arr.shape[0] == 1 and min(arr.shape[1:]) > 1:
        raise LayoutError(f"{name}: shape {arr.shape} looks channel-first (1, H, W); pass {name}[0] (an (H, W) array)")
    if arr.ndim != 2:
        raise ShapeError(f"{name}: expected a 2-D (H, W) panchromatic image, got shape {arr.shape}")
    if min(arr.shape) == 0:
        raise ShapeError(f"{name}: empty image of shape {arr.shape}")
    return arr


def pan_bands_array(name: str, value: object, n_bands: int) -> np.ndarray:
    """Validate the PAN role as declared: one band (:func:`pan_array`, returned (H, W)) when ``n_bands`` is 1, else an
    (H, W, n_bands) stack of high-resolution bands (e.g. Sentinel-2's four 10 m bands); no copy.

    Examples
    --------
    >>> pan_bands_array("pan", np.zeros((8, 8, 4)), 4).shape
    (8, 8, 4)
    >>> pan_bands_array("pan", np.zeros((8, 8)), 4)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ShapeError: pan: expected the 4 high-resolution bands (H, W, 4) in the PAN's place, got shape (8, 8)
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    if n_bands == 1:
        return pan_array(name, value)
    arr = _real_array(name, value)
    if arr.ndim != 3 or arr.shape[2] != n_bands or min(arr.shape) == 0:
        raise ShapeError(f"{name}: expected the {n_bands} high-resolution bands (H, W, {n_bands}) in the PAN's place, "
                         f"got shape {arr.shape}")
    return arr


def _as_float(arr: np.ndarray, name: str) -> np.ndarray:
    """A new C-contiguous float64 copy, refusing NaN/Inf."""
    out = np.array(arr, dtype=np.float64, copy=True, order="C")
    if not np.isfinite(out).all():
        raise_non_finite(name, int(np.size(out) - np.count_nonzero(np.isfinite(out))))
    return out


def as_image(name: str, value: object, *, allow_2d: bool = False) -> np.ndarray:
    """:func:`image_array` as a new C-contiguous float64 array of finite values."""
    return _as_float(image_array(name, value, allow_2d=allow_2d), name)


def as_pan(name: str, value: object) -> np.ndarray:
    """A PAN, (H, W) or (H, W, 1), as a new (H, W) float64 array of finite values."""
    return _as_float(pan_array(name, value), name)


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
    """The one rule for integer settings (ratio, bits, block sizes): ``4``, ``4.0`` and ``"4"`` alike.

    Parameters
    ----------
    name : str
        The setting, for the message.
    value : object
        The value given (booleans, ``None``, fractions and other strings are refused).
    lo, hi : int, optional
        Bounds (inclusive).

    Examples
    --------
    >>> integer_setting("ratio", "4"), integer_setting("bits", np.int64(11))
    (4, 11)
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
    """``value`` when it is one of ``choices``, else a :class:`SettingError` listing them (an array or another
    object that compares element-wise included)."""
    if isinstance(value, (np.ndarray, list, tuple, dict, set)) or hasattr(value, "shape"):
        shown = f"{type(value).__name__} of shape {tuple(value.shape)}" if hasattr(value, "shape") else \
            type(value).__name__
        raise SettingError(f"{name} must be one of {tuple(choices)}, got a {shown}")
    if value not in choices:
        raise SettingError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_flag(name: str, value: object) -> bool:
    """``value`` as a bool when it is one (numpy's too), else a :class:`SettingError` (``"yes"``, 1 are refused)."""
    if not isinstance(value, (bool, np.bool_)):
        raise SettingError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_ratio(ratio: object, *, exp: bool = True, name: str = "ratio") -> int:
    """The one ratio rule: required, an integer >= 2; where the EXP upsampler runs, a power of two
    (the 23-tap interpolator) or 6 (the hyperspectral/Sentinel-2 toolboxes' sinc x3 then 23-tap x2).

    Parameters
    ----------
    ratio : int
        PAN/MS resolution ratio.
    exp : bool
        The operation uses the EXP interpolator (toolbox-family full resolution, the baselines).
    name : str
        Name of the setting in messages.

    Examples
    --------
    >>> check_ratio(4), check_ratio(6), check_ratio(3, exp=False)
    (4, 6, 3)
    """
    if ratio is None:
        raise SettingError(f"{name} is required (no silent default): pass the PAN/MS resolution ratio, e.g. 4")
    r = _integer(ratio)
    if r is None or r < 2:
        got = f"the string {ratio!r}" if isinstance(ratio, str) else repr(ratio)
        raise SettingError(f"{name} must be an integer >= 2 (the PAN/MS resolution ratio), got {got}")
    if exp and r & (r - 1) and r != 6:
        raise SettingError(f"{name} must be a power of two (2, 4, 8, ...) or 6 for the EXP interpolator (23-tap; "
                           f"ratio 6: the hyperspectral/Sentinel-2 toolboxes' sinc x3 then 23-tap x2), got {r}")
    return r


def check_bits(bits: object) -> int:
    """The radiometric resolution in bits: required, an integer in 1..16."""
    if bits is None:
        raise SettingError("bits is required (no silent default): pass the radiometric resolution, e.g. 11")
    b = _integer(bits)
    if b is None or not 1 <= b <= 16:
        raise SettingError(f"bits must be an integer in 1..16, got {bits!r}")
    return b


def check_scale(scale: object) -> float:
    """A multiplier to digital numbers: a positive finite number."""
    value = _number(scale)
    if not (math.isfinite(value) and value > 0):
        raise SettingError(f"scale must be a positive number (multiplier to DN), got {scale!r}")
    return value


def check_block_size(block_size: object, *, name: str = "block_size", minimum: int = 2) -> int:
    """A block or window side in pixels: an integer >= ``minimum``."""
    size = _integer(block_size)
    if size is None or size < minimum:
        raise SettingError(f"{name} must be an integer >= {minimum}, got {block_size!r}")
    return size


def check_gnyq(gnyq: object, *, name: str = "gnyq") -> float:
    """An MTF gain at the Nyquist frequency: a number in (0, 1)."""
    value = _number(gnyq)
    if not 0.0 < value < 1.0:
        raise SettingError(f"{name} must be in (0, 1), got {gnyq!r}")
    return value


def check_kernel_size(size: object) -> int:
    """A filter kernel side in taps: an odd integer >= 3."""
    taps = _integer(size)
    if taps is None or taps < 3 or taps % 2 == 0:
        raise SettingError(f"size must be an odd integer >= 3, got {size!r}")
    return taps


def check_sensor_bands(sensor: Any, n_bands: int, *, name: str = "ms",
                       protocol: str | None = None) -> tuple[float, ...]:
    """The sensor's per-band MS GNyq for ``n_bands`` bands (:class:`SensorMismatchError` when it does not fit)."""
    try:
        return tuple(float(g) for g in sensor.gnyq_for(int(n_bands), protocol=protocol))
    except ValueError as exc:
        raise SensorMismatchError(f"{name} has {n_bands} bands, which does not fit: {exc}") from None


def check_band_names(sensor: Any, names: object, *, what: str = "band_names") -> tuple[str, ...]:
    """An MS band order as the sensor spells it: every name one of its bands, none twice (generic: any labels)."""
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(b, str) for b in names):
        raise SettingError(f"{what} must be a list of band names (strings), got {names!r}")
    seen: set[str] = set()
    for b in names:
        if b.strip().lower() in seen:
            raise SettingError(f"{what} lists band {b!r} twice ({list(names)}); each band of the MS once, in the "
                               "order the files store them")
        seen.add(b.strip().lower())
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
            raise SensorMismatchError(f"sensor {sensor.name!r} has no band {b!r} ({what}); its bands are "
                                      f"{list(own)}{hint}")
        out.append(canonical)
    return tuple(out)


def check_metadata(setting: str, given: object, recorded: object, *, source: str, flag: str) -> None:
    """A setting given by the user must agree with what the data records about itself.

    Parameters
    ----------
    setting : str
        Name of the setting (``"sensor"``, ``"ratio"``, ...).
    given, recorded : object
        The user's value and the data's (``None``: not known); strings compared case-insensitively.
    source, flag : str
        Where it is recorded (``"imgIK.mat: sensor"``) and how the user gave it (``"--sensor"``).

    Examples
    --------
    >>> check_metadata("ratio", 4, 4, source="a.mat: ratio", flag="--ratio")
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


def check_same_shape(name_a: str, a: Any, name_b: str, b: Any) -> None:
    """Refuse two images (arrays or shape holders) of different shapes, naming both."""
    if tuple(a.shape) != tuple(b.shape):
        what = "band counts" if tuple(a.shape[:2]) == tuple(b.shape[:2]) else "shapes"
        raise ShapeError(f"{name_a} and {name_b} differ in {what}: {tuple(a.shape)} vs {tuple(b.shape)}; both must "
                         "be (H, W, B) on the same grid with the same bands")


def image_and_pan(image_name: str, image: object, pan_name: str, pan: object) -> tuple[np.ndarray, np.ndarray]:
    """An (H, W, B) image and an (H, W) PAN on the same grid, as float64 copies."""
    img = as_image(image_name, image, allow_2d=True)
    pan_a = as_pan(pan_name, pan)
    if img.shape[:2] != pan_a.shape:
        raise ShapeError(f"{image_name} and {pan_name} must have the same height and width: {image_name} "
                         f"{img.shape[:2]}, {pan_name} {pan_a.shape}")
    return img, pan_a


def check_min_size(name: str, shape: Sequence[int], block_size: int, *, why: str = "") -> None:
    """Refuse an image smaller than one ``block_size`` block (naming a batch's mixed-up axes)."""
    h, w = int(shape[0]), int(shape[1])
    if h < block_size or w < block_size:
        reason = f" ({why})" if why else ""
        raise ShapeError(f"{name}: image of {h}x{w} pixels is smaller than one {block_size}x{block_size} block"
                         f"{reason}{layout_hint(shape)}; use a larger image or a smaller block_size")


def check_multiple_of(name: str, shape: Sequence[int], block_size: int, *, why: str) -> None:
    """Refuse a spatial size that is not a multiple of the block size, saying how to crop."""
    check_min_size(name, shape, block_size, why=why)
    h, w = int(shape[0]), int(shape[1])
    if h % block_size or w % block_size:
        hh, ww = h - h % block_size, w - w % block_size
        raise ShapeError(f"{name}: size {h}x{w} is not a multiple of the block size {block_size} ({why}). "
                         f"Crop to {hh}x{ww}, e.g. {name}[:{hh}, :{ww}] (and the low-resolution MS accordingly)")


def _ratio_hint(big: tuple[int, ...], small: tuple[int, ...]) -> str:
    """`` (the sizes say ratio k)`` when two sizes are an integer multiple of each other."""
    if big[0] % small[0] == 0 and big[1] % small[1] == 0 and big[0] // small[0] == big[1] // small[1]:
        return f" (the sizes say ratio {big[0] // small[0]})"
    return ""


def check_pan_ratio(fused: Any, ms: Any, pan: Any, ratio: int, *, fused_name: str = "fused",
                    pan_name: str = "pan") -> None:
    """Full-resolution geometry: PAN = fused grid = ratio x MS grid, same bands in fused and MS.

    Parameters
    ----------
    fused, ms, pan : array_like or shape holder
        Fused image (H, W, B), MS (H/ratio, W/ratio, B), PAN (H, W[, 1]).
    ratio : int
        PAN/MS resolution ratio.
    fused_name, pan_name : str
        Roles in messages.

    Examples
    --------
    >>> check_pan_ratio(np.zeros((8, 8, 4)), np.zeros((2, 2, 4)), np.zeros((8, 8)), 4)
    """
    fs, ms_s, ps = tuple(fused.shape), tuple(ms.shape), tuple(pan.shape)
    if ps[:2] != fs[:2]:
        raise ShapeError(f"{pan_name} {ps[:2]} and {fused_name} {fs[:2]} must have the same size (PAN scale)")
    if (ms_s[0] * ratio, ms_s[1] * ratio) != ps[:2]:
        raise ShapeError(f"{pan_name} must be exactly ratio={ratio} times the MS size: {pan_name} {ps[:2]}, ms "
                         f"{ms_s[:2]}{_ratio_hint(ps, ms_s)}; check the ratio, or crop both consistently")
    if ms_s[2] != fs[2]:
        raise ShapeError(f"ms has {ms_s[2]} bands but {fused_name} has {fs[2]}; they must match")


def check_reduced_geometry(reference: Any, *, ratio: int, ms: Any = None, pan: Any = None) -> None:
    """Reduced-resolution scene geometry: ``reference = ratio x ms`` in size, ``pan = reference``."""
    rs = tuple(reference.shape)
    if pan is not None and tuple(pan.shape)[:2] != rs[:2]:
        raise ShapeError(f"pan {tuple(pan.shape)[:2]} and reference {rs[:2]} must have the same size (PAN scale)")
    if ms is not None:
        ms_s = tuple(ms.shape)
        if (ms_s[0] * ratio, ms_s[1] * ratio) != rs[:2]:
            raise ShapeError(f"reference {rs[:2]} must be exactly ratio={ratio} times the MS size {ms_s[:2]}"
                             f"{_ratio_hint(rs, ms_s)}; check the ratio")
        if len(ms_s) == 3 and len(rs) == 3 and ms_s[2] != rs[2]:
            raise ShapeError(f"ms has {ms_s[2]} bands but reference has {rs[2]}; they must match")


#: Samples per band of the value summary (a regular grid of pixels, the same in memory and tile-wise):
#: plenty for a mean and a spread, and cheap (its cost: ``docs/performance.md``).
_SCALE_SAMPLES = 2**14


def sample_step(height: int, width: int) -> int:
    """Grid step of the value summary: about 16,384 sampled pixels per band at most.

    Parameters
    ----------
    height, width : int
        Image size (pixels).

    Examples
    --------
    >>> sample_step(1024, 1024)
    8
    """
    return max(1, math.isqrt(int(height) * int(width) // _SCALE_SAMPLES))


def _spread(n: float, total: float, total_sq: float) -> float:
    """Standard deviation from count, sum and sum of squares (0 below the sums' rounding)."""
    if not n:
        return 0.0
    mean = total / n
    spread = math.sqrt(max(total_sq / n - mean**2, 0.0))
    return spread if spread > 1e-7 * abs(mean) else 0.0


@dataclasses.dataclass(frozen=True)
class ImageFacts:
    """Value summary of one image (DN, after any ``scale``): the evidence of the value rules.

    Parameters
    ----------
    name : str
        Role of the image in messages (``"fused"``, ``"reference"``, ``"ms"``, ``"pan"``).
    shape : tuple of int
        ``(H, W, B)``.
    dtype : str
        Stored dtype (integer data are DN by definition).
    non_finite : int
        Number of NaN/Inf values.
    lo, hi, n, total, total_sq : float
        Minimum and maximum of every value; count, sum and sum of squares on the :func:`sample_step` grid.
    band_total, band_total_sq, band_lo, band_hi : tuple of float
        The same per band (empty: not known).
    band_nonint : tuple of float
        Per band, the sampled values that are not integers (empty: not known).
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
    band_nonint: tuple[float, ...] = ()

    @property
    def integer(self) -> bool:
        """Whether the stored dtype is an integer type."""
        return np.issubdtype(np.dtype(self.dtype), np.integer)

    @property
    def mean(self) -> float:
        """Mean of the sampled values."""
        return self.total / self.n if self.n else 0.0

    @property
    def spread(self) -> float:
        """Standard deviation of the sampled values."""
        return _spread(self.n, self.total, self.total_sq)

    @property
    def n_bands(self) -> int:
        """Bands the per-band sums describe (1 when only pooled sums are known)."""
        return len(self.band_total) or 1

    def band_means(self) -> np.ndarray:
        """Mean of each band's sampled values (the pooled mean when bands are not known)."""
        if not self.band_total:
            return np.array([self.mean])
        per = self.n / len(self.band_total)
        return np.array([t / per if per else 0.0 for t in self.band_total])

    def band_spreads(self) -> np.ndarray:
        """Standard deviation of each band's sampled values."""
        if not self.band_total:
            return np.array([self.spread])
        per = self.n / len(self.band_total)
        return np.array([_spread(per, t, q) for t, q in zip(self.band_total, self.band_total_sq, strict=True)])


def raise_non_finite(name: str, n_bad: int) -> None:
    """Raise the one NaN/Inf refusal (:class:`NonFiniteError`), so that every path words it alike.

    Parameters
    ----------
    name : str
        The input, as the message names it (a role or a file name).
    n_bad : int
        How many of its values are NaN or +-Inf.

    Raises
    ------
    NonFiniteError
        Always.

    Examples
    --------
    >>> raise_non_finite("fused", 3)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.NonFiniteError: fused: contains 3 non-finite values (NaN/Inf); indexes are undefined there. Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window).
    """  # noqa: E501 - doctest output: the one-line error message
    raise NonFiniteError(f"{name}: contains {n_bad} non-finite values (NaN/Inf); indexes are undefined there. "
                         "Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window).")


def finite_range(name: str, arr: np.ndarray) -> tuple[float, float]:
    """Minimum and maximum of an array (row chunks, no copy), refusing NaN/Inf."""
    parts = np.array(parallel_map(lambda sl: (np.min(arr[sl]), np.max(arr[sl])), chunks(arr.shape[0], 4)),
                     dtype=np.float64)
    lo, hi = float(np.min(parts[:, 0])), float(np.max(parts[:, 1]))  # numpy's min/max propagate NaN
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise_non_finite(name, int(np.size(arr) - np.count_nonzero(np.isfinite(arr))))
    return lo, hi


def grid_band_sums(sample: np.ndarray,
                   scale: float = 1.0) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-band count, sum, sum of squares, minimum, maximum and non-integer count of sampled pixels (times
    ``scale``).

    Parameters
    ----------
    sample : ndarray, shape (h, w, B) or (h, w)
        Pixels of the :func:`sample_step` grid (the one formula of in-memory and tile-wise summaries).
    scale : float
        Multiplier to DN.

    Examples
    --------
    >>> sums = grid_band_sums(np.arange(8.0).reshape(2, 2, 2) / 2)
    >>> sums[1].tolist(), sums[5].tolist()
    ([6.0, 8.0], [0.0, 4.0])
    """
    s = np.asarray(sample, dtype=np.float64)
    bands = s.shape[2] if s.ndim == 3 else 1
    per = s.reshape(-1, bands)
    if scale != 1.0:
        per = per * scale
    if not per.shape[0]:
        empty = np.zeros(bands)
        return 0, empty, empty.copy(), np.full(bands, np.inf), np.full(bands, -np.inf), empty.copy()
    return (per.shape[0], per.sum(axis=0), np.einsum("ij,ij->j", per, per), per.min(axis=0), per.max(axis=0),
            np.count_nonzero(per != np.round(per), axis=0).astype(np.float64))


def image_facts(name: str, arr: np.ndarray, *, scale: float = 1.0) -> ImageFacts:
    """Value summary of an in-memory image (one min/max pass plus a fixed subsample, per band).

    Parameters
    ----------
    name : str
        Role of the image in messages.
    arr : ndarray, shape (H, W, B) or (H, W)
        Any real dtype; NaN/Inf are refused (:class:`NonFiniteError`).
    scale : float
        Multiplier to DN applied to the summary.

    Returns
    -------
    ImageFacts

    Examples
    --------
    >>> image_facts("ms", np.full((4, 4, 2), 3, dtype=np.uint16), scale=2.0).band_means().tolist()
    [6.0, 6.0]
    """
    lo, hi = finite_range(name, arr)
    step = sample_step(arr.shape[0], arr.shape[1])
    count, total, total_sq, g_lo, g_hi, nonint = grid_band_sums(arr[::step, ::step], scale)
    shape = tuple(arr.shape) if arr.ndim == 3 else (*arr.shape, 1)
    lo, hi = (lo * scale, hi * scale) if scale >= 0 else (hi * scale, lo * scale)
    return facts_from_sums(name, shape, arr.dtype, lo=lo, hi=hi, n=count * len(total), total=float(total.sum()),
                           total_sq=float(total_sq.sum()), band_total=total, band_total_sq=total_sq,
                           band_lo=g_lo, band_hi=g_hi, band_nonint=nonint)


def facts_from_sums(name: str, shape: Sequence[int], dtype: Any, *, lo: float, hi: float, n: float,
                    total: float, total_sq: float, non_finite: int = 0,
                    band_total: Sequence[float] | np.ndarray = (), band_total_sq: Sequence[float] | np.ndarray = (),
                    band_lo: Sequence[float] | np.ndarray = (), band_hi: Sequence[float] | np.ndarray = (),
                    band_nonint: Sequence[float] | np.ndarray = ()) -> ImageFacts:
    """An :class:`ImageFacts` from sums combined over tiles (see :func:`grid_band_sums`)."""
    return ImageFacts(name, tuple(int(s) for s in shape), str(np.dtype(dtype)), int(non_finite), float(lo),
                      float(hi), float(n), float(total), float(total_sq),
                      *(tuple(float(v) for v in np.asarray(b, dtype=np.float64).ravel())
                        for b in (band_total, band_total_sq, band_lo, band_hi, band_nonint)))

"""The one gate: every input check of the package, its exception family, and the rule table.

Every entry point (index functions, ``evaluate_*`` in memory and tile-wise, the reprojected protocol, the baselines,
``pansharp-eval``, NLRNet) checks its inputs here: **exact checks of what was declared** (arrays and layout, settings,
geometry, NaN/Inf and masked values, the declared ``bits`` and the uint16 cast), and :data:`RULES`, one short table of
**plausibility rules** on value summaries (:class:`ImageFacts`, the same in memory and tile-wise), each comparing what
belongs together, with its threshold, the mistake it stands for and its override (``docs/validation.md``). A rule
refuses exactly what would change a number: a poor method, a network's overshoot, a dark or saturated band get numbers.
A refusal is an :class:`InputError` naming the input, what is wrong and the fix.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .parallel import chunks, parallel_map

__all__ = [
    "InputError", "ShapeError", "LayoutError", "ScaleError", "NonFiniteError", "SettingError",  # the exceptions
    "SensorMismatchError", "MetadataConflictError", "ConstantBlockError", "DatasetConfigError", "DataError",
    "integer_setting", "check_ratio", "check_metadata", "check_pan_ratio",  # settings and geometry
    "ImageFacts", "image_facts", "sample_step", "grid_band_sums", "Rule", "RULES", "rule_table",
    "ScaleMismatchWarning", "SCALE_MISMATCH_POLICIES", "OVERRIDE_CARD", "UINT16_MAX", "check_values",
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


def _as_float(arr: np.ndarray, name: str) -> np.ndarray:
    """A new C-contiguous float64 copy, refusing NaN/Inf."""
    out = np.array(arr, dtype=np.float64, copy=True, order="C")
    if not np.isfinite(out).all():
        _raise_non_finite(name, int(np.size(out) - np.count_nonzero(np.isfinite(out))))
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
    """``value`` when it is one of ``choices``, else a :class:`SettingError` listing them."""
    if value not in choices:
        raise SettingError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


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
#: Largest value the toolbox's uint16 cast keeps (Q2n, D_lambda_K): above it values saturate.
UINT16_MAX = 65535


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


def _raise_non_finite(name: str, n_bad: int) -> None:
    """Raise the one NaN/Inf refusal."""
    raise NonFiniteError(f"{name}: contains {n_bad} non-finite values (NaN/Inf); indexes are undefined there. "
                         "Fill or crop them before evaluation (e.g. np.nan_to_num, or evaluate a valid window).")


def finite_range(name: str, arr: np.ndarray) -> tuple[float, float]:
    """Minimum and maximum of an array (row chunks, no copy), refusing NaN/Inf."""
    parts = np.array(parallel_map(lambda sl: (np.min(arr[sl]), np.max(arr[sl])), chunks(arr.shape[0], 4)),
                     dtype=np.float64)
    lo, hi = float(np.min(parts[:, 0])), float(np.max(parts[:, 1]))  # numpy's min/max propagate NaN
    if not (np.isfinite(lo) and np.isfinite(hi)):
        _raise_non_finite(name, int(np.size(arr) - np.count_nonzero(np.isfinite(arr))))
    return lo, hi


def grid_band_sums(sample: np.ndarray,
                   scale: float = 1.0) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-band count, sum, sum of squares, minimum and maximum of sampled pixels (times ``scale``).

    Parameters
    ----------
    sample : ndarray, shape (h, w, B) or (h, w)
        Pixels of the :func:`sample_step` grid (the one formula of in-memory and tile-wise summaries).
    scale : float
        Multiplier to DN.

    Examples
    --------
    >>> grid_band_sums(np.arange(8.0).reshape(2, 2, 2))[1].tolist()
    [12.0, 16.0]
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
    """An :class:`ImageFacts` from sums combined over tiles (see :func:`grid_band_sums`)."""
    return ImageFacts(name, tuple(int(s) for s in shape), str(np.dtype(dtype)), int(non_finite), float(lo),
                      float(hi), float(n), float(total), float(total_sq),
                      *(tuple(float(v) for v in np.asarray(b, dtype=np.float64).ravel())
                        for b in (band_total, band_total_sq, band_lo, band_hi)))


class ScaleMismatchWarning(UserWarning):
    """A finding of a plausibility rule, scored anyway because ``scale_mismatch="warn"``."""


#: ``scale_mismatch=``: refuse, score with a warning, or skip the fused image's scale rules because
#: its producer declared its scale (DN), as ``pansharp-nlrnet infer`` does for what it writes.
SCALE_MISMATCH_POLICIES = ("raise", "warn", "declared")
#: What the card records for each override (nothing for ``"raise"``).
OVERRIDE_CARD = {
    "warn": "warn: a fused image or PAN on another scale than its reference is scored (ScaleMismatchWarning)",
    "declared": "declared: the fused image's scale is declared by its producer (DN), so the rules band_scale, "
                "bit_depth and wrapped are skipped",
}
FACTOR, BIT_DEPTH_MEAN, BIT_DEPTH_SPREAD, PAN_RANGE, UNIT_MAX, UNDERSHOOT = 3.0, 1.05, 1.6, (0.62, 1.25), 4.0, 0.15


@dataclasses.dataclass(frozen=True)
class Rule:
    """One plausibility rule of :data:`RULES`.

    Parameters
    ----------
    name, compares, threshold, mistake, override : str
        Its name (as messages and the docs call it), what it compares, when it refuses, the mistake
        it stands for, and how to override it (recorded in the card).
    """

    name: str
    compares: str
    threshold: str
    mistake: str
    override: str


_WARN = "`scale_mismatch='warn'` (`--scale-mismatch warn`) scores with a warning, recorded in the card"
_BAND = "a fused band with the same band of the reference (GT at reduced, MS at full resolution)"
#: The plausibility rules: every refusal decided on pixel statistics (``docs/validation.md``).
RULES = (
    Rule("band_scale", _BAND, f"mean and spread both beyond {FACTOR:g}x (or 1/{FACTOR:g}x), by factors within "
         f"{FACTOR:g}x of each other; a band dark (mean <= 0) or constant (saturated) in either is no evidence",
         "DN next to [0, 1] data, an export to another range (a bias or a poor fusion moves mean and spread "
         "apart)", f"{_WARN}; `scale_mismatch='declared'` (the producer declared DN) skips it"),
    Rule("bit_depth", _BAND, f"mean within {BIT_DEPTH_MEAN:g}x of a power of two 2**k (k = +-1..+-16) and spread "
         f"within {BIT_DEPTH_SPREAD:g}x of the same 2**k", "a re-export to another bit depth ((2**12 - 1)/(2**11 - 1),"
         " an 8-bit product scaled by 8)", "as band_scale"),
    Rule("pan_scale", "the PAN's mean with the MS's mean (one sensor, one bit depth), where a number depends on "
         "it (D_s, QNR, HQNR, the baselines; not `wald_degrade` or the reprojected protocol)", f"PAN/MS outside "
         f"[{PAN_RANGE[0]:g}, {PAN_RANGE[1]:g}] (real scenes, 32-px MS crops of WV2, IKONOS, WV3, SpaceNet: 0.70-1.10;"
         " one bit off: 1.4-2.2 or 0.35-0.55)",
         "a PAN on another bit depth or scale than the MS (`pan * 2`, a [0, 1] PAN)", _WARN),
    Rule("unit_scale", "every value of a float image where an index rounds to integer DN (Q2n, D_lambda_K)",
         f"all within +-{UNIT_MAX:g} DN (`(2**bits - 1) / 64` below 8 bits); integer data and all-zero images pass",
         "reflectance or [0, 1] data (or standardised data, when negative) given as DN: the uint16 cast keeps 5 "
         "levels", "declare the scale (`scale=`, dataset.toml `scale`); genuine low-bit DN: their `bits`"),
    Rule("offset", "the minimum of a reference, MS or PAN with its maximum, mean and spread", f"below -0.5 and "
         f"below -{UNDERSHOOT:g}x the maximum, or with a mean below a quarter of the spread", "offset, mean-"
         "subtracted or standardised data (resampled DN undershoot by at most 3.2 % of the maximum)",
         "none: DN are non-negative; pass the sensor's DN"),
    Rule("wrapped", "the fused image's maximum with the reference's", "fused maximum in the top quarter of uint16 "
         "(uint32), the reference below the bottom quarter, the distribution's shape changed by > 25 %",
         "negatives wrapped around by an unsigned cast (-2 -> 65534)", "none (save float, or clip before the "
         "cast); `scale_mismatch='declared'` skips it"),
)


def rule_table() -> str:
    """:data:`RULES` as the Markdown table ``docs/validation.md`` shows.

    Examples
    --------
    >>> rule_table().splitlines()[0]
    '| rule | compares | refused when | the mistake it stands for | override |'
    """
    rows = ["| rule | compares | refused when | the mistake it stands for | override |", "|---|---|---|---|---|"]
    return "\n".join(rows + [f"| `{r.name}` | {r.compares} | {r.threshold} | {r.mistake} | {r.override} |"
                             for r in RULES])


_KNOWN_FACTORS: tuple[tuple[float, str], ...] = (
    *((2.0**b - 1, f"2**{b} - 1, as for [0, 1]-normalised {b}-bit data") for b in (8, 10, 11, 12, 14, 16)),
    *(((2.0**a - 1) / (2.0**b - 1), f"(2**{a} - 1)/(2**{b} - 1), as for {a}-bit data exported as {b}-bit")
      for a in (10, 11, 12, 14, 16) for b in (8, 10, 11, 12, 14) if a > b),
    *((2.0**k, f"2**{k}, as for values shifted by {k} bit{'s' if k > 1 else ''}") for k in range(1, 7)),
)


def factor_hint(factor: float) -> str:
    """`` (close to 2**11 - 1, as for ...)`` when a factor (or its inverse) is near a usual cause, else ``""``."""
    factor = max(factor, 1 / factor)
    best = min(_KNOWN_FACTORS, key=lambda kv: abs(math.log(kv[0] / factor)))
    return f" (close to {best[1]})" if abs(math.log(best[0] / factor)) < 0.2 else ""


def _scale_factor(m_t: float, m_r: float, s_t: float, s_r: float) -> tuple[float, bool] | None:
    """(factor, bit_depth) when a band breaks the rule band_scale or bit_depth against its reference band."""
    if min(m_t, m_r, s_t, s_r) <= 0:
        return None  # dark, dead or constant (saturated) in either: no evidence of a scale
    f, k, lim = m_t / m_r, s_t / s_r, math.log(FACTOR)
    if abs(math.log(f / k)) < lim and min(abs(math.log(f)), abs(math.log(k))) > lim and (f > 1) == (k > 1):
        return f, False
    p = 2.0 ** round(math.log2(f))
    if 1 <= abs(math.log2(p)) <= 16 and abs(math.log(f / p)) < math.log(BIT_DEPTH_MEAN) \
            and abs(math.log(k / p)) < math.log(BIT_DEPTH_SPREAD):
        return f, True
    return None


def _bands_text(bands: Sequence[int], n_bands: int) -> str:
    """``bands 2, 4 (of 4)``: bands counted from 1."""
    shown = ", ".join(str(b + 1) for b in bands[:4]) + (", ..." if len(bands) > 4 else "")
    return f"band{'s' if len(bands) > 1 else ''} {shown} (of {n_bands})"


def _refuse(message: str, policy: str) -> None:
    """Raise a plausibility rule's finding, or warn under ``scale_mismatch="warn"``."""
    if policy == "warn":
        warnings.warn(message, ScaleMismatchWarning, stacklevel=4)
        return
    raise ScaleError(message)


def _whole_fix(test: ImageFacts, reference: ImageFacts, factor: float, scale: float) -> str:
    """The default fix when a whole image is on another scale: the factor and its usual cause."""
    scaled = (f" (scale={scale:g} multiplies every input alike, so it cannot bring one image to the other's scale)"
              if scale != 1.0 else "")
    how = (f"divide it by about {factor:.4g}" if factor > 1 else f"multiply it by about {1 / factor:.4g}")
    return (f"Bring {test.name} to the scale of {reference.name}{scaled}: {how}{factor_hint(factor)}, or pass both "
            "in digital numbers.")


def check_scales_agree(test: ImageFacts, reference: ImageFacts, *, fix: Any = None, scale: float = 1.0,
                       policy: str = "raise", override: str | None = None) -> None:
    """The rules band_scale and bit_depth: each band of ``test`` against the same band of ``reference``."""
    same = test.n_bands == reference.n_bands
    table = (np.stack([test.band_means(), reference.band_means(), test.band_spreads(), reference.band_spreads()])
             if same else np.array([[test.mean], [reference.mean], [test.spread], [reference.spread]]))
    found = [(b, *r) for b in range(table.shape[1]) if (r := _scale_factor(*(float(v) for v in table[:, b])))]
    if not found:
        return
    nb = table.shape[1]
    if len(found) == nb:  # the whole image
        m_t, m_r = test.mean, reference.mean
        factor = m_t / m_r if m_t > 0 and m_r > 0 else found[0][1]
        head = (f"{test.name} is on another scale than {reference.name}: its values are about {factor:.3g} times "
                f"theirs (means {m_t:.3g} vs {m_r:.3g}, spreads {test.spread:.3g} vs {reference.spread:.3g})")
        fix = fix(factor) if callable(fix) else fix or _whole_fix(test, reference, factor, scale)
    else:  # some bands: no scale setting can fix them
        bands = [b for b, _, _ in found]
        b, factor = found[0][0], found[0][1]
        hint = factor_hint(factor)
        head = (f"{test.name} {_bands_text(bands, nb)} {'is' if len(bands) == 1 else 'are'} on another scale than "
                f"the same band{'s' if len(bands) > 1 else ''} of {reference.name}: band {b + 1} is about "
                f"{factor:.3g} times theirs (means {table[0, b]:.3g} vs {table[1, b]:.3g}, spreads {table[2, b]:.3g} "
                f"vs {table[3, b]:.3g}{'; ' + hint[2:-1] if hint else ''})")
        fix = (f"A scale setting multiplies every band alike, so it cannot fix this: re-export {test.name}'s "
               f"{_bands_text(bands, nb).split(' (of')[0]} on the scale of the others (or fix the same bands of "
               f"{reference.name} if they are the wrong ones).")
    if override:
        fix = f"{fix} If the factor is real (the method changes the radiometry), {override}."
    _refuse(f"{head}, so every index would measure the factor, not the fusion. {fix}", policy)


def _check_pan_scale(pan: ImageFacts, ms: ImageFacts, policy: str, override: str | None) -> None:
    """The rule pan_scale: the PAN's mean against the MS's."""
    if not (pan.mean > 0 and ms.mean > 0) or PAN_RANGE[0] <= pan.mean / ms.mean <= PAN_RANGE[1]:
        return
    factor = pan.mean / ms.mean
    more = f" If the factor is real (the PAN is another product), {override}." if override else ""
    _refuse(f"{pan.name} is on another scale than {ms.name}: its values are about {factor:.3g} times theirs (means "
            f"{pan.mean:.3g} vs {ms.mean:.3g}), while a PAN and its MS share a sensor's bit depth (PAN/MS within "
            f"{PAN_RANGE[0]:g}-{PAN_RANGE[1]:g}), so D_s, QNR and HQNR would measure the factor. "
            f"{_whole_fix(pan, ms, factor, 1.0)}{more}", policy)


def _check_unit_scale(f: ImageFacts, what: str, bits: int | None, fix: str | None,
                      only_standardised: bool = False) -> None:
    """The rule unit_scale: float data within +-4 DN where ``what`` rounds to integer DN."""
    limit = UNIT_MAX if bits is None else min(UNIT_MAX, (2.0**int(bits) - 1) / 64)
    if f.integer or not 0 < max(-f.lo, f.hi) <= limit or (only_standardised and f.lo >= -0.5):
        return
    if f.lo < -0.5:
        raise ScaleError(f"{f.name}: values within [{f.lo:.3g}, {f.hi:.3g}] (mean {f.mean:.3g}): standardised or "
                         "offset data, not digital numbers (non-negative), and no scale setting can make them DN. "
                         "Pass the sensor's DN (or the method's output in DN)")
    fix = fix or ("Pass DN values, or give the data scale (e.g. scale=2**bits - 1, i.e. 2047 for 11-bit data) so the "
                  "inputs are converted to DN first.")
    raise ScaleError(f"{f.name}: float data within [{f.lo:.3g}, {f.hi:.3g}], a unit scale (reflectance, or [0, 1] "
                     f"values) rather than digital numbers, but {what} rounds to integer digital numbers (uint16, as "
                     f"the reference toolbox does), which would collapse these values to a few levels. {fix}")


def check_non_negative(f: ImageFacts, *, fix: str | None = None) -> None:
    """The rule offset: a reference, MS or PAN of offset or standardised data."""
    if f.lo >= -0.5 or (f.lo >= -UNDERSHOOT * max(f.hi, 0.0) and f.mean >= 0.25 * f.spread):
        return
    fix = fix or "Pass the sensor's DN (not mean-subtracted, standardised or offset data)"
    raise ScaleError(f"{f.name}: minimum {f.lo:g} is negative beyond resampling undershoot (the maximum is "
                     f"{f.hi:g}), but inputs are digital numbers (non-negative). {fix}")


def check_not_wrapped(test: ImageFacts, reference: ImageFacts) -> None:
    """The rule wrapped: a fused image whose negatives wrapped around in an unsigned cast."""
    if test.lo < 0:
        return
    if min(test.mean, reference.mean, test.spread, reference.spread) > 0:
        cv = math.log((test.spread / test.mean) / (reference.spread / reference.mean))
        z = math.log(((test.hi - test.mean) / test.spread)
                     / max((reference.hi - reference.mean) / reference.spread, 1e-12))
        if max(abs(cv), abs(z)) < math.log(1.25):
            return  # every value moved alike: another scale (a re-export), not a wrapped tail
    for bits in (16, 32):
        top, quarter = 2.0**bits, 2.0 ** (bits - 2)
        if top - quarter <= test.hi < top and reference.hi < quarter:
            raise ScaleError(
                f"{test.name}: values up to {test.hi:g} next to a {reference.name} of at most {reference.hi:g}: "
                f"negative values wrapped around when the image was cast to an unsigned integer type "
                f"(x.astype(np.uint{bits}) makes -2 into {int(top) - 2}), which changes every index. Save the "
                f"result as float, or clip it first: np.clip(x, 0, None).astype(np.uint{bits})")


def check_bits_range(f: ImageFacts, bits: int, *, fix: str | None = None, scale: float = 1.0,
                     drop: str | None = None) -> None:
    """Exact: a reference within the declared ``2**bits - 1`` (``fix`` may use ``{needed}``)."""
    peak = 2**bits - 1
    if f.hi <= peak * (1 + 1e-6):
        return
    needed = int(np.ceil(np.log2(f.hi + 1)))
    if (note := _scale_note(f, scale, peak, drop)) is None and needed > 16:
        note = ("no bit depth up to 16 holds it, so these are not a sensor's digital numbers: check the scale of "
                "the data (e.g. values multiplied twice)")
    fix = fix or "give the right bits (at least {needed}) or the right scale, so thresholds and casts match the data"
    raise ScaleError(f"{f.name}: maximum {f.hi:g}{_after(scale)} exceeds the {bits}-bit range [0, {peak}]; "
                     + (note or fix.format(needed=needed)))


def _after(scale: float) -> str:
    """`` (after scale=...)`` for a scale other than 1."""
    return f" (after scale={scale:g})" if scale != 1.0 else ""


def _scale_note(f: ImageFacts, scale: float, limit: float, drop: str | None) -> str | None:
    """The fix when ``scale`` made DN data too large: the stored values fit ``limit`` already."""
    if scale != 1.0 and f.hi / scale <= limit * (1 + 1e-6):
        return (f"the stored values (maximum {f.hi / scale:g}) already are digital numbers: "
                f"{drop or f'drop scale={scale:g} (it multiplies every input alike)'}")
    return None


def check_values(*, test: ImageFacts | None = None, reference: ImageFacts, pan: ImageFacts | None = None,
                 bits: int | None = None, dn_what: str | None = None, scale: float | None = None,
                 bits_range: bool = True, scale_mismatch: str = "raise", override: str | None = None, fix: Any = None,
                 input_fix: str | None = None, drop: str | None = None, bits_fix: str | None = None,
                 pan_scale: bool = True) -> None:
    """The value rules of an evaluation, in one order, on its images' summaries (DN, after ``scale``).

    Order: NaN/Inf, ``offset``, ``wrapped``, ``pan_scale``, ``band_scale``/``bit_depth``, ``unit_scale``, the
    reference within ``bits`` and within the uint16 cast (:data:`RULES`).

    Parameters
    ----------
    test, reference, pan : ImageFacts
        The fused image (optional), its reference (GT, or the MS at full resolution), the PAN (optional).
    bits : int, optional
        Radiometric resolution (range check with ``bits_range``; unit-scale limit below 8 bits).
    dn_what : str, optional
        The index that rounds to integer DN (enables ``unit_scale`` and the uint16 range).
    scale : float, optional
        The ``scale`` applied to every input, named in the messages.
    bits_range : bool
        Check the reference against ``2**bits - 1``.
    scale_mismatch : {"raise", "warn", "declared"}
        The override (:data:`SCALE_MISMATCH_POLICIES`, recorded in the card by the caller).
    override, fix, input_fix, drop, bits_fix : str, optional
        Wording: how to override; the fix of a whole fused image on another scale (or a function of
        the factor); of an input on a unit scale; of a ``scale`` that made DN too large; of ``bits``.
    pan_scale : bool
        Apply the rule ``pan_scale`` (False where every number is invariant to the PAN's gain).

    Examples
    --------
    >>> ms = image_facts("ms", np.full((8, 8, 4), 400, dtype=np.uint16))
    >>> check_values(reference=ms, pan=image_facts("pan", np.full((32, 32), 800, dtype=np.uint16)), bits=11)
    Traceback (most recent call last):
    ...
    pansharp_iqa.validation.ScaleError: pan is on another scale than ms: its values are about 2 times theirs (means 800 vs 400), while a PAN and its MS share a sensor's bit depth (PAN/MS within 0.62-1.25), so D_s, QNR and HQNR would measure the factor. Bring pan to the scale of ms: divide it by about 2 (close to 2**1, as for values shifted by 1 bit), or pass both in digital numbers.
    """  # noqa: E501 - doctest output: the one-line error message, as raised
    check_choice("scale_mismatch", scale_mismatch, SCALE_MISMATCH_POLICIES)
    shown = float(scale) if scale is not None else 1.0
    images = [f for f in (test, reference, pan) if f is not None]
    for f in images:
        if f.non_finite:
            _raise_non_finite(f.name, f.non_finite)
    for dn in (reference, pan):
        if dn is not None:
            check_non_negative(dn, fix=input_fix and "Inputs are digital numbers: store the sensor's DN, not "
                                                      "standardised or offset data.")
    declared = scale_mismatch == "declared"
    policy = "raise" if declared else scale_mismatch
    if test is not None and not declared:
        check_not_wrapped(test, reference)
        if dn_what is not None:  # standardised data: named as such before any scale comparison
            _check_unit_scale(test, dn_what, bits, None, only_standardised=True)
    if pan is not None and pan_scale:
        _check_pan_scale(pan, reference, policy, override)
    if test is not None and not declared:
        check_scales_agree(test, reference, fix=fix, scale=shown, policy=policy, override=override)
    for f in images if dn_what is not None else ():
        _check_unit_scale(f, str(dn_what), bits, None if f is test else input_fix)
    if bits is not None and bits_range:
        check_bits_range(reference, bits, scale=shown, drop=drop, fix=bits_fix)
    if dn_what is not None and reference.hi > UINT16_MAX * (1 + 1e-6):
        note = _scale_note(reference, shown, UINT16_MAX, drop) or "no sensor's digital numbers go there: check the " \
                                                                  "scale of the data"
        raise ScaleError(f"{reference.name}: maximum {reference.hi:g}{_after(shown)} exceeds {UINT16_MAX}, where "
                         f"{dn_what}'s uint16 cast (as in the reference toolbox) saturates, so the numbers would be "
                         f"wrong; {note}")


def checked_pair(reference: object, fused: object, *, dn_what: str | None = None,
                 scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A (reference, fused) pair of (H, W, B) images, validated without copies (``dn_what``: an index casts)."""
    ref, fus = image_array("reference", reference), image_array("fused", fused)
    check_same_shape("reference", ref, "fused", fus)
    fr, ff = image_facts("reference", ref, scale=scale), image_facts("fused", fus, scale=scale)
    if dn_what is not None:
        check_values(test=ff, reference=fr, dn_what=dn_what, scale=scale)
    else:
        check_not_wrapped(ff, fr)
        check_scales_agree(ff, fr, scale=scale)
    return ref, fus

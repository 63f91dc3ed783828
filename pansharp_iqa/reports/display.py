"""Display images from arrays: true-colour composites, a shared contrast stretch, display-size
resampling, the zoomed crop and residual maps.

Everything here is for looking at images only: no quality number is ever computed from a display
image. Resampling and contrast stretching use scikit-image; colour maps come from matplotlib.

Conventions
-----------
* Images are ``(H, W, B)`` arrays in digital numbers (DN), PAN images ``(H, W)``.
* A *display size* is at most :data:`DISPLAY_SIDE` pixels on the longer side; smaller images are
  shown at their own size (never upsampled).
* The contrast stretch maps each displayed channel's 1st..99th percentile (:data:`STRETCH_PERCENTILES`)
  of the *reference* to the full 0..255 range, and the same limits are applied to every method,
  so that colours are comparable across methods.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np

__all__ = [
    "CROP_SIDE_RANGE",
    "DISPLAY_SIDE",
    "RESIDUAL_CMAP",
    "STRETCH_PERCENTILES",
    "RgbChoice",
    "apply_stretch",
    "choose_crop",
    "colourise",
    "crop_side",
    "display_shape",
    "downsample",
    "residual_map",
    "rgb_bands",
    "stretch_limits",
]

#: Longer side of the display images (pixels).
DISPLAY_SIDE = 256
#: Lower and upper percentiles (%) of the reference mapped to black and white.
STRETCH_PERCENTILES = (1.0, 99.0)
#: Smallest and largest side of the zoomed crop, in full-resolution pixels.
CROP_SIDE_RANGE = (32, 96)
#: Pixels sampled for the stretch limits (display only: a regular sample suffices).
_STRETCH_SAMPLES = 4096
#: Longer side of the luminance grid on which the crop is placed.
_CROP_SEARCH_SIDE = 64
#: Matplotlib colour map of the residual maps.
RESIDUAL_CMAP = "magma"

# Band orders assumed when the band names are unknown, by band count (0-based R, G, B).
_FALLBACK = {
    3: ((0, 1, 2), "bands 1, 2, 3 shown as R, G, B (the usual order of 3-band images)"),
    4: ((2, 1, 0), "bands 3, 2, 1 shown as R, G, B (the Blue, Green, Red, NIR order of most 4-band products)"),
    8: ((4, 2, 1), "bands 5, 3, 2 shown as R, G, B (the WorldView-2/3 8-band order: Coastal, Blue, Green, "
                   "Yellow, Red, ...)"),
}


@dataclasses.dataclass(frozen=True)
class RgbChoice:
    """Which bands are shown as red, green and blue."""

    indices: tuple[int, ...]
    true_colour: bool
    note: str


def rgb_bands(n_bands: int, band_names: Sequence[str] | None = None, *, sensor: str = "") -> RgbChoice:
    """Choose the bands of a true-colour composite from the band names."""
    n_bands = int(n_bands)
    who = f"sensor {sensor!r}" if sensor else "the sensor"
    if band_names is not None and len(band_names) == n_bands:
        lookup = {str(b).strip().lower(): i for i, b in enumerate(band_names)}
        picked = [lookup.get(c) for c in ("red", "green", "blue")]
        if all(p is not None for p in picked):
            names = ", ".join(str(band_names[p]) for p in picked)  # type: ignore[index]
            return RgbChoice(tuple(int(p) for p in picked), True,  # type: ignore[arg-type]
                             f"true colour: bands {names} of {who} shown as R, G, B")
        why = f"the band names of {who} ({', '.join(map(str, band_names))}) name no Red, Green and Blue band"
    else:
        why = f"the band order of {who} is unknown (set band_names in dataset.toml for true colour)"
    if n_bands < 3:
        return RgbChoice((0,), False, f"{why}: band 1 shown in grey levels")
    indices, how = _FALLBACK.get(n_bands, ((2, 1, 0), "bands 3, 2, 1 shown as R, G, B"))
    return RgbChoice(indices, False, f"{why}: {how}; colours may not be true")


def display_shape(shape: Sequence[int], max_side: int = DISPLAY_SIDE) -> tuple[int, int]:
    """Display size of an image: the longer side at most ``max_side`` pixels, aspect kept."""
    h, w = int(shape[0]), int(shape[1])
    factor = max(h, w) / float(max_side)
    if factor <= 1:
        return h, w
    return max(1, round(h / factor)), max(1, round(w / factor))


def downsample(image: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Resample an image to a display size with anti-aliasing (scikit-image)."""
    h, w = int(shape[0]), int(shape[1])
    H, W = image.shape[:2]
    if (H, W) == (h, w):
        return np.asarray(image, dtype=np.float32)
    if H % h == 0 and W % w == 0:  # integer factors: exact block means (fast)
        from skimage.transform import downscale_local_mean

        factors = (H // h, W // w, *([1] * (image.ndim - 2)))
        return np.asarray(downscale_local_mean(np.asarray(image, dtype=np.float32), factors), dtype=np.float32)
    from skimage.transform import resize

    out = resize(np.asarray(image, dtype=np.float32), (h, w, *image.shape[2:]), order=1,
                 anti_aliasing=True, preserve_range=True)
    return np.asarray(out, dtype=np.float32)


def stretch_limits(image: np.ndarray, percentiles: Sequence[float] = STRETCH_PERCENTILES) -> np.ndarray:
    """Per-channel stretch limits: the given percentiles of the reference."""
    arr = np.asarray(image)
    step = max(1, int(np.sqrt(arr.shape[0] * arr.shape[1] / _STRETCH_SAMPLES)))
    sample = np.asarray(arr[::step, ::step], dtype=np.float64)  # a regular sample is plenty for display limits
    planes = sample.reshape(-1, 1) if sample.ndim == 2 else sample.reshape(-1, sample.shape[-1])
    lims = np.percentile(planes, list(percentiles), axis=0).T.copy()
    flat = lims[:, 1] <= lims[:, 0]
    lims[flat, 1] = lims[flat, 0] + 1.0
    return lims


def apply_stretch(image: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Map each channel's ``limits`` to 0..255 (clipping outside) with scikit-image."""
    from skimage.exposure import rescale_intensity

    arr = np.asarray(image, dtype=np.float32)
    planes = arr[:, :, None] if arr.ndim == 2 else arr
    out = np.empty(planes.shape, dtype=np.uint8)
    for c in range(planes.shape[2]):
        lo, hi = float(limits[c, 0]), float(limits[c, 1])
        scaled = rescale_intensity(planes[:, :, c], in_range=(lo, hi), out_range=(0.0, 255.0))
        out[:, :, c] = np.rint(scaled).astype(np.uint8)
    return out[:, :, 0] if arr.ndim == 2 else out


def crop_side(shape: Sequence[int]) -> int:
    """Side of the zoomed crop (full-resolution pixels): a quarter of the shorter side, within
    :data:`CROP_SIDE_RANGE` and never larger than the image."""
    short = min(int(shape[0]), int(shape[1]))
    lo, hi = CROP_SIDE_RANGE
    return int(min(short, max(lo, min(hi, short // 4))))


def choose_crop(luminance: np.ndarray, full_shape: Sequence[int], side: int) -> tuple[int, int, int]:
    """Place the zoomed crop where the reference has the most fine detail."""
    from scipy.ndimage import uniform_filter
    from skimage.filters import sobel

    H, W = int(full_shape[0]), int(full_shape[1])
    step = -(-max(luminance.shape) // (2 * _CROP_SEARCH_SIDE))  # a regular sample is enough to find edges
    detail = sobel(np.asarray(luminance[::step, ::step], dtype=np.float64))
    if max(detail.shape) > _CROP_SEARCH_SIDE:  # the crop's place needs no finer grid than this
        detail = downsample(detail, display_shape(detail.shape, _CROP_SEARCH_SIDE)).astype(np.float64)
    h, w = detail.shape
    fy, fx = h / H, w / W
    win_y, win_x = max(1, round(side * fy)), max(1, round(side * fx))
    mean = uniform_filter(detail, (win_y, win_x), mode="nearest")
    # only centres whose window lies inside the image
    y0, x0 = win_y // 2, win_x // 2
    inner = mean[y0 : h - (win_y - 1 - y0), x0 : w - (win_x - 1 - x0)]
    if inner.size == 0:
        return 0, 0, int(side)
    iy, ix = np.unravel_index(int(np.argmax(inner)), inner.shape)
    row = int(round(iy / fy))
    col = int(round(ix / fx))
    return min(max(row, 0), H - side), min(max(col, 0), W - side), int(side)


def residual_map(fused: np.ndarray, reference: np.ndarray, shape: Sequence[int] | None = None) -> np.ndarray:
    """Mean absolute difference over the bands, ``mean_b |fused - reference|`` (DN), per pixel or
    averaged over the pixels of each cell of a display grid."""
    diff = np.subtract(fused, reference, dtype=np.float64)
    np.abs(diff, out=diff)
    H, W, B = diff.shape
    h, w = (H, W) if shape is None else (int(shape[0]), int(shape[1]))
    if H % h == 0 and W % w == 0:  # bands and the pixels of each cell summed in one pass
        fy, fx = H // h, W // w
        cells = np.einsum("iajbk->ij", diff.reshape(h, fy, w, fx, B)) / (fy * fx * B)
        return cells.astype(np.float32)
    return downsample(np.einsum("ijk->ij", diff) / B, (h, w))


@functools.lru_cache(maxsize=4)
def _lut(cmap: str) -> np.ndarray:
    import matplotlib

    return (matplotlib.colormaps[cmap](np.linspace(0.0, 1.0, 256))[:, :3] * 255).round().astype(np.uint8)


def colourise(values: np.ndarray, vmax: float, *, cmap: str = RESIDUAL_CMAP) -> np.ndarray:
    """Colour-map a non-negative map on the scale ``[0, vmax]`` (matplotlib colour map)."""
    lut = _lut(cmap)
    scale = 255.0 / vmax if vmax > 0 else 0.0
    idx = np.clip(np.rint(np.asarray(values, dtype=np.float32) * scale), 0, 255).astype(np.uint8)
    return lut[idx]

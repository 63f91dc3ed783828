"""Small helpers shared by the notebooks in this folder: find and load the data, draw images.

Only data handling and display live here; every number in the notebooks is computed in the
notebook itself with ``pansharp_iqa``.

Data: the WorldView-2 scene ``imgWV2.mat`` (GRIP-UNINA, non-profit licence, never copied into the
repository) is read from ``$PANSHARP_SHARED_DATA`` or ``<repo>/../shared/data``. When it is absent
a synthetic WorldView-2-like scene is generated instead and every notebook says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Scene", "repo_root", "shared_data_dir", "load_wv2", "synthetic_wv2", "stretch",
           "show_images", "format_table"]

#: 0-based band indexes of the WV2 scene for display (Red, Green, Blue and NIR1, Red, Green).
WV2_RGB = (4, 2, 1)
WV2_FALSE_COLOUR = (6, 4, 2)


@dataclass
class Scene:
    """A full-resolution MS + PAN pair in digital numbers (DN)."""

    ms: np.ndarray            #: (h, w, B) MS at its native scale
    pan: np.ndarray           #: (ratio*h, ratio*w) PAN
    sensor: str
    ratio: int
    bits: int
    source: str               #: file read, or "synthetic"
    synthetic: bool = False
    band_names: list[str] = field(default_factory=list)

    def crop(self, row: int, col: int, size: int) -> Scene:
        """MS window ``[row:row+size, col:col+size]`` (MS pixels) and the PAN window over it."""
        r = self.ratio
        return Scene(self.ms[row:row + size, col:col + size],
                     self.pan[r * row:r * (row + size), r * col:r * (col + size)],
                     self.sensor, self.ratio, self.bits, self.source, self.synthetic,
                     list(self.band_names))


def repo_root(start: Path | None = None) -> Path:
    """The repository root: the first folder upwards holding ``pyproject.toml`` (else the parent
    of this file's folder)."""
    here = Path(start or Path.cwd()).resolve()
    for p in (here, *here.parents):
        if (p / "pyproject.toml").is_file() and (p / "pansharp_iqa").is_dir():
            return p
    return Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """``$PANSHARP_SHARED_DATA`` if set, else ``<repo>/../shared/data``."""
    env = os.environ.get("PANSHARP_SHARED_DATA")
    return Path(env) if env else repo_root().parent / "shared" / "data"


def _scalar(v: object) -> object:
    a = np.asarray(v)
    if a.dtype.kind in "US":
        return str(a.reshape(-1)[0]).strip()
    return a.reshape(-1)[0].item()


def load_wv2(*, synthetic_size: int = 160, seed: int = 0) -> Scene:
    """The WorldView-2 scene ``imgWV2.mat`` (I_MS 320x320x8, I_PAN 1280x1280, 11-bit DN).

    Falls back to :func:`synthetic_wv2` (``synthetic_size`` MS pixels a side) when the file is
    absent, with ``Scene.synthetic = True`` and a message.
    """
    import pansharp_iqa as pi

    path = shared_data_dir() / "imgWV2.mat"
    names = list(pi.get_sensor("WV2").band_names)
    if path.is_file():
        import scipy.io as sio

        d = sio.loadmat(str(path))
        return Scene(np.asarray(d["I_MS"]), np.asarray(d["I_PAN"]), str(_scalar(d["sensor"])),
                     int(_scalar(d["ratio"])), int(_scalar(d["L"])), str(path), False, names)
    print(f"NOTE: {path} not found (set PANSHARP_SHARED_DATA to the folder holding imgWV2.mat).\n"
          "      Using a SYNTHETIC WorldView-2-like scene instead: the code runs the same, but the\n"
          "      numbers and pictures below are not those of a real satellite image.")
    return synthetic_wv2(synthetic_size, seed=seed)


def synthetic_wv2(size: int = 160, *, seed: int = 0) -> Scene:
    """A synthetic 8-band WorldView-2-like scene (MS ``size`` x ``size``, PAN 4x larger, 11-bit DN).

    A high-resolution 8-band truth is painted from four materials (water, vegetation, soil, roofs)
    on smooth random fields plus rectangular "buildings" and straight "roads"; the PAN is a
    weighted sum of its visible/NIR bands; the MS is the truth filtered with the WV2 MTF and
    decimated by 4 (the sensor model the Wald protocol assumes).
    """
    from scipy.ndimage import gaussian_filter

    import pansharp_iqa as pi

    rng = np.random.default_rng(seed)
    ratio, n = 4, 4 * size
    # reflectance-like signatures (Coastal, Blue, Green, Yellow, Red, RedEdge, NIR1, NIR2)
    sig = np.array([
        [0.10, 0.09, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02],   # water
        [0.05, 0.05, 0.09, 0.08, 0.05, 0.20, 0.45, 0.42],   # vegetation
        [0.12, 0.14, 0.18, 0.21, 0.24, 0.27, 0.30, 0.31],   # soil
        [0.25, 0.26, 0.27, 0.27, 0.28, 0.28, 0.29, 0.29],   # roofs / concrete
    ])
    fields = gaussian_filter(rng.standard_normal((4, n, n)), sigma=(0, n / 10, n / 10))
    fields[0] -= 0.6 * fields[0].std()                     # less water than land
    cls = np.argmax(fields, axis=0)
    for _ in range(size // 3):                              # buildings
        y, x = rng.integers(0, n - 24, 2)
        h, w = rng.integers(6, 24, 2)
        cls[y:y + h, x:x + w] = 3
    for _ in range(3):                                      # roads
        if rng.random() < 0.5:
            y = rng.integers(0, n - 6)
            cls[y:y + 5, :] = 2
        else:
            x = rng.integers(0, n - 6)
            cls[:, x:x + 5] = 2
    truth = sig[cls]
    texture = 1.0 + 0.15 * gaussian_filter(rng.standard_normal((n, n)), 1.5)
    truth = truth * texture[..., None]
    truth = gaussian_filter(truth, sigma=(0.7, 0.7, 0))   # optics of the PAN-scale truth
    dn = np.clip(truth * 3000.0 + 200.0, 0, 2047)
    weights = np.array([0.05, 0.15, 0.15, 0.15, 0.15, 0.1, 0.15, 0.1])
    pan = np.clip(dn @ weights / weights.sum() + rng.normal(0, 2.0, (n, n)), 0, 2047)
    ms = pi.mtf_filter_sensor(dn, "WV2", ratio)[ratio // 2::ratio, ratio // 2::ratio]
    ms = np.clip(ms + rng.normal(0, 1.0, ms.shape), 0, 2047)
    return Scene(np.round(ms).astype(np.uint16), np.round(pan).astype(np.uint16), "WV2", ratio, 11,
                 "synthetic", True, list(pi.get_sensor("WV2").band_names))


def stretch(image: np.ndarray, bands: tuple[int, ...] | None = None, *,
            reference: np.ndarray | None = None, pct: tuple[float, float] = (2.0, 98.0)) -> np.ndarray:
    """Percentile stretch to [0, 1] for display.

    Parameters
    ----------
    image : (H, W, B) or (H, W) array
    bands : tuple of int, optional
        Bands to show as R, G, B (default: all of a 2-D image).
    reference : array, optional
        Image whose percentiles set the stretch (default: ``image`` itself); use the same
        reference for every panel of a comparison so colours mean the same thing.
    pct : (low, high)
        Percentiles mapped to 0 and 1.
    """
    img = np.asarray(image, np.float64)
    ref = np.asarray(image if reference is None else reference, np.float64)
    if bands is not None:
        img, ref = img[..., list(bands)], ref[..., list(bands)]
    axes = (0, 1)
    lo = np.percentile(ref, pct[0], axis=axes)
    hi = np.percentile(ref, pct[1], axis=axes)
    return np.clip((img - lo) / np.maximum(hi - lo, 1e-12), 0.0, 1.0)


def show_images(images: dict[str, np.ndarray], *, bands: tuple[int, ...] | None = None,
                reference: np.ndarray | None = None, ncols: int | None = None,
                size: float = 2.6, suptitle: str | None = None):
    """Show images side by side with one common percentile stretch (see :func:`stretch`).

    2-D images (PAN) are stretched on themselves and drawn in grey.
    """
    import matplotlib.pyplot as plt

    ncols = ncols or len(images)
    nrows = -(-len(images) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols, (size + 0.3) * nrows + 0.3),
                             squeeze=False, layout="constrained")
    for ax in axes.ravel():
        ax.axis("off")
    for ax, (title, img) in zip(axes.ravel(), images.items(), strict=False):  # the grid may have spare cells
        if np.ndim(img) == 2:
            ax.imshow(stretch(img), cmap="gray", interpolation="nearest")
        else:
            ax.imshow(stretch(img, bands, reference=reference), interpolation="nearest")
        ax.set_title(title, fontsize=9)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    return fig


def format_table(rows: dict[str, dict[str, float]], columns: list[str] | None = None,
                 digits: int = 4) -> str:
    """Plain-text table: one row per key of ``rows`` (a dict of index -> value dicts)."""
    columns = columns or [k for k in next(iter(rows.values())) if k != "protocol"]
    width = max(len(str(k)) for k in rows) + 2
    head = "".ljust(width) + "".join(c.rjust(12) for c in columns)
    lines = [head, "-" * len(head)]
    for name, vals in rows.items():
        cells = "".join(f"{vals[c]:12.{digits}f}" if c in vals else "-".rjust(12) for c in columns)
        lines.append(str(name).ljust(width) + cells)
    return "\n".join(lines)

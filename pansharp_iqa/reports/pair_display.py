"""What one (scene, method) pair contributes to the visual reports: the method's composite and
zoomed crop, the reference panels, and the residual map, as small encoded images.

:func:`make_pair_display` is called where the pair's images are already in memory (the
evaluation worker), through an :class:`ImageAccess` that hides whether the images are whole
arrays or files read as decimated views; it returns a :class:`PairDisplay` of a few tens of
kilobytes, which travels back with the pair's outcome. The reference panels depend only on the
scene (same stretch, same crop for every method), so any pair of a scene can supply them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from .display import (
    DISPLAY_SIDE,
    RgbChoice,
    apply_stretch,
    choose_crop,
    crop_side,
    display_shape,
    downsample,
    residual_map,
    rgb_bands,
    stretch_limits,
)
from .image_codec import encode_jpeg

__all__ = [
    "ArrayImages", "ImageAccess", "PairDisplay", "Panel", "SceneView", "assemble_scene", "make_pair_display",
    "scene_view",
]


class ImageAccess(Protocol):
    """Read access to one pair's images (roles ``fused``, ``gt``, ``ms``, ``pan``), in DN."""

    notes: tuple[str, ...]

    def shape(self, role: str) -> tuple[int, int]: ...

    def display(self, role: str, bands: Sequence[int], shape: Sequence[int]) -> np.ndarray: ...

    def window(self, role: str, rows: tuple[int, int], cols: tuple[int, int], bands: Sequence[int]) -> np.ndarray: ...

    def residual(self, shape: Sequence[int]) -> np.ndarray: ...


class ArrayImages:
    """:class:`ImageAccess` over whole arrays (roles ``fused``, ``gt``, ``ms``, ``pan``), in DN times ``scales``."""

    notes: tuple[str, ...] = ()

    def __init__(self, fused: np.ndarray | None, inputs: Mapping[str, np.ndarray],
                 scales: Mapping[str, float] | None = None) -> None:
        self.arrays = {**inputs, **({} if fused is None else {"fused": fused})}
        self.scales = scales or {}

    def shape(self, role: str) -> tuple[int, int]:
        return tuple(self.arrays[role].shape[:2])

    def display(self, role: str, bands: Sequence[int], shape: Sequence[int]) -> np.ndarray:
        arr = self.arrays[role]
        return downsample(arr[:, :, list(bands)] if bands else arr, shape) * self.scales.get(role, 1.0)

    def window(self, role: str, rows: tuple[int, int], cols: tuple[int, int], bands: Sequence[int]) -> np.ndarray:
        part = self.arrays[role][rows[0] : rows[1], cols[0] : cols[1]]
        return (part[:, :, list(bands)] if bands else part) * self.scales.get(role, 1.0)

    def residual(self, shape: Sequence[int]) -> np.ndarray:
        fused, gt = self.arrays["fused"], self.arrays["gt"]
        s, g = self.scales.get("fused", 1.0), self.scales.get("gt", 1.0)
        return residual_map(fused if s == 1.0 else fused * s, gt if g == 1.0 else gt * g, shape)


@dataclasses.dataclass(frozen=True)
class Panel:
    """One image of the comparison grid."""

    label: str
    image: bytes
    crop: bytes


@dataclasses.dataclass(frozen=True)
class PairDisplay:
    """Display material of one (scene, method) pair (picklable, small)."""

    method: str
    full_shape: tuple[int, int]
    display_shape: tuple[int, int]
    crop: tuple[int, int, int]
    rgb: RgbChoice
    fused: Panel | None
    references: tuple[Panel, ...]
    residual: np.ndarray | None
    notes: tuple[str, ...] = ()

    def residual_dn(self) -> np.ndarray | None:
        """The residual map in DN (float32), or ``None``."""
        return None if self.residual is None else self.residual.astype(np.float32)


def _compact(values: np.ndarray) -> np.ndarray:
    """float16 copy (3 significant digits are plenty for a colour map), clipped to its range."""
    return np.clip(values, 0.0, float(np.finfo(np.float16).max)).astype(np.float16)


def _exp_crop(access: ImageAccess, bands: Sequence[int], crop: tuple[int, int, int], ratio: int) -> np.ndarray:
    """The EXP-upsampled MS on the crop: exact rows/cols of the whole-image ``interp23tap``."""
    from pansharp_iqa.borders import consecutive_runs
    from pansharp_iqa.tiled.halos import exp_window

    row, col, side = crop
    shape_lr = access.shape("ms")

    def get_low(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        blocks = [
            np.concatenate([access.window("ms", (r0, r1), (c0, c1), bands) for c0, c1 in consecutive_runs(cols)],
                           axis=1)
            for r0, r1 in consecutive_runs(rows)
        ]
        return np.concatenate(blocks, axis=0)

    lo_r, lo_c = row // ratio, col // ratio
    hi_r, hi_c = -(-(row + side) // ratio), -(-(col + side) // ratio)
    up = exp_window(get_low, (lo_r, hi_r), (lo_c, hi_c), shape_lr, ratio)
    return up[row - lo_r * ratio : row - lo_r * ratio + side, col - lo_c * ratio : col - lo_c * ratio + side]


def make_pair_display(
    access: ImageAccess,
    *,
    method: str,
    resolution: str,
    ratio: int,
    rgb: RgbChoice,
    max_side: int = DISPLAY_SIDE,
    with_fused: bool = True,
) -> PairDisplay:
    """Build the display material of one pair, with its scene's reference panels."""
    bands = rgb.indices
    reduced = resolution == "reduced"
    H, W = access.shape("gt" if reduced else "pan")
    dshape = display_shape((H, W), max_side)
    ref = access.display("gt" if reduced else "ms", bands, dshape)
    pan = None if reduced else access.display("pan", (), dshape)
    limits, (row, col, side) = _scene_geometry(ref, pan, (H, W), ratio)
    rows, cols = (row, row + side), (col, col + side)

    def panel(label: str, display: np.ndarray, window: np.ndarray, lims: np.ndarray) -> Panel:
        return Panel(label, encode_jpeg(_squeeze(apply_stretch(display, lims))),
                     encode_jpeg(_squeeze(apply_stretch(window, lims))))

    fused = residual = None
    if with_fused:
        fused = panel(method, access.display("fused", bands, dshape), access.window("fused", rows, cols, bands), limits)
        if reduced:
            residual = _compact(access.residual(display_shape((H, W), max(1, max_side // 2))))
    if reduced:
        references: tuple[Panel, ...] = (panel("GT", ref, access.window("gt", rows, cols, bands), limits),)
    else:
        assert pan is not None
        references = (
            panel("MS (EXP)", ref, _exp_crop(access, bands, (row, col, side), ratio), limits),
            panel("PAN", pan, access.window("pan", rows, cols, ()), stretch_limits(pan)),
        )
    return PairDisplay(method, (H, W), dshape, (row, col, side), rgb, fused, references, residual, tuple(access.notes))


def _scene_geometry(
    ref: np.ndarray, pan: np.ndarray | None, full_shape: tuple[int, int], ratio: int
) -> tuple[np.ndarray, tuple[int, int, int]]:
    """Stretch limits (of the GT or MS display) and crop (on the GT or PAN luminance)."""
    limits = stretch_limits(ref)
    side = crop_side(full_shape)
    if pan is None:
        row, col, side = choose_crop(ref.mean(axis=2), full_shape, side)
    else:
        side = max(ratio, side - side % ratio)
        row, col, side = choose_crop(pan, full_shape, side)
        row, col = row - row % ratio, col - col % ratio  # MS-aligned: the EXP crop is the whole image's
    return limits, (row, col, side)


def _squeeze(image: np.ndarray) -> np.ndarray:
    return image[:, :, 0] if image.ndim == 3 and image.shape[2] == 1 else image


@dataclasses.dataclass(frozen=True)
class SceneView:
    """The comparison grid of one scene, assembled from its pairs' displays."""

    scene: str
    methods: list[str]
    references: tuple[Panel, ...]
    panels: dict[str, Panel | str]
    residuals: dict[str, np.ndarray]
    residual_max: float
    full_shape: tuple[int, int]
    display_shape: tuple[int, int]
    crop: tuple[int, int, int]
    notes: list[str]


def assemble_scene(scene: str, methods: Sequence[str], displays: dict[str, object]) -> SceneView | None:
    """Put one scene's pair displays together on shared scales."""
    shown = [d for m in methods if isinstance(d := displays.get(m), PairDisplay)]
    if not shown:
        return None
    first = shown[0]
    references = next((d.references for d in shown if d.references), ())
    panels: dict[str, Panel | str] = {}
    residuals: dict[str, np.ndarray] = {}
    for m in methods:
        d = displays.get(m)
        if isinstance(d, PairDisplay) and d.fused is not None:
            panels[m] = d.fused
            res = d.residual_dn()
            if res is not None:
                residuals[m] = res
        else:
            panels[m] = d if isinstance(d, str) else "not evaluated (see the failures)"
    tops = [float(np.percentile(r, 99)) for r in residuals.values() if r.size]
    top = float(np.median(tops)) if tops else 0.0
    notes = [first.rgb.note, *first.notes]
    return SceneView(scene, list(methods), references, panels, residuals, top if top > 0 else 1.0,
                     first.full_shape, first.display_shape, first.crop, notes)


def scene_view(
    scene: str,
    fused: Mapping[str, np.ndarray],
    *,
    gt: np.ndarray | None = None,
    ms: np.ndarray | None = None,
    pan: np.ndarray | None = None,
    ratio: int = 4,
    band_names: Sequence[str] | None = None,
    max_side: int = DISPLAY_SIDE,
) -> SceneView:
    """The comparison grid of one scene from arrays, as ``pansharp-eval`` makes it for its reports.

    Parameters
    ----------
    scene : str
        Scene name.
    fused : mapping of str to numpy.ndarray
        ``fused[method]`` = ``(H, W, B)`` fused image, DN (report order).
    gt : numpy.ndarray, optional
        ``(H, W, B)`` ground truth, DN: a reduced-resolution grid (with residual maps).
    ms, pan : numpy.ndarray, optional
        ``(H/ratio, W/ratio, B)`` MS and ``(H, W)`` PAN, DN, when there is no ``gt``: a
        full-resolution grid (references: the EXP-upsampled MS and the PAN).
    ratio : int
        PAN/MS resolution ratio.
    band_names : sequence of str, optional
        Band names in storage order: the bands named Red, Green and Blue are shown (see
        ``reports.display.rgb_bands``).
    max_side : int
        Longer side of the display images (pixels).

    Returns
    -------
    SceneView
        For :func:`pansharp_iqa.reports.comparison_figure` or ``reports.html.render_scene_grid``.

    Examples
    --------
    >>> gt = np.random.default_rng(0).uniform(100, 1000, (64, 64, 4))
    >>> view = scene_view("s1", {"noisy": gt + 5.0}, gt=gt, band_names=["Blue", "Green", "Red", "NIR"])
    >>> [p.label for p in view.references], view.methods, view.display_shape
    (['GT'], ['noisy'], (64, 64))
    """
    if gt is None and (ms is None or pan is None):
        raise ValueError("pass gt (reduced resolution) or ms and pan (full resolution)")
    if gt is not None:
        inputs = {"gt": gt}
    else:
        assert ms is not None and pan is not None  # checked above
        inputs = {"ms": ms, "pan": pan}
    n_bands = (gt if gt is not None else inputs["ms"]).shape[2]
    rgb = rgb_bands(n_bands, band_names)
    displays: dict[str, object] = {
        m: make_pair_display(ArrayImages(f, inputs), method=m, resolution="reduced" if gt is not None else "full",
                             ratio=ratio, rgb=rgb, max_side=max_side)
        for m, f in fused.items()
    }
    view = assemble_scene(scene, list(fused), displays)
    assert view is not None
    return view

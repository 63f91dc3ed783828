"""Comparison figures of a scene as matplotlib figures (``--figures``: PNG at 300 dpi and PDF).

:func:`comparison_figure` returns a :class:`matplotlib.figure.Figure` that can be restyled (titles,
fonts, colour map, size) before it is saved: a column per image (the reference(s), then every
method, labelled with its name), the whole scene with the crop's box and the zoomed crop as an inset
in the corner away from the box; at reduced resolution a second row of residual maps
``mean_b |fused - GT|`` on one colour scale with its colour bar. No pyplot state is used: the
figure is a plain ``Figure`` object, safe in scripts, workers and notebooks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .display import RESIDUAL_CMAP
from .image_codec import decode_image
from .pair_display import Panel, SceneView

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage

__all__ = ["FIGURE_DPI", "comparison_figure", "write_scene_figure"]

#: Resolution of the PNG figures (dots per inch).
FIGURE_DPI = 300
_PANEL_INCHES = 1.1
_LABEL_CHARS = 22
_BOX = "#ffd400"
_MISSING = "#aa0000"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def _show(ax: Axes, picture: Any, **imshow: Any) -> AxesImage:
    ax.set_xticks([])
    ax.set_yticks([])
    return ax.imshow(picture, interpolation="nearest", **({"cmap": "gray"} | imshow))


def _crop_box(ax: Axes, view: SceneView, shown: tuple[int, ...]) -> None:
    """The crop's box on a picture of ``shown = (rows, cols, ...)`` display pixels."""
    from matplotlib.patches import Rectangle

    (H, W), (row, col, side) = view.full_shape, view.crop
    sy, sx = shown[0] / H, shown[1] / W
    ax.add_patch(Rectangle((col * sx - 0.5, row * sy - 0.5), side * sx, side * sy, fill=False, edgecolor=_BOX,
                           linewidth=0.8))


def comparison_figure(view: SceneView, *, panel_inches: float = _PANEL_INCHES) -> Figure:
    """The comparison grid of one scene as a matplotlib figure.

    Parameters
    ----------
    view : SceneView
        The scene's panels (:func:`~.pair_display.scene_view` from arrays, or as ``pansharp-eval``
        assembles them with ``reports.pair_display.assemble_scene``).
    panel_inches : float
        Width of one panel (inches).

    Returns
    -------
    matplotlib.figure.Figure
        Axes in reading order: one per column (whole image, with the zoomed crop as its inset
        axes, ``ax.child_axes``), then, at reduced resolution, one per residual map and the colour
        bar's. Restyle it, then ``fig.savefig("scene.pdf")`` or ``fig.savefig("scene.png", dpi=300)``.

    References
    ----------
    L. Wald, T. Ranchin, M. Mangolini, "Fusion of satellite images of different spatial
    resolutions: assessing the quality of resulting images", PE&RS 63(6):691-699, 1997 (the
    reference and residual panels of reduced-resolution comparisons).

    Examples
    --------
    >>> import numpy as np
    >>> from pansharp_iqa.reports import comparison_figure, scene_view
    >>> gt = np.random.default_rng(0).uniform(100, 1000, (64, 64, 4))
    >>> fig = comparison_figure(scene_view("s1", {"A": gt + 5.0, "B": gt * 1.1}, gt=gt))
    >>> [ax.get_title() for ax in fig.axes[:3]]
    ['GT', 'A', 'B']
    >>> fig.axes[0].set_title("reference")  # restyle, then fig.savefig(...)  # doctest: +ELLIPSIS
    Text(...)
    """
    from matplotlib.figure import Figure

    columns: list[tuple[str, Panel | str, bool]] = [(p.label, p, False) for p in view.references]
    columns += [(m, view.panels[m], True) for m in view.methods]
    rows = 2 if view.residuals else 1
    (H, W), (h, w), (row, col, side) = view.full_shape, view.display_shape, view.crop
    pw, ph, gap, top, bar = panel_inches, panel_inches * h / w, 0.04 * panel_inches, 0.2, 0.75 * (rows == 2)
    width, height = len(columns) * (pw + gap) + bar, top + rows * (ph + gap)
    fig = Figure(figsize=(width, height))

    def panel_axes(j: int, i: int) -> Axes:  # column j, row i, in inches from the top left
        return fig.add_axes(((j * (pw + gap) + gap / 2) / width, 1 - (top + i * (ph + gap) + ph) / height,
                             pw / width, ph / height))

    # the inset goes to the corner farthest from the crop, so it never hides the box
    inset = (0.56 if col + side / 2 <= W / 2 else 0.0, 0.0 if row + side / 2 <= H / 2 else 0.56, 0.44, 0.44)
    for j, (name, panel, _) in enumerate(columns):
        ax = panel_axes(j, 0)
        ax.set_title(name if len(name) <= _LABEL_CHARS else name[: _LABEL_CHARS - 1] + "\u2026", fontsize=7, pad=3)
        if isinstance(panel, Panel):
            picture = decode_image(panel.image)
            _show(ax, picture)
            _crop_box(ax, view, picture.shape)
            zoom = ax.inset_axes(inset)
            _show(zoom, decode_image(panel.crop))
            for spine in zoom.spines.values():
                spine.set(edgecolor=_BOX, linewidth=0.8)
        else:
            _show(ax, [[1.0]], cmap="gray", vmin=0, vmax=1)
            ax.text(0.5, 0.5, "no result", color=_MISSING, fontsize=6, ha="center", va="center",
                    transform=ax.transAxes)
    residual_image = None
    for j, (name, _, is_method) in enumerate(columns):
        residual = view.residuals.get(name) if is_method else None
        if residual is not None:
            ax = panel_axes(j, 1)
            residual_image = _show(ax, residual, cmap=RESIDUAL_CMAP, vmin=0.0, vmax=view.residual_max)
            _crop_box(ax, view, residual.shape)
    if residual_image is not None:
        left = len(columns) * (pw + gap) + 0.08
        cax = fig.add_axes((left / width, 0.12 * ph / height, 0.1 / width, 0.8 * ph / height))
        colour_bar = fig.colorbar(residual_image, cax=cax, extend="max")
        colour_bar.set_label("|fused \u2212 GT| (DN)", fontsize=6)
        cax.tick_params(labelsize=5)
    return fig


def write_scene_figure(out_dir: str | Path, view: SceneView, *, dpi: int = FIGURE_DPI) -> list[Path]:
    """Write one scene's :func:`comparison_figure` as ``<scene>.png`` (``dpi``) and ``<scene>.pdf``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig = comparison_figure(view)
    png, pdf = out / f"{_safe(view.scene)}.png", out / f"{_safe(view.scene)}.pdf"
    fig.savefig(png, dpi=dpi)
    fig.savefig(pdf, metadata={"CreationDate": None})
    return [png, pdf]

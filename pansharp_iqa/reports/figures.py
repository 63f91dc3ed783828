"""``--figures``: the comparison grid of each scene as publication figures (PNG at 300 dpi, PDF).

One figure per scene, ``<out>/<scene>.png`` and ``.pdf``: a column per image (the reference(s),
then every method, labelled with its name), the whole scene with the crop's box and the zoomed
crop as an inset in the corner away from the box; at reduced resolution a second row of residual
maps ``mean_b |fused - GT|`` on one colour scale with its colour bar. Matplotlib draws on its
non-interactive Agg canvas (no display, never touches pyplot's global state).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .display import RESIDUAL_CMAP
from .image_codec import decode_image
from .pair_display import Panel, SceneView

__all__ = ["FIGURE_DPI", "write_scene_figure"]

#: Resolution of the PNG figures (dots per inch).
FIGURE_DPI = 300
_PANEL_IN = 1.2  # smallest panel width, inches
_LABEL_CHARS = 22
_BOX = "#ffd400"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def _figure(width: float, height: float) -> Any:
    """A stand-alone Agg figure (inches)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _image(ax: Any, image: Any, extent: tuple[float, float, float, float], **kwargs: Any) -> Any:
    if image.ndim == 2 and "cmap" not in kwargs:
        kwargs.update(cmap="gray", vmin=0, vmax=255)
    return ax.imshow(image, extent=extent, interpolation="nearest", resample=False, **kwargs)


def _frame(ax: Any, x: float, y: float, w: float, h: float, **kwargs: Any) -> None:
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((x, y), w, h, fill=False, **kwargs))


def write_scene_figure(out_dir: str | Path, view: SceneView, *, dpi: int = FIGURE_DPI) -> list[Path]:
    """Write one scene's comparison figure as PNG (``dpi``) and PDF.

    All panels are drawn in one axes (placed by their extents), which keeps a figure to a few
    tenths of a second.

    Parameters
    ----------
    out_dir : path-like
        Folder (created) for ``<scene>.png`` and ``<scene>.pdf``.
    view : SceneView
        The scene's panels (:func:`~.pair_display.assemble_scene`).
    dpi : int
        PNG resolution (dots per inch). Panels are at least 1.2 in wide (wider when the display
        images have more than 1.2 x ``dpi`` pixels); the PDF embeds the images at their own
        resolution, with vector text.

    Returns
    -------
    list of Path
        The two files.

    Examples
    --------
    See ``tests/reports/test_figures.py``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    columns: list[tuple[str, Panel | str, bool]] = [(p.label, p, False) for p in view.references]
    columns += [(m, view.panels[m], True) for m in view.methods]
    n = len(columns)
    h, w = view.display_shape
    H, W = view.full_shape
    row, col, side = view.crop
    sy, sx = h / H, w / W
    rows = 2 if view.residuals else 1
    scale = max(_PANEL_IN / w, 1.0 / dpi)  # inches per data unit (display pixel)
    gap, label, rgap = 0.04 * w, 0.14 / scale, 0.04 * h  # data units
    data_w = n * w + (n - 1) * gap
    data_h = label + rows * h + (rows - 1) * rgap
    bar_in = 0.75 if rows == 2 else 0.0
    fig = _figure(data_w * scale + bar_in, data_h * scale)
    ax = fig.add_axes((0.0, 0.0, data_w * scale / fig.get_figwidth(), 1.0))
    ax.set_xlim(0, data_w)
    ax.set_ylim(0, data_h)
    ax.set_axis_off()
    inset = 0.44
    # the inset goes to the corner farthest from the crop, so it never hides the box
    right = col + side / 2 <= W / 2
    low = row + side / 2 <= H / 2
    residual_im = None
    for j, (name, panel, is_method) in enumerate(columns):
        x0 = j * (w + gap)
        top = data_h - label  # row 0 image spans [top - h, top]
        short = name if len(name) <= _LABEL_CHARS else name[: _LABEL_CHARS - 1] + "\u2026"
        ax.text(x0 + w / 2, top + label * 0.25, short, ha="center", va="bottom", fontsize=6.5, clip_on=False)
        if isinstance(panel, Panel):
            _image(ax, decode_image(panel.image), (x0, x0 + w, top - h, top))
            _frame(ax, x0, top - h, w, h, ec="black", lw=0.4)
            _frame(ax, x0 + col * sx, top - (row + side) * sy, side * sx, side * sy, ec=_BOX, lw=0.8)
            iw, ih = inset * w, inset * h
            ix = x0 + w - iw if right else x0
            iy = top - h if low else top - ih
            _image(ax, decode_image(panel.crop), (ix, ix + iw, iy, iy + ih))
            _frame(ax, ix, iy, iw, ih, ec=_BOX, lw=0.8)
        else:
            ax.text(x0 + w / 2, top - h / 2, "no result", ha="center", va="center", fontsize=6, color="#a00")
        res = view.residuals.get(name) if (is_method and rows == 2) else None
        if res is not None:
            rtop = top - h - rgap
            residual_im = _image(ax, res, (x0, x0 + w, rtop - h, rtop), cmap=RESIDUAL_CMAP, vmin=0.0,
                                 vmax=view.residual_max)
            _frame(ax, x0, rtop - h, w, h, ec="black", lw=0.4)
            _frame(ax, x0 + col * sx, rtop - (row + side) * sy, side * sx, side * sy, ec=_BOX, lw=0.8)
    if residual_im is not None:
        fw, fh = fig.get_figwidth(), fig.get_figheight()
        cax = fig.add_axes((data_w * scale / fw + 0.08 / fw, 0.08 * h * scale / fh, 0.1 / fw, 0.84 * h * scale / fh))
        bar = fig.colorbar(residual_im, cax=cax, extend="max")
        bar.ax.tick_params(labelsize=5, length=2, width=0.4)
        bar.set_label("|fused \u2212 GT| (DN)", fontsize=5, labelpad=2)
        bar.outline.set_linewidth(0.4)
    png = out / f"{_safe(view.scene)}.png"
    pdf = out / f"{_safe(view.scene)}.pdf"
    fig.savefig(png, dpi=dpi, pil_kwargs={"compress_level": 3})
    from matplotlib import rc_context

    with rc_context({"image.composite_image": False}):  # each image embedded at its own resolution
        fig.savefig(pdf, dpi=dpi, metadata={"Creator": "pansharp_iqa"})
    return [png, pdf]

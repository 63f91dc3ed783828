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
_PANEL_IN = 1.45  # panel width, inches
_BOX = "#ffd400"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _show(ax: Any, image: Any, **kwargs: Any) -> Any:
    grey = image.ndim == 2
    im = ax.imshow(image, cmap="gray" if grey and "cmap" not in kwargs else kwargs.pop("cmap", None),
                   vmin=kwargs.pop("vmin", 0 if grey else None), vmax=kwargs.pop("vmax", 255 if grey else None),
                   interpolation="nearest", **kwargs)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_linewidth(0.4)
    return im


def _box(ax: Any, view: SceneView, shape: tuple[int, int]) -> None:
    from matplotlib.patches import Rectangle

    H, W = view.full_shape
    h, w = shape
    row, col, side = view.crop
    sy, sx = h / H, w / W
    ax.add_patch(Rectangle((col * sx - 0.5, row * sy - 0.5), side * sx, side * sy, fill=False, ec=_BOX, lw=0.8))


def _inset(ax: Any, view: SceneView, crop: Any) -> None:
    H, W = view.full_shape
    row, col, side = view.crop
    # the corner farthest from the crop, so the inset never hides the box
    x0 = 0.0 if col + side / 2 > W / 2 else 0.56
    y0 = 0.56 if row + side / 2 > H / 2 else 0.0  # axes y grows upwards
    inset = ax.inset_axes([x0, y0, 0.44, 0.44])
    _show(inset, crop)
    for spine in inset.spines.values():
        spine.set_edgecolor(_BOX)
        spine.set_linewidth(0.8)


def write_scene_figure(out_dir: str | Path, view: SceneView, *, dpi: int = FIGURE_DPI) -> list[Path]:
    """Write one scene's comparison figure as PNG (``dpi``) and PDF.

    Parameters
    ----------
    out_dir : path-like
        Folder (created) for ``<scene>.png`` and ``<scene>.pdf``.
    view : SceneView
        The scene's panels (:func:`~.pair_display.assemble_scene`).
    dpi : int
        PNG resolution (dots per inch); the PDF keeps the images at their display resolution.

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
    rows = 2 if view.residuals else 1
    panel_h = _PANEL_IN * h / w
    margin = 0.55 if rows == 2 else 0.05  # room for the colour bar
    fig = _figure(_PANEL_IN * n + margin, (panel_h + 0.22) * rows + 0.12)
    gs = fig.add_gridspec(rows, n, left=0.01, right=1 - margin / fig.get_figwidth(),
                          top=1 - 0.2 / fig.get_figheight(), bottom=0.01, wspace=0.04, hspace=0.18)
    residual_im = None
    for j, (label, panel, is_method) in enumerate(columns):
        ax = fig.add_subplot(gs[0, j])
        ax.set_title(label, fontsize=7, pad=2)
        if isinstance(panel, Panel):
            image = decode_image(panel.image)
            _show(ax, image)
            _box(ax, view, image.shape[:2])
            _inset(ax, view, decode_image(panel.crop))
        else:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no result", ha="center", va="center", fontsize=6, color="#a00", transform=ax.transAxes)
        if rows == 2:
            ax2 = fig.add_subplot(gs[1, j])
            res = view.residuals.get(label) if is_method else None
            if res is None:
                ax2.set_axis_off()
                continue
            residual_im = _show(ax2, res, cmap=RESIDUAL_CMAP, vmin=0.0, vmax=view.residual_max)
            _box(ax2, view, res.shape)
            ax2.set_title(f"|{label} − GT|", fontsize=6, pad=2)
    if residual_im is not None:
        pos = gs[1, n - 1].get_position(fig)
        cax = fig.add_axes([pos.x1 + 0.08 / fig.get_figwidth(), pos.y0, 0.1 / fig.get_figwidth(), pos.height])
        bar = fig.colorbar(residual_im, cax=cax, extend="max")
        bar.ax.tick_params(labelsize=5, length=2, width=0.4)
        bar.set_label("DN", fontsize=5, labelpad=1)
        bar.outline.set_linewidth(0.4)
    png = out / f"{_safe(view.scene)}.png"
    pdf = out / f"{_safe(view.scene)}.pdf"
    fig.savefig(png, dpi=dpi, pil_kwargs={"compress_level": 3})
    fig.savefig(pdf, metadata={"Creator": "pansharp_iqa"})
    return [png, pdf]

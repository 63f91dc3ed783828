"""``--figures``: the comparison grid of each scene as publication figures (PNG at 300 dpi, PDF).

One figure per scene, ``<out>/<scene>.png`` and ``.pdf``: a column per image (the reference(s),
then every method, labelled with its name), the whole scene with the crop's box and the zoomed
crop as an inset in the corner away from the box; at reduced resolution a second row of residual
maps ``mean_b |fused - GT|`` on one colour scale with its colour bar. Matplotlib draws on its
non-interactive Agg canvas (no display, never touches pyplot's global state); the panels are
placed in one image (numpy), the labels, boxes and colour bar are matplotlib artists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from .display import RESIDUAL_CMAP, colourise
from .image_codec import decode_image
from .pair_display import Panel, SceneView

__all__ = ["FIGURE_DPI", "write_scene_figure"]

#: Resolution of the PNG figures (dots per inch).
FIGURE_DPI = 300
_PANEL_IN = 0.85  # smallest panel width, inches (256 display pixels at 300 dpi)
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


def _rgb(image: np.ndarray) -> np.ndarray:
    return np.repeat(image[:, :, None], 3, axis=2) if image.ndim == 2 else image


def _resized(image: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Nearest-neighbour resampling (scikit-image) of a uint8 image to ``shape``: pixels stay sharp."""
    if image.shape[:2] == shape:
        return image
    from skimage.transform import resize

    out = resize(image, (*shape, *image.shape[2:]), order=0, preserve_range=True, anti_aliasing=False)
    return np.asarray(out, dtype=np.uint8)


def _frame(ax: Any, x: float, y: float, w: float, h: float, **kwargs: Any) -> None:
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((x, y), w, h, fill=False, **kwargs))


def write_scene_figure(out_dir: str | Path, view: SceneView, *, dpi: int = FIGURE_DPI) -> list[Path]:
    """Write one scene's comparison figure as PNG (``dpi``) and PDF.

    The panels are laid out in one image (so the PDF embeds a single picture and the figure
    takes a fraction of a second); labels, boxes and the colour bar are matplotlib artists
    (vector text and lines in the PDF).

    Parameters
    ----------
    out_dir : path-like
        Folder (created) for ``<scene>.png`` and ``<scene>.pdf``.
    view : SceneView
        The scene's panels (:func:`~.pair_display.assemble_scene`).
    dpi : int
        PNG resolution (dots per inch). A display pixel is one PNG pixel (256-pixel panels are
        0.85 in wide at 300 dpi), smaller display images are enlarged to 0.85 in; the PDF embeds
        the panels at their display resolution.

    Returns
    -------
    list of Path
        The two files.

    Examples
    --------
    See ``tests/reports/test_figures.py``.
    """
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

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
    scale = max(_PANEL_IN / w, 1.0 / dpi)  # inches per mosaic pixel
    gap, rgap, label = max(2, round(0.04 * w)), max(2, round(0.04 * h)), round(0.14 / scale)
    mosaic = np.full((label + rows * h + (rows - 1) * rgap, n * w + (n - 1) * gap, 3), 255, np.uint8)
    ih, iw = round(0.44 * h), round(0.44 * w)
    # the inset goes to the corner farthest from the crop, so it never hides the box
    inset_right = col + side / 2 <= W / 2
    inset_low = row + side / 2 <= H / 2
    artists: list[tuple[str, tuple]] = []
    for j, (name, panel, is_method) in enumerate(columns):
        x0, y0 = j * (w + gap), label
        short = name if len(name) <= _LABEL_CHARS else name[: _LABEL_CHARS - 1] + "\u2026"
        artists.append(("text", (x0 + w / 2, label * 0.8, short)))
        if isinstance(panel, Panel):
            mosaic[y0 : y0 + h, x0 : x0 + w] = _rgb(decode_image(panel.image))
            ix = x0 + w - iw if inset_right else x0
            iy = y0 + h - ih if inset_low else y0
            mosaic[iy : iy + ih, ix : ix + iw] = _resized(_rgb(decode_image(panel.crop)), (ih, iw))
            artists += [("frame", (x0, y0, w, h)), ("box", (x0 + col * sx, y0 + row * sy, side * sx, side * sy)),
                        ("box", (ix, iy, iw, ih))]
        else:
            artists.append(("missing", (x0 + w / 2, y0 + h / 2)))
        res = view.residuals.get(name) if (is_method and rows == 2) else None
        if res is not None:
            y1 = y0 + h + rgap
            mosaic[y1 : y1 + h, x0 : x0 + w] = _resized(colourise(res, view.residual_max), (h, w))
            artists += [("frame", (x0, y1, w, h)), ("box", (x0 + col * sx, y1 + row * sy, side * sx, side * sy))]
    mh, mw = mosaic.shape[:2]
    bar_in = 0.75 if rows == 2 else 0.0
    fig = _figure(mw * scale + bar_in, mh * scale)
    ax = fig.add_axes((0.0, 0.0, mw * scale / fig.get_figwidth(), 1.0))
    ax.imshow(mosaic, extent=(0, mw, mh, 0), interpolation="none")  # the PDF embeds it as is
    ax.set_xlim(0, mw)
    ax.set_ylim(mh, 0)
    ax.set_axis_off()
    for kind, args in artists:
        if kind == "text":
            ax.text(args[0], args[1], args[2], ha="center", va="bottom", fontsize=6.5)
        elif kind == "missing":
            ax.text(*args, "no result", ha="center", va="center", fontsize=6, color="#a00")
        elif kind == "frame":
            _frame(ax, *args, ec="black", lw=0.4)
        else:
            _frame(ax, *args, ec=_BOX, lw=0.8)
    if rows == 2:
        fw, fh = fig.get_figwidth(), fig.get_figheight()
        cax = fig.add_axes((mw * scale / fw + 0.08 / fw, 0.08 * h * scale / fh, 0.1 / fw, 0.84 * h * scale / fh))
        mappable = ScalarMappable(norm=Normalize(0.0, view.residual_max), cmap=RESIDUAL_CMAP)
        bar = fig.colorbar(mappable, cax=cax, extend="max")
        bar.ax.tick_params(labelsize=5, length=2, width=0.4)
        bar.set_label("|fused \u2212 GT| (DN)", fontsize=5, labelpad=2)
        bar.outline.set_linewidth(0.4)
    png = out / f"{_safe(view.scene)}.png"
    pdf = out / f"{_safe(view.scene)}.pdf"
    import matplotlib
    from PIL import Image

    # PNG: the rendered canvas without its (opaque) alpha channel and a fast zlib level; the
    # mosaic is photographic, so stronger compression saves little and was most of the time
    fig.set_dpi(dpi)
    fig.canvas.draw()
    rgb = np.asarray(fig.canvas.buffer_rgba())[:, :, :3]
    Image.fromarray(rgb).save(png, dpi=(dpi, dpi), compress_level=1)
    with matplotlib.rc_context({"pdf.compression": 1}):
        fig.savefig(pdf, dpi=dpi, metadata={"Creator": "pansharp_iqa"})
    return [png, pdf]

"""``--figures``: the comparison grid of each scene as publication figures (PNG at 300 dpi, PDF).

One figure per scene, ``<out>/<scene>.png`` and ``.pdf``: a column per image (the reference(s),
then every method, labelled with its name), the whole scene with the crop's box and the zoomed
crop as an inset in the corner away from the box; at reduced resolution a second row of residual
maps ``mean_b |fused - GT|`` on one colour scale with its colour bar.

The layout is computed once, in pixels of the PNG, and drawn twice by two painters with the
same methods: :class:`RasterCanvas` (Pillow: panels pasted, lines and DejaVu Sans text drawn)
and :class:`~.pdf_page.PdfPage` (the report's JPEG panels embedded as they are, vector lines and
Helvetica text). Neither needs matplotlib's figure machinery, which took about 0.3 s a figure.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Protocol

import numpy as np

from .display import colourise
from .image_codec import encode_png
from .pair_display import Panel, SceneView
from .pdf_page import PdfPage, text_width

__all__ = ["FIGURE_DPI", "RasterCanvas", "write_scene_figure"]

#: Resolution of the PNG figures (dots per inch).
FIGURE_DPI = 300
_PANEL_IN = 0.85  # smallest panel width, inches (255 pixels at 300 dpi)
_LABEL_CHARS = 22
_BOX = "#ffd400"
_MISSING = "#aa0000"
_BAR_LABEL = "|fused \u2212 GT| (DN)"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


@functools.lru_cache(maxsize=8)
def _font(pixels: int):
    """DejaVu Sans (matplotlib's default font, shipped with it) at ``pixels`` pixels."""
    import matplotlib
    from PIL import ImageFont

    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"), pixels)


class Canvas(Protocol):
    """What the figure layout draws with; coordinates in the canvas's unit, sizes in points."""

    def jpeg_image(self, jpeg: bytes, x: float, y: float, w: float, h: float) -> None: ...

    def rgb_image(self, rgb: np.ndarray, x: float, y: float, w: float, h: float) -> None: ...

    def rectangle(self, x: float, y: float, w: float, h: float, *, stroke: str, line_width: float) -> None: ...

    def polygon(self, points: Sequence[tuple[float, float]], *, fill: str | None = None, stroke: str | None = None,
                line_width: float = 0.5) -> None: ...

    def line(self, x0: float, y0: float, x1: float, y1: float, *, line_width: float,
             stroke: str = "#000000") -> None: ...

    def text(self, text: str, x: float, y: float, *, size: float, anchor: str = "bottom-left",
             colour: str = "#000000", vertical: bool = False) -> None: ...


class RasterCanvas:
    """A white RGB image drawn with the :class:`~.pdf_page.PdfPage` methods, in pixels.

    Parameters
    ----------
    width, height : int
        Size (pixels).
    dpi : int
        Pixels per inch: line widths and text sizes are given in points (1/72 in).

    Examples
    --------
    >>> canvas = RasterCanvas(40, 20, dpi=72)
    >>> canvas.rectangle(0, 0, 40, 20, stroke="#000000", line_width=1)
    >>> canvas.pixels()[0, 5].tolist(), canvas.pixels()[10, 20].tolist()
    ([0, 0, 0], [255, 255, 255])
    """

    _ANCHORS: ClassVar[dict[str, str]] = {"bottom-left": "ls", "bottom-centre": "ms", "middle-left": "lm", "middle-centre": "mm"}

    def __init__(self, width: int, height: int, *, dpi: int) -> None:
        from PIL import Image, ImageDraw

        self._image = Image.new("RGB", (int(width), int(height)), "white")
        self._draw = ImageDraw.Draw(self._image)
        self._px = dpi / 72.0  # pixels per point

    def _width(self, points: float) -> int:
        return max(1, round(points * self._px))

    def _paste(self, picture, x: float, y: float, w: float, h: float) -> None:  # noqa: ANN001 - PIL image
        from PIL import Image

        size = (max(1, round(w)), max(1, round(h)))
        picture = picture if picture.mode == "RGB" else picture.convert("RGB")
        self._image.paste(picture if picture.size == size else picture.resize(size, Image.NEAREST), (round(x), round(y)))

    def jpeg_image(self, jpeg: bytes, x: float, y: float, w: float, h: float) -> None:
        """Paste a JPEG, resampled (nearest neighbour: pixels stay sharp) to the box ``(x, y, w, h)``."""
        from PIL import Image

        with Image.open(io.BytesIO(jpeg)) as picture:
            picture.load()
            self._paste(picture, x, y, w, h)

    def rgb_image(self, rgb: np.ndarray, x: float, y: float, w: float, h: float) -> None:
        """Paste a uint8 ``(rows, cols)`` grey or ``(rows, cols, 3)`` RGB array, resampled to the
        box ``(x, y, w, h)``."""
        from PIL import Image

        self._paste(Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8)), x, y, w, h)

    def rectangle(self, x: float, y: float, w: float, h: float, *, stroke: str, line_width: float) -> None:
        """Outline of the box ``(x, y, w, h)``, drawn inside it."""
        self._draw.rectangle((round(x), round(y), round(x + w) - 1, round(y + h) - 1), outline=stroke,
                             width=self._width(line_width))

    def polygon(self, points: Sequence[tuple[float, float]], *, fill: str | None = None, stroke: str | None = None,
                line_width: float = 0.5) -> None:
        """Filled and/or outlined closed polygon."""
        xy = [(round(px), round(py)) for px, py in points]
        if fill is not None:
            self._draw.polygon(xy, fill=fill)
        if stroke is not None:
            self._draw.line([*xy, xy[0]], fill=stroke, width=self._width(line_width))

    def line(self, x0: float, y0: float, x1: float, y1: float, *, line_width: float, stroke: str = "#000000") -> None:
        """Straight line."""
        self._draw.line((round(x0), round(y0), round(x1), round(y1)), fill=stroke, width=self._width(line_width))

    def text(self, text: str, x: float, y: float, *, size: float, anchor: str = "bottom-left",
             colour: str = "#000000", vertical: bool = False) -> None:
        """Text in DejaVu Sans, ``anchor`` as in :meth:`~.pdf_page.PdfPage.text` (vertical text:
        ``middle-centre`` only)."""
        font = _font(self._width(size))
        if not vertical:
            self._draw.text((x, y), text, fill=colour, font=font, anchor=self._ANCHORS[anchor])
            return
        if anchor != "middle-centre":
            raise ValueError("vertical text is placed by its centre")
        from PIL import Image, ImageDraw

        left, top, right, bottom = font.getbbox(text)
        strip = Image.new("L", (right - left + 2, bottom - top + 2), 0)
        ImageDraw.Draw(strip).text((1 - left, 1 - top), text, fill=255, font=font)
        strip = strip.rotate(90, expand=True)
        self._image.paste(colour, (round(x - strip.width / 2), round(y - strip.height / 2)), mask=strip)

    def pixels(self) -> np.ndarray:
        """The image, ``(height, width, 3)`` uint8."""
        return np.asarray(self._image)

    def save_png(self, path: str | Path, *, dpi: int) -> Path:
        """Write a PNG recording ``dpi`` (fast encoding: the panels are photographic, stronger
        compression saves little and costs most of the time)."""
        path = Path(path)
        path.write_bytes(encode_png(self.pixels(), dpi=dpi, fast=True))
        return path


def _ticks(vmax: float) -> list[tuple[float, str]]:
    """About five round colour-bar ticks in ``[0, vmax]`` (steps 1, 2, 2.5 or 5 times a power of
    ten) with their labels."""
    raw = vmax / 5.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    factor = next(f for f in (1.0, 2.0, 2.5, 5.0, 10.0) if f * magnitude >= raw * (1 - 1e-9))
    step = factor * magnitude
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if factor == 2.5 and step < 10 else 0)
    count = math.floor(vmax / step * (1 + 1e-9))
    return [(k * step, f"{k * step:.{decimals}f}") for k in range(count + 1)]


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where everything goes, in PNG pixels (``dpi`` per inch)."""

    dpi: int
    width: int
    height: int
    panel: tuple[int, int]  # (rows, cols) of a panel
    gap: int  # between columns
    row_gap: int
    label: int  # height of the label band
    inset: tuple[int, int]
    mosaic_width: int  # without the colour bar area
    rows: int


def _layout(view: SceneView, dpi: int) -> _Layout:
    h, w = view.display_shape
    k = max(1, math.ceil(_PANEL_IN * dpi / w - 1e-9))  # display pixels are enlarged k times, never shrunk
    ph, pw = h * k, w * k
    n = len(view.references) + len(view.methods)
    rows = 2 if view.residuals else 1
    gap, row_gap, label = max(2, round(0.04 * pw)), max(2, round(0.04 * ph)), round(0.14 * dpi)
    mosaic_width = n * pw + (n - 1) * gap
    bar = round(0.75 * dpi) if rows == 2 else 0
    return _Layout(dpi, mosaic_width + bar, label + rows * ph + (rows - 1) * row_gap, (ph, pw), gap, row_gap,
                   label, (round(0.44 * ph), round(0.44 * pw)), mosaic_width, rows)


def _draw(canvas: Canvas, view: SceneView, lay: _Layout, unit: float, residual_rgb: dict[str, np.ndarray]) -> None:
    """Draw the figure on ``canvas``; ``unit`` = canvas units per PNG pixel; ``residual_rgb`` =
    the methods' residual maps in colour."""
    ph, pw = lay.panel
    ih, iw = lay.inset
    H, W = view.full_shape
    row, col, side = view.crop
    sy, sx = ph / H, pw / W
    pt = lay.dpi / 72.0  # pixels per point

    def box(x: float, y: float, w: float, h: float, colour: str, width: float) -> None:
        canvas.rectangle(x * unit, y * unit, w * unit, h * unit, stroke=colour, line_width=width)

    def crop_box(x0: float, y0: float) -> None:
        box(x0 + col * sx, y0 + row * sy, side * sx, side * sy, _BOX, 0.8)

    # the inset goes to the corner farthest from the crop, so it never hides the box
    inset_right, inset_low = col + side / 2 <= W / 2, row + side / 2 <= H / 2
    columns: list[tuple[str, Panel | str, bool]] = [(p.label, p, False) for p in view.references]
    columns += [(m, view.panels[m], True) for m in view.methods]
    for j, (name, panel, is_method) in enumerate(columns):
        x0, y0 = j * (pw + lay.gap), lay.label
        short = name if len(name) <= _LABEL_CHARS else name[: _LABEL_CHARS - 1] + "\u2026"
        canvas.text(short, (x0 + pw / 2) * unit, 0.8 * lay.label * unit, size=6.5, anchor="bottom-centre")
        if isinstance(panel, Panel):
            canvas.jpeg_image(panel.image, x0 * unit, y0 * unit, pw * unit, ph * unit)
            ix, iy = (x0 + pw - iw if inset_right else x0), (y0 + ph - ih if inset_low else y0)
            canvas.jpeg_image(panel.crop, ix * unit, iy * unit, iw * unit, ih * unit)
            box(x0, y0, pw, ph, "#000000", 0.4)
            crop_box(x0, y0)
            box(ix, iy, iw, ih, _BOX, 0.8)
        else:
            canvas.text("no result", (x0 + pw / 2) * unit, (y0 + ph / 2) * unit, size=6, anchor="middle-centre",
                        colour=_MISSING)
        residual = residual_rgb.get(name) if (is_method and lay.rows == 2) else None
        if residual is not None:
            y1 = y0 + ph + lay.row_gap
            canvas.rgb_image(residual, x0 * unit, y1 * unit, pw * unit, ph * unit)
            box(x0, y1, pw, ph, "#000000", 0.4)
            crop_box(x0, y1)
    if lay.rows == 2:
        _colour_bar(canvas, view.residual_max, lay, unit, pt)


def _colour_bar(canvas: Canvas, vmax: float, lay: _Layout, unit: float, pt: float) -> None:
    """The residual scale beside the second row: ``[0, vmax]`` DN, an arrow for larger values."""
    ph = lay.panel[0]
    x = lay.mosaic_width + 0.08 * lay.dpi
    width = 0.1 * lay.dpi
    bottom, top = lay.height - 0.08 * ph, lay.height - 0.92 * ph
    extend = 0.05 * (bottom - top)
    ramp = colourise(np.linspace(vmax, 0.0, 256)[:, None], vmax)
    canvas.rgb_image(ramp, x * unit, top * unit, width * unit, (bottom - top) * unit)
    arrow = [(x, top), (x + width, top), (x + width / 2, top - extend)]
    canvas.polygon([(px * unit, py * unit) for px, py in arrow], fill="#{:02x}{:02x}{:02x}".format(*ramp[0, 0]))
    outline = [(x, bottom), (x, top), (x + width / 2, top - extend), (x + width, top), (x + width, bottom)]
    canvas.polygon([(px * unit, py * unit) for px, py in outline], stroke="#000000", line_width=0.4)
    widest = 0.0
    for value, label in _ticks(vmax):
        y = bottom - value / vmax * (bottom - top)
        canvas.line((x + width) * unit, y * unit, (x + width + 2 * pt) * unit, y * unit, line_width=0.4)
        canvas.text(label, (x + width + 3.5 * pt) * unit, y * unit, size=5, anchor="middle-left")
        widest = max(widest, text_width(label, 5) * pt)
    label_x = x + width + 3.5 * pt + widest + 5 * pt
    canvas.text(_BAR_LABEL, label_x * unit, (top + bottom) / 2 * unit, size=5, anchor="middle-centre", vertical=True)


def write_scene_figure(out_dir: str | Path, view: SceneView, *, dpi: int = FIGURE_DPI) -> list[Path]:
    """Write one scene's comparison figure as PNG (``dpi``) and PDF.

    Parameters
    ----------
    out_dir : path-like
        Folder (created) for ``<scene>.png`` and ``<scene>.pdf``.
    view : SceneView
        The scene's panels (:func:`~.pair_display.assemble_scene`).
    dpi : int
        PNG resolution (dots per inch). A display pixel is a whole number of PNG pixels, panels at
        least 0.85 in wide (256-pixel panels: one PNG pixel each at 300 dpi); the PDF has the same
        layout, with the panels' JPEGs embedded at their display resolution and vector text.

    Returns
    -------
    list of Path
        The two files.

    References
    ----------
    L. Wald, T. Ranchin, M. Mangolini, "Fusion of satellite images of different spatial
    resolutions: assessing the quality of resulting images", PE&RS 63(6):691-699, 1997 (the
    reference and residual panels of reduced-resolution comparisons).

    Examples
    --------
    See ``tests/reports/test_figures.py``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lay = _layout(view, dpi)
    residual_rgb = {m: colourise(r, view.residual_max) for m, r in view.residuals.items()}
    raster = RasterCanvas(lay.width, lay.height, dpi=dpi)
    _draw(raster, view, lay, 1.0, residual_rgb)
    png = raster.save_png(out / f"{_safe(view.scene)}.png", dpi=dpi)
    page = PdfPage(lay.width * 72.0 / dpi, lay.height * 72.0 / dpi)
    _draw(page, view, lay, 72.0 / dpi, residual_rgb)
    pdf = page.save(out / f"{_safe(view.scene)}.pdf")
    return [png, pdf]

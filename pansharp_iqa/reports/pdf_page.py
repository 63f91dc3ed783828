"""A one-page PDF writer for the figures: pictures, vector lines and text, nothing else.

The figures' pictures are the report's JPEG panels, which a PDF embeds as they are (``DCTDecode``:
no decoding, no re-encoding, no second loss), and small RGB maps (Flate). Lines and text stay
vector: text is set in the standard Helvetica font (no font embedded; every PDF reader has it),
so labels stay sharp and searchable. Characters outside Windows-1252 (which Helvetica's
standard encoding covers) are shown as ``?``.

Coordinates are in points (1/72 in) from the page's top-left corner, y downwards, like the
raster version of the same figure; the writer flips them to PDF's bottom-up convention.

References
----------
Adobe, *PDF Reference, sixth edition (PDF 1.7)*, 2006 (ISO 32000-1:2008): sections 3.4 (file
structure), 4.4 (paths), 4.8 (images), 5.3 (text objects), 5.5.1 (standard Type 1 fonts).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .image_codec import jpeg_shape

__all__ = ["PdfPage", "text_width"]

_AVERAGE_WIDTH = 556  # Helvetica's width of digits and most lower-case letters (1/1000 em)


@functools.lru_cache(maxsize=1)
def _helvetica_widths() -> dict[int, int]:
    """Advance widths (1/1000 em) of Helvetica's printable ASCII, from matplotlib's copy of the
    Adobe font metrics file."""
    import matplotlib

    widths: dict[int, int] = {}
    path = Path(matplotlib.get_data_path()) / "fonts" / "pdfcorefonts" / "Helvetica.afm"
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line.startswith("C "):
            continue
        fields = dict(f.strip().split(" ", 1) for f in line.split(";") if f.strip().count(" ") >= 1)
        code, name = int(fields["C"]), fields.get("N", "")
        if 32 <= code <= 126:
            widths[code] = int(float(fields["WX"]))
        if name == "quotesingle":  # Windows-1252 puts ' and ` where the standard encoding has quotes
            widths[39] = int(float(fields["WX"]))
        elif name == "grave":
            widths[96] = int(float(fields["WX"]))
    return widths


def _encode(text: str) -> bytes:
    return text.replace("\u2212", "-").encode("cp1252", errors="replace")  # minus sign: a hyphen


def text_width(text: str, size: float) -> float:
    """Width of ``text`` set in Helvetica at ``size`` points, in points.

    Examples
    --------
    >>> round(text_width("GT", 10.0), 2)  # Helvetica: G 778, T 611 thousandths of an em
    13.89
    """
    widths = _helvetica_widths()
    return sum(widths.get(c, _AVERAGE_WIDTH) for c in _encode(text)) * size / 1000.0


def _string(text: str) -> bytes:
    raw = _encode(text)
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _number(value: float) -> bytes:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return (text if text not in ("", "-0") else "0").encode()


def _colour(rgb: str | Sequence[float]) -> bytes:
    """``"#rrggbb"`` or ``(r, g, b)`` in [0, 1] as three PDF numbers."""
    if isinstance(rgb, str):
        rgb = [int(rgb[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    return b" ".join(_number(c) for c in rgb)


class PdfPage:
    """One page drawn in order (later items on top), written with :meth:`save`.

    Parameters
    ----------
    width, height : float
        Page size (points).

    Examples
    --------
    >>> import io, numpy as np
    >>> page = PdfPage(100, 50)
    >>> page.rgb_image(np.zeros((2, 2, 3), np.uint8), 10, 10, 20, 20)
    >>> page.rectangle(10, 10, 20, 20, stroke="#ffd400", line_width=0.8)
    >>> page.text("GT", 20, 8, size=6.5, anchor="bottom-centre")
    >>> page.to_bytes()[:8]
    b'%PDF-1.4'
    """

    def __init__(self, width: float, height: float) -> None:
        self.width, self.height = float(width), float(height)
        self._ops: list[bytes] = []
        self._images: list[bytes] = []  # finished image objects (dictionary + stream)

    def _y(self, y: float) -> float:
        return self.height - y

    def _place(self, image_object: bytes, x: float, y: float, w: float, h: float) -> None:
        self._images.append(image_object)
        name = f"/Im{len(self._images)}".encode()
        self._ops.append(b"q %b 0 0 %b %b %b cm %b Do Q" % (
            _number(w), _number(h), _number(x), _number(self._y(y + h)), name))

    def jpeg_image(self, jpeg: bytes, x: float, y: float, w: float, h: float) -> None:
        """Place a grey-level or RGB JPEG, as it is, in the box ``(x, y, w, h)``."""
        rows, cols, channels = jpeg_shape(jpeg)
        if channels not in (1, 3):
            raise ValueError(f"JPEG with {channels} channels: only grey-level and RGB are placed")
        space = b"/DeviceGray" if channels == 1 else b"/DeviceRGB"
        header = b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %b /BitsPerComponent 8 " \
                 b"/Filter /DCTDecode /Length %d >>" % (cols, rows, space, len(jpeg))
        self._place(header + b"\nstream\n" + jpeg + b"\nendstream", x, y, w, h)

    def rgb_image(self, rgb: np.ndarray, x: float, y: float, w: float, h: float) -> None:
        """Place an ``(rows, cols, 3)`` uint8 RGB array (Flate, lossless) in the box ``(x, y, w, h)``."""
        rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
        data = zlib.compress(rgb.tobytes(), 1)
        header = b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB " \
                 b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>" % (rgb.shape[1], rgb.shape[0], len(data))
        self._place(header + b"\nstream\n" + data + b"\nendstream", x, y, w, h)

    def rectangle(self, x: float, y: float, w: float, h: float, *, stroke: str, line_width: float) -> None:
        """Stroke the outline of the box ``(x, y, w, h)``: ``line_width`` points, colour ``"#rrggbb"``."""
        self._ops.append(b"q %b RG %b w %b %b %b %b re S Q" % (
            _colour(stroke), _number(line_width), _number(x), _number(self._y(y + h)), _number(w), _number(h)))

    def polygon(self, points: Sequence[tuple[float, float]], *, fill: str | Sequence[float] | None = None,
                stroke: str | None = None, line_width: float = 0.5) -> None:
        """Fill and/or stroke the closed polygon through ``points``."""
        path = b" ".join(b"%b %b %b" % (_number(px), _number(self._y(py)), b"l" if i else b"m")
                         for i, (px, py) in enumerate(points))
        paint = b"B" if fill is not None and stroke else (b"f" if fill is not None else b"S")
        style = (b"%b rg " % _colour(fill) if fill is not None else b"") + \
                (b"%b RG %b w " % (_colour(stroke), _number(line_width)) if stroke else b"")
        self._ops.append(b"q " + style + path + b" h " + paint + b" Q")

    def line(self, x0: float, y0: float, x1: float, y1: float, *, line_width: float, stroke: str = "#000000") -> None:
        """Stroke a straight line."""
        self._ops.append(b"q %b RG %b w %b %b m %b %b l S Q" % (
            _colour(stroke), _number(line_width), _number(x0), _number(self._y(y0)), _number(x1), _number(self._y(y1))))

    def text(self, text: str, x: float, y: float, *, size: float, anchor: str = "bottom-left",
             colour: str = "#000000", vertical: bool = False) -> None:
        """Set ``text`` in Helvetica at ``size`` points.

        ``anchor`` = ``"<bottom|middle>-<left|centre>"``: which point of the text's box lies at
        ``(x, y)`` (bottom = the baseline). ``vertical`` turns the text 90 degrees
        anticlockwise (read bottom to top) about that point.
        """
        vert, horiz = anchor.split("-")
        dx = {"left": 0.0, "centre": -0.5}[horiz] * text_width(text, size)
        dy = {"bottom": 0.0, "middle": -0.35 * size}[vert]  # about half Helvetica's cap height
        if vertical:  # along the rotated axes: +x is up the page, +y is leftwards
            matrix = (0.0, 1.0, -1.0, 0.0, x - dy, self._y(y) + dx)
        else:
            matrix = (1.0, 0.0, 0.0, 1.0, x + dx, self._y(y) + dy)
        self._ops.append(b"BT /F1 %b Tf %b rg %b Tm %b Tj ET" % (
            _number(size), _colour(colour), b" ".join(_number(v) for v in matrix), _string(text)))

    def to_bytes(self, *, creator: str = "pansharp_iqa") -> bytes:
        """The whole file (PDF 1.4; deterministic: no dates)."""
        content = zlib.compress(b"\n".join(self._ops), 6)
        xobjects = b" ".join(b"/Im%d %d 0 R" % (i + 1, 7 + i) for i in range(len(self._images)))
        objects = [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %b %b] /Contents 5 0 R "
            b"/Resources << /Font << /F1 4 0 R >> /XObject << %b >> >> >>"
            % (_number(self.width), _number(self.height), xobjects),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Creator %b /Producer %b >>" % (_string(creator), _string(creator)),
            *self._images,
        ]
        out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, body in enumerate(objects, start=1):
            offsets.append(len(out))
            out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
        out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
        return bytes(out)

    def save(self, path: str | Path, *, creator: str = "pansharp_iqa") -> Path:
        """Write the file; returns its path."""
        path = Path(path)
        path.write_bytes(self.to_bytes(creator=creator))
        return path

"""``--figures``: one PNG (300 dpi) and one PDF per scene, from one layout drawn by two painters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from pansharp_iqa import interp23tap
from pansharp_iqa.reports.display import rgb_bands
from pansharp_iqa.reports.figures import FIGURE_DPI, write_scene_figure
from pansharp_iqa.reports.pair_display import assemble_scene, make_pair_display

from report_helpers import Arrays


def _png(path):
    from PIL import Image

    with Image.open(path) as img:
        return np.asarray(img.convert("RGB")), img.info.get("dpi")


def test_reduced_and_full_resolution_figures(tmp_path):
    rng = np.random.default_rng(0)
    rgb = rgb_bands(4, ["Blue", "Green", "Red", "NIR"])
    gt = 300 + 1000 * ndimage.zoom(rng.random((16, 16, 4)), (8, 8, 1), order=1)
    displays = {m: make_pair_display(Arrays(fused=gt + rng.normal(0, s, gt.shape), gt=gt), method=m,
                                     resolution="reduced", ratio=4, rgb=rgb)
                for m, s in (("a", 5.0), ("b", 50.0))}
    view = assemble_scene("scene/1", ["a", "b", "c"], {**displays, "c": "no display: test"})
    png, pdf = write_scene_figure(tmp_path / "fig", view)
    assert png.name == "scene_1.png" and pdf.name == "scene_1.pdf"
    pixels, dpi = _png(png)
    assert dpi is not None and round(dpi[0]) == FIGURE_DPI
    assert pixels.std() > 20  # not blank
    # 4 columns (GT, a, b, c) of panels at least 0.85 in wide at 300 dpi
    assert pixels.shape[1] >= 4 * 0.85 * FIGURE_DPI
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 10_000

    ms = gt[2::4, 2::4]
    pan = gt.mean(axis=2)
    full = make_pair_display(Arrays(fused=interp23tap(ms, 4), ms=ms, pan=pan), method="EXP", resolution="full",
                             ratio=4, rgb=rgb)
    png2, _ = write_scene_figure(tmp_path / "fig", assemble_scene("s2", ["EXP"], {"EXP": full}))
    pixels2, _ = _png(png2)
    assert pixels2.std() > 20 and pixels2.shape[0] < pixels.shape[0]  # one row: no residuals


# ----------------------------------------------------------------------------- the pieces
def _view_reduced(names=("a", "b")):
    rng = np.random.default_rng(1)
    rgb = rgb_bands(4, ["Blue", "Green", "Red", "NIR"])
    gt = 300 + 1000 * ndimage.zoom(rng.random((32, 32, 4)), (8, 8, 1), order=1)  # 256 x 256: k = 1
    displays = {m: make_pair_display(Arrays(fused=gt + rng.normal(0, 10.0 * (i + 1), gt.shape), gt=gt), method=m,
                                     resolution="reduced", ratio=4, rgb=rgb)
                for i, m in enumerate(names)}
    return assemble_scene("s", list(names), displays)


def _pdf_objects(data: bytes) -> dict[int, bytes]:
    """Objects of a PDF by number, found through its cross-reference table (checks the offsets)."""
    import re

    start = int(data[data.rindex(b"startxref") + 9 :].split()[0])
    assert data[start : start + 4] == b"xref"
    lines = data[start:].split(b"\n")
    count = int(lines[1].split()[1])
    objects = {}
    for number in range(1, count):
        offset = int(lines[2 + number].split()[0])
        assert data[offset:].startswith(b"%d 0 obj" % number), number
        end = data.index(b"endobj", offset)
        objects[number] = data[offset:end]
    assert re.search(rb"/Size %d\b" % count, data[start:])
    return objects


def test_pdf_embeds_the_report_jpegs_as_they_are_and_vector_text(tmp_path):
    import zlib

    view = _view_reduced(("a", "odd (name) \\ x"))
    png, pdf = write_scene_figure(tmp_path, view)
    data = pdf.read_bytes()
    objects = _pdf_objects(data)
    images = [o for o in objects.values() if b"/Subtype /Image" in o]
    # 3 columns x (whole image + inset crop), 2 residual maps, the colour-bar ramp
    assert len(images) == 3 * 2 + 2 + 1
    for panel in [*view.references, *(view.panels[m] for m in view.methods)]:
        assert panel.image in data and panel.crop in data  # no decoding, no second JPEG loss
    content = zlib.decompress(next(o for o in objects.values() if b"/FlateDecode >>" in o and b"/Length" in o
                                   and b"/Subtype" not in o).split(b"stream\n", 1)[1].rsplit(b"\nendstream", 1)[0])
    assert b"(GT) Tj" in content and b"(a) Tj" in content
    assert b"(odd \\(name\\) \\\\ x) Tj" in content  # PDF string escapes
    assert b"0 1 -1 0" in content  # the colour bar's label runs bottom to top
    # the page has the PNG's size at its resolution
    pixels, dpi = _png(png)
    media = [float(v) for v in data.split(b"/MediaBox [", 1)[1].split(b"]", 1)[0].split()]
    assert media[2] == pytest.approx(pixels.shape[1] * 72 / FIGURE_DPI, abs=1e-3)
    assert media[3] == pytest.approx(pixels.shape[0] * 72 / FIGURE_DPI, abs=1e-3)


def test_png_shows_the_panels_pixel_for_pixel(tmp_path):
    from pansharp_iqa.reports.image_codec import decode_image

    view = _view_reduced()
    png, _ = write_scene_figure(tmp_path, view)
    pixels, _ = _png(png)
    gt = decode_image(view.references[0].image)
    assert gt.shape == (256, 256, 3)
    label = round(0.14 * FIGURE_DPI)
    shown = pixels[label : label + 256, :256].astype(int)
    # away from the frame, the crop box and the inset, the panel is the display image unchanged
    row, col, side = view.crop
    mask = np.ones((256, 256), bool)
    mask[:3], mask[-3:], mask[:, :3], mask[:, -3:] = False, False, False, False
    mask[max(0, row - 4) : row + side + 4, max(0, col - 4) : col + side + 4] = False
    inset = round(0.44 * 256)
    low, right = row + side / 2 <= 128, col + side / 2 <= 128
    rows = slice(256 - inset - 4, 256) if low else slice(0, inset + 4)
    cols = slice(256 - inset - 4, 256) if right else slice(0, inset + 4)
    mask[rows, cols] = False
    assert mask.sum() > 20_000
    np.testing.assert_array_equal(shown[mask], gt[mask])
    # the crop box is drawn in the box colour on the crop's outline
    assert tuple(pixels[label + row + 1, col + side // 2]) == (0xFF, 0xD4, 0x00)


def test_colour_bar_ticks():
    from pansharp_iqa.reports.figures import _ticks

    assert [t for _, t in _ticks(21.4)] == ["0", "5", "10", "15", "20"]
    assert [t for _, t in _ticks(0.9)] == ["0.0", "0.2", "0.4", "0.6", "0.8"]
    assert [t for _, t in _ticks(12.5)] == ["0.0", "2.5", "5.0", "7.5", "10.0", "12.5"]
    assert [t for _, t in _ticks(125.0)] == ["0", "25", "50", "75", "100", "125"]
    assert [v for v, _ in _ticks(1.0)] == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])


def test_jpeg_shape_reads_the_frame_header():
    from pansharp_iqa.reports.image_codec import encode_jpeg, encode_png, jpeg_shape

    assert jpeg_shape(encode_jpeg(np.zeros((5, 7, 3), np.uint8))) == (5, 7, 3)
    assert jpeg_shape(encode_jpeg(np.zeros((9, 4), np.uint8))) == (9, 4, 1)
    with pytest.raises(ValueError, match="not JPEG"):
        jpeg_shape(encode_png(np.zeros((2, 2), np.uint8)))
    with pytest.raises(ValueError, match="corrupt"):
        jpeg_shape(b"\xff\xd8\x00\x00\x00\x00")


def test_fast_png_is_lossless_and_records_its_resolution():
    from PIL import Image
    import io

    from pansharp_iqa.reports.image_codec import encode_png

    image = np.random.default_rng(2).integers(0, 256, (31, 17, 3), dtype=np.uint8)
    with Image.open(io.BytesIO(encode_png(image, dpi=300, fast=True))) as img:
        assert img.mode == "RGB" and [round(v) for v in img.info["dpi"]] == [300, 300]
        np.testing.assert_array_equal(np.asarray(img), image)


@pytest.mark.parametrize("shape", [(1, 1), (5, 9), (40, 33, 3), (1, 7, 3)])
@pytest.mark.parametrize("isal", [True, False])
def test_fast_png_is_read_back_by_libpng_with_valid_checksums(shape, isal, monkeypatch):
    """The fast writer's files decode to the same pixels in OpenCV (libpng: a bad CRC or stream
    is an error) and Pillow, with ISA-L's deflate and with zlib's."""
    import builtins
    import io
    import struct
    import zlib

    import cv2
    from PIL import Image

    from pansharp_iqa.reports.image_codec import encode_png

    if not isal:
        real_import = builtins.__import__

        def no_isal(name, *args, **kwargs):
            if name == "isal" or name.startswith("isal."):
                raise ImportError(name)
            return real_import(name, *args, **kwargs)

        monkeypatch.setattr(builtins, "__import__", no_isal)
    image = np.random.default_rng(len(shape)).integers(0, 256, shape, dtype=np.uint8)
    image[: shape[0] // 2] = 7  # runs, and rows equal to the one above
    data = encode_png(image, dpi=150, fast=True)
    pos, kinds = 8, []
    while pos < len(data):  # every chunk's CRC-32 covers its type and data
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(kind + body)
        kinds.append(kind)
        pos += 12 + length
    assert kinds == [b"IHDR", b"pHYs", b"IDAT", b"IEND"]
    libpng = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert libpng is not None
    np.testing.assert_array_equal(libpng[:, :, ::-1] if libpng.ndim == 3 else libpng, image)
    with Image.open(io.BytesIO(data)) as img:
        np.testing.assert_array_equal(np.asarray(img), image)
        assert [round(v) for v in img.info["dpi"]] == [150, 150]


def test_jpeg_quality_outside_its_scale_is_refused():
    from pansharp_iqa.reports.image_codec import encode_jpeg

    with pytest.raises(ValueError, match="quality 0 outside 1..100"):
        encode_jpeg(np.zeros((4, 4, 3), np.uint8), quality=0)

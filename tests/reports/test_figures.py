"""``--figures``: one PNG (300 dpi) and one PDF per scene, drawn with matplotlib."""

from __future__ import annotations

import numpy as np
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

"""``--figures``: a scene's comparison grid as a matplotlib figure, saved as PNG (300 dpi) and PDF."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from pansharp_iqa import interp23tap
from pansharp_iqa.reports import comparison_figure, scene_view
from pansharp_iqa.reports.display import rgb_bands
from pansharp_iqa.reports.figures import FIGURE_DPI, write_scene_figure
from pansharp_iqa.reports.image_codec import decode_image
from pansharp_iqa.reports.pair_display import assemble_scene, make_pair_display
from report_helpers import Arrays

BANDS = ["Blue", "Green", "Red", "NIR"]


def _png(path):
    from PIL import Image

    with Image.open(path) as img:
        return np.asarray(img.convert("RGB")), img.info.get("dpi")


def _gt(seed: int = 0, blocks: int = 16) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 300 + 1000 * ndimage.zoom(rng.random((blocks, blocks, 4)), (8, 8, 1), order=1)


def test_reduced_resolution_figure_holds_every_panel_its_crop_and_one_colour_scale(tmp_path):
    rng = np.random.default_rng(0)
    gt = _gt()
    displays = {m: make_pair_display(Arrays(fused=gt + rng.normal(0, s, gt.shape), gt=gt), method=m,
                                     resolution="reduced", ratio=4, rgb=rgb_bands(4, BANDS))
                for m, s in (("a", 5.0), ("b", 50.0))}
    view = assemble_scene("scene/1", ["a", "b", "c"], {**displays, "c": "no display: test"})
    fig = comparison_figure(view)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:4] == ["GT", "a", "b", "c"]
    panels = fig.axes[:4]
    # each panel shows the report's image, and the zoomed crop as an inset
    for ax, panel in zip(panels[:3], [view.references[0], view.panels["a"], view.panels["b"]], strict=True):
        np.testing.assert_array_equal(ax.images[0].get_array(), decode_image(panel.image))
        (inset,) = ax.child_axes
        np.testing.assert_array_equal(inset.images[0].get_array(), decode_image(panel.crop))
    assert "no result" in [t.get_text() for t in panels[3].texts]
    # residual maps of a and b (c failed), on one scale, with one colour bar
    residuals = [ax for ax in fig.axes[4:] if ax.images and ax.images[0].get_cmap().name == "magma"]
    assert len(residuals) == 2
    assert {ax.images[0].get_clim() for ax in residuals} == {(0.0, view.residual_max)}
    assert len(fig.axes) == 4 + 2 + 1 and "GT" in fig.axes[-1].get_ylabel()  # the one colour bar, last
    png, pdf = write_scene_figure(tmp_path / "fig", view)
    assert png.name == "scene_1.png" and pdf.name == "scene_1.pdf"
    pixels, dpi = _png(png)
    assert dpi is not None and round(dpi[0]) == FIGURE_DPI
    assert pixels.std() > 20 and pixels.shape[1] >= 4 * FIGURE_DPI  # four panels over an inch wide each
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_full_resolution_figure_has_one_row_and_the_pdf_is_reproducible(tmp_path):
    gt = _gt(1)
    ms, pan = gt[2::4, 2::4], gt.mean(axis=2)
    view = scene_view("s2", {"EXP": interp23tap(ms, 4)}, ms=ms, pan=pan, ratio=4, band_names=BANDS)
    fig = comparison_figure(view)
    assert [ax.get_title() for ax in fig.axes] == ["MS (EXP)", "PAN", "EXP"]  # no residual row, no colour bar
    first = write_scene_figure(tmp_path / "one", view)
    second = write_scene_figure(tmp_path / "two", view)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_the_figure_can_be_restyled_before_it_is_saved(tmp_path):
    gt = _gt(2)
    fig = comparison_figure(scene_view("s3", {"odd (name) \u00e9": gt + 3.0}, gt=gt), panel_inches=2.0)
    assert fig.get_size_inches()[0] > 4.0  # two panels of 2 in
    fig.axes[1].set_title("renamed", fontsize=12)
    fig.savefig(tmp_path / "restyled.png", dpi=100)
    assert fig.axes[1].get_title() == "renamed" and (tmp_path / "restyled.png").stat().st_size > 1000


def test_long_method_names_are_shortened_in_the_figure_only():
    gt = _gt(3)
    view = scene_view("s4", {"m" * 40: gt + 1.0}, gt=gt)
    assert comparison_figure(view).axes[1].get_title() == "m" * 21 + "\u2026"
    assert view.methods == ["m" * 40]

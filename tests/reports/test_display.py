"""Display helpers: band choice, display size, resampling, stretch, crop, residual, colour map,
image encoding."""

from __future__ import annotations

import numpy as np
import pytest

from pansharp_iqa.reports.display import (
    apply_stretch,
    choose_crop,
    colourise,
    crop_side,
    display_shape,
    downsample,
    residual_map,
    rgb_bands,
    stretch_limits,
)
from pansharp_iqa.reports.image_codec import data_uri, decode_image, encode_jpeg
from pansharp_iqa.sensors import get_sensor, list_sensors

# sensors without bands named Red, Green and Blue: any band count (none, PRISMA), ESA band names (S2-10:
# B2, B3, B4 = blue, green, red), no visible band (S2-20, S2-60)
NO_RGB_NAMES = {"none", "PRISMA", "S2-10", "S2-20", "S2-60"}


@pytest.mark.parametrize("name", [s for s in list_sensors() if s not in NO_RGB_NAMES])
def test_every_registered_sensor_gets_true_colour_from_its_band_names(name):
    sensor = get_sensor(name)
    choice = rgb_bands(sensor.n_bands, sensor.band_names, sensor=name)
    assert choice.true_colour
    assert [sensor.band_names[i].lower() for i in choice.indices] == ["red", "green", "blue"]


def test_band_subsets_and_dataset_band_names():
    four = get_sensor("WV3[4band]")
    assert rgb_bands(4, four.band_names).indices == (2, 1, 0)
    assert rgb_bands(3, ["blue", "GREEN", "Red"]).indices == (2, 1, 0)


@pytest.mark.parametrize(("n", "indices"),
                         [(4, (2, 1, 0)), (8, (4, 2, 1)), (3, (0, 1, 2)), (6, (2, 1, 0)), (1, (0,)), (2, (0,))])
def test_unknown_band_order_falls_back_and_says_so(n, indices):
    choice = rgb_bands(n, None, sensor="none")
    assert choice.indices == indices and not choice.true_colour
    assert "unknown" in choice.note and "'none'" in choice.note
    named = rgb_bands(n, [f"b{i}" for i in range(n)])
    assert named.indices == indices and "name no Red" in named.note


def test_display_shape_keeps_aspect_and_never_upsamples():
    assert display_shape((1024, 512)) == (256, 128)
    assert display_shape((100, 60)) == (100, 60)
    assert display_shape((3000, 1000), 300) == (300, 100)


def test_downsample_block_means_and_generic_resize():
    img = np.arange(16.0).reshape(4, 4)
    assert downsample(img, (2, 2)).tolist() == [[2.5, 4.5], [10.5, 12.5]]  # exact 2x2 block means
    out = downsample(np.ones((10, 7, 3)) * 5, (4, 3))
    assert out.shape == (4, 3, 3) and np.allclose(out, 5)
    ramp = np.tile(np.linspace(0, 100, 90), (90, 1))
    small = downsample(ramp, (40, 40))
    assert small.shape == (40, 40) and np.all(np.diff(small[20]) > 0)  # a ramp stays a ramp
    same = np.random.default_rng(0).random((5, 5, 2))
    assert np.array_equal(downsample(same, (5, 5)), same.astype(np.float32))


def test_stretch_limits_and_apply():
    ref = np.stack([np.arange(101.0), 2 * np.arange(101.0), np.full(101, 7.0)], axis=-1).reshape(101, 1, 3)
    lims = stretch_limits(ref)
    assert lims.tolist() == [[1.0, 99.0], [2.0, 198.0], [7.0, 8.0]]  # constant channel: high = low + 1
    out = apply_stretch(np.array([[[1.0, 2.0, 7.0], [50.0, 100.0, 8.0], [200.0, 500.0, 0.0]]]), lims)
    assert out.dtype == np.uint8
    assert out[0].tolist() == [[0, 0, 0], [128, 128, 255], [255, 255, 0]]


def test_stretch_of_a_large_image_uses_a_regular_sample():
    big = np.random.default_rng(0).normal(1000, 100, (1000, 1000))
    lims = stretch_limits(big)
    exact = np.percentile(big, [1, 99])
    assert lims[0] == pytest.approx(exact, rel=0.02)


def test_crop_side_and_position_at_display_scale():
    assert [crop_side(s) for s in ((256, 256), (4000, 3000), (40, 40), (20, 30))] == [64, 96, 32, 20]
    full = np.zeros((512, 512))
    full[300:364, 96:160] = (np.indices((64, 64)) // 16).sum(0) % 2 * 100  # the only structure (16-pixel squares)
    lum = downsample(full, (256, 256))
    row, col, side = choose_crop(lum, (512, 512), 64)
    overlap = max(0, min(row + side, 364) - max(row, 300)) * max(0, min(col + side, 160) - max(col, 96))
    assert side == 64 and overlap >= 0.5 * 64 * 64  # the crop shows the structure, not the flat rest
    assert choose_crop(np.zeros((16, 16)), (16, 16), 16) == (0, 0, 16)


def test_residual_map_by_hand():
    fused = np.zeros((1, 2, 2))
    ref = np.array([[[1.0, -3.0], [2.0, 2.0]]])
    assert residual_map(fused, ref).tolist() == [[2.0, 2.0]]


def test_residual_map_at_display_size_averages_each_cell():
    rng = np.random.default_rng(4)
    fused, ref = rng.normal(size=(4, 6, 3)), rng.normal(size=(4, 6, 3))
    per_pixel = np.abs(fused - ref).mean(axis=2)
    cells = residual_map(fused, ref, (2, 3))
    expected = per_pixel.reshape(2, 2, 3, 2).mean(axis=(1, 3))
    assert cells.shape == (2, 3) and np.allclose(cells, expected, rtol=1e-6)
    odd = residual_map(fused, ref, (3, 4))  # non-integer factors: resampled per-pixel map
    assert np.allclose(odd, downsample(per_pixel, (3, 4)), rtol=1e-6)


def test_colourise_uses_one_scale_and_saturates():
    import matplotlib

    rgb = colourise(np.array([[0.0, 5.0, 10.0, 50.0]]), 10.0, cmap="viridis")
    lut = (matplotlib.colormaps["viridis"]([0.0, 1.0])[:, :3] * 255).round()
    assert rgb[0, 0].tolist() == lut[0].tolist() and rgb[0, 2].tolist() == lut[1].tolist()
    assert rgb[0, 3].tolist() == rgb[0, 2].tolist()  # above the scale: top colour
    assert rgb[0, 1].tolist() not in (rgb[0, 0].tolist(), rgb[0, 2].tolist())


def test_image_codec_round_trips():
    grey = np.tile(np.arange(0, 256, 4, dtype=np.uint8), (8, 1))
    assert np.abs(decode_image(encode_jpeg(grey, quality=100)).astype(int) - grey).max() <= 2
    rgb = np.dstack([grey, grey[:, ::-1], np.full_like(grey, 128)])
    back = decode_image(encode_jpeg(rgb, quality=95))
    assert back.shape == rgb.shape and np.abs(back.astype(int) - rgb).mean() < 4
    assert data_uri(encode_jpeg(rgb)).startswith("data:image/jpeg;base64,")
    with pytest.raises(ValueError, match="uint8"):
        encode_jpeg(grey.astype(np.float32))
    with pytest.raises(ValueError, match="quality 0 outside 1..100"):
        encode_jpeg(grey, quality=0)

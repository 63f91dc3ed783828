"""The pancollection-* presets: their settings (what the benchmark's MATLAB code fixes), their numbers
on PanCollection-shaped files built from a real scene against independently derived values, the
published-hash rule (a match needs no flag; other data is refused unless forced, and then the card
says so), and the dataset.toml / command-line entry points."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import correlate2d
from skimage.metrics import peak_signal_noise_ratio

import pansharp_iqa as pi
from pansharp_iqa import presets
from pansharp_iqa.cli.parser import build_parser
from pansharp_iqa.indexes.catalog import ChunkContext
from pansharp_iqa.indexes.reduced_pass import reduced_sums
from pansharp_iqa.indexes.ssim import ssim
from pansharp_iqa.indexes.strips import StripImage
from pansharp_iqa.io import DatasetConfigError, load_settings, sha256_file
from pansharp_iqa.settings import ReducedSettings
from pansharp_iqa.validation import InputError, SettingError

PEAK = 2047.0


# --------------------------------------------------------------------------- settings


def test_presets_fix_the_scripts_settings():
    assert pi.list_presets() == ["pancollection-wv3", "pancollection-qb", "pancollection-gf2", "pancollection-wv2"]
    expect = {"wv3": ("WV3", 8, 11, "WV3"), "qb": ("QB", 4, 11, "IKONOS"), "gf2": ("GF2", 4, 10, "IKONOS"),
              "wv2": ("WV2", 8, 11, "WV2")}
    for tag, (sensor, bands, bits, mtf) in expect.items():
        p = pi.get_preset(f"pancollection-{tag}")
        assert (p.sensor, p.bands, p.bits, p.mtf_sensor, p.ratio, p.peak) == (sensor, bands, bits, mtf, 4, 2**bits - 1)
        assert p.files == (f"test_{tag}_multiExm1.h5", f"test_{tag}_OrigScale_multiExm1.h5")
        reduced, full = p.settings("reduced"), p.settings("full")
        proto = reduced.protocol
        assert isinstance(reduced, ReducedSettings) and (reduced.ratio, reduced.bits) == (4, bits)
        assert proto.dim_cut is None and proto.block_size == 32 and proto.sigma_form == "2020"
        assert proto.d_s_low_pass == "exp-imresize" and proto.low_res_terms == "exp"
        assert (full.sensor.name, full.satellite.name, full.bits, full.upsampled) == (mtf, sensor, bits, "given")
        assert full.protocol is proto and "ms_exp" in full.roles
    with pytest.raises(InputError, match="resolution must be one of"):
        pi.get_preset("pancollection-wv3").settings("fr")
    with pytest.raises(InputError, match="known presets: pancollection-wv3"):
        pi.get_preset("pancollection-wv4")


def test_the_gf2_preset_uses_the_ikonos_mtf_as_the_scripts_do():
    gnyq = pi.get_preset("pancollection-gf2").settings("full").ms_gnyq(4)
    assert list(gnyq) == [0.26, 0.28, 0.29, 0.28]  # genMTF.m 'IKONOS', not the GF2 entry


# --------------------------------------------------------------------------- independent formulas


def _sam_deg(gt, sr):
    dot, n1, n2 = (gt * sr).sum(2), np.sqrt((gt * gt).sum(2)), np.sqrt((sr * sr).sum(2))
    ok = (n1 * n2) > 0
    return float(np.degrees(np.arccos(np.clip(dot[ok] / (n1 * n2)[ok], -1, 1))).sum() / gt[..., 0].size)


def _ergas(gt, sr, ratio=4):
    mse = ((gt - sr) ** 2).mean((0, 1))
    return float(100 / ratio * np.sqrt(np.mean(mse / gt.mean((0, 1)) ** 2)))


def _ssim_index(x, y, peak):
    """Wang et al.'s ssim_index.m with its defaults, written out with scipy (valid windows)."""
    g = np.exp(-((np.arange(11) - 5.0) ** 2) / (2 * 1.5**2))
    w = np.outer(g, g) / np.outer(g, g).sum()
    f = lambda a: correlate2d(a, w, mode="valid")  # noqa: E731
    c1, c2 = (0.01 * peak) ** 2, (0.03 * peak) ** 2
    mx, my = f(x), f(y)
    sx, sy, sxy = f(x * x) - mx * mx, f(y * y) - my * my, f(x * y) - mx * my
    return float((((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sx + sy + c2))).mean())


def _rr(sr, gt, preset="pancollection-wv2", tiled="auto", **keywords):
    """The preset's settings value, evaluated."""
    return pi.evaluate({"fused": sr, "reference": gt}, pi.get_preset(preset).settings("reduced", **keywords),
                       tiled=tiled)


def test_reduced_preset_on_a_pancollection_file_no_border_cut(pancollection):
    for gt, sr in zip(pancollection["gt"], pancollection["sr_rr"], strict=True):
        r = _rr(sr, gt, indexes=["default", "RMSE", "CC"])
        assert list(r)[:6] == ["Q2n", "Q", "SAM", "ERGAS", "SCC", "MPSNR"]
        assert r["protocol"]["name"] == "pancollection" and r["protocol"]["dim_cut"] is None
        assert r["protocol"]["evaluated_shape"] == [64, 64, 8]  # the whole scene: no border cut
        # the whole scene's values, derived independently (numpy / scikit-image), rel. 1e-9
        assert r["SAM"] == pytest.approx(_sam_deg(gt, sr), rel=1e-9)
        assert r["ERGAS"] == pytest.approx(_ergas(gt, sr), rel=1e-9)
        band_psnr = [peak_signal_noise_ratio(gt[..., b], sr[..., b], data_range=PEAK) for b in range(8)]
        assert r["MPSNR"] == pytest.approx(np.mean(band_psnr), rel=1e-9)
        assert r["RMSE"] == pytest.approx(np.sqrt(np.mean((gt - sr) ** 2)) / PEAK, rel=1e-9)
        cc = np.mean([np.corrcoef(gt[..., b].ravel(), sr[..., b].ravel())[0, 1] for b in range(8)])
        assert r["CC"] == pytest.approx(cc, rel=1e-9)
        # the library's PSNR (one MSE over all bands) is another number than the scripts' band mean
        assert pi.psnr(gt, sr, data_range=PEAK) != pytest.approx(r["MPSNR"], rel=1e-6)


def test_ssim_is_the_scripts_ssim_index(pancollection):
    for gt, sr in zip(pancollection["gt"], pancollection["sr_rr"], strict=True):
        expected = np.mean([_ssim_index(sr[..., b], gt[..., b], PEAK) for b in range(8)])
        assert _rr(sr, gt)["SSIM"] == pytest.approx(expected, rel=1e-9)
        # strips of 16 rows, each with its 10-row halo: the same valid windows
        sums = reduced_sums(StripImage(gt), StripImage(sr), statistics=["ssim_windows"], strip_rows=16,
                            ctx=ChunkContext(peak=PEAK))["ssim_windows"]
        assert np.mean(sums["sums"] / sums["count"]) == pytest.approx(expected, rel=1e-12)
        # quality_assess.m: ssim_index(x*255, y*255) on images divided by const -> the same number
        assert _ssim_index(sr[..., 0] / PEAK * 255, gt[..., 0] / PEAK * 255, 255) == pytest.approx(
            _ssim_index(sr[..., 0], gt[..., 0], PEAK), rel=1e-9)
    with pytest.raises(InputError, match="at least 11x11"):
        ssim(np.ones((8, 8, 2)), np.ones((8, 8, 2)), data_range=PEAK)
    with pytest.raises(SettingError, match="in memory only"):  # the tile engine refuses it in one line
        _rr(sr, gt, tiled="always")
    assert "SSIM" not in _rr(sr, gt, tiled="always", indexes="Q2n,SAM")


def test_reduced_metrics_in_a_training_loop_give_the_same_numbers(pancollection):
    metric = pi.ReducedMetrics(pi.get_preset("pancollection-wv2").settings(), layout="NHWC", backend="host")
    sr, gt = np.stack(pancollection["sr_rr"]), np.stack(pancollection["gt"])
    metric.update(sr[:2], gt[:2])
    metric.update(sr[2:], gt[2:])
    values = metric.compute()
    for i, (g, s) in enumerate(zip(pancollection["gt"], pancollection["sr_rr"], strict=True)):
        one = _rr(s, g)
        for name in ("Q2n", "SAM", "MPSNR"):
            assert values["per_image"][name][i] == pytest.approx(one[name], rel=1e-12)
    assert values["MPSNR"] == pytest.approx(np.mean(values["per_image"]["MPSNR"]), rel=1e-12)
    assert values["protocol"]["name"] == "pancollection" and metric.indexes[-2:] == ("MPSNR", "SSIM")


def test_full_preset_is_khan_hqnr_with_the_file_lms(pancollection):
    settings = pi.get_preset("pancollection-wv2").settings("full")
    for sr, ms, pan, lms in zip(pancollection["sr_fr"], pancollection["ms_fr"], pancollection["pan_fr"],
                                pancollection["lms_fr"], strict=True):
        r = pi.evaluate({"fused": sr, "ms": ms, "pan": pan, "ms_exp": lms}, settings)
        assert [k for k in r if k != "protocol"] == ["D_s", "D_lambda_K", "HQNR"]
        assert r["HQNR"] == pytest.approx((1 - r["D_lambda_K"]) * (1 - r["D_s"]), rel=1e-12)
        assert r["protocol"]["sensor"]["name"] == "WV2"
        # at full resolution the scripts are the 2020 toolbox (indexes_evaluation_FS, flagQNR = 0)
        ref = pi.evaluate_full(sr, ms, pan, sensor="WV2", ratio=4, bits=11, ms_exp=lms,
                               indexes=["D_lambda_K", "D_s", "HQNR"])
        for k in ("D_lambda_K", "D_s", "HQNR"):
            assert r[k] == pytest.approx(ref[k], rel=1e-12)


# --------------------------------------------------------------------------- the data's identity


def test_hash_match_needs_no_flag(pancollection, monkeypatch):
    digest = sha256_file(pancollection["reduced"])
    monkeypatch.setitem(presets.PUBLISHED_SHA256, "test_wv2_multiExm1.h5", digest)
    data = pi.get_preset("pancollection-wv2").check_data(pancollection["reduced"])
    assert (data.resolution, data.published, data.reasons) == ("reduced", True, ())
    assert data.card()["published_test_set"] is True


def test_unknown_hash_is_recorded_not_refused(pancollection):
    data = pi.get_preset("pancollection-wv2").check_data(pancollection["full"])
    assert (data.resolution, data.published) == ("full", None)
    assert "not verified" in data.card()["data_note"]


def test_other_data_is_refused_unless_forced_and_the_card_says_so(pancollection, monkeypatch):
    monkeypatch.setitem(presets.PUBLISHED_SHA256, "test_wv2_multiExm1.h5", "0" * 64)
    preset = pi.get_preset("pancollection-wv2")
    with pytest.raises(InputError, match="differs from the published test_wv2_multiExm1.h5's .000000000000"):
        preset.check_data(pancollection["reduced"])
    data = preset.check_data(pancollection["reduced"], force=True)
    assert data.published is False
    assert preset.card(data)["data_note"].startswith("NOT the published PanCollection test set: SHA-256")


def test_a_preset_forced_on_other_bands(pancollection, tmp_path):
    """The GF2 preset on 4 bands of the WV2 scene halved to 10 bits: refused, then forced; its full
    resolution numbers use the IKONOS MTF, its card says the data is not the published test set."""
    _write = pancollection["write"]  # the fixture's writer (tests/ is no package: nothing to import it from)
    ms4 = [m // 2 for m in pancollection["ms4"]]
    pan = [p // 2 for p in pancollection["pan_fr"]]
    lms4 = [pi.interp23tap(m, 4) for m in ms4]
    path = _write(tmp_path / "other.h5", ms=ms4, lms=lms4, pan=pan)
    preset = pi.get_preset("pancollection-gf2")
    assert preset.check_data(path).published is None  # 4 bands, no published hash for this name: not refused
    with pytest.raises(InputError, match="its MS has 4 bands, the WV2 test set 8"):
        pi.get_preset("pancollection-wv2").check_data(path)
    card = pi.get_preset("pancollection-wv2").card(pi.get_preset("pancollection-wv2").check_data(path, force=True))
    assert card["published_test_set"] is False and "NOT the published" in card["data_note"]
    sr = [s[..., [1, 2, 4, 6]] // 2 for s in pancollection["sr_fr"]]
    r = pi.evaluate({"fused": sr[0], "ms": ms4[0], "pan": pan[0], "ms_exp": lms4[0]}, preset.settings("full"))
    assert r["protocol"]["sensor"]["name"] == "IKONOS" and r["protocol"]["bits"] == 10


# --------------------------------------------------------------------------- dataset.toml and the CLI


def test_dataset_toml_preset_fixes_the_settings(pancollection):
    toml = pancollection["reduced"].parent / "dataset.toml"
    try:
        toml.write_text('preset = "pancollection-wv2"\n')
        s = load_settings(pancollection["reduced"])
        assert (s.resolution, s.sensor, s.ratio, s.bits, s.protocol) == ("reduced", "WV2", 4, 11, "pancollection")
        assert s.sources["bits"] == "preset pancollection-wv2"
        assert s.to_dict()["preset"]["name"] == "pancollection-wv2"
        assert s.preset["published_test_set"] is None
        f = load_settings(pancollection["full"])
        assert (f.resolution, f.sensor) == ("full", "WV2")
        assert pi.get_protocol(s.protocol).dim_cut is None and "pancollection" in pi.list_protocols()
        toml.write_text('preset = "pancollection-wv2"\nbits = 11\nsensor = "WorldView-2"\n')  # agreeing: accepted
        assert load_settings(pancollection["reduced"]).bits == 11
        toml.write_text('preset = "pancollection-wv2"\nbits = 10\n')
        with pytest.raises(DatasetConfigError, match=r"bits = 10 \(dataset.toml\) contradicts preset"):
            load_settings(pancollection["reduced"])
        with pytest.raises(DatasetConfigError, match="resolution = 'full' .flag. contradicts preset"):
            load_settings(pancollection["reduced"], {"bits": None, "resolution": "full", "preset": "pancollection-wv2"})
        toml.write_text('resolution = "reduced"\nsensor = "WV2"\nratio = 4\nbits = 11\n')
        assert load_settings(pancollection["reduced"]).preset is None  # no preset: nothing recorded
        assert "preset" not in load_settings(pancollection["reduced"]).to_dict()
    finally:
        toml.unlink(missing_ok=True)


def test_cli_option_registry_has_the_preset():
    ns = build_parser().parse_args(["evaluate", "test_wv3_multiExm1.h5", "M", "--preset", "pancollection-wv3"])
    assert ns.preset == "pancollection-wv3" and ns.preset_force is None
    ns = build_parser().parse_args(["evaluate", "x.h5", "M", "--preset", "pancollection-qb", "--preset-force"])
    assert ns.preset_force is True


def test_mpsnr_and_rmse_tile_wise_and_on_torch_equal_the_formulas():
    """The two extras come from the squared-error sums, so every engine gives them (no shared data)."""
    rng = np.random.default_rng(3)
    gt = rng.integers(1, 1024, (96, 80, 4)).astype(float)
    sr = gt + rng.normal(0, 20, gt.shape) * np.array([0.5, 1, 2, 4])
    mpsnr = np.mean([peak_signal_noise_ratio(gt[..., b], sr[..., b], data_range=1023.0) for b in range(4)])
    rmse = np.sqrt(np.mean((gt - sr) ** 2)) / 1023.0
    for tiled in ("never", "always"):
        r = _rr(sr, gt, "pancollection-gf2", tiled, indexes=["MPSNR", "RMSE"])
        assert (r["MPSNR"], r["RMSE"]) == pytest.approx((mpsnr, rmse), rel=1e-12)
    torch = pytest.importorskip("torch")
    metric = pi.ReducedMetrics(pi.get_preset("pancollection-gf2").settings(indexes=["MPSNR", "RMSE"]), backend="torch")
    nchw = lambda a: torch.from_numpy(a.transpose(2, 0, 1)[None].copy())  # noqa: E731
    metric.update(nchw(sr), nchw(gt))
    out = metric.compute()
    assert (out["MPSNR"], out["RMSE"]) == pytest.approx((mpsnr, rmse), rel=1e-12)

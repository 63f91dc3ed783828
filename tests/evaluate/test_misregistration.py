"""Misregistration sensitivity (issue 32 item 5): the MS shift itself, checked against exact identities and an
analytically shifted band-limited scene, and the sensitivity's numbers against evaluate_full on the shifted MS."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import kendalltau

import pansharp_iqa as pi
import pansharp_iqa.misregistration as mr
from pansharp_iqa.baselines import exp, gsa, mtf_glp_hpm
from pansharp_iqa.demo_data import load_demo
from pansharp_iqa.resample import fineshift
from pansharp_iqa.validation import InputError

RATIOS = (2, 4, 8, 6)


def _random_ms(shape=(40, 44, 2), seed=0):
    return np.random.default_rng(seed).integers(0, 2048, size=shape).astype(np.uint16)


# -- the shift -------------------------------------------------------------------------------


@pytest.mark.parametrize("ratio", RATIOS)
def test_no_shift_returns_the_ms_bit_for_bit(ratio):
    ms = _random_ms()
    out = pi.shift_ms(ms, [(0, 0)], ratio=ratio)
    assert out.dtype == np.float64 and np.array_equal(out[0], ms.astype(np.float64))
    assert np.array_equal(pi.shift_ms(ms[:, :, 0], [(0, 0)], ratio=ratio)[0], ms[:, :, 0])  # (h, w) in and out


@pytest.mark.parametrize("ratio", RATIOS)
def test_a_shift_of_one_ms_pixel_moves_it_one_row_or_column_exactly(ratio):
    ms = _random_ms(seed=1).astype(np.float64)
    down, right, up, diagonal = pi.shift_ms(ms, [(ratio, 0), (0, ratio), (-ratio, 0), (ratio, ratio)], ratio=ratio)
    # content moves down / right; the edge is its own mirror image (symmetric extension: the edge row repeated)
    assert np.array_equal(down[1:], ms[:-1]) and np.array_equal(down[0], ms[0])
    assert np.array_equal(right[:, 1:], ms[:, :-1]) and np.array_equal(right[:, 0], ms[:, 0])
    assert np.array_equal(up[:-1], ms[1:]) and np.array_equal(up[-1], ms[-1])
    assert np.array_equal(diagonal[1:, 1:], ms[:-1, :-1])


def _scene(h, w, ratio, fr=0.05, fc=0.07):
    """A band-limited MS (products of low-frequency cosines, cycles per MS pixel) and its value at any position."""
    phases = np.array([0.3, 1.1, 2.0])

    def at(rows, cols):
        r = np.asarray(rows, dtype=float)[:, None, None]
        c = np.asarray(cols, dtype=float)[None, :, None]
        return 1000 + 300 * np.cos(2 * np.pi * fr * r + phases) * np.cos(2 * np.pi * fc * c - phases)

    return at(np.arange(h), np.arange(w)), at


@pytest.mark.parametrize("ratio", (2, 4))
def test_shifted_band_limited_scene_is_the_analytically_shifted_one(ratio):
    ms, at = _scene(72, 64, ratio)
    shifts = [(0.5, 0), (-0.5, 0), (0, 1), (0, -1), (1.5, -0.5), (-1, 1)]
    out = pi.shift_ms(ms, shifts, ratio=ratio)
    inner = (slice(24, -24), slice(24, -24))  # away from the mirror-extended edges
    for k, (sr, sc) in enumerate(shifts):
        truth = at(np.arange(72) - sr / ratio, np.arange(64) - sc / ratio)  # moved by s PAN = s/ratio MS pixels
        # the 23-tap steps' taps sum to 1 - 4e-10 (a relative 1e-9 after the cascade); their passband error at
        # these frequencies is below 1e-9 of the 300 DN modulation
        np.testing.assert_allclose(out[k][inner], truth[inner], rtol=3e-9, atol=1e-6)
        assert np.abs(out[k][inner] - ms[inner]).max() > 1  # it did move


def test_ratio_6_shift_is_the_analytic_one_to_the_x3_sinc_accuracy():
    ms, at = _scene(96, 96, 6, fr=0.04, fc=0.06)
    out = pi.shift_ms(ms, [(1, -0.5), (-3, 2)], ratio=6)
    inner = (slice(36, -36), slice(36, -36))
    for k, (sr, sc) in enumerate([(1, -0.5), (-3, 2)]):
        truth = at(np.arange(96) - sr / 6, np.arange(96) - sc / 6)
        # the toolboxes' x3 stage, a 61-tap sinc without a window (float32 taps), is not flat in its passband:
        # measured 1.15e-2 of the 300 DN modulation here (the powers of two: 1e-9)
        np.testing.assert_allclose(out[k][inner], truth[inner], rtol=0, atol=300 * 1.5e-2)


@pytest.mark.parametrize("ratio", (2, 4))
def test_plus_one_then_minus_one_returns_the_interior(ratio):
    ms, _ = _scene(80, 80, ratio)
    there = pi.shift_ms(ms, [(1, 0), (0, 0.5)], ratio=ratio)
    back_r = pi.shift_ms(there[0], [(-1, 0)], ratio=ratio)[0]
    back_c = pi.shift_ms(there[1], [(0, -0.5)], ratio=ratio)[0]
    inner = (slice(24, -24), slice(24, -24))
    np.testing.assert_allclose(back_r[inner], ms[inner], rtol=3e-9, atol=1e-6)  # as above, twice
    np.testing.assert_allclose(back_c[inner], ms[inner], rtol=3e-9, atol=1e-6)


@pytest.mark.parametrize("ratio", (2, 4, 6))
def test_half_pixel_samples_are_fineshifts_half_band_shift_of_the_exp(ratio):
    # an independent implementation of the same half-band sample (zeros outside, of the circular EXP: hence the
    # interior only, beyond the 12 MS samples the EXP's wrap reaches)
    ms = _random_ms(shape=(48, 48, 2), seed=3).astype(np.float64)
    out = pi.shift_ms(ms, [(0.5, 0), (0, -0.5)], ratio=ratio)
    e = pi.interp23tap(ms, ratio)
    h = ratio // 2
    down = fineshift(e, 1, 0)[h::ratio, h::ratio]  # EXP(p - 1/2) at p = ratio*i + ratio/2
    left = fineshift(e, 0, -1)[h::ratio, h::ratio]  # EXP(p + 1/2) at p = ratio*i + ratio/2
    inner = (slice(13, -13), slice(13, -13))
    np.testing.assert_allclose(out[0][inner], down[inner], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(out[1][inner], left[inner], rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("ratio", RATIOS)
def test_strips_and_a_wider_mirror_give_the_same_values(ratio, monkeypatch):
    ms = _random_ms(seed=2)
    shifts = [(ratio, -ratio), (-0.5, 1.5), (1, 0)]
    whole = pi.shift_ms(ms, shifts, ratio=ratio)
    monkeypatch.setattr(mr, "_STRIP_BYTES", 1)  # one MS row per strip
    assert np.array_equal(pi.shift_ms(ms, shifts, ratio=ratio), whole)
    monkeypatch.setattr(mr, "_PAD_POW2", mr._PAD_POW2 + 12)
    monkeypatch.setitem(mr._PAD, 6, mr._PAD[6] + 12)
    assert np.array_equal(pi.shift_ms(ms, shifts, ratio=ratio), whole)  # no value depends on a filter's wrap


@pytest.mark.parametrize("shift, match", [((0.3, 0), "multiple of 1/2"), ((5, 0), "within one MS pixel"),
                                          ((0, np.nan), "multiple"), ((1, 2, 3), "pair")])
def test_shifts_that_are_not_half_pixels_within_one_ms_pixel_are_refused(shift, match):
    with pytest.raises(InputError, match=match):
        pi.shift_ms(_random_ms(), [shift], ratio=4)


# -- the sensitivity ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crop():
    ms, pan = load_demo()  # bundled real scene (11-bit DN), sensor unknown
    ms, pan = ms[:32, :32], pan[:128, :128]
    fused = {name: f(ms, pan, sensor="none", ratio=4) for name, f in
             (("GSA", gsa), ("MTF-GLP-HPM", mtf_glp_hpm), ("EXP", exp))}
    return fused, ms, pan


@pytest.fixture(scope="module")
def result(crop):
    fused, ms, pan = crop
    return pi.misregistration_sensitivity(fused, ms, pan, sensor="none", ratio=4, directions=("rows", "cols"))


def test_every_value_is_evaluate_full_on_the_shifted_ms(crop, result):
    fused, ms, pan = crop
    pairs = [(s, 0.0) for s in mr.DEFAULT_SHIFTS] + [(0.0, s) for s in mr.DEFAULT_SHIFTS]
    assert result["shifts"].tolist() == [[0.0, 0.0], *[list(p) for p in pairs]]
    assert result["labels"][:3] == ["none", "rows -1", "rows -0.5"] and result["labels"][-1] == "cols +1"
    shifted = pi.shift_ms(ms, pairs, ratio=4)
    for j, (name, image) in enumerate(fused.items()):
        baseline = pi.evaluate_full(image, ms, pan, sensor="none", ratio=4)
        for index in result["indexes"]:
            assert result["values"][index][0, j] == baseline[index]  # the baseline is evaluate_full's, exactly
        for k in (1, 6):
            moved = pi.evaluate_full(image, shifted[k - 1], pan, sensor="none", ratio=4)
            for index in result["indexes"]:
                assert result["values"][index][k, j] == moved[index], (name, k, index)
    # the fused image does not move: the spectral distortion of EXP against a shifted MS is no longer 0
    assert result["values"]["D_lambda"][0, 2] == 0 and (result["values"]["D_lambda"][1:, 2] > 1e-4).all()


def test_summary_by_hand(result):
    methods = result["methods"]
    assert methods == ["GSA", "MTF-GLP-HPM", "EXP"]
    for index, v in result["values"].items():
        better = 1 if index in ("QNR", "HQNR") else -1
        for j in range(3):
            changes = [abs(v[k, j] - v[0, j]) for k in range(1, v.shape[0])]
            assert result["max_abs_change"][index][j] == max(changes)
            if v[0, j] != 0:
                assert result["max_rel_change"][index][j] == pytest.approx(max(changes) / abs(v[0, j]), rel=1e-15)
            else:
                assert np.isnan(result["max_rel_change"][index][j])
        for k in range(v.shape[0]):
            order = sorted(range(3), key=lambda j: -better * v[k, j])
            assert [methods[j] for j in order] == [methods[j] for j in np.argsort(result["ranks"][index][k])]
            swaps = {(methods[a], methods[b]) for a in range(3) for b in range(3)
                     if better * v[0, a] > better * v[0, b] and better * v[k, a] < better * v[k, b]}
            assert set(result["swaps"][index][k]) == swaps
            assert result["kendall_tau"][index][k] == pytest.approx(kendalltau(v[0], v[k])[0])
        assert result["ranking_changed"][index] == any(result["swaps"][index])
    assert result["kendall_tau"]["QNR"][0] == 1.0 and result["swaps"]["QNR"][0] == []


def test_a_one_pixel_shift_flips_a_ranking_on_the_real_crop(result):
    # D_s reads the MS only through its own term: a shift moves it for every method, and here reorders them
    assert result["ranking_changed"]["D_s"] and min(result["kendall_tau"]["D_s"]) < 1
    assert result["max_abs_change"]["D_s"].min() > 0.01


def test_card_says_how_the_shifts_were_made_and_the_result_serialises(result):
    card = result["protocol"]["misregistration"]
    assert card["shifts_pan_pixels"][0] == [0.0, 0.0] and card["evaluations_per_method"] == 9
    assert "interp23tap(ms, 4)" in card["shift"] and "symmetric" in card["shift"]
    assert result["protocol"]["name"] == "toolbox2020"
    doc = json.loads(json.dumps(pi.misregistration.sensitivity_to_json(result), allow_nan=False))
    assert doc["max_rel_change"]["D_lambda"][2] is None  # EXP's baseline D_lambda is 0
    assert doc["swaps"]["D_s"] == [[list(p) for p in swaps] for swaps in result["swaps"]["D_s"]]


def test_one_image_with_settings_and_tile_wise_gives_the_same_numbers(crop, result):
    fused, ms, pan = crop
    settings = pi.full_settings(sensor="none", ratio=4, indexes=["D_s", "QNR"])
    one = pi.misregistration_sensitivity(fused["GSA"], ms, pan, settings=settings, shifts=(-1, 1),
                                         directions="diagonal")
    assert one["methods"] == ["fused"] and one["indexes"] == ["D_s", "QNR"]
    assert one["shifts"].tolist() == [[0, 0], [-1, -1], [1, 1]]
    assert np.isnan(one["kendall_tau"]["QNR"]).all() and not one["ranking_changed"]["QNR"]
    tiled = pi.misregistration_sensitivity(fused["GSA"], ms, pan, settings=settings, shifts=(-1, 1),
                                           directions="diagonal", tiled="always")
    for index in ("D_s", "QNR"):
        np.testing.assert_allclose(tiled["values"][index], one["values"][index], rtol=1e-9, atol=1e-12)
    assert "tiling" in tiled["protocol"]
    per_method = {m: settings for m in fused}
    by_map = pi.misregistration_sensitivity(fused, ms, pan, settings=per_method, shifts=(1,), directions="rows")
    assert by_map["values"]["QNR"][1].tolist() == result["values"]["QNR"][4].tolist()  # rows +1


@pytest.mark.parametrize("kwargs, match", [
    ({"shifts": (0, 1)}, "non-zero"), ({"shifts": (1, 1.0)}, "distinct"), ({"shifts": (0.25,)}, "multiple of 1/2"),
    ({"directions": ("rows", "up")}, "'up' is not one of"), ({"directions": ()}, "one or more"),
    ({"settings": pi.reduced_settings(ratio=4, bits=11)}, "full-resolution analysis"),
    ({"settings": pi.full_settings(sensor="none", ratio=4, upsampled="given")}, "upsampled='given'"),
    ({"settings": pi.full_settings(sensor="none", ratio=4), "bits": 11}, "not both"),
    ({"settings": {"A": pi.full_settings(sensor="none", ratio=4)}}, "one per method"),
    ({"upsampled": np.zeros((64, 64, 4))}, r"upsampled must be one of .* got a ndarray of shape \(64, 64, 4\)"),
])
def test_refusals_are_one_line_input_errors(crop, kwargs, match):
    fused, ms, pan = crop
    keywords = {"sensor": "none", "ratio": 4} if "settings" not in kwargs else {}
    with pytest.raises(InputError, match=match):
        pi.misregistration_sensitivity(fused["EXP"], ms, pan, **{**keywords, **kwargs})


def test_a_lazy_ms_is_refused(crop, tmp_path):
    fused, ms, pan = crop
    np.save(tmp_path / "ms.npy", ms)
    with pytest.raises(InputError, match="shifts the MS in memory"):
        pi.misregistration_sensitivity(fused["EXP"], str(tmp_path / "ms.npy"), pan, sensor="none", ratio=4)


# -- pansharp-eval evaluate --misregistration ---------------------------------------------------


def _cli(*args):
    import contextlib
    import io

    from pansharp_iqa.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def cli_dataset(tmp_path_factory, crop):
    """Scene ``a`` (the demo crop) with GSA and EXP results, and scene ``b`` with no result of GSA."""
    fused, ms, pan = crop
    root = tmp_path_factory.mktemp("misreg")
    data = root / "data"
    data.mkdir()
    (data / "dataset.toml").write_text('sensor = "none"\nratio = 4\nbits = 11\nresolution = "full"\n'
                                       'result_scale = "dn"\n', encoding="utf-8")
    for name in ("a", "b"):
        np.savez(data / f"{name}.npz", ms=ms, pan=pan)
    methods = []
    for method in ("GSA", "EXP"):
        folder = root / method
        folder.mkdir()
        for name in ("a", "b") if method == "EXP" else ("a",):
            np.save(folder / f"{name}.npy", fused[method])
        methods.append(folder)
    return data, methods


def test_cli_adds_the_sensitivity_to_results_json_and_the_reports(cli_dataset, crop, tmp_path):
    data, methods = cli_dataset
    fused, ms, pan = crop
    code, out, err = _cli("evaluate", data, *methods, "--out", tmp_path / "o", "--misregistration",
                          "--format", "json,md,html", "--no-progress")
    assert code == 1, err  # scene b has no GSA result: that pair fails, the rest is reported
    doc = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    a, b = doc["misregistration"]["a"], doc["misregistration"]["b"]
    assert a["methods"] == ["GSA", "EXP"] and b["methods"] == ["EXP"]
    library = pi.misregistration_sensitivity({"GSA": fused["GSA"], "EXP": fused["EXP"]}, ms, pan, sensor="none",
                                             ratio=4)
    assert a["values"] == pi.misregistration.sensitivity_to_json(library)["values"]
    assert a["values"]["QNR"][0] == [doc["scenes"]["a"][m]["metrics"]["QNR"] for m in ("GSA", "EXP")]
    assert a["protocol"]["evaluations_per_method"] == 9 and a["ranking_changed"] == library["ranking_changed"]
    md = (tmp_path / "o" / "results.md").read_text(encoding="utf-8")
    section = md[md.index("## Misregistration sensitivity"):]
    assert "### a" in section and "| index | GSA | EXP | ranking |" in section and "| HQNR |" in section
    changed = [n for n, c in library["ranking_changed"].items() if c]
    assert changed and all(f"| {n} |" in section and "Kendall's tau down to" in section for n in changed)
    page = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert page.index("<h2>Misregistration sensitivity</h2>") < page.index("<h2>Provenance</h2>")


def test_cli_refuses_the_option_at_reduced_resolution_in_one_line(cli_dataset, tmp_path):
    data, methods = cli_dataset
    code, out, err = _cli("evaluate", data, *methods, "--out", tmp_path / "o", "--misregistration",
                          "--resolution", "reduced")
    assert code == 2 and not (tmp_path / "o").exists()
    assert len(err.strip().splitlines()) == 1 and "needs --resolution full" in err


def test_cli_gives_a_reason_for_a_scene_evaluated_tile_wise(crop, tmp_path, monkeypatch):
    """A scene larger than the memory an evaluation may use (here: 1 MB available) is evaluated tile-wise and gets a
    reason; --tiled always with --misregistration is a usage error before any work."""
    import pansharp_iqa.cli.scene_eval as scene_eval

    fused, ms, pan = crop
    data, method = tmp_path / "split", tmp_path / "GSA"
    data.mkdir()
    method.mkdir()
    (data / "dataset.toml").write_text('sensor = "none"\nratio = 4\nbits = 11\nresolution = "full"\n'
                                       'result_scale = "dn"\n', encoding="utf-8")
    np.save(data / "s_ms.npy", ms)
    np.save(data / "s_pan.npy", pan)
    np.save(method / "s.npy", fused["GSA"])
    code, out, err = _cli("evaluate", data, method, "--out", tmp_path / "x", "--misregistration", "--tiled", "always")
    assert code == 2 and "--misregistration evaluates each scene in memory" in err and not (tmp_path / "x").exists()
    monkeypatch.setattr(scene_eval, "available_memory", lambda: 2**20)
    code, out, err = _cli("evaluate", data, method, "--out", tmp_path / "o", "--misregistration",
                          "--format", "json,md", "--no-progress")
    assert code == 0, err
    doc = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert "tile by tile" in doc["misregistration"]["s"]["reason"]
    assert "Not computed: the scene was evaluated tile by tile" in (tmp_path / "o" / "results.md").read_text()


def test_the_shifted_ms_undershoot_is_the_librarys_own_and_an_offset_ms_is_still_refused():
    """An MS of dark and bright blocks (non-negative DN): its shifted copies undershoot beyond the 5 % a given
    resampled input may (the interpolation's ringing), and still get numbers; the MS as given is checked by the
    rules, so an offset MS is refused as before."""
    rng = np.random.default_rng(7)
    blocks = rng.choice([0.0, 2000.0], size=(8, 8, 4))
    ms = np.kron(blocks, np.ones((6, 6, 1))) + rng.uniform(0, 3, (48, 48, 4))
    assert ms.min() >= 0
    shifted = pi.shift_ms(ms, [(2, 0), (0, -2), (1, 1)], ratio=4)
    assert min(float(s.min()) for s in shifted) < -0.05 * ms.max()  # beyond a given input's undershoot
    pan = np.kron(blocks.mean(axis=2), np.ones((24, 24))) + rng.uniform(0, 3, (192, 192))
    fused = exp(ms, pan, ratio=4)
    out = pi.misregistration_sensitivity(fused, ms, pan, sensor="none", ratio=4, bits=11)
    assert all(np.isfinite(v).all() for v in out["values"].values())
    with pytest.raises(InputError, match="negative beyond resampling undershoot"):
        pi.evaluate_full(fused, shifted[0], pan, sensor="none", ratio=4, bits=11)  # given, not the library's: refused
    with pytest.raises(InputError, match="negative beyond resampling undershoot"):
        pi.misregistration_sensitivity(fused, ms - 1000.0, pan, sensor="none", ratio=4, bits=11)

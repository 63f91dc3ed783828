"""The protocol entry points: cards, scales, bit depths, sensors, constant blocks, file inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as pi

REPO = Path(__file__).resolve().parents[2]


def test_reduced_card_is_json_and_names_every_setting():
    rng = np.random.default_rng(4)
    gt = rng.integers(100, 2000, size=(96, 96, 4))
    fused = gt + rng.normal(0, 20, gt.shape)
    res = pi.evaluate_reduced(fused, gt, ratio=4, bits=11)
    card = json.loads(json.dumps(res["protocol"]))
    assert card["name"] == "toolbox2020" and card["version"] == pi.__version__
    for key in ("ratio", "bits", "block_size", "shift", "dim_cut", "threshold", "scale", "q2n_cast"):
        assert key in card, key
    assert card["dim_cut"] == [20, 21] and card["evaluated_shape"] == [55, 55, 4]


def test_scale_turns_unit_range_data_into_the_same_numbers_as_dn():
    rng = np.random.default_rng(5)
    gt = rng.integers(100, 2000, size=(80, 80, 4)).astype(float)
    fused = gt + rng.normal(0, 25, gt.shape)
    a = pi.evaluate_reduced(fused, gt, ratio=4, bits=11)
    with pytest.raises(ValueError, match="scale"):
        pi.evaluate_reduced(fused / 2047, gt / 2047, ratio=4, bits=11)
    b = pi.evaluate_reduced(fused / 2047, gt / 2047, ratio=4, bits=11, scale=2047)
    for k in ("Q2n", "Q", "SAM", "ERGAS", "SCC"):
        assert b[k] == pytest.approx(a[k], rel=1e-9, abs=1e-12)
    assert b["protocol"]["scale"] == 2047


def test_reference_beyond_the_stated_bit_depth_is_refused():
    gt = np.full((80, 80, 4), 3000.0) + np.arange(80)[:, None, None]
    with pytest.raises(ValueError, match="bits"):
        pi.evaluate_reduced(gt, gt, ratio=4, bits=11)


def _fr_case(seed: int = 6, size: int = 128):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(size // 8, size // 8, 4)).cumsum(0).cumsum(1)
    hr = pi.interp23tap(base, 8)
    hr = (hr - hr.min()) / (hr.max() - hr.min()) * 1500 + 200 + rng.normal(0, 10, hr.shape)
    pan = hr.mean(axis=2)
    ms = pi.decimate(pi.mtf_filter_sensor(hr, "QB"), 4)
    fused = pi.interp23tap(ms, 4) + 0.7 * (pan - pi.interp23tap(pi.imresize(pan, 0.25), 4))[:, :, None]
    return fused, ms, pan


def test_full_card_records_sensor_and_gnyq_and_identities_hold():
    fused, ms, pan = _fr_case()
    res = pi.evaluate_full(fused, ms, pan, sensor="QuickBird")
    card = res["protocol"]
    assert card["sensor"]["name"] == "QB" and card["ms_gnyq"] == [0.34, 0.32, 0.30, 0.22]
    assert res["QNR"] == pytest.approx((1 - res["D_lambda"]) * (1 - res["D_s"]), rel=1e-14)
    assert res["HQNR"] == pytest.approx((1 - res["D_lambda_K"]) * (1 - res["D_s"]), rel=1e-14)
    assert res["D_lambda"] == pytest.approx(pi.d_lambda(fused, ms, ratio=4), rel=1e-14)
    assert res["D_lambda_K"] == pytest.approx(pi.d_lambda_k(fused, ms, sensor="QB"), rel=1e-14)


def test_sensor_sensitivity_shows_which_indexes_depend_on_the_mtf():
    fused, ms, pan = _fr_case(7)
    sens = ["QB", "IKONOS", "GeoEye1", "none"]
    r2020 = pi.sensor_sensitivity(fused, ms, pan, sensors=sens, ratio=4, bits=11)
    assert list(r2020) == sens
    ds = {r["D_s"] for r in r2020.values()}
    assert len(ds) == 1  # toolbox2020 D_s: PAN bicubic + EXP, no MTF
    dlk = [r["D_lambda_K"] for r in r2020.values()]
    assert len(set(dlk)) == len(sens)
    r2015 = pi.sensor_sensitivity(fused, ms, pan, sensors=sens, ratio=4, bits=11, protocol="toolbox2015")
    # PAN GNyq: QB 0.15, IKONOS 0.17, GeoEye1 0.16, none 0.15 -> three distinct D_s, none == QB
    assert len({r2015[s]["D_s"] for s in ("QB", "IKONOS", "GeoEye1")}) == 3
    assert r2015["none"]["D_s"] == r2015["QB"]["D_s"]
    assert "HQNR" not in r2015["QB"]


def test_constant_blocks_are_reported_never_a_silent_nan():
    fused, ms, pan = _fr_case(8)
    fused = fused.copy()
    fused[:32, :32, :] = 500.0  # one flat block in every band
    with pytest.raises(pi.ConstantBlockError, match="nan_policy"):
        pi.evaluate_full(fused, ms, pan, sensor="QB")
    omitted = pi.evaluate_full(fused, ms, pan, sensor="QB", nan_policy="omit")
    assert np.isfinite(omitted["QNR"]) and omitted["protocol"]["nan_policy"] == "omit"
    assert np.isnan(pi.evaluate_full(fused, ms, pan, sensor="QB", nan_policy="propagate")["QNR"])


def test_generic_sensor_needs_explicit_ratio_and_bits_and_2015_uses_its_own_value():
    fused, ms, pan = _fr_case(9)
    with pytest.raises(ValueError, match="ratio"):
        pi.evaluate_full(fused, ms, pan, sensor="none")
    res = pi.evaluate_full(fused, ms, pan, sensor="none", ratio=4, bits=11, protocol="toolbox2015")
    assert res["protocol"]["ms_gnyq"] == [0.15] * 4
    res = pi.evaluate_full(fused, ms, pan, sensor="none", ratio=4, bits=11)
    assert res["protocol"]["ms_gnyq"] == [0.30] * 4


def test_sensor_without_pan_mtf_is_refused_only_where_the_pan_mtf_is_needed():
    fused, ms, pan = _fr_case(10)
    ok = pi.evaluate_full(fused, ms, pan, sensor="Pleiades", bits=12)
    assert np.isfinite(ok["HQNR"])
    with pytest.raises(ValueError, match="PAN GNyq"):
        pi.evaluate_full(fused, ms, pan, sensor="Pleiades", bits=12, protocol="toolbox2015")


def test_wrong_band_count_names_the_subset_fix():
    fused, ms, pan = _fr_case(11)
    with pytest.raises(ValueError, match="select_bands"):
        pi.evaluate_full(fused, ms, pan, sensor="WV3")
    res = pi.evaluate_full(fused, ms, pan, sensor="WV3[4band]")
    assert res["protocol"]["ms_gnyq"] == [0.355, 0.36, 0.365, 0.335]


def _child_q_index(_):
    rng = np.random.default_rng(12)
    x = rng.normal(500, 50, size=(64, 64, 4))
    return pi.q_index(x, x + 1.0)


def test_band_threads_survive_fork():
    # the thread pool exists in the parent; a forked worker (e.g. pansharp-eval --jobs N) must not
    # reuse its dead copy (that deadlocked before the at-fork reset)
    import multiprocessing as mp

    expected = _child_q_index(0)
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        result = pool.map_async(_child_q_index, [0]).get(timeout=60)
    assert result == [expected]


def test_file_inputs_are_evaluated_tile_wise_with_the_same_numbers(tmp_path):
    rng = np.random.default_rng(13)
    gt = rng.integers(100, 2000, size=(150, 170, 4)).astype(np.float64)
    fused = gt + rng.normal(0, 20, gt.shape)
    np.save(tmp_path / "gt.npy", gt)
    np.save(tmp_path / "fused.npy", fused)
    in_memory = pi.evaluate_reduced(fused, gt, ratio=4, bits=11)
    from_files = pi.evaluate_reduced(str(tmp_path / "fused.npy"), tmp_path / "gt.npy", ratio=4, bits=11)
    assert "tiling" in from_files["protocol"] and "tiling" not in in_memory["protocol"]
    for k in ("Q2n", "Q", "SAM", "ERGAS", "SCC"):
        assert from_files[k] == pytest.approx(in_memory[k], rel=1e-9)
    fused_fr, ms, pan = _fr_case(14)
    np.save(tmp_path / "f.npy", fused_fr)
    res = pi.evaluate_full(tmp_path / "f.npy", ms, pan, sensor="QB")
    ref = pi.evaluate_full(fused_fr, ms, pan, sensor="QB")
    for k in ("D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR"):
        assert res[k] == pytest.approx(ref[k], rel=1e-9)


def test_large_full_resolution_arrays_go_tile_wise_by_default(monkeypatch):
    """One rule decides the path of arrays and of the command line's scenes
    (``tiled.plan.choose_path``): from TILED_FASTER_SAMPLES pixels x bands the default evaluates
    tile-wise (same numbers), and the card says which path ran."""
    from pansharp_iqa.tiled import plan

    fused, ms, pan = _fr_case(21)
    small = pi.evaluate_full(fused, ms, pan, sensor="QB")
    assert "tiling" not in small["protocol"]
    monkeypatch.setattr(plan, "TILED_FASTER_SAMPLES", {"reduced": fused.size + 1, "full": fused.size})
    assert plan.choose_path("auto", resolution="full", shape=fused.shape, available=None).path == "tile-wise"
    assert pi.evaluate_reduced(fused, fused, ratio=4, bits=11)["protocol"].get("tiling") is None  # below its limit
    auto = pi.evaluate_full(fused, ms, pan, sensor="QB")
    assert auto["protocol"]["tiling"]["n_tiles"] >= 1
    for k in ("D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR"):
        assert auto[k] == pytest.approx(small[k], rel=1e-9, abs=1e-12)
    never = pi.evaluate_full(fused, ms, pan, sensor="QB", tiled="never")
    assert "tiling" not in never["protocol"]
    always = pi.evaluate_reduced(fused, fused, ratio=4, bits=11, tiled="always")
    assert "tiling" in always["protocol"]
    with pytest.raises(pi.InputError, match="tiled must be one of"):
        pi.evaluate_full(fused, ms, pan, sensor="QB", tiled="sometimes")


def test_readme_sensor_sensitivity_example_runs_with_mixed_band_counts(capsys):
    """docs/overview.md's loop over 4- and 8-band sensors: a reason where a sensor does not fit the
    image, values where it does; one unusable sensor no longer aborts the call."""
    from pansharp_iqa.demo_data import load_demo

    readme = (REPO / "docs" / "overview.md").read_text(encoding="utf-8")
    start = readme.index("for name, r in pi.sensor_sensitivity(")
    code = readme[start : readme.index("```", start)]
    ms, pan = load_demo()
    fused_full = pi.interp23tap(ms, 4)
    exec(code, {"pi": pi, "fused_full": fused_full, "ms": ms, "pan": pan})  # noqa: S102 - the overview's own code
    lines = dict(line.split(" ", 1) for line in capsys.readouterr().out.strip().splitlines())
    assert set(lines) == {"QB", "IKONOS", "WV2", "WV3", "none"}
    assert lines["WV2"].startswith("WV2 does not apply: ms has 4 bands")
    assert 0 < float(lines["QB"]) < 1 and 0 < float(lines["none"]) < 1


@pytest.mark.parametrize("protocol", ["toolbox2020", "reprojected2022"])
def test_inputs_are_checked_once_per_call_not_per_sensor_or_engine(monkeypatch, protocol):
    import pansharp_iqa.evaluation as ev
    import pansharp_iqa.reprojected.protocol as rp

    rng = np.random.default_rng(21)
    ms = rng.integers(200, 1800, size=(40, 40, 4)).astype(float)
    pan = np.kron(ms.mean(axis=2), np.ones((4, 4))) + rng.normal(0, 5, (160, 160))
    fused = pi.interp23tap(ms, 4) + rng.normal(0, 5, (160, 160, 4))
    calls = {"facts": 0, "resolve": 0}
    facts, resolve = ev.image_facts, rp.resolve_inputs

    def counted_facts(*a, **k):
        calls["facts"] += 1
        return facts(*a, **k)

    def counted_resolve(*a, **k):
        calls["resolve"] += 1
        return resolve(*a, **k)

    monkeypatch.setattr(ev, "image_facts", counted_facts)
    monkeypatch.setattr(rp, "resolve_inputs", counted_resolve)
    sensors = ["QB", "WV3", "none", "GeoEye1"]  # WV3 (8 bands) does not apply
    out = pi.sensor_sensitivity(fused, ms, pan, sensors=sensors, protocol=protocol, ratio=4, bits=11)
    assert "reason" in out["WV3"] and all("reason" not in out[s] for s in ("QB", "none", "GeoEye1"))
    assert calls == {"facts": 3, "resolve": 0}  # one summary per image; no second gate in the engine
    for s in ("QB", "none"):
        alone = pi.evaluate_full(fused, ms, pan, sensor=s, ratio=4, bits=11, protocol=protocol)
        assert {k: v for k, v in out[s].items() if k != "protocol"} == {
            k: v for k, v in alone.items() if k != "protocol"}

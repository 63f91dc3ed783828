"""Protocol-level checks of spec fullres2022.md section 15, real-scene figures of section 14, inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pansharp_iqa.reprojected import (
    coregister,
    d_lambda_k_ms,
    d_rho,
    evaluate_reprojected,
    r_ergas,
    r_q,
    r_q2n,
    r_sam,
    reprojection_kernels,
)
from pansharp_iqa.reprojected.filtering import filter_replicate
from pansharp_iqa.sensors import get_sensor
from reproj_helpers import textured_fused

KEYS = ("R-Q2n", "R-Q", "R-SAM", "R-ERGAS", "D_rho")


def self_consistent(sensor: str, n_bands: int, phase: int, size: int = 256) -> tuple[np.ndarray, ...]:
    fused = textured_fused((size, size, n_bands))
    pan = fused.mean(axis=2)
    kernels = reprojection_kernels(get_sensor(sensor).gnyq_for(n_bands), 4)
    ms = np.stack(
        [filter_replicate(fused[:, :, b], kernels[:, :, b])[phase::4, phase::4] for b in range(n_bands)], axis=-1
    )
    return fused, ms, pan


@pytest.mark.parametrize("sensor,n_bands", [("IKONOS", 4), ("WV2", 8)])
@pytest.mark.parametrize("phase", [0, 1, 2, 3])
def test_self_consistent_input_gives_phase_and_unit_indexes(sensor: str, n_bands: int, phase: int) -> None:
    fused, ms, pan = self_consistent(sensor, n_bands, phase)
    res = evaluate_reprojected(fused, ms, pan, sensor=sensor)
    assert res["details"]["shifts_r"] == [phase] * n_bands
    assert res["details"]["shifts_c"] == [phase] * n_bands
    assert abs(res["R-Q2n"] - 1.0) < 1e-12
    assert abs(res["R-Q"] - 1.0) < 1e-12
    assert res["R-ERGAS"] < 1e-10
    assert 0 <= res["R-SAM"] < 1e-5  # arccos floor ~2e-7 deg


def test_result_structure_and_settings() -> None:
    fused, ms, pan = self_consistent("QB", 4, 2, size=128)
    res = evaluate_reprojected(fused.astype(np.float32), ms, pan.astype(np.uint16), sensor="QB")
    assert set(res) == set(KEYS) | {"details"}
    assert all(type(res[k]) is float for k in KEYS)
    d = res["details"]
    assert (d["block_size"], d["shift"], d["dim_cut"], d["search_window"]) == (32, 32, 0, 4)
    assert d["d_rho_half_width"] == 2 and d["coregistration_half_width"] == 2
    assert d["dtype"] == "float64" and d["ratio"] == 4 and d["sensor"] == "QB"
    assert d["ms_gnyq"] == [0.34, 0.32, 0.30, 0.22]
    assert len(d["shifts"]) == 4 and all(isinstance(v, int) for v in d["shifts_r"])
    json.dumps(d)  # provenance must be JSON-serialisable


def test_inputs_not_modified() -> None:
    fused, ms, pan = self_consistent("IKONOS", 4, 1, size=128)
    copies = [a.copy() for a in (fused, ms, pan)]
    evaluate_reprojected(fused, ms, pan, sensor="IKONOS")
    for a, c in zip((fused, ms, pan), copies, strict=True):
        assert np.array_equal(a, c)


def test_individual_functions_agree_with_protocol() -> None:
    fused, ms, pan = self_consistent("WV2", 8, 1, size=128)
    fused = fused + 20 * np.sin(np.arange(128))[:, None, None]  # not a perfect match
    res = evaluate_reprojected(fused, ms, pan, sensor="WV2")
    assert r_q2n(fused, ms, pan, sensor="WV2") == res["R-Q2n"]
    assert r_q(fused, ms, pan, sensor="WV2") == res["R-Q"]
    assert r_sam(fused, ms, pan, sensor="WV2") == res["R-SAM"]
    assert r_ergas(fused, ms, pan, sensor="WV2") == res["R-ERGAS"]
    assert d_rho(fused, pan, ratio=4) == res["D_rho"]
    assert abs(d_lambda_k_ms(fused, ms, pan, sensor="WV2") - (1 - res["R-Q2n"])) < 1e-15
    # without PAN: the fixed Wald offset ratio // 2 = 2 for every band
    fixed = d_lambda_k_ms(fused, ms, sensor="WV2")
    assert fixed == pytest.approx(1 - r_q2n(fused, ms, None, sensor="WV2", shifts=[(2, 2)] * 8), abs=1e-15)
    assert fixed > 1 - res["R-Q2n"]  # phase 1 data, wrong phase


def test_gain_invariance_of_shifts_and_r_indexes(wv3_scene: tuple[np.ndarray, np.ndarray]) -> None:
    from pansharp_iqa import interp23tap

    ms, pan = wv3_scene
    fused = interp23tap(ms, 4) + 0.3 * (pan - pan.mean())[:, :, None]
    a = evaluate_reprojected(fused, ms, pan, sensor="WV3")
    b = evaluate_reprojected(3.7 * fused, 3.7 * ms, pan, sensor="WV3")
    assert a["details"]["shifts"] == b["details"]["shifts"]
    for k in ("R-Q2n", "R-Q", "R-SAM", "R-ERGAS"):
        assert b[k] == pytest.approx(a[k], rel=1e-12, abs=1e-13)


def test_gain_invariance_on_a_synthetic_scene() -> None:
    """Issue 34: the gain invariance above without ../shared/data (a self-consistent IKONOS-like scene)."""
    from pansharp_iqa import interp23tap

    _, ms, pan = self_consistent("IKONOS", 4, 1, size=128)
    fused = interp23tap(ms, 4) + 0.3 * (pan - pan.mean())[:, :, None]
    a = evaluate_reprojected(fused, ms, pan, sensor="IKONOS")
    b = evaluate_reprojected(3.7 * fused, 3.7 * ms, pan, sensor="IKONOS")
    assert a["details"]["shifts"] == b["details"]["shifts"]
    for k in ("R-Q2n", "R-Q", "R-SAM", "R-ERGAS"):
        assert b[k] == pytest.approx(a[k], rel=1e-12, abs=1e-13)


def test_d_rho_properties() -> None:
    fused = textured_fused((96, 96, 3), seed=11)
    pan = fused.mean(axis=2) + np.random.default_rng(1).normal(0, 30, (96, 96))
    v = d_rho(fused, pan, ratio=4)
    assert 0.0 <= v <= 2.0
    assert d_rho(5.5 * fused, pan, ratio=4) == pytest.approx(v, abs=1e-14)  # gain invariant
    same = np.repeat(pan[:, :, None], 3, axis=2)
    assert abs(d_rho(same, pan, ratio=4)) < 1e-12  # every band = PAN
    assert d_rho(-same, pan, ratio=4) == pytest.approx(2.0, abs=1e-9)  # anti-correlated: the top
    value, dmap = d_rho(fused, pan, ratio=4, return_map=True)  # type: ignore[misc]
    assert dmap.shape == fused.shape and value == pytest.approx(float(dmap.mean()), abs=1e-14)
    assert d_rho(fused, pan, ratio=4, integral="opencv") == pytest.approx(v, abs=1e-12)


def test_coregistration_direct_and_ties() -> None:
    fused, ms, pan = self_consistent("GeoEye1", 4, 3, size=128)
    kernels = reprojection_kernels(get_sensor("GeoEye1").gnyq_for(4), 4)
    shifts, info = coregister(ms, pan, kernels[:, :, 0], 4, return_details=True)  # type: ignore[misc]
    assert shifts.tolist() == [[3, 3]] * 4 and info["correlations"].shape == (4, 4, 4)
    # flat inputs: every phase ties -> the first one (0, 0)
    flat = coregister(np.zeros((32, 32, 2)), np.zeros((128, 128)), kernels[:, :, 0], 4)
    assert flat.tolist() == [[0, 0], [0, 0]]


# ----------------------------------------------------------------------------- real scenes
# Spec section 14, float64 variant of the reference code, F = EXP(MS) (23-tap interpolation).
SPEC_ROWS = {
    "wv2_fr_exp": ("WV2", 0.9562548021935511, 0.9568640162200988, 3.62797888767704, 3.155677538638867,
                   0.8017868083723784, [1, 2, 1, 1, 1, 1, 1, 1], [2, 2, 1, 1, 1, 2, 2, 2]),
    "ikonos_fr_exp": ("IKONOS", 0.9607302152764657, 0.9607941348336952, 1.1883465819148387,
                      1.3214942887655667, 0.8262168762373138, [2, 2, 2, 2], [2, 2, 2, 2]),
}


@pytest.mark.parametrize("case", sorted(SPEC_ROWS))
def test_real_scene_exp_matches_spec_reference_values(case: str, request: pytest.FixtureRequest) -> None:
    from pansharp_iqa import interp23tap

    ms, pan = request.getfixturevalue("wv2_scene" if case.startswith("wv2") else "ik_scene")
    sensor, q2n, q, sam, ergas, drho, rows, cols = SPEC_ROWS[case]
    res = evaluate_reprojected(interp23tap(ms, 4), ms, pan, sensor=sensor)
    assert res["details"]["shifts_r"] == rows and res["details"]["shifts_c"] == cols
    for key, ref in zip(KEYS, (q2n, q, sam, ergas, drho), strict=True):
        assert res[key] == pytest.approx(ref, rel=1e-9), key


def test_wv3_small_scene_smoke(wv3_scene: tuple[np.ndarray, np.ndarray]) -> None:
    from pansharp_iqa import interp23tap

    ms, pan = wv3_scene
    fused = interp23tap(ms, 4) + 0.5 * (pan - pan.mean())[:, :, None]
    res = evaluate_reprojected(fused, ms, pan, sensor="WV3")
    assert 0.0 < res["R-Q2n"] <= 1.0 and 0.0 < res["R-Q"] <= 1.0
    assert res["R-SAM"] > 0 and res["R-ERGAS"] > 0 and 0 <= res["D_rho"] <= 2
    assert all(0 <= v < 4 for v in res["details"]["shifts_r"] + res["details"]["shifts_c"])


# ----------------------------------------------------------------------------- sensors and inputs
def test_sensors_the_reference_lacks_work_where_the_registry_has_the_values() -> None:
    fused, ms, pan = self_consistent("IKONOS", 4, 1, size=128)
    for name in ("Pleiades", "WV4", "GF2", "WV3[4band]"):  # Pleiades has no PAN GNyq: not needed
        res = evaluate_reprojected(fused, ms, pan, sensor=name)
        assert 0 < res["R-Q2n"] <= 1
    generic = evaluate_reprojected(fused, ms, pan, sensor="none")  # ratio from the sizes
    assert generic["details"]["ms_gnyq"] == [0.3] * 4 and generic["details"]["ratio"] == 4


def test_generic_sensor_needs_a_ratio_when_sizes_do_not_give_one() -> None:
    fused, ms, pan = self_consistent("IKONOS", 4, 1, size=128)
    with pytest.raises(ValueError, match="ratio"):
        evaluate_reprojected(fused[:, :126], ms, pan[:, :126], sensor="none")


@pytest.mark.parametrize(
    "mutate,match",
    [
        (lambda f, m, p: (f, m, p[:-4]), "pan"),
        (lambda f, m, p: (f[:, :-4], m, p[:, :-4]), "ratio x ms"),
        (lambda f, m, p: (f[:, :, :3], m, p), "bands"),
        (lambda f, m, p: (f, m[:, :, :3], p), "bands"),
        (lambda f, m, p: (f[:, :, 0], m, p), "bands"),
        (lambda f, m, p: (f, m[:, :, 0], p), "bands"),
        (lambda f, m, p: (f, m, np.stack([p, p], -1)), "pan"),
        (lambda f, m, p: (f.astype(complex), m, p), "fused: expected an integer or float array"),
        (lambda f, m, p: (np.where(f > 1e9, 0, np.nan), m, p), "NaN"),
        (lambda f, m, p: (f, m, p.astype(str)), "pan: expected an integer or float array"),
    ],
)
def test_bad_inputs_raise_value_errors_naming_the_argument(mutate, match: str) -> None:  # type: ignore[no-untyped-def]
    fused, ms, pan = self_consistent("IKONOS", 4, 1, size=64)
    f, m, p = mutate(fused, ms, pan)
    with pytest.raises(ValueError, match=match):
        evaluate_reprojected(f, m, p, sensor="IKONOS")


def test_bad_sensor_and_ratio() -> None:
    fused, ms, pan = self_consistent("IKONOS", 4, 1, size=64)
    with pytest.raises(ValueError, match="sensor"):
        evaluate_reprojected(fused, ms, pan, sensor=None)
    with pytest.raises(ValueError, match="unknown sensor"):
        evaluate_reprojected(fused, ms, pan, sensor="Sentinel-9")
    with pytest.raises(ValueError, match="8 bands"):
        evaluate_reprojected(fused, ms, pan, sensor="WV2")
    with pytest.raises(ValueError, match="ratio"):
        evaluate_reprojected(fused, ms, pan, sensor="IKONOS", ratio=2)
    with pytest.raises(ValueError, match="ratio"):
        evaluate_reprojected(fused, ms, pan, sensor="IKONOS", ratio=1)


def test_input_error_class_is_the_projects() -> None:
    from pansharp_iqa import InputError

    fused, ms, pan = self_consistent("IKONOS", 4, 1, size=64)
    with pytest.raises(InputError):
        evaluate_reprojected(fused, ms, pan[:-4], sensor="IKONOS")

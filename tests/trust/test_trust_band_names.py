"""Issue 20 item 7: ``band_names`` in dataset.toml are applied (each named band gets its own MTF,
in the order given) and validated against the sensor: a typo or a band named twice is a usage
error; the sensor's own order changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa.io.dataset_config import load_settings
from pansharp_iqa.io.errors import DatasetConfigError
from pansharp_iqa.validation import SensorMismatchError, SettingError, check_band_names
from trust_helpers import HYPOTHESIS, demo, fr_dataset, one_line, run_eval, write_toml

IKONOS = ["Blue", "Green", "Red", "NIR"]


def _settings(tmp_path, **kw):
    write_toml(tmp_path, **{"sensor": "IKONOS", "ratio": 4, "bits": 11, "resolution": "full", **kw})
    return load_settings(tmp_path)


@settings(max_examples=12, **HYPOTHESIS)
@given(order=st.permutations(IKONOS))
def test_band_names_are_applied_in_their_order(tmp_path_factory, order):
    s = _settings(tmp_path_factory.mktemp("bn"), band_names=[b.lower() for b in order])
    sensor = s.resolved_sensor()
    gnyq = dict(zip(IKONOS, pi.get_sensor("IKONOS").ms_gnyq, strict=True))
    assert tuple(sensor.ms_gnyq) == tuple(gnyq[b] for b in order)
    if list(order) == IKONOS:
        assert sensor.name == "IKONOS"  # the sensor's own order: the sensor itself, card unchanged


def test_reversed_band_names_change_the_numbers_that_depend_on_the_mtf(tmp_path, capsys):
    d = demo()
    data, method = fr_dataset(tmp_path, {"s.npy": d["fr_s"]}, ms=d["ms_s"], pan=d["pan_s"], sensor="IKONOS",
                              band_names=IKONOS[::-1])
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    assert code == 0
    reversed_sensor = pi.get_sensor("IKONOS").select_bands(IKONOS[::-1])
    expected = pi.evaluate_full(d["fr_s"], d["ms_s"], d["pan_s"], sensor=reversed_sensor)
    default = pi.evaluate_full(d["fr_s"], d["ms_s"], d["pan_s"], sensor="IKONOS")
    got = pairs[("s", "m")]["metrics"]
    assert got["D_lambda_K"] == pytest.approx(expected["D_lambda_K"], rel=1e-12)
    assert got["D_lambda_K"] != pytest.approx(default["D_lambda_K"], rel=1e-6)
    assert pairs[("s", "m")]["protocol"]["sensor"]["band_names"] == IKONOS[::-1]


@pytest.mark.parametrize("names, message, key", [
    (["Blue", "Green", "Red", "NIR3"], "sensor 'IKONOS' has no band 'NIR3' (dataset.toml band_names); its bands are "
                                       "['Blue', 'Green', 'Red', 'NIR'] (closest: 'NIR')", "no band 'NIR3'"),
    (["Blue", "Green", "green", "NIR"], "lists band 'green' twice", "twice"),
    ("Blue,Green,Red,NIR", "must be a list of band names", "list of band names"),
])
def test_typos_and_duplicates_are_usage_errors(tmp_path, capsys, names, message, key):
    with pytest.raises(DatasetConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        _settings(tmp_path, band_names=names)
    d = demo()
    data, method = fr_dataset(tmp_path / "cli", {"s.npy": d["fr_s"]}, ms=d["ms_s"], pan=d["pan_s"], sensor="IKONOS",
                              band_names=names)
    code, _, err = run_eval(capsys, data, method, tmp_path / "o")
    assert code == 2 and key in one_line(err)


def test_wv2_typo_names_the_closest_band_and_the_library_refuses_duplicates():
    with pytest.raises(SensorMismatchError, match="closest: 'NIR2'"):
        check_band_names(pi.get_sensor("WV2"), ["Blue", "NIR3"])
    with pytest.raises(SettingError, match="twice"):
        pi.get_sensor("WV2").select_bands(["Blue", "Blue", "Red", "NIR1"])
    with pytest.raises(SettingError, match="twice"):
        pi.get_sensor("WV3[Blue,Blue]")
    assert pi.get_sensor("WV3[4band]").n_bands == 4  # subsets by name still work


def test_the_generic_sensor_takes_distinct_labels(tmp_path):
    write_toml(tmp_path, sensor="none", ratio=4, bits=11, resolution="full", band_names=["b1", "b2", "b3", "b4"])
    assert load_settings(tmp_path).resolved_sensor().is_generic
    write_toml(tmp_path, sensor="none", ratio=4, bits=11, resolution="full", band_names=["b1", "b1"])
    with pytest.raises(DatasetConfigError, match="twice"):
        load_settings(tmp_path)


def test_band_names_of_another_count_fail_the_scene(tmp_path, capsys):
    d = demo()
    data, method = fr_dataset(tmp_path, {"s.npy": d["fr_s"]}, ms=d["ms_s"], pan=d["pan_s"], sensor="IKONOS",
                              band_names=["Blue", "Green", "Red"])
    code, _, err = run_eval(capsys, data, method, tmp_path / "o")  # every scene fails: once, before the run
    assert code == 2 and "band_names lists 3" in one_line(err) and not (tmp_path / "o").exists()
    assert np.isfinite(pi.evaluate_full(d["fr_s"], d["ms_s"], d["pan_s"], sensor="IKONOS")["HQNR"])

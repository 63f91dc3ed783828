"""pansharp_iqa.io: what files record about themselves, and the settings rules of dataset.toml."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io

from pansharp_iqa.io.dataset_config import load_settings, parse_scale
from pansharp_iqa.io.errors import DatasetConfigError
from pansharp_iqa.io.metadata import Recorded, check_recorded, read_recorded, same_sensor
from pansharp_iqa.validation import MetadataConflictError


def _toml(folder, **kv):
    (folder / "dataset.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in kv.items()))


def test_mat_files_record_sensor_ratio_and_bits(tmp_path):
    path = tmp_path / "a.mat"
    scipy.io.savemat(path, {"I_MS": np.zeros((4, 4, 4)), "sensor": "IKONOS", "ratio": 4.0, "L": 11.0})
    rec = read_recorded(path)
    assert (rec.sensor, rec.ratio, rec.bits, rec.scale) == ("IKONOS", 4, 11, None)
    scipy.io.savemat(tmp_path / "b.mat", {"I_MS": np.zeros((4, 4, 4))})
    assert read_recorded(tmp_path / "b.mat").as_settings() == {}


def test_h5_attributes_of_nlrnet_files(tmp_path):
    import h5py

    with h5py.File(tmp_path / "v.h5", "w") as f:
        f.create_dataset("gt", data=np.zeros((1, 4, 8, 8)))
        f.attrs.update({"layout": "pansharp_iqa.nlrnet/PanCollection-v1", "sensor": "WV3[4band]", "ratio": 4,
                        "bits": 11, "normalised_by": 2047.0})
    rec = read_recorded(tmp_path / "v.h5")
    assert rec == Recorded("v.h5", sensor="WV3[4band]", ratio=4, bits=11, scale=2047.0, resolution="reduced")


def test_contradictions_are_errors_but_aliases_and_band_subsets_agree():
    rec = Recorded("x.mat", sensor="WV3", ratio=4, bits=11)
    check_recorded(rec, {"sensor": "WorldView-3[4band]", "ratio": 4.0, "bits": 11}, {})
    check_recorded(rec, {"sensor": "QB"}, {"sensor": "default"})  # not the user's setting
    with pytest.raises(MetadataConflictError, match="--bits says bits = 12 but x.mat records 11"):
        check_recorded(rec, {"bits": 12}, {"bits": "flag"})
    assert same_sensor("quickbird", "QB") and not same_sensor("QB", "WV2")


def test_h5_dataset_settings_come_from_the_file_and_flags_must_agree(tmp_path):
    import h5py

    path = tmp_path / "val.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("gt", data=np.zeros((1, 4, 8, 8)))
        f.attrs.update({"layout": "pansharp_iqa.nlrnet/PanCollection-v1", "sensor": "none", "ratio": 4,
                        "bits": 11, "normalised_by": 2047.0})
    s = load_settings(path)
    assert (s.sensor, s.ratio, s.bits, s.resolution, s.input_scale) == ("none", 4, 11, "reduced", 2047.0)
    assert s.sources["sensor"] == "val.h5 attributes"
    with pytest.raises(DatasetConfigError, match="--ratio says ratio = 8 but val.h5 records 4"):
        load_settings(path, {"ratio": 8})


def test_one_ratio_rule_in_dataset_settings(tmp_path):
    _toml(tmp_path, sensor="none", ratio=3, bits=11, resolution="reduced")
    assert load_settings(tmp_path).ratio == 3  # reduced resolution: any integer >= 2, as in the library
    _toml(tmp_path, sensor="none", ratio=3, bits=11, resolution="full")
    with pytest.raises(DatasetConfigError, match="power of two"):
        load_settings(tmp_path)
    _toml(tmp_path, sensor="none", ratio=1, bits=11, resolution="reduced")
    with pytest.raises(DatasetConfigError, match="ratio"):
        load_settings(tmp_path)


def test_one_bits_rule_in_dataset_settings(tmp_path):
    # the library takes 1..16 bits: a dataset saying 20 is one usage error, not a failure per scene
    _toml(tmp_path, sensor="none", ratio=4, bits=20, resolution="reduced")
    with pytest.raises(DatasetConfigError, match=r"1\.\.16.*--bits or dataset.toml 'bits'"):
        load_settings(tmp_path)
    _toml(tmp_path, sensor="none", ratio=4, bits=16, resolution="reduced")
    assert load_settings(tmp_path).bits == 16


def test_scale_declarations():
    assert parse_scale("unit", 11) == (2047.0, "unit") and parse_scale("dn", 11) == (1.0, "dn")
    assert parse_scale(255, 8) == (255.0, "255")
    for bad in ("percent", -1, 0, True):
        with pytest.raises(DatasetConfigError):
            parse_scale(bad, 11)

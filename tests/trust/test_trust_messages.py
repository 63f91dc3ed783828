"""Issue 20 items 15-17 (library side): fixes that can be followed, reasons that are right, and one
rule for integer settings in the library, dataset.toml and the flags of pansharp-eval."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
from hypothesis import given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.validation import ScaleError, SettingError, integer_setting
from trust_helpers import HYPOTHESIS, demo, fr, one_line, rr, rr_dataset, run_eval, values

# ----------------------------------------------------------------------------- item 15


def test_scale_given_for_dn_data_says_drop_scale():
    d = demo()
    with pytest.raises(ScaleError, match=r"the stored values \(maximum 2046\) already are digital numbers: drop "
                                         r"scale=2047") as err:
        rr(d["rr"], scale=2047)
    assert "at least 22" not in str(err.value)
    with pytest.raises(ScaleError, match=r"exceeds 65535, where .* uint16 cast .* drop scale=2047"):
        fr(d["fr_s"], scale=2047)


def test_one_image_off_with_scale_given_says_scale_multiplies_both():
    d = demo()
    with pytest.raises(ScaleError, match=r"scale=2047 multiplies every input alike, so it cannot bring one image "
                                         r"to the other's scale\): multiply it by about"):
        rr(d["rr"] / 2047, d["gt"], scale=2047)


def test_values_no_bit_depth_holds_are_named_as_such():
    d = demo()
    with pytest.raises(ScaleError, match="no bit depth up to 16 holds it") as err:
        rr(d["rr"] * 2047, d["gt"] * 2047)
    assert "at least" not in str(err.value)


def test_pansharp_eval_says_to_declare_dn_for_dn_inputs_declared_scaled(tmp_path, capsys):
    data, method = rr_dataset(tmp_path, {"s.npy": demo()["rr"]}, scale=2047, result_scale=2047)
    code, _, err = run_eval(capsys, data, method, tmp_path / "o")  # every scene fails: once, before the run
    assert code == 2 and "declare scale = 'dn'" in one_line(err) and not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- item 16 (library side)


def test_a_mat_or_missing_path_given_to_the_library_is_named_as_such(tmp_path):
    d = demo()
    scipy.io.savemat(tmp_path / "scene.mat", {"I_GT": d["gt"], "I_F": d["rr"]})
    with pytest.raises(DataError, match=r"scene.mat is a MATLAB file, which holds named arrays.*scipy.io.loadmat") as e:
        pi.evaluate_reduced(tmp_path / "scene.mat", d["gt"], ratio=4, bits=11)
    assert "re-download" not in str(e.value)
    with pytest.raises(DataError, match="nothing.tif does not exist"):
        pi.evaluate_reduced(tmp_path / "nothing.tif", d["gt"], ratio=4, bits=11)


def test_result_files_are_found_whatever_the_case_of_their_extension(tmp_path, capsys):
    d = demo()
    data, method = rr_dataset(tmp_path, {})
    with open(method / "s.NPY", "wb") as fh:  # np.save(path) would append ".npy"
        np.save(fh, d["rr"])
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    assert code == 0 and pairs[("s", "m")]["metrics"]["Q2n"] == pytest.approx(rr(d["rr"])["Q2n"], rel=1e-12)
    np.save(method / "s.npy", d["rr"])
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o2")
    assert code == 1 and "several result files" in pairs[("s", "m")]["reason"]


def test_an_h5_result_in_a_group_is_found(tmp_path, capsys):
    import h5py

    d = demo()
    data, method = rr_dataset(tmp_path, {})
    with h5py.File(method / "s.h5", "w") as f:
        f.create_dataset("results/fused", data=d["rr"])
        f.create_dataset("meta/ms", data=d["ms_lr"])
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    assert code == 0, pairs
    with h5py.File(method / "s.h5", "a") as f:
        f.create_dataset("other/fused", data=d["rr"])
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o2")
    assert code == 1 and "several arrays are named 'fused'" in pairs[("s", "m")]["reason"]
    with h5py.File(method / "s.h5", "w") as f:
        f.attrs["note"] = "empty"
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o3")
    assert code == 1 and "holds no numeric array (looked at every dataset" in pairs[("s", "m")]["reason"]


# ----------------------------------------------------------------------------- item 17


@settings(max_examples=15, **HYPOTHESIS)
@given(ratio=st.sampled_from([4, 4.0, "4", " 4 ", np.int64(4), np.float32(4.0), "4.0"]))
def test_one_integer_rule_in_the_library(ratio):
    d = demo()
    assert integer_setting("ratio", ratio) == 4
    assert values(pi.evaluate_reduced(d["rr"], d["gt"], ratio=ratio, bits=str(11))) == values(rr(d["rr"]))


@pytest.mark.parametrize("bad", [4.5, "4.5", "four", True, None, "", 1])
def test_non_integers_are_refused_alike(bad):
    d = demo()
    with pytest.raises(SettingError, match="ratio"):
        pi.evaluate_reduced(d["rr"], d["gt"], ratio=bad, bits=11)


@pytest.mark.parametrize("toml_ratio, flag", [("4", None), (4.0, None), (4, "4.0"), (4, "4")])
def test_one_integer_rule_in_dataset_toml_and_flags(tmp_path, capsys, toml_ratio, flag):
    d = demo()
    data, method = rr_dataset(tmp_path, {"s.npy": d["rr"]}, ratio=toml_ratio, bits=11.0)
    extra = ("--ratio", flag) if flag else ()
    code, pairs, err = run_eval(capsys, data, method, tmp_path / "o", *extra)
    assert code == 0, err
    assert pairs[("s", "m")]["metrics"]["ERGAS"] == pytest.approx(rr(d["rr"])["ERGAS"], rel=1e-12)


@pytest.mark.parametrize("where", ["toml", "flag"])
def test_a_fractional_ratio_is_one_usage_error_line(tmp_path, capsys, where):
    d = demo()
    data, method = rr_dataset(tmp_path, {"s.npy": d["rr"]}, ratio=4.5 if where == "toml" else 4)
    code, _, err = run_eval(capsys, data, method, tmp_path / "o", *(("--ratio", "4.5") if where == "flag" else ()))
    assert code == 2 and "ratio must be an integer >= 2" in one_line(err)


def test_docs_state_the_code_s_limits():
    from pathlib import Path

    from pansharp_iqa.rules import RULES, rule_table

    root = Path(__file__).resolve().parents[2]
    table = (root / "docs" / "validation.md").read_text(encoding="utf-8")
    assert rule_table() in table  # the doc lists the rule table as the code has it
    assert len(RULES) <= 8  # a short table
    assert "factor 8" not in (root / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "docs/validation.md" in (root / "README.md").read_text(encoding="utf-8")

"""Issue 31, the second set of wrong and legitimate inputs (an independent tester's ~130 variants, /tmp/redteam).

One test per class, both sides: the mistake refused with its cause named (both declarations, where two
contradict), and its legitimate neighbour scored with the number computed independently of the evaluation path:
SAM and ERGAS in numpy (toolbox 2020 definitions, after its 20/21-pixel border cut), Q2n by the index function
``pansharp_iqa.q2n`` on the hand-corrected arrays, D_lambda and D_s by ``pansharp_iqa.d_lambda``/``d_s``; in the
library (in memory where arrays carry the case, tile-wise and from files where only files do) and in
``pansharp-eval``. Synthetic, seeded, 11-bit-like scenes only (``test_trust_declarations.scene``): no shared data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import ndimage

import pansharp_iqa as pi
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.results import check_numbering
from test_trust_declarations import NAMES, full_scene, scene, sidecar, write
from trust_helpers import one_line, run_eval, write_toml

rasterio = pytest.importorskip("rasterio")
h5py = pytest.importorskip("h5py")

SWAP = [1, 0, 3, 2, 5, 4, 7, 6]  # neighbouring bands swapped: levels within 1.6x, so no scale rule can see it
SWAPPED = tuple(NAMES[i] for i in SWAP)
CUT = (20, 21)  # toolbox 2020, reduced resolution: I(dim_cut:end-dim_cut) with dim_cut = 21 (20 leading, 21 trailing)


def independent(fused: Any, gt: Any, *, q2n_fused: Any = None) -> dict[str, float]:
    """Q2n (the index function), SAM and ERGAS (numpy, the toolbox's formulas) after the border cut."""
    f = np.asarray(fused, dtype=np.float64)[CUT[0]:-CUT[1], CUT[0]:-CUT[1]]
    g = np.asarray(gt, dtype=np.float64)[CUT[0]:-CUT[1], CUT[0]:-CUT[1]]
    num, den = (g * f).sum(-1), np.sqrt((g * g).sum(-1) * (f * f).sum(-1))
    ok = den > 0  # the toolbox leaves out pixels of zero norm
    sam = float(np.degrees(np.arccos(np.clip(num[ok] / den[ok], -1, 1)).mean()))
    ergas = float(100 / 4 * np.sqrt((((g - f) ** 2).mean((0, 1)) / g.mean((0, 1)) ** 2).mean()))
    qf = f if q2n_fused is None else np.asarray(q2n_fused, dtype=np.float64)[CUT[0]:-CUT[1], CUT[0]:-CUT[1]]
    return {"Q2n": float(pi.q2n(g, qf)), "SAM": sam, "ERGAS": ergas}


def same(got: dict[str, Any], want: dict[str, float], rel: float = 1e-9) -> None:
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=rel), k


def rr(fused: Any, gt: Any, **kw: Any) -> dict[str, Any]:
    return pi.evaluate_reduced(fused, gt, ratio=4, bits=11, **kw)


def folder(tmp_path: Path, name: str, **toml: Any) -> tuple[Path, Path]:
    """``name/data`` (a dataset.toml: WV2, 11 bits, reduced, DN results, then ``toml``) and ``name/res/m``."""
    data, method = tmp_path / name / "data", tmp_path / name / "res" / "m"
    data.mkdir(parents=True)
    method.mkdir(parents=True)
    write_toml(data, **{"sensor": "WV2", "ratio": 4, "bits": 11, "resolution": "reduced", "result_scale": "dn",
                        **toml})
    return data, method


def fused64() -> np.ndarray:
    return scene()["fused"].astype(np.float64)


# ------------------------------------------------------------------------- 1. a named result, a reference naming none


def test_a_named_result_beside_a_reference_naming_none_is_refused(tmp_path, capsys):
    d = scene()
    want = independent(d["fused"], d["gt"])
    gt = write(tmp_path / "gt.tif", d["gt"])  # names no band
    res = write(tmp_path / "r.tif", d["fused"][..., SWAP], names=SWAPPED)  # stored Blue first, named so
    refusal = r"fused \(r.tif\) names its bands Blue, Coastal, Yellow, .*, NIR1 but reference \(gt.tif\) names none"
    with pytest.raises(DataError, match=refusal):  # before: scored in storage order (a wrong number, silently)
        rr(str(res), str(gt), tiled="always")
    with rasterio.open(res) as r, rasterio.open(gt) as g, pytest.raises(DataError, match="names none"):
        rr(r, g, tiled="auto")
    # the neighbours: the reference names its bands (the result is put in its order), or neither names any
    named = write(tmp_path / "gt_named.tif", d["gt"], names=NAMES)
    same(rr(str(res), str(named), tiled="always"), want)
    plain = write(tmp_path / "r_plain.tif", d["fused"])
    same(rr(str(plain), str(gt), tiled="always"), want)
    # pansharp-eval: the sensor's registry order stands for an undescribed GT; the generic sensor has none
    for sensor, mode in (("WV2", "never"), ("WV2", "always"), ("none", "always")):
        data, method = folder(tmp_path, f"cli_{sensor}_{mode}", sensor=sensor)
        write(data / "s_gt.tif", d["gt"])
        write(method / "s.tif", d["fused"][..., SWAP], names=SWAPPED)
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o_{sensor}_{mode}", "--tiled", mode)
        if sensor == "WV2":
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], want)
        else:
            reason = pairs[("s", "m")]["reason"]
            assert code == 1 and "s.tif names its bands Blue, Coastal, Yellow" in reason and \
                "s_gt.tif names none" in reason, reason


# ----------------------------------------------------------------------------- 2. one scene's files, two band orders


def test_one_scene_s_files_naming_their_bands_in_two_orders_are_refused(tmp_path, capsys):
    d = scene()
    for ms_order, mode in (("swapped", "never"), ("swapped", "always"), ("registry", "never")):
        data, method = folder(tmp_path, f"{ms_order}_{mode}")
        write(data / "s_gt.tif", d["gt"], names=NAMES)
        order = SWAP if ms_order == "swapped" else list(range(8))
        write(data / "s_ms.tif", d["ms"][..., order], names=[NAMES[i] for i in order])
        write(data / "s_pan.tif", d["pan"])
        np.save(method / "s.npy", d["fused"][..., order])  # unnamed, in the MS's order (as `baselines` makes it)
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o_{ms_order}_{mode}", "--tiled", mode)
        entry = pairs[("s", "m")]
        if ms_order == "swapped":  # before: scored in storage order against the GT (a wrong number, silently)
            assert code == 1 and entry["status"] != "ok", entry
            assert entry["reason"].startswith("s_gt.tif names its bands Coastal, Blue, Green") and \
                "but s_ms.tif names them Blue, Coastal, Yellow, Green" in entry["reason"], entry["reason"]
        else:  # the neighbour: both in one order
            assert code == 0, entry
            same(entry["metrics"], independent(d["fused"], d["gt"]))


# ----------------------------------------------------------------------------- 3. a scale tag and its sidecar


@pytest.mark.parametrize("tag", [1.25, 2.0])
def test_a_scale_tag_contradicted_by_its_sidecar_is_refused_naming_both(tmp_path, capsys, tag):
    d = scene()
    stored = fused64() / tag  # the file's own tags: multiply by tag
    want = independent(stored * tag, d["gt"])
    gt = write(tmp_path / "gt.tif", d["gt"])
    bad = sidecar(write(tmp_path / "r.tif", stored, scales=[tag] * 8, offsets=[0] * 8), 8, Scale=1, Offset=0)
    both = rf"r.tif: its GeoTIFF tags declare the scale/offset raw x {tag:g} \+ 0 but its sidecar r.tif.aux.xml"
    with pytest.raises(DataError, match=both):  # before: the sidecar's 1 silently (Q2n 0.73 for 0.91 at 1.25)
        rr(str(bad), str(gt), tiled="always")
    with rasterio.open(bad) as r, pytest.raises(DataError, match=both):
        rr(r, str(gt), tiled="auto")
    # the neighbours: the tags alone, and a sidecar that says the same
    alone = write(tmp_path / "alone.tif", stored, scales=[tag] * 8, offsets=[0] * 8)
    same(rr(str(alone), str(gt), tiled="always"), want)
    agree = sidecar(write(tmp_path / "agree.tif", stored, scales=[tag] * 8, offsets=[0] * 8), 8, Scale=tag, Offset=0)
    same(rr(str(agree), str(gt), tiled="always"), want)
    for side in (1, tag):
        data, method = folder(tmp_path, f"cli_{side}")
        write(data / "s_gt.tif", d["gt"])
        sidecar(write(method / "s.tif", stored, scales=[tag] * 8, offsets=[0] * 8), 8, Scale=side, Offset=0)
        code, pairs, err = run_eval(capsys, data, method, tmp_path / f"o_{side}")
        if side == 1:
            text = pairs[("s", "m")]["reason"]  # the result's: that pair fails
            assert code == 1 and f"s.tif: its GeoTIFF tags declare the scale/offset raw x {tag:g} + 0" in text, text
            assert "its sidecar s.tif.aux.xml" in text and "result_scale" not in text, text
        else:
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], want)


# ----------------------------------------------------------------------------- 4. a no-data tag and its sidecar


def test_a_nodata_tag_contradicted_by_its_sidecar_is_refused_naming_both(tmp_path, capsys):
    d = scene()
    assert (d["gt"] == 2047).any()  # saturated pixels, which the file's own no-data value 2047 would leave out
    bad = sidecar(write(tmp_path / "gt.tif", d["gt"], nodata=2047), 8, NoDataValue=0)
    both = "gt.tif: its GeoTIFF tags declare the no-data value 2047.0 but its sidecar gt.tif.aux.xml declares 0.0"
    with pytest.raises(DataError, match=both):  # before: GDAL's sidecar 0 silently, the 2047 pixels scored
        rr(fused64(), str(bad), tiled="always")
    # the neighbour: both declare 2047, which no pixel holds
    gt = np.minimum(d["gt"], 2046)
    agree = sidecar(write(tmp_path / "agree.tif", gt, nodata=2047), 8, NoDataValue=2047)
    same(rr(fused64(), str(agree), tiled="always"), independent(d["fused"], gt))
    for name, image, side in (("bad", d["gt"], 0), ("agree", gt, 2047)):
        data, method = folder(tmp_path, name)
        sidecar(write(data / "s_gt.tif", image, nodata=2047), 8, NoDataValue=side)
        np.save(method / "s.npy", d["fused"])
        code, pairs, err = run_eval(capsys, data, method, tmp_path / f"o_{name}")
        if name == "bad":
            text = one_line(err)  # the scene's: refused before any evaluation
            assert code == 2 and not pairs, text
            assert "s_gt.tif: its GeoTIFF tags declare the no-data value 2047.0 but its sidecar s_gt.tif.aux.xml " \
                "declares 0.0" in text, text
        else:
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], independent(d["fused"], gt))


# ----------------------------------------------------------------------------- 5. an h5py dataset's CF attributes


@pytest.mark.parametrize("mode", ["always", "auto"])
def test_an_h5py_dataset_passed_in_declares_its_cf_attributes(tmp_path, capsys, mode):
    d = scene()
    fused = fused64()
    s = np.array([0.5, 1, 2, 4, 0.25, 1, 1, 3.0])
    o = np.array([10, 0, -5, 20, 0, 0, 100, 0.0])
    wrong = np.ones(8)
    wrong[7] = 2  # DN stored, band 8 declared x 2: a wrong attribute
    with h5py.File(tmp_path / "r.h5", "w") as f:
        f.create_dataset("scalar", data=fused / 1.25).attrs["scale_factor"] = 1.25
        f.create_dataset("per_band", data=(fused - o) / s).attrs.update({"scale_factor": s, "add_offset": o})
        f.create_dataset("wrong", data=fused).attrs["scale_factor"] = wrong
        f.create_dataset("plain", data=fused)
    with h5py.File(tmp_path / "r.h5", "r") as f:
        # before: the attributes were ignored (Q2n 0.73 for 0.91; per band refused as bands on another scale)
        same(rr(f["scalar"], d["gt"], tiled=mode), independent(f["scalar"][()] * 1.25, d["gt"]))
        same(rr(f["per_band"], d["gt"], tiled=mode), independent(f["per_band"][()] * s + o, d["gt"]))
        same(rr(f["plain"], d["gt"], tiled=mode), independent(fused, d["gt"]))
        with pytest.raises(pi.InputError, match=r"declared scale 2 on band 8 \(h5 attributes "
                                                r"scale_factor/add_offset of r.h5:/wrong\) contradicts the data"):
            rr(f["wrong"], d["gt"], tiled=mode)  # before: scored
    for key, data_ in (("per_band", (fused - o) / s), ("wrong", fused)):
        data, method = folder(tmp_path, f"cli_{key}")
        write(data / "s_gt.tif", d["gt"])
        with h5py.File(method / "s.h5", "w") as f:
            f.create_dataset("fused", data=data_).attrs.update(
                {"scale_factor": s, "add_offset": o} if key == "per_band" else {"scale_factor": wrong})
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o_{key}", "--tiled", mode)
        if key == "per_band":
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], independent(data_ * s + o, d["gt"]))
        else:
            reason = pairs[("s", "m")]["reason"]
            assert code == 1 and "declared scale 2 on band 8 (h5 attributes scale_factor/add_offset of s.h5" in reason


# ----------------------------------------------------------------------------- 6. offset data, undershoot


def _dark_edge_pan(dark: float) -> np.ndarray:
    """The full-resolution PAN with a dark strip, halved and upsampled again by cubic convolution (its undershoot)."""
    pan = full_scene()["pan"].copy()
    pan[:, :40] = dark
    return ndimage.zoom(pan[::2, ::2], 2, order=3, mode="nearest")


def test_offset_data_are_refused_and_rounding_or_resampling_undershoot_scored(tmp_path, capsys):
    d = scene()
    fused, g = fused64(), d["gt"].astype(np.float64)
    # GT - 100: its minimum 2.7 % of its maximum below 0, within a resampled input's undershoot (5 %) but not an
    # original product's rounding (1 %); GT - 150 (the tester's): 5.4 %
    assert -0.05 < (g.min() - 100) / (g.max() - 100) < -0.01
    for off in (100, 150):
        for mode in ("never", "always"):
            with pytest.raises(pi.InputError, match=rf"reference: minimum {g.min() - off:g} .* an original product"):
                rr(fused, g - off, tiled=mode)  # before: scored, SAM and ERGAS of the offset
    one = g.copy()
    one[40, 40, 3] = -3  # rounding: the neighbour
    for mode in ("never", "always"):
        same(rr(fused, one, tiled=mode), independent(fused, one))
    # full resolution: an MS (and every input) offset by -200 DN, 7.4 % of the maximum below 0; a PAN offset so
    # that its minimum is -100
    f = full_scene()
    ms, pan = f["ms"], f["pan"]
    for mode in ("never", "always"):
        for args, who in (((f["fused"], ms - 200, pan), "ms"), ((f["fused"] - 200, ms - 200, pan - 200), "ms"),
                          ((f["fused"], ms, pan - pan.min() - 100), "pan")):
            with pytest.raises(pi.InputError, match=rf"^{who}: minimum .* negative beyond resampling undershoot"):
                pi.evaluate_full(*args, sensor="WV2", ratio=4, bits=11, tiled=mode)
    # the neighbour: a PAN resampled by cubic convolution next to a dark edge undershoots by about 40 DN (4 %)
    up = _dark_edge_pan(25.0)
    assert -45 < up.min() < -35
    want = {"D_lambda": pi.d_lambda(f["fused"], ms, ratio=4), "D_s": pi.d_s(f["fused"], ms, up, ratio=4, sensor="WV2")}
    for mode in ("never", "always"):
        same(pi.evaluate_full(f["fused"], ms, up, sensor="WV2", ratio=4, bits=11, tiled=mode), want)
    # pansharp-eval, both resolutions, both sides
    for name, gt in (("gt_offset", g - 100), ("gt_rounding", one)):
        data, method = folder(tmp_path, name)
        np.save(data / "s_gt.npy", gt)
        np.save(method / "s.npy", fused)
        code, pairs, err = run_eval(capsys, data, method, tmp_path / f"o_{name}")
        if name == "gt_offset":
            text = one_line(err)
            assert code == 2 and not pairs and "s_gt.npy: minimum -52" in text and "an original product" in text, text
        else:
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], independent(fused, one))
    for name, ms_, pan_ in (("ms_offset", ms - 200, pan), ("pan_undershoot", ms, up)):
        data, method = folder(tmp_path, name, resolution="full")
        np.save(data / "s_ms.npy", ms_)
        np.save(data / "s_pan.npy", pan_)
        np.save(method / "s.npy", f["fused"])
        code, pairs, err = run_eval(capsys, data, method, tmp_path / f"o_{name}")
        if name == "ms_offset":
            text = one_line(err)
            assert code == 2 and not pairs, text
            assert "s_ms.npy: minimum -136 is negative beyond resampling undershoot" in text, text
        else:
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], want)


# ----------------------------------------------------------------------------- 7. one band standardised


def test_one_standardised_fused_band_is_refused_naming_it(tmp_path, capsys):
    d = scene()
    fused = fused64()
    z = fused.copy()
    z[..., 1] = (z[..., 1] - z[..., 1].mean()) / z[..., 1].std()  # band 2 left standardised (mean 0, std 1)
    low = fused.copy()
    low[..., 1] -= low[..., 1].min() + 5  # the neighbour: band 2 biased low, 5 DN below 0 at its minimum
    for mode in ("never", "always"):
        with pytest.raises(pi.InputError, match=r"^fused band 2 \(of 8\): values from -\d.* standardised or "
                                                r"mean-subtracted data"):
            rr(z, d["gt"], tiled=mode)  # before: scored (the whole image's mean is far from 0)
        same(rr(low, d["gt"], tiled=mode), independent(low, d["gt"]))
    for name, image in (("z", z), ("low", low)):
        data, method = folder(tmp_path, name)
        write(data / "s_gt.tif", d["gt"])
        np.save(method / "s.npy", image)
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o_{name}", "--tiled", "always")
        if name == "z":
            reason = pairs[("s", "m")]["reason"]
            assert code == 1 and reason.startswith("s.npy band 2 (of 8): values from") and "standardised" in reason
        else:
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], independent(low, d["gt"]))


# ----------------------------------------------------------------------------- 8. a very dark scene


def _matlab_round(x: np.ndarray) -> np.ndarray:
    """MATLAB's uint16(): round half away from zero, saturate at 0."""
    return np.clip(np.sign(x) * np.floor(np.abs(x) + 0.5), 0, 65535)


def test_a_fusion_of_very_dark_dn_is_scored(tmp_path, capsys):
    gt = scene()["gt"]
    dark = np.round(gt / gt.max(axis=(0, 1)) * 3).astype(np.uint16)  # integer DN 0..3 in every band
    fused = np.clip(dark + np.random.default_rng(8).normal(0, 0.25, dark.shape), -0.49, 3.23)
    assert dark.max() == 3 and fused.min() == -0.49 and fused.max() == 3.23
    want = independent(fused, dark, q2n_fused=_matlab_round(fused))  # Q2n casts to uint16 as the toolbox does
    for mode in ("never", "always"):
        same(rr(fused, dark, tiled=mode), want)  # before: refused as 'a unit scale'
    # the other side: a fused image of [0, 1] values beside DN is still refused (band_scale's finding)
    with pytest.raises(pi.InputError, match="fused is on another scale than reference"):
        rr(fused64() / 2047, gt)
    data, method = folder(tmp_path, "dark")
    write(data / "s_gt.tif", dark)
    np.save(method / "s.npy", fused)
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    assert code == 0, pairs
    same(pairs[("s", "m")]["metrics"], want)


# ----------------------------------------------------------------------------- 9. PanCollection numbering


def _collection(folder_: Path, gts: list[np.ndarray], name: str = "test.h5", toml: bool = True) -> Path:
    """A PanCollection-like test file of ``gts`` (reduced resolution), with a dataset.toml (WV2, 11 bits)."""
    folder_.mkdir(parents=True, exist_ok=True)
    with h5py.File(folder_ / name, "w") as f:
        f["gt"] = np.stack([np.moveaxis(g, -1, 0) for g in gts])
        f["ms"] = np.stack([np.moveaxis(g[2::4, 2::4], -1, 0) for g in gts])
        f["pan"] = np.stack([g.mean(2)[None] for g in gts])
    if toml:
        write_toml(folder_, sensor="WV2", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    return folder_ / name


def test_pancollection_results_numbered_from_1_with_item_0_missing_are_refused(tmp_path, capsys):
    import scipy.io

    gts = [scene()["gt"].astype(np.float64) * k for k in (1.0, 0.9, 0.8, 0.7)]
    fused = [g + np.random.default_rng(i).normal(0, 10 * (i + 1), g.shape) for i, g in enumerate(gts)]
    h5 = _collection(tmp_path / "data", gts)
    for case, numbers, first in (("from_1", (2, 3, 4), None), ("declared", (2, 3, 4), 1), ("from_0", (0, 1, 2), None)):
        results = tmp_path / case / "NET" / "results"
        results.mkdir(parents=True)
        shift = 0 if case == "from_0" else 1
        for n in numbers:  # items 1..3 (item 0 failed) numbered from 1; items 0..2 (item 3 failed) from 0
            scipy.io.savemat(results / f"output_mulExm_{n}.mat", {"sr": fused[n - shift]})
        if first is not None:
            (results.parent / "method.toml").write_text(f"first_index = {first}\n")
        code, pairs, err = run_eval(capsys, h5, results.parent, tmp_path / f"o_{case}")
        if case == "from_1":  # before: items 2, 3 scored against the results of items 1, 2
            assert code == 2 and not pairs and not (tmp_path / f"o_{case}").exists()
            line = one_line(err)
            assert "output_mulExm_2..4 number the 4 items of the dataset from 1, not from 0 (output_mulExm_4 " \
                "exists, output_mulExm_0 does not)" in line and "declare first_index = 1 in NET/method.toml" in line
            continue
        scored = {1, 2, 3} if case == "declared" else {0, 1, 2}
        assert code == 1  # one item has no result
        for i in range(4):
            entry = pairs[(f"test_{i}", "NET")]
            if i in scored:
                assert entry["status"] == "ok", entry
                same(entry["metrics"], independent(fused[i], gts[i]))
            else:
                assert entry["status"] != "ok" and "missing result" in entry["reason"], entry
    # the library's check, both sides
    with pytest.raises(DataError, match="from 1, not from 0"):
        check_numbering(tmp_path / "from_1" / "NET" / "results", 4, 0)
    check_numbering(tmp_path / "from_1" / "NET" / "results", 4, 1)
    check_numbering(tmp_path / "from_0" / "NET" / "results", 4, 0)


# ----------------------------------------------------------------------------- 10. the source of the bits


def test_pansharp_eval_names_the_source_of_its_bits(tmp_path, capsys):
    import scipy.io

    d = scene()
    gt2, fused2 = d["gt"].astype(np.float64) * 2, fused64() * 2  # 12-bit DN (maximum 4094)
    with pytest.raises(pi.InputError, match=r"maximum 4094 exceeds the 11-bit range \[0, 2047\] \(bits= argument\)"):
        rr(fused2, gt2)  # the library's words
    for bits in (11, 12):
        data, method = folder(tmp_path, f"bits_{bits}", bits=bits)
        write(data / "s_gt.tif", gt2.astype(np.uint16))
        np.save(method / "s.npy", fused2)
        code, pairs, err = run_eval(capsys, data, method, tmp_path / f"o_{bits}")
        if bits == 11:
            line = one_line(err)
            assert code == 2 and "s_gt.tif: maximum 4094 exceeds the 11-bit range [0, 2047] (dataset.toml bits)" \
                in line and "bits= argument" not in line, line
        else:  # the neighbour: the right bits
            assert code == 0, pairs
            same(pairs[("s", "m")]["metrics"], independent(fused2, gt2))
    h5 = _collection(tmp_path / "preset", [gt2], name="test_wv2_multiExm1.h5", toml=False)
    results = tmp_path / "preset" / "NET" / "results"
    results.mkdir(parents=True)
    scipy.io.savemat(results / "output_mulExm_0.mat", {"sr": fused2})
    code, _, err = run_eval(capsys, h5, results.parent, tmp_path / "o_preset", "--preset", "pancollection-wv2")
    line = one_line(err)
    assert code == 2 and "maximum 4094 exceeds the 11-bit range [0, 2047] (preset pancollection-wv2 bits)" in line


# ----------------------------------------------------------------------------- 11. a PAN on another scale


def test_a_pan_off_scale_is_not_told_to_declare_a_scale_that_scales_the_ms_alike(tmp_path, capsys):
    f = full_scene()
    with pytest.raises(pi.InputError, match="pan is on another scale than ms"):
        pi.evaluate_full(f["fused"], f["ms"], f["pan"] / 2, sensor="WV2", ratio=4, bits=11)
    for name, pan, toml in (("half", f["pan"] / 2, {}), ("half_scaled", f["pan"] / 2, {"scale": 2}),
                            ("right", f["pan"], {})):
        data, method = folder(tmp_path, name, resolution="full", **toml)
        np.save(data / "s_ms.npy", f["ms"])
        np.save(data / "s_pan.npy", pan)
        np.save(method / "s.npy", f["fused"])
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o_{name}")
        entry = pairs[("s", "m")]
        if name == "right":
            assert code == 0, entry
            same(entry["metrics"], {"D_lambda": pi.d_lambda(f["fused"], f["ms"], ratio=4),
                                    "D_s": pi.d_s(f["fused"], f["ms"], f["pan"], ratio=4, sensor="WV2")})
            continue
        reason = entry["reason"]
        assert code == 1 and reason.startswith("s_pan.npy is on another scale than s_ms.npy"), reason
        # before: "declare scale = 2 in dataset.toml", which multiplies the MS too (then "scale = 4", and so on)
        assert "declare scale =" not in reason and " scale = " not in reason, reason
        assert "(scale in dataset.toml (or --input-scale) scales s_ms.npy alike, so it cannot bring one image to the " \
            "other's scale)" in reason, reason


# ----------------------------------------------------------------------------- 12. a masked GT: one line


def test_a_gt_with_a_mask_sidecar_is_one_line_on_stderr(tmp_path):
    d = scene()
    cli = [sys.executable, "-c", "import sys; from pansharp_iqa.cli.main import main; sys.exit(main())"]
    env = {**os.environ, "PYTHONWARNINGS": "default"}  # every warning that reaches stderr shows
    for name, hide in (("hidden", True), ("valid", False)):
        data, method = folder(tmp_path, name)
        gt = data / "s_gt.tif"
        with pytest.warns(rasterio.errors.NotGeoreferencedWarning):  # a plain TIFF, as GDAL warns of
            with rasterio.open(gt, "w", driver="GTiff", height=96, width=96, count=8, dtype="uint16") as dst:
                dst.write(np.moveaxis(d["gt"], -1, 0))
        mask = np.full((96, 96), 255, np.uint8)
        if hide:
            mask[60:70, 60:70] = 0
        with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=False), rasterio.open(gt, "r+") as dst:
            dst.write_mask(mask)
        assert Path(f"{gt}.msk").is_file()
        np.save(method / "s.npy", d["fused"])
        out = tmp_path / f"o_{name}"
        run = subprocess.run([*cli, "evaluate", str(data), str(method), "--out", str(out), "--format", "json",
                              "--no-progress"], capture_output=True, text=True, env=env, timeout=300)
        if hide:
            lines = run.stderr.strip().splitlines()
            assert run.returncode == 2 and len(lines) == 1, run.stderr  # before: GDAL's warning, its source lines
            assert "s_gt.tif: 100 pixels are masked out by its GDAL mask band (s_gt.tif.msk)" in lines[0]
            with pytest.raises(DataError, match="100 pixels are masked out by its GDAL mask band"):
                rr(fused64(), str(gt), tiled="always")
        else:  # the neighbour: a mask that hides nothing
            assert run.returncode == 0 and not run.stderr.strip(), run.stderr
            metrics = json.loads((out / "results.json").read_text())["scenes"]["s"]["m"]["metrics"]
            same(metrics, independent(d["fused"], d["gt"]))


def test_a_poor_networks_band_around_zero_is_scored_a_standardised_band_is_not():
    """A band of about the reference band's spread centred on 0 (a barely trained network's band: the
    notebook's smoke-trained NLRNet) is a poor result and gets numbers; the same band with its spread
    collapsed to about 1 (standardised) is refused."""
    d = scene()
    fused = fused64()
    poor = fused.copy()
    band = fused[..., 6]
    poor[..., 6] = band - band.mean()  # centred, the reference's spread: a poor band, not a normalisation
    same(rr(poor, d["gt"], tiled="never"), independent(poor, d["gt"]))
    collapsed = fused.copy()
    collapsed[..., 6] = (band - band.mean()) / (4.0 * band.std())  # spread 1/4 of the band's: standardised-like
    with pytest.raises(pi.InputError, match=r"^fused band 7 \(of 8\): values from .* standardised"):
        rr(collapsed, d["gt"], tiled="never")

"""Issue 31 (files and command line): what files and settings declare is one record per role, applied once.

Each class of the issue on both sides, on synthetic WorldView-2-like scenes (no shared data): band names used
where they decide the order (partial, cased, spaced) and refused where they leave it open or repeat; the
sensor registry's order for an undescribed reference only where the dataset names the sensor; band names of
two sources that contradict refused; the MS's names selecting each band's MTF; GDAL sidecars applied (or
refused without GDAL); PanCollection results numbered from 1 refused unless ``method.toml`` says so; messages
that blame the input a declaration explains and name the declaration. Each number is held against the same
scene with the declaration applied by hand (numpy), evaluated in memory.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pansharp_iqa as pi
from pansharp_iqa.io.declared import band_order, read_declared
from pansharp_iqa.io.errors import DataError
from pansharp_iqa.io.results import load_result
from trust_helpers import HYPOTHESIS, one_line, run_eval, write_toml

rasterio = pytest.importorskip("rasterio")
from rasterio.transform import from_origin  # noqa: E402

NAMES = ("Coastal", "Blue", "Green", "Yellow", "Red", "RedEdge", "NIR1", "NIR2")  # the WV2 registry's order
INDEXES = ("Q2n", "Q", "SAM", "ERGAS", "SCC")


@functools.cache
def scene(size: int = 96) -> dict[str, np.ndarray]:
    """An 8-band 11-bit reference whose bands differ (so that their order matters), a fusion of it, and a
    full-resolution MS (size/4), PAN and fusion, all DN."""
    rng = np.random.default_rng(31)
    from scipy import ndimage

    base = ndimage.zoom(rng.uniform(0, 1, (size // 8, size // 8, 8)), (8, 8, 1), order=3)
    levels = np.linspace(250, 1400, 8)
    gt = np.round(levels * (0.4 + base) + 20 * rng.normal(size=(size, size, 8))).clip(1, 2047).astype(np.uint16)
    fused = (gt + rng.normal(0, 25, gt.shape)).astype(np.float32)
    ms = gt[2::4, 2::4].copy()
    pan = np.round(gt.astype(float).mean(2) + rng.normal(0, 5, (size, size))).clip(1, 2047).astype(np.uint16)
    return {"gt": gt, "fused": fused, "ms": ms, "pan": pan}


def write(path: Path, hwb: np.ndarray, *, names: Any = None, scales: Any = None, offsets: Any = None,
          nodata: float | None = None) -> Path:
    """``hwb`` as GDAL bands with what it declares, written by GDAL (rasterio)."""
    bands = np.moveaxis(np.atleast_3d(hwb), -1, 0)
    with rasterio.open(path, "w", driver="GTiff", height=bands.shape[1], width=bands.shape[2], count=bands.shape[0],
                       dtype=bands.dtype, crs="EPSG:32631", transform=from_origin(593270.0, 5747657.0, 2.0, 2.0),
                       nodata=nodata) as ds:
        ds.write(bands)
        for attr, value in (("descriptions", names), ("scales", scales), ("offsets", offsets)):
            if value is not None:
                setattr(ds, attr, tuple(value))
    return path


def sidecar(path: Path, bands: int, **per_band: Any) -> Path:
    """A GDAL ``<file>.aux.xml`` (PAM) declaring, per band, ``Offset``, ``Scale``, ``NoDataValue``, ``Description``."""
    items = "".join(f'<PAMRasterBand band="{b + 1}">' + "".join(f"<{k}>{v}</{k}>" for k, v in per_band.items())
                    + "</PAMRasterBand>" for b in range(bands))
    Path(f"{path}.aux.xml").write_text(f"<PAMDataset>{items}</PAMDataset>")
    return path


def rr(fused: Any, gt: Any, **kw: Any) -> dict[str, Any]:
    return pi.evaluate_reduced(fused, gt, ratio=4, bits=11, **kw)


def same(got: dict[str, Any], expected: dict[str, Any], rel: float = 1e-9) -> None:
    for k in INDEXES:
        assert got[k] == pytest.approx(float(expected[k]), rel=rel), k


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    d = scene()
    return rr(d["fused"].astype(np.float64), d["gt"])


def _open(path: Path, how: str) -> Any:
    return path if how == "path" else rasterio.open(path)


def dataset(tmp_path: Path, result: Path | None = None, *, gt_names: Any = None, **toml: Any) -> tuple[Path, Path]:
    """``data/s_gt.tif`` (the scene's reference, named ``gt_names``) and ``res/m`` holding ``result`` as s.tif."""
    data, method = tmp_path / "data", tmp_path / "res" / "m"
    data.mkdir(parents=True)
    method.mkdir(parents=True)
    write(data / "s_gt.tif", scene()["gt"], names=gt_names)
    if result is not None:
        result.rename(method / "s.tif")
        if Path(f"{result}.aux.xml").is_file():
            Path(f"{result}.aux.xml").rename(method / "s.tif.aux.xml")
    write_toml(data, **{"sensor": "WV2", "ratio": 4, "bits": 11, "resolution": "reduced", "result_scale": "dn",
                        **toml})
    return data, method


# ----------------------------------------------------------------------------- 1. band names


@settings(max_examples=25, **HYPOTHESIS)
@given(order=st.permutations(range(8)), named=st.sets(st.integers(0, 7), min_size=0, max_size=8))
def test_band_order_uses_what_partial_names_say_and_refuses_what_they_leave_open(order, named):
    result = [NAMES[j] if i in named else None for i, j in enumerate(order)]  # band i of the result is scene band j
    moved = any(order[i] != i for i in named)
    open_ = moved and 8 - len(named) >= 2
    if open_:
        with pytest.raises(DataError, match="leaves the order of its other"):
            band_order(result, NAMES, result_name="r", scene_name="s")
        return
    got = band_order([f"  {n.upper()} " if n else n for n in result], NAMES, result_name="r", scene_name="s")
    if not moved:  # nothing moved: the unnamed bands keep their place (storage order)
        assert got is None or all(order[got[j]] == j for j in range(8) if got[j] in named)
    else:  # at most one band unnamed: the order is determined, and is the true one
        assert [order[i] for i in got] == list(range(8))


@pytest.mark.parametrize("how", ["path", "dataset"])
def test_seven_of_eight_names_reorder_five_are_refused_a_repeat_is_refused(tmp_path, expected, how):
    d = scene()
    gt = write(tmp_path / "gt.tif", d["gt"], names=NAMES)
    flipped = d["fused"][..., ::-1]
    seven = [*NAMES[::-1][:7], ""]  # the last band unnamed: determined
    path = write(tmp_path / f"seven_{how}.tif", flipped, names=[f" {n.lower()}  " for n in seven])
    same(rr(_open(path, how), _open(gt, how)), expected)  # 0.596 / 23.5 before (storage order)
    np.testing.assert_array_equal(load_result(path, d["gt"].shape, like=gt), d["fused"])
    five = [*NAMES[::-1][:5], "", "", ""]  # three bands unnamed in a reversed result: their order is open
    path = write(tmp_path / f"five_{how}.tif", flipped, names=five)
    with pytest.raises(DataError, match="names 5 of its 8 bands .* leaves the order of its other 3 bands open"):
        rr(_open(path, how), _open(gt, how))
    # its neighbour: five names where the scene has them leave every band in place
    path = write(tmp_path / f"five_in_place_{how}.tif", d["fused"], names=[*NAMES[:5], "", "", ""])
    same(rr(_open(path, how), _open(gt, how)), expected)
    twice = write(tmp_path / f"twice_{how}.tif", d["fused"], names=[*NAMES[:7], "blue"])
    with pytest.raises(DataError, match="names two bands 'blue'"):
        rr(_open(twice, how), _open(gt, how))


@pytest.mark.parametrize("mode", ["never", "always"])
def test_an_undescribed_gt_takes_the_registry_order_where_the_dataset_names_the_sensor(tmp_path, capsys, expected,
                                                                                       mode):
    d = scene()
    result = write(tmp_path / "r.tif", d["fused"][..., ::-1], names=NAMES[::-1])
    data, method = dataset(tmp_path, result)  # s_gt.tif names no band; dataset.toml: sensor WV2
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o", "--tiled", mode)
    assert code == 0, pairs
    same(pairs[("s", "m")]["metrics"], expected)
    assert "the sensor registry's order of WV2 (s_gt.tif names no band)" in pairs[("s", "m")]["protocol"]["band_names"]
    # the other side: the generic sensor names no band, so which of the named result's bands is which GT band is open:
    # refused, naming both (not scored in storage order)
    write_toml(data, sensor="none", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o2", "--tiled", mode)
    assert code == 1 and "s.tif names its bands NIR2" in pairs[("s", "m")]["reason"]
    assert "s_gt.tif names none" in pairs[("s", "m")]["reason"]


# ----------------------------------------------------------------------------- 2. two declarations


def test_band_names_that_contradict_the_files_are_refused_once(tmp_path, capsys, expected):
    d = scene()
    data, method = dataset(tmp_path, write(tmp_path / "r.tif", d["fused"]), gt_names=NAMES,
                           band_names=list(NAMES[::-1]))
    code, _, err = run_eval(capsys, data, method, tmp_path / "o")
    line = one_line(err)
    assert code == 2 and "every scene contradicts" in line and not (tmp_path / "o").exists()
    assert "dataset.toml band_names ['NIR2', 'NIR1'" in line and "s_gt.tif's band names ['Coastal', 'Blue'" in line
    write_toml(data, sensor="WV2", ratio=4, bits=11, resolution="reduced", result_scale="dn", band_names=list(NAMES))
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o2")  # the same names: one declaration, scored
    assert code == 0
    same(pairs[("s", "m")]["metrics"], expected)


@functools.cache
def full_scene() -> dict[str, np.ndarray]:
    d = scene(128)
    ms, pan = d["ms"].astype(np.float64), d["pan"].astype(np.float64)
    from pansharp_iqa.baselines import gsa

    return {"ms": ms, "pan": pan, "fused": gsa(ms, pan, ratio=4)}


def test_the_ms_band_names_select_each_band_s_mtf(tmp_path, capsys):
    f = full_scene()
    rev = NAMES[::-1]
    ms_path = write(tmp_path / "ms.tif", f["ms"][..., ::-1].astype(np.uint16), names=rev)  # stored NIR2 first
    pan_path = write(tmp_path / "pan.tif", f["pan"].astype(np.uint16))
    fused_path = write(tmp_path / "f.tif", f["fused"][..., ::-1], names=rev)
    stored = (f["fused"][..., ::-1], f["ms"][..., ::-1].astype(np.uint16).astype(float), f["pan"].astype(np.uint16))
    want = pi.evaluate_full(*stored, sensor=pi.get_sensor("WV2").select_bands(list(rev)))
    registry = pi.evaluate_full(*stored, sensor="WV2")  # NIR2's 0.27 on the stored first band: another number
    assert abs(want["D_lambda_K"] - registry["D_lambda_K"]) > 1e-4
    got = pi.evaluate_full(fused_path, ms_path, pan_path, sensor="WV2")
    assert got["D_lambda_K"] == pytest.approx(want["D_lambda_K"], rel=1e-9)
    assert got["protocol"]["ms_gnyq"] == [0.27, *[0.35] * 7]
    # pansharp-eval: the MS file's names, or band_names in dataset.toml for an undescribed MS
    for ms_names, toml in ((rev, {}), (None, {"band_names": list(rev)})):
        data, method = tmp_path / f"d{len(toml)}", tmp_path / f"r{len(toml)}" / "m"
        data.mkdir()
        method.mkdir(parents=True)
        write(data / "s_ms.tif", stored[1].astype(np.uint16), names=ms_names)
        write(data / "s_pan.tif", stored[2])
        np.save(method / "s.npy", stored[0])
        write_toml(data, sensor="WV2", ratio=4, bits=11, resolution="full", result_scale="dn", **toml)
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / f"o{len(toml)}")
        assert code == 0, pairs
        assert pairs[("s", "m")]["metrics"]["D_lambda_K"] == pytest.approx(want["D_lambda_K"], rel=1e-9)
    # its neighbour: an MS in the registry's order keeps the registry's MTF
    ms_path = write(tmp_path / "ms_registry.tif", f["ms"].astype(np.uint16), names=NAMES)
    fused_path = write(tmp_path / "f_registry.tif", f["fused"], names=NAMES)
    got = pi.evaluate_full(fused_path, ms_path, pan_path, sensor="WV2")
    same_order = pi.evaluate_full(f["fused"], f["ms"].astype(np.uint16).astype(float), stored[2], sensor="WV2")
    assert got["D_lambda_K"] == pytest.approx(same_order["D_lambda_K"], rel=1e-9)


# ----------------------------------------------------------------------------- 3. GDAL sidecars


@pytest.mark.parametrize("how", ["path", "dataset"])
def test_a_sidecar_offset_is_applied_and_its_nodata_refused(tmp_path, expected, how):
    d = scene()
    stored = np.round(d["fused"].astype(np.float64) + 1000).astype(np.uint16)
    path = sidecar(write(tmp_path / f"off_{how}.tif", stored), 8, Offset=-1000, Scale=1)
    gt = write(tmp_path / "gt.tif", d["gt"])
    undeclared = stored.astype(np.float64) - 1000.0
    same(rr(_open(path, how), _open(gt, how)), rr(undeclared, d["gt"]))  # Q2n 0.232, ERGAS 63.0 before
    assert rr(_open(path, how), _open(gt, how))["Q2n"] == pytest.approx(expected["Q2n"], abs=2e-3)
    np.testing.assert_array_equal(load_result(path, stored.shape), undeclared)
    assert read_declared(path).where == f"off_{how}.tif.aux.xml"
    holes = d["gt"].copy()
    holes[10:20, 10:20] = 0
    gt0 = write(tmp_path / f"gt0_{how}.tif", holes)
    same(rr(d["fused"].astype(np.float64), _open(gt0, how)), rr(d["fused"].astype(np.float64), holes))  # data
    sidecar(gt0, 8, NoDataValue=0)
    with pytest.raises(DataError, match=rf"800 values hold the declared no-data value 0 \(gt0_{how}.tif.aux.xml\)"):
        rr(d["fused"].astype(np.float64), _open(gt0, how))
    with pytest.raises(DataError, match="800 values hold the declared no-data value 0"):
        load_result(gt0, holes.shape)


@pytest.mark.parametrize("mode", ["never", "always"])
def test_pansharp_eval_applies_a_result_s_sidecar(tmp_path, capsys, mode):
    d = scene()
    stored = np.round(d["fused"].astype(np.float64) + 1000).astype(np.uint16)
    data, method = dataset(tmp_path, sidecar(write(tmp_path / "r.tif", stored), 8, Offset=-1000))
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o", "--tiled", mode)
    assert code == 0, pairs
    same(pairs[("s", "m")]["metrics"], rr(stored.astype(np.float64) - 1000.0, d["gt"]))


def test_without_gdal_a_sidecar_is_refused_not_ignored(tmp_path, monkeypatch):
    d = scene()
    path = sidecar(write(tmp_path / "a.tif", d["gt"]), 8, Offset=-1000)
    plain = write(tmp_path / "b.tif", d["gt"])
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "rasterio" else real(n, *a))
    with pytest.raises(DataError, match=r"a.tif: its GDAL sidecar a.tif.aux.xml .* only GDAL reads: install rasterio"):
        read_declared(path)
    assert read_declared(plain).scales == () and read_declared(plain).where == "GeoTIFF tags of b.tif"


# ----------------------------------------------------------------------------- 4. PanCollection numbering


def test_results_numbered_from_1_are_refused_then_paired_by_method_toml(tmp_path, capsys):
    import h5py
    import scipy.io

    gts = [scene()["gt"].astype(np.float64) * f for f in (1.0, 0.9, 0.8)]  # three scenes
    fused = [g + np.random.default_rng(i).normal(0, 10 * (i + 1), g.shape) for i, g in enumerate(gts)]
    data = tmp_path / "data"
    data.mkdir()
    with h5py.File(data / "test.h5", "w") as f:
        f["gt"] = np.stack([np.moveaxis(g, -1, 0) for g in gts])
        f["ms"] = np.stack([np.moveaxis(g[2::4, 2::4], -1, 0) for g in gts])
        f["pan"] = np.stack([g.mean(2)[None] for g in gts])
    write_toml(data, sensor="WV2", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    method = tmp_path / "NET" / "results"
    method.mkdir(parents=True)
    for i, image in enumerate(fused, start=1):
        scipy.io.savemat(method / f"output_mulExm_{i}.mat", {"sr": image})
    code, pairs, err = run_eval(capsys, data / "test.h5", method.parent, tmp_path / "o")
    assert code == 2 and not pairs  # before: scored against the next scene, "incomplete 2/3"
    assert "output_mulExm_1..3 number the 3 items of the dataset from 1, not from 0" in one_line(err)
    (method.parent / "method.toml").write_text("first_index = 1\n")
    code, pairs, _ = run_eval(capsys, data / "test.h5", method.parent, tmp_path / "o2")
    assert code == 0
    for i, (g, f) in enumerate(zip(gts, fused, strict=True)):
        same(pairs[(f"test_{i}", "NET")]["metrics"], rr(f, g))


# ----------------------------------------------------------------------------- 5. messages


def test_a_wrong_scale_tag_on_the_gt_is_blamed_and_named(tmp_path, capsys, expected):
    d = scene()
    gt = write(tmp_path / "gt.tif", d["gt"], scales=[0.5] * 8)  # DN stored, tagged x 0.5: a wrong tag
    fused = tmp_path / "f.npy"
    np.save(fused, d["fused"])
    with pytest.raises(pi.InputError, match=r"reference's declared scale 0.5 \(GeoTIFF tags of gt.tif\) contradicts "
                                            r"the data: without it its values match fused's"):
        rr(fused, gt)
    data, method = dataset(tmp_path / "cli", None)
    write(data / "s_gt.tif", d["gt"], scales=[0.5] * 8)
    np.save(method / "s.npy", d["fused"])
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    reason = pairs[("s", "m")]["reason"]
    assert code == 1 and reason.startswith("s_gt.tif is on another scale than s.npy"), reason
    assert "s_gt.tif's declared scale 0.5 (GeoTIFF tags of s_gt.tif) contradicts the data" in reason
    # its neighbour: the tag is right when the stored values are twice the DN
    right = write(tmp_path / "right.tif", (d["gt"].astype(np.uint32) * 2).astype(np.uint16), scales=[0.5] * 8)
    same(rr(fused, right), expected)


def test_a_per_band_h5_scale_factor_is_blamed_on_its_band(tmp_path, capsys):
    import h5py

    g = scene()["gt"].astype(np.float64)
    data = tmp_path / "data"
    data.mkdir()
    with h5py.File(data / "test.h5", "w") as f:
        f["gt"] = np.moveaxis(g, -1, 0)[None]
        f["gt"].attrs["scale_factor"] = np.array([1.0] * 7 + [0.5])  # band 8 halved by a wrong attribute
        f["ms"] = np.moveaxis(g[2::4, 2::4], -1, 0)[None]
        f["pan"] = g.mean(2)[None, None]
    write_toml(data, sensor="WV2", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    method = tmp_path / "NET" / "results"
    method.mkdir(parents=True)
    import scipy.io

    scipy.io.savemat(method / "output_mulExm_0.mat", {"sr": g + np.random.default_rng(0).normal(0, 8, g.shape)})
    code, pairs, _ = run_eval(capsys, data / "test.h5", method.parent, tmp_path / "o")
    reason = pairs[("test_0", "NET")]["reason"]
    assert code == 1 and reason.startswith("test.h5:gt[0] "), reason  # not output_mulExm_0.mat
    assert "declared scale 0.5 on band 8 (h5 attributes scale_factor/add_offset of test.h5:gt)" in reason


@pytest.mark.parametrize("where", ["flag", "method.toml", "dataset.toml"])
def test_a_wrong_declared_scale_is_named_with_its_source(tmp_path, capsys, where):
    d = scene()
    data, method = dataset(tmp_path, None, **({"result_scale": "unit"} if where == "dataset.toml" else {}))
    np.save(method / "s.npy", d["fused"])  # DN, declared 'unit' by one of the three
    extra: tuple[str, ...] = ()
    if where == "flag":
        extra = ("--result-scale", "unit")
    elif where == "method.toml":
        (method / "method.toml").write_text('result_scale = "unit"\n')
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o", *extra)
    reason = pairs[("s", "m")]["reason"]
    source = {"flag": "--result-scale", "method.toml": "m/method.toml result_scale",
              "dataset.toml": "dataset.toml result_scale"}[where]
    assert code == 1 and f"s.npy's declared scale 2047 ({source}) contradicts the data" in reason, reason
    assert "declare result_scale = 'dn'" in reason


@settings(max_examples=24, **HYPOTHESIS)
@given(factor=st.sampled_from([1 / 4095, 1 / 2047, 1 / 1023, 1 / 16, 2.0, 4.0]), gt_off=st.booleans())
def test_an_undeclared_reference_that_alone_is_not_dn_is_blamed(factor, gt_off):
    """The rules' blame, both sides: a reference of fractions next to DN, or beyond its 11 bits, is the off one;
    where nothing says the reference alone is off (a dark GT / 16), the fused image is blamed, as before."""
    d = scene()
    gt, fused = d["gt"].astype(np.float64), d["fused"].astype(np.float64)
    gt, fused = (gt * factor, fused) if gt_off else (gt, fused * factor)
    with pytest.raises(pi.InputError) as err:
        rr(fused, gt)
    blamed = str(err.value).split(" is on another scale than ")[0].split(":")[0]
    assert blamed == ("reference" if gt_off and factor != 1 / 16 else "fused"), str(err.value)


@settings(max_examples=20, **HYPOTHESIS)
@given(items=st.integers(1, 12), first=st.sampled_from([0, 1]), shifted=st.booleans())
def test_numbering_is_refused_exactly_when_it_is_shifted_against_first_index(tmp_path_factory, items, first, shifted):
    from pansharp_iqa.io.results import check_numbering

    folder = tmp_path_factory.mktemp("numbers")
    start = (1 - first) if shifted else first
    for i in range(start, start + items):
        (folder / f"output_mulExm_{i}.mat").write_bytes(b"")
    if shifted:
        with pytest.raises(DataError, match=f"from {start}, not from {first}"):
            check_numbering(folder, items, first)
    else:
        check_numbering(folder, items, first)

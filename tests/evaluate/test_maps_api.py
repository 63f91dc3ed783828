"""The quality-map API of the one path: which maps come back, where they go (``maps_to``), how tile-wise runs
stream them, and the one-line refusals. The values themselves are checked against the reference code in
``tests/spec/test_spec_maps.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.quality_maps import ArrayMaps, GeoTiffMaps, MapInfo
from pansharp_iqa.validation import NonFiniteError, SettingError


@pytest.fixture(scope="module")
def fr():
    from pansharp_iqa.demo_data import load_demo

    ms, pan = load_demo()  # 144 x 144 x 4 MS, 576 x 576 PAN
    ms, pan = ms[:32, :32], pan[:128, :128]
    fused = pi.interp23tap(ms, 4) + np.random.default_rng(0).normal(0, 15, (128, 128, 4))
    return fused, ms, pan


class Recording(ArrayMaps):
    """An ArrayMaps that also records the window of every write."""

    def __init__(self) -> None:
        super().__init__()
        self.windows: list[tuple[str, tuple[int, int], tuple[int, int]]] = []

    def write(self, index, rows, cols, values):
        self.windows.append((index, rows, cols))
        super().write(index, rows, cols, values)


def test_only_the_requested_indexes_get_maps(fr):
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, indexes=["RQNR"], maps=True, tiled="never")
    assert list(r["maps"]) == ["RQNR"] and list(r["protocol"]["maps"]) == ["RQNR"]
    assert r["maps"]["RQNR"].shape == (128, 128)
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, tiled="never")
    assert "maps" not in r and "maps" not in r["protocol"]


def test_tile_wise_maps_are_streamed_window_by_window_and_equal_the_in_memory_ones(fr):
    names = ["default", "D_s_R", "RQNR"]
    settings = pi.full_settings(sensor="none", ratio=4, indexes=names)
    inputs = dict(zip(("fused", "ms", "pan"), fr, strict=True))
    sink = Recording()
    tiled = pi.evaluate(inputs, settings, tiled="always", tile_size=32, maps_to=sink)
    whole = pi.evaluate(inputs, settings, tiled="never", maps=True)
    assert tiled["protocol"]["tiling"]["n_tiles"] == 16
    for name in ("HQNR", "D_s_R", "RQNR"):  # PAN-grid maps: only tile-sized windows were ever written
        sizes = {(r[1] - r[0], c[1] - c[0]) for n, r, c in sink.windows if n == name}
        assert sizes == {(32, 32)}
    for name, values in whole["maps"].items():
        np.testing.assert_allclose(tiled["maps"][name], values, rtol=0, atol=1e-12, err_msg=name)
    assert tiled["protocol"]["maps"] == whole["protocol"]["maps"]
    for name in [k for k in whole if k not in ("protocol", "maps")]:
        assert tiled[name] == pytest.approx(whole[name], rel=1e-12), name


def test_maps_to_a_folder_writes_one_geotiff_per_map(tmp_path, fr):
    rasterio = pytest.importorskip("rasterio")
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=tmp_path / "maps", tiled="never")
    assert sorted(r["maps"]) == ["D_lambda", "D_lambda_K", "D_s", "HQNR"]
    for name, path in r["maps"].items():
        assert Path(path) == tmp_path / "maps" / f"{name}.tif"
        with rasterio.open(path) as ds:
            assert ds.descriptions[0] == name and ds.tags()["unit"] == "dimensionless"
            assert ds.shape == ((4, 4) if name != "HQNR" else (128, 128))
    assert not list((tmp_path / "maps").glob(".*"))  # no temporary file left


def test_a_failed_evaluation_leaves_no_half_written_map(tmp_path, fr):
    fused, ms, pan = fr
    with pytest.raises(pi.InputError):
        pi.evaluate_full(fused, ms, pan * np.nan, sensor="none", ratio=4, maps_to=tmp_path / "m", tiled="always")
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").iterdir())


def test_geotiff_sink_aborts_cleanly(tmp_path):
    sink = GeoTiffMaps(tmp_path)
    sink.open(MapInfo("SAM", (4, 4), 1, (0, 0), "radians", "angle"))
    sink.abort()
    assert list(tmp_path.iterdir()) == []


def test_reduced_maps_are_the_toolbox_maps_of_the_evaluated_region(fr):
    fused = fr[0]
    gt = np.abs(fused + np.random.default_rng(1).normal(0, 5, fused.shape))  # an original product: DN >= 0
    r = pi.evaluate_reduced(fused, gt, ratio=4, bits=11, maps=True, tiled="never")
    assert sorted(r["maps"]) == ["Q2n", "SAM"]
    q = pi.q2n(gt[20:-21, 20:-21], fused[20:-21, 20:-21], return_map=True)[1]
    np.testing.assert_allclose(r["maps"]["Q2n"], q, rtol=0, atol=1e-15)
    angles = np.deg2rad(pi.sam(gt[20:-21, 20:-21], fused[20:-21, 20:-21], return_map=True)[1])
    np.testing.assert_allclose(r["maps"]["SAM"], angles, rtol=1e-13, atol=0)  # no zero-norm pixel here


def test_refusals_are_one_line(fr):
    fused, ms, pan = fr
    batch = {"fused": fused[None].transpose(0, 3, 1, 2), "ms": ms[None].transpose(0, 3, 1, 2), "pan": pan[None, None]}
    with pytest.raises(SettingError, match="not for batches or tensors") as err:
        pi.evaluate(batch, pi.full_settings(sensor="none", ratio=4), layout="NCHW", maps=True)
    assert "\n" not in str(err.value)
    with pytest.raises(SettingError, match="exponents"):
        pi.full_settings(sensor="none", ratio=4, exponents="sensor")
    with pytest.raises(SettingError, match="maps_to must be a folder or a MapSink"):
        pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=3)


def _one_line(err: pytest.ExceptionInfo, *needles: str) -> str:
    """The refusal's message, checked to be one line naming every needle."""
    msg = str(err.value)
    assert "\n" not in msg and all(n in msg for n in needles), (msg, needles)
    return msg


def _nan_pan(fr):
    """The fixture with a NaN PAN: an evaluation that starts refuses it (NonFiniteError), so a maps refusal
    raised instead was said before any work."""
    fused, ms, pan = fr
    return fused, ms, np.where(np.arange(pan.size).reshape(pan.shape) == 5, np.nan, pan)


def test_the_nan_pan_is_refused_by_the_evaluation_itself(fr):  # the premise of the "before any work" tests
    with pytest.raises(NonFiniteError):
        pi.evaluate_full(*_nan_pan(fr), sensor="none", ratio=4, maps=True, tiled="never")


@pytest.mark.parametrize("under", [False, True])
def test_maps_to_a_file_is_refused_in_one_line_before_any_work(tmp_path, fr, under):
    pytest.importorskip("rasterio")
    file = tmp_path / "maps.tif"
    file.write_bytes(b"the user's own file")
    target = file / "sub" if under else file
    with pytest.raises(SettingError) as err:
        pi.evaluate_full(*_nan_pan(fr), sensor="none", ratio=4, maps_to=target, tiled="never")
    _one_line(err, "maps_to", str(file), "lies under the file" if under else "is a file", "not a folder")
    assert file.read_bytes() == b"the user's own file"


def test_a_map_file_already_in_the_folder_is_refused_before_any_work_and_left_as_it_was(tmp_path, fr):
    pytest.importorskip("rasterio")
    folder = tmp_path / "maps"
    folder.mkdir()
    (folder / "HQNR.tif").write_bytes(b"mine")
    for maps_to in (folder, str(folder), GeoTiffMaps(folder)):  # a folder, or the GeoTIFF sink given as such
        with pytest.raises(SettingError) as err:
            pi.evaluate_full(*_nan_pan(fr), sensor="none", ratio=4, maps_to=maps_to, tiled="never")
        _one_line(err, str(folder / "HQNR.tif"), "already exists", "empty or new folder", "remove it")
    (folder / "D_s.tif").write_bytes(b"mine too")
    with pytest.raises(SettingError, match=r"HQNR\.tif already exists \(and 1 more map file\)|"
                                           r"D_s\.tif already exists \(and 1 more map file\)"):
        pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=folder, tiled="always")
    assert sorted(f.name for f in folder.iterdir()) == ["D_s.tif", "HQNR.tif"]  # nothing written, nothing left
    assert (folder / "HQNR.tif").read_bytes() == b"mine" and (folder / "D_s.tif").read_bytes() == b"mine too"


def test_a_folder_with_other_files_takes_the_maps_and_keeps_them(tmp_path, fr):
    pytest.importorskip("rasterio")
    folder = tmp_path / "maps"
    folder.mkdir()
    for name in ("notes.txt", "QNR.tif", "Q2n.tif"):  # no full-resolution map of toolbox2020 has these names
        (folder / name).write_bytes(b"mine")
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=folder, tiled="never")
    assert sorted(r["maps"]) == ["D_lambda", "D_lambda_K", "D_s", "HQNR"]
    assert all((folder / n).read_bytes() == b"mine" for n in ("notes.txt", "QNR.tif", "Q2n.tif"))


def test_an_overwriting_sink_replaces_its_own_files(tmp_path, fr):
    rasterio = pytest.importorskip("rasterio")
    (tmp_path / "HQNR.tif").write_bytes(b"an earlier map this caller owns")
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=GeoTiffMaps(tmp_path, overwrite=True), tiled="never")
    with rasterio.open(r["maps"]["HQNR"]) as ds:
        assert ds.shape == (128, 128)
    assert not list(tmp_path.glob(".*"))  # written under a temporary name, renamed


@pytest.mark.parametrize(("kwargs", "needles"), [
    ({"indexes": ["QNR"]}, ["(QNR)", "toolbox2020", "D_lambda, D_s, D_lambda_K, HQNR, D_lambda_F, D_s_R, RQNR"]),
    ({"protocol": "reprojected2022"}, ["(R-Q2n, R-Q, R-SAM, R-ERGAS, D_rho)", "no index has one", "reprojected2022"]),
    ({"protocol": "hyperspectral2024"}, ["(D_lambda, D_sR, QNR)", "hyperspectral2024", "D_lambda_F, D_s_R, RQNR"]),
])
def test_maps_where_no_requested_index_has_one_are_refused_before_any_work(tmp_path, fr, kwargs, needles):
    with pytest.raises(SettingError) as err:
        pi.evaluate_full(*_nan_pan(fr), sensor="none", ratio=4, maps=True, tiled="never", **kwargs)
    _one_line(err, "maps: none of the requested indexes", "has a quality map", *needles)
    with pytest.raises(SettingError, match="none of the requested indexes"):  # maps_to asks for them too
        pi.evaluate_full(*_nan_pan(fr), sensor="none", ratio=4, maps_to=tmp_path / "m", tiled="always", **kwargs)
    assert not (tmp_path / "m").exists()


def test_maps_at_reduced_resolution_where_no_requested_index_has_one_are_refused(fr):
    fused = fr[0]
    with pytest.raises(SettingError) as err:
        pi.evaluate_reduced(fused, fused, ratio=4, bits=11, indexes=["ERGAS", "Q"], maps=True, tiled="never")
    _one_line(err, "(ERGAS, Q)", "'toolbox2020' at reduced resolution: Q2n, SAM")


def test_where_some_requested_indexes_have_maps_those_come_back(fr):
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, indexes=["QNR", "HQNR"], maps=True, tiled="never")
    assert list(r["maps"]) == ["HQNR"] and r["maps"]["HQNR"].shape == (128, 128)
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, protocol="hyperspectral2024", indexes=["default", "RQNR"],
                         maps=True, tiled="never")
    assert list(r["maps"]) == ["RQNR"]
    fused = fr[0]
    gt = np.abs(fused + 3.0)
    r = pi.evaluate_reduced(fused, gt, ratio=4, bits=11, indexes=["ERGAS", "SAM"], maps=True, tiled="never")
    assert list(r["maps"]) == ["SAM"]


def test_maps_false_with_maps_to_is_a_contradiction(tmp_path, fr):
    with pytest.raises(SettingError) as err:
        pi.evaluate_full(*_nan_pan(fr), sensor="none", ratio=4, maps=False, maps_to=tmp_path / "m", tiled="never")
    _one_line(err, "maps=False contradicts maps_to=", "drop maps=False", "or drop maps_to")
    with pytest.raises(SettingError, match="maps=False contradicts"):
        pi.evaluate_full(*fr, sensor="none", ratio=4, maps=np.False_, maps_to=ArrayMaps(), tiled="never")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("value", ["yes", 1, 0, "False", [True]])
def test_maps_must_be_a_bool(fr, value):
    with pytest.raises(SettingError) as err:
        pi.evaluate_full(*_nan_pan(fr), sensor="none", ratio=4, maps=value, tiled="never")
    _one_line(err, "maps must be True or False", repr(value))


def test_maps_to_alone_asks_for_the_maps_and_numpy_bools_are_bools(fr):
    sink = ArrayMaps()
    r = pi.evaluate_full(*fr, sensor="none", ratio=4, maps_to=sink, tiled="never")  # maps left at its default
    assert sorted(r["maps"]) == ["D_lambda", "D_lambda_K", "D_s", "HQNR"]
    assert sorted(pi.evaluate_full(*fr, sensor="none", ratio=4, maps=np.True_, tiled="never")["maps"]) == \
        sorted(r["maps"])
    for off in (False, np.False_, None):
        assert "maps" not in pi.evaluate_full(*fr, sensor="none", ratio=4, maps=off, tiled="never")


def test_exponents_apply_to_every_qnr_like_index(fr):
    base = pi.evaluate_full(*fr, sensor="IKONOS", ratio=4, indexes=["default", "RQNR", "D_s_R", "D_lambda_F"],
                            tiled="never")
    sb = pi.evaluate_full(*fr, sensor="IKONOS", ratio=4, indexes=["default", "RQNR", "D_s_R", "D_lambda_F"],
                          tiled="never", exponents="sensor-based")
    table = {"QNR": (0.0, 1.03), "HQNR": (0.86, 0.77), "RQNR": (1.38, 0.76)}  # get_alpha_beta's IKONOS row
    parts = {"QNR": ("D_lambda", "D_s"), "HQNR": ("D_lambda_K", "D_s"), "RQNR": ("D_lambda_F", "D_s_R")}
    for name, (a, b) in table.items():
        dl, ds = (base[k] for k in parts[name])
        assert sb[name] == pytest.approx((1 - dl) ** a * (1 - ds) ** b, rel=1e-14), name
        assert base[name] == pytest.approx((1 - dl) * (1 - ds), rel=1e-15), name
    assert sb["protocol"]["exponents"]["case"] == "sensor-based" and base["protocol"]["exponents"]["QNR"] == [1.0, 1.0]

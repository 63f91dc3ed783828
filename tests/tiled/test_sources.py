"""Readers: GeoTIFF windows, .npy/memmap, HDF5, array-likes; band layouts; laziness; pickling."""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

import numpy as np
import pytest

from pansharp_iqa import InputError
from pansharp_iqa.io.errors import DataError, NotWindowed
from pansharp_iqa.io.orientation import as_hw, as_hwb, match_expected_shape
from pansharp_iqa.io.windows import ArraySource, H5Source, MemmapSource, RasterioSource, open_windowed
from pansharp_iqa.tiled import is_lazy_input, open_source
from pansharp_iqa.tiled.accumulate import Partial, combine
from pansharp_iqa.tiled.plan import effective_tile_size, plan_tiles

from .conftest import write_tif


class Sliceable:
    """Minimal array-like: shape + slicing."""

    def __init__(self, a):
        self.a = a
        self.shape = a.shape
        self.dtype = a.dtype

    def __getitem__(self, item):
        return self.a[item]


def test_is_lazy_input(tmp_path):
    a = np.zeros((4, 4, 2))
    np.save(tmp_path / "a.npy", a)
    assert is_lazy_input("scene.tif") and is_lazy_input(tmp_path / "a.npy")
    assert is_lazy_input(Sliceable(a))
    assert not is_lazy_input(a)
    assert not is_lazy_input(np.load(tmp_path / "a.npy", mmap_mode="r"))  # an ndarray
    assert not is_lazy_input([[1, 2], [3, 4]])
    assert not is_lazy_input(3.0)


def test_readers_return_the_same_windows(tmp_path):
    rasterio = pytest.importorskip("rasterio")
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4000, size=(50, 70, 3)).astype(np.uint16)
    np.save(tmp_path / "a.npy", a)
    tif = write_tif(tmp_path / "a.tif", a, block=16)
    readers = [
        open_source(a, "x"),
        open_source(tmp_path / "a.npy", "x"),
        open_source(np.load(tmp_path / "a.npy", mmap_mode="r"), "x"),
        open_source(Sliceable(a), "x"),
        open_source(tif, "x"),
    ]
    with rasterio.open(tif) as ds:
        assert is_lazy_input(ds)
        readers.append(open_source(ds, "x"))
    kinds = [type(r) for r in readers]
    assert kinds == [ArraySource, MemmapSource, MemmapSource, ArraySource, RasterioSource, RasterioSource]
    for r in readers:
        assert r.shape == (50, 70, 3) and r.dtype == np.uint16
        r2 = pickle.loads(pickle.dumps(r))
        np.testing.assert_array_equal(r2.read(10, 33, 5, 70), a[10:33, 5:70])
    pan = open_source(a[:, :, 0], "pan")
    assert pan.shape == (50, 70, 1)


STORED = [  # (stored shape, role, expected (H, W, B) of a fused result)
    ((40, 36, 3), "gt", None), ((3, 40, 36), "gt", None), ((1, 3, 40, 36, 1), "ms", None), ((40, 36), "gt", None),
    ((40, 36), "pan", None), ((1, 40, 36), "pan", None), ((40, 36, 1), "pan", None),
    ((3, 40, 36), "fused", (40, 36, 3)),
]


def _in_memory(arr, role, expected):
    """What the in-memory readers make of a stored array (the windowed reads must agree)."""
    if role == "pan":
        return as_hw(arr, name="x")
    return as_hwb(arr, name="x") if expected is None else match_expected_shape(arr, expected, name="x")


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("stored, role, expected", STORED)
def test_npy_windows_follow_the_in_memory_band_layout(tmp_path, stored, role, expected, order):
    arr = np.random.default_rng(3).integers(0, 2000, size=stored).astype(np.uint16)
    np.save(tmp_path / "x.npy", np.asfortranarray(arr) if order == "F" else arr)
    img = pickle.loads(pickle.dumps(open_windowed(tmp_path / "x.npy", role=role, expected=expected)))
    whole = _in_memory(arr, role, expected)
    whole = whole if whole.ndim == 3 else whole[:, :, None]  # a window reader's (h, w, B)
    assert img.shape == whole.shape and img.dtype == np.uint16 and img.describe().endswith("x.npy")
    np.testing.assert_array_equal(img.read(5, 29, 7, 36), whole[5:29, 7:36])
    assert img.read(4, 4, 0, 9).shape == whole[4:4, 0:9].shape  # an empty window


def test_npy_shapes_and_files_the_in_memory_readers_refuse_are_refused(tmp_path):
    np.save(tmp_path / "cube.npy", np.zeros((8, 8, 8), dtype=np.uint16))
    with pytest.raises(DataError, match="band axis"):
        open_windowed(tmp_path / "cube.npy", role="gt")
    np.save(tmp_path / "two.npy", np.zeros((2, 16, 16), dtype=np.uint16))
    with pytest.raises(DataError, match="single-band"):
        open_windowed(tmp_path / "two.npy", role="pan")
    with pytest.raises(DataError, match="wrong band count 2"):
        open_windowed(tmp_path / "two.npy", role="fused", expected=(16, 16, 3))
    np.save(tmp_path / "c.npy", np.zeros((16, 16, 2), dtype=np.complex64))
    with pytest.raises(DataError, match="non-numeric"):
        open_windowed(tmp_path / "c.npy", role="gt")
    (tmp_path / "bad.npy").write_bytes(b"not a numpy file")
    with pytest.raises(DataError, match="cannot read"):
        open_windowed(tmp_path / "bad.npy", role="gt")
    np.save(tmp_path / "cut.npy", np.zeros((64, 64, 4), dtype=np.uint16))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "cut.npy").read_bytes()[:-100])
    with pytest.raises(DataError, match="cut.npy"):
        open_windowed(tmp_path / "cut.npy", role="gt")
    with pytest.raises(NotWindowed, match="read whole"):
        open_windowed(tmp_path / "x.npz", role="gt")


def test_reads_unmap_the_file(tmp_path):
    maps = Path("/proc/self/maps")
    if not maps.exists():
        pytest.skip("no /proc/self/maps")
    np.save(tmp_path / "big.npy", np.zeros((256, 256, 4), dtype=np.uint16))
    src = open_source(tmp_path / "big.npy", "fused")
    assert type(src) is MemmapSource and src.read(0, 256, 0, 256).shape == (256, 256, 4)
    assert "big.npy" not in maps.read_text()  # nothing of the file stays mapped after a read


def test_h5_datasets_are_read_window_by_window(tmp_path):
    h5py = pytest.importorskip("h5py")
    arr = np.random.default_rng(4).integers(0, 2000, size=(3, 40, 36)).astype(np.uint16)
    with h5py.File(tmp_path / "r.h5", "w") as f:
        f["fused"] = arr
    img = open_windowed(tmp_path / "r.h5", role="fused", expected=(40, 36, 3))
    img = pickle.loads(pickle.dumps(img))
    np.testing.assert_array_equal(img.read(3, 30, 1, 20), np.moveaxis(arr, 0, -1)[3:30, 1:20])
    assert img.describe().startswith("h5:")
    with h5py.File(tmp_path / "hwb.h5", "w") as f:
        f["x"] = np.moveaxis(arr, 0, -1)
    src = open_source(tmp_path / "hwb.h5", "fused")  # the tile engine's inputs as stored: (H, W, B)
    assert type(src) is H5Source and src.shape == (40, 36, 3)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(src)).read(2, 9, 0, 36), np.moveaxis(arr, 0, -1)[2:9])
    with h5py.File(tmp_path / "two.h5", "w") as f:
        f["a"], f["b"] = arr, arr
    with pytest.raises(NotWindowed, match="no single image dataset"):
        open_windowed(tmp_path / "two.h5", role="fused")


@pytest.mark.parametrize("rasterio", [True, False])
def test_tiff_windows_with_and_without_rasterio(tmp_path, monkeypatch, rasterio):
    tifffile = pytest.importorskip("tifffile")
    if rasterio:
        pytest.importorskip("rasterio")
    else:  # without rasterio, uncompressed TIFFs are memory-mapped; compressed ones are read whole
        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "rasterio" else real(n, *a))
    arr = np.random.default_rng(5).integers(0, 2000, size=(40, 36, 3)).astype(np.uint16)
    tifffile.imwrite(tmp_path / "contig.tif", arr, photometric="rgb")
    tifffile.imwrite(tmp_path / "planar.tif", np.moveaxis(arr, -1, 0), photometric="minisblack",
                     planarconfig="separate", byteorder=">")
    tifffile.imwrite(tmp_path / "pan.tif", arr[:, :, 0])
    for name, role in [("contig.tif", "gt"), ("planar.tif", "gt"), ("pan.tif", "pan")]:
        img = pickle.loads(pickle.dumps(open_windowed(tmp_path / name, role=role)))
        hwb = arr[:, :, :1] if role == "pan" else arr
        assert type(img) is (RasterioSource if rasterio else MemmapSource)
        np.testing.assert_array_equal(img.read(4, 33, 9, 30), hwb[4:33, 9:30])
        np.testing.assert_array_equal(open_source(tmp_path / name, "x").read(0, 40, 5, 7), hwb[:, 5:7])
    tifffile.imwrite(tmp_path / "z.tif", arr, photometric="rgb", compression="zlib")
    if rasterio:
        np.testing.assert_array_equal(open_windowed(tmp_path / "z.tif", role="gt").read(0, 5, 0, 5), arr[0:5, 0:5])
    else:
        with pytest.raises(NotWindowed, match="needs rasterio"):
            open_windowed(tmp_path / "z.tif", role="gt")


def test_open_source_errors(tmp_path):
    pytest.importorskip("rasterio")
    from pansharp_iqa.tiled import SceneReadError

    with pytest.raises(SceneReadError, match="missing.tif"):
        open_source(tmp_path / "missing.tif", "fused")
    with pytest.raises(InputError, match="fused"):
        open_source(np.zeros((2, 3, 4, 5)), "fused")


def test_tile_plan_and_sizes():
    assert effective_tile_size(100, 32) == 128 and effective_tile_size(256, 32) == 256
    with pytest.raises(InputError, match="tile_size"):
        effective_tile_size(0, 32)
    tiles = plan_tiles(100, 70, 64)
    assert [(t.rows, t.cols) for t in tiles] == [((0, 64), (0, 64)), ((0, 64), (64, 70)), ((64, 100), (0, 64)),
                                                ((64, 100), (64, 70))]
    assert sum(t.pixels for t in tiles) == 7000


def test_combine_is_exact_and_order_free():
    rng = np.random.default_rng(1)
    parts = []
    for _ in range(50):
        p = Partial(pixels=1)
        p.add("s", rng.normal(size=3) * 10.0 ** rng.integers(-8, 8, size=3))
        p.maximum("m", rng.normal())
        parts.append(p)
    a, b = combine(parts), combine(parts[::-1])
    np.testing.assert_array_equal(a.sums["s"], b.sums["s"])
    assert a.maxima == b.maxima and a.pixels == 50
    import math

    assert a.sums["s"][0] == math.fsum(p.sums["s"][0] for p in parts)

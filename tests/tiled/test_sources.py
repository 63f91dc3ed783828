"""Readers: GeoTIFF windows, .npy/memmap, array-likes; laziness; pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from pansharp_iqa import InputError
from pansharp_iqa.tiled import is_lazy_input, open_source
from pansharp_iqa.tiled.accumulate import Partial, combine
from pansharp_iqa.tiled.plan import effective_tile_size, plan_tiles
from pansharp_iqa.io.windows import ArraySource, MemmapSource, RasterioSource

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

"""The baselines run in bounded memory (issue 20 item 18): strip by strip, from lazy inputs, into
files, with the numbers of the whole-image computation. The CLI side is in test_baselines_cli.py.

Reference values here are the same method run as one strip on in-memory arrays (itself held to
the toolbox's own code in test_toolbox_parity.py) and NumPy's whole-array statistics.
"""

from __future__ import annotations

import os
import tracemalloc

import numpy as np
import pytest

from baselines_helpers import scene
from pansharp_iqa import validation
from pansharp_iqa.baselines import BASELINES, gsa
from pansharp_iqa.baselines import inputs as inputs_module
from pansharp_iqa.baselines import stats as st
from pansharp_iqa.baselines.npy_output import NpyRows, write_baseline
from pansharp_iqa.io.windows import ArraySource, open_windowed

EQUAL = 1e-12  # strips vs one strip, relative to the image's largest value


@pytest.fixture(scope="module")
def pair():
    return scene(3, 40, 36, 4, 4)  # PAN 160 x 144: 10 strips of 16 rows


@pytest.fixture(scope="module")
def whole(pair):
    ms, pan = pair
    return {name: fuse(ms, pan, sensor="QB", ratio=4) for name, fuse in BASELINES.items()}


def _same(got, ref, rel=EQUAL):
    np.testing.assert_allclose(got, ref, rtol=0, atol=rel * np.abs(ref).max())


@pytest.mark.parametrize("method", list(BASELINES))
@pytest.mark.parametrize("strip_rows", [4, 52])
def test_strips_give_the_whole_image_numbers(pair, whole, method, strip_rows):
    ms, pan = pair
    _same(BASELINES[method](ms, pan, sensor="QB", ratio=4, strip_rows=strip_rows), whole[method])


class _Sliceable:
    """An array-like that is not an ndarray (as an h5py or zarr dataset): shape, dtype, slicing."""

    def __init__(self, array):
        self.array, self.shape, self.dtype = array, array.shape, array.dtype

    def __getitem__(self, key):
        return self.array[key]


def test_lazy_inputs_give_the_in_memory_numbers(pair, whole, tmp_path):
    ms, pan = pair
    np.save(tmp_path / "ms.npy", ms)
    np.save(tmp_path / "pan.npy", pan)
    lazy = {"memmap": (np.load(tmp_path / "ms.npy", mmap_mode="r"), np.load(tmp_path / "pan.npy", mmap_mode="r")),
            "paths": (str(tmp_path / "ms.npy"), str(tmp_path / "pan.npy")),
            "source": (ArraySource(ms), ArraySource(pan)),
            "array-like": (_Sliceable(ms), _Sliceable(pan)),
            "windowed": (open_windowed(str(tmp_path / "ms.npy"), role="ms"),
                         open_windowed(str(tmp_path / "pan.npy"), role="pan"))}
    for kind, (m, p) in lazy.items():
        for method, fuse in BASELINES.items():
            _same(fuse(m, p, sensor="QB", ratio=4, strip_rows=24), whole[method])
            assert kind and method  # (names in the traceback)


def test_lazy_inputs_are_refused_as_arrays_are(pair, tmp_path):
    ms, pan = pair
    bad = pan.astype(np.float64)
    bad[5, 7] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    np.save(tmp_path / "unit.npy", pan / 2047.0)
    for fix, name in ((validation.NonFiniteError, "nan"), (validation.ScaleError, "unit")):
        lazy = np.load(tmp_path / f"{name}.npy", mmap_mode="r")
        with pytest.raises(fix) as in_memory:
            gsa(ms, np.asarray(lazy), ratio=4)
        with pytest.raises(fix) as windowed:
            gsa(ms, lazy, ratio=4)
        assert str(windowed.value) == str(in_memory.value)
    with pytest.raises(validation.ShapeError, match="ratio=4 times the MS size"):
        gsa(ms, np.load(tmp_path / "nan.npy", mmap_mode="r")[:-4], ratio=4)
    with pytest.raises(validation.InputError, match="strip_rows must be a positive integer"):
        gsa(ms, pan, ratio=4, strip_rows=0)
    with pytest.raises(validation.ShapeError, match="out must have the fused image's shape"):
        gsa(ms, pan, ratio=4, out=np.empty((3, 3, 4)))


@pytest.mark.parametrize("method", ["BT-H", "MTF-GLP-HPM"])
def test_results_written_to_a_file_are_the_in_memory_ones(pair, whole, tmp_path, method):
    ms, pan = pair
    out = NpyRows(tmp_path / "direct.npy", whole[method].shape)
    BASELINES[method](ms, pan, sensor="QB", ratio=4, out=out, strip_rows=8)
    out.close()
    _same(np.load(tmp_path / "direct.npy"), whole[method])
    target = write_baseline(BASELINES[method], ms, pan, tmp_path / "scaled.npy", sensor="QB", ratio=4, scale=2047.0,
                            strip_rows=8)
    _same(np.load(target) * 2047.0, whole[method])
    assert sorted(os.listdir(tmp_path)) == ["direct.npy", "scaled.npy"]  # no temporary file left


def test_a_failed_write_leaves_the_target_as_it_was(pair, tmp_path):
    ms, pan = pair
    target = tmp_path / "GSA.npy"
    np.save(target, np.zeros(3))

    def breaks_halfway(ms, pan, *, out, **kw):
        out[0:8] = np.ones((8, *out.shape[1:]))
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        write_baseline(breaks_halfway, ms, pan, target, sensor=None, ratio=4)
    np.testing.assert_array_equal(np.load(target), np.zeros(3))
    assert os.listdir(tmp_path) == ["GSA.npy"]
    with pytest.raises(validation.ScaleError):  # refused before any file is made
        write_baseline(gsa, ms, pan / 2047.0, tmp_path / "other.npy", sensor=None, ratio=4)
    assert os.listdir(tmp_path) == ["GSA.npy"]


def _peak_bytes(tmp_path, height_lr: int, method: str) -> int:
    ms, pan = scene(5, height_lr, 64, 4, 4)  # 4 bands, 256 PAN columns
    np.save(tmp_path / "ms.npy", ms)
    np.save(tmp_path / "pan.npy", pan)
    ms_m, pan_m = np.load(tmp_path / "ms.npy", mmap_mode="r"), np.load(tmp_path / "pan.npy", mmap_mode="r")
    tracemalloc.start()
    try:
        write_baseline(BASELINES[method], ms_m, pan_m, tmp_path / "out.npy", sensor="QB", ratio=4, strip_rows=64)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("method", ["BT-H", "GSA"])  # the two with the most passes and statistics
def test_memory_does_not_grow_with_the_image(tmp_path, monkeypatch, method):
    # memory-mapped inputs, a file output: a pass holds one strip and fixed-size buffers -- the value
    # check's reads and the percentile candidates, capped here below these images' sizes -- never the image
    monkeypatch.setattr(inputs_module, "READ_BYTES", 2**18)
    monkeypatch.setattr(st, "COLLECT_LIMIT", 2**12)
    small, large = _peak_bytes(tmp_path, 128, method), _peak_bytes(tmp_path, 256, method)  # 4 and 8 MiB fused
    assert large < 1.1 * small + 2**18, (small, large)
    assert large < 0.75 * 8 * 2**20, large  # in memory, the fused image alone is 8 MiB


def test_moments_and_least_squares_equal_whole_array_numpy():
    rng = np.random.default_rng(7)
    x = 900 + 100 * rng.normal(size=(30000, 1)) + rng.normal(size=(30000, 5))  # correlated, large mean
    m = st.Moments(5)
    for part in np.array_split(x, 11):
        m.add(part)
    np.testing.assert_allclose(m.mean, x.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(m.cov(), np.cov(x, rowvar=False), rtol=1e-11)
    b = x @ np.arange(1.0, 6.0) + rng.normal(size=30000)
    for design in (x, np.column_stack([x[:, :3], np.zeros(30000), np.ones(30000)])):  # incl. rank deficient
        ls = st.LeastSquares(design.shape[1])
        for rows in np.array_split(np.arange(30000), 9):
            ls.add(design[rows], b[rows])
        ref = np.linalg.lstsq(design, b, rcond=None)[0]
        np.testing.assert_allclose(ls.solve(), ref, rtol=0, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("q", [0.0, 1.0, 37.5, 100.0])
def test_streamed_percentiles_equal_numpys_hazen(monkeypatch, q):
    monkeypatch.setattr(st, "COLLECT_LIMIT", 50)  # force histogram passes
    monkeypatch.setattr(st, "HISTOGRAM_BINS", 16)
    rng = np.random.default_rng(8)
    x = np.column_stack([rng.normal(size=5000), np.round(rng.normal(size=5000) * 2),  # ties
                         np.r_[np.zeros(4000), rng.random(1000)], np.full(5000, 3.0)])
    got = st.hazen_percentiles(lambda: np.array_split(x, 7), q, n=5000, lo=x.min(0), hi=x.max(0))
    np.testing.assert_array_equal(got, np.percentile(x, q, axis=0, method="hazen"))

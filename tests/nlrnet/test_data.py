"""Data preparation, metadata resolution and the dataset source."""

import pytest

pytest.importorskip("mindspore")

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from nlrnet_helpers import random_scene, shared_data_dir, synthetic_arrays, write_h5, write_scene_mat  # noqa: E402
from pansharp_iqa.nlrnet.dataset import H5PatchSource, epoch_order, make_dataset  # noqa: E402
from pansharp_iqa.nlrnet.h5data import prepare, read_meta  # noqa: E402
from pansharp_iqa.nlrnet.scenes import MetadataError  # noqa: E402
from pansharp_iqa.validation import MetadataConflictError  # noqa: E402


@pytest.fixture
def qb_mat(tmp_path):
    """A small synthetic QuickBird scene (MS 160 x 96 x 4, PAN 640 x 384) recording its metadata."""
    return write_scene_mat(tmp_path / "qb.mat", *random_scene(160, 96, seed=3), sensor="QB",
                           ratio=4, bits=11)


def test_prepare_real_wv2(wv2_mat, tmp_path):
    import scipy.io as sio

    metas = prepare([str(wv2_mat)], tmp_path / "t.h5", patch=64, stride=64,
                    val_out=tmp_path / "v.h5", val_fraction=0.25, val_patch=80)
    tr, va = metas
    assert (tr.sensor, tr.ratio, tr.bits, tr.bands, tr.size) == ("WV2", 4, 11, 8, 64)
    assert va.size == 80 and va.n == 4  # 80 bottom rows x 320 cols
    ms_dn = sio.loadmat(str(wv2_mat))["I_MS"].astype(np.float64)
    pan_dn = sio.loadmat(str(wv2_mat))["I_PAN"].astype(np.float64)
    with h5py.File(tmp_path / "t.h5") as f:
        assert f.attrs["sensor"] == "WV2" and int(f.attrs["bits"]) == 11
        gt, ms_lr, pan, lms = f["gt"][:], f["ms"][:], f["pan"][:], f["lms"][:]
        origin = f["origin"][:]
    assert gt.shape == (15, 8, 64, 64) and ms_lr.shape == (15, 8, 16, 16) and pan.shape == (15, 1, 64, 64)
    y, x = origin[7]
    np.testing.assert_allclose(gt[7] * 2047, ms_dn[y:y + 64, x:x + 64].transpose(2, 0, 1), atol=1e-3)
    # PAN: 4x4 bicubic shrink keeps the local mean; compare block means away from the borders
    blocks = pan_dn[4 * y:4 * y + 256, 4 * x:4 * x + 256].reshape(64, 4, 64, 4).mean(axis=(1, 3))
    assert np.abs(pan[7, 0] * 2047 - blocks)[4:-4, 4:-4].mean() < 0.1 * blocks.std()
    assert np.abs(lms - gt).mean() < np.abs(gt - gt.mean()).mean()  # EXP is close to the GT


def test_missing_sensor_is_an_error(tmp_path):
    path = shared_data_dir() / "WV3_example.mat"
    if not path.is_file():
        pytest.skip("real data not available")
    with pytest.raises(MetadataError, match="--sensor"):
        prepare([str(path)], tmp_path / "x.h5", patch=32)
    meta = prepare([str(path)], tmp_path / "x.h5", patch=32, sensor="WV3")[0]
    assert (meta.sensor, meta.ratio, meta.bits, meta.n) == ("WV3", 4, 11, 1)


def test_contradicting_flag_is_an_error(wv2_mat, tmp_path):
    with pytest.raises(MetadataConflictError, match="--sensor says sensor = 'QB' but .*imgWV2.mat records 'WV2'"):
        prepare([str(wv2_mat)], tmp_path / "x.h5", patch=64, sensor="QB")


def test_contradicting_flag_is_an_error_synthetic(qb_mat, tmp_path):
    with pytest.raises(MetadataConflictError, match="--sensor says sensor = 'WV2' but .*qb.mat records 'QB'"):
        prepare([str(qb_mat)], tmp_path / "x.h5", patch=32, sensor="WV2")
    with pytest.raises(MetadataConflictError, match="--ratio says ratio = 2 but .*qb.mat records 4"):
        prepare([str(qb_mat)], tmp_path / "x.h5", patch=32, ratio=2)
    assert not (tmp_path / "x.h5").exists()
    meta = prepare([str(qb_mat)], tmp_path / "x.h5", patch=32, sensor="QuickBird")[0]  # an alias agrees
    assert (meta.sensor, meta.ratio, meta.bits, meta.bands) == ("QB", 4, 11, 4)


def test_matlab_v73_scene_reads_as_v5(tmp_path):
    ms_, pan = random_scene(48, 40, seed=4)
    v5 = write_scene_mat(tmp_path / "v5.mat", ms_, pan)
    v73 = write_scene_mat(tmp_path / "v73.mat", ms_, pan, mat73=True)
    a = prepare([str(v5)], tmp_path / "a.h5", patch=32, stride=8)[0]
    b = prepare([str(v73)], tmp_path / "b.h5", patch=32, stride=8)[0]
    assert (b.sensor, b.ratio, b.bits, b.n) == (a.sensor, a.ratio, a.bits, a.n) == ("QB", 4, 11, 6)
    with h5py.File(tmp_path / "a.h5") as fa, h5py.File(tmp_path / "b.h5") as fb:
        for key in ("gt", "ms", "lms", "pan"):
            np.testing.assert_array_equal(fa[key][:], fb[key][:])


def test_pancollection_file_in_dn(tmp_path):
    gt, lms, pan = synthetic_arrays(3, 32)
    path = write_h5(tmp_path / "pc.h5", gt * 2047, lms * 2047, pan * 2047, attrs=False)
    with pytest.raises(MetadataError, match="--sensor"):
        read_meta(path)
    meta = read_meta(path, sensor="WV3")
    assert (meta.ratio, meta.bits, meta.data_scale) == (4, 11, 2047.0)
    lms1, pan1, gt1 = H5PatchSource(meta)[2]
    np.testing.assert_allclose(gt1, gt[2], rtol=1e-6)
    np.testing.assert_allclose(pan1, pan[2], rtol=1e-6)


def test_sharded_batches_union_equals_single_process(tiny_h5):
    meta = read_meta(tiny_h5)
    src = H5PatchSource(meta)
    order = epoch_order(meta.n, 7, 0, 4)
    assert sorted(order) == list(range(8))
    single = [b[2].asnumpy() for b in make_dataset(src, order, 4).create_tuple_iterator(num_epochs=1)]
    parts = [[b[2].asnumpy() for b in make_dataset(src, order, 2, rank=r, world=2)
              .create_tuple_iterator(num_epochs=1)] for r in range(2)]
    for s in range(2):
        merged = np.concatenate([parts[0][s], parts[1][s]])
        np.testing.assert_array_equal(np.sort(merged.ravel()), np.sort(single[s].ravel()))


def test_validation_rows_by_hand():
    from pansharp_iqa.nlrnet.h5data import validation_rows

    kw = {"patch": 64, "ratio": 4, "where": "imgWV2.mat"}
    assert validation_rows(320, val_fraction=0.25, val_patch=80, **kw) == 80   # 80 rows: 1 patch
    assert validation_rows(320, val_fraction=0.45, val_patch=128, **kw) == 128  # 144 rows: 1 patch
    assert validation_rows(320, val_fraction=0.5, val_patch=80, **kw) == 160
    with pytest.raises(ValueError, match=r"gives 80 of 320 rows, fewer than one --val-patch 128: "
                                         r"use --val-patch 80, or --val-fraction 0\.40 or more"):
        validation_rows(320, val_fraction=0.25, val_patch=128, **kw)
    with pytest.raises(ValueError, match=r"gives 32 of 320 rows.*use --val-fraction 0\.25 or more"):
        validation_rows(320, val_fraction=0.1, val_patch=80, **kw)  # 32 px is below the 74 px minimum
    with pytest.raises(ValueError, match="leaves 32 training rows, fewer than one --patch 64"):
        validation_rows(320, val_fraction=0.9, val_patch=96, **kw)  # 3 x 96 = 288 of 320 rows


def test_documented_split_on_the_real_scene(wv2_mat, tmp_path, capsys):
    from pansharp_iqa.nlrnet.cli import main

    base = ["prepare", str(wv2_mat), "--out", str(tmp_path / "t.h5"), "--patch", "64", "--stride", "32",
            "--val-out", str(tmp_path / "v.h5"), "--val-fraction", "0.25"]
    assert main(base + ["--val-patch", "128"]) == 2  # 25 % of 320 rows is 80 < 128
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--val-patch 80" in err[0] and not (tmp_path / "t.h5").exists()
    assert main(base + ["--val-patch", "80"]) == 0   # the example of docs/nlrnet.md
    val = read_meta(tmp_path / "v.h5")
    assert (val.size, val.n) == (80, 4)
    assert read_meta(tmp_path / "t.h5").n == 6 * 9  # 240 x 320 px: 6 x 9 patches of 64 px, stride 32


def test_documented_split_on_a_synthetic_scene(qb_mat, tmp_path, capsys):
    from pansharp_iqa.nlrnet.cli import main

    base = ["prepare", str(qb_mat), "--out", str(tmp_path / "t.h5"), "--patch", "32", "--stride", "16",
            "--val-out", str(tmp_path / "v.h5"), "--val-fraction", "0.5"]
    assert main(base + ["--val-patch", "128"]) == 2  # 50 % of 160 rows is 80 < 128
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--val-patch 80, or --val-fraction 0.80" in err[0]
    assert not (tmp_path / "t.h5").exists() and not (tmp_path / "v.h5").exists()
    assert main(base + ["--val-patch", "80"]) == 0
    val = read_meta(tmp_path / "v.h5")
    assert (val.size, val.n) == (80, 1)                 # 80 bottom rows x 96 cols: one 80 px patch
    assert read_meta(tmp_path / "t.h5").n == 4 * 5      # 80 x 96 px: 4 x 5 patches of 32 px, stride 16
    with h5py.File(tmp_path / "t.h5") as f, h5py.File(tmp_path / "v.h5") as g:
        assert f["origin"][:, 0].max() + 32 <= 80 and g["origin"][:, 0].tolist() == [0]

"""Tiled inference and MindIR export."""

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402
from mindspore import nn  # noqa: E402

from pansharp_iqa.nlrnet.model import NLRNet  # noqa: E402
from pansharp_iqa.nlrnet.tiling import tile_starts, tiled_predict  # noqa: E402


class _Local(nn.Cell):
    """Translation-equivariant conv stack (receptive radius 3 + 1 + 1 = 5 px)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(5, 16, 7, pad_mode="same")
        self.b = nn.Conv2d(16, 16, 3, pad_mode="same")
        self.c = nn.Conv2d(16, 4, 3, pad_mode="same")
        self.act = nn.LeakyReLU(0.2)

    def construct(self, lms, pan):
        x = ms.ops.concat((lms, pan), axis=1)
        return self.c(self.act(self.b(self.act(self.a(x)))))


def _predictor(net):
    return lambda a, b: net(ms.Tensor(a), ms.Tensor(b)).asnumpy()


def test_tile_starts_cover():
    assert tile_starts(100, 40, 8) == [0, 30, 60]  # ceil(92 / 32) = 3 tiles spread over [0, 60]
    assert tile_starts(30, 40, 8) == [0]
    assert tile_starts(320, 64, 32) == list(range(0, 257, 32))
    with pytest.raises(ValueError):
        tile_starts(100, 40, 40)


@pytest.mark.parametrize("tile,overlap,batch", [(32, 12, 1), (40, 16, 3)])
def test_tiled_equals_whole_for_a_local_network(tile, overlap, batch):
    ms.set_seed(0)
    net = _Local()
    rng = np.random.default_rng(0)
    lms = rng.random((4, 83, 70)).astype(np.float32)
    pan = rng.random((83, 70)).astype(np.float32)
    whole = _predictor(net)(lms[None], pan[None, None])[0]
    tiled = tiled_predict(_predictor(net), lms, pan, tile=tile, overlap=overlap, batch=batch,
                          blend="crop")
    # receptive radius 5 <= overlap / 2 and no tile reaches past the image: exact everywhere
    np.testing.assert_allclose(tiled, whole, atol=1e-5)


def test_single_tile_nlrnet_equals_whole():
    net = NLRNet(bands=4, blocks=1)
    rng = np.random.default_rng(1)
    lms = rng.random((4, 48, 48)).astype(np.float32)
    pan = rng.random((48, 48)).astype(np.float32)
    whole = _predictor(net)(lms[None], pan[None, None])[0]
    for blend in ("crop", "linear", "cosine"):
        tiled = tiled_predict(_predictor(net), lms, pan, tile=48, overlap=16, blend=blend)
        np.testing.assert_allclose(tiled, whole, atol=1e-6)


def test_mindir_equals_network(tmp_path):
    from pansharp_iqa.nlrnet.checkpoint import save_network
    from pansharp_iqa.nlrnet.export import export_mindir, load_mindir

    net = NLRNet(bands=4, blocks=1)
    rng = np.random.default_rng(2)
    for p in net.trainable_params():
        p.set_data(ms.Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.1))
    save_network(net, tmp_path / "m.ckpt", {"bands": 4, "blocks": 1, "variant": "released",
                                            "sensor": "QB", "ratio": 4, "bits": 11})
    path = export_mindir(tmp_path / "m.ckpt", tmp_path / "m.mindir", tile=32, batch=2)
    predict, meta = load_mindir(path)
    assert meta["tile"] == 32 and meta["sensor"] == "QB"
    lms = rng.random((2, 4, 32, 32)).astype(np.float32)
    pan = rng.random((2, 1, 32, 32)).astype(np.float32)
    ref = net(ms.Tensor(lms), ms.Tensor(pan)).asnumpy()
    np.testing.assert_allclose(predict(lms, pan), ref, atol=1e-5)
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_infer_h5_writes_results_layout(tiny_val_h5, tmp_path):
    import json

    import h5py

    from pansharp_iqa.nlrnet.checkpoint import save_network
    from pansharp_iqa.nlrnet.infer import infer_h5

    net = NLRNet(bands=8, blocks=1)
    save_network(net, tmp_path / "m.ckpt", {"bands": 8, "blocks": 1, "variant": "released",
                                            "sensor": "WV2", "ratio": 4, "bits": 11,
                                            "train_patch": 80})  # = the patch size: one tile each
    doc = infer_h5(tmp_path / "m.ckpt", tiny_val_h5, tmp_path / "RESULTS" / "nlrnet", batch=2)
    with h5py.File(tmp_path / "RESULTS" / "nlrnet" / "val.h5") as f:
        sr = f["sr"][:]
    with h5py.File(tiny_val_h5) as f:
        lms, pan = f["lms"][:], f["pan"][:]
    ref = net(ms.Tensor(lms), ms.Tensor(pan)).asnumpy() * 2047.0  # DN
    np.testing.assert_allclose(sr, ref, rtol=1e-5, atol=1e-3)
    saved = json.loads((tmp_path / "RESULTS" / "nlrnet" / "metrics.json").read_text())
    assert saved["sensor"] == "WV2" and set(saved["mean"]) == {"Q2n", "Q", "SAM", "ERGAS", "SCC"}
    assert doc["protocol"]["scale"] == 2047.0


def test_range_report_by_hand():
    from pansharp_iqa.nlrnet.infer import range_report

    r = range_report(np.array([[-3.0, 0.0, 2047.0, 2047.5], [10.0, 5000.0, 7.0, -0.1]]), 11)
    assert (r["below"], r["above"], r["fraction"]) == (2 / 8, 2 / 8, 4 / 8)
    assert (r["min"], r["max"], r["range"]) == (-3.0, 5000.0, [0.0, 2047.0])


@pytest.mark.parametrize("clip", [False, True])
def test_out_of_range_reported_and_clip(tiny_val_h5, tmp_path, clip):
    import json

    import h5py

    from pansharp_iqa.nlrnet.checkpoint import save_network
    from pansharp_iqa.nlrnet.infer import infer_h5

    ms.set_seed(0)  # a fixed initialisation: the fraction checked below is then fixed too
    net = NLRNet(bands=8, blocks=1, features=8, released_unused=False)
    w = net.conv_out2.weight.asnumpy()
    net.conv_out2.weight.set_data(ms.Tensor(w * 40.0))  # outputs far outside [0, 1]
    save_network(net, tmp_path / "m.ckpt", {"sensor": "WV2", "ratio": 4, "bits": 11, "train_patch": 80})
    out = tmp_path / ("clip" if clip else "raw")
    infer_h5(tmp_path / "m.ckpt", tiny_val_h5, out, batch=2, clip=clip)
    with h5py.File(out / "val.h5") as f:
        sr = f["sr"][:]
    doc = json.loads((out / "metrics.json").read_text())
    with h5py.File(tiny_val_h5) as f:
        raw = net(ms.Tensor(f["lms"][:]), ms.Tensor(f["pan"][:])).asnumpy().astype(np.float64) * 2047.0
    expected = np.mean((raw < 0) | (raw > 2047.0))
    assert 0.05 < expected < 0.95
    assert doc["out_of_range"]["fraction"] == pytest.approx(expected, abs=1e-4)  # before any clip
    assert doc["clip"] is clip
    if clip:
        assert sr.min() >= 0.0 and sr.max() <= 2047.0
        np.testing.assert_allclose(sr, np.clip(raw, 0, 2047.0), rtol=1e-5, atol=1e-2)
    else:
        np.testing.assert_allclose(sr, raw, rtol=1e-5, atol=1e-2)


def test_training_form_of_leaky_relu_is_the_same_function():
    from mindspore import ops

    from pansharp_iqa.nlrnet.model import LeakyReLU

    x = ms.Tensor(np.linspace(-3, 3, 601, dtype=np.float32))
    act = LeakyReLU(0.2)
    act.set_train(False)
    y_inf = act(x).asnumpy()
    act.set_train(True)
    y_train = act(x).asnumpy()
    ref = np.where(x.asnumpy() > 0, x.asnumpy(), 0.2 * x.asnumpy())
    np.testing.assert_allclose(y_inf, ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(y_train, ref, rtol=1e-6, atol=1e-7)
    grad = ops.grad(act)(x).asnumpy()
    xs = x.asnumpy()
    np.testing.assert_allclose(grad[xs != 0], np.where(xs[xs != 0] > 0, 1.0, 0.2), rtol=1e-6)


def _tiny_checkpoint(path, **meta):
    from pansharp_iqa.nlrnet.checkpoint import save_network

    ms.set_seed(0)
    net = NLRNet(bands=meta.pop("bands", 8), blocks=1, features=8, released_unused=False)
    save_network(net, path, {"sensor": "WV2", "ratio": 4, "bits": 11, "train_patch": 80, **meta})
    return path


def test_results_never_overwrite_the_inputs(tmp_path, capsys):
    from nlrnet_helpers import random_scene, synthetic_arrays, write_h5, write_scene_mat
    from pansharp_iqa.nlrnet.cli import main
    from pansharp_iqa.nlrnet.infer import infer_h5, infer_scenes

    d = tmp_path / "d"
    d.mkdir()
    gt, lms, pan = synthetic_arrays(1, 80, seed=2)
    test_h5 = write_h5(d / "test.h5", gt, lms, pan)
    ckpt = _tiny_checkpoint(tmp_path / "m.ckpt")
    before = test_h5.read_bytes()
    with pytest.raises(ValueError, match="would overwrite the input .*test.h5"):
        infer_h5(ckpt, test_h5, d)
    assert main(["infer", "--ckpt", str(ckpt), "--data", str(test_h5), "--out", str(d)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "would overwrite the input" in err[0]
    assert test_h5.read_bytes() == before and sorted(p.name for p in d.iterdir()) == ["test.h5"]

    # scenes: RESULTS/<scene>.mat would be the input scene itself
    qb_ckpt = _tiny_checkpoint(tmp_path / "qb.ckpt", bands=4, sensor="QB", train_patch=32)
    scene = write_scene_mat(d / "qb.mat", *random_scene(12, 12))
    before = scene.read_bytes()
    with pytest.raises(ValueError, match="would overwrite the input .*qb.mat"):
        infer_scenes(qb_ckpt, [scene], d)
    # two scenes with one name would overwrite each other's results
    other = tmp_path / "e" / "qb.mat"
    other.parent.mkdir()
    other.write_bytes(before)
    with pytest.raises(ValueError, match="two outputs would be written to .*qb.mat"):
        infer_scenes(qb_ckpt, [scene, other], tmp_path / "R")
    assert scene.read_bytes() == before and not (d / "metrics.json").exists()
    assert not (tmp_path / "R").exists()


def test_data_must_fit_the_models_ratio(tmp_path, caplog):
    import logging

    from nlrnet_helpers import synthetic_arrays, write_h5
    from pansharp_iqa.nlrnet.infer import infer_h5
    from pansharp_iqa.validation import MetadataConflictError

    gt, lms, pan = synthetic_arrays(1, 80, seed=2)
    ratio2 = write_h5(tmp_path / "r2.h5", gt, lms, pan, ratio=2)
    ckpt = _tiny_checkpoint(tmp_path / "m.ckpt")  # trained at ratio 4
    with pytest.raises(MetadataConflictError, match="ratio 2 but the model .*m.ckpt was trained at ratio 4"):
        infer_h5(ckpt, ratio2, tmp_path / "R")
    assert not (tmp_path / "R").exists()
    # another sensor with the same band count: a warning, and scores
    wv3 = write_h5(tmp_path / "wv3.h5", gt, lms, pan, sensor="WV3")
    with caplog.at_level(logging.WARNING, logger="pansharp_iqa.nlrnet"):
        doc = infer_h5(ckpt, wv3, tmp_path / "S")
    assert doc["sensor"] == "WV3" and np.isfinite(doc["mean"]["Q2n"])
    assert any("WV3 data but the model" in r.getMessage() and "WV2" in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)

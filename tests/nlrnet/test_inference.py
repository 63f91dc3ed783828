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
    from pansharp_iqa.nlrnet.export import export_mindir, load_mindir
    from pansharp_iqa.nlrnet.checkpoint import save_network

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

    from pansharp_iqa.nlrnet.infer import infer_h5
    from pansharp_iqa.nlrnet.checkpoint import save_network

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

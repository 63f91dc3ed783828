"""Training: graph == pynative, loss decreases, resume == uninterrupted, checkpoint round trip."""

import json

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

from pansharp_iqa.nlrnet.checkpoint import load_network, save_network  # noqa: E402
from pansharp_iqa.nlrnet.config import make_config  # noqa: E402
from pansharp_iqa.nlrnet.train import train  # noqa: E402


def _cfg(data, out, **kw):
    base = {"data": str(data), "out": str(out), "epochs": 1, "batch_size": 4, "blocks": 1,
            "progress": False}
    base.update(kw)
    return make_config(base)


def test_graph_and_pynative_first_losses_agree(tiny_h5, tmp_path):
    g = train(_cfg(tiny_h5, tmp_path / "g", mode="graph"), max_steps=2)["losses"]
    p = train(_cfg(tiny_h5, tmp_path / "p", mode="pynative"), max_steps=2)["losses"]
    assert len(g) == len(p) == 2
    np.testing.assert_allclose(g, p, rtol=1e-4)


def test_first_loss_equals_numpy_on_identity_output(tiny_h5, tmp_path):
    # a fresh network's first loss equals the numpy loss of its own initial prediction
    import h5py

    from pansharp_iqa.nlrnet.dataset import epoch_order
    from pansharp_iqa.nlrnet.train import build_network

    ms.set_seed(1024)
    cfg = _cfg(tiny_h5, tmp_path / "n", mode="pynative")
    losses = train(cfg, max_steps=1)["losses"]
    ms.set_seed(1024)
    net = build_network(8, cfg)
    order = epoch_order(8, cfg.seed, 0, 4)[:4]
    with h5py.File(tiny_h5) as f:
        data = {k: f[k][:] for k in ("lms", "pan", "gt")}

    def numpy_loss(patches):
        out = net(ms.Tensor(data["lms"][patches]), ms.Tensor(data["pan"][patches])).asnumpy().astype(np.float64)
        gt = data["gt"][patches].astype(np.float64)
        cos = (out * gt).sum(1) / (np.linalg.norm(out, axis=1) * np.linalg.norm(gt, axis=1))
        roll = lambda a: a - np.roll(a, -1, axis=1)  # noqa: E731
        return 85 * np.abs(out - gt).mean() + 15 * (1 - cos).mean() + 15 * np.abs(roll(out) - roll(gt)).mean()

    ref = numpy_loss(order)
    # the first step's batch is 4 distinct patches of the 8, and the other 4 give another loss, so
    # the equality below tells which patches the trainer used (issue 34: it could not fail before)
    assert len(set(order.tolist())) == 4 and set(order.tolist()) < set(range(8))
    other = numpy_loss(np.setdiff1d(np.arange(8), order))
    assert abs(other - ref) > 1e-3 * abs(ref), (other, ref)
    np.testing.assert_allclose(losses[0], ref, rtol=1e-4)


def test_few_steps_lower_the_loss_on_real_wv2(wv2_mat, tmp_path):
    from pansharp_iqa.nlrnet.h5data import prepare

    meta = prepare([str(wv2_mat)], tmp_path / "wv2.h5", patch=32, stride=32)[0]
    assert (meta.sensor, meta.ratio, meta.bits) == ("WV2", 4, 11)
    losses = train(_cfg(tmp_path / "wv2.h5", tmp_path / "run", batch_size=8, lr=1e-3),
                   max_steps=8)["losses"]
    assert np.mean(losses[-3:]) < 0.7 * losses[0]


def test_few_steps_lower_the_loss_synthetic(tiny_h5, tmp_path):
    losses = train(_cfg(tiny_h5, tmp_path / "s", epochs=4, batch_size=4, lr=1e-3))["losses"]
    assert len(losses) == 8
    assert np.mean(losses[-2:]) < 0.7 * losses[0]


def test_resume_equals_uninterrupted(tiny_h5, tiny_val_h5, tmp_path):
    full = train(_cfg(tiny_h5, tmp_path / "full", epochs=3, val=str(tiny_val_h5)))
    part = train(_cfg(tiny_h5, tmp_path / "part", epochs=1, val=str(tiny_val_h5)))
    assert part["epochs_done"] == 1
    rest = train(_cfg(tiny_h5, tmp_path / "part", epochs=3), resume=True)
    assert rest["epochs_done"] == 3
    np.testing.assert_allclose(part["losses"] + rest["losses"], full["losses"], rtol=1e-6)
    steps = [json.loads(line)["loss"] for line in (tmp_path / "part" / "steps.jsonl").read_text().splitlines()]
    np.testing.assert_allclose(steps, full["losses"], rtol=1e-6)
    metrics = [json.loads(line) for line in (tmp_path / "part" / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [1, 2, 3]
    for m in metrics:
        assert {"Q2n", "Q", "SAM", "ERGAS", "SCC", "protocol", "loss", "step"} <= set(m)
        assert m["sensor"] == "WV2" and m["protocol"]["scale"] == 2047.0
    assert (tmp_path / "part" / "best.ckpt").is_file()
    assert "lr = 0.0005" in (tmp_path / "part" / "config.toml").read_text()


def test_checkpoint_round_trip(tmp_path):
    from pansharp_iqa.nlrnet.model import NLRNet

    net = NLRNet(bands=4, blocks=2)
    rng = np.random.default_rng(3)
    for p in net.trainable_params():  # non-trivial gates so every path matters
        p.set_data(ms.Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.1))
    save_network(net, tmp_path / "m.ckpt", {"bands": 4, "blocks": 2, "variant": "released",
                                            "sensor": "QB", "ratio": 4, "bits": 11})
    loaded = load_network(tmp_path / "m.ckpt")
    assert loaded.meta["sensor"] == "QB" and loaded.meta["blocks"] == 2
    lms = ms.Tensor(rng.random((1, 4, 24, 24)).astype(np.float32))
    pan = ms.Tensor(rng.random((1, 1, 24, 24)).astype(np.float32))
    np.testing.assert_array_equal(net(lms, pan).asnumpy(), loaded(lms, pan).asnumpy())


def test_amp_o1_refused_and_o2_needs_accelerator(tiny_h5, tmp_path):
    with pytest.raises(ValueError, match="LeakyReLU"):
        train(_cfg(tiny_h5, tmp_path / "a", amp="O1"))
    with pytest.raises(ValueError, match="GPU or Ascend"):
        train(_cfg(tiny_h5, tmp_path / "b", amp="O2"))

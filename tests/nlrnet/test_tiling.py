"""Tiled inference by default: the trained tile size from the checkpoint, bounded tiles in flight."""

import json
import math

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

from pansharp_iqa.nlrnet.infer import resolve_tiling  # noqa: E402
from pansharp_iqa.nlrnet.tiling import axis_weights, tile_starts, tiled_predict  # noqa: E402


def test_axis_weights_by_hand():
    starts = tile_starts(100, 40, 8)
    assert starts == [0, 30, 60]  # neighbours overlap by 10 px
    lin = axis_weights(starts, 40, "linear")[1]
    np.testing.assert_allclose(lin[[0, 4, 9, 10, 29, 30, 35, 39]],
                               [0.05, 0.45, 0.95, 1.0, 1.0, 0.95, 0.45, 0.05])
    first = axis_weights(starts, 40, "linear")[0]
    assert first[0] == 1.0 and first[29] == 1.0 and first[39] == pytest.approx(0.05)  # image border kept
    crop = axis_weights(starts, 40, "crop")
    # cuts in the middle of each overlap: [0, 35), [35, 65), [65, 100)
    assert crop[0].sum() == 35 and crop[0][34] == 1 and crop[0][35] == 0
    assert crop[1][4] == 0 and crop[1][5] == 1 and crop[1][34] == 1 and crop[1][35] == 0
    for blend in ("crop", "linear", "cosine"):
        total = np.zeros(100)
        for s, w in zip(starts, axis_weights(starts, 40, blend), strict=True):
            total[s:s + 40] += w
        np.testing.assert_allclose(total, 1.0, atol=1e-12)


def _recording(bands):
    calls = []

    def predict(a, b):
        calls.append((a.shape, b.shape))
        return a[:, :bands] * 2.0 + b  # pointwise: tiling must be exact for it

    return predict, calls


@pytest.mark.parametrize("batch", [1, 3])
def test_tiles_in_flight_do_not_grow_with_the_scene(batch):
    tile, overlap = 32, 16
    for h, w in ((70, 90), (250, 190)):
        rng = np.random.default_rng(h)
        lms = rng.random((4, h, w), dtype=np.float32)
        pan = rng.random((h, w), dtype=np.float32)
        predict, calls = _recording(4)
        fused = tiled_predict(predict, lms, pan, tile=tile, overlap=overlap, batch=batch)
        np.testing.assert_allclose(fused, lms * 2.0 + pan, rtol=1e-6)
        n_tiles = len(tile_starts(h, tile, overlap)) * len(tile_starts(w, tile, overlap))
        assert len(calls) == math.ceil(n_tiles / batch)
        # every call has the same input shape, whatever the scene size: the network's input (hence
        # its activations) is scene-independent
        assert {c for c in calls} == {((batch, 4, tile, tile), (batch, 1, tile, tile))}


def test_scene_smaller_than_a_tile_is_padded_then_cropped():
    predict, calls = _recording(3)
    lms = np.random.default_rng(0).random((3, 20, 50), dtype=np.float32)
    pan = np.ones((20, 50), np.float32)
    fused = tiled_predict(predict, lms, pan, tile=32, overlap=16)
    assert fused.shape == (3, 20, 50) and all(c[0][2:] == (32, 32) for c in calls)
    np.testing.assert_allclose(fused, lms * 2.0 + 1.0, rtol=1e-6)


def _scene(path, seed):
    from nlrnet_helpers import random_scene, write_scene_mat

    return write_scene_mat(path, *random_scene(40, 40, seed=seed), sensor="QB", ratio=4, bits=11)


def _small_checkpoint(path, train_patch):
    from pansharp_iqa.nlrnet.checkpoint import save_network
    from pansharp_iqa.nlrnet.model import NLRNet

    ms.set_seed(0)
    net = NLRNet(bands=4, blocks=1, features=8, released_unused=False)
    meta = {"sensor": "QB", "ratio": 4, "bits": 11}
    if train_patch:
        meta["train_patch"] = train_patch
    save_network(net, path, meta)
    return path


def test_default_tile_is_the_checkpoints_training_patch(tmp_path, monkeypatch):
    from pansharp_iqa.nlrnet import infer

    shapes = []
    real = infer.load_predictor

    def spy(model):
        predict, meta, fixed = real(model)

        def recorded(a, b):
            shapes.append(a.shape)
            return predict(a, b)

        return recorded, meta, fixed

    monkeypatch.setattr(infer, "load_predictor", spy)
    scene = _scene(tmp_path / "qb.mat", 1)
    ckpt = _small_checkpoint(tmp_path / "m.ckpt", train_patch=48)
    doc = infer.infer_scenes(ckpt, [scene], tmp_path / "R")
    assert set(shapes) == {(1, 4, 48, 48)}           # PAN-scale scene 160 x 160, tiles of 48 px
    assert len(shapes) == len(tile_starts(160, 48, 24)) ** 2
    saved = json.loads((tmp_path / "R" / "metrics.json").read_text())
    assert (saved["tile"], saved["overlap"], saved["blend"]) == (48, 24, "linear")
    assert doc["scenes"]["qb"]["sensor"] == "QB"

    shapes.clear()
    infer.infer_scenes(ckpt, [scene], tmp_path / "W", whole_scene=True)
    assert shapes == [(1, 4, 160, 160)]              # whole scene only when asked
    shapes.clear()
    infer.infer_scenes(ckpt, [scene], tmp_path / "T", tile=64, overlap=16, blend="crop")
    assert set(shapes) == {(1, 4, 64, 64)}

    old = _small_checkpoint(tmp_path / "old.ckpt", train_patch=None)
    with pytest.raises(ValueError, match="--tile N"):
        infer.infer_scenes(old, [scene], tmp_path / "X")
    assert not (tmp_path / "X").exists()


def test_resolve_tiling_rules():
    meta = {"train_patch": 64}
    assert resolve_tiling(meta, None, tile=None, overlap=None, whole_scene=False, where="m") == (64, 32)
    assert resolve_tiling(meta, None, tile=128, overlap=8, whole_scene=False, where="m") == (128, 8)
    assert resolve_tiling(meta, None, tile=None, overlap=None, whole_scene=True, where="m") == (None, 0)
    assert resolve_tiling({}, 96, tile=None, overlap=None, whole_scene=False, where="m") == (96, 48)
    with pytest.raises(ValueError, match="exported for 96 px"):
        resolve_tiling({}, 96, tile=64, overlap=None, whole_scene=False, where="m.mindir")
    with pytest.raises(ValueError, match="needs the .ckpt"):
        resolve_tiling({}, 96, tile=None, overlap=None, whole_scene=True, where="m.mindir")
    with pytest.raises(ValueError, match="exclude"):
        resolve_tiling(meta, None, tile=64, overlap=None, whole_scene=True, where="m")
    with pytest.raises(ValueError, match="overlap"):
        resolve_tiling(meta, None, tile=None, overlap=64, whole_scene=False, where="m")


def test_training_records_its_patch_size_and_validates_as_infer(tiny_h5, tiny_val_h5, tmp_path):
    from pansharp_iqa.nlrnet import load_network
    from pansharp_iqa.nlrnet.config import make_config
    from pansharp_iqa.nlrnet.infer import infer_h5
    from pansharp_iqa.nlrnet.train import train

    train(make_config({"data": str(tiny_h5), "val": str(tiny_val_h5), "out": str(tmp_path / "run"),
                       "epochs": 1, "batch_size": 4, "blocks": 1, "progress": False,
                       "mode": "pynative"}))
    net = load_network(tmp_path / "run" / "last_net.ckpt")
    assert net.meta["train_patch"] == 32 and net.meta["sensor"] == "WV2"
    # 80 px validation patches, 32 px training patches: validation fuses them as infer does
    record = json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1])
    doc = infer_h5(tmp_path / "run" / "last_net.ckpt", tiny_val_h5, tmp_path / "R")
    assert doc["tile"] == 32
    for k in ("Q2n", "SAM", "ERGAS"):
        assert record[k] == pytest.approx(doc["mean"][k], rel=1e-5)
    whole = infer_h5(tmp_path / "run" / "last_net.ckpt", tiny_val_h5, tmp_path / "W", whole_scene=True)
    assert whole["mean"]["SAM"] != pytest.approx(doc["mean"]["SAM"], rel=1e-5)

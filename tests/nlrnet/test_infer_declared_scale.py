"""Issue 27 item 9: ``pansharp-nlrnet infer`` writes the fused image in DN itself, so its scale is
declared: a network's poor band (3.3 times the MS band) is a poor result that gets its numbers,
with the declaration recorded in the card; the same image given to the library without the
declaration is still refused (the other side)."""

import numpy as np
import pytest

pytest.importorskip("mindspore")

import pansharp_iqa as pi  # noqa: E402
from pansharp_iqa.validation import ScaleError  # noqa: E402


def _poor_network(lms, pan):
    out = np.array(lms, dtype=np.float32, copy=True) + 0.1 * (pan - pan.mean())
    out[:, 2] *= 3.3  # band 3 about 3.3 times the MS band, mean and spread alike
    return out


@pytest.mark.parametrize("reduced", [False, True])
def test_a_networks_poor_band_gets_numbers_with_the_declared_scale_in_the_card(tmp_path, monkeypatch, reduced):
    from scipy import ndimage

    from nlrnet_helpers import write_scene_mat
    from pansharp_iqa.nlrnet import infer

    meta = {"bands": 4, "ratio": 4, "sensor": "QB", "bits": 11, "train_patch": 32}
    monkeypatch.setattr(infer, "load_predictor", lambda model: (_poor_network, meta, None))
    rng = np.random.default_rng(3)  # a smooth scene: interpolation keeps each band's spread
    ms = 200.0 + ndimage.gaussian_filter(np.kron(rng.random((12, 12, 4)), np.ones((8, 8, 1))), (3, 3, 0)) * 600
    pan = np.kron(ms.mean(axis=2), np.ones((4, 4))) + rng.random((384, 384)) * 20
    scene = write_scene_mat(tmp_path / "qb.mat", ms, pan)
    doc = infer.infer_scenes(tmp_path / "m.ckpt", [scene], tmp_path / "R", reduced=reduced)
    res = doc["scenes"]["qb"]
    assert all(np.isfinite(v) for k, v in res.items() if isinstance(v, float))
    assert res["protocol"]["declared"]["fused"]["dn"] == {"value": True, "source": infer.PRODUCER}
    # the other side: the same image scored without the declaration is refused, naming band 3
    import scipy.io as sio

    fused = sio.loadmat(tmp_path / "R" / "qb.mat")["I_F"]
    if not reduced:
        with pytest.raises(ScaleError, match=r"fused band 3 \(of 4\) is on another scale"):
            pi.evaluate_full(fused, ms, pan, sensor="QB", ratio=4, bits=11)


def test_infer_data_h5_scores_a_poor_band_with_the_producers_declaration(tmp_path, monkeypatch):
    """Issue 31 item 6, end to end: ``pansharp-nlrnet infer --data val.h5`` (the h5 path) scores its own output,
    declared DN by the command, where a poor band of the network is a poor number, not an exit 2."""
    import json

    import h5py

    from nlrnet_helpers import synthetic_arrays, write_h5
    from pansharp_iqa.nlrnet import infer
    from pansharp_iqa.nlrnet.cli import main

    meta = {"bands": 4, "ratio": 4, "sensor": "QB", "bits": 11, "train_patch": 80}
    monkeypatch.setattr(infer, "load_predictor", lambda model: (_poor_network, meta, None))
    gt, lms, pan = synthetic_arrays(2, 96, bands=4)
    h5 = write_h5(tmp_path / "val.h5", gt, lms, pan, sensor="QB")
    (tmp_path / "m.ckpt").write_bytes(b"")  # the predictor is the poor network above
    assert main(["infer", "--ckpt", str(tmp_path / "m.ckpt"), "--data", str(h5), "--out", str(tmp_path / "R"),
                 "--whole-scene"]) == 0
    doc = json.loads((tmp_path / "R" / "metrics.json").read_text())
    assert doc["protocol"]["declared"]["fused"]["dn"] == {"value": True, "source": infer.PRODUCER}
    assert 0 < doc["mean"]["Q2n"] < 1
    # the other side: the same output scored without the producer's declaration is refused, naming band 3
    with h5py.File(tmp_path / "R" / "val.h5") as f:
        sr = np.moveaxis(f["sr"][0], 0, -1)
    with pytest.raises(ScaleError, match=r"fused band 3 \(of 4\) is on another scale"):
        pi.evaluate_reduced(sr, np.moveaxis(gt[0], 0, -1).astype(np.float64) * 2047.0, ratio=4, bits=11)

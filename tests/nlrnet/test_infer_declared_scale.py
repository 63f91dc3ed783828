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

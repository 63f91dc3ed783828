"""NLRNet validation and h5 scoring through the MindSpore metric: the numbers of the per-patch loop
it replaced (each patch through evaluate_reduced in DN, then the mean over patches)."""

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

import pansharp_iqa as pi  # noqa: E402
from nlrnet_helpers import synthetic_arrays, write_h5  # noqa: E402
from pansharp_iqa.nlrnet.h5data import read_meta  # noqa: E402
from pansharp_iqa.nlrnet.validate import INDEXES, evaluate_h5, iter_predictions, predict_batches  # noqa: E402


def _per_patch(fused, gt, bits=11):
    """The loop validation ran before the metric (score_reduced): each (B, H, W) patch as a
    float64 (H, W, B) image through evaluate_reduced with scale 2**bits - 1."""
    return [pi.evaluate_reduced(np.transpose(f, (1, 2, 0)).astype(np.float64),
                                np.transpose(g, (1, 2, 0)).astype(np.float64),
                                ratio=4, bits=bits, scale=float(2 ** bits - 1)) for f, g in zip(fused, gt, strict=True)]


def _predict(lms, pan):
    """A deterministic stand-in for the network ([0, 1] float32 out)."""
    return (0.9 * lms + 0.1 * pan).astype(np.float32)


@pytest.fixture
def val5(tmp_path):
    gt, lms, pan = synthetic_arrays(5, 80, seed=7)
    return write_h5(tmp_path / "val5.h5", gt, lms, pan), (gt, lms, pan)


def test_iter_predictions_pads_the_last_batch_and_drops_its_padding():
    x = np.arange(5, dtype=np.float32).reshape(5, 1, 1, 1)
    seen = []
    got = list(iter_predictions(lambda a, b: seen.append(len(a)) or a + b, x, x, 2))
    assert seen == [2, 2, 2]  # one static shape
    assert [s for s, _ in got] == [slice(0, 2), slice(2, 4), slice(4, 5)]
    assert predict_batches(lambda a, b: a + b, x, x, 2).ravel().tolist() == [0, 2, 4, 6, 8]


@pytest.mark.parametrize("as_tensor", [False, True])
def test_evaluate_h5_equals_the_per_patch_loop(val5, as_tensor):
    path, (gt, lms, pan) = val5
    meta = read_meta(path)
    predict = (lambda a, b: ms.Tensor(_predict(a, b))) if as_tensor else _predict
    got = evaluate_h5(predict, meta, batch=2, chunk=3)  # chunks of 3 + 2 patches, a padded batch in each
    want = _per_patch(_predict(lms, pan), gt)
    for k in INDEXES:
        assert got[k] == pytest.approx(np.mean([w[k] for w in want]), rel=1e-12, abs=0), k
        assert got["std"][k] == pytest.approx(np.std([w[k] for w in want], ddof=1), rel=1e-9), k
    assert got["n_patches"] == 5 and got["sensor"] == "WV2"
    assert got["protocol"]["scale"] == 2047.0 and got["protocol"]["batch"]["images"] == 5
    same = evaluate_h5(predict, meta, batch=5, chunk=64)  # grouping does not matter
    assert {k: same[k] for k in INDEXES} == {k: got[k] for k in INDEXES}


def test_evaluate_h5_refuses_a_nan_output_naming_its_patch(val5):
    path, _ = val5

    def broken(a, b):
        out = _predict(a, b)
        out[1, 0, 40, 40] = np.nan
        return out

    with pytest.raises(pi.InputError, match="image 1 of the batch: fused: contains 1 non-finite"):
        evaluate_h5(broken, read_meta(path), batch=2)


def test_infer_h5_scores_each_patch_as_the_per_patch_loop(val5, tmp_path):
    import h5py

    from pansharp_iqa.nlrnet.checkpoint import save_network
    from pansharp_iqa.nlrnet.infer import infer_h5
    from pansharp_iqa.nlrnet.model import NLRNet

    path, (gt, _, _) = val5
    net = NLRNet(bands=8, blocks=1)
    save_network(net, tmp_path / "m.ckpt", {"bands": 8, "blocks": 1, "variant": "released", "sensor": "WV2",
                                            "ratio": 4, "bits": 11, "train_patch": 80})
    doc = infer_h5(tmp_path / "m.ckpt", path, tmp_path / "R", batch=2)
    with h5py.File(tmp_path / "R" / "val5.h5") as f:
        fused = f["sr"][:] / 2047.0  # float32 x 2047 is exact in float64: the network's output, bit for bit
    want = _per_patch(fused, gt)
    for i, w in enumerate(want):
        assert doc["scenes"][f"val5_{i}"] == {k: w[k] for k in INDEXES}  # exactly
    for k in INDEXES:
        assert doc["mean"][k] == pytest.approx(np.mean([w[k] for w in want]), rel=1e-12, abs=0), k
    assert doc["protocol"]["batch"]["images"] == 5

"""The MindSpore metric: the per-image numbers of the numpy core on MindSpore tensors, accumulated
over updates of any size, inside ``Model.eval`` / ``Model.fit`` in PyNative and graph mode, and the
same one-line refusals as arrays."""

from __future__ import annotations

import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore is imported (CPU conv speed)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

ms = pytest.importorskip("mindspore")

import pansharp_iqa as pi  # noqa: E402
from pansharp_iqa.baselines import gsa  # noqa: E402
from pansharp_iqa.demo_data import load_demo  # noqa: E402
from pansharp_iqa.tensor.mindspore_adapter import FullQuality, ReducedQuality, WithTarget  # noqa: E402

RR = ("Q2n", "Q", "SAM", "ERGAS", "SCC")
FR = ("D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR")


@pytest.fixture(scope="module")
def scenes():
    """Four reduced-resolution pairs as [0, 1] float32 NCHW batches (scale 2047), and two
    full-resolution triples in DN."""
    ms_, pan = load_demo()
    ms_lr, pan_lr = pi.wald_degrade(ms_, pan, "none", ratio=4)
    base = gsa(ms_lr, pan_lr, ratio=4)
    rng = np.random.default_rng(0)
    fused = [np.clip(base * g + rng.normal(0, s, base.shape), 0, 2047) for g, s in
             [(1.0, 0), (1.05, 10), (0.9, 30), (1.2, 5)]]
    nchw = lambda images: (np.stack(images).transpose(0, 3, 1, 2) / 2047).astype(np.float32)  # noqa: E731
    fr = gsa(ms_, pan, ratio=4)
    return {"pred": nchw(fused), "gt": nchw([ms_] * 4), "fr": np.stack([fr, np.clip(fr * 1.1, 0, 2047)]),
            "ms": ms_, "pan": pan}


@pytest.fixture
def mode():
    """Restore MindSpore's execution mode after a test that changes it."""
    before = ms.get_context("mode")
    yield
    ms.set_context(mode=before)


def _per_image(pred, gt):
    """The reference: each (H, W, B) image alone through evaluate_reduced, scale 2047."""
    return [pi.evaluate_reduced(p.transpose(1, 2, 0), g.transpose(1, 2, 0), ratio=4, bits=11, scale=2047)
            for p, g in zip(pred, gt, strict=True)]


def test_equals_the_per_image_numbers_on_mindspore_tensors(scenes):
    pred, gt = scenes["pred"], scenes["gt"]
    want = _per_image(pred, gt)
    metric = ReducedQuality(ratio=4, bits=11, scale=2047)
    metric.clear()
    metric.update(ms.Tensor(pred), ms.Tensor(gt))
    table = metric.compute()
    for k in RR:
        assert table["per_image"][k] == [w[k] for w in want], k  # the numpy core's numbers, bit for bit
        assert metric.eval()[k] == pytest.approx(np.mean([w[k] for w in want]), rel=1e-15)
    ref = pi.ReducedMetrics(ratio=4, bits=11, scale=2047)
    ref.update(pred, gt)
    assert metric.eval() == {k: ref.compute()[k] for k in RR}
    assert table["protocol"]["scale"] == 2047.0 and table["protocol"]["batch"]["images"] == 4
    assert metric.index_names == RR and metric.higher_is_better == {
        k: pi.get_index(k).higher_is_better for k in RR}


def test_float64_tensors_parameters_and_lists(scenes):
    pred, gt = scenes["pred"].astype(np.float64), scenes["gt"].astype(np.float64)
    want = _per_image(pred, gt)
    metric = ReducedQuality(ratio=4, bits=11, scale=2047)
    metric.update(ms.Parameter(ms.Tensor(pred[:2]), name="p"), ms.Tensor(gt[:2]))  # Parameter: a Tensor
    metric.update([ms.Tensor(p) for p in pred[2:]], [ms.Tensor(g) for g in gt[2:]])
    for k in RR:
        assert metric.compute()["per_image"][k] == [w[k] for w in want], k


def test_accumulates_across_updates_of_any_size_and_clear_resets(scenes):
    pred, gt = scenes["pred"], scenes["gt"]
    whole = ReducedQuality(ratio=4, bits=11, scale=2047)
    whole.update(ms.Tensor(pred), ms.Tensor(gt))
    split = ReducedQuality(ratio=4, bits=11, scale=2047)
    for sl in (slice(0, 1), slice(1, 3), slice(3, 4)):
        split.update(ms.Tensor(pred[sl]), ms.Tensor(gt[sl]))
    assert split.n_images == 4
    assert split.eval() == whole.eval()  # correctly rounded sums: bit-identical whatever the grouping
    assert split.compute()["std"] == whole.compute()["std"]
    split.clear()
    assert split.n_images == 0
    with pytest.raises(pi.InputError, match="no image was updated since clear"):
        split.eval()
    split.update(ms.Tensor(pred[:1]), ms.Tensor(gt[:1]))
    assert split.compute()["per_image"]["Q2n"] == whole.compute()["per_image"]["Q2n"][:1]


def test_monitor_gives_one_scalar_and_its_direction(scenes):
    pred, gt = scenes["pred"], scenes["gt"]
    sam = ReducedQuality(ratio=4, bits=11, scale=2047, monitor="SAM")
    sam.update(ms.Tensor(pred), ms.Tensor(gt))
    assert isinstance(sam.eval(), float) and sam.eval() == sam.compute()["SAM"] and sam.mode == "min"
    assert ReducedQuality(ratio=4, bits=11, monitor="Q2n").mode == "max"
    with pytest.raises(pi.InputError, match="monitor must be one of"):
        ReducedQuality(ratio=4, bits=11, monitor="HQNR")
    with pytest.raises(pi.InputError, match="mode needs monitor="):
        ReducedQuality(ratio=4, bits=11).mode  # noqa: B018


class _Gain(ms.nn.Cell):
    """A one-parameter "network": lms x gain (gain trainable, 1 at start)."""

    def __init__(self):
        super().__init__()
        self.gain = ms.Parameter(ms.Tensor(np.ones(1, np.float32)), name="gain")

    def construct(self, lms, pan):
        return lms * self.gain + pan * 0.0


@pytest.mark.parametrize("mode_", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_model_eval_with_an_eval_network(scenes, mode, mode_):
    ms.set_context(mode=mode_)
    pred, gt = scenes["pred"], scenes["gt"]
    data = ms.dataset.NumpySlicesDataset({"lms": pred, "pan": pred[:, :1], "gt": gt}, shuffle=False).batch(3)
    metric = ReducedQuality(ratio=4, bits=11, scale=2047)
    net = _Gain()
    model = ms.train.Model(net, metrics={"quality": metric}, eval_network=WithTarget(net))
    got = model.eval(data)["quality"]
    want = _per_image(pred, gt)
    assert metric.n_images == 4  # batches of 3 and 1
    for k in RR:
        assert got[k] == pytest.approx(np.mean([w[k] for w in want]), rel=1e-12), k
    assert model.eval(data)["quality"] == got  # Model.eval clears the metric first
    # (loss, pred, target), as Model.fit needs it
    lossy = ms.train.Model(net, metrics={"quality": metric}, eval_network=WithTarget(net, ms.nn.L1Loss()),
                           eval_indexes=[0, 1, 2])
    assert lossy.eval(data)["quality"] == got


def test_model_eval_with_a_loss_and_selected_inputs(scenes):
    # without eval_network MindSpore builds WithEvalCell (loss, outputs, label) and passes
    # (outputs, label); an eval network with more outputs selects them with set_indexes
    pred, gt = scenes["pred"], scenes["gt"]
    data = ms.dataset.NumpySlicesDataset({"x": pred, "gt": gt}, shuffle=False).batch(2)
    net = ms.nn.Identity()
    metric = ReducedQuality(ratio=4, bits=11, scale=2047)
    got = ms.train.Model(net, loss_fn=ms.nn.L1Loss(), metrics={"q": metric}).eval(data)["q"]
    want = ReducedQuality(ratio=4, bits=11, scale=2047)
    want.update(pred, gt)
    assert got == want.eval()

    class Three(ms.nn.Cell):
        def construct(self, x, label):
            return x, x * 0.0, label

    picked = ReducedQuality(ratio=4, bits=11, scale=2047).set_indexes([0, 2])
    assert ms.train.Model(net, metrics={"q": picked}, eval_network=Three()).eval(data)["q"] == got
    with pytest.raises(TypeError, match=r"takes \(pred, target\), got 3 inputs"):
        ms.train.Model(net, metrics={"q": metric}, eval_network=Three()).eval(data)


def test_full_quality_equals_full_metrics(scenes):
    fr, ms_, pan = scenes["fr"], scenes["ms"], scenes["pan"]
    metric = FullQuality(sensor="none", ratio=4, bits=11, scale=2047)
    metric.update(ms.Tensor(fr.transpose(0, 3, 1, 2) / 2047),
                  ms.Tensor(np.stack([ms_] * 2).transpose(0, 3, 1, 2) / 2047),
                  ms.Tensor(np.stack([pan] * 2)[:, None] / 2047.0))
    want = [pi.evaluate_full(f, ms_, pan, sensor="none", ratio=4, bits=11) for f in fr]
    for k in FR:
        assert metric.compute()["per_image"][k] == pytest.approx([w[k] for w in want], rel=1e-12), k
    assert metric.higher_is_better["HQNR"] and not metric.higher_is_better["D_s"]


def _refused(match, *inputs, scale=2047):
    metric = ReducedQuality(ratio=4, bits=11, scale=scale)
    with pytest.raises(pi.InputError, match=match) as info:
        metric.update(*inputs)
    assert "\n" not in str(info.value)
    assert metric.n_images == 0  # a refused batch adds nothing


def test_wrong_tensors_are_one_line_input_errors(scenes):
    pred, gt = scenes["pred"], scenes["gt"]
    nhwc = lambda a: ms.Tensor(a.transpose(0, 2, 3, 1))  # noqa: E731
    # (N, H, W, C) data declared NCHW: 144 "bands" of 144 x 4 px
    _refused(r"image 0 of the batch: reference: 144x4 pixels", nhwc(pred), nhwc(gt))
    # both in [0, 1] with scale=1: the reference is named first (the rules blame the reference
    # before the result), with its range
    _refused(r"image 0 of the batch: reference: float data within \[0\.\d+, 1\].*give the data scale", ms.Tensor(pred),
             ms.Tensor(gt), scale=1.0)
    bad = pred.copy()
    bad[3, 2, 60, 60] = np.nan
    _refused(r"image 3 of the batch: fused: contains 1 non-finite", ms.Tensor(bad), ms.Tensor(gt))
    _refused("mixes image sizes", [ms.Tensor(pred[0]), ms.Tensor(pred[1, :, :100, :100])],
             [ms.Tensor(gt[0]), ms.Tensor(gt[1, :, :100, :100])])
    _refused("batches of different sizes", ms.Tensor(pred[:3]), ms.Tensor(gt))
    _refused("needs a 4-D", ms.Tensor(pred[0]), ms.Tensor(gt[0]))


# ------------------------------------------------------------------ issue 34: undefined values

_PEAK = 2.0**11 - 1
_OFFSETS = (4.0, 0.0, 32.0)


def _smooth(seed: int, size: int = 96, bands: int = 4) -> np.ndarray:
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    field = ndimage.zoom(rng.uniform(0, 1, (size // 8, size // 8, bands)), (8, 8, 1), order=3)
    return np.round(200 + 1200 * (field - field.min()) / (field.max() - field.min()))


def test_mindspore_metric_leaves_the_infinite_image_out():
    """Issue 34: an undefined image value (the infinite PSNR of a perfect image) is left out of the
    mean and std; numbers from the definition (fused = reference + d DN: PSNR = 20 log10(2047 / d))."""
    import math

    refs = [_smooth(80 + i) for i in range(3)]
    fused = [r + d for r, d in zip(refs, _OFFSETS, strict=True)]
    metric = ReducedQuality(ratio=4, bits=11, indexes=["PSNR", "RMSE"], layout="NHWC")
    metric.clear()
    metric.update(ms.Tensor(np.stack(fused[:2])), ms.Tensor(np.stack(refs[:2])))
    metric.update(ms.Tensor(np.stack(fused[2:])), ms.Tensor(np.stack(refs[2:])))
    p4, p32 = 20 * math.log10(_PEAK / 4), 20 * math.log10(_PEAK / 32)
    means = metric.eval()
    assert means["PSNR"] == pytest.approx((p4 + p32) / 2, rel=1e-12)
    assert means["RMSE"] == pytest.approx(36.0 / 3 / _PEAK, rel=1e-12)
    table = metric.compute()
    assert table["per_image"]["PSNR"][1] == math.inf
    assert table["std"]["PSNR"] == pytest.approx(abs(p4 - p32) / math.sqrt(2), rel=1e-12)

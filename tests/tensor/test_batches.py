"""Batches and framework tensors through the library: one value per image, equal to the per-image
numpy results; streaming metrics independent of batch size and order; wrong tensor inputs are
one-line InputErrors."""

from __future__ import annotations

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import gsa
from pansharp_iqa.demo_data import load_demo

RR = ("Q2n", "Q", "SAM", "ERGAS", "SCC")
FR = ("D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR")


@pytest.fixture(scope="module")
def scenes():
    """Four reduced-resolution pairs and two full-resolution triples from the demo scene."""
    ms, pan = load_demo()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "none", ratio=4)
    base = gsa(ms_lr, pan_lr, ratio=4)
    rng = np.random.default_rng(0)
    fused = [np.clip(base * g + rng.normal(0, s, base.shape), 0, None) for g, s in
             [(1.0, 0), (1.05, 10), (0.9, 30), (1.2, 5)]]
    fr_fused = gsa(ms, pan, ratio=4)
    return {"gt": ms, "fused": fused, "ms": ms, "pan": pan, "fr": [fr_fused, np.clip(fr_fused * 1.1, 0, None)]}


def _nchw(images):
    return np.stack(images).transpose(0, 3, 1, 2)


def test_a_batch_gives_the_per_image_numbers(scenes):
    gt, fused = scenes["gt"], scenes["fused"]
    want = [pi.evaluate_reduced(f, gt, ratio=4, bits=11) for f in fused]
    for layout, f, g in [("NCHW", _nchw(fused), _nchw([gt] * 4)), ("NHWC", np.stack(fused), np.stack([gt] * 4))]:
        got = pi.evaluate_reduced(f, g, ratio=4, bits=11, layout=layout)
        for k in RR:
            assert got[k].tolist() == [w[k] for w in want], (layout, k)
        assert got["protocol"]["batch"] == {"images": 4, "layout": layout, "backend": "host", "device": "cpu"}
        assert {k: v for k, v in got["protocol"].items() if k != "batch"} == want[0]["protocol"]


def test_torch_tensors_with_gradients_and_lists(scenes):
    torch = pytest.importorskip("torch")
    gt, fused = scenes["gt"], scenes["fused"]
    want = pi.evaluate_reduced(_nchw(fused), _nchw([gt] * 4), ratio=4, bits=11, layout="NCHW")
    pred = torch.tensor(_nchw(fused) / 2047, requires_grad=True)
    got = pi.evaluate_reduced(pred, torch.tensor(_nchw([gt] * 4) / 2047), ratio=4, bits=11, scale=2047,
                              layout="NCHW")
    for k in RR:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12)
    listed = pi.evaluate_reduced([torch.tensor(f.transpose(2, 0, 1)) for f in fused],
                                 [torch.tensor(gt.transpose(2, 0, 1))] * 4, ratio=4, bits=11, layout="NCHW")
    for k in RR:
        assert listed[k].tolist() == want[k].tolist()
    one = pi.evaluate_reduced(torch.tensor(fused[1]), torch.tensor(gt), ratio=4, bits=11)
    assert isinstance(one["Q2n"], float) and one["Q2n"] == want["Q2n"][1]


def test_full_resolution_batches_with_either_pan_shape(scenes):
    ms, pan, fr = scenes["ms"], scenes["pan"], scenes["fr"]
    want = [pi.evaluate_full(f, ms, pan, sensor="none", ratio=4, bits=11) for f in fr]
    for pans in (np.stack([pan, pan]), np.stack([pan, pan])[:, None]):
        got = pi.evaluate_full(_nchw(fr), _nchw([ms, ms]), pans, sensor="none", ratio=4, bits=11, layout="NCHW")
        for k in FR:
            assert got[k].tolist() == [w[k] for w in want], k


def test_public_indexes_take_batches(scenes):
    gt, fused = scenes["gt"], scenes["fused"]
    assert pi.q2n(_nchw([gt] * 4), _nchw(fused), layout="NCHW").tolist() == [pi.q2n(gt, f) for f in fused]
    assert pi.psnr(np.stack([gt] * 4), np.stack(fused), data_range=2047, layout="NHWC").tolist() == [
        pi.psnr(gt, f, data_range=2047) for f in fused]
    ms, pan, fr = scenes["ms"], scenes["pan"], scenes["fr"]
    got = pi.hqnr(_nchw(fr), _nchw([ms, ms]), np.stack([pan, pan]), sensor="none", ratio=4, layout="NCHW")
    assert got.tolist() == [pi.hqnr(f, ms, pan, sensor="none", ratio=4) for f in fr]


def test_metrics_do_not_depend_on_batch_size_or_order(scenes):
    gt, fused = scenes["gt"], scenes["fused"]
    per = [pi.evaluate_reduced(f, gt, ratio=4, bits=11) for f in fused]
    one = pi.ReducedMetrics(ratio=4, bits=11, layout="NHWC")
    for f in fused:
        one.update(f[None], gt[None])
    both = pi.ReducedMetrics(ratio=4, bits=11, layout="NHWC")
    order = [3, 1, 0, 2]
    both.update(np.stack([fused[i] for i in order[:3]]), np.stack([gt] * 3))
    both.update(np.stack([fused[order[3]]]), gt[None])
    a, b = one.compute(), both.compute()
    for k in RR:
        assert a[k] == b[k]  # correctly rounded sums: bit-identical whatever the grouping and order
        assert a["std"][k] == b["std"][k]
        assert a["per_image"][k] == [p[k] for p in per]
        assert b["per_image"][k] == [per[i][k] for i in order]
        assert a[k] == pytest.approx(np.mean([p[k] for p in per]), rel=1e-15)
        assert a["std"][k] == pytest.approx(np.std([p[k] for p in per], ddof=1), rel=1e-12)
    assert a["protocol"]["batch"]["images"] == 4
    one.reset()
    with pytest.raises(pi.InputError, match="before any update"):
        one.compute()


def test_full_metrics(scenes):
    ms, pan, fr = scenes["ms"], scenes["pan"], scenes["fr"]
    m = pi.FullMetrics(sensor="none", ratio=4, bits=11)
    for f in fr:
        m.update(_nchw([f]), _nchw([ms]), pan[None, None])
    out = m.compute()
    for k in FR:
        assert out["per_image"][k] == [pi.evaluate_full(f, ms, pan, sensor="none", ratio=4, bits=11)[k] for f in fr]
    assert m.higher_is_better["HQNR"] is True and m.higher_is_better["D_s"] is False


def _refused(match, *args, **kw):
    with pytest.raises(pi.InputError, match=match) as info:
        pi.evaluate_reduced(*args, ratio=4, bits=11, **kw)
    assert "\n" not in str(info.value)


def test_wrong_batches_are_one_line_input_errors(scenes):
    gt, fused = scenes["gt"], scenes["fused"]
    f, g = _nchw(fused), _nchw([gt] * 4)
    _refused("looks channel-first", f, g, layout="NHWC")  # NCHW data declared NHWC
    _refused("needs a 4-D", f[0], g[0], layout="NCHW")
    _refused(r"image 0 of the batch: reference: .*\[0, 1\]", f / 2047, g / 2047, layout="NCHW")  # no scale=
    _refused(r"image 0 of the batch: fused .*another scale", f / 2047, g, layout="NCHW")
    bad = f.copy()
    bad[2, 1, 50, 50] = np.nan
    _refused(r"image 2 of the batch: fused: contains 1 non-finite", bad, g, layout="NCHW")
    _refused("mixes image sizes", [f[0], f[1][:, :100]], [g[0], g[1]], layout="NCHW")
    _refused("batches of different sizes", f[:3], g, layout="NCHW")
    _refused("layout must be one of", f, g, layout="CHW")


def test_inputs_on_different_devices_are_refused(scenes):
    torch = pytest.importorskip("torch")
    gt, fused = scenes["gt"], scenes["fused"]
    pred = torch.tensor(_nchw(fused)).to("meta")
    _refused(r"inputs on different devices \(fused on meta, reference on cpu\)", pred, torch.tensor(_nchw([gt] * 4)),
             layout="NCHW")


def test_torchmetrics_adapter_gathers_per_image_values(scenes):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchmetrics")
    from pansharp_iqa.tensor.torchmetrics_adapter import ReducedQuality, index_metric

    gt, fused = scenes["gt"], scenes["fused"]
    m = ReducedQuality(pi.reduced_settings(ratio=4, bits=11, scale=2047), sync_on_compute=False)  # the value
    for f in fused:
        m.update(torch.tensor(f.transpose(2, 0, 1)[None] / 2047), torch.tensor(gt.transpose(2, 0, 1)[None] / 2047))
    ref = pi.ReducedMetrics(ratio=4, bits=11)
    ref.update(_nchw(fused), _nchw([gt] * 4))
    want, got = ref.compute(), m.compute()
    for k in RR:
        assert float(got[k]) == pytest.approx(want[k], rel=1e-12)
        assert m.per_image()[k] == pytest.approx(want["per_image"][k], rel=1e-12)
    sam = index_metric("SAM", ratio=4, bits=11)  # or the keywords of reduced_settings
    assert sam.higher_is_better is False and type(sam).higher_is_better is False
    with pytest.raises(pi.InputError, match="not both"):
        ReducedQuality(pi.reduced_settings(ratio=4, bits=11), ratio=4)
    m.reset()
    assert m.per_image()["Q2n"] == []

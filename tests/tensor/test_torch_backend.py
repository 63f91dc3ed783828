"""The PyTorch backend on CPU tensors equals the numpy core (the reference path) within 1e-12
relative: on the spec suite's kinds of inputs (band counts, odd sizes, integer and float data,
degenerate windows and blocks, every toolbox-family protocol) and on the real scenes of
``../shared/data``. Q2n is bit-identical (exact arithmetic: both round the images to integers and
sum integers); every other index, D_lambda_K included (an MTF filter before that rounding), is a
comparison across libraries, within RTOL. Wrong inputs give the host's messages."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as pi

torch = pytest.importorskip("torch")

#: where the tensors live: CPU by default; PANSHARP_TEST_DEVICE=cuda runs the same checks on a GPU
DEVICE = os.environ.get("PANSHARP_TEST_DEVICE", "cpu")
#: torch against numpy where floating-point operations differ in order or fusion (filters, sums)
RTOL = 1e-12
#: SAM's conditioning floor: cos within a few ulp of 1 has an angle of up to sqrt(2 * 4 eps) rad
#: (1.7e-6 degrees), so near-identical spectra (a 1-band image) are compared absolutely there
SAM_ATOL = 2e-6
SHARED = Path(os.environ.get("PANSHARP_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
TOOLBOX = ("toolbox2020", "toolbox2015", "qnr-paper")


def _smooth(rng, shape, hi=1800.0):
    h, w, b = shape
    yy, xx = np.mgrid[0:h, 0:w]
    out = np.empty(shape)
    for k in range(b):
        fx, fy = rng.uniform(0.02, 0.2, 2)
        out[..., k] = 0.5 + 0.25 * np.sin(fx * xx + k) * np.cos(fy * yy) + 0.1 * rng.random((h, w))
    return 50 + hi * out / out.max()


def _close(torch_result, host_result, exact=("Q2n",)):
    for k, v in host_result.items():
        if k == "protocol":
            continue
        got, want = np.asarray(torch_result[k]), np.asarray(v)
        if k in exact:
            np.testing.assert_array_equal(got, want, err_msg=k)
        else:
            atol = SAM_ATOL if k == "SAM" else 1e-15
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=atol, err_msg=k)
    strip = {k: w for k, w in host_result["protocol"].items() if k != "batch"}
    assert {k: w for k, w in torch_result["protocol"].items() if k != "batch"} == strip
    assert torch_result["protocol"]["batch"]["backend"] == "torch"


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a)).to(DEVICE)


def _rr(fused, gt, **kw):
    """Host per-image results and the torch backend's, on one NCHW batch."""
    f, g = np.stack(fused).transpose(0, 3, 1, 2), np.stack(gt).transpose(0, 3, 1, 2)
    host = pi.evaluate_reduced(f, g, layout="NCHW", backend="host", **kw)
    dev = pi.evaluate_reduced(_t(f), _t(g), layout="NCHW", backend="torch", **kw)
    _close(dev, host)
    return host


@pytest.mark.parametrize("bands", [1, 3, 4, 5, 8])
@pytest.mark.parametrize("shape", [(96, 96), (110, 131), (75, 90)])
@pytest.mark.parametrize("kind", ["int", "float"])
def test_reduced_resolution_equals_the_host(bands, shape, kind):
    rng = np.random.default_rng(bands * 1000 + shape[1])
    gt = _smooth(rng, (*shape, bands))
    fused = [gt * g + rng.normal(0, s, gt.shape) for g, s in [(1.0, 8), (1.1, 30), (0.85, 2)]]
    if kind == "int":
        gt, fused = np.round(gt), [np.round(np.clip(f, 0, None)) for f in fused]
    for proto in ("toolbox2020", "toolbox2015"):
        _rr(fused, [gt] * 3, ratio=4, bits=11, protocol=proto, indexes=["default", "PSNR", "CC"])


def test_reduced_degenerate_windows_blocks_and_pixels():
    """Flat areas (UIQI special cases), a zero-mean band (Q2n's branch), zero-norm pixels (SAM),
    negative fused values (the cast saturates), a threshold and a scale."""
    rng = np.random.default_rng(5)
    gt = _smooth(rng, (128, 128, 4))
    gt[10:80, 10:80, :] = 700.0  # flat windows and blocks in both images
    gt[:, :, 2] = np.where(np.arange(128)[None, :] < 64, 0.0, gt[:, :, 2])
    fused = gt + rng.normal(0, 3, gt.shape)
    fused[10:80, 10:80, :] = 700.0
    fused[90:100, 90:100, :] = 0.0
    gt2 = gt.copy()
    gt2[90:100, 90:100, :] = 0.0
    under = fused - 40.0  # a network's undershoot below 0
    _rr([fused, under, fused], [gt, gt, gt2], ratio=4, bits=11)
    _rr([fused * 1.3], [gt], ratio=4, bits=11, threshold=True)
    _rr([fused / 2047], [gt / 2047], ratio=4, bits=11, scale=2047)


def test_integer_tensors_and_nhwc():
    rng = np.random.default_rng(6)
    gt = np.round(_smooth(rng, (100, 100, 4))).astype(np.uint16)
    fused = np.clip(gt.astype(np.int32) + rng.integers(-50, 50, gt.shape), 0, None).astype(np.int16)
    host = pi.evaluate_reduced(fused, gt, ratio=4, bits=11)
    dev = pi.evaluate_reduced(torch.from_numpy(fused[None]), torch.from_numpy(gt[None]), ratio=4, bits=11,
                              layout="NHWC", backend="torch")
    _close({k: (v[0] if k != "protocol" else v) for k, v in dev.items()}, host)
    one = pi.evaluate_reduced(torch.from_numpy(fused), torch.from_numpy(gt), ratio=4, bits=11, backend="torch")
    assert isinstance(one["SAM"], float) and one["Q2n"] == host["Q2n"]


def _fr(fused, ms, pan, **kw):
    f, m = np.stack(fused).transpose(0, 3, 1, 2), np.stack(ms).transpose(0, 3, 1, 2)
    p = np.stack(pan)
    host = pi.evaluate_full(f, m, p, layout="NCHW", backend="host", **kw)
    dev = pi.evaluate_full(_t(f), _t(m), _t(p)[:, None], layout="NCHW", backend="torch", **kw)
    _close(dev, host)
    return host


@pytest.mark.parametrize("protocol", TOOLBOX)
@pytest.mark.parametrize("bands, sensor", [(4, "QB"), (8, "WV3"), (3, "none")])
def test_full_resolution_equals_the_host(protocol, bands, sensor):
    rng = np.random.default_rng(bands)
    ms = _smooth(rng, (32, 48, bands))
    pan = pi.imresize(_smooth(rng, (32, 48, 1))[:, :, 0], 4.0)
    exp = pi.interp23tap(ms, 4)
    fused = [exp + 0.8 * (pan - pi.interp23tap(pi.imresize(pan, 0.25), 4))[:, :, None], exp * 1.05 + 3]
    ratio_bits = {"ratio": 4, "bits": 11} if sensor == "none" else {}
    _fr(fused, [ms, ms], [pan, pan], sensor=sensor, protocol=protocol, **ratio_bits)


def test_full_resolution_constant_blocks_follow_the_policy():
    rng = np.random.default_rng(9)
    ms = _smooth(rng, (32, 32, 4))
    ms[:8, :8] = 500.0
    pan = pi.imresize(ms.mean(axis=2), 4.0)
    pan[:32, :32] = 500.0
    fused = pi.interp23tap(ms, 4)
    fused[:32, :32] = 500.0
    for policy in ("omit", "propagate"):
        _fr([fused], [ms], [pan], sensor="QB", nan_policy=policy)
    with pytest.raises(pi.ConstantBlockError, match="blocks are constant"):
        pi.evaluate_full(torch.from_numpy(fused), torch.from_numpy(ms), torch.from_numpy(pan), sensor="QB",
                         backend="torch")


def test_batch_mean_equals_the_mean_of_per_image_host_results():
    rng = np.random.default_rng(11)
    gt = [_smooth(rng, (96, 96, 4)) for _ in range(5)]
    fused = [g * rng.uniform(0.9, 1.1) + rng.normal(0, 10, g.shape) for g in gt]
    m = pi.ReducedMetrics(ratio=4, bits=11, layout="NCHW", backend="torch")
    m.update(torch.from_numpy(np.stack(fused[:2]).transpose(0, 3, 1, 2)),
             torch.from_numpy(np.stack(gt[:2]).transpose(0, 3, 1, 2)))
    m.update(torch.from_numpy(np.stack(fused[2:]).transpose(0, 3, 1, 2)),
             torch.from_numpy(np.stack(gt[2:]).transpose(0, 3, 1, 2)))
    out = m.compute()
    host = [pi.evaluate_reduced(f, g, ratio=4, bits=11) for f, g in zip(fused, gt, strict=True)]
    for k in ("Q2n", "Q", "SAM", "ERGAS", "SCC"):
        assert out[k] == pytest.approx(np.mean([h[k] for h in host]), rel=RTOL)
    assert out["protocol"]["batch"]["backend"] == "torch"


def _refused(match, *args, **kw):
    with pytest.raises(pi.InputError, match=match) as info:
        pi.evaluate_reduced(*args, ratio=4, bits=11, backend="torch", **kw)
    assert "\n" not in str(info.value)


def test_wrong_tensor_inputs_are_refused_like_the_host():
    rng = np.random.default_rng(12)
    gt = torch.from_numpy(np.stack([_smooth(rng, (96, 96, 4))] * 2).transpose(0, 3, 1, 2).copy())
    _refused("looks channel-first", gt * 1.01, gt, layout="NHWC")
    _refused(r"image 0 of the batch: reference: .*\[0, 1\]", gt / 2047, gt / 2047, layout="NCHW")
    bad = gt.clone()
    bad[1, 0, 5, 5] = float("nan")
    _refused(r"image 1 of the batch: fused: contains 1 non-finite", bad, gt, layout="NCHW")
    _refused("mixes image sizes", [gt[0], gt[1][:, :90]], [gt[0], gt[1]], layout="NCHW")
    _refused("batches of different sizes", gt[:1], gt, layout="NCHW")
    _refused(r"inputs on different devices", gt.to("meta"), gt, layout="NCHW")


def test_auto_keeps_cpu_tensors_on_the_host_and_reprojected_falls_back():
    rng = np.random.default_rng(13)
    gt = torch.from_numpy(_smooth(rng, (96, 96, 4)))
    r = pi.evaluate_reduced(gt * 1.01, gt, ratio=4, bits=11)
    assert r["protocol"]["batch"]["backend"] == "host"
    with pytest.raises(pi.InputError, match="toolbox-family"):
        ms = torch.from_numpy(_smooth(rng, (32, 32, 4)))
        pan = torch.from_numpy(pi.imresize(_smooth(rng, (32, 32, 1))[:, :, 0], 4.0))
        pi.evaluate_full(torch.from_numpy(pi.interp23tap(ms.numpy(), 4)), ms, pan, sensor="QB",
                         protocol="reprojected2022", backend="torch")


# --------------------------------------------------------------------------- real scenes


def _mat(name):
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    import scipy.io as sio

    return sio.loadmat(str(path))


@pytest.mark.parametrize("name, sensor, key", [("imgWV2.mat", "WV2", "I_MS"), ("imgIK.mat", "IKONOS", "I_MS")])
def test_real_scenes_reduced_and_full_resolution(name, sensor, key):
    from pansharp_iqa.baselines import gsa, mtf_glp_hpm

    d = _mat(name)
    ms, pan = d[key].astype(np.float64)[:128, :128], d["I_PAN"].astype(np.float64)[:512, :512]
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, sensor)
    fused = [gsa(ms_lr, pan_lr, ratio=4), mtf_glp_hpm(ms_lr, pan_lr, ratio=4, sensor=sensor)]
    for proto in ("toolbox2020", "toolbox2015"):
        _rr(fused, [ms, ms], ratio=4, bits=11, protocol=proto, indexes=["default", "PSNR", "CC"])
    fr = [gsa(ms, pan, ratio=4), mtf_glp_hpm(ms, pan, ratio=4, sensor=sensor)]
    for proto in TOOLBOX:
        _fr(fr, [ms, ms], [pan, pan], sensor=sensor, protocol=proto)
    # the library's own Wald-degraded pair at full resolution (QNR at reduced resolution)
    _fr([gsa(ms_lr, pan_lr, ratio=4)], [ms_lr], [pan_lr], sensor=sensor)  # the PAN overshoots 2**bits - 1: scored


def test_real_wv3_full_resolution():
    from pansharp_iqa.baselines import gsa

    d = _mat("WV3_example.mat")
    ms, pan = d["I_MS_LR"].astype(np.float64), d["I_PAN"].astype(np.float64)
    for proto in TOOLBOX:
        _fr([gsa(ms, pan, ratio=4)], [ms], [pan], sensor="WV3", protocol=proto)

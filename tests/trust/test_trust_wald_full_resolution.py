"""Issue 20 item 1: full-resolution indexes on the library's own Wald degradation are computed.

Bicubic shrinking overshoots (the IKONOS PAN reaches 2122 DN after ``wald_degrade``), and no
full-resolution index depends on ``bits`` unless ``threshold`` clips the fused image at 2**bits:
the evaluation is not refused, and equals the reference toolbox (independent re-implementation in
``tests/spec/reference_impl.py``) to 1e-9. Under ``threshold`` the MS must lie within ``bits``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.tiled import evaluate_full_tiled
from pansharp_iqa.validation import ScaleError
from trust_helpers import demo, fr_dataset, real_scene, run_eval, values

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spec"))
import reference_impl as R  # noqa: E402


def _toolbox_fr(fused, ms_lr, pan, gnyq):
    exp = R.interp23tap(ms_lr, 4)
    dl, ds = R.d_lambda(fused, exp), R.d_s(fused, exp, pan, 4)
    dk = R.d_lambda_k(fused, exp, gnyq, 4)
    return {"D_lambda": dl, "D_s": ds, "QNR": (1 - dl) * (1 - ds), "D_lambda_K": dk, "HQNR": (1 - dk) * (1 - ds)}


@pytest.mark.parametrize("crop", [(0, 0), (160, 96)])
def test_ikonos_wald_degraded_scene_is_evaluated_at_full_resolution_as_the_toolbox(crop):
    sc = real_scene("imgIK.mat")
    r0, c0 = crop
    ms, pan = sc["ms"][r0:r0 + 128, c0:c0 + 128], sc["pan"][4 * r0:4 * r0 + 512, 4 * c0:4 * c0 + 512]
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "IKONOS")
    fused = pi.interp23tap(ms_lr, 4) + 0.8 * (pan_lr - pi.interp23tap(pi.imresize(pan_lr, 0.25), 4))[:, :, None]
    if crop == (0, 0):
        assert pan_lr.max() > 2047  # the overshoot that used to be refused
    ours = pi.evaluate_full(fused, ms_lr, pan_lr, sensor="IKONOS")
    expected = _toolbox_fr(fused, ms_lr, pan_lr, R.spec_ms_gnyq("IKONOS", 4))
    for k, v in expected.items():
        assert ours[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
    tiled = evaluate_full_tiled(fused, ms_lr, pan_lr, sensor="IKONOS", tile_size=128)
    for k, v in values(ours).items():
        assert tiled[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
    # the other toolbox-family protocols on the same degraded data
    exp = R.interp23tap(ms_lr, 4)
    r15 = pi.evaluate_full(fused, ms_lr, pan_lr, sensor="IKONOS", protocol="toolbox2015")
    ds15 = R.d_s(fused, exp, pan_lr, 4, variant="toolbox2015", pan_gnyq=R.SPEC_PAN_GNYQ["IKONOS"])
    assert r15["D_s"] == pytest.approx(ds15, rel=1e-9, abs=1e-12)
    paper = pi.evaluate_full(fused, ms_lr, pan_lr, sensor="IKONOS", protocol="qnr-paper")
    assert paper["D_lambda"] == pytest.approx(R.d_lambda_paper(fused, ms_lr, 4), rel=1e-9, abs=1e-12)
    assert paper["D_s"] == pytest.approx(R.d_s(fused, exp, pan_lr, 4, variant="qnr-paper", ms_lr=ms_lr), rel=1e-9,
                                         abs=1e-12)
    # the reprojected protocol gets its numbers too, the same tile-wise
    repro = pi.evaluate_full(fused, ms_lr, pan_lr, sensor="IKONOS", protocol="reprojected2022")
    repro_tiled = evaluate_full_tiled(fused, ms_lr, pan_lr, sensor="IKONOS", protocol="reprojected2022", tile_size=256)
    for k, v in values(repro).items():
        assert np.isfinite(v) and repro_tiled[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


def test_the_whole_ikonos_scene_degraded_gets_numbers_in_memory_and_tile_wise():
    sc = real_scene("imgIK.mat")
    ms_lr, pan_lr = pi.wald_degrade(sc["ms"], sc["pan"], "IKONOS")
    assert pan_lr.max() == pytest.approx(2122.43, abs=0.01)
    from pansharp_iqa.baselines import gsa

    fused = gsa(ms_lr, pan_lr, ratio=4)
    memory = pi.evaluate_full(fused, ms_lr, pan_lr, sensor="IKONOS")
    tiled = pi.evaluate_full(fused, ms_lr, pan_lr, sensor="IKONOS", tiled="always")
    assert 0 < memory["QNR"] < 1
    for k, v in values(memory).items():
        assert tiled[k] == pytest.approx(v, rel=1e-9, abs=1e-12)


def test_bits_do_not_change_full_resolution_numbers_so_they_are_not_range_checked():
    d = demo()
    ms_lr, pan_lr = d["ms_lr"][:32, :32], d["pan_lr"][:128, :128]
    fused = pi.interp23tap(ms_lr, 4)
    base = pi.evaluate_full(fused, ms_lr, pan_lr * 1.2, sensor="none", ratio=4, bits=11)  # PAN beyond 2047
    for bits in (8, 10, 11, 16):
        assert values(pi.evaluate_full(fused, ms_lr, pan_lr * 1.2, sensor="none", ratio=4, bits=bits)) == values(base)


def test_under_threshold_the_ms_must_lie_within_bits():
    d = demo()
    ms, pan = d["ms_s"], d["pan_s"]
    assert ms.max() > 1023
    for evaluate in (pi.evaluate_full, evaluate_full_tiled):
        with pytest.raises(ScaleError, match="ms: maximum .* exceeds the 10-bit range"):
            evaluate(d["fr_s"], ms, pan, sensor="none", ratio=4, bits=10, threshold=True)
    # the PAN is not clipped: its overshoot stays legitimate under threshold too
    r = pi.evaluate_full(d["fr_s"], ms, pan * 1.3, sensor="none", ratio=4, bits=11, threshold=True)
    assert 0 < r["QNR"] < 1


@pytest.mark.parametrize("scene", ["demo", "imgIK.mat"])
def test_pansharp_eval_full_resolution_on_a_degraded_scene(tmp_path, capsys, scene):
    if scene == "demo":
        d = demo()
        ms_lr, pan_lr = d["ms_lr"][:32, :32], np.array(d["pan_lr"][:128, :128])
        pan_lr[40:42, 60:62] = 2130.0  # a bicubic overshoot at a bright edge
    else:
        sc = real_scene(scene)
        ms_lr, pan_lr = pi.wald_degrade(sc["ms"], sc["pan"], "IKONOS")
    assert pan_lr.max() > 2047
    fused = pi.interp23tap(ms_lr, 4)
    data, method = fr_dataset(tmp_path, {"s.npy": fused}, ms=ms_lr, pan=pan_lr)
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    assert code == 0, pairs
    expected = pi.evaluate_full(fused, ms_lr, pan_lr, sensor="none", ratio=4, bits=11)
    got = pairs[("s", "m")]["metrics"]
    for k, v in values(expected).items():
        assert got[k] == pytest.approx(v, rel=1e-12)


def test_a_full_resolution_dataset_declares_the_right_bits_for_its_own_pan_only_when_it_matters(tmp_path, capsys):
    # the scene's own checks (pansharp-eval) hold only a ground truth against bits
    d = demo()
    data, method = fr_dataset(tmp_path, {"s.npy": d["fr_s"]}, ms=d["ms_s"], pan=d["pan_s"], bits=10)
    code, pairs, _ = run_eval(capsys, data, method, tmp_path / "o")
    assert code == 0 and pairs[("s", "m")]["status"] == "ok"
    np.testing.assert_allclose(pairs[("s", "m")]["metrics"]["QNR"], fr_value := pi.evaluate_full(
        d["fr_s"], d["ms_s"], d["pan_s"], sensor="none", ratio=4, bits=10)["QNR"], rtol=1e-12)
    assert 0 < fr_value < 1

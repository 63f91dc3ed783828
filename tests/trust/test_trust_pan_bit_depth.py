"""Issue 27 item 1: a PAN on another bit depth than the MS (``pan * 2.0`` on a real WV2 crop gave D_s
0.0350 instead of 0.0743) is refused by the rule pan_scale in memory, tile-wise, with ``FullMetrics``
and in ``pansharp-eval``, with one message; the PAN as given gets its numbers."""

from __future__ import annotations

import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import gsa
from pansharp_iqa.validation import ScaleError
from trust_helpers import fr_dataset, real_scene, run_eval


def _wv2():
    sc = real_scene("imgWV2.mat")
    ms, pan = sc["ms"][:64, :64], sc["pan"][:256, :256]
    return gsa(ms, pan, ratio=4), ms, pan


@pytest.mark.parametrize("path", ["memory", "tiled", "metrics"])
def test_a_pan_on_another_bit_depth_is_refused_on_every_path(path):
    fused, ms, pan = _wv2()

    def run(p):
        if path == "metrics":
            from pansharp_iqa.tensor import FullMetrics

            m = FullMetrics(sensor="WV2", ratio=4, bits=11, layout="NHWC")
            m.update(fused[None], ms[None], p[None])
            return m.compute()
        return pi.evaluate_full(fused, ms, p, sensor="WV2", tiled="always" if path == "tiled" else "never")

    assert 0 < run(pan)["HQNR"] < 1
    with pytest.raises(ScaleError, match=r"pan is on another scale than ms: its values are about 1\.\d+ times"):
        run(pan * 2.0)


def test_pansharp_eval_refuses_a_pan_on_another_bit_depth(tmp_path, capsys):
    fused, ms, pan = _wv2()
    for name, p in (("ok", pan), ("x2", pan * 2.0)):
        data, method = fr_dataset(tmp_path / name, {"s.npy": fused}, ms=ms, pan=p, sensor="WV2")
        code, pairs, _ = run_eval(capsys, data, method, tmp_path / name / "o")
        if name == "ok":
            assert code == 0 and 0 < pairs[("s", "m")]["metrics"]["HQNR"] < 1
        else:
            assert code == 1 and "s_pan.npy is on another scale than s_ms.npy" in pairs[("s", "m")]["reason"]

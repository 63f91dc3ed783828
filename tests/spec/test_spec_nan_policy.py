"""Issue 34: ``nan_policy`` of D_lambda and D_s (constant blocks, where UIQI is 0/0) against the
literal reference (``reference_impl``, written from the spec): ``"omit"`` averages each band pair's
(band's) block UIQIs over its DEFINED blocks only, in memory and tile by tile (block sums merged
across tiles); ``"propagate"`` gives the toolbox's NaN; ``"raise"`` refuses in one line.

The scene: 128 x 128 x 4 at PAN scale (16 blocks of 32 x 32), one block constant in every fused band
and in the PAN, so the fused band-pair UIQIs (D_lambda) and the fused-vs-PAN UIQIs (D_s) are 0/0 on
that block and defined on the 15 others; the MS-side terms are defined everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference_impl as R
from spec_helpers import rel_close, smooth_dn

S = 32
FLAT = (slice(32, 64), slice(64, 96))  # one 32 x 32 block


def nanmean_block_uiqi(x, y):
    """Mean UIQI over the blocks where it is defined (the reference's block loop, NaN blocks left out)."""
    vals = [R.uqi(x[r:r + S, c:c + S], y[r:r + S, c:c + S]) for r in range(0, x.shape[0], S)
            for c in range(0, x.shape[1], S)]
    defined = [v for v in vals if not np.isnan(v)]
    assert len(vals) == 16
    return sum(defined) / len(defined), len(defined)


@pytest.fixture(scope="module")
def flat_scene():
    rng = np.random.default_rng(3401)
    hr = smooth_dn(rng, (128, 128, 4), hi=1600.0)
    ms = hr.reshape(32, 4, 32, 4, 4).mean(axis=(1, 3)) + rng.normal(0, 10, (32, 32, 4))
    exp = R.interp23tap(ms, 4)
    pan = hr.mean(axis=2) + rng.normal(0, 25, (128, 128)) + 100
    fused = exp + 0.8 * (pan - R.interp23tap(R.imresize(pan, 0.25), 4))[:, :, None] + rng.normal(0, 5, exp.shape)
    fused[FLAT] = 900.0
    pan[FLAT] = 1000.0
    pan_low = R.interp23tap(R.imresize(pan, 0.25), 4)
    # the omit references, from the block loop with the undefined block left out
    pairs = [(k, r) for k in range(4) for r in range(k + 1, 4)]
    d_lambda, d_lambda_all_blocks = 0.0, 0.0
    for k, r in pairs:
        qh, n = nanmean_block_uiqi(fused[:, :, k], fused[:, :, r])
        assert n == 15
        ql = R.block_uiqi(exp[:, :, k], exp[:, :, r], S)
        d_lambda += abs(qh - ql) / len(pairs)
        d_lambda_all_blocks += abs(qh * 15 / 16 - ql) / len(pairs)  # the wrong divisor: all 16 blocks
    d_s, d_s_all_blocks = 0.0, 0.0
    for b in range(4):
        qh, n = nanmean_block_uiqi(fused[:, :, b], pan)
        assert n == 15
        ql = R.block_uiqi(exp[:, :, b], pan_low, S)
        d_s += abs(qh - ql) / 4
        d_s_all_blocks += abs(qh * 15 / 16 - ql) / 4
    # the test can tell the divisors apart: they differ by far more than its tolerance
    assert abs(d_lambda - d_lambda_all_blocks) > 1e-3 and abs(d_s - d_s_all_blocks) > 1e-3
    return {"fused": fused, "ms": ms, "pan": pan, "D_lambda": d_lambda, "D_s": d_s}


def test_omit_averages_the_defined_blocks_only(piq, flat_scene):
    s = flat_scene
    rel_close(piq.d_lambda(s["fused"], s["ms"], ratio=4, nan_policy="omit"), s["D_lambda"], what="D_lambda omit")
    rel_close(piq.d_s(s["fused"], s["ms"], s["pan"], ratio=4, nan_policy="omit"), s["D_s"], what="D_s omit")
    res = piq.evaluate_full(s["fused"], s["ms"], s["pan"], sensor="none", ratio=4, nan_policy="omit",
                            indexes=["D_lambda", "D_s", "QNR"])
    rel_close(res["D_lambda"], s["D_lambda"], what="evaluate_full D_lambda omit")
    rel_close(res["QNR"], (1 - s["D_lambda"]) * (1 - s["D_s"]), what="evaluate_full QNR omit")


@pytest.mark.parametrize("jobs", [1, 2])
def test_omit_tile_by_tile_merges_the_defined_blocks(piq, flat_scene, jobs):
    from pansharp_iqa.tiled.api import evaluate_full_tiled

    s = flat_scene  # 4 tiles of 64 x 64, one holding the constant block; 2 workers: the executor's merge
    res = evaluate_full_tiled(s["fused"], s["ms"], s["pan"], tile_size=64, sensor="none", ratio=4,
                              nan_policy="omit", indexes=["D_lambda", "D_s"], jobs=jobs)
    rel_close(res["D_lambda"], s["D_lambda"], what="tiled D_lambda omit")
    rel_close(res["D_s"], s["D_s"], what="tiled D_s omit")


def test_propagate_gives_nan_and_raise_refuses(piq, flat_scene):
    from pansharp_iqa.validation import ConstantBlockError, InputError

    s = flat_scene
    assert np.isnan(piq.d_lambda(s["fused"], s["ms"], ratio=4, nan_policy="propagate"))
    assert np.isnan(piq.d_s(s["fused"], s["ms"], s["pan"], ratio=4, nan_policy="propagate"))
    with pytest.raises(ConstantBlockError, match="1 of 16 blocks are constant") as exc:
        piq.d_lambda(s["fused"], s["ms"], ratio=4)
    assert isinstance(exc.value, InputError)

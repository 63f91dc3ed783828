"""Issue 34: cases where a wrong constant of an index would still pass the broader spec tests,
each against the literal reference (``reference_impl``, written from the spec) or a hand value."""
from __future__ import annotations

import numpy as np

import reference_impl as R
from spec_helpers import rel_close, smooth_dn


def test_q2n_constant_gt_block_with_a_varying_fused_band_uses_eps(piq, rng):
    """GT band constant on a block while the fused band varies there: the toolbox normalises both
    by std = eps (not 1), which makes that block's quality collapse; the floor changes the number."""
    gt = np.round(smooth_dn(rng, (64, 64, 4)))
    f = np.clip(gt + rng.integers(-60, 61, size=gt.shape), 0, 2047).astype(np.float64)
    gt[:32, :32, 2] = 517.0
    val, qmap = piq.q2n(gt, f, return_map=True)
    ref, ref_map = R.q2n(gt, f, return_map=True)
    rel_close(val, ref, what="q2n eps with a varying fused band")
    np.testing.assert_allclose(np.asarray(qmap), ref_map, rtol=1e-9, atol=1e-12)
    assert ref_map[0, 0] < 0.5 * ref_map[1, 1]  # the block with the constant GT band is far worse

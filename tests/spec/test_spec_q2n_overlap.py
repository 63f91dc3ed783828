"""Q2n with overlapping blocks (shift < block_size) vs the literal reference: the toolbox's grid.

The toolbox visits ``ceil(h/shift) x ceil(w/shift)`` blocks of the original image, padding it just
enough for the last one; the padded image holds more shift positions, which it never visits.
"""
from __future__ import annotations

import pytest

import reference_impl as R
from spec_helpers import arr_close, rel_close, smooth_dn


def _pair(rng, shape):
    gt = smooth_dn(rng, shape) + rng.random(shape)
    return gt, gt + rng.normal(0, 90, shape)


@pytest.mark.parametrize(("shape", "block_size", "shift", "grid"), [
    ((80, 72, 4), 32, 16, (5, 5)),
    ((80, 72, 4), 16, 5, (16, 15)),
    ((70, 90, 3), 32, 16, (5, 6)),
    ((64, 64, 8), 32, 16, (4, 4)),  # whole blocks, yet padded by 16 for the last overlapping ones
])
def test_q2n_overlapping_blocks_vs_reference(piq, rng, shape, block_size, shift, grid):
    gt, f = _pair(rng, shape)
    val, qmap = piq.q2n(gt, f, block_size=block_size, shift=shift, return_map=True)
    ref_val, ref_map = R.q2n(gt, f, block_size, shift, return_map=True)
    assert qmap.shape == ref_map.shape == grid
    arr_close(qmap, ref_map, rtol=1e-9, what=f"q2n map bs={block_size} shift={shift}")
    rel_close(val, ref_val, what=f"q2n bs={block_size} shift={shift}")


def test_q2n_large_blocks_vs_reference(piq, rng):
    # 64-pixel blocks (beyond the 65535-bound exactness test): exact integer moments, as before it
    gt, f = _pair(rng, (150, 140, 4))
    rel_close(piq.q2n(gt, f, block_size=64, shift=64), R.q2n(gt, f, 64, 64), rtol=1e-12, what="q2n bs=64")
    rel_close(piq.q2n(gt, f, block_size=64), R.q2n(gt, f, 64, 32), rtol=1e-12, what="q2n bs=64 shift=32")

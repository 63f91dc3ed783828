"""The protocol's Q2n grid with overlapping blocks (shift < block_size), against a loop over blocks.

The reference code visits ``ceil(h/shift) x ceil(w/shift)`` blocks starting at multiples of the
shift (reflect-padded, int16-truncated only when both dimensions need padding; partial blocks
keep ``N = block_size**2`` otherwise).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pansharp_iqa import InputError, q2n
from pansharp_iqa.hypercomplex import block_q_values
from pansharp_iqa.reprojected.indexes import d_lambda_k_ms, r_q2n, reprojected_image


def loop_q2n(ref: np.ndarray, fus: np.ndarray, bs: int, shift: int) -> tuple[float, np.ndarray]:
    h, w, n_bands = ref.shape
    stepx, stepy = math.ceil(h / shift), math.ceil(w / shift)
    est1, est2 = (stepx - 1) * shift + bs - h, (stepy - 1) * shift + bs - w
    if est1 != 0 and est2 != 0:
        def prep(a: np.ndarray) -> np.ndarray:
            a = np.pad(a, ((0, est1), (0, est2), (0, 0)), mode="reflect")
            return np.trunc(a).astype(np.int64).astype(np.int16).astype(np.float64)

        ref, fus = prep(ref), prep(fus)
    values = np.empty((stepx, stepy))
    for j in range(stepx):
        for i in range(stepy):
            rb = ref[j * shift : j * shift + bs, i * shift : i * shift + bs]
            fb = fus[j * shift : j * shift + bs, i * shift : i * shift + bs]
            values[j, i] = block_q_values(rb.reshape(1, -1, n_bands).transpose(0, 2, 1),
                                          fb.reshape(1, -1, n_bands).transpose(0, 2, 1),
                                          n_norm=bs * bs, std_floor=1e-10)[0]
    return float(values.mean()), values


def _pair(shape: tuple[int, int, int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = rng.random(shape).cumsum(0).cumsum(1)
    ref = ref / ref.max() * 1500.0 + 150.0
    return ref, ref * (1 + 0.05 * rng.normal(size=shape)) + 30.0 * rng.normal(size=shape)


@pytest.mark.parametrize(("shape", "bs", "shift"), [
    ((80, 72, 4), 32, 16),  # both dimensions pad: 5 x 5 blocks, not the padded image's 6 x 6
    ((80, 72, 3), 16, 5),  # 16 x 15 blocks; the padded image's extra ones reach 1-pixel slivers (NaN)
    ((80, 64, 8), 32, 16),  # both pad (64 = whole blocks, but the last overlapping one reaches past)
    ((96, 70, 4), 32, 32),  # one dimension short: no padding, partial last column
])
def test_q2n_reflect_grid_matches_the_loop(shape: tuple[int, int, int], bs: int, shift: int) -> None:
    ref, fus = _pair(shape, seed=sum(shape) + shift)
    value, blocks = q2n(ref, fus, block_size=bs, shift=shift, cast="int16-truncated", padding="reflect",
                        return_map=True)
    expected, expected_blocks = loop_q2n(ref, fus, bs, shift)
    assert blocks.shape == expected_blocks.shape
    np.testing.assert_allclose(blocks, expected_blocks, rtol=1e-12)
    assert abs(value - expected) < 1e-12


def test_r_q2n_with_overlapping_blocks_matches_the_loop() -> None:
    ref, fus = _pair((48, 40, 4), seed=11)
    rng = np.random.default_rng(12)
    fused = np.kron(fus, np.ones((4, 4, 1))) + rng.normal(0, 5, (192, 160, 4))
    pan = fused.mean(axis=2)
    value = r_q2n(fused, ref, pan, sensor="QB", ratio=4, shift=16)
    x, ms, _ = reprojected_image(fused, ref, pan, sensor="QB", ratio=4)
    expected, blocks = loop_q2n(ms, x, 32, 16)
    assert blocks.shape == (3, 3)
    assert abs(value - expected) < 1e-12


def test_blocks_larger_than_the_ms_plus_one_are_refused_not_reflected_again() -> None:
    # an 8 x 8 MS and 32-pixel blocks: 24 reflected rows of 8 would be a reflection of a reflection
    ms, fus = _pair((8, 8, 4), seed=13)
    fused = np.kron(fus, np.ones((4, 4, 1)))
    message = r"ms: block_size 32 too large for images of 8x8 pixels .*use a smaller block_size"
    with pytest.raises(InputError, match=message):
        r_q2n(fused, ms, fused.mean(axis=2), sensor="QB", ratio=4)
    with pytest.raises(InputError, match=message):
        d_lambda_k_ms(fused, ms, sensor="QB", ratio=4)
    with pytest.raises(InputError, match="reference: block_size 32 too large for images of 8x8"):
        q2n(ms, fus, padding="reflect", cast="int16-truncated")
    assert 0 < d_lambda_k_ms(fused, ms, sensor="QB", ratio=4, block_size=8) < 1  # 8 fits

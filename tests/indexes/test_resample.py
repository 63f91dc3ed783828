"""The 23-tap EXP interpolator (pansharp_iqa.resample)."""

from __future__ import annotations

import numpy as np
import pytest

import pansharp_iqa as pi


@pytest.mark.parametrize("ratio", [2, 4, 8])
def test_interp23tap_keeps_samples_at_the_decimation_phase_for_any_power_of_two(ratio):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 5, 2)) * 100
    up = pi.interp23tap(x, ratio)
    assert up.shape == (6 * ratio, 5 * ratio, 2)  # the toolbox's loop would give 16x for ratio 8
    np.testing.assert_allclose(up[ratio // 2 :: ratio, ratio // 2 :: ratio], x, atol=1e-12)
    np.testing.assert_allclose(pi.interp23tap(np.full((4, 4), 7.0), ratio), 7.0, atol=1e-12)

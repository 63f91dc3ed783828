"""Kernel checks of spec fullres2022.md sections 2 and 15."""

from __future__ import annotations

import numpy as np
import pytest

from pansharp_iqa.reprojected import kaiser_window, reprojection_kernel, reprojection_kernels
from pansharp_iqa.sensors import get_sensor

# Spec section 2: GNyq table of the reference code (band order as given).
SPEC_TABLE = {
    "QB": (0.34, 0.32, 0.30, 0.22),
    "IKONOS": (0.26, 0.28, 0.29, 0.28),
    "GeoEye1": (0.23, 0.23, 0.23, 0.23),
    "WV2": (0.35,) * 7 + (0.27,),
    "WV3": (0.325, 0.355, 0.360, 0.350, 0.365, 0.360, 0.335, 0.315),
}
CENTRE_TAPS = {
    "QB": 0.043333043573,
    "IKONOS": 0.034708257593,
    "GeoEye1": 0.031814861597,
    "WV2": 0.044528882982,
    "WV3": 0.041594397176,
}


@pytest.mark.parametrize("name", sorted(SPEC_TABLE))
def test_registry_equals_spec_table(name: str) -> None:
    sensor = get_sensor(name)
    assert sensor.gnyq_for(len(SPEC_TABLE[name])) == pytest.approx(SPEC_TABLE[name], abs=0)


@pytest.mark.parametrize("name", sorted(CENTRE_TAPS))
def test_centre_tap_band0_ratio4(name: str) -> None:
    g0 = get_sensor(name).gnyq_for(len(SPEC_TABLE[name]))[0]
    k = reprojection_kernel(g0, 4)
    assert k.shape == (41, 41)
    assert abs(k[20, 20] - CENTRE_TAPS[name]) < 1e-11


def test_ikonos_off_centre_taps_show_column_window() -> None:
    k = reprojection_kernel(0.26, 4)
    assert abs(k[20, 19] - 0.031120371851) < 1e-11
    assert abs(k[19, 20] - 0.031125089058) < 1e-11


@pytest.mark.parametrize("name", sorted(SPEC_TABLE))
@pytest.mark.parametrize("ratio", [2, 4, 8])
def test_kernel_properties(name: str, ratio: int) -> None:
    bank = reprojection_kernels(SPEC_TABLE[name], ratio)
    for b in range(bank.shape[2]):
        k = bank[:, :, b]
        assert abs(k.sum() - 1.0) < 1e-14
        assert k.min() >= 0.0
        assert np.array_equal(k, k[::-1, ::-1])  # 180-degree symmetric
        assert not np.allclose(k, k.T, rtol=0, atol=1e-9)  # column-only window
        if ratio == 4:
            assert (k == 0).sum() > 0  # negative taps were clipped


def test_kaiser_window_matches_matlab_formula() -> None:
    w = kaiser_window(41, 0.5)
    n = np.arange(41)
    matlab = np.i0(0.5 * np.sqrt(1.0 - (2.0 * n / 40 - 1.0) ** 2)) / np.i0(0.5)  # kaiser.m formula
    assert np.allclose(w, matlab, rtol=0, atol=1e-15)
    assert w[20] == 1.0 and np.array_equal(w, w[::-1])


@pytest.mark.parametrize("length", [1, 2, 40, 41, 97])
def test_kaiser_window_symmetric_even_if_numpy_rounds_asymmetrically(monkeypatch, length: int) -> None:
    # numpy 2.3/2.4 made the hand-written MATLAB formula 1 ulp asymmetric; the window must be
    # symmetric by construction, whatever the library's rounding
    real = np.kaiser

    def lopsided(m: int, beta: float) -> np.ndarray:
        w = real(m, beta)
        w[: m // 2] *= 1.0 + 2.0**-52
        return w

    monkeypatch.setattr(np, "kaiser", lopsided)
    w = kaiser_window(length, 0.5)
    assert np.array_equal(w, w[::-1])
    assert np.allclose(w, real(length, 0.5), rtol=0, atol=1e-15)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5])
def test_bad_gnyq(bad: float) -> None:
    with pytest.raises(ValueError, match="gnyq"):
        reprojection_kernel(bad, 4)


@pytest.mark.parametrize("bad", [1, 0, 2.5, True])
def test_bad_ratio(bad: object) -> None:
    with pytest.raises(ValueError, match="ratio"):
        reprojection_kernel(0.3, bad)  # type: ignore[arg-type]

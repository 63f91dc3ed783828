"""Local cross-correlation field (spec fullres2022.md section 3) against a loop-based reference."""

from __future__ import annotations

import numpy as np
import pytest

from pansharp_iqa.reprojected import box_sum, local_cross_correlation


def loop_box(a: np.ndarray, w: int) -> np.ndarray:
    """Window sums: rows y-w+1..y+w, columns x-w+1..x+w, zeros outside."""
    h, wd = a.shape
    out = np.zeros((h, wd))
    for y in range(h):
        for x in range(wd):
            s = 0.0
            for yy in range(y - w + 1, y + w + 1):
                for xx in range(x - w + 1, x + w + 1):
                    if 0 <= yy < h and 0 <= xx < wd:
                        s += a[yy, xx]
            out[y, x] = s
    return out


def loop_field(x: np.ndarray, y: np.ndarray, w: int) -> np.ndarray:
    area = 4.0 * w * w
    yc = y - loop_box(y, w) / area
    syy = loop_box(yc * yc, w)
    syy = np.minimum(np.maximum(syy, 1e-20), syy.max())
    out = np.zeros(x.shape)
    xcs = [x[:, :, b] - loop_box(x[:, :, b], w) / area for b in range(x.shape[2])]
    sxxs = [loop_box(xc * xc, w) for xc in xcs]
    top = max(s.max() for s in sxxs)
    for b, (xc, sxx) in enumerate(zip(xcs, sxxs, strict=True)):
        sxx = np.minimum(np.maximum(sxx, 1e-20), top)
        out[:, :, b] = loop_box(xc * yc, w) / (np.sqrt(sxx * syy) + 1e-20)
    return out


@pytest.mark.parametrize("integral", ["ordered", "opencv"])
@pytest.mark.parametrize("w", [1, 2, 3])
def test_field_matches_loop_reference(w: int, integral: str) -> None:
    rng = np.random.default_rng(w)
    x = rng.normal(100, 20, (13, 11, 2)).cumsum(0)
    y = x.mean(axis=2) + rng.normal(0, 5, (13, 11))
    rho = local_cross_correlation(x, y, w, integral=integral)  # type: ignore[arg-type]
    ref = loop_field(x, y, w)
    assert rho.shape == x.shape
    np.testing.assert_allclose(rho, ref, rtol=0, atol=1e-9)
    assert np.all(np.abs(rho) <= 1 + 1e-12)


def test_box_sum_is_the_reference_integral_image_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    for shape, w in [((5, 7), 1), ((3, 9, 6), 2), ((2, 13, 11), 3), ((1, 1), 1)]:
        a = rng.random(shape) * 1000
        h, wd = shape[-2:]
        padded = np.zeros(shape[:-2] + (h + 2 * w, wd + 2 * w))
        padded[..., w : w + h, w : w + wd] = a
        integ = np.cumsum(np.cumsum(padded, axis=-2), axis=-1)
        d = 2 * w
        ref = integ[..., d:, d:] - integ[..., :h, d:] - integ[..., d:, :wd] + integ[..., :h, :wd]
        assert np.array_equal(box_sum(a, w), ref)
        np.testing.assert_allclose(box_sum(a, w, integral="opencv"), ref, rtol=1e-12, atol=1e-9)
        a2 = a.reshape((-1, h, wd))[0]
        np.testing.assert_allclose(box_sum(a2, w), loop_box(a2, w), rtol=1e-12, atol=1e-9)


def test_window_is_asymmetric() -> None:
    a = np.zeros((9, 9))
    a[4, 4] = 1.0
    s = box_sum(a, 2)  # windows y-1..y+2 contain row 4 for y = 2..5
    assert np.array_equal(np.nonzero(s.sum(axis=1))[0], [2, 3, 4, 5])


def test_flat_windows_give_zero_and_bad_args() -> None:
    x = np.zeros((8, 8, 1))  # (a constant is not flat at the borders: the zero padding counts)
    y = np.arange(64.0).reshape(8, 8)
    assert np.all(np.abs(local_cross_correlation(x, y, 2)) < 1e-6)
    with pytest.raises(ValueError, match="half_width"):
        local_cross_correlation(x, y, 0)
    with pytest.raises(ValueError, match="same height and width"):
        local_cross_correlation(x, y[:7], 2)
    with pytest.raises(ValueError, match="integral"):
        local_cross_correlation(x, y, 2, integral="fft")  # type: ignore[arg-type]

"""The one-pass strip engine behind the reduced-resolution indexes.

Checks that do not depend on the implementation's own output: MATLAB's uint16 cast against exact
rational arithmetic, mirror extension against ``np.pad``, and invariance of every index to the
strip height and thread count (a strip-boundary bug changes the numbers).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.hypercomplex import block_q_values
from pansharp_iqa.indexes.catalog import ChunkContext, statistics_for
from pansharp_iqa.indexes.q2n import q2n_strip, to_uint16_matlab
from pansharp_iqa.indexes.reduced_pass import reduced_sums
from pansharp_iqa.indexes.strips import StripImage, map_strips

ALL = ("Q2n", "Q", "SAM", "ERGAS", "SCC")


def _matlab_uint16_exact(x: float) -> float:
    if x <= 0:
        return 0.0
    return float(min(math.floor(Fraction(x) + Fraction(1, 2)), 65535))


def test_uint16_cast_matches_exact_rounding_on_adversarial_values():
    rng = np.random.default_rng(3)
    vals = [0.49999999999999994, 0.5, 1.5, 2.5, -0.5, -0.49999999999999994, 65534.5, 65535.5,
            1e300, -1e300, 2.0**52, 2.0**52 + 1, 2.0**53 - 1, 4503599627370495.5]
    for n in list(range(0, 66000, 97)) + [2**k for k in range(17)]:
        for base in (n - 0.5, n + 0.5, float(n)):
            for direction in (np.inf, -np.inf):
                x = base
                for _ in range(3):
                    vals.append(x)
                    x = float(np.nextafter(x, direction))
    vals += list(rng.uniform(-5, 70000, 20000))
    v = np.array(vals)
    expected = np.array([_matlab_uint16_exact(x) for x in vals])
    np.testing.assert_array_equal(to_uint16_matlab(v), expected)


def _sums(ref, fus, names, strip_rows):
    return reduced_sums(StripImage(ref), StripImage(fus), statistics=statistics_for(names), ctx=ChunkContext(),
                        strip_rows=strip_rows)


def _values(ref, fus, strip_rows):
    s = _sums(ref, fus, ALL, strip_rows)
    q2n, q, sam = s["q2n_blocks"], s["q_windows"], s["sam_angles"]
    scc = s["sobel_products"]["sums"]
    return np.array([q2n["sum"] / q2n["count"], np.mean(q["sums"] / q["count"]), sam["angle_sum"] / sam["valid"],
                     s["squared_errors"]["sse"].sum(), scc[0] / np.sqrt(scc[1] * scc[2])])


@pytest.mark.parametrize("shape", [(70, 81, 4), (101, 64, 3), (64, 33, 5)])
def test_every_index_is_independent_of_the_strip_height(shape):
    rng = np.random.default_rng(1)
    ref = rng.integers(0, 2048, shape).astype(np.float64)
    fus = np.clip(ref + rng.normal(0, 40, shape), 0, None)
    base = _values(ref, fus, 10_000)  # one strip: no internal boundary
    for rows in (32, 64, 96):
        np.testing.assert_allclose(_values(ref, fus, rows), base, rtol=1e-13, atol=0)


def test_integer_data_give_identical_q_and_q2n_for_any_strip_height():
    """Integer DN: every window/block sum is exact, so strip boundaries cannot change a value."""
    rng = np.random.default_rng(2)
    ref = rng.integers(0, 2048, (97, 70, 4)).astype(np.uint16)
    fus = rng.integers(0, 2048, (97, 70, 4)).astype(np.int32)
    a = _sums(ref, fus, ["Q", "Q2n"], 32)
    b = _sums(ref, fus, ["Q", "Q2n"], 10_000)
    assert a["q2n_blocks"] == b["q2n_blocks"]  # the same block values, in one order
    np.testing.assert_allclose(a["q_windows"]["sums"], b["q_windows"]["sums"], rtol=1e-14)  # summed per strip


@pytest.mark.parametrize("h, w", [(70, 70), (33, 90), (95, 47)])
def test_q2n_mirror_extension_equals_np_pad(h, w):
    """Remainders below half a block mirror rows from above the last block's start."""
    rng = np.random.default_rng(4)
    ref = rng.integers(0, 2048, (h, w, 3)).astype(np.float64) + 0.25
    fus = rng.integers(0, 2048, (h, w, 3)).astype(np.float64) + 0.5
    est = (-h % 32, -w % 32)

    def blocks(x):
        x = np.pad(x, ((0, est[0]), (0, est[1]), (0, 0)), mode="symmetric")
        x = np.floor(x + 0.5)  # these values are never near a rounding hazard
        x = np.concatenate([x, np.zeros(x.shape[:2] + (1,))], axis=2)  # 3 bands -> 4 components
        ny, nx = x.shape[0] // 32, x.shape[1] // 32
        return x.reshape(ny, 32, nx, 32, 4).transpose(0, 2, 4, 1, 3).reshape(ny * nx, 4, 1024)

    expected = block_q_values(blocks(ref), blocks(fus))
    rs, fs = StripImage(ref), StripImage(fus)
    for rows in (32, 64):
        got = np.concatenate(map_strips(lambda r0, r1: q2n_strip(rs, fs, r0, r1, 32), h, 32, rows))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_results_do_not_depend_on_the_thread_count(monkeypatch):
    rng = np.random.default_rng(5)
    ref = rng.uniform(100, 2000, (150, 140, 4))
    fus = ref + rng.normal(0, 30, ref.shape)
    monkeypatch.setenv("PANSHARP_THREADS", "1")
    one = pi.evaluate_reduced(fus, ref, ratio=4, bits=11)
    monkeypatch.setenv("PANSHARP_THREADS", "2")
    two = pi.evaluate_reduced(fus, ref, ratio=4, bits=11)
    assert {k: one[k] for k in ALL} == {k: two[k] for k in ALL}


def test_integer_dtypes_scale_and_threshold_are_applied_per_strip():
    rng = np.random.default_rng(6)
    ref = rng.integers(1, 2048, (120, 120, 4)).astype(np.uint16)
    fus = np.clip(ref.astype(np.int32) + rng.integers(-300, 300, ref.shape), 0, 2400).astype(np.int32)
    as_float = pi.evaluate_reduced(fus.astype(np.float64), ref.astype(np.float64), ratio=4, bits=12)
    as_int = pi.evaluate_reduced(fus, ref, ratio=4, bits=12)
    scaled = pi.evaluate_reduced(fus / 4095.0, ref / 4095.0, ratio=4, bits=12, scale=4095.0)
    for k in ALL:
        assert as_int[k] == pytest.approx(as_float[k], rel=1e-13)
        assert scaled[k] == pytest.approx(as_float[k], rel=1e-9)
    # threshold at 2^bits: values above 2048 (11 bits) are clipped in the fused image only
    clipped = pi.evaluate_reduced(np.minimum(fus, 2048).astype(np.float64), ref.astype(np.float64),
                                  ratio=4, bits=11)
    thresholded = pi.evaluate_reduced(fus, ref, ratio=4, bits=11, threshold=True)
    for k in ALL:
        assert thresholded[k] == pytest.approx(clipped[k], rel=1e-13)
    assert thresholded["ERGAS"] != pytest.approx(as_int["ERGAS"], rel=1e-6)


def test_non_finite_values_in_the_cut_border_are_refused():
    rng = np.random.default_rng(7)
    ref = rng.uniform(100, 2000, (120, 120, 4))
    fus = ref.copy()
    fus[3, 5, 1] = np.nan  # inside the 20-pixel border that the protocol cuts away
    with pytest.raises(pi.InputError, match=r"fused: contains 1 non-finite"):
        pi.evaluate_reduced(fus, ref, ratio=4, bits=11)


@pytest.mark.parametrize("layout", ["fortran", "flipped", "big-endian", "band-view"])
def test_any_memory_layout_gives_the_same_numbers(layout):
    """Strips are read through views: Fortran order, negative strides, non-native byte order and
    band-subset views must give the numbers of a plain C-ordered float64 copy."""
    rng = np.random.default_rng(8)
    ref = rng.integers(1, 2048, (110, 100, 4)).astype(np.float64)
    fus = np.clip(ref + rng.normal(0, 25, ref.shape), 0, None)
    if layout == "fortran":
        views = np.asfortranarray(ref), np.asfortranarray(fus)
        plain = ref, fus
    elif layout == "flipped":
        views = ref[::-1, ::-1], fus[::-1, ::-1]
        plain = np.ascontiguousarray(ref[::-1, ::-1]), np.ascontiguousarray(fus[::-1, ::-1])
    elif layout == "big-endian":
        views = ref.astype(">f8"), fus.astype(">f8")
        plain = ref, fus
    else:
        wide_r = np.concatenate([ref, ref[:, :, :1]], axis=2)
        wide_f = np.concatenate([fus, fus[:, :, :1]], axis=2)
        views = wide_r[:, :, :4], wide_f[:, :, :4]
        plain = ref, fus
    got = pi.evaluate_reduced(views[1], views[0], ratio=4, bits=11)
    want = pi.evaluate_reduced(plain[1], plain[0], ratio=4, bits=11)
    for k in ALL:
        assert got[k] == pytest.approx(want[k], rel=1e-13), k

"""MS-scale indexes of the protocol (spec fullres2022.md sections 6-9) against loop references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pansharp_iqa import InputError, ergas, q2n, q_index, reprojected, sam
from pansharp_iqa.hypercomplex import block_q_values


# The protocol's MS-scale forms of the core indexes, as named options of the one implementation.
def q2n_index(ref: np.ndarray, fus: np.ndarray, **kw: object) -> object:
    return q2n(ref, fus, cast="int16-truncated", padding="reflect", **kw)


def uiqi_index(ref: np.ndarray, fus: np.ndarray, **kw: object) -> object:
    return q_index(ref, fus, windows="edge-extended", **kw)


def sam_index(ref: np.ndarray, fus: np.ndarray, **kw: object) -> object:
    return sam(ref, fus, zero_norm="count", **kw)


def pair(shape: tuple[int, int, int], seed: int = 0, scale: float = 1000.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = rng.random(shape).cumsum(0).cumsum(1)
    ref = ref / ref.max() * scale + 0.1 * scale
    fus = ref * (1 + 0.05 * rng.normal(size=shape)) + 0.02 * scale * rng.normal(size=shape)
    return ref, fus


# ----------------------------------------------------------------------------- R-Q (UIQI map)
def loop_uiqi(ref: np.ndarray, fus: np.ndarray, bs: int = 32) -> tuple[float, np.ndarray]:
    h, w, n_bands = ref.shape
    n = bs * bs
    qmap = np.zeros((h - bs + 2, w - bs + 2, n_bands))
    for b in range(n_bands):
        for k in range(h - bs + 2):
            for l_ in range(w - bs + 2):
                rows = [min(r, h - 1) for r in range(k, k + bs)]  # one row past: edge repeated
                cols = [min(c, w - 1) for c in range(l_, l_ + bs)]
                x = ref[np.ix_(rows, cols, [b])].ravel()
                y = fus[np.ix_(rows, cols, [b])].ravel()
                sx, sy = x.sum(), y.sum()
                sxx, syy, sxy = (x * x).sum(), (y * y).sum(), (x * y).sum()
                num = 4 * (n * sxy - sx * sy) * sx * sy
                d1 = n * (sxx + syy) - sx * sx - sy * sy
                d2 = sx * sx + sy * sy
                if d1 * d2 != 0:
                    q = num / (d1 * d2)
                elif d2 != 0:
                    q = 2 * sx * sy / d2
                else:
                    q = 1.0
                qmap[k, l_, b] = q
    return float(qmap.mean(axis=(0, 1)).mean()), qmap


@pytest.mark.parametrize("bs", [32, 8])
def test_uiqi_map_size_and_values(bs: int) -> None:
    ref, fus = pair((40, 37, 2), seed=1)
    value, qmap = uiqi_index(ref, fus, block_size=bs, return_map=True)  # type: ignore[misc]
    ref_value, ref_map = loop_uiqi(ref, fus, bs)
    assert qmap.shape == (40 - bs + 2, 37 - bs + 2, 2)  # (h-30) x (w-30) for 32
    np.testing.assert_allclose(qmap, ref_map, rtol=0, atol=1e-9)
    assert abs(value - ref_value) < 1e-12


def test_uiqi_special_cases() -> None:
    z = np.zeros((34, 34, 1))
    assert uiqi_index(z, z) == 1.0  # d2 == 0 everywhere -> 1
    c = np.full((34, 34, 1), 3.0)
    assert uiqi_index(c, 2 * c) == pytest.approx(2 * 3 * 6 / (9 + 36), abs=1e-14)  # d1 == 0 branch
    with pytest.raises(ValueError, match="even"):
        uiqi_index(c, c, block_size=31)


# ----------------------------------------------------------------------------- R-SAM
def loop_sam(ref: np.ndarray, fus: np.ndarray) -> float:
    h, w, _ = ref.shape
    total = 0.0
    for i in range(h):
        for j in range(w):
            a, b = fus[i, j], ref[i, j]
            den = math.sqrt(a @ a) * math.sqrt(b @ b)
            if den != 0:
                total += math.acos(max(-1.0, min(1.0, (a @ b) / den)))
    return total / (h * w) * 180 / math.pi  # zero-norm pixels stay in the denominator


def test_sam_counts_zero_pixels_in_denominator() -> None:
    ref, fus = pair((12, 9, 4), seed=2)
    fus[3, 4] = 0.0
    ref[5, 6] = 0.0
    assert abs(sam_index(ref, fus) - loop_sam(ref, fus)) < 1e-12
    # dropping the zero pixels (toolbox convention) would give a larger mean
    valid = (np.linalg.norm(fus, axis=2) * np.linalg.norm(ref, axis=2)) != 0
    assert sam_index(ref, fus) == pytest.approx(loop_sam(ref, fus))
    assert sam_index(ref, fus) < sam_index(ref, fus) * valid.size / valid.sum()


def test_sam_perfect_match_is_near_zero() -> None:
    ref, _ = pair((16, 16, 8), seed=3)
    assert 0 <= sam_index(ref, ref) < 1e-5


# ----------------------------------------------------------------------------- R-ERGAS
def test_ergas_matches_formula() -> None:
    ref, fus = pair((10, 11, 3), seed=4)
    terms = []
    for b in range(3):
        mse = np.mean((fus[:, :, b] - ref[:, :, b]) ** 2)
        terms.append(mse / np.mean(ref[:, :, b]) ** 2)
    expected = 100 / 4 * math.sqrt(sum(terms) / 3)
    assert abs(ergas(ref, fus, ratio=4) - expected) < 1e-12 * expected
    assert ergas(ref, ref, ratio=4) == 0.0
    with pytest.raises(ValueError, match="ratio"):
        ergas(ref, fus, ratio=0)


# ----------------------------------------------------------------------------- R-Q2n
def loop_q2n(ref: np.ndarray, fus: np.ndarray, bs: int = 32) -> float:
    h, w, n_bands = ref.shape
    stepx, stepy = math.ceil(h / bs), math.ceil(w / bs)
    est1, est2 = stepx * bs - h, stepy * bs - w
    if est1 != 0 and est2 != 0:  # the both-dimension rule
        def prep(a: np.ndarray) -> np.ndarray:
            a = np.pad(a, ((0, est1), (0, est2), (0, 0)), mode="reflect")  # mirror without the edge
            return np.trunc(a).astype(np.int64).astype(np.int16).astype(np.float64)

        ref, fus = prep(ref), prep(fus)
    n_comp = 1
    while n_comp < n_bands:
        n_comp *= 2
    if n_comp > n_bands:
        z = np.zeros(ref.shape[:2] + (n_comp - n_bands,))
        ref, fus = np.concatenate([ref, z], 2), np.concatenate([fus, z], 2)
    vals = []
    for j in range(stepx):
        for i in range(stepy):
            rb = ref[j * bs : (j + 1) * bs, i * bs : (i + 1) * bs].reshape(1, -1, n_comp)
            fb = fus[j * bs : (j + 1) * bs, i * bs : (i + 1) * bs].reshape(1, -1, n_comp)
            vals.append(block_q_values(rb.transpose(0, 2, 1), fb.transpose(0, 2, 1), n_norm=bs * bs,
                                       std_floor=1e-10)[0])
    return float(np.mean(vals))


@pytest.mark.parametrize(
    "shape",
    [(64, 64, 4), (64, 64, 3), (70, 64, 4), (64, 50, 8), (70, 45, 4), (33, 40, 5)],
)
def test_q2n_matches_loop_reference(shape: tuple[int, int, int]) -> None:
    ref, fus = pair(shape, seed=5, scale=1500.0)
    assert abs(q2n_index(ref, fus) - loop_q2n(ref, fus)) < 1e-12


def test_q2n_int16_cast_only_when_both_dimensions_pad() -> None:
    ref, fus = pair((300, 300, 4), seed=6, scale=0.9)
    ref, fus = np.clip(ref, 0, 0.99), np.clip(fus, 0, 0.99)  # [0, 1) data: all would truncate to 0
    # the cast would destroy [0, 1) data, so the gate refuses them instead of returning 1.0
    with pytest.raises(InputError, match="float data within"):
        q2n_index(ref, fus)
    assert q2n_index(1000 * ref, 1000 * fus) < 0.99
    assert abs(q2n_index(1000 * ref, 1000 * fus) - loop_q2n(1000 * ref, 1000 * fus)) < 1e-12
    # 300 x 300: both pad -> int16 truncation: not gain invariant
    assert abs(q2n_index(1000 * ref, 1000 * fus) - q2n_index(1001.3 * ref, 1001.3 * fus)) > 1e-9
    # 320 x 300: only one dimension pads -> no cast: gain invariant
    ref2, fus2 = pair((320, 300, 4), seed=6, scale=1000.0)
    v = q2n_index(ref2, fus2)
    assert 0.5 < v < 1.0
    assert abs(v - q2n_index(1.7 * ref2, 1.7 * fus2)) < 1e-12
    # multiples of 32: no cast either
    ref3, fus3 = pair((64, 96, 4), seed=6, scale=1000.0)
    assert abs(q2n_index(ref3, fus3) - q2n_index(2.047 * ref3, 2.047 * fus3)) < 1e-12


def test_q2n_truncates_toward_zero_not_rounds() -> None:
    ref, fus = pair((40, 40, 4), seed=7, scale=100.0)
    assert abs(q2n_index(ref, fus) - q2n_index(np.trunc(ref), np.trunc(fus))) < 1e-15
    assert abs(q2n_index(ref, fus) - q2n_index(np.round(ref), np.round(fus))) > 1e-9


def test_q2n_identity_and_shapes() -> None:
    ref, _ = pair((64, 64, 8), seed=8)
    assert abs(q2n_index(ref, ref) - 1.0) < 1e-12
    _value, blocks = q2n_index(ref, ref, return_map=True)  # type: ignore[misc]
    assert blocks.shape == (2, 2)
    with pytest.raises(ValueError, match="differ in shapes"):
        q2n_index(ref, ref[:32])


# ----------------------------------------------------------------------------- deprecated twins
def test_deprecated_twins_warn_and_equal_the_named_options() -> None:
    ref, fus = pair((40, 45, 4), seed=9, scale=1500.0)
    cases = [
        (reprojected.q2n_index, {}, q2n_index(ref, fus)),
        (reprojected.uiqi_index, {}, uiqi_index(ref, fus)),
        (reprojected.sam_index, {}, sam_index(ref, fus)),
        (reprojected.ergas_index, {"ratio": 4}, ergas(ref, fus, ratio=4)),
    ]
    for old, kw, expected in cases:
        with pytest.warns(DeprecationWarning, match="deprecated: use"):
            assert old(ref, fus, **kw) == expected

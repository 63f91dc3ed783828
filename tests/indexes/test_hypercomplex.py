"""The hypercomplex algebra behind Q2n and its block values (exact and centred moment paths)."""

from __future__ import annotations

import numpy as np

from pansharp_iqa.hypercomplex import block_q_values, conjugate, multiply, structure_constants


def test_quaternion_product_is_hamilton_product_up_to_the_toolbox_convention():
    # (a, b)(c, d) = (ac - conj(d) b, d a + b conj(c)) with complex halves is the quaternion algebra:
    # its norm is multiplicative and conj(z) z = |z|^2.
    rng = np.random.default_rng(0)
    for n in (1, 2, 4):
        z1, z2 = rng.normal(size=(50, n)), rng.normal(size=(50, n))
        prod = multiply(z1, z2)
        np.testing.assert_allclose(
            np.linalg.norm(prod, axis=1), np.linalg.norm(z1, axis=1) * np.linalg.norm(z2, axis=1), rtol=1e-12
        )
        cz = multiply(conjugate(z1), z1)
        np.testing.assert_allclose(cz[:, 0], (z1**2).sum(axis=1), rtol=1e-12)
        np.testing.assert_allclose(cz[:, 1:], 0, atol=1e-12)
    # complex numbers: (a + ib)(c + id)
    z = multiply(np.array([1.0, 2.0]), np.array([3.0, -1.0]))
    np.testing.assert_allclose(z, [1 * 3 - 2 * (-1), 1 * (-1) + 2 * 3])


def test_structure_constants_reproduce_the_recursive_product():
    rng = np.random.default_rng(1)
    z1, z2 = rng.normal(size=8), rng.normal(size=8)
    t = structure_constants(8)
    np.testing.assert_allclose(np.einsum("kij,i,j->k", t, z1, z2), multiply(z1, z2), atol=1e-13)
    # octonions are not associative, but they are alternative: (x x) y = x (x y)
    np.testing.assert_allclose(multiply(multiply(z1, z1), z2), multiply(z1, multiply(z1, z2)), atol=1e-12)


def test_block_q_of_identical_blocks_is_one_and_gain_changes_lower_it():
    rng = np.random.default_rng(2)
    ref = rng.integers(0, 2048, size=(3, 1024, 4)).astype(float)
    np.testing.assert_allclose(block_q_values(ref.transpose(0, 2, 1), ref.transpose(0, 2, 1)), 1.0, rtol=1e-12)
    # a pure mean bias (fused = 2 x reference) leaves correlation 1 but costs mean_bias/contrast
    assert np.all(block_q_values(ref.transpose(0, 2, 1), 2 * ref.transpose(0, 2, 1)) < 0.99)


def test_block_q_exact_integer_path_equals_the_centred_path():
    rng = np.random.default_rng(15)
    ref = rng.integers(0, 65536, size=(20, 1024, 8)).astype(float)
    fus = np.clip(ref + rng.integers(-300, 300, size=ref.shape), 0, 65535)
    ref[3] = 1000.0  # a constant block
    ref, fus = ref.transpose(0, 2, 1), fus.transpose(0, 2, 1)  # (blocks, bands, pixels)
    fast = block_q_values(ref, fus, integer_valued=True)
    centred = block_q_values(ref, fus)
    np.testing.assert_allclose(fast, centred, rtol=1e-11)
    # too large for exact float64 sums (64x64 blocks of 16-bit data): falls back, same values
    big_r = rng.integers(0, 65536, size=(2, 4096, 4)).astype(float)
    big_f = big_r + 7.0
    big_r, big_f = big_r.transpose(0, 2, 1), big_f.transpose(0, 2, 1)
    np.testing.assert_array_equal(block_q_values(big_r, big_f, integer_valued=True), block_q_values(big_r, big_f))

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


def test_a_loose_value_bound_does_not_change_the_path_of_large_blocks():
    # 64 x 64 blocks of 11-bit data: the 65535 bound fails the exactness test (n^2 top^2 < 2^53),
    # the data's own maximum passes it, so the exact integer path is still taken (as without a bound)
    rng = np.random.default_rng(16)
    ref = rng.integers(0, 2048, size=(6, 4, 4096)).astype(float)
    fus = np.clip(ref + rng.integers(-90, 90, size=ref.shape), 0, 2047)
    unbound = block_q_values(ref, fus, integer_valued=True)
    np.testing.assert_array_equal(block_q_values(ref, fus, integer_valued=True, value_bound=65535.0), unbound)
    assert not np.array_equal(unbound, block_q_values(ref, fus))  # the centred path rounds otherwise
    # 32 x 32 blocks: the bound itself proves exactness (the pass that finds the maximum is saved)
    small_r, small_f = ref[:, :, :1024], fus[:, :, :1024]
    np.testing.assert_array_equal(block_q_values(small_r, small_f, integer_valued=True, value_bound=65535.0),
                                  block_q_values(small_r, small_f, integer_valued=True))


def test_q2n_of_large_blocks_uses_exact_integer_moments():
    # the toolbox's default grid with 64-pixel blocks: the same numbers as the integer-moment block
    # values of the mirror-extended, uint16-cast planes (the pre-``value_bound`` numbers)
    from pansharp_iqa import q2n
    from pansharp_iqa.borders import border_index
    from pansharp_iqa.indexes.q2n import blocks_at, to_uint16_matlab

    rng = np.random.default_rng(17)
    ref = rng.integers(100, 2000, size=(150, 140, 4)).astype(float)
    fus = ref + rng.normal(0, 40, ref.shape)
    rows, cols = border_index(np.arange(192), 150, "symmetric"), border_index(np.arange(192), 140, "symmetric")
    planes = [to_uint16_matlab(np.moveaxis(a, 2, 0)[:, rows][:, :, cols]) for a in (ref, fus)]
    starts = np.arange(3) * 64
    expected = block_q_values(*(blocks_at(p, starts, starts, 64, 64) for p in planes), integer_valued=True)
    assert q2n(ref, fus, block_size=64, shift=64) == float(expected.reshape(3, 3).mean())

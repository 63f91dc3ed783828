"""Hypercomplex (Cayley-Dickson) algebra and the block-wise hypercomplex quality index behind Q2n.

The Q2n index (Garzelli & Nencini, IEEE GRSL 6(4), 2009, doi:10.1109/LGRS.2009.2022650; Alparone et
al., IEEE GRSL 1(4), 2004 for Q4) treats each pixel's B bands as a hypercomplex number of 2^k
components and measures, on blocks, correlation, contrast and mean bias at once.

The product follows the closed form of the reference toolbox (Vivone et al., IEEE GRSM 2021):
``(a, b)(c, d) = (a c - conj(d) b, d a + b conj(c))``, conjugation negating every component but the
first. Because the product is bilinear, the block mean of ``z1 * z2`` is computed from the
B x B cross-moment matrix of the block with the algebra's structure constants (one batched matrix
product instead of a per-pixel recursion). In a Cayley-Dickson algebra ``e_i e_j = s_ij e_(i xor j)``
with ``s_ij = +-1`` (:func:`product_signs`), so from 32 components on (hyperspectral cubes: 64-256)
the contraction gathers the ``C^2`` signed terms instead of multiplying by the dense ``C^3`` table.
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np

#: Precision of the block values: float64, or each hypercomplex component and the modulus rounded
#: to float32 (the hyperspectral/Sentinel-2 code stores the block values in a float32 tensor).
BlockPrecision = Literal["float64", "float32"]
#: From this many components on, the product's contraction uses the sign table (memory C^2, not C^3).
SIGN_TABLE_FROM = 32

__all__ = [
    "conjugate",
    "multiply",
    "structure_constants",
    "product_signs",
    "block_q_values",
    "block_q_from_band_moments",
    "sums_exact",
    "block_q_from_moments",
    "integer_block_moments",
]


def conjugate(z: np.ndarray) -> np.ndarray:
    """Hypercomplex conjugate along the last axis (first component kept, others negated)."""
    out = -np.asarray(z, dtype=np.float64)
    out[..., 0] = -out[..., 0]
    return out


def multiply(z1: np.ndarray, z2: np.ndarray) -> np.ndarray:
    """Cayley-Dickson product of hypercomplex numbers stored along the last axis."""
    z1 = np.asarray(z1, dtype=np.float64)
    z2 = np.asarray(z2, dtype=np.float64)
    n = z1.shape[-1]
    if n != z2.shape[-1] or n & (n - 1):
        raise ValueError(f"operands need the same power-of-two component count, got {n}, {z2.shape[-1]}")
    if n == 1:
        return z1 * z2
    h = n // 2
    a, b = z1[..., :h], z1[..., h:]
    c, d = z2[..., :h], z2[..., h:]
    first = multiply(a, c) - multiply(conjugate(d), b)
    second = multiply(d, a) + multiply(b, conjugate(c))
    return np.concatenate([first, second], axis=-1)


@functools.lru_cache(maxsize=8)
def structure_constants(n_components: int) -> np.ndarray:
    """Structure constants ``T[k, i, j] = (e_i e_j)_k`` of the 2**k-component algebra."""
    eye = np.eye(n_components)
    prod = multiply(eye[:, None, :], eye[None, :, :])  # (i, j, k)
    table = np.ascontiguousarray(np.transpose(prod, (2, 0, 1)))
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=16)
def product_signs(n_components: int) -> np.ndarray:
    """Signs ``s[i, j]`` of the basis products ``e_i e_j = s[i, j] e_(i xor j)`` of the 2**k-component algebra.

    With ``(a, b)(c, d) = (a c - conj(d) b, d a + b conj(c))`` and ``c_j = +1`` for ``j = 0``, ``-1``
    otherwise (conjugation), the half-size table ``S`` gives the blocks ``[[S, S^T], [S c, -S^T c]]``
    (``c`` scaling the columns).

    Examples
    --------
    >>> product_signs(4).astype(int).tolist()
    [[1, 1, 1, 1], [1, -1, 1, -1], [1, -1, -1, 1], [1, 1, -1, -1]]
    """
    n = int(n_components)
    if n < 1 or n & (n - 1):
        raise ValueError(f"component count must be a power of two, got {n}")
    if n == 1:
        table = np.ones((1, 1))
    else:
        h = n // 2
        half = product_signs(h)
        conj = np.ones(h)
        conj[1:] = -1.0
        table = np.block([[half, half.T], [half * conj[None, :], -(half.T * conj[None, :])]])
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=16)
def _xor_gather(n_components: int) -> tuple[np.ndarray, np.ndarray]:
    """(column index ``i xor k``, sign ``s[i, i xor k]``) tables, both (i, k)."""
    idx = np.arange(n_components)
    col = idx[:, None] ^ idx[None, :]
    return col, product_signs(n_components)[idx[:, None], col]


def block_q_values(
    reference_blocks: np.ndarray,
    fused_blocks: np.ndarray,
    *,
    n_norm: int | None = None,
    std_floor: float = float(np.finfo(np.float64).eps),
    integer_valued: bool = False,
    value_bound: float | None = None,
    precision: BlockPrecision = "float64",
) -> np.ndarray:
    """Modulus of the hypercomplex quality index on each block (Q2n's block value)."""
    ref = np.asarray(reference_blocks, dtype=np.float64)
    fus = np.asarray(fused_blocks, dtype=np.float64)
    if ref.shape != fus.shape or ref.ndim != 3:
        raise ValueError(f"block arrays must both be (n_blocks, C, n_pixels); got {ref.shape}, {fus.shape}")
    n_blocks, c, n_pix = ref.shape
    # Block moments. With z1_i = a_i r_i + b_i and w_j = a'_j f_j + b'_j (z2 = conj(w)), every term
    # of the index reduces to means and (biased) covariances of the raw blocks; the m1*m2 parts of
    # mean(z1 z2) - m1 m2 cancel exactly, leaving the cross-covariance (better conditioned).
    exact = False
    if integer_valued:
        exact = value_bound is not None and sums_exact(n_pix, value_bound)
        if not exact:  # no bound, or one too loose for the test (large blocks): the data's own maximum
            top = max(float(np.abs(ref).max(initial=0.0)), float(np.abs(fus).max(initial=0.0)))
            exact = sums_exact(n_pix, top)
    if exact:  # integer data: raw sums are exact in float64
        moments = integer_block_moments(
            ref.sum(axis=2), fus.sum(axis=2), np.einsum("bcp,bcp->bc", ref, ref),
            np.einsum("bcp,bcp->bc", fus, fus), np.matmul(ref, fus.transpose(0, 2, 1)), n_pix,
        )
    else:
        mean_r = ref.mean(axis=2)  # (nb, C)
        mean_f = fus.mean(axis=2)
        rc = ref - mean_r[:, :, None]
        fc = fus - mean_f[:, :, None]
        var_r = np.einsum("bcp,bcp->bc", rc, rc) / n_pix  # biased (1/n) variances
        var_f = np.einsum("bcp,bcp->bc", fc, fc) / n_pix
        cross = np.matmul(rc, fc.transpose(0, 2, 1)) / n_pix  # (nb, C, C) biased cross-covariance
        moments = (mean_r, mean_f, var_r, var_f, cross)
    return block_q_from_band_moments(*moments, n_pix=n_pix, n_norm=n_norm, std_floor=std_floor, precision=precision)


def block_q_from_band_moments(
    mean_r: np.ndarray, mean_f: np.ndarray, var_r: np.ndarray, var_f: np.ndarray, cross: np.ndarray, *,
    n_pix: int, n_norm: int | None = None, std_floor: float = float(np.finfo(np.float64).eps),
    precision: BlockPrecision = "float64",
) -> np.ndarray:
    """``|q|`` per block from the moments of any band count (zero-padded to a power of two, as the
    toolbox pads the images), the last step of :func:`block_q_values`; the device backend feeds it
    the moments it computes from the same raw sums.

    Parameters
    ----------
    mean_r, mean_f, var_r, var_f : ndarray, shape (n_blocks, C)
    cross : ndarray, shape (n_blocks, C, C)
    n_pix, n_norm, std_floor, precision
        As :func:`block_q_from_moments`.

    Returns
    -------
    ndarray, shape (n_blocks,)

    Examples
    --------
    >>> m = np.ones((1, 3))
    >>> block_q_from_band_moments(m, m, m, m, np.eye(3)[None], n_pix=16).round(12).tolist()
    [1.0]
    """
    moments: tuple[np.ndarray, ...] = (mean_r, mean_f, var_r, var_f, cross)
    c = mean_r.shape[1]
    n_comp = 1 << (c - 1).bit_length()
    if n_comp != c:  # zero bands: zero moments
        pad = n_comp - c
        moments = tuple(np.pad(m, [(0, 0)] + [(0, pad)] * (m.ndim - 1)) for m in moments)
    return block_q_from_moments(*moments, n_pix=n_pix, n_norm=n_norm, std_floor=std_floor, precision=precision)


def sums_exact(n_pix: int, top: float) -> bool:
    """Whether raw sums of ``n_pix`` integers of magnitude <= ``top`` (and their n^2-scaled
    second moments) are exact in float64's 53-bit mantissa.

    Examples
    --------
    >>> sums_exact(32 * 32, 65535), sums_exact(64 * 64, 65535)
    (True, False)
    """
    return float(n_pix) ** 2 * top * top < 2.0**53


def integer_block_moments(
    sum_r: np.ndarray, sum_f: np.ndarray, sumsq_r: np.ndarray, sumsq_f: np.ndarray,
    raw_cross: np.ndarray, n_pix: int,
) -> tuple[np.ndarray, ...]:
    """Block means and biased (co)variances from raw sums of integer-valued blocks."""
    n2 = float(n_pix) * n_pix
    var_r = (n_pix * sumsq_r - sum_r * sum_r) / n2
    var_f = (n_pix * sumsq_f - sum_f * sum_f) / n2
    cross = (n_pix * raw_cross - sum_r[:, :, None] * sum_f[:, None, :]) / n2
    return sum_r / n_pix, sum_f / n_pix, var_r, var_f, cross


def block_q_from_moments(
    mean_r: np.ndarray,
    mean_f: np.ndarray,
    var_r: np.ndarray,
    var_f: np.ndarray,
    cross: np.ndarray,
    *,
    n_pix: int,
    n_norm: int | None = None,
    std_floor: float = float(np.finfo(np.float64).eps),
    precision: BlockPrecision = "float64",
) -> np.ndarray:
    """``|q|`` per block (see :func:`block_q_values`) from the blocks' first and second moments;
    ``precision="float32"`` rounds each component of ``q`` and the modulus to float32."""
    n_comp = mean_r.shape[1]
    if n_comp & (n_comp - 1):
        raise ValueError(f"component count must be a power of two, got {n_comp}")
    n = float(n_pix if n_norm is None else n_norm)
    k = n / (n - 1.0)
    std = np.sqrt(var_r * n_pix / (n_pix - 1))  # MATLAB std2 (N-1)
    std = np.where(std == 0, std_floor, std)
    a_r = 1.0 / std
    zero_mean = mean_r == 0
    a_f = np.where(zero_mean, 1.0, a_r)  # fused band only shifted by +1 where the reference mean is 0
    m1 = np.ones_like(mean_r)  # block means of the normalised reference: exactly 1
    w_mean = np.where(zero_mean, mean_f + 1.0, (mean_f - mean_r) * a_r + 1.0)
    sign = np.ones(n_comp)
    sign[1:] = -1.0  # conjugation of the fused number
    m2 = w_mean * sign

    mod1 = np.einsum("bc,bc->b", m1, m1)
    mod2 = np.einsum("bc,bc->b", m2, m2)
    term3 = k * (np.einsum("bc,bc->b", a_r * a_r, var_r) + np.einsum("bc,bc->b", a_f * a_f, var_f))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_bias = 2.0 * np.sqrt(mod1 * mod2) / (mod1 + mod2)  # exactly 1 for equal means: sqrt(m * m) == m

    # mean(z1_i z2_j) - m1_i m2_j = a_i a'_j sign_j C_ij
    scaled = cross * a_r[:, :, None] * (a_f * sign)[:, None, :]
    if n_comp < SIGN_TABLE_FROM:
        qv = k * np.einsum("kij,bij->bk", structure_constants(n_comp), scaled)
    else:  # (e_i e_j)_k = s_ij where j = i xor k: C^2 signed terms per block
        col, sgn = _xor_gather(n_comp)
        qv = k * np.einsum("bik,ik->bk", scaled[:, np.arange(n_comp)[:, None], col], sgn)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = qv * (mean_bias * 2.0 / term3)[:, None]
    if precision == "float32":  # the code's float32 tensor of block values: components, then |q|
        q = np.where((term3 == 0)[:, None], 0.0, q)
        q[:, -1] = np.where(term3 == 0, mean_bias, q[:, -1])
        q32 = q.astype(np.float32).astype(np.float64)
        return np.sqrt(np.einsum("bk,bk->b", q32, q32)).astype(np.float32).astype(np.float64)
    modulus = np.sqrt(np.einsum("bk,bk->b", q, q))
    return np.where(term3 == 0, np.abs(mean_bias), modulus)

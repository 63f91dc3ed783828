"""The inputs of the GRSM 2022 reference fixture (tests/spec/data/grsm2022), built the same way by the
generator (``make_fixture.py``, which runs the authors' MATLAB code under Octave) and by the tests.

Synthetic cases are seeded and their inputs stored in the fixture. Real cases are crops of the GRIP-UNINA
scenes in ``../shared/data`` (licence: not to be stored in the repository): the tests rebuild them and
compare their SHA-256 with the ones the generator recorded. Every derived image (EXP, GSA, the noisy
one) is rounded to a 1/256 DN grid: exact binary fractions, so the hash does not depend on the last
bit of the library's floating-point arithmetic.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: Block size S of the indexes (the callers of the reference code pass 32).
BLOCK = 32
RATIO = 4
#: Grid of the derived images (DN).
GRID = 1.0 / 256.0
#: Standard deviation (DN) and seed of the noise of the "noisy" fused image.
NOISE_SIGMA = 25.0
NOISE_SEED = 2022

#: Real cases: scene file, sensor, MS crop (row, col, size); PAN crop = RATIO times it.
REAL_SCENES = {
    "wv2": ("imgWV2.mat", "WV2", (0, 96, 24)),
    "ik": ("imgIK.mat", "IKONOS", (120, 96, 24)),
}
#: Synthetic cases: sensor, MS shape (h, w, bands), seed. ``syn3`` is not square (block-map orientation).
SYNTHETIC = {
    "syn4": ("QB", (16, 16, 4), 11),
    "syn3": ("none", (24, 16, 3), 12),
}
FUSIONS = ("exp", "gsa", "noisy")


def sha256_array(a: np.ndarray) -> str:
    """SHA-256 of a float64 array's C-order bytes with its shape."""
    arr = np.ascontiguousarray(a, dtype=np.float64)
    return hashlib.sha256(repr(arr.shape).encode() + arr.tobytes()).hexdigest()


def on_grid(a: np.ndarray) -> np.ndarray:
    """``a`` rounded to the 1/256 DN grid."""
    return np.round(np.asarray(a, dtype=np.float64) / GRID) * GRID


def synthetic_pair(shape: tuple[int, int, int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded MS (h, w, b) and PAN (RATIO h, RATIO w), integer DN with structure at both scales."""
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    h, w, b = shape
    coarse = rng.random((h // 4 + 2, w // 4 + 2, b))
    ms = 300.0 + 900.0 * ndimage.zoom(coarse, (4, 4, 1), order=3)[:h, :w] + 80.0 * rng.random((h, w, b))
    big = ndimage.zoom(coarse.mean(axis=2), (4 * RATIO, 4 * RATIO), order=3)[: h * RATIO, : w * RATIO]
    pan = 350.0 + 800.0 * big + 120.0 * ndimage.gaussian_filter(rng.random(big.shape), 1.0)
    return np.round(np.clip(ms, 1, None)), np.round(np.clip(pan, 1, None))


def real_pair(mat: dict, crop: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """MS and PAN crops (float64 DN) of a loaded scene."""
    r, c, n = crop
    ms = mat["I_MS"][r : r + n, c : c + n].astype(np.float64)
    pan = mat["I_PAN"][RATIO * r : RATIO * (r + n), RATIO * c : RATIO * (c + n)].astype(np.float64)
    return ms, pan


def fused_images(ms: np.ndarray, pan: np.ndarray) -> dict[str, np.ndarray]:
    """EXP (library ``interp23tap``), GSA (library ``baselines.gsa``) and GSA + seeded noise, on the grid."""
    from pansharp_iqa import interp23tap
    from pansharp_iqa.baselines import gsa

    exp = on_grid(interp23tap(ms, RATIO))
    fused = on_grid(gsa(ms, pan, ratio=RATIO))
    noise = np.random.default_rng(NOISE_SEED).normal(0.0, NOISE_SIGMA, fused.shape)
    return {"exp": exp, "gsa": fused, "noisy": on_grid(fused + noise)}

"""Per-band MTF filtering and per-band-phase decimation (the "reprojection" of the fused image).

Scarpa & Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote Sensing 14(8):1808,
2022, doi:10.3390/rs14081808; facts in ``fullres2022.md`` section 5.

Filtering is a same-size 41 x 41 cross-correlation with an edge-replicated border (the reference code
replicate-pads by 20 and correlates; its kernels are 180-degree symmetric, so correlation equals
convolution): the package's one replicate-border filter, :func:`pansharp_iqa.mtf.filter_replicate`
(OpenCV's float64 ``filter2D``, a DFT for kernels this large; against a direct 1681-term sum the
difference is ~4e-15 of the data's peak, measured by ``benchmarks/bench_reprojected.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..mtf import filter_replicate
from ..parallel import parallel_map
from ..validation import SettingError, ShapeError
from .inputs import band_planes

__all__ = ["filter_replicate", "filter_replicate_direct", "reproject"]


def filter_replicate_direct(plane: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Slow direct-sum version of :func:`filter_replicate` (reference for accuracy checks)."""
    src = np.asarray(plane, dtype=np.float64)
    ker = np.asarray(kernel, dtype=np.float64)
    r = ker.shape[0] // 2
    padded = np.pad(src, r, mode="edge")
    h, w = src.shape
    out = np.zeros((h, w))
    for u in range(ker.shape[0]):
        for v in range(ker.shape[1]):
            out += ker[u, v] * padded[u : u + h, v : v + w]
    return out


def reproject(
    fused: np.ndarray,
    kernels: np.ndarray,
    ratio: int,
    shifts: Sequence[tuple[int, int]] | np.ndarray,
    *,
    planes: np.ndarray | None = None,
) -> np.ndarray:
    """Filter each fused band with its own kernel and decimate it at its own phase.

    ``x_b = (F_b filtered with kernel b)[r_b::ratio, c_b::ratio]`` (0-based), the reprojection of
    Scarpa & Ciotola 2022 (section 5 of the protocol facts; no border cut, ``dim_cut = 0``).

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image at PAN scale (float64; DN).
    kernels : ndarray, shape (k, k, B)
        One kernel per band (:func:`~pansharp_iqa.reprojected.kernels.reprojection_kernels`).
    ratio : int
        Decimation step.
    shifts : sequence of (int, int) or ndarray, shape (B, 2)
        Per-band phase ``(r_b, c_b)``, each in ``0..ratio-1``.
    planes : ndarray, shape (B, H, W), optional
        The fused bands as contiguous planes, if already available (saves a transposition).

    Returns
    -------
    ndarray, shape (H // ratio, W // ratio, B), float64
        The reprojected image at MS scale (DN).

    References
    ----------
    G. Scarpa, M. Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808.
    """
    fused = np.asarray(fused, dtype=np.float64)
    n_bands = fused.shape[2]
    planes = band_planes(fused) if planes is None else planes
    sh = np.asarray(shifts, dtype=np.int64).reshape(-1, 2)
    if sh.shape[0] != n_bands or kernels.shape[2] != n_bands:
        raise ShapeError(
            f"need one shift and one kernel per band: {n_bands} bands, {sh.shape[0]} shifts, "
            f"{kernels.shape[2]} kernels"
        )
    if np.any(sh < 0) or np.any(sh >= ratio):
        raise SettingError(f"shifts must lie in 0..ratio-1 = 0..{ratio - 1}, got {sh.tolist()}")
    h, w = fused.shape[0] // ratio, fused.shape[1] // ratio

    dst = np.empty(fused.shape[:2])

    def one(b: int) -> np.ndarray:
        filt = filter_replicate(planes[b], kernels[:, :, b], out=dst)
        r, c = int(sh[b, 0]), int(sh[b, 1])
        return np.array(filt[r::ratio, c::ratio][:h, :w])

    decimated = parallel_map(one, list(range(n_bands)), workers=1)
    return np.stack(decimated, axis=-1)

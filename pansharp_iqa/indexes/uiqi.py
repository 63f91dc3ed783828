"""Universal image quality index (UIQI, "Q"): sliding-window Q_avg and block-wise Q for QNR.

References
----------
Wang & Bovik, "A universal image quality index", IEEE SPL 9(3), 2002, doi:10.1109/97.995823.
Vivone et al., IEEE GRSM 2021 (toolbox ``Q``/``img_qi`` and ``uqi`` in ``D_lambda``/``D_s``).
"""

from __future__ import annotations

import numpy as np

from ..parallel import parallel_map
from ..validation import check_min_size, checked_pair
from .reduced_pass import ReducedSums, StripImage, reduced_sums, uiqi_rows

__all__ = [
    "q_index", "q_avg", "uiqi_map",
    "block_moments", "pair_uiqi", "against_last_uiqi", "uiqi_from_moments",
]


def uiqi_map(
    x: np.ndarray, y: np.ndarray, block_size: int = 32, *, shift: tuple[float, float] | None = None
) -> np.ndarray:
    """UIQI map of two 2-D bands on a sliding window (toolbox ``img_qi``), 'valid' windows only.

    Window sums are taken on data shifted by integers near the data (the rounded band means by
    default), which keeps sums of integer-valued data exact and avoids cancellation otherwise;
    see :func:`pansharp_iqa.indexes.reduced_pass.uiqi_rows` for the formula and the flat-window
    rules.

    Parameters
    ----------
    x, y : ndarray, shape (H, W)
        Reference and test band.
    block_size : int
        Window side.
    shift : (float, float), optional
        Integer offsets subtracted before summing (default: the rounded band means).

    Returns
    -------
    ndarray, shape (H - block_size + 1, W - block_size + 1)
        Q per window (dimensionless, in [-1, 1]).
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if shift is None:
        shift = (float(np.round(x.mean())), float(np.round(y.mean())))
    return uiqi_rows(x, y, int(block_size), shift)


def q_index(
    reference: np.ndarray,
    fused: np.ndarray,
    *,
    block_size: int = 32,
    return_map: bool = False,
) -> float | tuple[float, np.ndarray]:
    """Q_avg: band-averaged UIQI on a sliding window (toolbox ``Q``).

    Parameters
    ----------
    reference, fused : ndarray, shape (H, W, B)
        Ground truth and fused image (any consistent unit; DN in the protocols).
    block_size : int, default 32
        Sliding-window side (stride 1, windows fully inside the image).
    return_map : bool
        Also return the (H-bs+1, W-bs+1, B) map.

    Returns
    -------
    float or (float, ndarray)
        Mean over bands of the mean UIQI map, in [-1, 1] (1 = identical).

    References
    ----------
    Wang & Bovik, IEEE SPL 9(3), 2002; Vivone et al., IEEE GRSM 2021.
    """
    ref, fus = checked_pair(reference, fused)
    bs = int(block_size)
    check_min_size("reference", ref, bs)
    qmap = np.empty((ref.shape[0] - bs + 1, ref.shape[1] - bs + 1, ref.shape[2])) if return_map else None
    sums = reduced_sums(StripImage(ref), StripImage(fus), indexes={"Q"}, block_size=bs, q_map=qmap)
    value = q_avg(sums)
    return (value, qmap) if return_map else value


def q_avg(sums: ReducedSums) -> float:
    """Q_avg from a pass's per-band UIQI map sums (mean over windows, then over bands).

    Parameters
    ----------
    sums : ReducedSums
        From :func:`~pansharp_iqa.indexes.reduced_pass.reduced_sums` with ``"Q"``.

    Returns
    -------
    float
        Dimensionless, in [-1, 1] (1 = identical).

    References
    ----------
    Wang & Bovik, IEEE SPL 9(3), 2002; Vivone et al., IEEE GRSM 2021.
    """
    return float(np.mean(sums.q_sums / sums.q_count))


def block_moments(
    img: np.ndarray | StripImage, block_size: int, *, extra: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-block means and sample (N-1) covariance matrices of all channels.

    Parameters
    ----------
    img : ndarray, shape (H, W, C), or StripImage
        H and W multiples of ``block_size``; a :class:`StripImage` may hold band planes.
    block_size : int
    extra : ndarray, shape (H, W), optional
        One more channel (e.g. the PAN), appended last, without concatenating whole images.

    Returns
    -------
    mean : ndarray, shape (n_blocks, C)
    cov : ndarray, shape (n_blocks, C, C)
        As MATLAB's ``cov`` (centred, divided by N-1).
    """
    src = img if isinstance(img, StripImage) else StripImage(np.asarray(img))
    bs = int(block_size)
    ny = src.shape[0] // bs
    n_pix = bs * bs

    def rows(i0: int) -> tuple[np.ndarray, np.ndarray]:
        blocks = src.blocks(slice(i0 * bs, min(i0 + 2, ny) * bs), bs, extra=extra)  # (n, C, N)
        mean = blocks.mean(axis=2)
        blocks -= mean[:, :, None]
        return mean, np.matmul(blocks, blocks.transpose(0, 2, 1)) / (n_pix - 1)

    # two block rows per task: a cache-sized working set, in threads
    parts = parallel_map(rows, list(range(0, ny, 2)))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def uiqi_from_moments(cxy, vx, vy, mx, my) -> np.ndarray:
    """``4 cxy mx my / (vx + vy) / (mx^2 + my^2)`` (MATLAB ``uqi``); NaN where 0/0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return 4.0 * cxy * mx * my / (vx + vy) / (mx * mx + my * my)


def pair_uiqi(mean: np.ndarray, cov: np.ndarray, n_bands: int) -> np.ndarray:
    """Block UIQI of every band pair i < j among the first ``n_bands`` channels: (n_blocks, n_pairs)."""
    iu, ju = np.triu_indices(n_bands, k=1)
    var = np.diagonal(cov, axis1=1, axis2=2)
    return uiqi_from_moments(cov[:, iu, ju], var[:, iu], var[:, ju], mean[:, iu], mean[:, ju])


def against_last_uiqi(mean: np.ndarray, cov: np.ndarray, n_bands: int) -> np.ndarray:
    """Block UIQI of each of the first ``n_bands`` channels against channel ``n_bands``: (n_blocks, B)."""
    var = np.diagonal(cov, axis1=1, axis2=2)
    return uiqi_from_moments(
        cov[:, :n_bands, n_bands], var[:, :n_bands], var[:, n_bands : n_bands + 1],
        mean[:, :n_bands], mean[:, n_bands : n_bands + 1],
    )

"""Universal image quality index (UIQI, "Q"): sliding-window Q_avg and block-wise Q for QNR.

References
----------
Wang & Bovik, "A universal image quality index", IEEE SPL 9(3), 2002, doi:10.1109/97.995823.
Vivone et al., IEEE GRSM 2021 (toolbox ``Q``/``img_qi`` and ``uqi`` in ``D_lambda``/``D_s``).
"""

from __future__ import annotations

import cv2
import numpy as np

from ..parallel import parallel_map
from ..validation import as_image, check_min_size, check_same_shape

__all__ = [
    "q_index", "uiqi_map", "blocks_of", "band_planes",
    "block_moments", "pair_uiqi", "against_last_uiqi", "uiqi_from_moments",
]


def band_planes(img: np.ndarray) -> np.ndarray:
    """(B, H, W) C-contiguous copy of an (H, W, B) image (fast per-band row access)."""
    return np.ascontiguousarray(np.moveaxis(img, 2, 0))


def uiqi_map(
    x: np.ndarray, y: np.ndarray, block_size: int = 32, *, shift: tuple[float, float] | None = None
) -> np.ndarray:
    """UIQI map of two 2-D bands on a sliding window (toolbox ``img_qi``), 'valid' windows only.

    Window sums are taken on data shifted by the rounded band means (the UIQI terms are
    recombined exactly), which keeps sums of integer-valued data exact and avoids cancellation
    otherwise. Four box filters (Sx, Sy, Sxx + Syy, Sxy) on contiguous planes.

    Parameters
    ----------
    x, y : ndarray, shape (H, W)
        Reference and test band (float64).
    block_size : int
        Window side.
    shift : (float, float), optional
        Integer offsets subtracted before summing (default: the rounded band means). Pass the
        whole band's values when computing the map strip by strip.

    Returns
    -------
    ndarray, shape (H - block_size + 1, W - block_size + 1)
        Q per window, with ``img_qi``'s rules for flat windows.
    """
    bs = int(block_size)
    n = float(bs * bs)
    cx, cy = (np.round(x.mean()), np.round(y.mean())) if shift is None else shift
    h_out, w_out = x.shape[0] - bs + 1, x.shape[1] - bs + 1

    def box(plane: np.ndarray) -> np.ndarray:
        return cv2.boxFilter(plane, cv2.CV_64F, (bs, bs), anchor=(0, 0), normalize=False,
                             borderType=cv2.BORDER_CONSTANT)[:h_out, :w_out]

    xs = x - cx  # contiguous planes: no interleaving, one box filter each
    ys = y - cy
    sxy = box(xs * ys)
    sq = xs * xs
    sq += ys * ys  # only Sxx + Syy is needed
    sxxyy = box(sq)
    sx, sy = box(xs), box(ys)
    cov = sxy * n
    cov -= sx * sy
    d1 = sxxyy * n
    d1 -= sx * sx
    d1 -= sy * sy
    sx = sx + n * cx  # window sums of the unshifted data
    sy = sy + n * cy
    mul = sx * sy
    d2 = sx * sx
    d2 += sy * sy
    den = d1 * d2
    num = cov
    num *= mul
    num *= 4.0
    out = np.ones_like(den)
    flat = d1 == 0
    if flat.any():
        flat &= d2 != 0
        out[flat] = 2.0 * mul[flat] / d2[flat]
    np.divide(num, den, out=out, where=den != 0)
    return out


_STRIP_ROWS = 64  # output rows per task: keeps each task's temporaries in cache


def _q_index_core(ref: np.ndarray, fus: np.ndarray, block_size: int, return_map: bool):
    h, w, nb = ref.shape
    out_h, out_w = h - block_size + 1, w - block_size + 1
    ref, fus = band_planes(ref), band_planes(fus)  # (B, H, W): contiguous rows per band
    shifts = [(np.round(ref[b].mean()), np.round(fus[b].mean())) for b in range(nb)]
    tasks = [(b, r0) for b in range(nb) for r0 in range(0, out_h, _STRIP_ROWS)]
    qmap = np.empty((out_h, out_w, nb)) if return_map else None

    def one(task: tuple[int, int]) -> float:
        b, r0 = task
        r1 = min(r0 + _STRIP_ROWS, out_h)
        rows = slice(r0, r1 + block_size - 1)
        strip = uiqi_map(ref[b, rows], fus[b, rows], block_size, shift=shifts[b])
        if qmap is not None:
            qmap[r0:r1, :, b] = strip
        return float(strip.sum())

    sums = np.array(parallel_map(one, tasks)).reshape(nb, -1).sum(axis=1)
    value = float(np.mean(sums / (out_h * out_w)))
    if return_map:
        return value, qmap
    return value


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
    ref = as_image("reference", reference)
    fus = as_image("fused", fused)
    check_same_shape("reference", ref, "fused", fus)
    check_min_size("reference", ref, int(block_size))
    return _q_index_core(ref, fus, int(block_size), return_map)


def blocks_of(img: np.ndarray, block_size: int) -> np.ndarray:
    """(n_blocks, block_size**2, C) contiguous copy of the non-overlapping blocks, row-major."""
    h, w, c = img.shape
    ny, nx = h // block_size, w // block_size
    blk = img[: ny * block_size, : nx * block_size].reshape(ny, block_size, nx, block_size, c)
    return np.ascontiguousarray(blk.transpose(0, 2, 1, 3, 4)).reshape(ny * nx, block_size * block_size, c)


def block_moments(
    img: np.ndarray, block_size: int, *, extra: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-block means and sample (N-1) covariance matrices of all channels.

    Parameters
    ----------
    img : ndarray, shape (H, W, C), H and W multiples of ``block_size``
    block_size : int
    extra : ndarray, shape (H, W), optional
        One more channel (e.g. the PAN), appended last, without concatenating whole images.

    Returns
    -------
    mean : ndarray, shape (n_blocks, C)
    cov : ndarray, shape (n_blocks, C, C)
        As MATLAB's ``cov`` (centred, divided by N-1).
    """
    ny = img.shape[0] // block_size

    def rows(i0: int) -> tuple[np.ndarray, np.ndarray]:
        rows_ = slice(i0 * block_size, min(i0 + 2, ny) * block_size)
        blocks = blocks_of(img[rows_], block_size)
        if extra is not None:
            blocks = np.concatenate([blocks, blocks_of(extra[rows_, :, None], block_size)], axis=2)
        mean = blocks.mean(axis=1)
        blocks -= mean[:, None, :]
        cov = np.matmul(np.swapaxes(blocks, 1, 2), blocks) / (blocks.shape[1] - 1)
        return mean, cov

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

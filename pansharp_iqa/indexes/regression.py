"""Regression-based full-resolution indexes and the quality maps of the GRSM 2022 review's code:
LSR, D_s_R, RQNR, D_lambda_F (Khan's D_lambda_K under its 2022 name), and the maps of HQNR and of
QNR's D_lambda and D_s.

What each function computes is what the authors' MATLAB code computes (``LSR``, ``D_s_R``, ``RQNR``,
``D_lambda_F``, ``HQNR``, ``D_lambda_Q``, ``D_s_Q``), read and checked under GNU Octave; the facts are
in ``tests/spec/data/grsm2022/FACTS.md``. In short:

* **LSR** regresses the PAN on the fused bands at PAN scale, globally, without intercept
  (``w = F \\ P``); ``cd = 1 - var(P - F w) / var(P)``; its map is the same ratio of local sample
  variances over ``s x s`` windows (``s = S - 1`` for an even block size S, else S), clipped to [0, 1].
* **D_s_R** = ``1 - cd`` (scalar) and ``1 - cd_map`` (map on the PAN grid).
* **D_lambda_F** = ``1 - Q2n(EXP, MTF(F))`` with its 32-pixel block map ``1 - q``.
* **RQNR** = ``(1 - D_lambda_F)^alpha (1 - D_s_R)^beta``; its map uses D_lambda_F's block map
  enlarged to the PAN grid by MATLAB's bicubic ``imresize`` (not clipped).
* **HQNR**'s map: D_lambda_F's and D_s's block maps both enlarged to the PAN grid, then composed.
* QNR's **D_lambda** and **D_s** block maps: the mean over band pairs (bands) of
  ``|Q_fused - Q_reference|`` per block (exponents p = q = 1; the scalar is not the mean of the map).

These are formulas (float64, in memory), not wired into the catalogue: protocols, sensors and
validation of the caller's intent live above.

References
----------
Arienzo, Vivone, Garzelli, Alparone, Chanussot, "Full-resolution quality assessment of pansharpening:
theoretical and hands-on approaches", IEEE GRSM 10(3), 2022, doi:10.1109/MGRS.2022.3170092 (the code's
headers cite it as GRSM 10(2):2-35). Alparone, Garzelli, Vivone, "Spatial consistency for full-scale
assessment of pansharpening", Proc. IGARSS 2018, pp. 5132-5134 (D_s_R). Khan, Alparone, Chanussot,
IEEE TGRS 47(11), 2009, doi:10.1109/TGRS.2009.2029094 (D_lambda_F). Alparone et al., PE&RS 74(2), 2008,
doi:10.14358/PERS.74.2.193 (QNR).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..mtf import filter_planes, mtf_kernel
from ..resample import resize_matrix
from ..validation import SettingError, ShapeError, as_image, check_block_size, check_multiple_of, image_and_pan
from .full_resolution import block_uiqi_sums, d_lambda_block_map, d_lambda_k_from_sums, d_s_block_map, khan_q2n_blocks
from .strips import StripImage

__all__ = [
    "QNR_LIKE_EXPONENTS", "EXPONENT_CASES", "qnr_like_exponents", "LsrResult", "LsrFit", "lsr", "lsr_gram_sums",
    "lsr_fit", "lsr_residual", "lsr_residual_sums",
    "lsr_variances", "lsr_cd_map", "d_s_r_from_sums", "d_s_r_map", "local_variance", "lsr_window", "d_s_r",
    "d_lambda_f", "qnr_block_maps", "to_pan_grid", "qnr_like", "rqnr", "rqnr_map", "hqnr_map",
]

#: The exponents (alpha, beta) of the code's ``get_alpha_beta``: per QNR-like index, per sensor
#: ("sensor-based") and "overall"; "unitary" is (1, 1). A sensor missing from the table falls back
#: to "overall" there.
QNR_LIKE_EXPONENTS: dict[str, dict[str, tuple[float, float]]] = {
    "QNR": {"GeoEye1": (0.01, 1.22), "IKONOS": (0.0, 1.03), "WV3": (0.0, 1.33), "overall": (0.0, 1.19)},
    "HQNR": {"GeoEye1": (0.89, 0.91), "IKONOS": (0.86, 0.77), "WV3": (1.42, 0.94), "overall": (0.98, 0.89)},
    "FQNR": {"GeoEye1": (1.2, 1.12), "IKONOS": (0.79, 1.24), "WV3": (1.49, 0.98), "overall": (1.08, 1.1)},
    "RQNR": {"GeoEye1": (1.9, 0.43), "IKONOS": (1.38, 0.76), "WV3": (2.45, 1.31), "overall": (1.81, 0.9)},
}

#: The exponent cases of the code's ``get_alpha_beta``: (1, 1) for every index ("unitary"), the
#: sensor's row ("sensor-based") or the "overall" row.
EXPONENT_CASES = ("unitary", "sensor-based", "overall")


def qnr_like_exponents(case: str, sensor: str | None = None) -> dict[str, tuple[float, float]]:
    """(alpha, beta) of every QNR-like index for an exponent case, as the code's ``get_alpha_beta``.

    A sensor missing from :data:`QNR_LIKE_EXPONENTS` (or none) turns "sensor-based" into "overall",
    as the code does for any case but "unitary".

    Parameters
    ----------
    case : {"unitary", "sensor-based", "overall"}
    sensor : str, optional
        The sensor's registry name (``"GeoEye1"``, ``"IKONOS"``, ``"WV3"`` have rows of their own).

    Returns
    -------
    dict of str to (float, float)
        By index name (``QNR``, ``HQNR``, ``FQNR``, ``RQNR``).

    Examples
    --------
    >>> qnr_like_exponents("sensor-based", "IKONOS")["RQNR"], qnr_like_exponents("sensor-based", "QB")["RQNR"]
    ((1.38, 0.76), (1.81, 0.9))
    >>> qnr_like_exponents("unitary")["HQNR"]
    (1.0, 1.0)
    """
    if case not in EXPONENT_CASES:
        raise SettingError(f"exponents must be one of {', '.join(EXPONENT_CASES)}; got {case!r}")
    if case == "unitary":
        return {name: (1.0, 1.0) for name in QNR_LIKE_EXPONENTS}
    row = sensor if case == "sensor-based" and sensor in QNR_LIKE_EXPONENTS["QNR"] else "overall"
    return {name: table[row] for name, table in QNR_LIKE_EXPONENTS.items()}


#: Rounding bound of the one-pass window variance, in units of ``sum(c^2)/(n-1)`` (two passes of
#: ``size`` additions, and the squared sum), per window side.
_PASS_ERROR = 4.0 * float(np.finfo(np.float64).eps)
#: Windows whose one-pass variance may be off by more than this (relative) are recomputed exactly.
_VAR_RTOL = 1e-12
_EXACT_CHUNK = 4096
#: Side (pixels) of the zones whose suspect windows are summed again about the zone's own mean.
_ZONE = 32


# --------------------------------------------------------------------------- local variance


def _box_sum(a: np.ndarray, size: int) -> np.ndarray:
    """Sum over ``size x size`` windows, MATLAB 'symmetric' borders (each sum taken term by term)."""
    from scipy import ndimage

    ones = np.ones(size)
    return ndimage.correlate1d(ndimage.correlate1d(a, ones, axis=0, mode="reflect"), ones, axis=1, mode="reflect")


def _one_pass(s1: np.ndarray, s2: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Window variances from the window sums of ``c`` and ``c^2``, and where they may be off by more than
    :data:`_VAR_RTOL` (relative)."""
    n = size * size
    var = np.maximum((s2 - s1 * s1 / n) / (n - 1), 0.0)
    return var, _PASS_ERROR * size * (s2 / (n - 1)) >= _VAR_RTOL * var


def _recentred(x: np.ndarray, size: int, var: np.ndarray, suspect: np.ndarray) -> None:
    """Sum the suspect windows again about the mean of their :data:`_ZONE`-pixel zone (the offset the
    cancellation grows with is then local); fills ``var`` and clears ``suspect`` where that suffices."""
    from scipy import ndimage

    half, ones = size // 2, np.ones(size)
    padded = np.pad(x, half, mode="symmetric")
    zr, zc = np.nonzero(np.add.reduceat(np.add.reduceat(suspect, np.arange(0, x.shape[0], _ZONE), axis=0),
                                        np.arange(0, x.shape[1], _ZONE), axis=1))
    for r0, c0 in zip(zr * _ZONE, zc * _ZONE, strict=True):
        rows, cols = slice(r0, min(r0 + _ZONE, x.shape[0])), slice(c0, min(c0 + _ZONE, x.shape[1]))
        region = padded[r0 : rows.stop + 2 * half, c0 : cols.stop + 2 * half]
        c = region - region.mean()
        sums = [ndimage.correlate1d(ndimage.correlate1d(a, ones, axis=0), ones, axis=1)[half:-half, half:-half]
                for a in (c, c * c)]
        v, still = _one_pass(sums[0], sums[1], size)
        fixed = suspect[rows, cols] & ~still
        var[rows, cols][fixed] = v[fixed]
        suspect[rows, cols] &= still


def _exact_variance(x: np.ndarray, size: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Two-pass sample variance of the windows centred on (rows, cols), 'symmetric' borders."""
    half = size // 2
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(x, half, mode="symmetric"), (size, size))
    out = np.empty(rows.size)
    for k in range(0, rows.size, _EXACT_CHUNK):
        sel = slice(k, k + _EXACT_CHUNK)
        out[sel] = windows[rows[sel], cols[sel]].reshape(-1, size * size).var(axis=1, ddof=1)
    return out


def local_variance(image: np.ndarray, *, size: int) -> np.ndarray:
    """Sample variance (N - 1) of every ``size x size`` window: MATLAB ``stdfilt(I, ones(size)).^2``.

    Borders are mirrored with the edge pixel repeated (MATLAB 'symmetric'). The variance comes from
    window sums of the mean-removed image; where that one-pass formula could lose more than 1e-12
    (relative) to cancellation (windows much flatter than their offset from the image mean), the
    window is summed again about the mean of its 32-pixel zone, and where that still could, it is
    recomputed with the two-pass formula. Hand-written for this exactness: GNU Octave's
    ``stdfilt`` is the two-pass standard deviation of each window, and a plain box-filter variance
    differs from it by up to ~1e-10 on flat areas of real scenes.

    Parameters
    ----------
    image : ndarray, shape (H, W)
    size : int
        Window side (pixels), odd, >= 3.

    Returns
    -------
    ndarray, float64, shape (H, W)
        Non-negative; exactly 0 on constant windows.

    Examples
    --------
    >>> x = np.arange(25.0).reshape(5, 5)
    >>> float(local_variance(x, size=3)[2, 2]) == float(np.var(x[1:4, 1:4], ddof=1))
    True
    """
    x = np.asarray(image, dtype=np.float64)
    if x.ndim != 2:
        raise ShapeError(f"local_variance: expected a 2-D image, got shape {x.shape}")
    size = check_block_size(size, name="size", minimum=3)
    if size % 2 == 0:
        raise SettingError(f"size must be odd (a centred window), got {size}")
    c = x - x.mean()
    var, suspect = _one_pass(_box_sum(c, size), _box_sum(c * c, size), size)
    if suspect.any():
        _recentred(x, size, var, suspect)
    if suspect.any():
        rows, cols = np.nonzero(suspect)
        var[rows, cols] = _exact_variance(x, size, rows, cols)
    return var


# --------------------------------------------------------------------------- LSR and D_s_R


def _by_band(planes: np.ndarray) -> np.ndarray:
    """(B, h, w) planes as a (B, h w) matrix, a view where the layout allows (the (h, w, B) storage's transpose)."""
    nb = planes.shape[0]
    hwb = np.moveaxis(planes, 0, -1)
    return hwb.reshape(-1, nb).T if hwb.flags.c_contiguous else planes.reshape(nb, -1)


def lsr_gram_sums(fused: np.ndarray, pan: np.ndarray) -> dict[str, Any]:
    """The regression's window sums (the first pass of LSR): Gram matrix, fused x PAN products, sums.

    Parameters
    ----------
    fused : ndarray, shape (B, h, w)
        Fused band planes over the window (DN).
    pan : ndarray, shape (1, h, w)
        The PAN over the window (DN).

    Returns
    -------
    dict
        ``gram`` (B*B,) = flattened ``F^T F``, ``ftp`` (B,) = ``F^T P``, ``fused_sum`` (B,),
        ``pan_sum`` and ``pixels``: sums that add up across windows.

    Examples
    --------
    >>> f = np.arange(8.0).reshape(2, 2, 2)
    >>> s = lsr_gram_sums(f, f[:1])
    >>> s["gram"].tolist(), s["ftp"].tolist(), s["pixels"]
    ([14.0, 38.0, 38.0, 126.0], [14.0, 38.0], 4)
    """
    f = _by_band(fused)
    p = pan.reshape(-1)
    return {"gram": (f @ f.T).ravel(), "ftp": f @ p, "fused_sum": f.sum(axis=1), "pan_sum": float(p.sum()),
            "pixels": int(p.size)}


@dataclasses.dataclass(frozen=True)
class LsrFit:
    """The global regression of the PAN on the fused bands, from :func:`lsr_gram_sums` of the whole image.

    Attributes
    ----------
    weights : ndarray, shape (B,)
        ``w`` (no intercept).
    fused_mean : ndarray, shape (B,)
        Mean of each fused band (DN).
    pan_mean : float
        Mean of the PAN (DN).
    """

    weights: np.ndarray
    fused_mean: np.ndarray
    pan_mean: float

    @property
    def residual_mean(self) -> float:
        """Mean of the residual ``e = P - F w`` (not 0: there is no intercept)."""
        return float(self.pan_mean - self.weights @ self.fused_mean)


def lsr_fit(sums: Mapping[str, Any]) -> LsrFit:
    """``w = F \\ P`` from the whole image's :func:`lsr_gram_sums` (normal equations, columns scaled to unit norm).

    MATLAB's ``\\`` solves the least squares by QR; the normal equations give the same residual to
    rounding (D_s_R within 8e-12 of the authors' code on the real scenes, where ``w`` itself agrees
    to 2e-10): D_s_R is second-order in an error of ``w``. Linearly dependent bands (a singular
    system) take the minimum-norm solution (MATLAB's basic one differs; the residual is the same).

    Parameters
    ----------
    sums : mapping
        :func:`lsr_gram_sums` of the whole image (added over windows).

    Returns
    -------
    LsrFit

    Examples
    --------
    >>> f = np.random.default_rng(0).uniform(100, 900, (3, 16, 16))
    >>> fit = lsr_fit(lsr_gram_sums(f, np.tensordot([0.5, 0.3, 0.2], f, 1)[None]))
    >>> fit.weights.round(12).tolist()
    [0.5, 0.3, 0.2]
    """
    ftp = np.asarray(sums["ftp"], dtype=np.float64)
    nb = ftp.size
    gram = np.asarray(sums["gram"], dtype=np.float64).reshape(nb, nb)
    scale = np.sqrt(np.diag(gram))
    scale[scale == 0] = 1.0
    a, b = gram / np.outer(scale, scale), ftp / scale
    try:
        weights = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        weights = np.linalg.lstsq(a, b, rcond=None)[0]
    n = float(sums["pixels"])
    return LsrFit(weights / scale, np.asarray(sums["fused_sum"], dtype=np.float64) / n, float(sums["pan_sum"]) / n)


def lsr_residual(fused: np.ndarray, pan: np.ndarray, fit: LsrFit) -> np.ndarray:
    """The residual ``e = P - F w`` and the PAN over a window, stacked as (2, h, w) planes (DN).

    Examples
    --------
    >>> f = np.ones((2, 2, 3))
    >>> lsr_residual(f, 3 * f[:1], LsrFit(np.array([1.0, 1.0]), np.ones(2), 3.0))[:, 0, 0].tolist()
    [1.0, 3.0]
    """
    p = pan[0] if pan.ndim == 3 else pan
    return np.stack([p - np.tensordot(fit.weights, fused, axes=1), p])


def lsr_residual_sums(fused: np.ndarray, pan: np.ndarray, fit: LsrFit) -> dict[str, Any]:
    """The second pass of LSR over a window: sums of the residual's and the PAN's deviations from their
    global means (``e - mean(e)``, ``P - mean(P)``) and of their squares.

    Two passes, as MATLAB's ``var``: on the real scenes a one-pass variance from the Gram sums
    loses 4e-9 (relative) of D_s_R to cancellation where the fit is close (GSA on WorldView-2).

    Parameters
    ----------
    fused : ndarray, shape (B, h, w)
    pan : ndarray, shape (1, h, w)
    fit : LsrFit
        The whole image's :func:`lsr_fit`.

    Returns
    -------
    dict
        ``residual_dev``, ``residual_sq``, ``pan_dev``, ``pan_sq``, ``pixels`` (sums over the window).

    Examples
    --------
    >>> f = np.arange(8.0).reshape(2, 2, 2) + 1
    >>> s = lsr_residual_sums(f, f[1:], lsr_fit(lsr_gram_sums(f, f[1:])))
    >>> round(s["residual_sq"], 12), s["pan_sq"]
    (0.0, 5.0)
    """
    e, p = lsr_residual(fused, pan, fit)
    de = e - fit.residual_mean
    dp = p - fit.pan_mean
    return {"residual_dev": float(de.sum()), "residual_sq": float(np.vdot(de, de)), "pan_dev": float(dp.sum()),
            "pan_sq": float(np.vdot(dp, dp)), "pixels": int(p.size)}


def lsr_variances(sums: Mapping[str, Any]) -> tuple[float, float]:
    """Sample variances (N - 1) of the residual and of the PAN from :func:`lsr_residual_sums` of the whole image.

    Examples
    --------
    >>> lsr_variances({"residual_dev": 0.0, "residual_sq": 2.0, "pan_dev": 0.0, "pan_sq": 5.0, "pixels": 3})
    (1.0, 2.5)
    """
    n = float(sums["pixels"])

    def var(dev: float, sq: float) -> float:
        return (sq - dev * dev / n) / (n - 1.0)

    return var(sums["residual_dev"], sums["residual_sq"]), var(sums["pan_dev"], sums["pan_sq"])


def d_s_r_from_sums(sums: Mapping[str, Any]) -> float:
    """D_s_R = ``var(e) / var(P)`` (= the code's ``1 - cd``) from :func:`lsr_residual_sums` of the whole image.

    Examples
    --------
    >>> d_s_r_from_sums({"residual_dev": 0.0, "residual_sq": 2.0, "pan_dev": 0.0, "pan_sq": 8.0, "pixels": 5})
    0.25
    """
    var_e, var_p = lsr_variances(sums)
    return float(var_e / var_p)


@dataclasses.dataclass(frozen=True)
class LsrResult:
    """Outputs of the code's ``LSR`` (least-squares regression of the PAN on the fused bands).

    Attributes
    ----------
    weights : ndarray, shape (B,)
        Regression coefficients ``w`` (no intercept).
    residual_rms : float
        ``sqrt(mean(e^2))`` of the residual ``e = P - F w`` (DN).
    cd : float
        Coefficient of determination ``1 - var(e) / var(P)`` (sample variances; not clipped).
    cd_map : ndarray, shape (H, W)
        ``1 - var_w(e) / var_w(P)`` over :func:`lsr_window` windows, clipped to [0, 1] (NaN where
        both local variances are 0).
    var_pan : float
        Sample variance of the PAN (DN^2).
    residual : ndarray, shape (H, W)
        ``e`` (DN).
    """

    weights: np.ndarray
    residual_rms: float
    cd: float
    cd_map: np.ndarray
    var_pan: float
    residual: np.ndarray


def lsr_window(block_size: int) -> int:
    """Window side of LSR's local map: ``block_size - 1`` if even, else ``block_size``.

    Examples
    --------
    >>> lsr_window(32), lsr_window(33)
    (31, 33)
    """
    return block_size - 1 if block_size % 2 == 0 else block_size


def lsr_cd_map(residual_and_pan: np.ndarray, size: int) -> np.ndarray:
    """LSR's local coefficient of determination of (2, h, w) planes ``(e, P)``, clipped to [0, 1] (NaN kept).

    ``1 - var_w(e) / var_w(P)`` over ``size x size`` windows (:func:`local_variance`, MATLAB
    ``stdfilt(.).^2`` with 'symmetric' borders). On a window of an image given with a halo of
    ``size // 2`` pixels, the part inside the halo equals the whole image's map.

    Examples
    --------
    >>> e = np.zeros((8, 8)); p = np.arange(64.0).reshape(8, 8)
    >>> float(lsr_cd_map(np.stack([e, p]), 3).min())
    1.0
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cd_map = 1.0 - local_variance(residual_and_pan[0], size=size) / local_variance(residual_and_pan[1], size=size)
    cd_map[cd_map > 1.0] = 1.0
    cd_map[cd_map < 0.0] = 0.0
    return cd_map


def _fused_and_pan(fused: object, pan: object, block_size: object) -> tuple[np.ndarray, np.ndarray, int]:
    """Validated (B, H, W) fused planes, (1, H, W) PAN and block size of the regression indexes."""
    bs = check_block_size(block_size, minimum=3)
    img, p = image_and_pan("fused", fused, "pan", pan)
    return np.moveaxis(img, 2, 0), p[None], bs


def _regression(planes: np.ndarray, pan: np.ndarray) -> tuple[LsrFit, dict[str, Any]]:
    """The two passes of LSR on one window: the fit and the residual sums."""
    fit = lsr_fit(lsr_gram_sums(planes, pan))
    return fit, lsr_residual_sums(planes, pan, fit)


def lsr(fused: np.ndarray, pan: np.ndarray, *, block_size: int = 32) -> LsrResult:
    """The regression behind D_s_R (the code's ``LSR``): PAN regressed on the fused bands.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image (PAN scale), DN.
    pan : ndarray, shape (H, W)
        PAN, DN.
    block_size : int, default 32
        S; the local map uses :func:`lsr_window` windows (31 for 32).

    Returns
    -------
    LsrResult

    Notes
    -----
    The regression is global (all pixels), at PAN scale, without intercept (:func:`lsr_fit`: the
    normal equations of the whole image's sums, as the tile engine adds them up). ``cd`` is not
    ``R^2`` of a model with intercept: the residual's mean is removed by ``var``, not fitted.

    References
    ----------
    Alparone, Garzelli, Vivone, Proc. IGARSS 2018; Arienzo et al., IEEE GRSM 2022,
    doi:10.1109/MGRS.2022.3170092.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fused = rng.uniform(100, 1000, (32, 32, 3))
    >>> r = lsr(fused, fused @ np.array([0.5, 0.3, 0.2]))
    >>> r.weights.round(12).tolist(), round(r.cd, 12)
    ([0.5, 0.3, 0.2], 1.0)
    """
    planes, p, bs = _fused_and_pan(fused, pan, block_size)
    fit, sums = _regression(planes, p)
    var_e, var_p = lsr_variances(sums)
    stack = lsr_residual(planes, p, fit)
    e_sq = sums["residual_sq"] + fit.residual_mean * (2.0 * sums["residual_dev"] + sums["pixels"] * fit.residual_mean)
    return LsrResult(weights=fit.weights, residual_rms=float(np.sqrt(e_sq / sums["pixels"])), cd=1.0 - var_e / var_p,
                     cd_map=lsr_cd_map(stack, lsr_window(bs)), var_pan=var_p, residual=stack[0])


def d_s_r(fused: np.ndarray, pan: np.ndarray, *, block_size: int = 32,
          return_map: bool = False) -> float | tuple[float, np.ndarray]:
    """Regression-based spatial distortion D_s_R (the code's ``D_s_R``): ``1 - cd`` of :func:`lsr`.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image (PAN scale), DN.
    pan : ndarray, shape (H, W)
        PAN, DN.
    block_size : int, default 32
        S (the map's window is :func:`lsr_window`).
    return_map : bool
        Also return the (H, W) map ``1 - cd_map`` (PAN grid, in [0, 1]).

    Returns
    -------
    float or (float, ndarray)
        D_s_R = ``var(P - F w) / var(P)``: 0 when the PAN is a linear combination of the fused
        bands. The scalar is global, not the mean of the map.

    References
    ----------
    Alparone, Garzelli, Vivone, Proc. IGARSS 2018; Arienzo et al., IEEE GRSM 2022,
    doi:10.1109/MGRS.2022.3170092.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> fused = rng.uniform(100, 1000, (32, 32, 4))
    >>> pan = fused.mean(axis=2) + rng.normal(0, 10, (32, 32))
    >>> value, dmap = d_s_r(fused, pan, return_map=True)
    >>> 0 < value < 0.1, dmap.shape
    (True, (32, 32))
    """
    value, dmap = _d_s_r(fused, pan, block_size, with_map=return_map)
    return (value, dmap) if dmap is not None else value


def d_s_r_map(residual_and_pan: np.ndarray, block_size: int) -> np.ndarray:
    """D_s_R's map ``1 - cd_map`` (the code's) of (2, h, w) planes ``(e, P)`` (:func:`lsr_residual`).

    Examples
    --------
    >>> float(d_s_r_map(np.stack([np.zeros((8, 8)), np.arange(64.0).reshape(8, 8)]), 4).max())
    0.0
    """
    return 1.0 - lsr_cd_map(residual_and_pan, lsr_window(block_size))


def _d_s_r(fused: object, pan: object, block_size: object, *, with_map: bool) -> tuple[float, np.ndarray | None]:
    """D_s_R and, if asked, its map."""
    planes, p, bs = _fused_and_pan(fused, pan, block_size)
    fit, sums = _regression(planes, p)
    return d_s_r_from_sums(sums), d_s_r_map(lsr_residual(planes, p, fit), bs) if with_map else None


# --------------------------------------------------------------------------- D_lambda_F and block maps


def d_lambda_f(fused: np.ndarray, ms_exp: np.ndarray, *, gnyq: tuple[float, ...], ratio: int,
               block_size: int = 32, return_map: bool = False) -> float | tuple[float, np.ndarray]:
    """Khan's spectral distortion as the GRSM 2022 code names it (``D_lambda_F``) = D_lambda_K.

    ``1 - Q2n(EXP, MTF(F))``: the fused bands filtered with the sensor's MTF (not decimated) against
    the EXP-upsampled MS, on non-overlapping ``block_size`` blocks (uint16 cast: DN data).

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image, DN; H and W multiples of ``block_size`` (the code refuses other sizes).
    ms_exp : ndarray, shape (H, W, B)
        The EXP-upsampled MS (``interp23tap``), DN.
    gnyq : tuple of float
        Per-band MS MTF gains at Nyquist (the sensor's, e.g. ``Sensor.gnyq``).
    ratio : int
    block_size : int, default 32
    return_map : bool
        Also return the (H/S, W/S) block map ``1 - q`` (the code's ``Dl_map``).

    Returns
    -------
    float or (float, ndarray)
        D_lambda_F = 1 - mean of the block values (equal to :func:`pansharp_iqa.d_lambda_k`).

    References
    ----------
    Khan et al., IEEE TGRS 47(11), 2009, doi:10.1109/TGRS.2009.2029094; Arienzo et al., IEEE GRSM
    2022, doi:10.1109/MGRS.2022.3170092.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> ms = np.random.default_rng(0).integers(100, 2000, (16, 24, 4)).astype(float)
    >>> exp = interp23tap(ms, 4)
    >>> value, dmap = d_lambda_f(exp, exp, gnyq=(0.3,) * 4, ratio=4, return_map=True)
    >>> 0 <= value <= 1, dmap.shape
    (True, (2, 3))
    """
    value, dmap = _d_lambda_f(fused, ms_exp, gnyq, ratio, block_size)
    return (value, dmap) if return_map else value


def _d_lambda_f(fused: object, ms_exp: object, gnyq: tuple[float, ...], ratio: int,
                block_size: object) -> tuple[float, np.ndarray]:
    """D_lambda_F and its block map."""
    bs = check_block_size(block_size)
    img, exp = as_image("fused", fused), as_image("ms_exp", ms_exp)
    if img.shape != exp.shape:
        raise ShapeError(f"fused {img.shape} and ms_exp {exp.shape} must have the same shape")
    if len(gnyq) != img.shape[2]:
        raise ShapeError(f"gnyq has {len(gnyq)} values for {img.shape[2]} bands")
    check_multiple_of("fused", img.shape, bs, why="D_lambda_F's blocks")
    planes = np.ascontiguousarray(np.moveaxis(img, 2, 0))
    q = khan_q2n_blocks(StripImage(exp), StripImage(filter_planes(planes, [mtf_kernel(g, ratio) for g in gnyq]),
                                                     bands_first=True), bs)
    return d_lambda_k_from_sums(float(q.sum()), int(q.size)), 1.0 - q


def qnr_block_maps(fused: np.ndarray, ms_exp: np.ndarray, pan: np.ndarray, *, low_pan: np.ndarray,
                   block_size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """Block maps of QNR's D_lambda and D_s as the code's ``D_lambda_Q`` and ``D_s_Q`` return them.

    Per ``block_size`` block: D_lambda = mean over band pairs ``i < j`` of
    ``|Q(F_i, F_j) - Q(EXP_i, EXP_j)|``; D_s = mean over bands of ``|Q(F_b, PAN) - Q(EXP_b, low_pan)|``
    (block UIQI with sample covariances; exponents p = q = 1). The codes' scalars are
    ``|mean Q_fused - mean Q_ref|`` averaged over pairs (bands), not the mean of these maps
    (:func:`pansharp_iqa.d_lambda`, :func:`pansharp_iqa.d_s` give them).

    Parameters
    ----------
    fused, ms_exp : ndarray, shape (H, W, B)
        Fused image and EXP-upsampled MS, DN; H, W multiples of ``block_size``.
    pan : ndarray, shape (H, W)
    low_pan : ndarray, shape (H, W)
        D_s's low-pass PAN; the code's: ``interp23tap(imresize(pan, 1/ratio), ratio)``.
    block_size : int, default 32

    Returns
    -------
    (ndarray, ndarray)
        D_lambda and D_s block maps, each (H/S, W/S); NaN on constant blocks (0/0, as MATLAB).

    References
    ----------
    Alparone et al., PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193; Arienzo et al., IEEE GRSM 2022,
    doi:10.1109/MGRS.2022.3170092.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> exp = rng.uniform(100, 1000, (32, 64, 3))
    >>> pan = exp.mean(axis=2)
    >>> dl, ds = qnr_block_maps(exp, exp, pan, low_pan=pan)
    >>> dl.shape, float(abs(dl).max()), float(abs(ds).max())
    ((1, 2), 0.0, 0.0)
    """
    bs = check_block_size(block_size)
    img, p = image_and_pan("fused", fused, "pan", pan)
    exp, lp = image_and_pan("ms_exp", ms_exp, "low_pan", low_pan)
    if img.shape != exp.shape:
        raise ShapeError(f"fused {img.shape} and ms_exp {exp.shape} must have the same shape")
    check_multiple_of("fused", img.shape, bs, why="the QNR blocks")
    if img.shape[2] < 2:
        raise ShapeError("fused: the D_lambda map needs at least 2 bands (it compares band pairs)")
    blocks: dict[str, np.ndarray] = {}
    block_uiqi_sums(np.moveaxis(img, 2, 0), p[None], np.moveaxis(exp, 2, 0), lp[None], bs, 1, blocks=blocks)
    return d_lambda_block_map(blocks), d_s_block_map(blocks)


# --------------------------------------------------------------------------- composition on the PAN grid


def to_pan_grid(block_map: np.ndarray, *, block_size: int = 32, rows: tuple[int, int] | None = None,
                cols: tuple[int, int] | None = None) -> np.ndarray:
    """A block map enlarged to the PAN grid as the code does: MATLAB ``imresize(map, [H W], 'cubic')``.

    Keys' cubic (a = -0.5), enlarging by ``block_size`` on both axes (no antialiasing applies),
    samples outside the map mirrored with the edge repeated; the result is not clipped (it may
    overshoot the map's range). A window of it (``rows``, ``cols``: PAN-grid ranges) is computed
    from the taps of its own rows and columns only (the same numbers as the whole result's window).

    Parameters
    ----------
    block_map : ndarray, shape (h, w)
    block_size : int, default 32
    rows, cols : (int, int), optional
        The window of the PAN grid to compute (default: all of it).

    Returns
    -------
    ndarray, shape (h * block_size, w * block_size), or the window's

    Examples
    --------
    >>> m = np.arange(6.0).reshape(2, 3)
    >>> whole = to_pan_grid(m, block_size=4)
    >>> whole.shape, bool(np.array_equal(to_pan_grid(m, block_size=4, rows=(2, 5), cols=(4, 12)), whole[2:5, 4:12]))
    ((8, 12), True)
    """
    m = np.asarray(block_map, dtype=np.float64)
    if m.ndim != 2:
        raise ShapeError(f"block_map: expected a 2-D map, got shape {m.shape}")
    bs = float(check_block_size(block_size, minimum=1))
    (r0, r1), (c0, c1) = rows or (0, m.shape[0] * int(bs)), cols or (0, m.shape[1] * int(bs))
    tmp = resize_matrix(m.shape[0], bs)[r0:r1] @ m  # rows first, as imresize
    return np.ascontiguousarray((resize_matrix(m.shape[1], bs)[c0:c1] @ tmp.T).T)


def qnr_like(d_lambda: float | np.ndarray, d_s: float | np.ndarray, *, alpha: float = 1.0,
             beta: float = 1.0) -> float | np.ndarray:
    """``(1 - D_lambda)^alpha (1 - D_s)^beta``, the code's composition of QNR, HQNR, FQNR and RQNR.

    Elementwise on maps. Where a base is negative and its exponent not an integer (possible on
    resized maps, which are not clipped), MATLAB's result is complex; this returns NaN there.

    Parameters
    ----------
    d_lambda, d_s : float or ndarray
        Spectral and spatial distortions (broadcast together).
    alpha, beta : float, default 1
        Exponents (``QNR_LIKE_EXPONENTS`` holds the code's tables).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(qnr_like(0.1, 0.2), 12), round(qnr_like(0.1, 0.2, alpha=2.0), 12)
    (0.72, 0.648)
    """
    a, b = 1.0 - np.asarray(d_lambda, dtype=np.float64), 1.0 - np.asarray(d_s, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = (a if alpha == 1.0 else np.power(a, alpha)) * (b if beta == 1.0 else np.power(b, beta))
    return float(out) if out.ndim == 0 else out


def rqnr_map(dl_f_block: np.ndarray, ds_r_map: np.ndarray, *, block_size: int = 32, alpha: float = 1.0,
             beta: float = 1.0) -> np.ndarray:
    """RQNR's map (the code's ``RQNR_map``): D_lambda_F's block map on the PAN grid, with D_s_R's map.

    Parameters
    ----------
    dl_f_block : ndarray, shape (H/S, W/S)
        :func:`d_lambda_f`'s block map.
    ds_r_map : ndarray, shape (H, W)
        :func:`d_s_r`'s map.
    block_size : int, default 32
    alpha, beta : float, default 1

    Returns
    -------
    ndarray, shape (H, W)

    Examples
    --------
    >>> float(rqnr_map(np.zeros((1, 1)), np.full((4, 4), 0.5), block_size=4)[0, 0])
    0.5
    """
    dl = to_pan_grid(dl_f_block, block_size=block_size)
    ds = np.asarray(ds_r_map, dtype=np.float64)
    if dl.shape != ds.shape:
        raise ShapeError(f"ds_r_map {ds.shape} must be the block map {np.shape(dl_f_block)} times block_size "
                         f"{block_size} = {dl.shape}")
    return np.asarray(qnr_like(dl, ds, alpha=alpha, beta=beta))


def hqnr_map(dl_f_block: np.ndarray, ds_q_block: np.ndarray, *, block_size: int = 32, alpha: float = 1.0,
             beta: float = 1.0) -> np.ndarray:
    """HQNR's map (the code's map version of ``HQNR``): both block maps enlarged to the PAN grid, composed.

    Parameters
    ----------
    dl_f_block : ndarray, shape (H/S, W/S)
        :func:`d_lambda_f`'s block map.
    ds_q_block : ndarray, shape (H/S, W/S)
        QNR's D_s block map (:func:`qnr_block_maps`).
    block_size : int, default 32
    alpha, beta : float, default 1

    Returns
    -------
    ndarray, shape (H, W)

    Examples
    --------
    >>> float(hqnr_map(np.zeros((1, 1)), np.full((1, 1), 0.5), block_size=4).max())
    0.5
    """
    if np.shape(dl_f_block) != np.shape(ds_q_block):
        raise ShapeError(f"dl_f_block {np.shape(dl_f_block)} and ds_q_block {np.shape(ds_q_block)} differ")
    return np.asarray(qnr_like(to_pan_grid(dl_f_block, block_size=block_size),
                               to_pan_grid(ds_q_block, block_size=block_size), alpha=alpha, beta=beta))


def rqnr(fused: np.ndarray, ms_exp: np.ndarray, pan: np.ndarray, *, gnyq: tuple[float, ...], ratio: int,
         block_size: int = 32, alpha: float = 1.0, beta: float = 1.0,
         return_map: bool = False) -> float | tuple[float, np.ndarray]:
    """Regression-based QNR (the code's ``RQNR``): ``(1 - D_lambda_F)^alpha (1 - D_s_R)^beta``.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B)
        Fused image, DN; H, W multiples of ``block_size``.
    ms_exp : ndarray, shape (H, W, B)
        The EXP-upsampled MS, DN.
    pan : ndarray, shape (H, W)
    gnyq : tuple of float
        The sensor's per-band MS MTF gains at Nyquist (D_lambda_F).
    ratio : int
    block_size : int, default 32
    alpha, beta : float, default 1
        The code's callers pass ``get_alpha_beta('RQNR', case)``: (1, 1) "unitary", (1.81, 0.90)
        "overall" (:data:`QNR_LIKE_EXPONENTS`).
    return_map : bool
        Also return the (H, W) map (:func:`rqnr_map`).

    Returns
    -------
    float or (float, ndarray)
        In [0, 1]; 1 = best.

    References
    ----------
    Arienzo et al., IEEE GRSM 2022, doi:10.1109/MGRS.2022.3170092; Alparone, Garzelli, Vivone,
    Proc. IGARSS 2018.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> exp = interp23tap(ms, 4)
    >>> 0 < rqnr(exp, exp, pan, gnyq=(0.3,) * ms.shape[2], ratio=4) < 1
    True
    """
    dl, dl_block = _d_lambda_f(fused, ms_exp, gnyq, ratio, block_size)
    ds, ds_map = _d_s_r(fused, pan, block_size, with_map=return_map)
    value = float(qnr_like(dl, ds, alpha=alpha, beta=beta))
    if ds_map is None:
        return value
    return value, rqnr_map(dl_block, ds_map, block_size=int(block_size), alpha=alpha, beta=beta)

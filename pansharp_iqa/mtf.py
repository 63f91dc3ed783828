"""MTF-matched Gaussian filters, designed exactly as the reference toolbox does.

The filter of each band is a Gaussian frequency response whose gain at the MS Nyquist frequency
equals the sensor's GNyq, turned into a 41x41 FIR kernel by MATLAB's ``fwind1`` (frequency
sampling ``fsamp2`` times a circularly symmetric window built from a 1-D Kaiser window, beta 0.5).
The kernel is not renormalised (sum about 0.998-0.999), as in the toolbox. The hyperspectral and
Sentinel-2 toolboxes (Ciotola et al. 2024, 2025) design the same kernel and differ only in its
post-processing, which are named options here: negative taps clipped and the kernel renormalised to
sum 1 (Sentinel-2, except at ratio 6: a protocol setting, :class:`MtfKernelSettings`) and the taps
rounded to float32 (both: their code casts the kernel to a float32 convolution weight).

References
----------
Aiazzi et al., "MTF-tailored multiscale fusion of high-resolution MS and Pan imagery", PE&RS 72(5),
2006. Vivone et al., "A New Benchmark Based on Recent Advances in Multispectral Pansharpening",
IEEE GRSM 9(1), 2021, doi:10.1109/MGRS.2020.3019315 (toolbox 2020, ``genMTF``/``MTF``).
Vivone et al., IEEE TGRS 53(5), 2015, doi:10.1109/TGRS.2014.2361734 (2015 sigma form).
Ciotola et al., "Hyperspectral Pansharpening: Critical Review, Tools and Future Perspectives", arXiv
2407.01355, 2024 (HS code ``Utils/spectral_tools.py``). Ciotola et al., Remote Sensing 17(12):1983,
2025, doi:10.3390/rs17121983 (Sentinel-2 code, same file).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Literal

import cv2
import numpy as np

from .parallel import map_bands
from .sensors import Sensor, resolve_sensor
from .validation import SettingError, ShapeError, check_choice, check_gnyq, check_kernel_size, check_ratio

__all__ = [
    "mtf_kernel", "mtf_filter", "mtf_filter_sensor", "filter_replicate", "filter_planes", "correlate_valid",
    "MtfKernelSettings", "TOOLBOX_KERNEL", "HS_KERNEL", "S2_KERNEL",
]

SigmaForm = Literal["2020", "2015"]
#: Post-processing of the windowed kernel: none (toolbox, hyperspectral code) or negative taps set to
#: 0 and the kernel divided by its sum (Sentinel-2 code at ratios other than 6, FR-FUSE).
Normalise = Literal["none", "clip-renormalise"]
#: Precision of the taps: float64 (toolbox) or rounded to float32 (the HS/S2 code's conv weights).
TapPrecision = Literal["float64", "float32"]


def _fspecial_gaussian(n: int, sigma: float) -> np.ndarray:
    half = (n - 1) / 2.0
    x = np.arange(-half, half + 1.0)
    arg = -(x[None, :] ** 2 + x[:, None] ** 2) / (2.0 * sigma * sigma)
    h = np.exp(arg)
    h[h < np.finfo(np.float64).eps * h.max()] = 0.0
    total = h.sum()
    return h / total if total != 0 else h


def _fsamp2(hd: np.ndarray) -> np.ndarray:
    return np.fft.fftshift(np.fft.ifft2(np.rot90(np.fft.fftshift(np.rot90(hd, 2)), 2)))


def _circular_window(n: int, beta: float = 0.5) -> np.ndarray:
    w1 = np.kaiser(n, beta)
    t = np.arange(-(n - 1) / 2.0, (n - 1) / 2.0 + 1.0) * (2.0 / (n - 1))
    t12 = np.sqrt(t[None, :] ** 2 + t[:, None] ** 2)
    outside = (t12 < t[0]) | (t12 > t[-1])
    w = np.interp(np.where(outside, 0.0, t12), t, w1)
    w[outside] = 0.0
    return w


@functools.lru_cache(maxsize=256)
def _kernel_cached(gnyq: float, ratio: int, size: int, sigma_form: str) -> np.ndarray:
    fcut = 1.0 / ratio
    span = (size - 1) if sigma_form == "2020" else size
    alpha = np.sqrt((span * (fcut / 2.0)) ** 2 / (-2.0 * np.log(gnyq)))
    gauss = _fspecial_gaussian(size, alpha)
    hd = gauss / gauss.max()
    h = np.real(_fsamp2(hd) * _circular_window(size))
    h.setflags(write=False)
    return h


@functools.lru_cache(maxsize=256)
def _post_processed(gnyq: float, ratio: int, size: int, sigma_form: str, normalise: str, taps: str) -> np.ndarray:
    h = _kernel_cached(gnyq, ratio, size, sigma_form)
    if normalise == "clip-renormalise":
        h = np.maximum(h, 0.0)
        h = h / h.sum()
    if taps == "float32":
        h = h.astype(np.float32).astype(np.float64)
    h.setflags(write=False)
    return h


def mtf_kernel(gnyq: float, ratio: int, size: int = 41, *, sigma_form: SigmaForm = "2020",
               normalise: Normalise = "none", tap_precision: TapPrecision = "float64") -> np.ndarray:
    """FIR kernel of the MTF-matched Gaussian low-pass filter (toolbox ``genMTF``).

    Parameters
    ----------
    gnyq : float
        MTF gain at the MS Nyquist frequency, in (0, 1) (dimensionless).
    ratio : int
        PAN/MS resolution ratio; the cut-off is ``1/ratio`` of the PAN sampling frequency.
    size : int, default 41
        Kernel side in pixels (odd).
    sigma_form : {"2020", "2015"}, default "2020"
        ``alpha = sqrt(((N-1) fcut/2)^2 / (-2 ln GNyq))`` (2020 toolbox) or with ``N`` instead of
        ``N-1`` (2015 toolbox).
    normalise : {"none", "clip-renormalise"}, default "none"
        ``"none"``: the windowed kernel as designed (toolbox; hyperspectral code at every ratio;
        Sentinel-2 code at ratio 6). ``"clip-renormalise"``: negative taps set to 0, then the
        kernel divided by its sum (Sentinel-2 code at other ratios; FR-FUSE).
    tap_precision : {"float64", "float32"}, default "float64"
        ``"float32"``: taps rounded to float32 (returned as float64), as the HS/S2 code's float32
        convolution weights, which it casts back to the image's float64.

    Returns
    -------
    ndarray, shape (size, size), float64, read-only
        Correlation kernel; with ``normalise="none"`` its sum is slightly below 1 (0.9972 at ratio 6,
        GNyq 0.3).

    References
    ----------
    Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315; Ciotola et al., arXiv 2407.01355
    (2024) and Remote Sensing 17(12):1983 (2025), doi:10.3390/rs17121983.

    Examples
    --------
    >>> round(float(mtf_kernel(0.3, 6).sum()), 5)
    0.99719
    >>> round(float(mtf_kernel(0.3, 2, normalise="clip-renormalise").sum()), 12)
    1.0
    """
    gnyq = check_gnyq(gnyq)
    ratio = check_ratio(ratio, exp=False)
    size = check_kernel_size(size)
    check_choice("sigma_form", sigma_form, ("2020", "2015"))
    check_choice("normalise", normalise, ("none", "clip-renormalise"))
    check_choice("tap_precision", tap_precision, ("float64", "float32"))
    if normalise == "none" and tap_precision == "float64":
        return _kernel_cached(gnyq, ratio, size, sigma_form)
    return _post_processed(gnyq, ratio, size, sigma_form, normalise, tap_precision)


@dataclasses.dataclass(frozen=True)
class MtfKernelSettings:
    """How a protocol designs its MTF kernels (data a protocol records; :func:`mtf_kernel`'s options).

    Parameters
    ----------
    size : int
        Kernel side N (taps, odd).
    sigma_form : {"2020", "2015"}
        Gaussian width with N-1 or N.
    normalise : {"none", "clip-renormalise"}
        Post-processing at every ratio except those in ``raw_at_ratios``.
    raw_at_ratios : tuple of int
        Ratios at which the kernel is used raw whatever ``normalise`` says (the Sentinel-2 code's
        ratio-6 exception, "TO DO: Delete for HyperSpectral").
    tap_precision : {"float64", "float32"}
        Precision of the taps.

    Examples
    --------
    >>> S2_KERNEL.normalise_at(2), S2_KERNEL.normalise_at(6)
    ('clip-renormalise', 'none')
    >>> round(float(S2_KERNEL.kernel(0.3175, 6).sum()), 6)
    0.997319
    """

    size: int = 41
    sigma_form: SigmaForm = "2020"
    normalise: Normalise = "none"
    raw_at_ratios: tuple[int, ...] = ()
    tap_precision: TapPrecision = "float64"

    def __post_init__(self) -> None:
        check_kernel_size(self.size)
        check_choice("sigma_form", self.sigma_form, ("2020", "2015"))
        check_choice("normalise", self.normalise, ("none", "clip-renormalise"))
        check_choice("tap_precision", self.tap_precision, ("float64", "float32"))
        object.__setattr__(self, "raw_at_ratios", tuple(int(r) for r in self.raw_at_ratios))

    def normalise_at(self, ratio: int) -> Normalise:
        """The post-processing applied at ``ratio``.

        Parameters
        ----------
        ratio : int
            PAN/MS resolution ratio.

        Returns
        -------
        {"none", "clip-renormalise"}
            ``"none"`` at the ratios of ``raw_at_ratios``, else ``normalise``.
        """
        return "none" if int(ratio) in self.raw_at_ratios else self.normalise

    def kernel(self, gnyq: float, ratio: int) -> np.ndarray:
        """The kernel of one band (:func:`mtf_kernel` with these settings).

        Parameters
        ----------
        gnyq : float
            MTF gain at the MS Nyquist frequency, in (0, 1) (dimensionless).
        ratio : int
            PAN/MS resolution ratio.

        Returns
        -------
        ndarray, shape (size, size), float64, read-only
            Correlation kernel.
        """
        return mtf_kernel(gnyq, ratio, self.size, sigma_form=self.sigma_form, normalise=self.normalise_at(ratio),
                          tap_precision=self.tap_precision)

    def filter(self, image: np.ndarray, gnyq: float | Sequence[float], ratio: int) -> np.ndarray:
        """:func:`mtf_filter` with these settings.

        Parameters
        ----------
        image : ndarray, shape (H, W) or (H, W, B)
            Any real dtype; not modified.
        gnyq : float or sequence of float
            MTF gain at the MS Nyquist frequency (dimensionless): one for all bands, or one per band.
        ratio : int
            PAN/MS resolution ratio.

        Returns
        -------
        ndarray, same shape as ``image``, float64
            Each band correlated with its kernel, edges replicated (``imfilter(band, h, 'replicate')``).

        Examples
        --------
        >>> x = np.full((64, 64, 2), 100.0)
        >>> y = HS_KERNEL.filter(x, [0.3, 0.35], 4)
        >>> y.shape, bool(np.allclose(y, 100 * np.array([HS_KERNEL.kernel(g, 4).sum() for g in (0.3, 0.35)])))
        ((64, 64, 2), True)
        """
        return mtf_filter(image, gnyq, ratio, size=self.size, sigma_form=self.sigma_form,
                          normalise=self.normalise_at(ratio), tap_precision=self.tap_precision)

    def to_dict(self) -> dict[str, object]:
        """JSON-serialisable settings (for provenance cards)."""
        return {"size": self.size, "sigma_form": self.sigma_form, "normalise": self.normalise,
                "raw_at_ratios": list(self.raw_at_ratios), "tap_precision": self.tap_precision}


#: The 2020/2015 toolboxes' kernels (``genMTF``): raw, float64 taps.
TOOLBOX_KERNEL = MtfKernelSettings()
#: The hyperspectral toolbox's kernels (Ciotola et al. 2024): raw at every ratio, float32 taps.
HS_KERNEL = MtfKernelSettings(tap_precision="float32")
#: The Sentinel-2 toolbox's kernels (Ciotola et al. 2025): clipped and renormalised except at
#: ratio 6 (raw), float32 taps.
S2_KERNEL = MtfKernelSettings(normalise="clip-renormalise", raw_at_ratios=(6,), tap_precision="float32")


#: Target side of :func:`correlate_valid`'s DFT blocks (about 10 ns a sample for sides of 240 to 600,
#: ``docs/performance.md``).
DFT_BLOCK = 320


@functools.lru_cache(maxsize=64)
def _spectrum(kernel: bytes, shape: tuple[int, int], size: tuple[int, int]) -> np.ndarray:
    """OpenCV's packed real DFT of a kernel zero-padded to ``size``."""
    padded = np.zeros(size)
    padded[: shape[0], : shape[1]] = np.frombuffer(kernel).reshape(shape)
    return cv2.dft(padded)


def _blocks(n: int, taps: int) -> tuple[int, int]:
    """Outputs per block and DFT length along an axis: about ``DFT_BLOCK`` long, equal blocks."""
    parts = -(-n // (DFT_BLOCK - taps + 1))
    size = cv2.getOptimalDFTSize(-(-n // parts) + taps - 1)
    return size - taps + 1, size


def correlate_valid(image: np.ndarray, kernel: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """2-D correlation where the kernel lies inside the image: ``out[i, j] = sum kernel[a, b] image[i + a, j + b]``.

    By blocks of about ``DFT_BLOCK`` squared samples: each block's real DFT times the kernel's conjugate
    spectrum (cached), transformed back (OpenCV's ``dft``), within rounding (about 1e-15 of the image's
    maximum) of a direct sum. Hand-written for a measured need: OpenCV's ``filter2D`` takes 9 DFTs of
    256 squared samples for a 512-pixel tile's MTF where 4 of 300 suffice, 1.4x the time
    (``docs/performance.md``).

    Parameters
    ----------
    image : ndarray, shape (H, W), float64
        One band, any strides; not modified.
    kernel : ndarray, shape (kh, kw)
        Correlation kernel (not flipped), at most the image's size.
    out : ndarray, shape (H - kh + 1, W - kw + 1), float64, optional
        Destination (written in place and returned).

    Returns
    -------
    ndarray, shape (H - kh + 1, W - kw + 1), float64

    Examples
    --------
    >>> x = np.random.default_rng(0).random((60, 50))
    >>> k = np.random.default_rng(1).random((21, 21))
    >>> direct = [[(x[i : i + 21, j : j + 21] * k).sum() for j in range(30)] for i in range(40)]
    >>> bool(np.allclose(correlate_valid(x, k), direct, rtol=1e-13))
    True
    """
    ker = np.ascontiguousarray(kernel, dtype=np.float64)
    kh, kw = ker.shape
    h, w = image.shape[0] - kh + 1, image.shape[1] - kw + 1
    out = np.empty((h, w)) if out is None else out
    (step_r, size_r), (step_c, size_c) = _blocks(h, kh), _blocks(w, kw)
    spectrum = _spectrum(ker.tobytes(), (kh, kw), (size_r, size_c))
    block = np.zeros((size_r, size_c))  # past a block's samples: zeros or earlier samples, read by no kept output
    rows, cols = list(range(0, h, step_r)), list(range(0, w, step_c))
    rows[-1], cols[-1] = (max(0, min(s[-1], n - size)) if len(s) > 1 else 0  # the last blocks overlap the one before
                          for s, n, size in ((rows, image.shape[0], size_r), (cols, image.shape[1], size_c)))
    for r in rows:
        for c in cols:
            part = image[r : r + size_r, c : c + size_c]
            if part.shape != block.shape:
                block[: part.shape[0], : part.shape[1]] = part
                part = block
            spec = cv2.dft(part)
            cv2.mulSpectrums(spec, spectrum, 0, spec, conjB=True)
            back = cv2.dft(spec, flags=cv2.DFT_INVERSE | cv2.DFT_SCALE | cv2.DFT_REAL_OUTPUT)
            n_r, n_c = min(step_r, h - r), min(step_c, w - c)
            out[r : r + n_r, c : c + n_c] = back[:n_r, :n_c]
    return out


def filter_replicate(band: np.ndarray, kernel: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """2-D correlation, same size, edge-replicate border (MATLAB ``imfilter(I, h, 'replicate')``).

    The band extended by half the kernel (edges repeated), then :func:`correlate_valid`; kernels of
    fewer than 11 x 11 taps by OpenCV's direct ``filter2D`` (faster there).

    Parameters
    ----------
    band : ndarray, shape (H, W)
        One band.
    kernel : ndarray, shape (k, k), k odd
        Correlation kernel (not flipped, as ``imfilter``).
    out : ndarray, shape (H, W), float64, C-contiguous, optional
        Destination.

    Returns
    -------
    ndarray, shape (H, W), float64
    """
    kh, kw = np.shape(kernel)
    src = np.asarray(band, dtype=np.float64)
    if kh * kw < 121:
        out = np.empty(src.shape) if out is None else out
        return cv2.filter2D(np.ascontiguousarray(src), cv2.CV_64F, np.asarray(kernel, dtype=np.float64), dst=out,
                            borderType=cv2.BORDER_REPLICATE)
    return correlate_valid(cv2.copyMakeBorder(src, kh // 2, kh // 2, kw // 2, kw // 2, cv2.BORDER_REPLICATE), kernel,
                           out=out)


def mtf_filter(
    image: np.ndarray,
    gnyq: float | Sequence[float],
    ratio: int,
    *,
    size: int = 41,
    sigma_form: SigmaForm = "2020",
    normalise: Normalise = "none",
    tap_precision: TapPrecision = "float64",
) -> np.ndarray:
    """Filter an image with MTF-matched kernels (toolbox ``MTF``/``MTF_PAN``).

    Parameters
    ----------
    image : ndarray, shape (H, W) or (H, W, B)
        Any real dtype; not modified.
    gnyq : float or sequence of float
        One GNyq for all bands, or one per band.
    ratio : int
        PAN/MS resolution ratio.
    size : int, default 41
        Kernel size.
    sigma_form : {"2020", "2015"}
        See :func:`mtf_kernel`.
    normalise : {"none", "clip-renormalise"}
        See :func:`mtf_kernel`.
    tap_precision : {"float64", "float32"}
        See :func:`mtf_kernel`.

    Returns
    -------
    ndarray, same shape as ``image``, float64
        ``imfilter(band, h_b, 'replicate')`` per band (correlation, same size).
    """
    arr = np.asarray(image, dtype=np.float64)
    if arr.ndim not in (2, 3):
        raise ShapeError(f"image must be (H, W) or (H, W, B), got shape {arr.shape}")
    bands = arr[:, :, None] if arr.ndim == 2 else arr
    n = bands.shape[2]
    # np.isscalar narrows like a TypeGuard, to numpy's scalar union (str, bytes, ...): neither branch is narrowed to
    # what the value is here (a number, else a sequence of numbers)
    gains = [float(gnyq)] * n if np.isscalar(gnyq) else [float(g) for g in gnyq]  # type: ignore[arg-type, union-attr]
    if len(gains) != n:
        raise ShapeError(f"gnyq has {len(gains)} values but the image has {n} bands")
    kernels = [mtf_kernel(g, ratio, size, sigma_form=sigma_form, normalise=normalise, tap_precision=tap_precision)
               for g in gains]
    out = filter_planes(np.ascontiguousarray(np.moveaxis(bands, 2, 0)), kernels)
    return out[0] if arr.ndim == 2 else np.ascontiguousarray(np.moveaxis(out, 0, 2))


def filter_planes(planes: np.ndarray, kernels: Sequence[np.ndarray], *, valid: bool = False) -> np.ndarray:
    """:func:`filter_replicate` of each band plane with its own kernel, bands in threads.

    Parameters
    ----------
    planes : ndarray, shape (B, H, W)
        Band planes (float64 or any real dtype).
    kernels : sequence of ndarray
        One correlation kernel per plane, all of one shape ``(kh, kw)``.
    valid : bool
        :func:`correlate_valid` instead: only the outputs where the kernel lies inside the plane (the planes
        shrink by the kernel's size less one), no border extension.

    Returns
    -------
    ndarray, shape (B, H, W) (or (B, H - kh + 1, W - kw + 1) with ``valid``), float64

    Examples
    --------
    >>> planes = np.ones((2, 30, 30))
    >>> k = [mtf_kernel(0.3, 4, 11), mtf_kernel(0.3, 4, 11)]
    >>> filter_planes(planes, k).shape, filter_planes(planes, k, valid=True).shape
    ((2, 30, 30), (2, 20, 20))
    """
    if len(kernels) != planes.shape[0]:
        raise ShapeError(f"{len(kernels)} kernels for {planes.shape[0]} bands")
    shrink = (kernels[0].shape[0] - 1, kernels[0].shape[1] - 1) if valid and len(kernels) else (0, 0)
    out = np.empty((planes.shape[0], planes.shape[1] - shrink[0], planes.shape[2] - shrink[1]))

    def one(b: int) -> None:
        (correlate_valid if valid else filter_replicate)(planes[b], kernels[b], out=out[b])

    map_bands(one, planes.shape[0])
    return out


def mtf_filter_sensor(
    image: np.ndarray,
    sensor: str | Sensor,
    ratio: int | None = None,
    *,
    pan: bool = False,
    protocol: str | None = None,
    sigma_form: SigmaForm = "2020",
) -> np.ndarray:
    """Filter an MS image (or a PAN with ``pan=True``) with a registered sensor's MTF.

    Parameters
    ----------
    image : ndarray, shape (H, W, B) or (H, W) for the PAN
        The image to filter (DN or any linear scale).
    sensor : str or Sensor
        Registry name (``"WV2"``...) or a :class:`~pansharp_iqa.sensors.Sensor`.
    ratio : int, optional
        Defaults to the sensor's nominal ratio (error for the generic sensor).
    pan : bool
        Use the PAN GNyq instead of the per-band MS values.
    protocol : str, optional
        Protocol name for sensor-file overrides (e.g. the 2015 generic GNyq).
    sigma_form : {"2020", "2015"}
        See :func:`mtf_kernel`.

    Returns
    -------
    ndarray, float64, same shape
    """
    s = resolve_sensor(sensor)
    ratio = ratio if ratio is not None else s.ratio
    if ratio is None:
        raise SettingError(f"ratio is required for sensor {s.name!r} (it has no nominal ratio)")
    arr = np.asarray(image)
    if pan:
        return mtf_filter(arr, s.pan_gnyq_for(protocol=protocol), ratio, sigma_form=sigma_form)
    n = 1 if arr.ndim == 2 else arr.shape[2]
    return mtf_filter(arr, s.gnyq_for(n, protocol=protocol), ratio, sigma_form=sigma_form)

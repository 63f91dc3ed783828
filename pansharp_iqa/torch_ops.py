"""Float64 PyTorch ports of the core's image operators, on batches (N, C, H, W), on any device.

Each function equals one NumPy/OpenCV operator of the core (named in its docstring) with the same
borders and rounding, and runs on the input tensor's device (CPU or CUDA) without a host round
trip: images are never copied to NumPy. Only small tables that are not images (resize taps,
border index maps, MTF kernels designed by :func:`pansharp_iqa.mtf.mtf_kernel`) are built with
NumPy and moved to the device. Batch ``N`` and channels ``C`` are processed together; Python loops
run over filter taps or steps only, never over pixels.

Exactness (measured by ``tests/tensor/test_torch_ops.py``):

* bit-identical to the core: :func:`to_uint16_matlab`, :func:`interp23tap`, :func:`imresize`
  (the same products summed in the same order as OpenCV's direct filter and SciPy's sparse
  product), :func:`sobel` ``"vertical"`` (any data) and ``"magnitude"`` on integer data,
  :func:`window_sums` / :func:`window_square_sums` / :func:`block_raw_moments` on integer data
  (exact sums), :func:`toolbox_blocks` (a gather);
* within rounding: :func:`filter_replicate` (FFT correlation; the core uses OpenCV's DFT, both
  about 1e-15 of the image maximum from a direct sum), :func:`sobel` ``"magnitude"`` on non-integer
  data (1 ulp: OpenCV fuses ``gx*gx + gy*gy`` into an FMA on AVX2 machines),
  :func:`window_sums` on non-integer data (OpenCV's box filter is a running sum whose error grows
  along the image; the windowed sums here do not), :func:`block_centered_moments` (matrix products
  of other BLAS libraries).

Elementwise steps are written as separate tensor operations (never ``alpha=``/``addcmul``
forms), so no fused multiply-add changes the rounding on a GPU either.

References
----------
Vivone et al., "A New Benchmark Based on Recent Advances in Multispectral Pansharpening", IEEE
GRSM 9(1), 2021, doi:10.1109/MGRS.2020.3019315 (the toolbox whose operators the core reproduces).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import torch

from .borders import BorderMode, border_index
from .resample import EXP_HALF_TAPS, SINC3_HALF_TAPS, check_sinc3_size, resize_matrix, sinc3_taps
from .validation import (
    InputError,
    SettingError,
    ShapeError,
    check_block_size,
    check_choice,
    check_ratio,
)

__all__ = [
    "to_uint16_matlab", "interp23tap", "imresize", "filter_replicate", "sobel", "window_sums",
    "window_square_sums", "toolbox_blocks", "block_raw_moments", "block_centered_moments",
]

# the largest double below 0.5 (see pansharp_iqa.indexes.q2n.to_uint16_matlab)
_HALF_BELOW = float(np.nextafter(0.5, 0.0))
# the 12 polyphase taps c6..c1 c1..c6 of the 23-tap EXP filter (odd distances from the centre)
_POLYPHASE = [float(v) for v in np.concatenate([EXP_HALF_TAPS[1::2][::-1], EXP_HALF_TAPS[1::2]])]


def _float64(x: torch.Tensor, name: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise InputError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.is_complex():
        raise InputError(f"{name} must be real, got dtype {x.dtype}")
    return x.to(torch.float64)


def _batch(x: torch.Tensor, name: str = "x") -> torch.Tensor:
    """``x`` as a float64 (N, C, H, W) tensor on its device (no copy when it already is one)."""
    x = _float64(x, name)
    if x.ndim != 4:
        raise ShapeError(f"{name} must be a batch (N, C, H, W), got shape {tuple(x.shape)}")
    return x


def _take(x: torch.Tensor, dim: int, idx: np.ndarray) -> torch.Tensor:
    """``x`` at positions ``idx`` along ``dim`` (advanced indexing: PyTorch's CPU ``index_select``
    on an inner dimension is much slower, ``docs/performance.md``)."""
    key: list[slice | torch.Tensor] = [slice(None)] * x.ndim
    key[dim] = torch.as_tensor(idx, device=x.device)
    return x[tuple(key)]


def _extend(x: torch.Tensor, dim: int, before: int, after: int, mode: BorderMode) -> torch.Tensor:
    """``x`` extended along ``dim`` by ``before``/``after`` samples under a border rule."""
    if before == 0 and after == 0:
        return x
    n = x.shape[dim]
    parts = [x]
    if before:
        parts.insert(0, _take(x, dim, border_index(np.arange(-before, 0), n, mode)))
    if after:
        parts.append(_take(x, dim, border_index(np.arange(n, n + after), n, mode)))
    return torch.cat(parts, dim)


# Operators made of one pass over the data per filter tap run on the CPU on groups of planes of
# about this many elements (input or output planes, the larger), whose passes stay in the caches
# (the measured range is in docs/performance.md);
# on other devices on the whole batch.
_CPU_GROUP_ELEMENTS = 1 << 19


def _by_plane_groups(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                     out_hw: tuple[int, int]) -> torch.Tensor:
    """``fn`` ((k, 1, H, W) -> (k, 1, H', W')) on the planes of a (N, C, H, W) batch, in groups."""
    n, c, h, w = x.shape
    per = max(1, _CPU_GROUP_ELEMENTS // max(h * w, out_hw[0] * out_hw[1]))
    if x.device.type != "cpu" or per >= n * c:
        return fn(x.reshape(n * c, 1, h, w)).reshape(n, c, *out_hw).contiguous()
    planes = x.reshape(n * c, 1, h, w)
    out = torch.empty((n * c, 1) + out_hw, dtype=torch.float64, device=x.device)
    for i in range(0, n * c, per):
        out[i : i + per] = fn(planes[i : i + per])
    return out.view(n, c, *out_hw)


def to_uint16_matlab(x: torch.Tensor) -> torch.Tensor:
    """MATLAB's ``uint16(x)`` on doubles: round half away from zero, saturate to [0, 65535]."""
    return torch.add(_float64(x, "x"), _HALF_BELOW).floor_().clamp_(0.0, 65535.0)


def _rolled_product(x: torch.Tensor, dim: int, shift: int, c: float, out: torch.Tensor) -> torch.Tensor:
    """``out[i] = c * x[(i + shift) mod n]`` along ``dim`` (circular indexing without a padded copy)."""
    n = x.shape[dim]
    o = shift % n
    torch.mul(x.narrow(dim, o, n - o), c, out=out.narrow(dim, 0, n - o))
    if o:
        torch.mul(x.narrow(dim, 0, o), c, out=out.narrow(dim, n - o, o))
    return out


def _upsample2(x: torch.Tensor, dim: int, samples_at_odd: bool) -> torch.Tensor:
    """One x2 EXP step along ``dim`` (2 or 3): zero-stuffing and circular 23-tap filtering."""
    n = x.shape[dim]
    # tap j reads old sample i + j - 6 (odd phase) or i + j - 5 (even phase), wrapped around
    first = -6 if samples_at_odd else -5
    d = _rolled_product(x, dim, first, _POLYPHASE[0], torch.empty(x.shape, dtype=torch.float64, device=x.device))
    tmp = torch.empty_like(d)  # products into one buffer, sums in place: no allocation per tap
    for j in range(1, len(_POLYPHASE)):
        d.add_(_rolled_product(x, dim, first + j, _POLYPHASE[j], tmp))
    shape = list(x.shape)
    shape[dim : dim + 1] = [n, 2]
    out = torch.empty(shape, dtype=torch.float64, device=x.device)
    keep, new = (1, 0) if samples_at_odd else (0, 1)  # new samples at even / odd positions
    out.select(dim + 1, keep).copy_(x)
    out.select(dim + 1, new).copy_(d)
    return out.flatten(dim, dim + 1)


def _sinc3(x: torch.Tensor, dim: int, taps: tuple[np.ndarray, np.ndarray]) -> torch.Tensor:
    """The x3 sinc step along ``dim`` (``resample._sinc3_axis0``: same taps, same order of the sums)."""
    n = x.shape[dim]
    ext = _extend(x, dim, SINC3_HALF_TAPS + 1, SINC3_HALF_TAPS, "symmetric")
    parts = []
    for h, first in ((taps[1], 0), (taps[0], 1)):  # 3k: h2; 3k + 2: h1
        acc = ext.narrow(dim, first, n) * float(h[0])
        for t in range(1, h.size):
            acc.add_(ext.narrow(dim, first + t, n) * float(h[t]))
        parts.append(acc)
    return torch.stack([parts[0], x, parts[1]], dim + 1).flatten(dim, dim + 1)


def interp23tap(x: torch.Tensor, ratio: int, *, sinc_taps: str = "float32") -> torch.Tensor:
    """Upsample a batch by ``ratio`` with the toolbox's 23-tap EXP interpolator (ratio 6: the
    hyperspectral/Sentinel-2 toolboxes' sinc x3 then one 23-tap x2 step, ``resample.interp23tap``)."""
    ratio = check_ratio(ratio, exp=True)
    x = _batch(x)
    if ratio == 6:
        check_sinc3_size(tuple(x.shape[2:]))
        taps = sinc3_taps(precision=check_choice("sinc_taps", sinc_taps, ("float32", "float64")))

        def steps6(out: torch.Tensor) -> torch.Tensor:
            out = _sinc3(_sinc3(out, 3, taps), 2, taps)  # columns index first, then rows
            return _upsample2(_upsample2(out, 2, samples_at_odd=True), 3, samples_at_odd=True)

        return _by_plane_groups(steps6, x, (x.shape[2] * 6, x.shape[3] * 6))

    def steps(out: torch.Tensor) -> torch.Tensor:
        for step in range(ratio.bit_length() - 1):
            out = _upsample2(out, 2, samples_at_odd=step == 0)
            out = _upsample2(out, 3, samples_at_odd=step == 0)
        return out

    return _by_plane_groups(steps, x, (x.shape[2] * ratio, x.shape[3] * ratio))


@functools.lru_cache(maxsize=64)
def _resize_taps(in_len: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Taps of MATLAB's bicubic ``imresize`` along one axis: (out_len, T) indices and weights."""
    mat = resize_matrix(in_len, float(scale))
    out_len = mat.shape[0]
    counts = np.diff(mat.indptr)
    t = int(counts.max())
    index = np.zeros((out_len, t), dtype=np.int64)
    weight = np.zeros((out_len, t))
    pos = np.arange(t)[None, :] < counts[:, None]
    index[pos], weight[pos] = mat.indices, mat.data  # row-major fill keeps each row's stored order
    return index, weight


def _resize_leading(x: torch.Tensor, scale: float) -> torch.Tensor:
    """``x`` resized along its first axis: ``out[i] = sum_t w[i, t] x[idx[i, t]]``, in tap order."""
    index, weight = _resize_taps(x.shape[0], scale)
    idx = torch.as_tensor(index, device=x.device)
    w = torch.as_tensor(weight, device=x.device).reshape(index.shape + (1,) * (x.ndim - 1))
    out = x[idx[:, 0]].mul_(w[:, 0])
    for t in range(1, index.shape[1]):
        out.add_(x[idx[:, t]].mul_(w[:, t]))  # (advanced indexing: faster than index_select here)
    return out


def imresize(x: torch.Tensor, scale: float) -> torch.Tensor:
    """MATLAB ``imresize(I, scale)`` (bicubic, antialiased when shrinking) on a batch."""
    try:
        s = float(scale)
    except (TypeError, ValueError):
        s = math.nan
    if not (math.isfinite(s) and s > 0):
        raise SettingError(f"scale must be a positive number, got {scale!r}")
    x = _batch(x)

    def resize(planes: torch.Tensor) -> torch.Tensor:  # (k, 1, H, W)
        rows = _resize_leading(planes[:, 0].permute(1, 0, 2).contiguous(), s)  # (H', k, W)
        cols = _resize_leading(rows.permute(2, 1, 0).contiguous(), s)  # (W', k, H')
        return cols.permute(1, 2, 0)[:, None]

    return _by_plane_groups(resize, x, (math.ceil(x.shape[2] * s), math.ceil(x.shape[3] * s)))


def _fast_len(n: int) -> int:
    """Smallest 2^a 3^b 5^c >= n (an FFT length with small factors)."""
    best = 1 << max(0, (n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def filter_replicate(x: torch.Tensor, kernels: torch.Tensor | np.ndarray) -> torch.Tensor:
    """2-D correlation, same size, edge-replicate border (MATLAB ``imfilter(I, h, 'replicate')``)."""
    x = _batch(x)
    k = kernels if isinstance(kernels, torch.Tensor) else torch.from_numpy(np.array(kernels, dtype=np.float64))
    k = k.to(device=x.device, dtype=torch.float64)
    if k.ndim == 2:
        k = k[None]
    n_channels = x.shape[1]
    if k.ndim != 3 or k.shape[0] not in (1, n_channels):
        raise ShapeError(f"kernels must be (C, kh, kw) with C = {n_channels} or (kh, kw), got shape {tuple(k.shape)}")
    kh, kw = int(k.shape[1]), int(k.shape[2])
    if kh % 2 == 0 or kw % 2 == 0:
        raise ShapeError(f"kernel sides must be odd, got {kh} x {kw}")
    h, w = x.shape[2:]
    padded = torch.nn.functional.pad(x, (kw // 2, kw // 2, kh // 2, kh // 2), mode="replicate")
    size = (_fast_len(h + kh - 1), _fast_len(w + kw - 1))
    # circular correlation c[n] = sum_m k[m] p[n + m]: no wrap-around for n < H (the FFT length
    # is at least the padded length), so the first H x W samples are the same-size correlation
    spec = torch.fft.rfft2(padded, s=size) * torch.fft.rfft2(k, s=size).conj()
    return torch.fft.irfft2(spec, s=size)[:, :, :h, :w].contiguous()


def sobel(x: torch.Tensor, gradient: str) -> torch.Tensor:
    """Sobel response of every plane, zero padding, same size (toolbox ``SCC`` gradients)."""
    check_choice("gradient", gradient, ("magnitude", "vertical"))
    p = torch.nn.functional.pad(_batch(x), (1, 1, 1, 1))
    smooth_w = (p[:, :, :, :-2] + 2.0 * p[:, :, :, 1:-1]) + p[:, :, :, 2:]  # (N, C, H + 2, W)
    gy = smooth_w[:, :, 2:] - smooth_w[:, :, :-2]
    if gradient == "vertical":
        return gy
    diff_w = p[:, :, :, 2:] - p[:, :, :, :-2]
    gx = 2.0 * diff_w[:, :, 1:-1] + (diff_w[:, :, :-2] + diff_w[:, :, 2:])
    if gx.device.type == "cpu":
        # PyTorch's CPU float64 sqrt (SLEEF) is off by 1 ulp on about 1 % of values; its hypot
        # is correctly rounded where gx*gx + gy*gy is exact (measured on 1.5e7 integer pairs)
        return torch.hypot(gx, gy)
    return torch.sqrt(gx * gx + gy * gy)  # CUDA's float64 sqrt is correctly rounded (IEEE 754)


def _check_window(x: torch.Tensor, block_size: int) -> int:
    bs = check_block_size(block_size, minimum=1)
    if bs > min(x.shape[2], x.shape[3]):
        raise ShapeError(f"window of {bs} pixels larger than the images ({x.shape[2]}x{x.shape[3]})")
    return bs


def window_sums(x: torch.Tensor, block_size: int) -> torch.Tensor:
    """Unnormalised sums over every ``block_size`` x ``block_size`` window ('valid', stride 1)."""
    x = _batch(x)
    bs = _check_window(x, block_size)
    return x.unfold(3, bs, 1).sum(dim=4).unfold(2, bs, 1).sum(dim=4)


def window_square_sums(x: torch.Tensor, block_size: int) -> torch.Tensor:
    """Unnormalised sums of squares over every window ('valid', stride 1): ``cv2.sqrBoxFilter``."""
    x = _batch(x)
    bs = _check_window(x, block_size)
    return (x * x).unfold(3, bs, 1).sum(dim=4).unfold(2, bs, 1).sum(dim=4)


def toolbox_blocks(x: torch.Tensor, block_size: int) -> torch.Tensor:
    """Non-overlapping blocks, the images mirror-extended at the bottom/right to whole blocks."""
    x = _batch(x)
    bs = check_block_size(block_size)
    n, c, h, w = x.shape
    ny, nx = -(-h // bs), -(-w // bs)
    x = _extend(_extend(x, 2, 0, ny * bs - h, "symmetric"), 3, 0, nx * bs - w, "symmetric")
    out = torch.empty((n, ny, nx, c, bs, bs), dtype=torch.float64, device=x.device)
    out.copy_(x.reshape(n, c, ny, bs, nx, bs).permute(0, 2, 4, 1, 3, 5))
    return out.view(n, ny * nx, c, bs * bs)


def _blocks(b: torch.Tensor, name: str) -> torch.Tensor:
    b = _float64(b, name)
    if b.ndim != 4:
        raise ShapeError(f"{name} must be blocks (N, n_blocks, C, n_pixels), got shape {tuple(b.shape)}")
    return b


def block_raw_moments(
    ref_blocks: torch.Tensor, fus_blocks: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Raw per-block sums of two block sets: the sums Q2n's exact integer moments start from."""
    ref, fus = _blocks(ref_blocks, "ref_blocks"), _blocks(fus_blocks, "fus_blocks")
    if ref.shape != fus.shape:
        raise ShapeError(f"block sets differ in shape: {tuple(ref.shape)} and {tuple(fus.shape)}")
    return (ref.sum(dim=3), fus.sum(dim=3), (ref * ref).sum(dim=3), (fus * fus).sum(dim=3),
            torch.matmul(ref, fus.transpose(2, 3)))


def block_centered_moments(blocks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-block means and sample (N-1) covariance matrices of all channels."""
    b = _blocks(blocks, "blocks")
    n_pix = b.shape[3]
    if n_pix < 2:
        raise ShapeError("blocks need at least 2 pixels for a sample covariance")
    mean = b.sum(dim=3) / n_pix
    centred = b - mean[..., None]
    return mean, torch.matmul(centred, centred.transpose(2, 3)) / (n_pix - 1)

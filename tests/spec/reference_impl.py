"""Slow, literal re-implementation of the reference MATLAB toolbox (Vivone et al. 2020/2015).

Written from ``shared/spec/toolbox2020.md`` only, NOT from ``pansharp_iqa``'s source.  Every
function mirrors the MATLAB code path step by step (1-based MATLAB index arithmetic is written out
where it matters, as comments and as ``- 1`` offsets), with explicit loops over blocks, bands and
kernel taps.  Nothing here imports ``pansharp_iqa``.

Only for small images (tests): the costs are O(pixels * taps) in Python-level loops over taps.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import i0 as _bessel_i0

EPS = np.finfo(np.float64).eps  # MATLAB eps

# ----------------------------------------------------------------------------------------------
# Sensor table (spec, "Sensor MTF" table) -- 2020 values
# ----------------------------------------------------------------------------------------------
SPEC_MS_GNYQ = {
    "QB": [0.34, 0.32, 0.30, 0.22],
    "IKONOS": [0.26, 0.28, 0.29, 0.28],
    "GeoEye1": [0.23, 0.23, 0.23, 0.23],
    "WV4": [0.23, 0.23, 0.23, 0.23],
    "WV2": [0.35] * 7 + [0.27],
    "WV3": [0.325, 0.355, 0.360, 0.350, 0.365, 0.360, 0.335, 0.315],
}
SPEC_PAN_GNYQ = {"QB": 0.15, "IKONOS": 0.17, "GeoEye1": 0.16, "WV4": 0.16, "WV2": 0.11,
                 "WV3": 0.14, "none": 0.15}
WV2_BANDS = ["Coastal", "Blue", "Green", "Yellow", "Red", "RedEdge", "NIR1", "NIR2"]


def spec_ms_gnyq(sensor: str, n_bands: int) -> list[float]:
    if sensor == "none":
        return [0.30] * n_bands
    return list(SPEC_MS_GNYQ[sensor])


# ----------------------------------------------------------------------------------------------
# Kernel design: fspecial('gaussian'), kaiser, fsamp2, fwind1, MTF kernel
# ----------------------------------------------------------------------------------------------
def fspecial_gaussian(n: int, sigma: float) -> np.ndarray:
    """MATLAB fspecial('gaussian', [n n], sigma)."""
    siz = (n - 1) / 2.0
    h = np.zeros((n, n))
    for i in range(n):          # row  -> y = -siz + i
        for j in range(n):      # col  -> x = -siz + j
            x = -siz + j
            y = -siz + i
            h[i, j] = math.exp(-(x * x + y * y) / (2.0 * sigma * sigma))
    hmax = h.max()
    for i in range(n):
        for j in range(n):
            if h[i, j] < EPS * hmax:
                h[i, j] = 0.0
    s = 0.0
    for i in range(n):
        for j in range(n):
            s += h[i, j]
    if s != 0:
        h = h / s
    return h


def kaiser(n: int, beta: float = 0.5) -> np.ndarray:
    """MATLAB kaiser(n, beta) (default beta 0.5), literal port of its index arithmetic."""
    bes = abs(float(_bessel_i0(beta)))
    odd = n % 2
    xind = (n - 1) ** 2
    m = int(math.floor((n + 1) / 2))  # fix((n+1)/2)
    half = []
    for k in range(m):
        xi = k + 0.5 * (1 - odd)
        xi = 4.0 * xi * xi
        half.append(float(_bessel_i0(beta * math.sqrt(1.0 - xi / xind))) / bes)
    # w = abs([w(n:-1:odd+1) w])  (1-based: elements m..odd+1 reversed, then all)
    left = [half[k - 1] for k in range(m, odd, -1)]
    return np.abs(np.array(left + half))


def _fftshift_2d(x: np.ndarray) -> np.ndarray:
    """circshift by floor(n/2) along both axes (MATLAB fftshift)."""
    r, c = x.shape
    out = np.empty_like(x)
    sr, sc = r // 2, c // 2
    for i in range(r):
        for j in range(c):
            out[(i + sr) % r, (j + sc) % c] = x[i, j]
    return out


def _rot90_2(x: np.ndarray) -> np.ndarray:
    r, c = x.shape
    out = np.empty_like(x)
    for i in range(r):
        for j in range(c):
            out[i, j] = x[r - 1 - i, c - 1 - j]
    return out


def _ifft2_dft(x: np.ndarray) -> np.ndarray:
    """Inverse 2-D DFT by the explicit DFT sums (matrix form), no FFT library."""
    r, c = x.shape
    kr = np.arange(r)
    kc = np.arange(c)
    wr = np.exp(2j * np.pi * np.outer(kr, kr) / r)
    wc = np.exp(2j * np.pi * np.outer(kc, kc) / c)
    return (wr @ x.astype(complex) @ wc) / (r * c)


def fsamp2(hd: np.ndarray) -> np.ndarray:
    """fsamp2(Hd) = fftshift(ifft2(rot90(fftshift(rot90(Hd,2)),2))) (spec)."""
    return _fftshift_2d(_ifft2_dft(_rot90_2(_fftshift_2d(_rot90_2(hd)))))


def _interp1_linear(t: np.ndarray, y: np.ndarray, x: float) -> float:
    n = len(t)
    if x < t[0] or x > t[n - 1]:
        return float("nan")
    for k in range(n - 1):
        if t[k] <= x <= t[k + 1]:
            s = (x - t[k]) / (t[k + 1] - t[k])
            return float(y[k] + s * (y[k + 1] - y[k]))
    return float(y[n - 1])


def fwind1_circular(hd: np.ndarray, w1: np.ndarray) -> np.ndarray:
    """fwind1(Hd, w1) with one 1-D window (Huang's circular rotation)."""
    n = len(w1)
    t = np.linspace(-1.0, 1.0, n)
    w = np.zeros((n, n))
    for i in range(n):          # t2 = t(i) (rows), t1 = t(j) (cols): meshgrid(t, t)
        for j in range(n):
            r = math.sqrt(t[j] * t[j] + t[i] * t[i])
            if r < t[0] or r > t[n - 1]:
                w[i, j] = 0.0
            else:
                w[i, j] = _interp1_linear(t, w1, r)
    return fsamp2(hd) * w


@functools.lru_cache(maxsize=256)
def _mtf_kernel_cached(gnyq: float, ratio: int, n: int, sigma_form: str) -> np.ndarray:
    k = _mtf_kernel_uncached(gnyq, ratio, n, sigma_form)
    k.setflags(write=False)
    return k


def mtf_kernel(gnyq: float, ratio: int, n: int = 41, sigma_form: str = "2020") -> np.ndarray:
    return _mtf_kernel_cached(float(gnyq), int(ratio), int(n), str(sigma_form)).copy()


def _mtf_kernel_uncached(gnyq: float, ratio: int, n: int = 41, sigma_form: str = "2020") -> np.ndarray:
    fcut = 1.0 / ratio
    base = (n - 1) if sigma_form == "2020" else n
    alpha = math.sqrt((base * (fcut / 2.0)) ** 2 / (-2.0 * math.log(gnyq)))
    h = fspecial_gaussian(n, alpha)
    hd = h / h.max()
    return np.real(fwind1_circular(hd, kaiser(n)))


# ----------------------------------------------------------------------------------------------
# Filtering
# ----------------------------------------------------------------------------------------------
def imfilter_replicate(img: np.ndarray, h: np.ndarray) -> np.ndarray:
    """imfilter(I, h, 'replicate'): correlation, same size, edge replicated (direct sum over taps)."""
    img = np.asarray(img, dtype=np.float64)
    H, W = img.shape
    kr, kc = h.shape
    cr = (kr + 1) // 2 - 1  # MATLAB centre floor((size+1)/2), 0-based
    cc = (kc + 1) // 2 - 1
    # replicate border by explicit clamped MATLAB indexes, then the direct sum over the taps
    rows = [min(max(i - cr, 0), H - 1) for i in range(H + kr - 1)]
    cols = [min(max(j - cc, 0), W - 1) for j in range(W + kc - 1)]
    padded = img[np.ix_(rows, cols)]
    out = np.zeros((H, W))
    for u in range(kr):
        for v in range(kc):
            if h[u, v] == 0:
                continue
            out += h[u, v] * padded[u:u + H, v:v + W]
    return out


def imfilter_replicate_slow(img: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Per-pixel direct sum (very slow, tiny images only): to check imfilter_replicate."""
    img = np.asarray(img, dtype=np.float64)
    H, W = img.shape
    kr, kc = h.shape
    cr, cc = (kr + 1) // 2 - 1, (kc + 1) // 2 - 1
    out = np.zeros((H, W))
    for i in range(H):
        for j in range(W):
            s = 0.0
            for u in range(kr):
                ii = min(max(i + u - cr, 0), H - 1)
                for v in range(kc):
                    jj = min(max(j + v - cc, 0), W - 1)
                    s += h[u, v] * img[ii, jj]
            out[i, j] = s
    return out


def imfilter_zero(img: np.ndarray, h: np.ndarray) -> np.ndarray:
    """imfilter(I, h) default: correlation, same size, zero padding (loop over taps)."""
    img = np.asarray(img, dtype=np.float64)
    H, W = img.shape
    kr, kc = h.shape
    cr, cc = (kr + 1) // 2 - 1, (kc + 1) // 2 - 1
    out = np.zeros((H, W))
    for u in range(kr):
        for v in range(kc):
            if h[u, v] == 0:
                continue
            # out[i, j] += h[u, v] * img[i + u - cr, j + v - cc] where inside
            i0, i1 = max(0, cr - u), min(H, H + cr - u)
            j0, j1 = max(0, cc - v), min(W, W + cc - v)
            if i0 >= i1 or j0 >= j1:
                continue
            out[i0:i1, j0:j1] += h[u, v] * img[i0 + u - cr:i1 + u - cr, j0 + v - cc:j1 + v - cc]
    return out


def imfilter_zero_slow(img: np.ndarray, h: np.ndarray) -> np.ndarray:
    """imfilter(I, h) default: correlation, same size, zero padding (per-pixel direct sum)."""
    img = np.asarray(img, dtype=np.float64)
    H, W = img.shape
    kr, kc = h.shape
    cr, cc = (kr + 1) // 2 - 1, (kc + 1) // 2 - 1
    out = np.zeros((H, W))
    for i in range(H):
        for j in range(W):
            s = 0.0
            for u in range(kr):
                ii = i + u - cr
                if ii < 0 or ii >= H:
                    continue
                for v in range(kc):
                    jj = j + v - cc
                    if jj < 0 or jj >= W:
                        continue
                    s += h[u, v] * img[ii, jj]
            out[i, j] = s
    return out


def mtf_filter(img: np.ndarray, gnyq, ratio: int, sigma_form: str = "2020") -> np.ndarray:
    img = np.asarray(img, dtype=np.float64)
    if img.ndim == 2:
        g = gnyq if np.isscalar(gnyq) else gnyq[0]
        return imfilter_replicate(img, mtf_kernel(g, ratio, 41, sigma_form))
    B = img.shape[2]
    gs = [gnyq] * B if np.isscalar(gnyq) else list(gnyq)
    out = np.zeros(img.shape)
    for b in range(B):
        out[:, :, b] = imfilter_replicate(img[:, :, b], mtf_kernel(gs[b], ratio, 41, sigma_form))
    return out


# ----------------------------------------------------------------------------------------------
# MATLAB imresize (bicubic, antialiased), rows first then columns
# ----------------------------------------------------------------------------------------------
def _cubic(x: float) -> float:
    ax = abs(x)
    ax2 = ax * ax
    ax3 = ax2 * ax
    f = 0.0
    if ax <= 1:
        f += 1.5 * ax3 - 2.5 * ax2 + 1
    if 1 < ax <= 2:
        f += -0.5 * ax3 + 2.5 * ax2 - 4 * ax + 2
    return f


def _resize_weights(in_len: int, scale: float) -> np.ndarray:
    out_len = int(math.ceil(in_len * scale))
    if scale < 1:
        kw = 4.0 / scale

        def hfun(x):
            return scale * _cubic(scale * x)
    else:
        kw = 4.0
        hfun = _cubic
    P = int(math.ceil(kw)) + 2
    aux = list(range(1, in_len + 1)) + list(range(in_len, 0, -1))  # symmetric mirror, 1-based
    M = np.zeros((out_len, in_len))
    for x in range(1, out_len + 1):  # 1-based output index
        u = x / scale + 0.5 * (1 - 1 / scale)
        left = math.floor(u - kw / 2)
        idx = [left + k for k in range(P)]
        wts = [hfun(u - j) for j in idx]
        s = sum(wts)
        wts = [w / s for w in wts]
        for j, w in zip(idx, wts, strict=True):
            jj = aux[(j - 1) % len(aux)]  # 1-based mirrored index
            M[x - 1, jj - 1] += w
    return M


def imresize(img: np.ndarray, scale: float) -> np.ndarray:
    img = np.asarray(img, dtype=np.float64)
    two_d = img.ndim == 2
    if two_d:
        img = img[:, :, None]
    H, W, B = img.shape
    Mr = _resize_weights(H, scale)
    Mc = _resize_weights(W, scale)
    out = np.zeros((Mr.shape[0], Mc.shape[0], B))
    for b in range(B):
        tmp = np.zeros((Mr.shape[0], W))
        for i in range(Mr.shape[0]):          # rows first
            for k in np.nonzero(Mr[i])[0]:
                tmp[i, :] += Mr[i, k] * img[k, :, b]
        for j in range(Mc.shape[0]):          # then columns
            for k in np.nonzero(Mc[j])[0]:
                out[:, j, b] += Mc[j, k] * tmp[:, k]
    return out[:, :, 0] if two_d else out


# ----------------------------------------------------------------------------------------------
# interp23tap
# ----------------------------------------------------------------------------------------------
CDF23_HALF = [2 * v for v in [0.5, 0.305334091185, 0, -0.072698593239, 0, 0.021809577942, 0,
                              -0.005192756653, 0, 0.000807762146, 0, -0.000060081482]]
BASE_COEFF = CDF23_HALF[1:][::-1] + CDF23_HALF  # [fliplr(CDF23(2:end)) CDF23], 23 taps


def _circ_filter_cols(x: np.ndarray) -> np.ndarray:
    """imfilter(t', BaseCoeff, 'circular') transposed back: 1-D circular correlation along axis 0."""
    n = x.shape[0]
    c = (23 + 1) // 2 - 1  # 11
    out = np.zeros_like(x)
    for k in range(23):
        if BASE_COEFF[k] == 0:
            continue
        idx = [(i + k - c) % n for i in range(n)]
        out += BASE_COEFF[k] * x[idx, :]
    return out


def interp23tap(img: np.ndarray, ratio: int) -> np.ndarray:
    """Correct for any power of two: log2(ratio) x2 steps."""
    img = np.asarray(img, dtype=np.float64)
    two_d = img.ndim == 2
    if two_d:
        img = img[:, :, None]
    nsteps = int(round(math.log2(ratio)))
    assert 2 ** nsteps == ratio
    r, c, b = img.shape
    cur = img
    first = True
    for z in range(1, nsteps + 1):
        up = np.zeros(((2 ** z) * r, (2 ** z) * c, b))
        if first:
            up[1::2, 1::2, :] = cur   # MATLAB 2:2:end
            first = False
        else:
            up[0::2, 0::2, :] = cur   # MATLAB 1:2:end
        for ii in range(b):
            t = up[:, :, ii]
            t = _circ_filter_cols(t)          # columns
            t = _circ_filter_cols(t.T).T      # rows
            up[:, :, ii] = t
        cur = up
    return cur[:, :, 0] if two_d else cur


# ----------------------------------------------------------------------------------------------
# Wald degradation
# ----------------------------------------------------------------------------------------------
def wald_degrade(ms, pan, ms_gnyq, ratio):
    lp = mtf_filter(ms, ms_gnyq, ratio)
    o = ratio // 2  # MATLAB floor(ratio/2)+1 (1-based)
    ms_lr = lp[o::ratio, o::ratio, :]
    pan_lr = imresize(pan, 1.0 / ratio)
    return ms_lr, pan_lr


# ----------------------------------------------------------------------------------------------
# Hypercomplex algebra (Cayley-Dickson), components as a list (floats or arrays)
# ----------------------------------------------------------------------------------------------
def hc_conj(x):
    return [x[0]] + [-v for v in x[1:]]


def hc_mult(x, y):
    """(a,b)(c,d) = (ac - conj(d) b, d a + b conj(c)), recursively."""
    n = len(x)
    if n == 1:
        return [x[0] * y[0]]
    h = n // 2
    a, b = x[:h], x[h:]
    c, d = y[:h], y[h:]
    left = [p - q for p, q in zip(hc_mult(a, c), hc_mult(hc_conj(d), b), strict=True)]
    right = [p + q for p, q in zip(hc_mult(d, a), hc_mult(b, hc_conj(c)), strict=True)]
    return left + right


def matlab_uint16(x: np.ndarray) -> np.ndarray:
    """uint16(x): round half away from zero, saturate to [0, 65535] (returned as float64)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape)
    flat_in = x.ravel()
    flat = out.ravel()
    for k in range(flat_in.size):
        v = flat_in[k]
        r = math.floor(abs(v) + 0.5)
        r = r if v >= 0 else -r
        flat[k] = min(max(r, 0), 65535)
    return flat.reshape(x.shape)


def _mean2(x):
    return float(np.sum(x) / x.size)


def _std2(x):
    m = _mean2(x)
    return math.sqrt(float(np.sum((x - m) ** 2)) / (x.size - 1))


def onions_quality(gt_blk: np.ndarray, f_blk: np.ndarray, vectorised: bool = True) -> np.ndarray:
    """One block (S x S x 2^k, already uint16-cast values): returns q (2^k components)."""
    S1, S2, nb = gt_blk.shape
    N = S1 * S2
    z1 = []
    z2 = []
    for i in range(nb):
        x = gt_blk[:, :, i].astype(np.float64)
        y = f_blk[:, :, i].astype(np.float64)
        m = _mean2(x)
        s = _std2(x)
        if s == 0:
            s = EPS
        z1.append((x - m) / s + 1)
        if m == 0:                      # MATLAB's `if s==0` on the mean: shift only
            yn = y - m + 1
        else:
            yn = (y - m) / s + 1
        z2.append(yn if i == 0 else -yn)  # conjugate
    m1 = [_mean2(v) for v in z1]
    m2 = [_mean2(v) for v in z2]
    mod_q1m = math.sqrt(sum(v * v for v in m1))
    mod_q2m = math.sqrt(sum(v * v for v in m2))
    mod_q1sq = sum(v * v for v in z1)
    mod_q2sq = sum(v * v for v in z2)
    c = N / (N - 1)
    termine2 = mod_q1m * mod_q2m
    termine4 = mod_q1m ** 2 + mod_q2m ** 2
    int1 = c * _mean2(mod_q1sq)
    int2 = c * _mean2(mod_q2sq)
    termine3 = int1 + int2 - c * (mod_q1m ** 2 + mod_q2m ** 2)
    mean_bias = 2 * termine2 / termine4
    if termine3 == 0:
        q = [0.0] * nb
        q[nb - 1] = mean_bias
        return np.array(q)
    if vectorised:
        qu = hc_mult(z1, z2)  # same recursion, applied to all pixels at once
        qu_mean = [_mean2(v) for v in qu]
    else:
        acc = [0.0] * nb
        for p in range(S1):
            for r in range(S2):
                prod = hc_mult([float(v[p, r]) for v in z1], [float(v[p, r]) for v in z2])
                for k in range(nb):
                    acc[k] += prod[k]
        qu_mean = [a / N for a in acc]
    qm = hc_mult(m1, m2)
    q = [c * qu_mean[i] - c * qm[i] for i in range(nb)]
    return np.array([v * mean_bias * 2 / termine3 for v in q])


def _sym_pad(img: np.ndarray, est1: int, est2: int) -> np.ndarray:
    H, W = img.shape
    out = np.zeros((H + est1, W + est2))
    out[:H, :W] = img
    # ia1(:,N2+1:N2+est2) = ia1(:,N2:-1:N2-est2+1)   (columns first)
    for k in range(est2):
        out[:, W + k] = out[:, W - 1 - k]
    # ia1(N1+1:N1+est1,:) = ia1(N1:-1:N1-est1+1,:)
    for k in range(est1):
        out[H + k, :] = out[H - 1 - k, :]
    return out


def q2n(gt, fused, block_size=32, shift=32, vectorised=True, return_map=False):
    gt = np.asarray(gt, dtype=np.float64)
    fused = np.asarray(fused, dtype=np.float64)
    if gt.ndim == 2:
        gt = gt[:, :, None]
        fused = fused[:, :, None]
    N1, N2, N3 = gt.shape
    stepx = math.ceil(N1 / shift)
    stepy = math.ceil(N2 / shift)
    est1 = (stepx - 1) * shift + block_size - N1
    est2 = (stepy - 1) * shift + block_size - N2
    if est1 != 0 or est2 != 0:
        gt = np.stack([_sym_pad(gt[:, :, i], est1, est2) for i in range(N3)], axis=2)
        fused = np.stack([_sym_pad(fused[:, :, i], est1, est2) for i in range(N3)], axis=2)
    gt = matlab_uint16(gt)
    fused = matlab_uint16(fused)
    nb = 1
    while nb < N3:
        nb *= 2
    if nb != N3:
        z = np.zeros(gt.shape[:2] + (nb - N3,))
        gt = np.concatenate([gt, z], axis=2)
        fused = np.concatenate([fused, z], axis=2)
    valori = np.zeros((stepx, stepy, nb))
    for j in range(1, stepx + 1):
        for i in range(1, stepy + 1):
            r0 = (j - 1) * shift
            c0 = (i - 1) * shift
            valori[j - 1, i - 1, :] = onions_quality(
                gt[r0:r0 + block_size, c0:c0 + block_size, :],
                fused[r0:r0 + block_size, c0:c0 + block_size, :], vectorised)
    qmap = np.sqrt(np.sum(valori ** 2, axis=2))
    val = float(np.sum(qmap) / qmap.size)
    return (val, qmap) if return_map else val


# ----------------------------------------------------------------------------------------------
# Q_avg (img_qi, sliding 32 window)
# ----------------------------------------------------------------------------------------------
def img_qi(x: np.ndarray, y: np.ndarray, block_size: int = 32):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    N = block_size * block_size
    H, W = x.shape
    oh, ow = H - block_size + 1, W - block_size + 1
    qmap = np.ones((oh, ow))
    for i in range(oh):
        for j in range(ow):
            wx = x[i:i + block_size, j:j + block_size]
            wy = y[i:i + block_size, j:j + block_size]
            sx, sy = float(np.sum(wx)), float(np.sum(wy))
            sxx, syy, sxy = float(np.sum(wx * wx)), float(np.sum(wy * wy)), float(np.sum(wx * wy))
            num = 4 * (N * sxy - sx * sy) * sx * sy
            d1 = N * (sxx + syy) - sx * sx - sy * sy
            d2 = sx * sx + sy * sy
            den = d1 * d2
            if den != 0:
                qmap[i, j] = num / den
            elif d1 == 0 and d2 != 0:
                qmap[i, j] = 2 * sx * sy / d2
            else:
                qmap[i, j] = 1.0
    return float(np.sum(qmap) / qmap.size), qmap


def q_avg(gt, fused, block_size=32, return_map=False):
    gt = np.asarray(gt, dtype=np.float64)
    fused = np.asarray(fused, dtype=np.float64)
    vals, maps = [], []
    for b in range(gt.shape[2]):
        v, m = img_qi(gt[:, :, b], fused[:, :, b], block_size)
        vals.append(v)
        maps.append(m)
    val = sum(vals) / len(vals)
    return (val, np.stack(maps, axis=2)) if return_map else val


# ----------------------------------------------------------------------------------------------
# SAM, ERGAS, SCC
# ----------------------------------------------------------------------------------------------
def sam(gt, fused, return_map=False):
    gt = np.asarray(gt, dtype=np.float64)
    fused = np.asarray(fused, dtype=np.float64)
    H, W, B = gt.shape
    total = 0.0
    count = 0
    amap = np.zeros((H, W))
    for i in range(H):
        for j in range(W):
            ps = sum(gt[i, j, b] * fused[i, j, b] for b in range(B))
            n1 = sum(gt[i, j, b] * gt[i, j, b] for b in range(B))
            n2 = sum(fused[i, j, b] * fused[i, j, b] for b in range(B))
            pn = math.sqrt(n1 * n2)
            pm = pn if pn != 0 else EPS
            amap[i, j] = math.degrees(math.acos(min(1.0, max(-1.0, ps / pm))))
            if pn == 0:
                continue
            cval = ps / pn
            ang = 0.0 if cval > 1 else (math.pi if cval < -1 else math.acos(cval))  # real(acos)
            total += ang
            count += 1
    val = total / count * 180 / math.pi
    return (val, amap) if return_map else val


def ergas(gt, fused, ratio):
    gt = np.asarray(gt, dtype=np.float64)
    fused = np.asarray(fused, dtype=np.float64)
    B = gt.shape[2]
    acc = 0.0
    for b in range(B):
        err = gt[:, :, b] - fused[:, :, b]
        acc += _mean2(err ** 2) / _mean2(gt[:, :, b]) ** 2
    return (100.0 / ratio) * math.sqrt(acc / B)


SOBEL = np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 0.0], [-1.0, -2.0, -1.0]])  # fspecial('sobel')


def scc(gt, fused, variant="2020"):
    gt = np.asarray(gt, dtype=np.float64)
    fused = np.asarray(fused, dtype=np.float64)
    B = gt.shape[2]
    gf, gg = [], []
    for b in range(B):
        if variant == "2020":
            f = fused[1:-1, 1:-1, b]
            g = gt[1:-1, 1:-1, b]
            gf.append(np.sqrt(imfilter_zero(f, SOBEL) ** 2 + imfilter_zero(f, SOBEL.T) ** 2))
            gg.append(np.sqrt(imfilter_zero(g, SOBEL) ** 2 + imfilter_zero(g, SOBEL.T) ** 2))
        else:
            gf.append(imfilter_zero(fused[:, :, b], SOBEL))
            gg.append(imfilter_zero(gt[:, :, b], SOBEL))
    gf = np.stack(gf, axis=2)
    gg = np.stack(gg, axis=2)
    s = float(np.sum(gf * gg))
    s = s / math.sqrt(float(np.sum(gf ** 2)))
    s = s / math.sqrt(float(np.sum(gg ** 2)))
    return s


def cut_bounds(img, dim_cut=21):
    # I(dim_cut:end-dim_cut, dim_cut:end-dim_cut, :) 1-based  ->  [dim_cut-1 : H-dim_cut] 0-based
    H, W = img.shape[:2]
    return img[dim_cut - 1:H - dim_cut, dim_cut - 1:W - dim_cut, ...]


def evaluate_reduced(fused, gt, ratio, bits, dim_cut=21):
    gt = cut_bounds(np.asarray(gt, dtype=np.float64), dim_cut)
    fused = cut_bounds(np.asarray(fused, dtype=np.float64), dim_cut)
    return {
        "Q2n": q2n(gt, fused, 32, 32),
        "Q": q_avg(gt, fused, 32),
        "SAM": sam(gt, fused),
        "ERGAS": ergas(gt, fused, ratio),
        "SCC": scc(gt, fused, "2020"),
    }


# ----------------------------------------------------------------------------------------------
# Full resolution
# ----------------------------------------------------------------------------------------------
def uqi(x, y):
    """MATLAB uqi: x(:), y(:), cov N-1, 4 cxy mx my / (vx + vy) / (mx^2 + my^2)."""
    x = np.asarray(x, dtype=np.float64).ravel(order="F")
    y = np.asarray(y, dtype=np.float64).ravel(order="F")
    n = x.size
    mx = float(np.sum(x) / n)
    my = float(np.sum(y) / n)
    xc = x - mx
    yc = y - my
    vx = float(np.sum(xc * xc)) / (n - 1)
    vy = float(np.sum(yc * yc)) / (n - 1)
    cxy = float(np.sum(xc * yc)) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(4 * cxy * mx * my) / np.float64(vx + vy) / np.float64(mx * mx + my * my))


def block_uiqi(x, y, S):
    H, W = x.shape
    vals = []
    for r in range(0, H, S):
        for c in range(0, W, S):
            vals.append(uqi(x[r:r + S, c:c + S], y[r:r + S, c:c + S]))
    return sum(vals) / len(vals)


def d_lambda(fused, ms_exp, S=32, p=1):
    fused = np.asarray(fused, dtype=np.float64)
    ms_exp = np.asarray(ms_exp, dtype=np.float64)
    L = fused.shape[2]
    acc = 0.0
    for k in range(L):
        for r in range(k + 1, L):
            qh = block_uiqi(fused[:, :, k], fused[:, :, r], S)
            ql = block_uiqi(ms_exp[:, :, k], ms_exp[:, :, r], S)
            acc += abs(qh - ql) ** p
    s = (L * L - L) / 2
    return (acc / s) ** (1.0 / p)


def d_lambda_paper(fused, ms_lr, ratio, S=32, p=1):
    fused = np.asarray(fused, dtype=np.float64)
    ms_lr = np.asarray(ms_lr, dtype=np.float64)
    L = fused.shape[2]
    acc = 0.0
    for k in range(L):
        for r in range(k + 1, L):
            qh = block_uiqi(fused[:, :, k], fused[:, :, r], S)
            ql = block_uiqi(ms_lr[:, :, k], ms_lr[:, :, r], S // ratio)
            acc += abs(qh - ql) ** p
    s = (L * L - L) / 2
    return (acc / s) ** (1.0 / p)


def d_s(fused, ms_exp, pan, ratio, S=32, q=1, variant="toolbox2020", pan_gnyq=None, ms_lr=None):
    fused = np.asarray(fused, dtype=np.float64)
    ms_exp = np.asarray(ms_exp, dtype=np.float64)
    pan = np.asarray(pan, dtype=np.float64)
    L = fused.shape[2]
    if variant == "toolbox2020":
        pan_low = interp23tap(imresize(pan, 1.0 / ratio), ratio)
    elif variant == "toolbox2015":
        pan_low = mtf_filter(pan, pan_gnyq, ratio, sigma_form="2015")
    elif variant == "qnr-paper":
        pan_low = imresize(pan, 1.0 / ratio)
    else:
        raise KeyError(variant)
    acc = 0.0
    for b in range(L):
        qh = block_uiqi(fused[:, :, b], pan, S)
        if variant == "qnr-paper":
            ql = block_uiqi(np.asarray(ms_lr, dtype=np.float64)[:, :, b], pan_low, S // ratio)
        else:
            ql = block_uiqi(ms_exp[:, :, b], pan_low, S)
        acc += abs(qh - ql) ** q
    return (acc / L) ** (1.0 / q)


def d_lambda_k(fused, ms_exp, ms_gnyq, ratio, S=32):
    fused_lp = mtf_filter(fused, ms_gnyq, ratio)
    return 1.0 - q2n(ms_exp, fused_lp, S, S)

"""Deterministic input scenes of the HS (ratio 6) and Sentinel-2 (ratios 2 and 6) reference fixture.

Pure NumPy, integer arithmetic throughout (a platform-independent SplitMix64 generator, box sums,
rounded integer divisions), so every scene is bit-identical on every machine and NumPy version; the
fixture ``reference.npz`` stores the SHA-256 of each one (:func:`sha256`). Two families:

* synthetic scenes (no external data): :func:`hs_synthetic`, :func:`s2_synthetic`;
* scenes derived from the GRIP-UNINA WorldView-2 crop ``imgWV2.mat`` of the shared data directory
  (non-profit licence: they are rebuilt here, never stored): :func:`hs_wv2_fr`, :func:`hs_wv2_rr`,
  :func:`s2_wv2`.

Arrays are rows x cols x bands (``uint16``, digital numbers). The fused images fed to the metrics
are built from the reference code's interpolated/degraded products with :func:`detail_inject` and
:func:`add_noise` (our own recipes). ``README.md`` beside this file documents every recipe and the
fixture's keys; ``make_reference.py`` runs the reference toolboxes on these scenes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

U16_MAX = 65535

# WorldView-2 band centres (nm) of imgWV2.mat's 8 bands (coastal .. NIR2): the spectral recipe's anchors
WV2_CENTRES = (427.0, 478.0, 546.0, 608.0, 659.0, 724.0, 831.0, 908.0)

# PRISMA bands kept by the HS toolbox (0-based indices of VNIR 66 + SWIR 173, end exclusive):
# spec hyperspectral_s2.md section 1.2 (elaborate_PRISMA_images.py L16)
PRISMA_KEPT = ((7, 63), (71, 86), (89, 107), (120, 150), (176, 216))

# geometry of the real-data recipes (offsets in WV2 MS pixels; the PAN offset is 4x)
HS_FR_MS_ORIGIN = (200, 30)   # 54 x 54 MS crop -> 36 x 36 cube, PAN 216 x 216
HS_RR_MS_ORIGIN = (16, 16)    # 288 x 288 MS crop -> 192 x 192 cube, PAN 1152 x 1152
S2_MS_ORIGIN = (16, 16)       # 288 x 288 MS crop -> 1152 x 1152 10 m grid (PAN 1152 x 1152)


# --------------------------------------------------------------------------------------------- integer tools

def splitmix64(seed: int, n: int) -> np.ndarray:
    """The first ``n`` outputs of SplitMix64 started at ``seed`` (uint64, platform-independent)."""
    with np.errstate(over="ignore"):
        state = np.uint64(seed % 2**64) + np.uint64(0x9E3779B97F4A7C15) * np.arange(1, n + 1, dtype=np.uint64)
        z = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def uniform_int(seed: int, shape: tuple[int, ...], low: int, high: int) -> np.ndarray:
    """Integers in [low, high] (int64) from SplitMix64 (modulo of the upper 32 bits)."""
    n = int(np.prod(shape))
    words = splitmix64(seed, n) >> np.uint64(32)
    return (low + (words % np.uint64(high - low + 1)).astype(np.int64)).reshape(shape)


def int_noise(seed: int, shape: tuple[int, ...], amplitude: int) -> np.ndarray:
    """Integer noise: sum of four uniform integers in [-amplitude, amplitude] (std = 2 sqrt(a(a+1)/3))."""
    out = np.zeros(shape, dtype=np.int64)
    for k in range(4):
        out += uniform_int(seed * 8 + k, shape, -amplitude, amplitude)
    return out


def div_round(num: np.ndarray, den: np.ndarray | int) -> np.ndarray:
    """Integer division rounded half up (den > 0), exact in int64."""
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    return (2 * num + den) // (2 * den)


def box_sum(x: np.ndarray, k: int, axis: int) -> np.ndarray:
    """Sum over an odd window of ``k`` samples along ``axis``, edge (replicate) padding, int64."""
    r = k // 2
    pad = [(0, 0)] * x.ndim
    pad[axis] = (r + 1, r)
    c = np.cumsum(np.pad(x.astype(np.int64), pad, mode="edge"), axis=axis)
    n = x.shape[axis]
    return np.take(c, np.arange(k, k + n), axis=axis) - np.take(c, np.arange(n), axis=axis)


def box_sum2(x: np.ndarray, k: int) -> np.ndarray:
    """``k`` x ``k`` box sum over the first two axes (edge padding), int64."""
    return box_sum(box_sum(x, k, 0), k, 1)


def block_sum(x: np.ndarray, f: int) -> np.ndarray:
    """Sum of each ``f`` x ``f`` block of the first two axes (sides multiples of f), int64."""
    h, w = x.shape[:2]
    return x.astype(np.int64).reshape(h // f, f, w // f, f, *x.shape[2:]).sum(axis=(1, 3))


def smooth_field(seed: int, shape: tuple[int, int], k: int, low: int, high: int, passes: int = 3) -> np.ndarray:
    """Seeded smooth random field: white integers box-summed ``passes`` times, rescaled to [low, high]."""
    s = uniform_int(seed, shape, 0, 1000)
    for _ in range(passes):
        s = box_sum2(s, k)
    s = s - s.min()
    return low + div_round(s * (high - low), max(int(s.max()), 1))


def rectangles(seed: int, n_rect: int, shape: tuple[int, int], size: tuple[int, int]) -> list[tuple[int, ...]]:
    """Seeded rectangles (r0, c0, h, w, label) with sides in [size[0], size[1]] inside ``shape``."""
    v = uniform_int(seed, (n_rect, 5), 0, 2**31 - 1)
    out = []
    for a, b, c, d, e in v.tolist():
        h = size[0] + c % (size[1] - size[0] + 1)
        w = size[0] + d % (size[1] - size[0] + 1)
        out.append((a % (shape[0] - h + 1), b % (shape[1] - w + 1), h, w, e))
    return out


def to_u16(x: np.ndarray) -> np.ndarray:
    """Clip to [0, 65535] and cast to uint16."""
    return np.clip(x, 0, U16_MAX).astype(np.uint16)


def sha256(a: np.ndarray) -> str:
    """SHA-256 (hex) of the array's C-order bytes; uint16 arrays little-endian (the fixture's convention)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "u" and a.dtype.itemsize == 2:
        a = a.astype("<u2", copy=False)
    return hashlib.sha256(a.tobytes()).hexdigest()


def _abundances(seed: int, shape: tuple[int, int], n_mat: int, k_big: int, k_small: int,
                n_rect: int, rect_size: tuple[int, int], rect_gain: int = 400) -> np.ndarray:
    """Integer abundance-like weights (rows x cols x n_mat): two smooth scales plus sharp rectangles."""
    a = np.stack([smooth_field(seed * 100 + m, shape, k_big, 0, 255)
                  + smooth_field(seed * 100 + 50 + m, shape, k_small, 0, 64) for m in range(n_mat)], axis=-1)
    for r0, c0, h, w, lab in rectangles(seed * 100 + 99, n_rect, shape, rect_size):
        a[r0:r0 + h, c0:c0 + w, lab % n_mat] += rect_gain
    return a


def _mix(a: np.ndarray, spectra: np.ndarray) -> np.ndarray:
    """Linear mixing: sum_m a_m spectra[m] / sum_m a_m, rounded (int64)."""
    num = np.einsum("ijm,mb->ijb", a, spectra)
    return div_round(num, a.sum(axis=2, keepdims=True))


# --------------------------------------------------------------------------------------------- synthetic scenes

def hs_synthetic(seed: int = 11, n: int = 192, bands: int = 5) -> dict[str, np.ndarray]:
    """Synthetic HS scene at the PAN grid: ``gt`` (n x n x bands) and ``pan`` (n x n), uint16.

    Three materials (spectra in [1500, 14000] DN) mixed by smooth fields and rectangles, integer noise
    (a = 6), a 6 x 6 all-zero patch at rows/cols 96..101 (SAM's zero-norm pixels), PAN = weighted band
    mean (weights 1 + min(b, bands-1-b)) plus noise (a = 4). The HS toolbox's ``downsample_hs_pan``
    turns (gt, pan) into the 32 x 32 cube, its EXP and the PAN at 32 x 32 (see make_reference.py).
    """
    spectra = uniform_int(seed * 10 + 1, (3, bands), 1500, 14000)
    cube = _mix(_abundances(seed, (n, n), 3, 15, 5, 8, (6, 60)), spectra)
    cube += int_noise(seed * 10 + 2, cube.shape, 6)
    cube[96:102, 96:102, :] = 0
    cube = np.clip(cube, 0, U16_MAX)
    w = np.array([1 + min(b, bands - 1 - b) for b in range(bands)], dtype=np.int64)
    pan = div_round((cube * w).sum(axis=2), int(w.sum())) + int_noise(seed * 10 + 3, (n, n), 4)
    return {"gt": to_u16(cube), "pan": to_u16(pan)}


def s2_synthetic(seed: int = 23, n10: int = 1152) -> dict[str, np.ndarray]:
    """Synthetic Sentinel-2 scene: ``b10`` (n10^2 x 4), ``b20`` ((n10/2)^2 x 6), ``b60`` ((n10/6)^2 x 2), uint16.

    Four materials with 12-band spectra in [300, 6000] DN mixed at the 10 m grid (smooth fields k = 9
    and 3, 400 rectangles of sides 6-60, gain 200); 20 m and 60 m bands are the 2 x 2 and 6 x 6 block
    means of their 10 m-grid mixtures (rounded); each group gets integer noise (a = 5). Band order
    B2 B3 B4 B8 | B5 B6 B7 B8A B11 B12 | B1 B9.
    """
    spectra = uniform_int(seed * 10 + 1, (4, 12), 300, 6000)
    x = _mix(_abundances(seed, (n10, n10), 4, 9, 3, 400, (6, 60), 200), spectra)
    b10 = x[:, :, 0:4] + int_noise(seed * 10 + 2, (n10, n10, 4), 5)
    b20 = div_round(block_sum(x[:, :, 4:10], 2), 4)
    b20 += int_noise(seed * 10 + 3, b20.shape, 5)
    b60 = div_round(block_sum(x[:, :, 10:12], 6), 36)
    b60 += int_noise(seed * 10 + 4, b60.shape, 5)
    return {"b10": to_u16(b10), "b20": to_u16(b20), "b60": to_u16(b60)}


def s2_crop(scene: dict[str, np.ndarray], rows10: int, cols10: int) -> dict[str, np.ndarray]:
    """Top-left crop of an S2 scene, ``rows10`` x ``cols10`` at 10 m (both multiples of 6)."""
    return {"b10": scene["b10"][:rows10, :cols10], "b20": scene["b20"][:rows10 // 2, :cols10 // 2],
            "b60": scene["b60"][:rows10 // 6, :cols10 // 6]}


# --------------------------------------------------------------------------------------------- fused images

def detail_inject(exp: np.ndarray, pan: np.ndarray, ratio: int) -> np.ndarray:
    """Our HPM-like fused image: round(EXP * (P + 1) / (box_mean(P) + 1)), box (2 ratio + 1)^2, uint16.

    ``pan`` is rows x cols (one PAN for every band) or rows x cols x bands (one per band).
    """
    k = 2 * ratio + 1
    p = pan.astype(np.int64)
    if p.ndim == 2:
        p = p[:, :, None]
    lp = box_sum2(p, k)
    return to_u16(div_round(exp.astype(np.int64) * (p + 1) * (k * k), lp + k * k))


def add_noise(img: np.ndarray, seed: int, amplitude: int) -> np.ndarray:
    """``img`` plus :func:`int_noise`, clipped to uint16."""
    return to_u16(img.astype(np.int64) + int_noise(seed, img.shape, amplitude))


# S2: the 10 m band giving the detail of each fused band (indices into B2 B3 B4 B8)
S2_DETAIL_BAND = {20: (2, 3, 3, 3, 3, 2), 60: (0, 3)}


def s2_detail_pan(b10: np.ndarray, group: int) -> np.ndarray:
    """Per fused band, the 10 m band our detail injection uses (rows x cols x bands of the group)."""
    return b10[:, :, list(S2_DETAIL_BAND[group])]


def fused_set(exp: np.ndarray, pan: np.ndarray, ratio: int, seed: int, amplitude: int) -> dict[str, np.ndarray]:
    """The three fused images of a case: ``exp`` (given), ``di`` (:func:`detail_inject`), ``noisy`` (di + noise)."""
    di = detail_inject(exp, pan, ratio)
    return {"exp": exp, "di": di, "noisy": add_noise(di, seed, amplitude)}


# --------------------------------------------------------------------------------------------- real-data scenes

def load_wv2(data_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``I_MS`` (320 x 320 x 8) and ``I_PAN`` (1280 x 1280) of ``imgWV2.mat`` (uint16)."""
    import scipy.io

    m = scipy.io.loadmat(str(Path(data_dir) / "imgWV2.mat"))
    return np.asarray(m["I_MS"], dtype=np.uint16), np.asarray(m["I_PAN"], dtype=np.uint16)


def prisma_wavelengths() -> np.ndarray:
    """The 159 PRISMA wavelengths (nm) the HS toolbox keeps (VNIR 400-1010 in 66, SWIR 920-2505 in 173)."""
    wl = [400.0 + 610.0 * i / 65.0 for i in range(66)] + [920.0 + 1585.0 * j / 172.0 for j in range(173)]
    return np.array([wl[i] for a, b in PRISMA_KEPT for i in range(a, b)])


def hs_wavelengths(bands: int) -> np.ndarray:
    """``bands`` wavelengths: the kept PRISMA set (159) or an evenly spaced subset of it."""
    wl = prisma_wavelengths()
    if bands == wl.size:
        return wl
    idx = [(k * (wl.size - 1) + (bands - 1) // 2) // (bands - 1) for k in range(bands)]
    return wl[idx]


def hs_spectral_weights(bands: int) -> np.ndarray:
    """Integer weights (bands x 8, per 1024) turning the 8 WV2 bands into ``bands`` HS bands.

    Piecewise-linear interpolation between the WV2 centres (clamped below 427 nm); above 908 nm a SWIR
    recipe NIR2 (1 - 0.55 u) + red 0.25 u, u = (lambda - 908) / 1597; times a smooth gain
    1 + 0.6 v (1 - v), v = (lambda - 400) / 2105; rounded to integers per 1024.
    """
    c = WV2_CENTRES
    out = np.zeros((bands, 8), dtype=np.int64)
    for k, lam in enumerate(hs_wavelengths(bands).tolist()):
        w = [0.0] * 8
        if lam <= c[0]:
            w[0] = 1.0
        elif lam <= c[7]:
            j = max(i for i in range(7) if c[i] <= lam) if lam < c[7] else 6
            t = (lam - c[j]) / (c[j + 1] - c[j])
            w[j] += 1.0 - t
            w[j + 1] += t
        else:
            u = (lam - c[7]) / (2505.0 - c[7])
            w[7] = 1.0 - 0.55 * u
            w[4] = 0.25 * u
        v = (lam - 400.0) / 2105.0
        g = 1.0 + 0.6 * v * (1.0 - v)
        out[k] = [int(np.rint(1024.0 * wj * g)) for wj in w]
    return out


def area_3to2(x: np.ndarray) -> np.ndarray:
    """3:2 area resampling of the first two axes (sides multiples of 3), times 9 (exact int64).

    Output pixels 2i, 2i+1 of each axis are (2 x[3i] + x[3i+1]) and (x[3i+1] + 2 x[3i+2]) (times 3 per axis).
    """
    def one(a: np.ndarray, axis: int) -> np.ndarray:
        a = np.moveaxis(a.astype(np.int64), axis, 0)
        t = a.reshape(a.shape[0] // 3, 3, *a.shape[1:])
        out = np.stack([2 * t[:, 0] + t[:, 1], t[:, 1] + 2 * t[:, 2]], axis=1).reshape(-1, *a.shape[1:])
        return np.moveaxis(out, 0, axis)
    return one(one(x, 0), 1)


def _hs_cube(ms_crop: np.ndarray, bands: int, seed: int) -> np.ndarray:
    """HS cube from a WV2 MS crop: 3:2 area resampling, spectral weights, x8 DN scale, noise (a = 2)."""
    r9 = area_3to2(ms_crop)                                   # (2n/3)^2 x 8, times 9
    w = hs_spectral_weights(bands)                            # bands x 8, per 1024
    num = np.einsum("ijk,bk->ijb", r9, w) * 8                 # int64, exact
    cube = div_round(num, 1024 * 9) + int_noise(seed, (r9.shape[0], r9.shape[1], bands), 2)
    return to_u16(cube)


def hs_wv2_fr(data_dir: str | Path, bands: int) -> dict[str, np.ndarray]:
    """Real-data HS full-resolution pair: ``ms_lr`` 36 x 36 x bands and ``pan`` 216 x 216 (uint16).

    MS crop 54 x 54 at :data:`HS_FR_MS_ORIGIN` of imgWV2 -> :func:`_hs_cube`; PAN = the co-located
    216 x 216 WV2 PAN crop (offset 4x), unchanged. Seed of the noise = 1000 + bands.
    """
    ms, pan = load_wv2(data_dir)
    r0, c0 = HS_FR_MS_ORIGIN
    return {"ms_lr": _hs_cube(ms[r0:r0 + 54, c0:c0 + 54], bands, 1000 + bands),
            "pan": pan[4 * r0:4 * r0 + 216, 4 * c0:4 * c0 + 216].copy()}


def hs_wv2_rr(data_dir: str | Path, bands: int) -> dict[str, np.ndarray]:
    """Real-data HS scene for the reduced-resolution case: ``gt`` 192 x 192 x bands, ``pan`` 1152 x 1152.

    MS crop 288 x 288 at :data:`HS_RR_MS_ORIGIN` -> :func:`_hs_cube` (noise seed 2000 + bands); PAN =
    the co-located WV2 PAN crop. The HS toolbox's ``downsample_hs_pan`` (ratio 6) makes the RR inputs.
    """
    ms, pan = load_wv2(data_dir)
    r0, c0 = HS_RR_MS_ORIGIN
    return {"gt": _hs_cube(ms[r0:r0 + 288, c0:c0 + 288], bands, 2000 + bands),
            "pan": pan[4 * r0:4 * r0 + 1152, 4 * c0:4 * c0 + 1152].copy()}


# S2 band recipes from WV2 bands (coastal, blue, green, yellow, red, red-edge, NIR1, NIR2): integer weights
# per band (denominator 4). 10 m: B2 B3 B4 B8; 20 m: B5 B6 B7 B8A B11 B12; 60 m: B1 B9
S2_WV2_WEIGHTS = np.array([
    [0, 4, 0, 0, 0, 0, 0, 0], [0, 0, 4, 0, 0, 0, 0, 0], [0, 0, 0, 0, 4, 0, 0, 0], [0, 0, 0, 0, 0, 0, 4, 0],
    [0, 0, 0, 0, 0, 4, 0, 0], [0, 0, 0, 0, 0, 2, 2, 0], [0, 0, 0, 0, 0, 1, 3, 0], [0, 0, 0, 0, 0, 0, 0, 4],
    [0, 0, 0, 1, 0, 0, 0, 2], [0, 0, 0, 1, 1, 0, 0, 1],
    [4, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 3]], dtype=np.int64)


def s2_wv2(data_dir: str | Path) -> dict[str, np.ndarray]:
    """Real-data Sentinel-2-like scene, 10 m grid 1152 x 1152: ``b10`` x4, ``b20`` 576^2 x6, ``b60`` 192^2 x2.

    MS crop 288 x 288 at :data:`S2_MS_ORIGIN`, nearest x4 then 5 x 5 box sum (MSu, times 25); PAN crop
    1152 x 1152 (offset 4x) and its 9 x 9 box sum Pl. Band s at the 10 m grid:
    X_s = round(4 * (W_s . MSu) * 81 (P + 1) / (4 * 25 (Pl + 81))) (S2_WV2_WEIGHTS, x4 DN scale).
    b10 = X (bands 0-3); b20 / b60 = rounded 2 x 2 / 6 x 6 block means of X (bands 4-9 / 10-11).
    """
    ms, pan = load_wv2(data_dir)
    r0, c0 = S2_MS_ORIGIN
    msc = ms[r0:r0 + 288, c0:c0 + 288].astype(np.int64)
    msu = box_sum2(np.repeat(np.repeat(msc, 4, axis=0), 4, axis=1), 5)
    p = pan[4 * r0:4 * r0 + 1152, 4 * c0:4 * c0 + 1152].astype(np.int64)
    pl = box_sum2(p, 9)
    x = np.empty((1152, 1152, 12), dtype=np.int64)
    for s in range(12):
        spec = (msu * S2_WV2_WEIGHTS[s]).sum(axis=2)
        x[:, :, s] = div_round(4 * spec * 81 * (p + 1), 4 * 25 * (pl + 81))
    return {"b10": to_u16(x[:, :, 0:4]), "b20": to_u16(div_round(block_sum(x[:, :, 4:10], 2), 4)),
            "b60": to_u16(div_round(block_sum(x[:, :, 10:12], 6), 36))}

"""The PyTorch operators (pansharp_iqa.torch_ops) against the NumPy/OpenCV core.

Every operator is compared with the core function it ports, on random real-valued and
integer-valued batches (N = 1 and 3; 1, 4 and 8 bands; sizes that are not multiples of the
blocks; contiguous, transposed and channels-last inputs), bit for bit where the port claims it,
otherwise within the stated tolerance. Bit for bit only where the arithmetic is exact (integer
sums, copies, rounding to integers); where the result depends on the order and fusion of
floating-point operations (convolutions, resampling, Sobel), PyTorch and OpenCV pick other kernels
on other CPUs, so the comparison across libraries is within :data:`CROSS_LIBRARY` of the largest
magnitude. Measured maxima on this machine (CPU, torch 2.13):

* bit-identical: ``to_uint16_matlab``, ``window_sums``/``window_square_sums``/``block_raw_moments``
  (integer data), ``toolbox_blocks``, ``block_centered_moments`` on 11-bit data in 32 x 32 blocks;
* ``interp23tap`` (ratios 2/4/8), ``imresize`` (scales 1/2, 1/4, 1/8, 0.3, 2, 3), ``sobel``: 0 here
  (vertical; magnitude on integer data), 1 ulp (magnitude on real data, OpenCV's FMA); 9e-13 on
  values of a few thousand (1 ulp, ~1e-16 of the largest) on an AVX-512 CPU; asserted at
  :data:`CROSS_LIBRARY` = 1e-13;
* ``filter_replicate``: max relative difference 9e-16 to the core (OpenCV's DFT) and 1e-15 to a
  direct sum (scipy.ndimage), asserted at 1e-13;
* ``window_sums`` on real-valued data: 8.5e-16 of the largest sum to OpenCV's running sums,
  asserted at 1e-13; 4e-16 to an 80-bit reference, asserted at 4e-15 (also on 4096 rows);
* ``block_centered_moments`` on real-valued data: 3e-16 (means) and 1.5e-15 (covariances) of the
  largest value, asserted at 1e-13;
* the UIQI map from these window sums (through the core's ``uiqi_from_window_sums``): the core's
  bit for bit on integer data, within 1.4e-14 on real-valued data (WV2 MS plus noise; the
  core's is 1.5e-14 from an 80-bit reference, this one 5e-15), asserted at 1e-13.

The real WV2 crops of ``../shared/data`` (skipped when absent): interp23tap of the MS, imresize
of the PAN by 1/4 (both within :data:`CROSS_LIBRARY`, 0 here) and the MS filtered with the WV2
MTF kernels (1e-13).
"""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy import ndimage

torch = pytest.importorskip("torch")

from pansharp_iqa import get_sensor
from pansharp_iqa import torch_ops as T
from pansharp_iqa.borders import border_index
from pansharp_iqa.hypercomplex import block_q_from_moments, integer_block_moments
from pansharp_iqa.indexes.q2n import q2n_strip
from pansharp_iqa.indexes.q2n import to_uint16_matlab as np_to_uint16
from pansharp_iqa.indexes.scc import sobel_rows
from pansharp_iqa.indexes.strips import StripImage, gather_blocks
from pansharp_iqa.indexes.uiqi import block_moments, uiqi_from_window_sums, uiqi_rows
from pansharp_iqa.mtf import filter_planes, mtf_filter, mtf_kernel
from pansharp_iqa.resample import imresize as np_imresize
from pansharp_iqa.resample import interp23tap as np_interp23tap
from pansharp_iqa.resample import interp23tap_planes
from pansharp_iqa.validation import InputError, SettingError, ShapeError

#: Largest |torch - core| as a fraction of the largest |core| where the two libraries' floating-point
#: operations differ in order or fusion (measured: at most 1.1e-16 on an AVX-512 CPU, 0 here)
CROSS_LIBRARY = 1e-13
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
KINDS = ["integer", "real"]


@pytest.fixture(scope="module", autouse=True)
def _one_cpu_thread():
    """PyTorch's OpenMP threads spin-wait on a machine whose cores are all busy (this shared one);
    one thread keeps the module fast there. Results do not depend on the thread count."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _data(kind: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "integer":
        return rng.integers(0, 2048, shape).astype(np.float64)
    return rng.normal(700.0, 300.0, shape)


def _tensor(x: np.ndarray, layout: str = "contiguous", device: str = "cpu") -> torch.Tensor:
    """The same values as a (N, C, H, W) tensor stored contiguously, transposed or channels-last."""
    if layout == "transposed":  # stored (N, C, W, H): non-contiguous H/W strides
        t = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).to(device).transpose(2, 3)
        assert not t.is_contiguous()
        return t
    t = torch.from_numpy(x.copy()).to(device)
    if layout == "channels_last":
        t = t.to(memory_format=torch.channels_last)
        assert not t.is_contiguous() or min(x.shape[1], x.shape[2] * x.shape[3]) == 1
    return t


def _np(t: torch.Tensor) -> np.ndarray:
    assert t.dtype == torch.float64
    return t.detach().cpu().numpy()


def _same_bits(actual: torch.Tensor, expected: np.ndarray) -> None:
    a = _np(actual)
    assert a.shape == expected.shape
    assert np.array_equal(a.view(np.int64), np.ascontiguousarray(expected, dtype=np.float64).view(np.int64)), (
        f"not bit-identical: max |diff| {np.max(np.abs(a - expected)):.3e}")


def _close(actual: torch.Tensor, expected: np.ndarray, rtol: float) -> None:
    a = _np(actual)
    assert a.shape == expected.shape
    np.testing.assert_allclose(a, expected, rtol=rtol, atol=0)


def _close_to_scale(actual: torch.Tensor, expected: np.ndarray, tol: float) -> None:
    """Differences within ``tol`` of the largest magnitude (for running sums, whose error is)."""
    a = _np(actual)
    assert a.shape == expected.shape
    err = float(np.max(np.abs(a - expected)) / np.max(np.abs(expected)))
    assert err <= tol, f"max |diff| / max |expected| = {err:.3e} > {tol:.1e}"


def _agrees(actual: torch.Tensor, expected: np.ndarray) -> None:
    """Torch against NumPy/OpenCV: within :data:`CROSS_LIBRARY` of the largest magnitude."""
    _close_to_scale(actual, expected, CROSS_LIBRARY)


def _per_plane(fn, x: np.ndarray) -> np.ndarray:
    return np.stack([[fn(np.ascontiguousarray(x[n, c])) for c in range(x.shape[1])] for n in range(x.shape[0])])


# ---------------------------------------------------------------------------------------- casts

def test_to_uint16_matlab_is_bit_identical_to_the_core():
    rng = np.random.default_rng(0)
    half = np.nextafter(0.5, 0.0)
    x = np.concatenate([
        rng.normal(1000.0, 3000.0, 5000), np.arange(-3, 70000, 0.5), [half, -half, 65534.5, 65535.5, 2.0**52,
                                                                      -2.0**60, 1e300, -0.0, np.nan, np.inf],
    ]).reshape(1, 1, -1, 2)
    out = T.to_uint16_matlab(_tensor(x, "transposed"))
    _same_bits(out, np_to_uint16(x.copy()))
    # other dtypes are read as float64
    assert T.to_uint16_matlab(torch.tensor([2.5], dtype=torch.float32)).tolist() == [3.0]


# ------------------------------------------------------------------------------------ interp23tap

@pytest.mark.parametrize("ratio", [2, 4, 8])
@pytest.mark.parametrize("shape,layout", [((1, 1, 9, 7), "contiguous"), ((3, 4, 6, 10), "transposed"),
                                          ((1, 8, 5, 4), "channels_last")])
@pytest.mark.parametrize("kind", KINDS)
def test_interp23tap_matches_the_core(kind, shape, layout, ratio):
    x = _data(kind, shape, seed=ratio)
    out = T.interp23tap(_tensor(x, layout), ratio)
    _agrees(out, np.stack([interp23tap_planes(x[n], ratio) for n in range(x.shape[0])]))


def test_interp23tap_equals_the_image_form_and_reads_any_dtype():
    x = _data("integer", (2, 3, 8, 6), seed=1)
    out = T.interp23tap(torch.from_numpy(x.astype(np.uint16).astype(np.int32)), 4)
    _agrees(out[1], np.moveaxis(np_interp23tap(x[1].transpose(1, 2, 0).astype(np.uint16), 4), 2, 0))


# --------------------------------------------------------------------------------------- imresize

@pytest.mark.parametrize("scale", [1 / 2, 1 / 4, 1 / 8, 0.3, 2, 3])
@pytest.mark.parametrize("shape,layout", [((1, 1, 37, 45), "contiguous"), ((3, 4, 64, 40), "transposed"),
                                          ((1, 8, 33, 17), "channels_last")])
@pytest.mark.parametrize("kind", KINDS)
def test_imresize_matches_the_core(kind, shape, layout, scale):
    if scale > 1 and shape[2] > 40:
        shape = (shape[0], shape[1], 20, 16)
    x = _data(kind, shape, seed=7)
    out = T.imresize(_tensor(x, layout), scale)
    ref = np.stack([np.moveaxis(np_imresize(x[n].transpose(1, 2, 0), scale), 2, 0) for n in range(x.shape[0])])
    _agrees(out, ref)


# -------------------------------------------------------------------------------- MTF filtering

def _direct_correlation(x: np.ndarray, kernels: np.ndarray) -> np.ndarray:
    """Independent reference: the direct sum over each window of the edge-replicated plane."""
    kh, kw = kernels.shape[1:]
    out = np.empty(x.shape)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            padded = np.pad(x[n, c], ((kh // 2, kh // 2), (kw // 2, kw // 2)), mode="edge")
            windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw))
            out[n, c] = np.tensordot(windows, kernels[c], axes=([2, 3], [0, 1]))
    return out


@pytest.mark.parametrize("ratio", [2, 4, 8])
@pytest.mark.parametrize("shape,layout", [((1, 1, 37, 45), "contiguous"), ((3, 4, 32, 40), "transposed"),
                                          ((1, 8, 48, 23), "channels_last")])
@pytest.mark.parametrize("kind", KINDS)
def test_filter_replicate_with_mtf_kernels_matches_the_core(kind, shape, layout, ratio):
    x = _data(kind, shape, seed=ratio)
    gnyq = get_sensor("WV2").gnyq_for(8)[: shape[1]]
    kernels = np.stack([mtf_kernel(g, ratio) for g in gnyq])
    out = T.filter_replicate(_tensor(x, layout), kernels)
    ref = np.stack([filter_planes(np.ascontiguousarray(x[n]), list(kernels)) for n in range(x.shape[0])])
    _close(out, ref, rtol=1e-13)  # measured <= 9e-16
    if ratio == 4:  # and a direct sum (scipy's for one plane)
        direct = _direct_correlation(x, kernels)
        _close(out, direct, rtol=1e-13)  # measured <= 1e-15
        np.testing.assert_allclose(ndimage.correlate(x[0, 0], kernels[0], mode="nearest"), direct[0, 0], rtol=1e-13)


def test_filter_replicate_correlates_with_the_kernels_centre_as_anchor():
    # an asymmetric, rectangular kernel tells correlation from convolution and the anchor
    rng = np.random.default_rng(5)
    x = _data("real", (2, 3, 19, 26), seed=5)
    kernels = rng.uniform(0.0, 1.0, (3, 5, 7))
    out = T.filter_replicate(_tensor(x), torch.from_numpy(kernels))
    _close(out, _direct_correlation(x, kernels), rtol=1e-12)
    one = T.filter_replicate(_tensor(x), kernels[0])  # one (kh, kw) kernel for every band
    _close(one, _direct_correlation(x, np.stack([kernels[0]] * 3)), rtol=1e-12)


def test_filter_replicate_of_images_smaller_than_the_kernel():
    x = _data("real", (2, 2, 5, 4), seed=6)
    kernels = np.stack([mtf_kernel(0.3, 4), mtf_kernel(0.25, 4)])
    ref = np.stack([filter_planes(np.ascontiguousarray(x[n]), list(kernels)) for n in range(2)])
    _close(T.filter_replicate(_tensor(x), kernels), ref, rtol=1e-13)


# ------------------------------------------------------------------------------------------ Sobel

@pytest.mark.parametrize("gradient", ["vertical", "magnitude"])
@pytest.mark.parametrize("shape,layout", [((1, 1, 37, 45), "contiguous"), ((3, 4, 16, 9), "transposed"),
                                          ((1, 8, 3, 5), "channels_last")])
@pytest.mark.parametrize("kind", KINDS)
def test_sobel_matches_the_core(kind, shape, layout, gradient):
    x = _data(kind, shape, seed=11)
    out = T.sobel(_tensor(x, layout), gradient)
    ref = _per_plane(lambda p: sobel_rows(p, gradient), x)
    _agrees(out, ref)  # 1 ulp on an AVX-512 CPU; OpenCV rounds gx*gx + gy*gy once (FMA)


# ------------------------------------------------------------------------------------ window sums

def _cv_window_sums(x: np.ndarray, bs: int, square: bool) -> np.ndarray:
    """What uiqi_rows takes from OpenCV: anchor (0, 0), zero border, cropped to the valid windows."""
    f = cv2.sqrBoxFilter if square else cv2.boxFilter
    h, w = x.shape[2] - bs + 1, x.shape[3] - bs + 1
    return _per_plane(lambda p: f(p, cv2.CV_64F, (bs, bs), anchor=(0, 0), normalize=False,
                                  borderType=cv2.BORDER_CONSTANT)[:h, :w], x)


def _exact_window_sums(x: np.ndarray, bs: int, square: bool) -> np.ndarray:
    """80-bit reference: each window summed on its own in extended precision."""
    v = x.astype(np.longdouble)
    v = v * v if square else v
    return np.lib.stride_tricks.sliding_window_view(v, (bs, bs), axis=(2, 3)).sum(axis=(-2, -1))


@pytest.mark.parametrize("square", [False, True])
@pytest.mark.parametrize("bs", [1, 7, 32])
@pytest.mark.parametrize("shape,layout", [((1, 1, 37, 45), "contiguous"), ((3, 4, 40, 33), "transposed"),
                                          ((1, 8, 32, 35), "channels_last")])
@pytest.mark.parametrize("kind", KINDS)
def test_window_sums_match_the_box_filters(kind, shape, layout, bs, square):
    x = _data(kind, shape, seed=bs)
    fn = T.window_square_sums if square else T.window_sums
    out = fn(_tensor(x, layout), bs)
    ref = _cv_window_sums(x, bs, square)
    if kind == "integer":
        _same_bits(out, ref)
    else:
        # OpenCV's running sums carry errors of their largest magnitude (1e-12 relative on small
        # windows next to large ones): compared to the scale; measured 8.5e-16
        _close_to_scale(out, ref, 1e-13)
        exact = _exact_window_sums(x, bs, square)
        assert float(np.max(np.abs(_np(out) - exact) / np.abs(exact))) < 4e-15  # measured 4e-16


@pytest.mark.parametrize("kind", KINDS)
def test_window_sums_give_the_cores_uiqi_map(kind):
    # the sums uiqi_rows takes from OpenCV, fed to the shared per-window formula
    x = _data(kind, (1, 1, 70, 50), seed=8)[0, 0]
    y = x + np.round(np.random.default_rng(9).normal(0.0, 25.0, x.shape))
    c_sum, c_diff = float(np.round(x.mean()) + np.round(y.mean())), float(np.round(x.mean()) - np.round(y.mean()))
    p, m = _tensor((x + y - c_sum)[None, None]), _tensor((x - y - c_diff)[None, None])
    q = uiqi_from_window_sums(T.window_sums(p, 32), T.window_square_sums(p, 32), T.window_sums(m, 32),
                              T.window_square_sums(m, 32), n=1024.0, c_sum=c_sum, c_diff=c_diff)
    core = uiqi_rows(x, y, 32, (float(np.round(x.mean())), float(np.round(y.mean()))))
    if kind == "integer":
        _same_bits(q[0, 0], core)
    else:  # measured 1.4e-14 on the WV2 MS (the core's running sums are the less accurate)
        np.testing.assert_allclose(_np(q[0, 0]), core, rtol=0, atol=1e-13)


def test_window_sum_error_does_not_grow_with_the_image_height():
    x = _data("real", (1, 1, 4096, 40), seed=3)
    for square in (False, True):
        out = (T.window_square_sums if square else T.window_sums)(_tensor(x), 32)
        exact = _exact_window_sums(x, 32, square)
        assert float(np.max(np.abs(_np(out) - exact) / np.abs(exact))) < 4e-15


# ----------------------------------------------------------------------------------------- blocks

@pytest.mark.parametrize("bs", [32, 8, 5])
@pytest.mark.parametrize("shape,layout", [((1, 1, 37, 45), "contiguous"), ((3, 4, 64, 40), "transposed"),
                                          ((1, 8, 32, 32), "channels_last"), ((2, 3, 20, 50), "contiguous")])
def test_toolbox_blocks_are_the_cores_gathered_blocks(shape, layout, bs):
    x = _data("real", shape, seed=bs)
    out = T.toolbox_blocks(_tensor(x, layout), bs)
    h = shape[2]
    rows = border_index(np.arange(-(-h // bs) * bs), h, "symmetric")
    _same_bits(out, np.stack([gather_blocks(x[n][:, rows], bs) for n in range(shape[0])]))
    # the strip reader q2n_strip uses (rows mirrored by index, (H, W, C) storage)
    strip = StripImage(np.ascontiguousarray(x[0].transpose(1, 2, 0)))
    _same_bits(out[0], strip.blocks(slice(None) if rows.size == h else rows, bs))


def test_toolbox_blocks_never_returns_a_view_of_the_input():
    x = torch.zeros((1, 1, 4, 4), dtype=torch.float64)
    blocks = T.toolbox_blocks(x, 4)
    blocks += 1.0
    assert float(x.sum()) == 0.0


@pytest.mark.parametrize("bands", [4, 8])
@pytest.mark.parametrize("shape", [(1, 64, 96), (3, 45, 70)])
def test_block_raw_moments_give_the_cores_q2n_blocks(shape, bands):
    n, h, w = shape
    ref = _data("integer", (n, bands, h, w), seed=bands)
    fus = ref + np.random.default_rng(1).normal(0.0, 40.0, ref.shape)
    bs = 32
    rb = T.to_uint16_matlab(T.toolbox_blocks(_tensor(ref, "transposed"), bs))
    fb = T.to_uint16_matlab(T.toolbox_blocks(_tensor(fus), bs))
    sums = T.block_raw_moments(rb, fb)
    r0, f0 = _np(rb), _np(fb)
    expected = (r0.sum(axis=3), f0.sum(axis=3), np.einsum("nbcp,nbcp->nbc", r0, r0),
                np.einsum("nbcp,nbcp->nbc", f0, f0), np.matmul(r0, f0.transpose(0, 1, 3, 2)))
    for got, want in zip(sums, expected, strict=True):
        _same_bits(got, want)
    # fed to the core's finalize, the sums give the core's Q2n block values bit for bit
    for i in range(n):
        moments = integer_block_moments(*(_np(s)[i] for s in sums), bs * bs)
        q = block_q_from_moments(*moments, n_pix=bs * bs)
        core = q2n_strip(StripImage(ref[i].transpose(1, 2, 0)), StripImage(fus[i].transpose(1, 2, 0)), 0, h, bs)
        assert np.array_equal(q, core)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape,bs", [((1, 4, 64, 96), 32), ((3, 8, 64, 70), 32), ((2, 1, 30, 47), 15)])
def test_block_centered_moments_match_the_cores_block_moments(kind, shape, bs):
    x = _data(kind, shape, seed=bs)
    pan = _data(kind, (shape[0], 1) + shape[2:], seed=99)
    blocks = T.toolbox_blocks(torch.cat([_tensor(x, "transposed"), _tensor(pan)], dim=1), bs)
    mean, cov = T.block_centered_moments(blocks)
    for n in range(shape[0]):
        ref_mean, ref_cov = block_moments(x[n].transpose(1, 2, 0), bs, extra=pan[n, 0])
        if kind == "integer" and bs == 32:  # 11-bit data in 32 x 32 blocks: every product and sum exact
            _same_bits(mean[n], ref_mean)
            _same_bits(cov[n], ref_cov)
        else:
            scale = np.abs(ref_cov).max()
            assert np.max(np.abs(_np(mean[n]) - ref_mean)) <= 1e-13 * np.abs(ref_mean).max()  # 3e-16
            assert np.max(np.abs(_np(cov[n]) - ref_cov)) <= 1e-13 * scale  # measured 1.5e-15


# ------------------------------------------------------------------------------ devices, refusals

@pytest.mark.parametrize("device", DEVICES)
def test_results_stay_on_the_inputs_device_in_float64(device):
    x = _data("integer", (2, 4, 24, 20), seed=0)
    t = _tensor(x, device=device)
    k = np.stack([mtf_kernel(0.3, 4)] * 4)
    outs = [T.to_uint16_matlab(t), T.interp23tap(t, 2), T.imresize(t, 0.5), T.filter_replicate(t, k),
            T.sobel(t, "magnitude"), T.window_sums(t, 8), T.window_square_sums(t, 8), T.toolbox_blocks(t, 8),
            *T.block_raw_moments(T.toolbox_blocks(t, 8), T.toolbox_blocks(t, 8)),
            *T.block_centered_moments(T.toolbox_blocks(t, 8))]
    for out in outs:
        assert out.device.type == device and out.dtype == torch.float64
    _agrees(outs[1], np.stack([interp23tap_planes(x[n], 2) for n in range(2)]))
    _agrees(outs[4], _per_plane(lambda p: sobel_rows(p, "magnitude"), x))


BATCH_OPS = {
    "interp23tap": lambda t: T.interp23tap(t, 4),
    "imresize": lambda t: T.imresize(t, 0.25),
    "filter_replicate": lambda t: T.filter_replicate(t, mtf_kernel(0.3, 4)),
    "sobel": lambda t: T.sobel(t, "vertical"),
    "window_sums": lambda t: T.window_sums(t, 4),
    "window_square_sums": lambda t: T.window_square_sums(t, 4),
    "toolbox_blocks": lambda t: T.toolbox_blocks(t, 4),
}


@pytest.mark.parametrize("name", sorted(BATCH_OPS))
def test_operators_refuse_what_is_not_a_batch(name):
    op = BATCH_OPS[name]
    with pytest.raises(ShapeError, match=r"\(N, C, H, W\)"):
        op(torch.zeros((8, 8, 2), dtype=torch.float64))  # an (H, W, B) image: add the batch axes
    with pytest.raises(InputError, match="torch.Tensor"):
        op(np.zeros((1, 1, 8, 8)))
    with pytest.raises(InputError, match="real"):
        op(torch.zeros((1, 1, 8, 8), dtype=torch.complex128))
    assert op(torch.ones((1, 1, 8, 8), dtype=torch.float32)).dtype == torch.float64  # neighbours: any real dtype


def test_settings_that_would_give_wrong_numbers_are_refused():
    x = torch.ones((1, 2, 8, 8), dtype=torch.float64)
    with pytest.raises(SettingError, match="power of two"):
        T.interp23tap(x, 3)
    with pytest.raises(SettingError, match="positive"):
        T.imresize(x, 0)
    with pytest.raises(ShapeError, match="odd"):
        T.filter_replicate(x, np.ones((4, 4)))
    with pytest.raises(ShapeError, match="C = 2"):
        T.filter_replicate(x, np.ones((3, 5, 5)))
    with pytest.raises(ShapeError, match="larger than the images"):
        T.window_sums(x, 9)
    with pytest.raises(SettingError, match="gradient"):
        T.sobel(x, "horizontal")
    with pytest.raises(ShapeError, match="differ in shape"):
        T.block_raw_moments(torch.ones((1, 2, 2, 4)), torch.ones((1, 2, 3, 4)))
    # their legitimate neighbours give numbers
    assert T.interp23tap(x, 8).shape == (1, 2, 64, 64)
    assert T.imresize(x, 1.5).shape == (1, 2, 12, 12)
    assert T.filter_replicate(x, np.ones((2, 5, 3)) / 15).shape == x.shape
    assert float(T.window_sums(x, 8).sum()) == 128.0


# -------------------------------------------------------------------------------------- real data

def _shared_data() -> Path | None:
    env = os.environ.get("PANSHARP_SHARED_DATA")
    # the variable overrides (PANSHARP_SHARED_DATA=/nonexistent: as if the data were absent)
    default = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    candidates = [Path(env), Path(env) / "data"] if env else [default]
    return next((c for c in candidates if (c / "imgWV2.mat").is_file()), None)


@pytest.fixture(scope="module")
def wv2() -> dict[str, np.ndarray]:
    folder = _shared_data()
    if folder is None:
        pytest.skip("real data imgWV2.mat not found (../shared/data or $PANSHARP_SHARED_DATA)")
    from scipy.io import loadmat

    mat = loadmat(str(folder / "imgWV2.mat"))
    return {"ms": mat["I_MS"], "pan": mat["I_PAN"]}


def test_real_wv2_interp23tap_of_the_ms(wv2):
    ms = wv2["ms"]  # 320 x 320 x 8 uint16
    out = T.interp23tap(torch.from_numpy(ms.astype(np.float64).transpose(2, 0, 1))[None], 4)
    _agrees(out[0], np.moveaxis(np_interp23tap(ms, 4), 2, 0))


def test_real_wv2_imresize_of_the_pan(wv2):
    pan = wv2["pan"]  # 1280 x 1280 uint16
    out = T.imresize(torch.from_numpy(pan.astype(np.float64))[None, None], 1 / 4)
    _agrees(out[0, 0], np_imresize(pan, 1 / 4))


def test_real_wv2_mtf_filtering_of_the_ms(wv2):
    ms = wv2["ms"]
    gnyq = get_sensor("WV2").gnyq_for(8)
    kernels = np.stack([mtf_kernel(g, 4) for g in gnyq])
    out = T.filter_replicate(torch.from_numpy(ms.transpose(2, 0, 1).astype(np.float64))[None], kernels)
    _close(out[0], np.moveaxis(mtf_filter(ms, gnyq, 4), 2, 0), rtol=1e-13)

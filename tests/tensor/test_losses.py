"""The differentiable full-resolution indexes (pansharp_iqa.tensor.losses) against the exact ones.

* values: equal to the numpy core (``pansharp_iqa.d_s``, ``d_lambda_k``, ``hqnr`` and the GRSM 2022
  ``d_s_r`` / ``rqnr``) and to the authors' MATLAB code run in Octave (tests/spec/data/grsm2022)
  within 1e-10 relative in float64, D_lambda_K with the reference's cast applied
  (``cast="straight-through"``); without the cast, equal to the library's float Q2n of the uncast
  images, and within the measured deviation of the exact index on the real crops (skipped without
  ``../shared/data``);
* gradients: ``torch.autograd.gradcheck`` against finite differences in float64, full Jacobians on
  tiny inputs and random projections (``fast_mode``) on 2 x 4 x 64 x 64 batches; finite gradients
  at the non-differentiable points the module names;
* float32, refusals, and the package importing without torch.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spec"))
import grsm2022_inputs as G  # noqa: E402  (tests/spec helpers: the fixture's inputs)
import pansharp_iqa as pi  # noqa: E402
from pansharp_iqa import torch_ops  # noqa: E402
from pansharp_iqa.hypercomplex import block_q_values  # noqa: E402
from pansharp_iqa.indexes import regression as R  # noqa: E402
from pansharp_iqa.indexes.strips import StripImage  # noqa: E402
from pansharp_iqa.mtf import filter_planes, mtf_kernel  # noqa: E402
from pansharp_iqa.sensors import resolve_sensor  # noqa: E402
from pansharp_iqa.tensor import losses as L  # noqa: E402
from pansharp_iqa.validation import ConstantBlockError, InputError, SettingError, ShapeError  # noqa: E402
from spec_helpers import load_mat  # noqa: E402

DEVICE = os.environ.get("PANSHARP_TEST_DEVICE", "cpu")
FIXTURE = Path(__file__).resolve().parents[1] / "spec" / "data" / "grsm2022" / "grsm2022.npz"
#: torch against numpy / Octave (float64): the sums run in another order
RTOL = 1e-10
#: |D_lambda_K without the cast - exact| on the fixture's real crops (measured: at most 4.8e-4, IKONOS
#: EXP; benchmarks/measure_losses.py has the 512 x 512 crops too)
CAST_ATOL = 1e-3


@pytest.fixture(scope="module", autouse=True)
def _one_cpu_thread():
    """One PyTorch thread: its OpenMP threads spin-wait on a machine whose cores are all busy."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _t(a: np.ndarray) -> torch.Tensor:
    """An (H, W, B) image or (H, W) PAN as a (1, C, H, W) float64 tensor."""
    a = np.asarray(a, dtype=np.float64)
    a = a[:, :, None] if a.ndim == 2 else a
    return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))[None].to(DEVICE)


def _rel(got: torch.Tensor | float, want: float, what: str, rtol: float = RTOL) -> None:
    got = float(got)
    assert abs(got - float(want)) <= rtol * abs(float(want)), f"{what}: {got!r} != {float(want)!r}"


@functools.cache
def _fixture() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


@functools.cache
def _case(case: str) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], str]:
    """MS, PAN, fused images and sensor of a fixture case (real crops rebuilt from ../shared/data)."""
    fx = _fixture()
    if case in G.SYNTHETIC:
        ms, pan = fx[f"{case}_ms"], fx[f"{case}_pan"]
        fused = {f: fx[f"{case}_{f}"] for f in G.FUSIONS}
    else:
        name, _, crop = G.REAL_SCENES[case]
        ms, pan = G.real_pair(load_mat(name), crop)
        assert G.sha256_array(ms) == str(fx[f"{case}_ms_sha256"]), "not the generator's crop"
        fused = G.fused_images(ms, pan)
    return ms, pan, fused, str(fx[f"{case}_sensor"])


CASES = [(c, f) for c in (*G.SYNTHETIC, *G.REAL_SCENES) for f in G.FUSIONS]


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_equal_to_the_exact_indexes_and_to_octave(case, fusion):
    fx, key = _fixture(), f"{case}_{fusion}_"
    ms, pan, fused, sensor = _case(case)
    img, exp = fused[fusion], fused["exp"]
    f, m, p, e = _t(img), _t(ms), _t(pan), _t(exp)
    common = {"ratio": G.RATIO, "ms_exp": exp}
    gnyq = resolve_sensor(sensor).gnyq_for(ms.shape[2])
    st = {"ratio": G.RATIO, "sensor": sensor, "cast": "straight-through", "ms_exp": e}

    ds = L.d_s(f, m, p, ratio=G.RATIO, ms_exp=e)
    _rel(ds, pi.d_s(img, ms, pan, **common), f"{key}D_s vs the core")
    _rel(ds, fx[key + "ds_q"], f"{key}D_s vs Octave")
    dlk = L.d_lambda_k(f, m, **st)
    _rel(dlk, pi.d_lambda_k(img, ms, sensor=sensor, **common), f"{key}D_lambda_K vs the core")
    _rel(dlk, fx[key + "d_lambda_k"], f"{key}D_lambda_K vs Octave")
    h = L.hqnr(f, m, p, **st)
    _rel(h, pi.hqnr(img, ms, pan, sensor=sensor, **common), f"{key}HQNR vs the core")
    _rel(h, fx[key + "hqnr"], f"{key}HQNR vs Octave")
    h_ab = L.hqnr(f, m, p, alpha=float(fx["alpha_hqnr"]), beta=float(fx["beta_hqnr"]), **st)
    _rel(h_ab, fx[key + "hqnr_ab"], f"{key}HQNR (overall exponents) vs Octave")
    dsr = L.d_s_r(f, p)
    _rel(dsr, R.d_s_r(img, pan), f"{key}D_s_R vs the core")
    _rel(dsr, fx[key + "ds_r"], f"{key}D_s_R vs Octave")
    rq = L.rqnr(f, m, p, **st)
    _rel(rq, R.rqnr(img, exp, pan, gnyq=gnyq, ratio=G.RATIO), f"{key}RQNR vs the core")
    _rel(rq, fx[key + "rqnr"], f"{key}RQNR vs Octave")
    a, b = float(fx["alpha_rqnr"]), float(fx["beta_rqnr"])
    _rel(L.rqnr(f, m, p, alpha=a, beta=b, **st), fx[key + "rqnr_ab"], f"{key}RQNR (overall exponents) vs Octave")


@pytest.mark.parametrize(("case", "fusion"), CASES)
def test_d_lambda_k_without_the_cast(case, fusion):
    ms, pan, fused, sensor = _case(case)
    img, exp = fused[fusion], fused["exp"]
    got = L.d_lambda_k(_t(img), _t(ms), ratio=G.RATIO, sensor=sensor, ms_exp=_t(exp))
    # the library's float Q2n (no cast) of the same blocks
    gnyq = resolve_sensor(sensor).gnyq_for(ms.shape[2])
    planes = np.ascontiguousarray(np.moveaxis(img, 2, 0))
    low = StripImage(filter_planes(planes, [mtf_kernel(g, G.RATIO) for g in gnyq]), bands_first=True)
    rows = slice(0, img.shape[0])
    ref_blocks, low_blocks = StripImage(exp).blocks(rows, G.BLOCK), low.blocks(rows, G.BLOCK)
    _rel(got, 1.0 - block_q_values(ref_blocks, low_blocks).mean(), "D_lambda_K without the cast")
    # and within the measured deviation of the exact index (the cast alone differs)
    exact = pi.d_lambda_k(img, ms, sensor=sensor, ratio=G.RATIO, ms_exp=exp)
    assert 0 < abs(float(got) - exact) < CAST_ATOL


def test_computed_exp_batches_and_reduction():
    # EXP computed inside from the MS, two images at once, mean reduction
    rng = np.random.default_rng(5)
    ms = [np.round(rng.uniform(100, 1800, (16, 16, 4))) for _ in range(2)]
    pan = [np.round(rng.uniform(100, 1800, (64, 64))) for _ in range(2)]
    fused = [pi.interp23tap(x, 4) + rng.normal(0, 20, (64, 64, 4)) for x in ms]
    f, m, p = (torch.cat([_t(a) for a in x]) for x in (fused, ms, pan))
    ds = L.d_s(f, m, p[:, 0], ratio=4)  # an (N, H, W) PAN
    dlk = L.d_lambda_k(f, m, ratio=4, sensor="QB", cast="straight-through")
    for i in range(2):
        _rel(ds[i], pi.d_s(fused[i], ms[i], pan[i], ratio=4), f"D_s image {i}")
        _rel(dlk[i], pi.d_lambda_k(fused[i], ms[i], sensor="QB", ratio=4), f"D_lambda_K image {i}")
        _rel(L.d_s(f, m, p, ratio=4, q=2.0)[i], pi.d_s(fused[i], ms[i], pan[i], ratio=4, q=2.0), "D_s q=2")
    assert ds.shape == (2,) and ds.dtype == torch.float64
    _rel(L.d_s(f, m, p, ratio=4, reduction="mean"), float(ds.mean()), "mean reduction")
    _rel(L.rqnr(f, m, p, ratio=4, gnyq=(0.34, 0.32, 0.30, 0.22), reduction="mean"),
         float(L.rqnr(f, m, p, ratio=4, sensor="QB").mean()), "gnyq = the sensor's")


def test_float32_is_computed_in_float32():
    rng = np.random.default_rng(6)
    ms = np.round(rng.uniform(100, 1800, (16, 16, 4)))
    pan = np.round(rng.uniform(100, 1800, (64, 64)))
    fused = pi.interp23tap(ms, 4) + rng.normal(0, 20, (64, 64, 4))
    f64 = _t(fused)
    f32 = f64.float().requires_grad_()
    for name, fn in {"d_s": lambda f: L.d_s(f, _t(ms), _t(pan), ratio=4),
                     "hqnr": lambda f: L.hqnr(f, _t(ms), _t(pan), ratio=4, sensor="QB"),
                     "rqnr": lambda f: L.rqnr(f, _t(ms), _t(pan), ratio=4, sensor="QB")}.items():
        v32 = fn(f32)
        assert v32.dtype == torch.float32, name
        v32.sum().backward()
        assert f32.grad is not None and f32.grad.dtype == torch.float32 and torch.isfinite(f32.grad).all()
        f32.grad = None
        assert abs(float(v32.detach()) - float(fn(f64))) < 1e-5, name


def test_d_s_r_with_linearly_dependent_bands():
    # a band repeated: the exact index is the residual of the fit on the column space (NumPy's
    # minimum-norm solution); the CPU solver (gelsy, rank-revealing) returns it, gradients stay finite
    rng = np.random.default_rng(7)
    img = rng.uniform(100, 1000, (32, 32, 3))
    img = np.concatenate([img, img[:, :, :1]], axis=2)
    pan = img[:, :, :3] @ np.array([0.5, 0.3, 0.2]) + rng.normal(0, 30, (32, 32))
    f = _t(img).requires_grad_()
    value = L.d_s_r(f, _t(pan))
    _rel(value, R.d_s_r(img, pan), "D_s_R with a repeated band", rtol=1e-8)
    value.sum().backward()
    assert torch.isfinite(f.grad).all()


# --------------------------------------------------------------------------- gradients


def _smooth_batch(n: int, c: int, size: int, ratio: int, seed: int):
    """Fused (requires grad), MS, PAN and EXP of n images, DN-like, nothing constant."""
    g = torch.Generator().manual_seed(seed)
    ms = 300 + 1500 * torch.rand(n, c, size // ratio, size // ratio, generator=g, dtype=torch.float64)
    exp = torch_ops.interp23tap(ms, ratio)
    fused = exp + 40 * torch.rand(n, c, size, size, generator=g, dtype=torch.float64)
    pan = fused.mean(dim=1, keepdim=True) + 60 * torch.rand(n, 1, size, size, generator=g, dtype=torch.float64)
    return fused.to(DEVICE).requires_grad_(), ms.to(DEVICE), pan.to(DEVICE), exp.to(DEVICE)


def _functions(ms, pan, exp, ratio, bs):
    c = ms.shape[1]
    kw = {"ratio": ratio, "block_size": bs, "ms_exp": exp}
    return {
        "d_s": lambda f: L.d_s(f, ms, pan, **kw),
        "d_s q=2": lambda f: L.d_s(f, ms, pan, q=2.0, **kw),
        "d_lambda_k": lambda f: L.d_lambda_k(f, ms, gnyq=(0.3,) * c, **kw),
        "hqnr": lambda f: L.hqnr(f, ms, pan, gnyq=(0.3,) * c, alpha=0.98, beta=0.89, **kw),
        "d_s_r": lambda f: L.d_s_r(f, pan),
        "rqnr": lambda f: L.rqnr(f, ms, pan, gnyq=(0.3,) * c, alpha=1.81, beta=0.9, **kw),
    }


@pytest.mark.parametrize("name", ["d_s", "d_s q=2", "d_lambda_k", "hqnr", "d_s_r", "rqnr"])
def test_gradcheck_full_jacobian_on_tiny_images(name):
    # every entry of the Jacobian against central differences: 1 image, 3 bands (Q2n pads to 4), 8 x 8,
    # ratio 2, 4-pixel blocks (4 blocks)
    fused, ms, pan, exp = _smooth_batch(1, 3, 8, 2, seed=1)
    fn = _functions(ms, pan, exp, 2, 4)[name]
    assert torch.autograd.gradcheck(fn, (fused,), eps=1e-6, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("name", ["d_s", "d_s q=2", "d_lambda_k", "hqnr", "d_s_r", "rqnr"])
def test_gradcheck_random_projections_on_batches(name):
    # 2 images, 4 bands, 64 x 64 PAN, ratio 4, 32-pixel blocks: v^T J u for random u, v
    fused, ms, pan, exp = _smooth_batch(2, 4, 64, 4, seed=2)
    fn = _functions(ms, pan, exp, 4, 32)[name]
    assert torch.autograd.gradcheck(fn, (fused,), eps=1e-6, atol=1e-8, rtol=1e-6, fast_mode=True)


def test_gradcheck_fails_on_a_wrong_gradient():
    # the check can fail: a function whose backward is off by a factor
    fused, ms, pan, exp = _smooth_batch(1, 3, 8, 2, seed=1)

    class Doubled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    fn = _functions(ms, pan, exp, 2, 4)["d_lambda_k"]
    assert not torch.autograd.gradcheck(lambda f: fn(Doubled.apply(f)), (fused,), eps=1e-6, atol=1e-8,
                                        rtol=1e-6, raise_exception=False)


def test_straight_through_gradient_is_the_uncast_one_at_the_cast_images():
    fused, ms, _, exp = _smooth_batch(1, 4, 64, 4, seed=3)
    kw = {"ratio": 4, "sensor": "QB"}
    L.d_lambda_k(fused, ms, cast="straight-through", **kw).sum().backward()
    g_st, fused.grad = fused.grad.clone(), None
    L.d_lambda_k(fused, ms, **kw).sum().backward()
    g_none = fused.grad
    # not zero (the cast's own derivative), and close to the uncast gradient (rounding is small in DN)
    assert g_st.abs().max() > 0
    assert (g_st - g_none).norm() < 0.05 * g_none.norm()
    assert not torch.equal(g_st, g_none)


def test_gradients_at_the_non_differentiable_points_are_finite():
    # an EXP block constant: the cross-moments vanish exactly, q = 0 there (the modulus' kink:
    # subgradient 0, where sqrt(sum q^2) would give NaN); its std is floored to eps as the reference's
    fused, ms, pan, exp = _smooth_batch(1, 4, 64, 4, seed=4)
    exp_flat = exp.clone()
    exp_flat[:, :, :32, :32] = 500.0
    value = L.d_lambda_k(fused, ms, ratio=4, sensor="QB", ms_exp=exp_flat)
    value.sum().backward()
    assert torch.isfinite(value).all() and torch.isfinite(fused.grad).all()
    # the constant block's value is 0: it alone adds 1/4 to D_lambda_K
    assert float(value) > 0.25 > float(L.d_lambda_k(fused, ms, ratio=4, sensor="QB", ms_exp=exp))
    # |.| in D_s at 0 (a band's two mean UIQIs equal): PyTorch's subgradient sign(0) = 0
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    torch.abs(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# --------------------------------------------------------------------------- refusals


def test_refusals():
    fused, ms, pan, exp = _smooth_batch(1, 4, 64, 4, seed=5)
    with pytest.raises(InputError, match="torch.Tensor"):
        L.d_s_r(fused.detach().numpy(), pan)
    with pytest.raises(InputError, match="float32 or float64"):
        L.d_s_r(fused.detach().half(), pan)
    with pytest.raises(SettingError, match="exactly one"):
        L.d_lambda_k(fused, ms, ratio=4)
    with pytest.raises(SettingError, match="exactly one"):
        L.d_lambda_k(fused, ms, ratio=4, sensor="QB", gnyq=(0.3,) * 4)
    with pytest.raises(SettingError, match="gnyq has 3 values"):
        L.d_lambda_k(fused, ms, ratio=4, gnyq=(0.3,) * 3)
    with pytest.raises(SettingError, match="cast"):
        L.d_lambda_k(fused, ms, ratio=4, sensor="QB", cast="round")  # type: ignore[arg-type]
    with pytest.raises(SettingError, match="reduction"):
        L.d_s_r(fused, pan, reduction="sum")  # type: ignore[arg-type]
    with pytest.raises(SettingError, match="q must be a finite number > 0"):
        L.d_s(fused, ms, pan, ratio=4, q=0)
    with pytest.raises(SettingError, match="alpha must be a finite number >= 0"):
        L.rqnr(fused, ms, pan, ratio=4, sensor="QB", alpha="one")  # type: ignore[arg-type]
    with pytest.raises(SettingError, match="power of two"):
        L.d_s(fused, ms, pan, ratio=3)
    with pytest.raises(ShapeError, match="multiple of the block size"):
        L.d_s(fused, ms, pan, ratio=4, block_size=48)
    with pytest.raises(ShapeError, match="ratio=2"):
        L.d_s(fused, ms, pan, ratio=2)
    with pytest.raises(ShapeError, match="2 images but fused has 1"):
        L.d_s_r(fused, torch.cat([pan, pan]))
    with pytest.raises(InputError, match="different devices"):
        L.d_s_r(fused, pan.to("meta"))
    flat, flat_pan = torch.full_like(fused, 3.0), torch.full_like(pan, 9.0)  # UIQI 0/0 on every block
    with pytest.raises(ConstantBlockError, match="constant"):
        L.d_s(flat, ms, flat_pan, ratio=4)
    nan = L.d_s(flat, ms, flat_pan, ratio=4, nan_policy="propagate")
    assert torch.isnan(nan).all()


def test_the_package_imports_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import pansharp_iqa, pansharp_iqa.tensor\n"
            "try:\n    import pansharp_iqa.tensor.losses\nexcept ImportError:\n    print('needs torch')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "needs torch"

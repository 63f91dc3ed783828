"""Operator self-check: every operator NLRNet and its loss use, against numpy, on one device.

For each operator, the forward value and the gradient of ``sum(out * R)`` (R fixed random) with
respect to every input are computed by MindSpore (float32) in graph and PyNative modes and by a
numpy float64 reference (gradients by central finite differences). A silently wrong kernel
(e.g. ``ops.norm`` returning NaN on one backend) shows up as a mismatch row. Operators of
Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["Check", "run_doctor", "format_table", "numpy_conv2d", "numpy_instance_norm"]

FWD_RTOL = 1e-4
GRAD_RTOL = 2e-3


def numpy_conv2d(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """Cross-correlation (N, C, H, W) * (O, C, k, k) with zero padding ``pad`` (stride 1)."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[-1]
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))  # N C H W k k
    return np.einsum("nchwij,ocij->nohw", win, w)


def numpy_instance_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                        eps: float = 1e-5) -> np.ndarray:
    """InstanceNorm over (H, W) per sample and channel (biased variance), affine."""
    m = x.mean(axis=(2, 3), keepdims=True)
    v = x.var(axis=(2, 3), keepdims=True)
    return (x - m) / np.sqrt(v + eps) * gamma[None, :, None, None] + beta[None, :, None, None]


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@dataclasses.dataclass
class Check:
    """One operator check result (relative errors: max |ms - ref| / max |ref|)."""

    op: str
    mode: str
    forward_err: float
    grad_err: float
    ok: bool
    note: str = ""


def _cells():  # noqa: ANN202 - module of mindspore cells, built on first use
    import mindspore as ms
    from mindspore import nn, ops

    from .losses import band_difference, pixel_cosine

    class Conv(nn.Cell):
        def __init__(self, pad: int) -> None:
            super().__init__()
            self.pad = pad
            self.mode = "pad" if pad else "valid"

        def construct(self, x, w):  # noqa: ANN001, ANN201
            return ops.conv2d(x, w, pad_mode=self.mode, padding=self.pad)

    class GN(nn.Cell):
        def construct(self, x, g, b):  # noqa: ANN001, ANN201
            return ops.group_norm(x, x.shape[1], g, b, 1e-5)

    class LReLU(nn.Cell):
        def construct(self, x):  # noqa: ANN001, ANN201
            return ops.leaky_relu(x, 0.2)

    class Softmax(nn.Cell):
        def construct(self, z):  # noqa: ANN001, ANN201
            return ops.softmax(z, axis=-1)

    class Pool(nn.Cell):
        def construct(self, x, m):  # noqa: ANN001, ANN201
            n, c, h, w = x.shape
            wts = ops.softmax(m.reshape(n, 1, h * w), axis=-1)
            return ops.matmul(x.reshape(n, c, h * w), wts.transpose(0, 2, 1))

    class Conv1d(nn.Cell):
        def construct(self, x, w):  # noqa: ANN001, ANN201
            return ops.conv1d(x, w, pad_mode="pad", padding=4)

    class Cos(nn.Cell):
        def construct(self, x, y):  # noqa: ANN001, ANN201
            return ops.cosine_similarity(x, y, dim=1)

    class PixCos(nn.Cell):
        def construct(self, x, y):  # noqa: ANN001, ANN201
            return pixel_cosine(x, y)

    class Norm(nn.Cell):
        def construct(self, x):  # noqa: ANN001, ANN201
            return ops.norm(x, dim=1)

    class L1(nn.Cell):
        def construct(self, x, y):  # noqa: ANN001, ANN201
            return ops.abs(x - y).mean()

    class BandDiff(nn.Cell):
        def construct(self, x):  # noqa: ANN001, ANN201
            return band_difference(x)

    class SqrtMax(nn.Cell):
        def construct(self, x):  # noqa: ANN001, ANN201
            return ops.sqrt(ops.maximum(x * x, 1e-4))

    class Objective(nn.Cell):
        def __init__(self, op: nn.Cell, weight: ms.Tensor) -> None:
            super().__init__()
            self.op, self.weight = op, weight

        def construct(self, *args):  # noqa: ANN002, ANN201
            return (self.op(*args) * self.weight).sum()

    class Grad(nn.Cell):
        def __init__(self, objective: nn.Cell) -> None:
            super().__init__()
            self.objective = objective
            self.grad = ops.GradOperation(get_all=True)

        def construct(self, *args):  # noqa: ANN002, ANN201
            return self.grad(self.objective)(*args)

    return dict(Conv=Conv, GN=GN, LReLU=LReLU, Softmax=Softmax, Pool=Pool, Conv1d=Conv1d, Cos=Cos,
                PixCos=PixCos, Norm=Norm, L1=L1, BandDiff=BandDiff, SqrtMax=SqrtMax,
                Objective=Objective, Grad=Grad)


def _np_pool(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h * w) @ _softmax(m.reshape(n, 1, h * w)).transpose(0, 2, 1)


def _np_conv1d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    xp = np.pad(x, ((0, 0), (0, 0), (4, 4)))
    win = np.lib.stride_tricks.sliding_window_view(xp, 9, axis=2)  # N 1 C 9
    return np.einsum("nicj,oij->noc", win, w)


def _np_cos(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (x * y).sum(1) / np.sqrt(np.maximum((x * x).sum(1) * (y * y).sum(1), 1e-16))


def _cases(rng: np.random.Generator, c: dict) -> list[tuple[str, object, Callable, list[np.ndarray]]]:
    def r(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape)

    x4 = r(2, 3, 6, 6)
    return [
        ("conv2d 7x7", c["Conv"](3), lambda x, w: numpy_conv2d(x, w, 3), [r(1, 3, 8, 8), r(2, 3, 7, 7) * 0.1]),
        ("conv2d 3x3", c["Conv"](1), lambda x, w: numpy_conv2d(x, w, 1), [r(2, 3, 6, 6), r(4, 3, 3, 3) * 0.3]),
        ("conv2d 1x1", c["Conv"](0), lambda x, w: numpy_conv2d(x, w, 0), [r(2, 4, 5, 5), r(3, 4, 1, 1)]),
        ("GroupNorm(C,C)=InstanceNorm", c["GN"](), numpy_instance_norm, [r(2, 3, 6, 6), r(3), r(3)]),
        ("LeakyReLU(0.2)", c["LReLU"](), lambda x: np.where(x > 0, x, 0.2 * x), [r(2, 3, 5, 5) + 0.05]),
        ("softmax (pixels)", c["Softmax"](), _softmax, [r(2, 1, 30)]),
        ("softmax context pooling", c["Pool"](), _np_pool, [r(2, 4, 5, 5), r(2, 1, 5, 5)]),
        ("Conv1d k9 p4", c["Conv1d"](), _np_conv1d, [r(2, 1, 16), r(1, 1, 9) * 0.3]),
        ("ops.cosine_similarity", c["Cos"](), _np_cos, [x4, r(2, 3, 6, 6)]),
        ("pixel cosine (loss)", c["PixCos"](), _np_cos, [x4 + 0.5, r(2, 3, 6, 6) + 0.5]),
        ("ops.norm (L2, bands)", c["Norm"](), lambda x: np.sqrt((x * x).sum(1)), [r(2, 3, 5, 5)]),
        ("L1 mean", c["L1"](), lambda x, y: np.abs(x - y).mean(), [r(2, 3, 5, 5), r(2, 3, 5, 5)]),
        ("band difference (roll)", c["BandDiff"](), lambda x: x - np.roll(x, -1, axis=1), [r(2, 4, 3, 3)]),
        ("sqrt/maximum", c["SqrtMax"](), lambda x: np.sqrt(np.maximum(x * x, 1e-4)), [r(3, 7)]),
    ]


def _fd_grads(fn: Callable, inputs: Sequence[np.ndarray], weight: np.ndarray,
              h: float = 1e-5) -> list[np.ndarray]:
    grads = []
    for i, a in enumerate(inputs):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            args = [b.copy() for b in inputs]
            args[i][idx] += h
            up = float((fn(*args) * weight).sum())
            args[i][idx] -= 2 * h
            down = float((fn(*args) * weight).sum())
            g[idx] = (up - down) / (2 * h)
        grads.append(g)
    return grads


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    denom = max(float(np.max(np.abs(b))), 1e-12)
    diff = np.abs(np.asarray(a, np.float64) - b)
    return float("nan") if not np.all(np.isfinite(a)) else float(np.max(diff) / denom)


def run_doctor(device: str = "CPU", modes: Sequence[str] = ("graph", "pynative"),
               seed: int = 0) -> list[Check]:
    """Check every operator on ``device`` in each mode."""
    from . import env

    env.configure(device, modes[0])
    import mindspore as ms

    rng = np.random.default_rng(seed)
    cells = _cells()
    cases = _cases(rng, cells)
    rows: list[Check] = []
    for mode in modes:
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        for name, op, np_fn, inputs in cases:
            ref = np_fn(*inputs)
            weight = np.random.default_rng(1).standard_normal(np.shape(ref))
            note = ""
            try:
                tensors = [ms.Tensor(a.astype(np.float32)) for a in inputs]
                grad = cells["Grad"](cells["Objective"](op, ms.Tensor(weight.astype(np.float32))))
                out = op(*tensors).asnumpy()
                g = grad(*tensors)
                g = [t.asnumpy() for t in (g if isinstance(g, (tuple, list)) else (g,))]
                f_err = _rel(out, ref)
                ref_g = _fd_grads(np_fn, inputs, weight)
                g_err = max(_rel(a, b) for a, b in zip(g, ref_g, strict=True))
            except Exception as exc:  # noqa: BLE001 - a failing kernel is a finding
                f_err, g_err, note = float("nan"), float("nan"), f"{type(exc).__name__}: {exc}"[:120]
            ok = bool(f_err <= FWD_RTOL and g_err <= GRAD_RTOL)
            rows.append(Check(name, mode, f_err, g_err, ok, note))
    return rows


def format_table(rows: Sequence[Check]) -> str:
    """Plain-text table of the checks (mismatches marked ``MISMATCH``)."""
    lines = [f"{'operator':30s} {'mode':9s} {'fwd rel err':>12s} {'grad rel err':>12s}  status"]
    for r in rows:
        status = "ok" if r.ok else "MISMATCH"
        lines.append(f"{r.op:30s} {r.mode:9s} {r.forward_err:12.2e} {r.grad_err:12.2e}  {status}"
                     + (f"  {r.note}" if r.note else ""))
    bad = sum(not r.ok for r in rows)
    lines.append(f"{len(rows) - bad}/{len(rows)} checks agree with numpy" + (f"; {bad} MISMATCH" if bad else ""))
    return "\n".join(lines)

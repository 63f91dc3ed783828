"""How far the differentiable full-resolution indexes (``pansharp_iqa.tensor.losses``) are from the exact ones
on real scenes, and what a training step costs.

For each real scene of ``../shared/data`` (WV2 and IKONOS, 11-bit DN) and each crop (the GRSM 2022 fixture's
24 x 24 MS / 96 x 96 PAN crops, and two 128 x 128 MS / 512 x 512 PAN crops), with the EXP and a GSA fusion
(``pansharp_iqa.baselines.gsa``):

* D_lambda_K without the cast (``cast="none"``, the default) against the exact index
  (``pansharp_iqa.d_lambda_k``: the reference's uint16 cast): absolute and relative difference;
* ``cast="straight-through"`` against the exact index (0 up to rounding: the same forward values);
* HQNR and RQNR without the cast against the exact ones;
* float32 against float64 (D_lambda_K, D_s, D_s_R).

Then the time of one forward + backward pass of ``1 - rqnr`` and ``1 - hqnr`` on a batch of 8 x 4 x 256 x 256
(float32, CPU; ``--threads``).

Usage::

    python benchmarks/measure_losses.py [--data ../shared/data] [--threads 1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.io
import torch

import pansharp_iqa as pi
from pansharp_iqa import torch_ops
from pansharp_iqa.baselines import gsa
from pansharp_iqa.indexes import regression as R
from pansharp_iqa.tensor import losses as L

SCENES = (("imgWV2.mat", "WV2"), ("imgIK.mat", "IKONOS"))
#: (row, col, size) of the MS crops: the GRSM 2022 fixture's (tests/spec/grsm2022_inputs.py) and two larger ones
CROPS = ((0, 96, 24), (120, 96, 24), (0, 0, 128), (192, 192, 128))


def _t(a: np.ndarray) -> torch.Tensor:
    a = np.asarray(a, dtype=np.float64)
    a = a[:, :, None] if a.ndim == 2 else a
    return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))[None]


def deviations(data: Path) -> None:
    print("scene   crop      PAN  fused  D_lambda_K  none-exact  rel       st-exact  HQNR none-exact  "
          "RQNR none-exact  f32-f64 (DlK, Ds, DsR)")
    worst: dict[str, float] = {}
    for fname, sensor in SCENES:
        mat = scipy.io.loadmat(str(data / fname))
        gnyq = pi.get_sensor(sensor).gnyq_for(mat["I_MS"].shape[2])
        for r, c, n in CROPS:
            ms = mat["I_MS"][r : r + n, c : c + n].astype(np.float64)
            pan = mat["I_PAN"][4 * r : 4 * (r + n), 4 * c : 4 * (c + n)].astype(np.float64)
            exp = pi.interp23tap(ms, 4)
            for kind, img in (("exp", exp), ("gsa", gsa(ms, pan, ratio=4))):
                f, m, p = _t(img), _t(ms), _t(pan)
                kw = {"ratio": 4, "sensor": sensor}
                exact = pi.d_lambda_k(img, ms, **kw)
                none = float(L.d_lambda_k(f, m, **kw))
                st = float(L.d_lambda_k(f, m, cast="straight-through", **kw))
                h = float(L.hqnr(f, m, p, **kw)) - pi.hqnr(img, ms, pan, **kw)
                rq = float(L.rqnr(f, m, p, **kw)) - float(R.rqnr(img, exp, pan, gnyq=gnyq, ratio=4))
                f32 = [float(L.d_lambda_k(f.float(), m.float(), **kw)) - none,
                       float(L.d_s(f.float(), m.float(), p.float(), ratio=4)) - float(L.d_s(f, m, p, ratio=4)),
                       float(L.d_s_r(f.float(), p.float())) - float(L.d_s_r(f, p))]
                print(f"{sensor:7s} {r:3d},{c:3d} {4 * n:4d}  {kind:5s}  {exact:.6f}    {none - exact:+.2e}   "
                      f"{(none - exact) / exact:+.2e}  {st - exact:+.1e}  {h:+.2e}        {rq:+.2e}        "
                      + " ".join(f"{v:+.1e}" for v in f32))
                for k, v in (("abs", abs(none - exact)), ("rel", abs(none - exact) / exact), ("st", abs(st - exact)),
                             ("hqnr", abs(h)), ("rqnr", abs(rq)), ("f32", max(map(abs, f32)))):
                    worst[f"{sensor} {k}"] = max(worst.get(f"{sensor} {k}", 0.0), v)
    print("largest:", {k: f"{v:.2e}" for k, v in worst.items()})


def timing() -> None:
    g = torch.Generator().manual_seed(0)
    ms = torch.rand(8, 4, 64, 64, generator=g)
    pan = torch.rand(8, 1, 256, 256, generator=g)
    exp = torch_ops.interp23tap(ms, 4).float()
    for name, fn in (("1 - rqnr", lambda f: 1 - L.rqnr(f, ms, pan, ratio=4, sensor="none", ms_exp=exp,
                                                          reduction="mean")),
                     ("1 - hqnr", lambda f: 1 - L.hqnr(f, ms, pan, ratio=4, sensor="none", ms_exp=exp,
                                                          reduction="mean"))):
        times = []
        for _ in range(4):
            fused = (exp + 0.01 * torch.rand(exp.shape, generator=g)).requires_grad_()
            t0 = time.perf_counter()
            fn(fused).backward()
            times.append(time.perf_counter() - t0)
        print(f"{name}: forward + backward of 8 x 4 x 256 x 256 float32 on the CPU: "
              f"{sorted(times[1:])[1] * 1000:.0f} ms (median of 3 after a warm-up)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    deviations(args.data)
    timing()


if __name__ == "__main__":
    main()

"""Throughput of the default NLRNet (8 bands, 8 blocks; Lei et al., IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2021.3067097) in MindSpore: training samples/s and inference megapixels/s.

Usage: ``python benchmarks/bench_nlrnet.py [--device CPU] [--mode graph] [--batch 4] [--size 64]``
(requires the ``nlrnet`` extra). Synthetic inputs; the first (compiling) steps are not timed.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    """Print training samples/s and inference megapixels/s."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="CPU")
    p.add_argument("--mode", default="graph", choices=("graph", "pynative"))
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    a = p.parse_args()
    if a.device == "CPU":
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    import numpy as np

    from pansharp_iqa.nlrnet import _env
    from pansharp_iqa.nlrnet.config import make_config
    from pansharp_iqa.nlrnet.model import NLRNet, count_parameters
    from pansharp_iqa.nlrnet.train import build_train_cell

    _env.configure(a.device, a.mode, seed=0)
    import mindspore as ms

    net = NLRNet()
    cell, _ = build_train_cell(net, make_config({"device": a.device, "mode": a.mode}))
    rng = np.random.default_rng(0)
    b, s = a.batch, a.size
    lms = ms.Tensor(rng.random((b, 8, s, s), dtype=np.float32))
    pan = ms.Tensor(rng.random((b, 1, s, s), dtype=np.float32))
    gt = ms.Tensor(rng.random((b, 8, s, s), dtype=np.float32))
    for _ in range(2):
        cell(lms, pan, gt).asnumpy()
    t = time.perf_counter()
    for _ in range(a.steps):
        cell(lms, pan, gt).asnumpy()
    train_sps = a.steps * b / (time.perf_counter() - t)
    net.set_train(False)
    for _ in range(2):
        net(lms, pan).asnumpy()
    t = time.perf_counter()
    for _ in range(a.steps):
        net(lms, pan).asnumpy()
    mpx = a.steps * b * s * s / 1e6 / (time.perf_counter() - t)
    print(f"NLRNet default ({count_parameters(net):,} parameters), {a.device} {a.mode}, "
          f"batch {b}, {s}x{s}, ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA')}")
    print(f"training:  {train_sps:.2f} samples/s")
    print(f"inference: {mpx:.3f} megapixels/s")


if __name__ == "__main__":
    main()

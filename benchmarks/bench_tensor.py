"""Images per second for PanCollection-sized batches: the host path, PyTorch on CPU, PyTorch on CUDA.

A reduced-resolution batch of 20 x 8 x 256 x 256 (predictions and references in [0, 1], brought to
DN with ``scale=2047``) and a full-resolution batch of 20 x 8 x 512 x 512 (with 20 x 8 x 128 x 128
MS and 20 x 1 x 512 x 512 PAN), evaluated side by side in one run (the machines are noisy):
``backend="host"`` (the numpy core, image by image), ``backend="torch"`` on CPU tensors, and on
CUDA tensors when a GPU is present. Each figure is the median of ``--repeats`` runs after one
warm-up; the ratios are against the host path. Also checks that every backend gives the host's
numbers (1e-12 relative; Q2n and D_lambda_K bit-identical).

Usage::

    python benchmarks/bench_tensor.py [--images 20] [--repeats 3] [--only rr|fr] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import pansharp_iqa as pi


def _scene(n: int, bands: int, size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smooth synthetic 11-bit batches: gt (N, B, size, size), ms (size/4), pan (N, 1, size, size)."""
    rng = np.random.default_rng(seed)
    small = rng.uniform(200, 1800, (n, bands, size // 16, size // 16))
    gt = np.kron(small, np.ones((1, 1, 16, 16))) + rng.normal(0, 20, (n, bands, size, size))
    gt = np.clip(gt, 1, 2047)
    ms = gt[:, :, 2::4, 2::4]
    pan = np.clip(gt.mean(axis=1, keepdims=True) + rng.normal(0, 5, (n, 1, size, size)), 1, 2047)
    return gt, ms, pan


def _time(fn, repeats: int) -> tuple[float, dict]:
    out = fn()  # warm-up (and the numbers)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _devices() -> list[str]:
    try:
        import torch
    except ImportError:
        return []
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


def _compare(host: dict, other: dict) -> float:
    worst = 0.0
    for k, v in host.items():
        if k == "protocol":
            continue
        rel = np.abs(np.asarray(other[k]) / np.asarray(v) - 1.0)
        worst = max(worst, float(np.nanmax(rel)))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=("rr", "fr"))
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()
    n = args.images
    rows = []
    cases = []
    if args.only in (None, "rr"):
        gt, _, _ = _scene(n, 8, 256)
        pred = np.clip(gt * 1.03 + 5, 0, 2047)
        cases.append(("RR 256x256x8", dict(fused=pred / 2047, reference=gt / 2047),
                      lambda fused, reference, backend: pi.evaluate_reduced(
                          fused, reference, ratio=4, bits=11, scale=2047, layout="NCHW", backend=backend)))
    if args.only in (None, "fr"):
        gt, ms, pan = _scene(n, 8, 512, seed=1)
        cases.append(("FR 512x512x8", dict(fused=gt / 2047, ms=ms / 2047, pan=pan / 2047),
                      lambda fused, ms, pan, backend: pi.evaluate_full(
                          fused, ms, pan, sensor="WV3", scale=2047, layout="NCHW", backend=backend)))
    for label, arrays, run in cases:
        host_s, host_out = _time(lambda run=run, arrays=arrays: run(**arrays, backend="host"), args.repeats)
        rows.append({"case": label, "path": "host (numpy)", "seconds": host_s, "images_per_s": n / host_s,
                     "vs_host": 1.0, "max_rel_diff": 0.0})
        for dev in _devices():
            import torch

            tensors = {k: torch.from_numpy(v).to(dev) for k, v in arrays.items()}

            def call(tensors=tensors, dev=dev, run=run):
                out = run(**tensors, backend="torch")
                if dev == "cuda":
                    torch.cuda.synchronize()
                return out

            s, out = _time(call, args.repeats)
            rows.append({"case": label, "path": f"torch {dev}", "seconds": s, "images_per_s": n / s,
                         "vs_host": host_s / s, "max_rel_diff": _compare(host_out, out)})
    width = max(len(r["path"]) for r in rows)
    print(f"{'case':<14} {'path':<{width}}  {'s/batch':>8} {'img/s':>8} {'x host':>7} {'max rel diff':>12}")
    for r in rows:
        print(f"{r['case']:<14} {r['path']:<{width}}  {r['seconds']:8.3f} {r['images_per_s']:8.1f} "
              f"{r['vs_host']:7.2f} {r['max_rel_diff']:12.2e}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()

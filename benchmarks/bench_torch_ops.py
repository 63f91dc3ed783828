"""Time the PyTorch operators (pansharp_iqa.torch_ops) against the NumPy/OpenCV core.

A batch of 20 x 8 x 256 x 256 smooth 11-bit images (float64; ``interp23tap`` upsamples a
20 x 8 x 64 x 64 batch by 4 to that size). The core runs image by image (band planes in threads,
as the indexes call it); the port runs on the whole batch on the CPU (or ``--device cuda``).
Prints, per operator, the median wall time of ``--repeat`` runs and the median process CPU time
(summed over threads); on a shared machine wall time is noisy. Run::

    python benchmarks/bench_torch_ops.py [--repeat 3] [--batch 20] [--size 256] [--device cpu]
                                         [--torch-threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import cv2
import numpy as np
import torch

import pansharp_iqa as pi
from pansharp_iqa import torch_ops as T
from pansharp_iqa.indexes.q2n import to_uint16_matlab
from pansharp_iqa.indexes.scc import sobel_rows
from pansharp_iqa.indexes.strips import gather_blocks
from pansharp_iqa.indexes.uiqi import block_moments
from pansharp_iqa.mtf import filter_planes, mtf_kernel
from pansharp_iqa.resample import imresize, interp23tap_planes


def _time(fn: Callable[[], object], repeat: int, sync: Callable[[], None]) -> tuple[float, float]:
    """Median wall and process CPU time (s) of ``repeat`` runs after a warm-up."""
    fn()
    sync()
    wall, cpu = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        sync()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _batch(rng: np.random.Generator, n: int, c: int, size: int) -> np.ndarray:
    base = rng.normal(size=(n, c, size // 8 + 1, size // 8 + 1)).cumsum(2).cumsum(3)
    img = np.stack([pi.resample.interp23tap_planes(b, 8)[:, :size, :size] for b in base])
    img = (img - img.min()) / (img.max() - img.min()) * 1500 + 200
    return img + rng.normal(0, 20, img.shape)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--bands", type=int, default=8)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch.set_num_threads (PyTorch's OpenMP threads spin-wait on a busy machine)")
    parser.add_argument("--default-malloc", action="store_true",
                        help="leave glibc's allocator thresholds alone (the CLI raises them)")
    args = parser.parse_args()
    if not args.default_malloc:
        from pansharp_iqa.allocator import keep_freed_memory

        keep_freed_memory()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    rng = np.random.default_rng(0)
    n, c, s, bs = args.batch, args.bands, args.size, 32
    x = _batch(rng, n, c, s)
    fus = x + rng.normal(0, 30, x.shape)
    lr = np.ascontiguousarray(x[:, :, 2::4, 2::4])
    hwc = [np.ascontiguousarray(im.transpose(1, 2, 0)) for im in x]
    kernels = np.stack([mtf_kernel(g, 4) for g in pi.get_sensor("WV2").gnyq_for(c)])
    xt, lrt = (torch.from_numpy(a).to(dev) for a in (x, lr))
    xu, fu = (np.stack([gather_blocks(np.round(im), bs) for im in a]) for a in (x, fus))
    xut, fut = torch.from_numpy(xu).to(dev), torch.from_numpy(fu).to(dev)

    def box(square: bool) -> None:
        f = cv2.sqrBoxFilter if square else cv2.boxFilter
        for im in x:
            for p in im:
                f(p, cv2.CV_64F, (bs, bs), anchor=(0, 0), normalize=False, borderType=cv2.BORDER_CONSTANT)

    def raw_np() -> None:
        for r, f in zip(xu, fu, strict=True):
            r.sum(axis=2), f.sum(axis=2), np.einsum("bcp,bcp->bc", r, r), np.einsum("bcp,bcp->bc", f, f)
            np.matmul(r, f.transpose(0, 2, 1))

    items: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "to_uint16_matlab": (lambda: to_uint16_matlab(x), lambda: T.to_uint16_matlab(xt)),
        "interp23tap x4 (64->256)": (lambda: [interp23tap_planes(im, 4) for im in lr], lambda: T.interp23tap(lrt, 4)),
        "imresize 1/4": (lambda: [imresize(im, 0.25) for im in hwc], lambda: T.imresize(xt, 0.25)),
        "filter_replicate 41x41 MTF": (lambda: [filter_planes(im, list(kernels)) for im in x],
                                       lambda: T.filter_replicate(xt, kernels)),
        "sobel magnitude": (lambda: [[sobel_rows(p, "magnitude") for p in im] for im in x],
                            lambda: T.sobel(xt, "magnitude")),
        "sobel vertical": (lambda: [[sobel_rows(p, "vertical") for p in im] for im in x],
                           lambda: T.sobel(xt, "vertical")),
        "window_sums 32": (lambda: box(False), lambda: T.window_sums(xt, bs)),
        "window_square_sums 32": (lambda: box(True), lambda: T.window_square_sums(xt, bs)),
        "toolbox_blocks 32": (lambda: [gather_blocks(im, bs) for im in x], lambda: T.toolbox_blocks(xt, bs)),
        "block_raw_moments 32": (raw_np, lambda: T.block_raw_moments(xut, fut)),
        "blocks + centered moments 32": (lambda: [block_moments(im, bs) for im in hwc],
                                         lambda: T.block_centered_moments(T.toolbox_blocks(xt, bs))),
    }
    print(f"batch {n} x {c} x {s} x {s} float64; torch {torch.__version__} on {dev} "
          f"({torch.get_num_threads()} threads); median of {args.repeat} runs; wall s (cpu s)")
    print(f"{'operator':30s} {'numpy core':>18s} {'torch':>18s} {'ratio':>7s}")
    for name, (np_fn, t_fn) in items.items():
        nw, nc = _time(np_fn, args.repeat, lambda: None)
        tw, tc = _time(t_fn, args.repeat, sync)
        print(f"{name:30s} {nw:8.3f} ({nc:7.3f}) {tw:8.3f} ({tc:7.3f}) {tw / nw:7.2f}", flush=True)


if __name__ == "__main__":
    main()

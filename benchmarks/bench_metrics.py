"""Time each index and the protocol entry points on synthetic 11-bit data.

Reduced resolution: 1024x1024x8 float64. Full resolution: fused 1280x1280x8, MS 320x320x8.
Prints, per item, the median and minimum wall time of ``--repeat`` runs and the median process CPU
time (summed over threads; wall time on a shared VM is noisy, CPU time much less so).
Run: ``python benchmarks/bench_metrics.py``. ``--filters``: the MTF filter of one band, OpenCV's
``filter2D`` (replicate border) against :func:`pansharp_iqa.mtf.correlate_valid` on the same window
(a 512-pixel tile with its 20-pixel halos, and a whole 4096^2 band), thread CPU time, minimum of
interleaved runs, one OpenCV thread (as in the tile workers). ``--maps``: also the GRSM 2022 indexes
(D_s_R, RQNR: their later pass) and the cost of quality maps (``maps=True``) in memory.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import pansharp_iqa as pi


def _time(fn: Callable[[], object], repeat: int) -> str:
    """Median and minimum wall time, and the median process CPU time (all threads), as text."""
    fn()  # warm-up (kernel caches, imports)
    wall, cpu = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return f"{statistics.median(wall):8.3f} s  (min {min(wall):.3f} s, cpu {statistics.median(cpu):.3f} s)"


def _scene(rng: np.random.Generator, h: int, w: int, b: int) -> np.ndarray:
    """Smooth, textured 11-bit-like image (not white noise, so the indexes are in a typical range)."""
    base = rng.normal(size=(h // 8, w // 8, b)).cumsum(0).cumsum(1)
    img = pi.interp23tap(base, 8)[:h, :w]
    img = (img - img.min()) / (img.max() - img.min()) * 1500 + 200
    return img + rng.normal(0, 20, img.shape)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--filters", action="store_true", help="OpenCV filter2D vs mtf.correlate_valid only")
    parser.add_argument("--maps", action="store_true", help="also D_s_R, RQNR and maps=True (quality maps)")
    parser.add_argument("--default-malloc", action="store_true",
                        help="leave glibc's allocator thresholds alone (the CLI raises them)")
    args = parser.parse_args()
    if not args.default_malloc:
        from pansharp_iqa.allocator import keep_freed_memory

        keep_freed_memory()
    rng = np.random.default_rng(0)
    if args.filters:
        _filters(rng, args.repeat)
        return

    gt = _scene(rng, 1024, 1024, 8)
    fused = gt + rng.normal(0, 30, gt.shape)
    gt_u16 = np.clip(np.round(gt), 0, 2047).astype(np.uint16)  # what real DN products hold
    fused_u16 = np.clip(np.round(fused), 0, 2047).astype(np.uint16)
    print(f"reduced resolution, 1024x1024x8 float64 (median of {args.repeat} runs)")
    items = {
        "q2n": lambda: pi.q2n(gt, fused),
        "q_index": lambda: pi.q_index(gt, fused),
        "sam": lambda: pi.sam(gt, fused),
        "ergas": lambda: pi.ergas(gt, fused, ratio=4),
        "scc": lambda: pi.scc(gt, fused),
        "evaluate_reduced": lambda: pi.evaluate_reduced(fused, gt, ratio=4, bits=11),
        "evaluate_reduced (uint16)": lambda: pi.evaluate_reduced(fused_u16, gt_u16, ratio=4, bits=11),
    }
    if args.maps:
        items["evaluate_reduced maps=True"] = lambda: pi.evaluate_reduced(fused, gt, ratio=4, bits=11, maps=True)
    for name, fn in items.items():
        print(f"  {name:<26s} {_time(fn, args.repeat)}")

    ms_hr = _scene(rng, 1280, 1280, 8)
    pan = ms_hr.mean(axis=2) + rng.normal(0, 10, ms_hr.shape[:2])
    ms = np.clip(pi.decimate(pi.mtf_filter_sensor(ms_hr, "WV2"), 4), 0, 2047)
    fr_fused = ms_hr + rng.normal(0, 15, ms_hr.shape)
    exp = pi.interp23tap(ms, 4)
    print(f"full resolution, fused 1280x1280x8, MS 320x320x8 (median of {args.repeat} runs)")
    items = {
        "interp23tap (MS)": lambda: pi.interp23tap(ms, 4),
        "mtf_filter (8 bands)": lambda: pi.mtf_filter_sensor(fr_fused, "WV2"),
        "d_lambda": lambda: pi.d_lambda(fr_fused, ms, ratio=4, ms_exp=exp),
        "d_s": lambda: pi.d_s(fr_fused, ms, pan, ratio=4, ms_exp=exp),
        "qnr": lambda: pi.qnr(fr_fused, ms, pan, ratio=4, ms_exp=exp),
        "d_lambda_k": lambda: pi.d_lambda_k(fr_fused, ms, sensor="WV2", ms_exp=exp),
        "hqnr": lambda: pi.hqnr(fr_fused, ms, pan, sensor="WV2", ms_exp=exp),
        "evaluate_full": lambda: pi.evaluate_full(fr_fused, ms, pan, sensor="WV2"),
    }
    if args.maps:
        extras = ["default", "D_s_R", "RQNR"]
        items |= {
            "d_s_r": lambda: pi.evaluate_full(fr_fused, ms, pan, sensor="WV2", indexes=["D_s_R"]),
            "evaluate_full maps=True": lambda: pi.evaluate_full(fr_fused, ms, pan, sensor="WV2", maps=True),
            "+ D_s_R, RQNR": lambda: pi.evaluate_full(fr_fused, ms, pan, sensor="WV2", indexes=extras),
            "+ D_s_R, RQNR maps=True": lambda: pi.evaluate_full(fr_fused, ms, pan, sensor="WV2", indexes=extras,
                                                                maps=True),
        }
    for name, fn in items.items():
        print(f"  {name:<26s} {_time(fn, args.repeat)}")


def _filters(rng: np.random.Generator, repeat: int) -> None:
    """filter2D vs correlate_valid on one band's window (``--filters``)."""
    import cv2

    from pansharp_iqa.mtf import correlate_valid, mtf_kernel

    cv2.setNumThreads(1)
    kernel = mtf_kernel(0.3, 4)
    for side in (552, 4136):  # a 512 tile or a 4096^2 band, with the 20-pixel halos
        window = rng.uniform(0, 2047, (side, side))
        alternatives = {"cv2.filter2D": lambda w=window: cv2.filter2D(w, cv2.CV_64F, kernel,
                                                                      borderType=cv2.BORDER_REPLICATE),
                        "mtf.correlate_valid": lambda w=window: correlate_valid(w, kernel)}
        best = dict.fromkeys(alternatives, np.inf)
        for _ in range(max(3, repeat * (4136 // side))):
            for name, fn in alternatives.items():
                t0 = time.thread_time()
                fn()
                best[name] = min(best[name], time.thread_time() - t0)
        print(f"MTF filter of a {side}^2 window (41 x 41 kernel): " +
              ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in best.items()))


if __name__ == "__main__":
    main()

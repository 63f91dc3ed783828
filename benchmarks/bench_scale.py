"""Throughput and peak memory of tile-wise evaluation on generated whole scenes.

For each size (2048^2 and 8192^2 by default; 20000^2 with ``--huge``, about 6.4 GB of disk per
8-band uint16 image) the script writes synthetic 11-bit uint16 GeoTIFFs strip by strip (never the
whole image in memory), then evaluates them tile-wise with 1 and 2 worker processes, each run in a
fresh child process. Reported per run: wall time, megapixels per second (PAN-scale pixels of the
fused image / wall time), peak RSS of the largest single process, and the peak of the summed RSS
of the run's process tree (sampled every 0.2 s with psutil).

Targets (issue 7): peak RSS under 2 GB at 20000^2; time linear in pixels; two workers faster than
one (needs two idle cores).

Run: ``python benchmarks/bench_scale.py [--sizes 2048 8192] [--huge] [--resolution reduced full]
[--protocol reprojected2022]`` (``--protocol``: the full-resolution protocol, default toolbox2020).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

BANDS = 8
RATIO = 4
STRIP = 512


def _write(path: str, h: int, w: int, count: int, seed: int, *, scale: int = 1, noise: float = 20.0) -> None:
    """Smooth 11-bit texture plus noise, written in strips of STRIP rows (bounded memory)."""
    import rasterio
    from affine import Affine

    rng = np.random.default_rng(seed)
    prof = dict(driver="GTiff", height=h, width=w, count=count, dtype="uint16", tiled=True, blockxsize=256,
                blockysize=256, transform=Affine(0.3 * scale, 0, 0, 0, -0.3 * scale, 0), BIGTIFF="IF_SAFER")
    yy_w = np.arange(w) * scale / 97.0
    with rasterio.open(path, "w", **prof) as ds:
        for r0 in range(0, h, STRIP):
            r1 = min(r0 + STRIP, h)
            yy = (np.arange(r0, r1) * scale / 113.0)[:, None]
            base = 900.0 + 400.0 * np.sin(yy) * np.cos(yy_w[None, :]) + 200.0 * np.sin(yy * 0.37 + yy_w[None, :] * 0.21)
            bands = [base + 30.0 * b + noise * rng.standard_normal(base.shape) for b in range(count)]
            data = np.clip(np.stack(bands), 0, 2047).round().astype(np.uint16)
            from rasterio.windows import Window

            ds.write(data, window=Window(0, r0, w, r1 - r0))


def make_scene(folder: str, n: int, resolution: str) -> dict[str, str]:
    """Write the GeoTIFFs of one n x n scene; returns role -> path."""
    paths = {}
    if resolution == "reduced":
        paths["reference"] = os.path.join(folder, f"ref_{n}.tif")
        paths["fused"] = os.path.join(folder, f"fused_{n}.tif")
        _write(paths["reference"], n, n, BANDS, 1)
        _write(paths["fused"], n, n, BANDS, 2, noise=35.0)
    else:
        paths["fused"] = os.path.join(folder, f"fused_{n}.tif")
        paths["ms"] = os.path.join(folder, f"ms_{n}.tif")
        paths["pan"] = os.path.join(folder, f"pan_{n}.tif")
        _write(paths["fused"], n, n, BANDS, 2, noise=35.0)
        _write(paths["ms"], n // RATIO, n // RATIO, BANDS, 3, scale=RATIO, noise=5.0)
        _write(paths["pan"], n, n, 1, 4)
    return paths


def _child(args: argparse.Namespace) -> None:
    """Run one evaluation in this (fresh) process and print a JSON line."""
    import psutil

    from pansharp_iqa.tiled import evaluate_full_tiled, evaluate_reduced_tiled

    paths = json.loads(args.paths)
    me = psutil.Process()
    peak = {"total": 0, "single": 0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            procs = [me] + me.children(recursive=True)
            rss = []
            for p in procs:
                try:
                    rss.append(p.memory_info().rss)
                except psutil.Error:
                    pass
            peak["total"] = max(peak["total"], sum(rss))
            peak["single"] = max(peak["single"], max(rss, default=0))
            stop.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    if args.resolution[0] == "reduced":
        res = evaluate_reduced_tiled(paths["fused"], paths["reference"], ratio=RATIO, bits=11,
                                     tile_size=args.tile_size, jobs=args.workers[0])
    else:
        res = evaluate_full_tiled(paths["fused"], paths["ms"], paths["pan"], sensor="WV3", protocol=args.protocol,
                                  tile_size=args.tile_size, jobs=args.workers[0])
    seconds = time.perf_counter() - t0
    stop.set()
    thread.join()
    values = {k: v for k, v in res.items() if k != "protocol"}
    print(json.dumps({"seconds": seconds, "peak_total": peak["total"], "peak_single": peak["single"],
                      "values": values}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 8192])
    parser.add_argument("--huge", action="store_true", help="also 20000^2 (about 6.4 GB of disk per image)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--resolution", nargs="+", default=["reduced", "full"], choices=["reduced", "full"])
    parser.add_argument("--tile-size", type=int, default=512)
    parser.add_argument("--protocol", default="toolbox2020", help="full-resolution protocol (e.g. reprojected2022)")
    parser.add_argument("--tmpdir", default=None, help="where to write the scenes (default: system temp)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    sizes = list(args.sizes) + ([20000] if args.huge else [])
    base = args.tmpdir or tempfile.gettempdir()
    print(f"{'res':8} {'size':>6} {'workers':>7} {'seconds':>8} {'MP/s':>6} {'peak RSS 1 proc':>15} {'peak RSS tree':>13}")
    for resolution in args.resolution:
        for n in sizes:
            images = 2 if resolution == "reduced" else 1
            need = n * n * (BANDS * 2 * images + (BANDS * 2 / RATIO**2 + 2 if resolution == "full" else 0)) * 1.1
            free = shutil.disk_usage(base).free
            if need > free:
                print(f"skip {resolution} {n}: needs {need / 1e9:.1f} GB of disk, {free / 1e9:.1f} GB free in {base}")
                continue
            with tempfile.TemporaryDirectory(dir=base, prefix="bench_scale_") as folder:
                t0 = time.perf_counter()
                paths = make_scene(folder, n, resolution)
                gen = time.perf_counter() - t0
                results = []
                for workers in args.workers:
                    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--resolution", resolution,
                           "--tile-size", str(args.tile_size), "--workers", str(workers), "--protocol", args.protocol,
                           "--paths", json.dumps(paths)]
                    proc = subprocess.run(cmd, capture_output=True, text=True)
                    if proc.returncode:
                        sys.exit(f"child run failed ({' '.join(cmd[2:8])}):\n{proc.stderr[-3000:]}")
                    out = proc.stdout.strip().splitlines()[-1]
                    r = json.loads(out)
                    results.append(r)
                    mp = n * n / 1e6
                    print(f"{resolution:8} {n:>6} {workers:>7} {r['seconds']:>8.1f} {mp / r['seconds']:>6.2f} "
                          f"{r['peak_single'] / 2**20:>12.0f} MB {r['peak_total'] / 2**20:>10.0f} MB"
                          f"   (generation {gen:.0f} s)", flush=True)
                same = all(r["values"] == results[0]["values"] for r in results)
                print(f"{'':8} {'':>6} identical numbers across worker counts: {same}")


if __name__ == "__main__":
    main()

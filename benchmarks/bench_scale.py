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

``--scale-to 20000`` also prints, per resolution and worker count, the time extrapolated to a
20000^2 x 8 scene from the measured sizes: the whole run of the largest size times the pixel
ratio, and a line ``a + b pixels`` fitted to all sizes (``a``: start-up and spawning, which do not
grow with the scene). Issue 32's goal (a 20000^2 x 8 scene at full resolution in 100 s on 2 cores)
is measured with ``--resolution full --sizes 2048 4096 --workers 2 --scale-to 20000``
(``docs/performance.md``). ``--profile-tile`` prints the thread CPU time of each step of one interior
full-resolution tile (each input read, each derived image, each statistic; minimum of ``--repeat``
runs, one thread) on a generated scene of the first ``--sizes``.

``--cli`` measures the command instead (issue 14): ``pansharp-eval evaluate DATASET METHOD`` on one generated
GeoTIFF scene (``<scene>_gt.tif``, or ``_ms``/``_pan``, and the method's ``<scene>.tif``) with the
default ``--tiled auto`` and with ``--tiled never`` (the in-memory path; skipped when its estimated
peak would not fit in the available memory), each in a fresh process, ``--repeat`` times
interleaved (the minimum time is reported: the machine is shared). Target: the default path under
1 GB peak RSS at 4096^2 x 8 and 8192^2 x 8, and no slower than the in-memory path. Run:
``python benchmarks/bench_scale.py --cli [--cli-sizes 4096 8192] [--repeat 2]``.

``--calibrate`` measures the in-memory path's peak RSS per pixel and band of the fused image and
both paths' times on ``.npy`` scenes of ``--cli-sizes`` (e.g. 512 1024 2048 4096): the figures
behind ``pansharp_iqa.cli.memory_plan``.
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


class _PeakRss:
    """Peak resident memory of this process and its children (total, and largest single
    process), sampled every ``interval`` seconds in a thread while the ``with`` block runs."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval, self.total, self.single = interval, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.is_set():
            rss = []
            for p in [me, *me.children(recursive=True)]:
                try:
                    rss.append(p.memory_info().rss)
                except psutil.Error:
                    pass
            self.total, self.single = max(self.total, sum(rss)), max(self.single, max(rss, default=0))
            self._stop.wait(self.interval)

    def __enter__(self) -> _PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _child(args: argparse.Namespace) -> None:
    """Run one evaluation in this (fresh) process and print a JSON line."""

    from pansharp_iqa.tiled import evaluate_full_tiled, evaluate_reduced_tiled

    paths = json.loads(args.paths)
    extra: dict[str, object] = {"indexes": args.indexes.split(",")} if args.indexes else {}
    with tempfile.TemporaryDirectory(prefix="bench_maps_") as maps_dir, _PeakRss(0.2) as peak:
        t0 = time.perf_counter()
        if args.maps:  # the quality maps, written as GeoTIFFs tile by tile (evaluate(..., maps_to=))
            from pansharp_iqa import evaluate, full_settings, reduced_settings

            if args.resolution[0] == "reduced":
                settings, inputs = reduced_settings(ratio=RATIO, bits=11, **extra), {
                    "fused": paths["fused"], "reference": paths["reference"]}
            else:
                settings = full_settings(sensor="WV3", protocol=args.protocol, **extra)
                inputs = {"fused": paths["fused"], "ms": paths["ms"], "pan": paths["pan"]}
            res = evaluate(inputs, settings, tiled="always", tile_size=args.tile_size, jobs=args.workers[0],
                           maps_to=maps_dir)
        elif args.resolution[0] == "reduced":
            res = evaluate_reduced_tiled(paths["fused"], paths["reference"], ratio=RATIO, bits=11,
                                         tile_size=args.tile_size, jobs=args.workers[0], **extra)
        else:
            res = evaluate_full_tiled(paths["fused"], paths["ms"], paths["pan"], sensor="WV3",
                                      protocol=args.protocol, tile_size=args.tile_size, jobs=args.workers[0], **extra)
        seconds = time.perf_counter() - t0
    values = {k: v for k, v in res.items() if k not in ("protocol", "maps")}
    print(json.dumps({"seconds": seconds, "peak_total": peak.total, "peak_single": peak.single,
                      "values": values}))


def _dataset(folder: str, n: int, resolution: str, fmt: str) -> tuple[str, str]:
    """A one-scene dataset (``dataset.toml`` + files) and a method folder; returns their paths."""
    data, method = os.path.join(folder, "dataset"), os.path.join(folder, "method")
    os.makedirs(data)
    os.makedirs(method)
    with open(os.path.join(data, "dataset.toml"), "w", encoding="utf-8") as handle:
        handle.write(f'sensor = "WV3"\nratio = {RATIO}\nbits = 11\nresolution = "{resolution}"\nresult_scale = "dn"\n')
    paths = make_scene(folder, n, resolution)
    roles = {"reference": "gt", "ms": "ms", "pan": "pan"}
    for role, path in paths.items():
        target = os.path.join(method, "s.tif") if role == "fused" else os.path.join(data, f"s_{roles[role]}.tif")
        if fmt == "npy":
            import rasterio

            with rasterio.open(path) as ds:
                arr = ds.read()
            arr = arr[0] if arr.shape[0] == 1 else np.moveaxis(arr, 0, -1)
            np.save(target[:-4] + ".npy", arr)
            os.remove(path)
        else:
            os.replace(path, target)
    return data, method


def _cli_child(args: argparse.Namespace) -> None:
    """Run ``pansharp-eval`` in this (fresh) process, sampling its RSS; print a JSON line."""
    import contextlib
    import io

    from pansharp_iqa.cli.main import main as cli_main

    argv = json.loads(args.paths)
    buf = io.StringIO()
    with _PeakRss(0.05) as peak, contextlib.redirect_stdout(buf):  # workers (--jobs) counted too
        t0 = time.perf_counter()
        code = cli_main(argv)
        seconds = time.perf_counter() - t0
    out = argv[argv.index("--out") + 1]
    with open(os.path.join(out, "results.json"), encoding="utf-8") as handle:
        doc = json.load(handle)
    entry = doc["scenes"]["s"]["method"]
    print(json.dumps({"code": code, "seconds": seconds, "peak": peak.total, "values": entry["metrics"],
                      "path": (entry.get("protocol") or {}).get("evaluation_path"), "reason": entry["reason"],
                      "stdout": [line for line in buf.getvalue().splitlines() if "evaluation" in line]}))


def _run_cli(data: str, method: str, out: str, tiled: str) -> dict:
    argv = ["evaluate", data, method, "--out", out, "--format", "json", "--no-progress", "--force", "--tiled", tiled]
    cmd = [sys.executable, os.path.abspath(__file__), "--cli-child", "--paths", json.dumps(argv)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"pansharp-eval run failed (--tiled {tiled}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cli_bench(args: argparse.Namespace, fmt: str) -> None:
    from pansharp_iqa.cli.memory_plan import IN_MEMORY_BASE_BYTES, MEMORY_FRACTION, estimate_in_memory_bytes
    from pansharp_iqa.io.memory import available_memory

    base = args.tmpdir or tempfile.gettempdir()
    print(f"{'res':8} {'size':>6} {'--tiled':>7} {'path':>9} {'seconds':>8} {'peak RSS':>9} "
          f"{'B/(px*band)':>11}  (time: min, peak: max over {args.repeat} run(s); "
          f"machine: {os.cpu_count()} cores, shared)")
    for resolution in args.resolution:
        for n in args.cli_sizes:
            with tempfile.TemporaryDirectory(dir=base, prefix="bench_cli_scale_") as folder:
                data, method = _dataset(folder, n, resolution, fmt)
                estimate = estimate_in_memory_bytes(resolution, n, n, BANDS)
                free = available_memory() or 0
                if args.calibrate:
                    modes = ["never", "always"]
                else:
                    modes = ["auto", "never"] if estimate < 0.8 * free else ["auto"]
                best: dict[str, dict] = {}
                peaks: dict[str, int] = {}
                for _ in range(args.repeat):
                    for mode in modes:
                        r = _run_cli(data, method, os.path.join(folder, f"out_{mode}"), mode)
                        peaks[mode] = max(peaks.get(mode, 0), r["peak"])  # the worst run's memory
                        if mode not in best or r["seconds"] < best[mode]["seconds"]:
                            best[mode] = r
                for mode, r in best.items():
                    r["peak"] = peaks[mode]
                    per = (r["peak"] - IN_MEMORY_BASE_BYTES) / (n * n * BANDS)
                    print(f"{resolution:8} {n:>6} {mode:>7} {r['path'] or 'failed':>9} {r['seconds']:>8.1f} "
                          f"{r['peak'] / 2**20:>6.0f} MB {per:>11.1f}", flush=True)
                if "never" not in best:
                    print(f"{'':8} {'':>6} {'never':>7}   skipped: in-memory estimate {estimate / 2**30:.1f} GB, "
                          f"{free / 2**30:.1f} GB available (would need {estimate / MEMORY_FRACTION / 2**30:.1f} GB "
                          "for auto to pick it)")
                values = [r["values"] for r in best.values()]
                if len(values) > 1:
                    same = all(abs(v[k] - values[0][k]) <= 1e-9 * max(1.0, abs(values[0][k]))
                               for v in values[1:] for k in values[0])
                    print(f"{'':8} {'':>6} same numbers (1e-9 relative): {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 8192])
    parser.add_argument("--huge", action="store_true", help="also 20000^2 (about 6.4 GB of disk per image)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--resolution", nargs="+", default=["reduced", "full"], choices=["reduced", "full"])
    parser.add_argument("--tile-size", type=int, default=512)
    parser.add_argument("--protocol", default="toolbox2020", help="full-resolution protocol (e.g. reprojected2022)")
    parser.add_argument("--tmpdir", default=None, help="where to write the scenes (default: system temp)")
    parser.add_argument("--scale-to", type=int, default=None, help="extrapolate the times to this side (pixels)")
    parser.add_argument("--profile-tile", action="store_true", help="CPU time of each step of one full-resolution tile")
    parser.add_argument("--maps", action="store_true", help="also write every quality map (GeoTIFF, tile by tile)")
    parser.add_argument("--indexes", default=None, help="comma-separated indexes (default: the protocol's table)")
    parser.add_argument("--cli", action="store_true", help="measure the pansharp-eval command (issue 14)")
    parser.add_argument("--calibrate", action="store_true",
                        help="in-memory vs tile-wise peak RSS and time on .npy scenes (memory_plan's figures)")
    parser.add_argument("--cli-sizes", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--repeat", type=int, default=1, help="runs per mode (minimum time reported)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cli-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    if args.cli_child:
        _cli_child(args)
        return
    if args.profile_tile:
        _profile_tile(args)
        return
    if args.cli or args.calibrate:
        _cli_bench(args, "npy" if args.calibrate else "tif")
        return
    sizes = list(args.sizes) + ([20000] if args.huge else [])
    base = args.tmpdir or tempfile.gettempdir()
    print(f"{'res':8} {'size':>6} {'workers':>7} {'seconds':>8} {'MP/s':>6} {'peak RSS 1 proc':>15} "
          f"{'peak RSS tree':>13}")
    measured: dict[tuple[str, int], list[tuple[int, float]]] = {}
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
                           "--paths", json.dumps(paths), *(["--maps"] * args.maps),
                           *(["--indexes", args.indexes] if args.indexes else [])]
                    proc = subprocess.run(cmd, capture_output=True, text=True)
                    if proc.returncode:
                        sys.exit(f"child run failed ({' '.join(cmd[2:8])}):\n{proc.stderr[-3000:]}")
                    out = proc.stdout.strip().splitlines()[-1]
                    r = json.loads(out)
                    results.append(r)
                    measured.setdefault((resolution, workers), []).append((n, r["seconds"]))
                    mp = n * n / 1e6
                    print(f"{resolution:8} {n:>6} {workers:>7} {r['seconds']:>8.1f} {mp / r['seconds']:>6.2f} "
                          f"{r['peak_single'] / 2**20:>12.0f} MB {r['peak_total'] / 2**20:>10.0f} MB"
                          f"   (generation {gen:.0f} s)", flush=True)
                same = all(r["values"] == results[0]["values"] for r in results)
                print(f"{'':8} {'':>6} identical numbers across worker counts: {same}")
    if args.scale_to:
        _extrapolate(measured, args.scale_to)


def _profile_tile(args: argparse.Namespace) -> None:
    """Thread CPU time of each step of one interior tile (``--profile-tile``): reads, derived images, statistics."""
    import collections
    import dataclasses

    import cv2

    os.environ["PANSHARP_THREADS"] = "1"
    cv2.setNumThreads(1)
    from pansharp_iqa.indexes import catalog
    from pansharp_iqa.settings import full_settings
    from pansharp_iqa.tiled import api
    from pansharp_iqa.tiled import full as tile_module

    spent: collections.Counter[str] = collections.Counter()

    def timed(fn, label):
        def run(*a, **k):
            t0 = time.thread_time()
            out = fn(*a, **k)
            spent[label(*a) if callable(label) else label] += time.thread_time() - t0
            return out
        return run

    tile_module.fetch = timed(tile_module.fetch, lambda src, *a: f"read {src.name}")
    for name, d in catalog.DERIVED.items():
        if d.compute is not None:
            catalog.DERIVED[name] = dataclasses.replace(d, compute=timed(d.compute, f"image {name}"),
                                                        window=d.window and timed(d.window, f"image {name}"))
    for name, s in catalog.STATISTICS.items():
        if s.support == "scene":
            catalog.STATISTICS[name] = dataclasses.replace(s, chunk=timed(s.chunk, f"statistic {name}"))
    base = args.tmpdir or tempfile.gettempdir()
    with tempfile.TemporaryDirectory(dir=base, prefix="bench_tile_") as folder:
        paths = make_scene(folder, args.sizes[0], "full")
        job = api.job(paths, full_settings(sensor="WV3", protocol=args.protocol), tile_size=args.tile_size)
        tile = next(t for t in job.tiles if t.rows[0] > 0 and t.cols[0] > 0)
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            spent.clear()
            t0 = time.thread_time()
            tile_module.full_tile(job.ctx, tile)
            spent["whole tile"] = time.thread_time() - t0
            best = {k: min(best.get(k, np.inf), v) for k, v in spent.items()}
    print(f"one interior {args.tile_size}^2 x {BANDS} tile, {args.protocol}: thread CPU ms (min of {args.repeat})")
    for name, seconds in sorted(best.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<26s} {seconds * 1e3:7.1f}")


def _extrapolate(measured: dict[tuple[str, int], list[tuple[int, float]]], side: int) -> None:
    """Times scaled to a ``side`` x ``side`` scene: the largest run times the pixel ratio, and a + b pixels."""
    for (resolution, workers), runs in measured.items():
        n, t = max(runs)
        line = f"{resolution:8} {side:>6} {workers:>7} scaled from {n}^2: {t * (side / n) ** 2:7.1f} s"
        if len({m for m, _ in runs}) > 1:
            b, a = np.polyfit([m * m for m, _ in runs], [s for _, s in runs], 1)
            sizes = sorted({m for m, _ in runs})
            line += f"; a + b pixels fitted to {sizes}: {a + b * side * side:7.1f} s (a = {a:.1f} s)"
        print(line)


if __name__ == "__main__":
    main()

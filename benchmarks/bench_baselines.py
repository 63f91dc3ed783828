"""Peak memory and time of ``pansharp-eval baselines`` on a generated n x n x 8 scene (issue 20).

For each size the script writes a one-scene full-resolution dataset (``s_ms.npy`` 11-bit uint16
``n/4 x n/4 x 8``, ``s_pan.npy`` ``n x n``, sensor WV3, ratio 4), then, for each method, runs in a
fresh process either the command (``strips``: ``pansharp-eval baselines DATA --out OUT --methods
M``, strip by strip into the ``.npy``) or, with ``--whole``, the library on the whole scene as one
strip in memory followed by ``np.save`` (the in-memory cost the strips avoid). Reported per run: wall
time, CPU time (user + system) and the process's peak resident memory (``ru_maxrss``, the kernel's
high-water mark: no sampling). The machine may be shared: compare CPU times, not wall times.

Run: ``python benchmarks/bench_baselines.py [--sizes 2048 4096] [--whole] [--methods GSA BT-H]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

METHODS = ("EXP", "BT-H", "GSA", "MTF-GLP-HPM")


def make_dataset(folder: str, n: int) -> None:
    """Smooth 11-bit texture plus noise, PAN n x n, MS n/4 x n/4 x 8, written row block by row block."""
    os.makedirs(folder)
    rng = np.random.default_rng(0)
    pan = np.lib.format.open_memmap(os.path.join(folder, "s_pan.npy"), "w+", np.uint16, (n, n))
    ms = np.lib.format.open_memmap(os.path.join(folder, "s_ms.npy"), "w+", np.uint16, (n // 4, n // 4, 8))
    xx = np.arange(n)[None, :] / 97.0
    for r0 in range(0, n, 256):
        yy = np.arange(r0, min(n, r0 + 256))[:, None] / 113.0
        base = 900 + 400 * np.sin(yy) * np.cos(xx) + 200 * np.sin(0.37 * yy + 0.21 * xx)
        pan[r0 : r0 + len(yy)] = np.clip(base + 20 * rng.standard_normal(base.shape), 0, 2047).round()
        low = base[1::4, 1::4]
        ms[r0 // 4 : (r0 + len(yy)) // 4] = np.stack(
            [np.clip(low + 30 * b + 5 * rng.standard_normal(low.shape), 0, 2047).round() for b in range(8)], -1)
    pan.flush()
    ms.flush()
    del pan, ms
    with open(os.path.join(folder, "dataset.toml"), "w", encoding="utf-8") as handle:
        handle.write('sensor = "WV3"\nratio = 4\nbits = 11\nresolution = "full"\nresult_scale = "dn"\n')


def _child(args: argparse.Namespace) -> None:
    """One measured run in this fresh process; prints a JSON line."""
    t0, c0 = time.perf_counter(), time.process_time()
    if args.mode == "strips":
        from pansharp_iqa.cli.main import main as cli_main

        code = cli_main(["baselines", args.data, "--out", args.out, "--methods", args.method, "--force"])
    else:
        from pansharp_iqa.baselines import BASELINES

        ms, pan = np.load(os.path.join(args.data, "s_ms.npy")), np.load(os.path.join(args.data, "s_pan.npy"))
        fused = BASELINES[args.method](ms, pan, sensor="WV3", ratio=4, strip_rows=pan.shape[0])
        os.makedirs(os.path.join(args.out, args.method), exist_ok=True)
        np.save(os.path.join(args.out, args.method, "s.npy"), fused)
        code = 0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"code": code, "seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                      "peak": peak_kib * 1024}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--whole", action="store_true", help="also run the library in memory (one strip)")
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="strips", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--method", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    print(f"{'size':>6} {'method':12} {'mode':7} {'wall s':>7} {'cpu s':>7} {'peak RSS':>9}")
    modes = ["strips", "whole"] if args.whole else ["strips"]
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
        for n in args.sizes:
            data = os.path.join(tmp, f"data_{n}")
            make_dataset(data, n)
            for method in args.methods:
                for mode in modes:
                    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--mode", mode, "--data", data,
                           "--out", os.path.join(tmp, f"out_{n}_{mode}"), "--method", method]
                    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
                    if proc.returncode:
                        sys.exit(f"{method} {mode} failed:\n{proc.stderr[-3000:]}")
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                    print(f"{n:>6} {method:12} {mode:7} {r['seconds']:7.2f} {r['cpu']:7.2f} "
                          f"{r['peak'] / 2**20:7.0f} MiB", flush=True)


if __name__ == "__main__":
    main()

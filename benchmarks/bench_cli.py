"""Benchmark of ``pansharp-eval evaluate``: 20 scenes of 256 x 256 x 8 (reduced resolution), 4 methods.

Measures the wall time of the whole command with ``--jobs 1`` and ``--jobs 2``, and the time
spent in the core metrics alone (``evaluate_reduced`` on arrays already in memory), to show that
the command's time is dominated by the metrics.

``--overhead N`` also measures what the visual reports add: the same run (``--jobs 1``) with the
default formats, with ``--format html`` added, with ``--figures`` and with both, N times each in
interleaved order. The machine may be shared and drift: each variant is compared with the
default run of the same round, and the median of these N paired overheads is printed with its
quartiles, next to the median times and every time. Run::

    python benchmarks/bench_cli.py [--scenes 20] [--size 256] [--bands 8] [--keep DIR] [--overhead 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import ndimage


def _scene(rng: np.random.Generator, size: int, bands: int) -> np.ndarray:
    coarse = rng.uniform(0.0, 1.0, (size // 16, size // 16, bands))
    img = ndimage.zoom(coarse, (16, 16, 1), order=3) + 0.05 * rng.normal(size=(size, size, bands))
    return np.round(200 + 1500 * (img - img.min()) / (img.max() - img.min()))


def build(root: Path, n_scenes: int, size: int, bands: int) -> tuple[Path, list[Path]]:
    """Write the dataset (``.npz`` per scene) and 4 method folders (``.npy`` per scene)."""
    data = root / "bench"
    data.mkdir(parents=True)
    (data / "dataset.toml").write_text(
        'sensor = "WV2"\nratio = 4\nbits = 11\nresolution = "reduced"\nresult_scale = "dn"\n'
    )
    methods = [root / "results" / f"method{k}" for k in range(4)]
    for m in methods:
        m.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i in range(n_scenes):
        gt = _scene(rng, size, bands)
        ms = gt[2::4, 2::4]
        pan = gt.mean(axis=2)
        np.savez(data / f"scene{i:02d}.npz", gt=gt.astype(np.uint16), ms=ms.astype(np.uint16), pan=pan)
        for k, m in enumerate(methods):
            np.save(m / f"scene{i:02d}.npy", gt + rng.normal(0, 5 + 10 * k, gt.shape))
    return data, methods


def metrics_only(data: Path, methods: list[Path]) -> float:
    """Seconds spent in ``evaluate_reduced`` alone (arrays preloaded)."""
    import pansharp_iqa as psi

    pairs = []
    for f in sorted(data.glob("*.npz")):
        gt = np.load(f)["gt"]
        pairs += [(np.load(m / f"{f.stem}.npy"), gt) for m in methods]
    t0 = time.perf_counter()
    for fused, gt in pairs:
        psi.evaluate_reduced(fused, gt, ratio=4, bits=11)
    return time.perf_counter() - t0


def run_cli(data: Path, methods: list[Path], out: Path, jobs: int, extra: tuple[str, ...] = ()) -> float:
    import contextlib
    import io

    from pansharp_iqa.cli.main import main

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["evaluate", str(data), *map(str, methods), "--out", str(out), "--jobs", str(jobs), "--force",
                     "--no-progress", *extra])
    elapsed = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"pansharp-eval exited with {code}")
    return elapsed


VARIANTS = {
    "default formats": (),
    "+ --format html": ("--format", "table,csv,json,md,tex,html"),
    "+ --figures": ("--figures",),
    "+ html and figures": ("--format", "table,csv,json,md,tex,html", "--figures"),
}


def overhead(data: Path, methods: list[Path], root: Path, repeat: int) -> None:
    """Median wall time of each variant over ``repeat`` interleaved runs (``--jobs 1``)."""
    times: dict[str, list[float]] = {k: [] for k in VARIANTS}
    run_cli(data, methods, root / "warm", 1, VARIANTS["+ html and figures"])  # imports, caches
    for _ in range(repeat):
        for name, extra in VARIANTS.items():
            times[name].append(run_cli(data, methods, root / "ov", 1, extra))
    base = np.array(times["default formats"])
    size = (root / "ov" / "report.html").stat().st_size / 2**20
    print(f"  visual reports (--jobs 1, {repeat} interleaved rounds: median time, median [quartiles] of the "
          "overhead over the same round's default run; all times in brackets):")
    for name, ts in times.items():
        extra = ""
        if name != "default formats":
            paired = 100 * (np.array(ts) - base) / base
            q1, med, q3 = np.percentile(paired, [25, 50, 75])
            extra = f"  {med:+.0f} % [{q1:+.0f}, {q3:+.0f}]"
        print(f"    {name:22s}: {float(np.median(ts)):6.2f} s{extra}  [{', '.join(f'{t:.2f}' for t in ts)}]")
    print(f"    report.html: {size:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=int, default=20)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--bands", type=int, default=8)
    parser.add_argument("--keep", type=Path, help="build the data here and keep it")
    parser.add_argument("--overhead", type=int, default=0, metavar="N",
                        help="also time --format html and --figures, N interleaved runs of each")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="pansharp-bench-"))
    try:
        data, methods = build(root, args.scenes, args.size, args.bands)
        t_metrics = metrics_only(data, methods)
        t1 = run_cli(data, methods, root / "out1", 1)
        t2 = run_cli(data, methods, root / "out2", 2)
        first = json.loads((root / "out1" / "results.json").read_text())
        same = all(
            json.loads((root / o / "results.json").read_text())[k] == first[k]
            for o in ("out2",) for k in ("scenes", "summary")
        )
        n = args.scenes * len(methods)
        print(f"{args.scenes} scenes of {args.size}x{args.size}x{args.bands}, {len(methods)} methods ({n} evaluations)")
        print(f"  metrics only (evaluate_reduced, in memory): {t_metrics:7.2f} s")
        print(f"  pansharp-eval --jobs 1                    : {t1:7.2f} s  "
              f"(metrics share {100 * t_metrics / t1:.0f} %)")
        print(f"  pansharp-eval --jobs 2                    : {t2:7.2f} s  (speed-up x{t1 / t2:.2f})")
        print(f"  results identical for --jobs 1 and 2      : {same}")
        if args.overhead:
            overhead(data, methods, root, args.overhead)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

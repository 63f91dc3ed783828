"""NLRNet (Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097) in MindSpore: speed,
profile and the tiling measurement behind the inference defaults.

Usage (requires the ``nlrnet`` extra)::

    python benchmarks/bench_nlrnet.py speed [--device CPU] [--mode graph] [--batch 4] [--size 64]
                                            [--steps 50] [--infer-size 256]
    python benchmarks/bench_nlrnet.py profile [--steps 10] [--out prof]
    python benchmarks/bench_nlrnet.py tiling --ckpt runs/wv2/last_net.ckpt --scene imgWV2.mat \
                                             --val-fraction 0.45 [--val-patch 128] [--patch 64]

``speed``: training samples/s (one optimisation step of the default 8-block network on a batch
of ``--size`` px patches) and inference megapixels/s (``--infer-size`` px tiles, inference form
of the network), each over ``--steps`` timed steps after untimed warm-up (compilation) steps;
min and median step times are printed, the throughputs use the median. Synthetic inputs.

``profile``: ``mindspore.Profiler`` over a few training steps; prints the share of device (CPU)
op time per operator type.

``tiling``: the held-out rows of a real scene are Wald-degraded and fused whole and with several
tile / overlap / blend choices; prints Q2n, Q, SAM, ERGAS, SCC (``evaluate_reduced``) and the
out-of-range fraction (``infer.range_report``) of each. The held-out rows are those ``prepare
--val-out`` keeps out of training with the same ``--patch``, ``--val-fraction`` and
``--val-patch`` (``h5data.validation_rows``, which refuses a split that leaves no whole
validation patch or fewer rows than one training patch): give the values the checkpoint's
training data were prepared with. Expected failures print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def _setup(device: str, mode: str) -> None:
    if device == "CPU":
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    from pansharp_iqa.nlrnet import env

    env.configure(device, mode, seed=0)


def _timed(fn, steps: int, warmup: int) -> list[float]:  # noqa: ANN001
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def speed(a: argparse.Namespace) -> None:
    """Print training samples/s and inference megapixels/s (min and median over ``a.steps``)."""
    _setup(a.device, a.mode)
    import mindspore as ms
    import numpy as np

    from pansharp_iqa.nlrnet.config import make_config
    from pansharp_iqa.nlrnet.model import NLRNet, count_parameters
    from pansharp_iqa.nlrnet.train import build_train_cell

    net = NLRNet()
    cell, _ = build_train_cell(net, make_config({"device": a.device, "mode": a.mode}))
    rng = np.random.default_rng(0)
    b, s = a.batch, a.size
    lms = ms.Tensor(rng.random((b, 8, s, s), dtype=np.float32))
    pan = ms.Tensor(rng.random((b, 1, s, s), dtype=np.float32))
    gt = ms.Tensor(rng.random((b, 8, s, s), dtype=np.float32))
    train_t = _timed(lambda: cell(lms, pan, gt).asnumpy(), a.steps, 3)
    net.set_train(False)
    t_ = a.infer_size
    ilms = ms.Tensor(rng.random((1, 8, t_, t_), dtype=np.float32))
    ipan = ms.Tensor(rng.random((1, 1, t_, t_), dtype=np.float32))
    infer_t = _timed(lambda: net(ilms, ipan).asnumpy(), a.steps, 3)
    print(f"NLRNet default ({count_parameters(net):,} parameters), {a.device} {a.mode}, "
          f"ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA')}, {os.cpu_count()} CPUs")
    for name, times, per in (("training", train_t, f"batch {b} x {s}x{s}"),
                             ("inference", infer_t, f"1 x {t_}x{t_}")):
        print(f"{name:9s} ({per}): step min {min(times) * 1e3:.1f} ms, median "
              f"{statistics.median(times) * 1e3:.1f} ms over {len(times)} steps")
    print(f"training:  {b / statistics.median(train_t):.2f} samples/s (median; best {b / min(train_t):.2f})")
    mpx = t_ * t_ / 1e6
    print(f"inference: {mpx / statistics.median(infer_t):.3f} megapixels/s (median; best "
          f"{mpx / min(infer_t):.3f})")


def profile(a: argparse.Namespace) -> None:
    """Profile a few training steps with ``mindspore.Profiler``; print op-time shares by type."""
    _setup("CPU", a.mode)
    import csv
    import glob

    import mindspore as ms
    import numpy as np

    from pansharp_iqa.nlrnet.config import make_config
    from pansharp_iqa.nlrnet.model import NLRNet
    from pansharp_iqa.nlrnet.train import build_train_cell

    net = NLRNet()
    cell, _ = build_train_cell(net, make_config({"mode": a.mode}))
    rng = np.random.default_rng(0)
    lms = ms.Tensor(rng.random((4, 8, 64, 64), dtype=np.float32))
    pan = ms.Tensor(rng.random((4, 1, 64, 64), dtype=np.float32))
    gt = ms.Tensor(rng.random((4, 8, 64, 64), dtype=np.float32))
    for _ in range(3):
        cell(lms, pan, gt).asnumpy()
    prof = ms.Profiler(output_path=a.out)
    for _ in range(a.steps):
        cell(lms, pan, gt).asnumpy()
    prof.stop()
    prof.analyse()
    # MindSpore 2.10 on CPU: <out>/<run>/FRAMEWORK/cpu_op_type_info_0.csv (times in ms)
    files = glob.glob(os.path.join(a.out, "**", "cpu_op_type_info*.csv"), recursive=True)
    if not files:
        print(f"no cpu_op_type_info*.csv found under {a.out}")
        return
    with open(sorted(files)[-1], newline="") as f:
        rows = list(csv.DictReader(f))
    total = sum(float(r["total_compute_time"]) for r in rows)
    print(f"{a.steps} training steps (batch 4, 64 x 64, {a.mode}): {total / a.steps:.0f} ms of op "
          "time per step")
    print("| operator type | calls per step | ms per step | share of op time |")
    print("|---|---|---|---|")
    for r in sorted(rows, key=lambda r: -float(r["total_compute_time"]))[:a.top]:
        t = float(r["total_compute_time"])
        print(f"| {r['op_type']} | {r['execution_frequency(per-step)']} | {t / a.steps:.1f} | "
              f"{100 * t / total:.1f} % |")


def tiling(a: argparse.Namespace) -> None:
    """Indexes of whole-scene vs tiled inference on held-out rows of a real scene."""
    _setup("CPU", "graph")
    import numpy as np

    import pansharp_iqa as core
    from pansharp_iqa.nlrnet.h5data import degrade_scene, validation_rows
    from pansharp_iqa.nlrnet.infer import load_predictor, range_report
    from pansharp_iqa.nlrnet.scenes import Scene, load_scene, resolve_metadata
    from pansharp_iqa.nlrnet.tiling import tiled_predict

    if not 0.0 < a.val_fraction < 1.0:
        raise ValueError("tiling needs 0 < --val-fraction < 1 (the value prepare was given)")
    scene = load_scene(a.scene)
    s_name, r, b = resolve_metadata(scene.sensor, scene.ratio, scene.bits, sensor=None, ratio=None,
                                    bits=None, where=scene.source)
    h = scene.ms.shape[0]
    # the rows prepare --val-out holds out (it refuses rows that leave less than one training
    # patch, so never more rows than the scene has)
    rows = validation_rows(h, val_fraction=a.val_fraction, val_patch=a.val_patch or a.patch,
                           patch=a.patch, ratio=r, where=scene.source)
    held = Scene(scene.name, scene.ms[h - rows:], scene.pan[(h - rows) * r:], s_name, r, b,
                 scene.source)
    quad = degrade_scene(held, s_name, r)
    scale = float(2 ** b - 1)
    lms = np.transpose(quad["lms"], (2, 0, 1)) / scale
    pan = quad["pan"] / scale
    predict, meta, _ = load_predictor(a.ckpt)
    print(f"{a.ckpt} (trained on {meta.get('train_patch')} px patches); held-out {held.ms.shape[0]} x "
          f"{held.ms.shape[1]} MS px of {scene.name}, reduced resolution")
    keys = ("Q2n", "Q", "SAM", "ERGAS", "SCC")
    print("| inference | " + " | ".join(keys) + " | out of range |")
    print("|---|" + "---|" * (len(keys) + 1))

    def row(label: str, fused01: np.ndarray) -> None:
        fused = np.transpose(fused01, (1, 2, 0)).astype(np.float64) * scale
        res = core.evaluate_reduced(fused, quad["gt"], ratio=r, bits=b)
        frac = range_report(fused, b)["fraction"]
        print(f"| {label} | " + " | ".join(f"{res[k]:.4f}" for k in keys) + f" | {100 * frac:.2f} % |",
              flush=True)

    row("EXP (no network)", lms)
    row("whole (no tiles)", tiled_predict(predict, lms, pan, tile=None, overlap=0))
    for tile in a.tiles:
        for overlap in sorted({0, tile // 4, tile // 2, 3 * tile // 4}):
            for blend in ("crop", "linear", "cosine"):
                if overlap == 0 and blend != "crop":
                    continue
                fused = tiled_predict(predict, lms, pan, tile=tile, overlap=overlap, blend=blend,
                                      batch=4)
                row(f"tile {tile}, overlap {overlap}, {blend}", fused)


def main() -> None:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what")
    s = sub.add_parser("speed")
    s.add_argument("--device", default="CPU")
    s.add_argument("--mode", default="graph", choices=("graph", "pynative"))
    s.add_argument("--batch", type=int, default=4)
    s.add_argument("--size", type=int, default=64)
    s.add_argument("--infer-size", type=int, default=256)
    s.add_argument("--steps", type=int, default=50)
    q = sub.add_parser("profile")
    q.add_argument("--mode", default="graph", choices=("graph", "pynative"))
    q.add_argument("--steps", type=int, default=10)
    q.add_argument("--out", default="nlrnet_profile")
    q.add_argument("--top", type=int, default=14, help="operator types listed")
    t = sub.add_parser("tiling")
    t.add_argument("--ckpt", required=True)
    t.add_argument("--scene", required=True)
    # the held-out rows: prepare's options, with its defaults (--val-fraction has none there)
    t.add_argument("--val-fraction", type=float, required=True,
                   help="--val-fraction the training data were prepared with")
    t.add_argument("--val-patch", type=int, help="prepare's --val-patch (default: --patch)")
    t.add_argument("--patch", type=int, default=128, help="prepare's --patch (default 128)")
    t.add_argument("--tiles", type=int, nargs="+", default=[64])
    a = p.parse_args()
    try:
        {"speed": speed, "profile": profile, "tiling": tiling, None: speed}[a.what](
            a if a.what else s.parse_args([]))
    except (ValueError, FileNotFoundError) as exc:  # expected failures (ValueError: InputError too)
        text = str(exc).strip().splitlines()
        print(f"bench_nlrnet {a.what}: error: {text[0] if text else type(exc).__name__}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()

"""``pansharp-nlrnet``: prepare data, train, infer, export, convert and self-check NLRNet (MindSpore).

NLRNet: Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097. See ``docs/nlrnet.md``.
Every expected failure (bad argument, missing or contradicting data, unusable device, existing
run folder) prints one line ``pansharp-nlrnet <command>: error: ...`` and exits with status 2;
training stopped by Ctrl-C (or SIGTERM, which MindSpore makes of a Ctrl-C during a step) saves a
resumable state, says so and exits with 130.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from . import env
from .tiling import BLENDS, DEFAULT_BLEND

__all__ = ["main", "build_parser"]

log = logging.getLogger("pansharp_iqa.nlrnet")


def _meta_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("metadata (only for data that do not state it; a contradiction is an error)")
    g.add_argument("--sensor", help="sensor name from the registry (e.g. WV2, QB, 'WV2[4band]', none)")
    g.add_argument("--ratio", type=int, help="PAN/MS resolution ratio")
    g.add_argument("--bits", type=int, help="radiometric bits")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pansharp-nlrnet``."""
    p = argparse.ArgumentParser(prog="pansharp-nlrnet", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    q = sub.add_parser("prepare", help="reduced-resolution h5 patch sets from full-resolution scenes")
    q.add_argument("scenes", nargs="+", help="FILE.mat or MS.tif,PAN.tif")
    q.add_argument("--out", required=True, help="training h5 to write")
    q.add_argument("--patch", type=int, default=128, help="patch size at GT scale, px (default 128)")
    q.add_argument("--stride", type=int, help="patch stride, px (default: the patch size)")
    q.add_argument("--val-out", help="also write a validation h5 from the bottom of each scene")
    q.add_argument("--val-fraction", type=float, default=0.0, help="fraction of rows for --val-out")
    q.add_argument("--val-patch", type=int, help="validation patch size, px (default: --patch)")
    _meta_flags(q)

    t = sub.add_parser("train", help="train NLRNet (released recipe by default)")
    t.add_argument("--data", help="training h5")
    t.add_argument("--val", help="validation h5 (patches >= 74 px)")
    t.add_argument("--out", help="run directory")
    t.add_argument("--config", help="TOML configuration ([train] table); flags override it")
    t.add_argument("--resume", metavar="RUN_DIR", help="continue RUN_DIR from its saved state")
    t.add_argument("--force", action="store_true",
                   help="start a new run in a non-empty --out (deletes only files a run recorded writing "
                        "there; never the --config file)")
    for flag, typ in (("--epochs", int), ("--batch-size", int), ("--lr", float), ("--blocks", int),
                      ("--seed", int), ("--workers", int), ("--val-batch", int)):
        t.add_argument(flag, type=typ)
    t.add_argument("--device", choices=env.DEVICES)
    t.add_argument("--mode", choices=env.MODES)
    t.add_argument("--amp", choices=("O0", "O1", "O2", "O3"))
    t.add_argument("--loss-scale", help="'dynamic' or a fixed number (O2/O3)")
    t.add_argument("--variant", choices=("released", "paper"))
    t.add_argument("--distributed", action="store_true", default=None,
                   help="data parallel (launch with msrun; see docs/nlrnet.md)")
    t.add_argument("--no-progress", dest="progress", action="store_false", default=None)
    t.add_argument("--max-steps", type=int, help="stop after this many steps (smoke runs)")
    _meta_flags(t)

    i = sub.add_parser("infer", help="fuse a test h5 or whole scenes; write RESULTS/<method>")
    i.add_argument("--ckpt", required=True, help=".ckpt (trained or converted) or a .mindir export")
    i.add_argument("--data", help="test h5 (reduced resolution, scored with evaluate_reduced)")
    i.add_argument("scenes", nargs="*", help="FILE.mat or MS.tif,PAN.tif (scored with evaluate_full)")
    i.add_argument("--out", required=True, help="method folder, e.g. RESULTS/nlrnet")
    i.add_argument("--tile", type=int,
                   help="tile size, px (default: the patch size the checkpoint was trained on)")
    i.add_argument("--overlap", type=int, help="least overlap between tiles, px (default: tile / 2)")
    i.add_argument("--blend", choices=BLENDS, default=DEFAULT_BLEND,
                   help=f"how overlapping tiles are combined (default {DEFAULT_BLEND})")
    i.add_argument("--whole-scene", action="store_true",
                   help="fuse each scene / patch at once (memory grows with the scene; NLRNet's "
                        "normalisation statistics then differ from training)")
    i.add_argument("--clip", action="store_true", help="clip the output to [0, 2^bits - 1] DN")
    i.add_argument("--batch", type=int, default=1, help="tiles / patches per call (in flight)")
    i.add_argument("--reduced", action="store_true", help="Wald-degrade scenes and use evaluate_reduced")
    i.add_argument("--device", choices=env.DEVICES, default="CPU")
    i.add_argument("--mode", choices=env.MODES, default="graph")
    _meta_flags(i)

    e = sub.add_parser("export", help="export a checkpoint as MindIR (static tile shape)")
    e.add_argument("--ckpt", required=True)
    e.add_argument("--format", default="MINDIR", choices=("MINDIR",))
    e.add_argument("--out", help="output file (default: CKPT with .mindir)")
    e.add_argument("--tile", type=int,
                   help="static input size, px (default: the patch size the checkpoint was trained on)")
    e.add_argument("--batch", type=int, default=1)
    e.add_argument("--device", choices=env.DEVICES, default="CPU")

    c = sub.add_parser("convert", help="convert the authors' PyTorch weights (no torch needed)")
    c.add_argument("--from-torch", required=True, metavar="FILE",
                   help="torch.save(model.state_dict()) file of the released code (e.g. net.model)")
    c.add_argument("--out", required=True, help="MindSpore network checkpoint to write (.ckpt)")
    c.add_argument("--train-patch", type=int, default=128,
                   help="patch size the weights were trained on, px (default 128, the released "
                        "code's --block_size); the default inference tile")
    c.add_argument("--force", action="store_true", help="overwrite --out")
    _meta_flags(c)

    d = sub.add_parser("doctor", help="check every operator against numpy on a device")
    d.add_argument("--device", choices=env.DEVICES, default="CPU")
    d.add_argument("--mode", choices=(*env.MODES, "both"), default="both")
    return p


def _train(a: argparse.Namespace) -> int:
    from .config import load_config, make_config
    from .train import TrainingInterrupted, train

    overrides = {"data": a.data, "val": a.val, "out": a.out, "epochs": a.epochs,
                 "batch_size": a.batch_size, "lr": a.lr, "blocks": a.blocks, "seed": a.seed,
                 "workers": a.workers, "val_batch": a.val_batch, "device": a.device, "mode": a.mode,
                 "amp": a.amp, "loss_scale": a.loss_scale, "variant": a.variant,
                 "distributed": a.distributed, "progress": a.progress, "sensor": a.sensor,
                 "ratio": a.ratio, "bits": a.bits}
    try:
        if a.resume:
            given = [k for k, v in overrides.items() if v is not None and k not in ("epochs", "progress")]
            if given:
                raise ValueError(f"--resume continues the run as configured in its config.toml; "
                                 f"drop {', '.join('--' + k.replace('_', '-') for k in given)}")
            from pathlib import Path

            cfg = make_config(None, {"out": a.resume, "progress": a.progress})
            cfg.epochs = a.epochs or 0
            if not a.epochs and (Path(a.resume) / "config.toml").is_file():
                cfg.epochs = load_config(Path(a.resume) / "config.toml").epochs
            result = train(cfg, resume=True, max_steps=a.max_steps)
        else:
            cfg = load_config(a.config, overrides) if a.config else make_config(None, overrides)
            if not cfg.data or not cfg.out:
                raise ValueError("train needs --data and --out (or a --config that sets them)")
            result = train(cfg, max_steps=a.max_steps, force=a.force, config_path=a.config)
    except TrainingInterrupted as stop:
        print(f"pansharp-nlrnet train: {stop}", file=sys.stderr)
        return 130
    print(json.dumps({k: v for k, v in result.items() if k != "losses"}, default=str))
    return 0


def _infer(a: argparse.Namespace) -> int:
    if bool(a.data) == bool(a.scenes):
        raise ValueError("infer needs either --data TEST.h5 or SCENE files (not both)")
    env.configure(a.device, a.mode)
    from .infer import infer_h5, infer_scenes

    opts = {"tile": a.tile, "overlap": a.overlap, "whole_scene": a.whole_scene, "blend": a.blend,
            "batch": a.batch, "clip": a.clip, "sensor": a.sensor, "ratio": a.ratio, "bits": a.bits}
    if a.data:
        doc = infer_h5(a.ckpt, a.data, a.out, **opts)
        print(json.dumps({**doc["mean"], "out_of_range": doc["out_of_range"]["fraction"]}))
    else:
        doc = infer_scenes(a.ckpt, a.scenes, a.out, reduced=a.reduced, **opts)
        for name, res in doc["scenes"].items():
            print(name, {k: (v["fraction"] if k == "out_of_range" else v)
                         for k, v in res.items() if k != "protocol"})
    return 0


def _convert(a: argparse.Namespace) -> int:
    env.configure("CPU", "pynative")
    from .convert import convert_torch

    net = convert_torch(a.from_torch, a.out, train_patch=a.train_patch, sensor=a.sensor,
                        ratio=a.ratio, bits=a.bits, force=a.force)
    m = net.meta
    print(f"{a.out}: NLRNet {m['bands']} bands, {m['blocks']} blocks, {m['features']} features"
          f"{' (with the released unused modules)' if m['released_unused'] else ''}, "
          f"trained on {m['train_patch']} px patches")
    return 0


#: exceptions that are expected failures (bad input, not a bug): one line, exit status 2.
#: ValueError includes the package's InputError family (DataError for an unreadable file,
#: MetadataConflictError, MetadataError, ...)
EXPECTED = (ValueError, FileNotFoundError, FileExistsError, PermissionError, IsADirectoryError,
            NotADirectoryError)


def _run(a: argparse.Namespace) -> int:
    if a.command == "prepare":
        from .h5data import prepare

        metas = prepare(a.scenes, a.out, patch=a.patch, stride=a.stride, sensor=a.sensor,
                        ratio=a.ratio, bits=a.bits, val_out=a.val_out, val_fraction=a.val_fraction,
                        val_patch=a.val_patch)
        for m in metas:
            print(f"{m.path}: {m.n} patches {m.bands}x{m.size}x{m.size}, sensor {m.sensor}, "
                  f"ratio {m.ratio}, {m.bits} bits")
        return 0
    if a.command == "train":
        return _train(a)
    if a.command == "infer":
        return _infer(a)
    if a.command == "convert":
        return _convert(a)
    if a.command == "export":
        env.configure(a.device, "graph")
        from .export import export_mindir

        out = a.out or str(a.ckpt).rsplit(".", 1)[0] + ".mindir"
        print(export_mindir(a.ckpt, out, tile=a.tile, batch=a.batch))
        return 0
    if a.command == "doctor":
        from .doctor import format_table, run_doctor

        modes = env.MODES if a.mode == "both" else (a.mode,)
        rows = run_doctor(a.device, modes)
        print(f"device {a.device}")
        print(format_table(rows))
        return 0 if all(r.ok for r in rows) else 1
    return 2  # pragma: no cover


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``pansharp-nlrnet``."""
    a = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    device = getattr(a, "device", None) or "CPU"
    if device == "CPU":
        set_now = env.ensure_cpu_isa()
        if set_now:
            log.info("set ONEDNN_MAX_CPU_ISA=%s (MindSpore CPU convolutions are ~100x slower in "
                     "oneDNN's AVX-512 reference path; export the variable to choose otherwise)", set_now)
    try:
        return _run(a)
    except EXPECTED as exc:
        text = str(exc).strip().splitlines()
        print(f"pansharp-nlrnet {a.command}: error: {text[0] if text else type(exc).__name__}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pansharp-nlrnet {a.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

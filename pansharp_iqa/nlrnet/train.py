"""NLRNet training loop: data-parallel capable, resumable, validated through ``pansharp_iqa``.

Recipe of Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097 (see
:mod:`pansharp_iqa.nlrnet.config`). Writes into ``RUN_DIR``:

* ``config.toml`` - every hyper-parameter;
* ``steps.jsonl`` - one line per step (epoch, step, loss);
* ``metrics.jsonl`` - one line per epoch (epoch, step, mean loss, Q2n, Q, SAM, ERGAS, SCC and
  their standard deviations over the validation patches, the sensor and the protocol card),
  scored by the library's ``mindspore.train.Metric``
  (:func:`pansharp_iqa.nlrnet.validate.evaluate_h5`; validation patches larger than the training
  patches are fused tile by tile, as ``infer`` does by default);
* ``last.ckpt`` (network + optimizer state + loss scale) and ``state.json`` after every epoch,
  and on SIGINT/SIGTERM after the current step (``state.json`` then holds the position inside
  the epoch);
* ``last_net.ckpt`` and ``best.ckpt`` (network checkpoints with the training patch size, sensor,
  ratio and bits; ``best.ckpt`` whenever validation Q2n improves);
* ``run_manifest.json`` - the names of the files above that the run has written (recorded
  before each is first written): ``force`` deletes those and only those.

``resume`` continues from ``last.ckpt``: the per-epoch data order is a pure function of
(seed, epoch) and the Adam moments, step and beta powers are restored, so the losses equal those
of an uninterrupted run. Nothing is written before every argument, the data and the run folder
have been checked; an existing run is only continued (``resume``) or replaced (``force``, which
never deletes or overwrites a file the manifest does not list, nor the ``--config`` file).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from .config import TrainConfig, load_config, save_config
from .h5data import H5Meta, read_meta
from .validate import evaluate_h5

__all__ = ["train", "build_network", "build_train_cell", "distributed_context",
           "check_run_folder", "recorded_files", "TrainingInterrupted", "RUN_FILES", "MANIFEST"]

log = logging.getLogger("pansharp_iqa.nlrnet")


def distributed_context(enabled: bool) -> tuple[int, int]:
    """Initialise data parallelism (under ``msrun``) and return ``(rank, world)``."""
    if not enabled:
        return 0, 1
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init

    init()
    rank, world = get_rank(), get_group_size()
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True, device_num=world)
    return rank, world


def build_network(bands: int, cfg: TrainConfig | dict):  # noqa: ANN201 - NLRNet
    """NLRNet for ``bands`` MS bands with the configuration's blocks/variant."""
    from .model import NLRNet

    get = cfg.get if isinstance(cfg, dict) else (lambda k, d=None: getattr(cfg, k, d))
    return NLRNet(bands=bands, blocks=int(get("blocks", 8)), variant=str(get("variant", "released")),
                  released_unused=bool(get("released_unused", True)))


def build_train_cell(net, cfg: TrainConfig):  # noqa: ANN001, ANN201 - mindspore cells
    """Loss + Adam + (loss-scaled) one-step training cell for ``net``."""
    import mindspore as ms
    from mindspore import nn

    from .losses import NetWithLoss, NLRNetLoss

    if cfg.amp in ("O2", "O3"):
        ms.amp.auto_mixed_precision(net, cfg.amp)
    opt = nn.Adam(net.trainable_params(), learning_rate=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2,
                  eps=cfg.adam_eps)
    with_loss = NetWithLoss(net, NLRNetLoss(cfg.w_l1, cfg.w_cos, cfg.w_band))
    if cfg.amp in ("O2", "O3"):
        if cfg.loss_scale == "dynamic":
            manager = ms.amp.DynamicLossScaleManager(init_loss_scale=2.0 ** 16, scale_factor=2,
                                                     scale_window=1000)
            sense = manager.get_update_cell()
        else:
            sense = ms.Tensor(float(cfg.loss_scale), ms.float32)
        cell = nn.TrainOneStepWithLossScaleCell(with_loss, opt, scale_sense=sense)
    else:
        cell = nn.TrainOneStepCell(with_loss, opt)
    cell.set_train()
    return cell, opt


RUN_FILES = ("config.toml", "steps.jsonl", "metrics.jsonl", "last.ckpt", "last_net.ckpt",
             "best.ckpt", "state.json")
"""The files a training run may write into its folder (besides :data:`MANIFEST`)."""

MANIFEST = "run_manifest.json"
"""Which of :data:`RUN_FILES` a run wrote; ``--force`` deletes only those (and the manifest)."""

_TOOL = "pansharp-nlrnet train"


class TrainingInterrupted(Exception):
    """Training stopped on SIGINT (Ctrl-C) or SIGTERM after saving a resumable state."""


def recorded_files(out: str | Path) -> set[str]:
    """Names of :data:`RUN_FILES` that a run of this tool recorded writing into ``out``."""
    path = Path(out) / MANIFEST
    if not path.exists():
        return set()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("tool") != _TOOL:
            raise ValueError
        return set(doc["files"]) & set(RUN_FILES)
    except (ValueError, KeyError, TypeError, AttributeError, OSError):
        raise ValueError(f"{path} is not a manifest written by {_TOOL}: move it away or choose "
                         "another --out") from None


def _same(a: Path, b: Path) -> bool:
    return a.samefile(b) if a.exists() and b.exists() else a.resolve() == b.resolve()


def check_run_folder(out: str | Path, *, resume: bool, force: bool,
                     writes: tuple[str, ...] = RUN_FILES, config: str | Path | None = None) -> list[Path]:
    """Refuse a run folder that training would damage; nothing is written or deleted here."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"run folder {out} exists and is not a folder")
    if resume:
        missing = [n for n in ("config.toml", "state.json", "last.ckpt") if not (out / n).is_file()]
        if missing:
            raise ValueError(f"{out} has no resumable state (missing {', '.join(missing)}): "
                             "start a new run with --data and --out instead")
        return []
    if config is not None:
        for name in (*RUN_FILES, MANIFEST):
            if _same(Path(config), out / name):
                raise ValueError(f"--config {config} is the run folder's {name}, which a new run "
                                 f"replaces: copy it out of {out} and pass the copy")
    if not (out.is_dir() and any(out.iterdir())):
        return []
    if not force:
        ours = [n for n in RUN_FILES if (out / n).exists()]
        what = f"holds a run ({', '.join(ours)})" if ours else "is not empty"
        raise ValueError(f"run folder {out} {what}: continue it with --resume {out}, choose a new "
                         "--out, or pass --force to start over (replaces only the run's own files)")
    recorded = recorded_files(out)
    doomed = [out / n for n in RUN_FILES if n in recorded and (out / n).is_file()]
    foreign = [n for n in writes if (out / n).exists() and not (n in recorded and (out / n).is_file())]
    if foreign:
        raise ValueError(f"run folder {out} holds {', '.join(foreign)}, which no run recorded writing "
                         f"({MANIFEST}) and the new run would replace: --force deletes only a "
                         "run's own files; move them away or choose another --out")
    kept = [n for n in RUN_FILES if (out / n).exists() and out / n not in doomed]
    if kept:
        log.info("--force keeps %s in %s (not written by a run)", ", ".join(kept), out)
    return doomed + ([out / MANIFEST] if (out / MANIFEST).exists() else [])


class _Manifest:
    """Records each run file's name in :data:`MANIFEST` before the file is first written."""

    def __init__(self, out: Path, names: set[str]) -> None:
        self.path, self.names = out / MANIFEST, set(names)

    def __call__(self, name: str) -> Path:
        if name not in self.names:
            self.names.add(name)
            self.path.write_text(json.dumps({"tool": _TOOL, "files": sorted(self.names)}, indent=1),
                                 encoding="utf-8")
        return self.path.parent / name


def _jsonl(path: Path, record: dict) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _truncate_jsonl(path: Path, key: str, last: int) -> None:
    """Keep the records of ``path`` whose ``key`` is <= ``last`` (drops steps after the saved state)."""
    if not path.is_file():
        return
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = [line for line in lines if int(json.loads(line)[key]) <= last]
    if len(keep) != len(lines):
        path.write_text("".join(line + "\n" for line in keep), encoding="utf-8")


def _predictor(net, *, size: int, tile: int, batch: int):  # noqa: ANN001, ANN202
    """Validation predictor: the network's output tensor; patches larger than the training tile are fused tile by tile,
    as ``infer`` does by default, so the validation scores are those of inference (a numpy array then)."""
    import mindspore as ms

    from .tiling import default_overlap, tiled_predict

    def predict(lms: np.ndarray, pan: np.ndarray) -> ms.Tensor:
        return net(ms.Tensor(lms), ms.Tensor(pan))

    if size <= tile:
        return predict

    def tiled(lms: np.ndarray, pan: np.ndarray) -> np.ndarray:
        return np.stack([tiled_predict(predict, a, b, tile=tile, overlap=default_overlap(tile),
                                       batch=batch) for a, b in zip(lms, pan, strict=True)])

    return tiled


class _StopFlag:
    """SIGINT/SIGTERM handler for the training loop: the first signal asks to stop after the current step; a second one
    interrupts at once (no state saved)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _StopFlag:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:  # noqa: ARG002
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum
        log.warning("stop requested (signal %d): saving a resumable state after this step", signum)

    def __exit__(self, *exc: object) -> None:
        import signal

        for sig, old in self._old.items():
            signal.signal(sig, old)


def _check_inputs(cfg: TrainConfig, world: int) -> tuple[H5Meta, H5Meta | None]:
    """Read and cross-check the data of a run before anything is written."""
    from .validate import MIN_RR_SIZE

    flags = {"sensor": cfg.sensor or None, "ratio": cfg.ratio or None, "bits": cfg.bits or None}
    for label, path in (("--data", cfg.data), ("--val", cfg.val)):
        if path and not Path(path).is_file():
            raise FileNotFoundError(f"{label} {path}: no such file")
    meta: H5Meta = read_meta(cfg.data, **flags)
    vmeta: H5Meta | None = read_meta(cfg.val, **flags) if cfg.val else None
    if vmeta is not None and (vmeta.sensor, vmeta.ratio, vmeta.bits, vmeta.bands) != (
            meta.sensor, meta.ratio, meta.bits, meta.bands):
        raise ValueError(f"validation file {vmeta.path} ({vmeta.sensor}, ratio {vmeta.ratio}, "
                         f"{vmeta.bits} bits, {vmeta.bands} bands) does not match the training file "
                         f"({meta.sensor}, {meta.ratio}, {meta.bits}, {meta.bands})")
    if vmeta is not None and vmeta.size < MIN_RR_SIZE:
        raise ValueError(f"validation patches of {vmeta.path} are {vmeta.size} px; the reduced-"
                         f"resolution protocol needs >= {MIN_RR_SIZE} px (prepare --val-patch 80)")
    if meta.n < cfg.batch_size * world:
        raise ValueError(f"--batch-size {cfg.batch_size} x {world} worker(s) is more than the "
                         f"{meta.n} patches of {meta.path}: use --batch-size <= {meta.n // world}")
    return meta, vmeta


def train(cfg: TrainConfig, *, resume: bool = False, max_steps: int | None = None,
          force: bool = False, config_path: str | Path | None = None) -> dict:
    """Train NLRNet as configured."""
    from . import env

    out = Path(cfg.out)
    known: set[str] = set()  # run files recorded in the manifest (continued by resume)
    if resume:
        check_run_folder(out, resume=True, force=False)
        known = recorded_files(out)
        overrides = {"epochs": cfg.epochs, "progress": cfg.progress}
        cfg = load_config(out / "config.toml", overrides)
    cfg.validate()
    env.require_device(cfg.device)  # the one probe of the device (configure below trusts it)
    if cfg.distributed:  # the communication layer needs the device target first
        env.configure(cfg.device, cfg.mode, seed=cfg.seed, device_checked=True)
    rank, world = distributed_context(cfg.distributed)
    doomed: list[Path] = []
    if rank == 0 and not resume:  # only rank 0 writes the folder (others would race with it)
        writes = tuple(n for n in RUN_FILES if n != "best.ckpt" or cfg.val)
        doomed = check_run_folder(out, resume=False, force=force, writes=writes, config=config_path)
    meta, vmeta = _check_inputs(cfg, world)
    state: dict[str, Any] = {"epoch": 0, "step": 0, "batch": 0, "epoch_losses": [], "best_q2n": None}
    if resume:
        state.update(json.loads((out / "state.json").read_text()))
        if int(state["epoch"]) >= cfg.epochs and not state.get("batch"):
            raise ValueError(f"{out} already trained {state['epoch']} epochs: pass --epochs N "
                             f"with N > {state['epoch']} to train longer")
    if not cfg.distributed:
        env.configure(cfg.device, cfg.mode, seed=cfg.seed, device_checked=True)
    if cfg.device == "CPU":
        import os

        log.info("CPU: ONEDNN_MAX_CPU_ISA=%s", os.environ.get("ONEDNN_MAX_CPU_ISA"))
    import mindspore as ms

    record = _Manifest(out, known)
    if rank == 0:
        for path in doomed:  # only files a run recorded writing (check_run_folder)
            path.unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        if resume:
            record("config.toml")  # the run's own configuration, read as such
            _truncate_jsonl(record("steps.jsonl"), "step", int(state["step"]))
            _truncate_jsonl(record("metrics.jsonl"), "epoch", int(state["epoch"]))
        else:
            save_config(cfg, record("config.toml"))

    net = build_network(meta.bands, cfg)
    cell, _ = build_train_cell(net, cfg)
    if resume:
        missing, _ = ms.load_param_into_net(cell, ms.load_checkpoint(str(out / "last.ckpt")),
                                            strict_load=True)
        if missing:
            raise ValueError(f"{out / 'last.ckpt'} lacks {missing[:5]}")
        log.info("resumed %s at epoch %d, step %d", out, int(state["epoch"]), int(state["step"]))

    from .checkpoint import save_network
    from .dataset import H5PatchSource, epoch_order, make_dataset

    source = H5PatchSource(meta)
    g = cfg.batch_size * world
    steps_per_epoch = meta.n // g
    model_meta = {"sensor": meta.sensor, "ratio": meta.ratio, "bits": meta.bits,
                  "train_patch": meta.size, "source": f"trained by pansharp_iqa on {Path(meta.path).name}"}
    losses: list[float] = []
    last_metrics: dict = {}
    step = int(state["step"])

    def save_state(epoch_done: int, batch: int, epoch_losses: list[float]) -> None:
        ms.save_checkpoint(cell, str(record("last.ckpt")), append_dict={"nlrnet_epoch": epoch_done})
        state.update(epoch=epoch_done, step=step, batch=batch, epoch_losses=epoch_losses)
        record("state.json").write_text(json.dumps(state))

    with _StopFlag() as stop:
        for epoch in range(int(state["epoch"]), cfg.epochs):
            skip = int(state.get("batch") or 0) if epoch == int(state["epoch"]) else 0
            epoch_losses = list(state.get("epoch_losses") or []) if skip else []
            order = epoch_order(meta.n, cfg.seed, epoch, g)[skip * g:]
            data = make_dataset(source, order, cfg.batch_size, rank=rank, world=world,
                                workers=cfg.workers)
            bar = None
            if cfg.progress and rank == 0:
                from tqdm import tqdm

                bar = tqdm(total=steps_per_epoch, initial=skip, desc=f"epoch {epoch + 1}/{cfg.epochs}",
                           unit="step")
            cell.set_train()
            try:
                for lms, pan, gt in data.create_tuple_iterator(num_epochs=1):
                    result = cell(lms, pan, gt)
                    loss = float((result[0] if isinstance(result, tuple) else result).asnumpy())
                    step += 1
                    losses.append(loss)
                    epoch_losses.append(loss)
                    if rank == 0:
                        _jsonl(record("steps.jsonl"), {"epoch": epoch + 1, "step": step, "loss": loss})
                    if bar is not None:
                        bar.set_postfix(loss=f"{loss:.4f}")
                        bar.update(1)
                    if stop.signum is not None and len(epoch_losses) < steps_per_epoch:
                        if rank == 0:
                            save_state(epoch, len(epoch_losses), epoch_losses)
                        raise TrainingInterrupted(
                            f"interrupted at epoch {epoch + 1}, step {step}: resumable state saved; "
                            f"continue with: pansharp-nlrnet train --resume {out}")
                    if max_steps is not None and len(losses) >= max_steps:
                        break
            finally:
                if bar is not None:
                    bar.close()
            if max_steps is not None and len(losses) >= max_steps and len(epoch_losses) < steps_per_epoch:
                break
            if rank == 0:
                metrics: dict[str, Any] = {"epoch": epoch + 1, "step": step,
                                          "loss": float(np.mean(epoch_losses)), "sensor": meta.sensor,
                                          "ratio": meta.ratio, "bits": meta.bits}
                if vmeta is not None:
                    net.set_train(False)
                    t0 = time.time()
                    predict = _predictor(net, size=vmeta.size, tile=meta.size, batch=cfg.val_batch)
                    metrics.update(evaluate_h5(predict, vmeta, batch=cfg.val_batch))
                    net.set_train(True)
                    log.info("epoch %d: loss %.5f Q2n %.4f SAM %.3f ERGAS %.3f (%.1f s)", epoch + 1,
                             metrics["loss"], metrics["Q2n"], metrics["SAM"], metrics["ERGAS"],
                             time.time() - t0)
                    if state["best_q2n"] is None or metrics["Q2n"] > state["best_q2n"]:
                        state["best_q2n"] = metrics["Q2n"]
                        save_network(net, record("best.ckpt"), {**model_meta, "epoch": epoch + 1,
                                                                    "Q2n": metrics["Q2n"]})
                _jsonl(record("metrics.jsonl"), metrics)
                last_metrics = metrics
                save_network(net, record("last_net.ckpt"), {**model_meta, "epoch": epoch + 1})
                save_state(epoch + 1, 0, [])
            state.update(epoch=epoch + 1, step=step, batch=0, epoch_losses=[])
            if stop.signum is not None and epoch + 1 < cfg.epochs:
                raise TrainingInterrupted(
                    f"interrupted after epoch {epoch + 1}, step {step}: resumable state saved; "
                    f"continue with: pansharp-nlrnet train --resume {out}")
    return {"losses": losses, "epochs_done": int(state["epoch"]), "step": step,
            "best_q2n": state["best_q2n"], "last_metrics": last_metrics}

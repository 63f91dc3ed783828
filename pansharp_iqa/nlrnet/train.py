"""NLRNet training loop: data-parallel capable, resumable, validated through ``pansharp_iqa``.

Recipe of Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097 (see
:mod:`pansharp_iqa.nlrnet.config`). Writes into ``RUN_DIR``:

* ``config.toml`` - every hyper-parameter;
* ``steps.jsonl`` - one line per step (epoch, step, loss);
* ``metrics.jsonl`` - one line per epoch (epoch, step, mean loss, Q2n, Q, SAM, ERGAS, SCC, the
  sensor and the protocol card of ``pansharp_iqa.evaluate_reduced``);
* ``last.ckpt`` (network + optimizer state + loss scale) and ``state.json`` after every epoch;
* ``best.ckpt`` (network only) whenever validation Q2n improves.

``resume`` continues from ``last.ckpt``: the per-epoch data order is a pure function of
(seed, epoch) and the Adam moments, step and beta powers are restored, so the losses equal those
of an uninterrupted run.
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

__all__ = ["train", "build_network", "build_train_cell", "save_network", "load_network",
           "distributed_context"]

log = logging.getLogger("pansharp_iqa.nlrnet")


def distributed_context(enabled: bool) -> tuple[int, int]:
    """Initialise data parallelism (under ``msrun``) and return ``(rank, world)``.

    Collectives: ``mccl`` on CPU, ``nccl`` on GPU, ``hccl`` on Ascend (chosen by MindSpore from
    the device target); gradients are averaged over workers (``gradients_mean=True``).

    Parameters
    ----------
    enabled : bool
        ``False`` returns ``(0, 1)`` without touching the communication layer.

    Returns
    -------
    (rank, world) : (int, int)
    """
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
    """Loss + Adam + (loss-scaled) one-step training cell for ``net``.

    Parameters
    ----------
    net : NLRNet
    cfg : TrainConfig
        ``lr``, Adam betas/eps, loss weights, ``amp`` and ``loss_scale``.

    Returns
    -------
    (train_cell, optimizer)
        ``train_cell(lms, pan, gt)`` performs one optimisation step and returns the loss (or
        ``(loss, overflow, scale)`` under O2/O3).
    """
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


def save_network(net, path: str | Path, extra: dict[str, Any]) -> None:  # noqa: ANN001
    """Save network weights plus ``extra`` metadata (JSON, key ``nlrnet_meta``) to a checkpoint."""
    import mindspore as ms

    ms.save_checkpoint(net, str(path), append_dict={"nlrnet_meta": json.dumps(extra)})


def load_network(path: str | Path):  # noqa: ANN201
    """Rebuild an NLRNet from a checkpoint written by :func:`save_network`.

    Returns
    -------
    (net, meta) : (NLRNet, dict)
        ``meta`` holds ``bands``, ``blocks``, ``variant``, ``sensor``, ``ratio``, ``bits``.
    """
    import mindspore as ms

    params = ms.load_checkpoint(str(path))
    raw = params.pop("nlrnet_meta", None)
    if raw is None:
        raise ValueError(f"{path}: not an NLRNet checkpoint from pansharp_iqa (no nlrnet_meta)")
    meta = json.loads(raw if isinstance(raw, str) else str(raw))
    net = build_network(int(meta["bands"]), meta)
    missing, _ = ms.load_param_into_net(net, params, strict_load=True)
    if missing:
        raise ValueError(f"{path}: parameters missing from the checkpoint: {missing[:5]}...")
    net.set_train(False)
    return net, meta


def _jsonl(path: Path, record: dict) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _predictor(net):  # noqa: ANN001, ANN202
    import mindspore as ms

    def predict(lms: np.ndarray, pan: np.ndarray) -> np.ndarray:
        return net(ms.Tensor(lms), ms.Tensor(pan)).asnumpy().astype(np.float32)

    return predict


def train(cfg: TrainConfig, *, resume: bool = False, max_steps: int | None = None) -> dict:
    """Train NLRNet as configured.

    Parameters
    ----------
    cfg : TrainConfig
        Full configuration (``cfg.out`` is the run directory).
    resume : bool
        Continue from ``cfg.out/last.ckpt`` (the configuration is read from the run directory).
    max_steps : int, optional
        Stop after this many optimisation steps in this call (tests, smoke runs); the partial
        epoch is not checkpointed.

    Returns
    -------
    dict
        ``losses`` (list of per-step losses of this call), ``epochs_done``, ``step``,
        ``best_q2n``, ``last_metrics``.
    """
    from . import _env

    out = Path(cfg.out)
    if resume:
        overrides = {"epochs": cfg.epochs, "progress": cfg.progress}
        cfg = load_config(out / "config.toml", overrides)
    cfg.validate()
    _env.configure(cfg.device, cfg.mode, seed=cfg.seed)
    if cfg.device == "CPU":
        import os

        log.info("CPU: ONEDNN_MAX_CPU_ISA=%s", os.environ.get("ONEDNN_MAX_CPU_ISA"))
    import mindspore as ms

    rank, world = distributed_context(cfg.distributed)
    flags = {"sensor": cfg.sensor or None, "ratio": cfg.ratio or None, "bits": cfg.bits or None}
    meta: H5Meta = read_meta(cfg.data, **flags)
    vmeta: H5Meta | None = read_meta(cfg.val, **flags) if cfg.val else None
    if vmeta is not None and (vmeta.sensor, vmeta.ratio, vmeta.bits, vmeta.bands) != (
            meta.sensor, meta.ratio, meta.bits, meta.bands):
        raise ValueError(f"validation file {vmeta.path} ({vmeta.sensor}, ratio {vmeta.ratio}, "
                         f"{vmeta.bits} bits, {vmeta.bands} bands) does not match the training file "
                         f"({meta.sensor}, {meta.ratio}, {meta.bits}, {meta.bands})")
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
        if not resume:
            for name in ("steps.jsonl", "metrics.jsonl"):
                (out / name).unlink(missing_ok=True)
            save_config(cfg, out / "config.toml")

    net = build_network(meta.bands, cfg)
    cell, _ = build_train_cell(net, cfg)
    state = {"epoch": 0, "step": 0, "best_q2n": None}
    if resume:
        state = json.loads((out / "state.json").read_text())
        missing, _ = ms.load_param_into_net(cell, ms.load_checkpoint(str(out / "last.ckpt")),
                                            strict_load=True)
        if missing:
            raise RuntimeError(f"last.ckpt lacks {missing[:5]}")
        log.info("resumed %s at epoch %d, step %d", out, state["epoch"], state["step"])

    from .dataset import H5PatchSource, epoch_order, make_dataset

    source = H5PatchSource(meta)
    steps_per_epoch = meta.n // (cfg.batch_size * world)
    if steps_per_epoch == 0:
        raise ValueError(f"{meta.n} patches < one global batch ({cfg.batch_size} x {world} workers)")
    model_meta = {"bands": meta.bands, "blocks": cfg.blocks, "variant": cfg.variant,
                  "released_unused": cfg.released_unused, "sensor": meta.sensor,
                  "ratio": meta.ratio, "bits": meta.bits}
    losses: list[float] = []
    last_metrics: dict = {}
    step = int(state["step"])
    for epoch in range(int(state["epoch"]), cfg.epochs):
        order = epoch_order(meta.n, cfg.seed, epoch, cfg.batch_size * world)
        data = make_dataset(source, order, cfg.batch_size, rank=rank, world=world,
                            workers=cfg.workers)
        bar = None
        if cfg.progress and rank == 0:
            from tqdm import tqdm

            bar = tqdm(total=steps_per_epoch, desc=f"epoch {epoch + 1}/{cfg.epochs}", unit="step")
        epoch_losses = []
        cell.set_train()
        for lms, pan, gt in data.create_tuple_iterator(num_epochs=1):
            result = cell(lms, pan, gt)
            loss = float((result[0] if isinstance(result, tuple) else result).asnumpy())
            step += 1
            losses.append(loss)
            epoch_losses.append(loss)
            if rank == 0:
                _jsonl(out / "steps.jsonl", {"epoch": epoch + 1, "step": step, "loss": loss})
            if bar is not None:
                bar.set_postfix(loss=f"{loss:.4f}")
                bar.update(1)
            if max_steps is not None and len(losses) >= max_steps:
                break
        if bar is not None:
            bar.close()
        if max_steps is not None and len(losses) >= max_steps and len(epoch_losses) < steps_per_epoch:
            break
        if rank == 0:
            record: dict[str, Any] = {"epoch": epoch + 1, "step": step,
                                      "loss": float(np.mean(epoch_losses)), "sensor": meta.sensor,
                                      "ratio": meta.ratio, "bits": meta.bits}
            if vmeta is not None:
                net.set_train(False)
                t0 = time.time()
                record.update(evaluate_h5(_predictor(net), vmeta, batch=cfg.val_batch))
                net.set_train(True)
                log.info("epoch %d: loss %.5f Q2n %.4f SAM %.3f ERGAS %.3f (%.1f s)", epoch + 1,
                         record["loss"], record["Q2n"], record["SAM"], record["ERGAS"], time.time() - t0)
                if state["best_q2n"] is None or record["Q2n"] > state["best_q2n"]:
                    state["best_q2n"] = record["Q2n"]
                    save_network(net, out / "best.ckpt", {**model_meta, "epoch": epoch + 1,
                                                          "Q2n": record["Q2n"]})
            _jsonl(out / "metrics.jsonl", record)
            last_metrics = record
            ms.save_checkpoint(cell, str(out / "last.ckpt"),
                               append_dict={"nlrnet_epoch": epoch + 1})
            save_network(net, out / "last_net.ckpt", {**model_meta, "epoch": epoch + 1})
            state = {"epoch": epoch + 1, "step": step, "best_q2n": state["best_q2n"]}
            (out / "state.json").write_text(json.dumps(state))
        state["epoch"], state["step"] = epoch + 1, step
    return {"losses": losses, "epochs_done": int(state["epoch"]), "step": step,
            "best_q2n": state["best_q2n"], "last_metrics": last_metrics}

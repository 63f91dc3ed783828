"""Training configuration: every hyper-parameter, its TOML file and command-line overrides.

Defaults are the released NLRNet recipe (Lei et al., IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2021.3067097; authors' code): loss 85*L1 + 15*(1 - cos) + 15*band-difference L1,
Adam lr 5e-4, batch 16, 40 epochs, seed 1024. The whole configuration is saved as
``RUN_DIR/config.toml`` so a run can be repeated or resumed.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["TrainConfig", "load_config", "save_config", "AMP_LEVELS"]

AMP_LEVELS = ("O0", "O1", "O2", "O3")


@dataclasses.dataclass
class TrainConfig:
    """All settings of one training run (units in the field comments)."""

    data: str = ""                 #: training h5 (PanCollection layout)
    val: str = ""                  #: validation h5 (patches >= 74 px: 21/21 px cut + 32 px Q blocks)
    out: str = ""                  #: run directory
    epochs: int = 40
    batch_size: int = 16           #: per data-parallel worker
    lr: float = 5e-4               #: Adam learning rate
    beta1: float = 0.9
    beta2: float = 0.999
    adam_eps: float = 1e-8
    blocks: int = 8
    variant: str = "released"      #: "released" or "paper"
    released_unused: bool = True   #: build the released code's unused modules (675,808 params)
    w_l1: float = 85.0
    w_cos: float = 15.0
    w_band: float = 15.0
    seed: int = 1024
    device: str = "CPU"            #: CPU | GPU | Ascend
    mode: str = "graph"            #: graph | pynative
    amp: str = "O0"                #: O0 | O2 | O3 (O1 refused)
    loss_scale: str = "dynamic"    #: "dynamic" or a fixed number, for O2/O3
    val_batch: int = 8             #: validation batch (padded to a static shape)
    workers: int = 1               #: data-loader processes
    distributed: bool = False      #: data parallel under msrun
    sensor: str = ""               #: only for h5 files that do not state it
    ratio: int = 0                 #: idem (0 = not given)
    bits: int = 0                  #: idem (0 = not given)
    progress: bool = True          #: progress bar

    def validate(self) -> None:
        """Check values; raise ``ValueError`` naming the field and the fix."""
        if self.amp not in AMP_LEVELS:
            raise ValueError(f"amp must be one of {AMP_LEVELS}, got {self.amp!r}")
        if self.amp == "O1":
            raise ValueError(
                "amp O1 is refused: in MindSpore 2.10 its per-operator fp16 casting breaks on "
                "nn.LeakyReLU, which NLRNet uses everywhere. Use O0 (fp32), or O2/O3 with a "
                "loss-scale manager on GPU/Ascend.")
        if self.amp in ("O2", "O3") and self.device == "CPU":
            raise ValueError(f"amp {self.amp} needs fp16 kernels: use it on GPU or Ascend (CPU: O0)")
        if self.device not in ("CPU", "GPU", "Ascend"):
            raise ValueError(f"device must be CPU, GPU or Ascend, got {self.device!r}")
        if self.mode not in ("graph", "pynative"):
            raise ValueError(f"mode must be graph or pynative, got {self.mode!r}")
        if self.variant not in ("released", "paper"):
            raise ValueError(f"variant must be released or paper, got {self.variant!r}")
        for name in ("epochs", "batch_size", "blocks", "val_batch", "workers"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.loss_scale != "dynamic":
            float(self.loss_scale)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of all fields."""
        return dataclasses.asdict(self)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def save_config(cfg: TrainConfig, path: str | Path) -> None:
    """Write ``cfg`` as a flat TOML table ``[train]``."""
    lines = ["# NLRNet training configuration (pansharp_iqa.nlrnet)", "[train]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in cfg.to_dict().items()]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Read a TOML configuration (``[train]`` table or top level) and apply overrides."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    data = data.get("train", data)
    return make_config(data, overrides)


def make_config(data: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Build a :class:`TrainConfig` from a dict plus overrides, rejecting unknown keys."""
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    merged: dict[str, Any] = {}
    for src in (data or {}, {k: v for k, v in (overrides or {}).items() if v is not None}):
        for k, v in src.items():
            if k not in fields:
                raise ValueError(f"unknown configuration key {k!r}; known: {sorted(fields)}")
            merged[k] = v
    cfg = TrainConfig(**merged)
    for name, f in fields.items():  # coerce TOML/CLI types to the declared ones
        value = getattr(cfg, name)
        default = f.default
        if isinstance(default, bool):
            setattr(cfg, name, bool(value))
        elif isinstance(default, int):
            setattr(cfg, name, int(value))
        elif isinstance(default, float):
            setattr(cfg, name, float(value))
        else:
            setattr(cfg, name, str(value))
    return cfg

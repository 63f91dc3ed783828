"""MindIR export of a trained NLRNet and inference from the MindIR file.

The graph is exported with a static input shape (batch x B x T x T and batch x 1 x T x T), so
inference from it goes through :func:`tiling.tiled_predict` with tile T; T defaults to the
checkpoint's training patch size (``train_patch``). A JSON sidecar (``FILE.mindir.json``)
records bands, tile, batch and the training data's sensor/ratio/bits.
Model: Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["export_mindir", "load_mindir"]


def export_mindir(ckpt: str | Path, out: str | Path, *, tile: int | None = None, batch: int = 1) -> Path:
    """Export a checkpoint's network as MindIR."""
    import mindspore as ms

    from .checkpoint import load_network

    net = load_network(ckpt)
    meta = net.meta
    if tile is None:
        tile = meta.get("train_patch")
        if not tile:
            raise ValueError(f"{ckpt} does not record the patch size it was trained on: pass --tile N")
    tile, batch = int(tile), int(batch)
    if tile < 8 or batch < 1:
        raise ValueError(f"need --tile >= 8 and --batch >= 1, got {tile} and {batch}")
    out = Path(out)
    stem = out.with_suffix("") if out.suffix == ".mindir" else out
    stem.parent.mkdir(parents=True, exist_ok=True)
    lms = ms.Tensor(np.zeros((batch, int(meta["bands"]), tile, tile), np.float32))
    pan = ms.Tensor(np.zeros((batch, 1, tile, tile), np.float32))
    ms.export(net, lms, pan, file_name=str(stem), file_format="MINDIR")
    path = stem.with_suffix(".mindir")
    sidecar = {**meta, "tile": int(tile), "batch": int(batch), "source_ckpt": str(ckpt)}
    Path(str(path) + ".json").write_text(json.dumps(sidecar, indent=2))
    return path


def load_mindir(path: str | Path) -> tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], dict]:
    """Load a MindIR export for inference (graph mode is switched on: ``GraphCell`` needs it)."""
    import mindspore as ms
    from mindspore import nn

    sidecar = Path(str(path) + ".json")
    if not Path(path).is_file() or not sidecar.is_file():
        raise FileNotFoundError(f"{path}: a MindIR export needs the file and its {sidecar.name} sidecar")
    meta = json.loads(sidecar.read_text())
    ms.set_context(mode=ms.GRAPH_MODE)
    cell = nn.GraphCell(ms.load(str(path)))

    shape = (int(meta["batch"]), int(meta["bands"]), int(meta["tile"]), int(meta["tile"]))

    def predict(lms: np.ndarray, pan: np.ndarray) -> np.ndarray:
        if tuple(lms.shape) != shape:
            raise ValueError(f"{path} takes inputs of shape {shape} (static), got {tuple(lms.shape)}")
        return cell(ms.Tensor(np.ascontiguousarray(lms, np.float32)),
                    ms.Tensor(np.ascontiguousarray(pan, np.float32))).asnumpy()

    return predict, meta

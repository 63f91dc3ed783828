"""MindIR export of a trained NLRNet and inference from the MindIR file.

The graph is exported with a static input shape (batch x B x T x T and batch x 1 x T x T), so
inference from it goes through :func:`tiling.tiled_predict` with tile T. A JSON sidecar
(``FILE.mindir.json``) records bands, tile, batch and the training data's sensor/ratio/bits.
Model: Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["export_mindir", "load_mindir"]


def export_mindir(ckpt: str | Path, out: str | Path, *, tile: int = 256, batch: int = 1) -> Path:
    """Export a checkpoint's network as MindIR.

    Parameters
    ----------
    ckpt : path
        Checkpoint written by training (``best.ckpt``/``last_net.ckpt``).
    out : path
        Output file (``.mindir`` is appended if missing).
    tile : int
        Static spatial input size, px.
    batch : int
        Static batch size.

    Returns
    -------
    Path
        The ``.mindir`` file written.
    """
    import mindspore as ms

    from .train import load_network

    net, meta = load_network(ckpt)
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
    """Load a MindIR export for inference (graph mode is switched on: ``GraphCell`` needs it).

    Parameters
    ----------
    path : path
        ``.mindir`` file with its ``.json`` sidecar.

    Returns
    -------
    (predict, meta)
        ``predict(lms, pan) -> fused`` on float32 arrays of the exported shape, and the sidecar.
    """
    import mindspore as ms
    from mindspore import nn

    meta = json.loads(Path(str(path) + ".json").read_text())
    ms.set_context(mode=ms.GRAPH_MODE)
    cell = nn.GraphCell(ms.load(str(path)))

    def predict(lms: np.ndarray, pan: np.ndarray) -> np.ndarray:
        return cell(ms.Tensor(np.ascontiguousarray(lms, np.float32)),
                    ms.Tensor(np.ascontiguousarray(pan, np.float32))).asnumpy()

    return predict, meta

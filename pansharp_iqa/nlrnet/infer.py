"""NLRNet inference on a test h5 or on whole scenes, written in the ``pansharp-eval`` layout.

Outputs go to ``RESULTS/<method>`` (``--out``): ``<stem>.h5`` (dataset ``sr``, N x C x H x W) for
an h5 test set, ``<scene>.mat`` (``I_F``, H x W x B) per scene; values are in DN
(``result_scale = "dn"``). ``metrics.json`` holds ``pansharp_iqa.evaluate_reduced`` (test h5, or
scenes with ``reduced=True`` after Wald degradation) or ``evaluate_full`` (scenes) with the
sensor, ratio and bits read from the data. Model: Lei et al., IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2021.3067097.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

__all__ = ["load_predictor", "infer_h5", "infer_scenes"]

log = logging.getLogger("pansharp_iqa.nlrnet")

Predict = Callable[[np.ndarray, np.ndarray], np.ndarray]


def load_predictor(model: str | Path) -> tuple[Predict, dict, int | None]:
    """``predict(lms, pan)`` from a checkpoint (``.ckpt``) or a MindIR export (``.mindir``).

    Returns
    -------
    (predict, meta, fixed_tile)
        ``fixed_tile`` is the MindIR's static tile size (``None`` for a checkpoint).
    """
    if str(model).endswith(".mindir"):
        from .export import load_mindir

        predict, meta = load_mindir(model)
        return predict, meta, int(meta["tile"])
    import mindspore as ms

    from .train import load_network

    net, meta = load_network(model)

    def predict(lms: np.ndarray, pan: np.ndarray) -> np.ndarray:
        return net(ms.Tensor(np.ascontiguousarray(lms, np.float32)),
                   ms.Tensor(np.ascontiguousarray(pan, np.float32))).asnumpy()

    return predict, meta, None


def _check_bands(meta: dict, bands: int, where: str) -> None:
    if int(meta["bands"]) != bands:
        raise ValueError(f"{where} has {bands} bands but the model was trained on {meta['bands']}")


def infer_h5(model: str | Path, data: str | Path, out: str | Path, *, batch: int = 8,
             sensor: str | None = None, ratio: int | None = None, bits: int | None = None) -> dict:
    """Fuse every patch of a reduced-resolution h5 and score it against its ``gt``.

    Parameters
    ----------
    model : path
        ``.ckpt`` or ``.mindir``.
    data : path
        Test h5 (sensor/ratio/bits from its attributes, else the flags).
    out : path
        Method folder ``RESULTS/<method>``; receives ``<stem>.h5`` and ``metrics.json``.
    batch : int
        Inference batch (a MindIR export fixes it).
    sensor, ratio, bits : optional
        Only for files that do not state them.

    Returns
    -------
    dict
        The ``metrics.json`` document.
    """
    import h5py

    from .dataset import H5PatchSource
    from .h5data import read_meta
    from .validate import INDEXES, predict_batches, score_reduced

    meta = read_meta(data, sensor=sensor, ratio=ratio, bits=bits)
    predict, mmeta, fixed = load_predictor(model)
    _check_bands(mmeta, meta.bands, str(data))
    if fixed is not None:
        if fixed != meta.size:
            raise ValueError(f"the MindIR was exported for {fixed} px inputs, the patches are {meta.size} px")
        batch = int(mmeta["batch"])
    lms, pan, gt = H5PatchSource(meta).batch(range(meta.n))
    fused = predict_batches(predict, lms, pan, batch)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with h5py.File(out / f"{Path(data).stem}.h5", "w") as f:
        f.create_dataset("sr", data=(fused * meta.dn_scale).astype(np.float64))
        f.attrs.update({"result_scale": "dn", "sensor": meta.sensor, "bits": meta.bits,
                        "ratio": meta.ratio, "model": str(model)})
    scores, card = score_reduced(fused, gt, ratio=meta.ratio, bits=meta.bits)
    doc = {"model": str(model), "data": str(data), "resolution": "reduced", "sensor": meta.sensor,
           "ratio": meta.ratio, "bits": meta.bits, "result_scale": "dn",
           "mean": {k: float(np.mean([s[k] for s in scores])) for k in INDEXES},
           "scenes": {f"{Path(data).stem}_{i}": s for i, s in enumerate(scores)}, "protocol": card}
    (out / "metrics.json").write_text(json.dumps(doc, indent=2))
    return doc


def infer_scenes(model: str | Path, scenes: Sequence[str | Path], out: str | Path, *,
                 tile: int | None = None, overlap: int = 32, batch: int = 1,
                 reduced: bool = False, sensor: str | None = None, ratio: int | None = None,
                 bits: int | None = None) -> dict:
    """Fuse whole scenes (tiled) and evaluate them.

    Parameters
    ----------
    model : path
        ``.ckpt`` or ``.mindir`` (a MindIR fixes ``tile`` and ``batch``).
    scenes : sequence
        ``FILE.mat`` or ``MS.tif,PAN.tif``.
    out : path
        Method folder; receives ``<scene>.mat`` (``I_F`` in DN) and ``metrics.json``.
    tile, overlap, batch
        See :func:`tiling.tiled_predict` (``tile=None``: whole scene at once).
    reduced : bool
        Wald-degrade each scene first and score with ``evaluate_reduced`` against the native MS;
        otherwise fuse at full resolution and score with ``evaluate_full``.
    sensor, ratio, bits : optional
        Only for scenes that do not state them.

    Returns
    -------
    dict
        The ``metrics.json`` document.
    """
    import scipy.io as sio

    import pansharp_iqa as core

    from .h5data import degrade_scene
    from .scenes import load_scene, resolve_metadata
    from .tiling import tiled_predict

    predict, mmeta, fixed = load_predictor(model)
    if fixed is not None:
        if tile is not None and tile != fixed:
            raise ValueError(f"the MindIR was exported with tile {fixed}; got --tile {tile}")
        tile, batch = fixed, int(mmeta["batch"])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    doc: dict = {"model": str(model), "resolution": "reduced" if reduced else "full",
                 "tile": tile, "overlap": overlap, "result_scale": "dn", "scenes": {}}
    for spec in scenes:
        scene = load_scene(spec)
        s_name, r, b = resolve_metadata(scene.sensor, scene.ratio, scene.bits, sensor=sensor,
                                        ratio=ratio, bits=bits, where=scene.source)
        _check_bands(mmeta, scene.ms.shape[2], scene.source)
        scale = float(2 ** b - 1)
        if reduced:
            quad = degrade_scene(scene, s_name, r)
            lms, pan = quad["lms"], quad["pan"]
        else:
            lms = core.interp23tap(np.asarray(scene.ms, np.float64), r)
            pan = np.asarray(scene.pan, np.float64)
        fused = tiled_predict(predict, np.transpose(lms, (2, 0, 1)) / scale, pan / scale,
                              tile=tile, overlap=overlap, batch=batch)
        fused_dn = np.transpose(fused, (1, 2, 0)).astype(np.float64) * scale
        sio.savemat(out / f"{scene.name}.mat", {"I_F": fused_dn})
        if reduced:
            res = core.evaluate_reduced(fused_dn, quad["gt"], ratio=r, bits=b)
        else:
            res = core.evaluate_full(fused_dn, np.asarray(scene.ms, np.float64),
                                     np.asarray(scene.pan, np.float64), sensor=s_name, ratio=r, bits=b)
        res = {k: (float(v) if isinstance(v, (int, float, np.floating)) else v) for k, v in res.items()}
        doc["scenes"][scene.name] = {"sensor": s_name, "ratio": r, "bits": b, **res}
        log.info("%s: %s", scene.name, {k: v for k, v in res.items() if k != "protocol"})
    (out / "metrics.json").write_text(json.dumps(doc, indent=2, default=str))
    return doc

"""NLRNet inference on a test h5 or on whole scenes, written in the ``pansharp-eval`` layout.

Outputs go to ``RESULTS/<method>`` (``--out``): ``<stem>.h5`` (dataset ``sr``, N x C x H x W) for
an h5 test set, ``<scene>.mat`` (``I_F``, H x W x B) per scene; values are in DN
(``result_scale = "dn"``). ``metrics.json`` holds ``pansharp_iqa.evaluate_reduced`` (test h5: each
patch's values and their mean, through the validation metric
:func:`pansharp_iqa.nlrnet.validate.reduced_quality`; scenes with ``reduced=True`` after Wald
degradation) or ``evaluate_full`` (scenes) with the
sensor, ratio and bits read from the data, the tiling used, and the fraction of output values
outside the sensor's range ``[0, 2**bits - 1]``.

Refused before anything is written: a result file that would be one of the inputs (e.g. ``--out``
the folder of the test h5), data with another band count or ratio than the checkpoint records
(another sensor or bit depth is logged as a warning only).

Inference is tiled by default, with tiles of the size the network was trained on
(``train_patch`` in the checkpoint; see :mod:`.tiling` for why). Model: Lei et al., IEEE TGRS
60, 2022, doi:10.1109/TGRS.2021.3067097.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .tiling import DEFAULT_BLEND, default_overlap

#: Who declares the fused image's scale (DN, on its inputs' scale): the network's output is this command's own.
PRODUCER = "pansharp-nlrnet infer (the network's output, written in DN by the command itself)"

__all__ = ["load_predictor", "infer_h5", "infer_scenes", "resolve_tiling", "range_report"]

log = logging.getLogger("pansharp_iqa.nlrnet")

Predict = Callable[[np.ndarray, np.ndarray], np.ndarray]



def load_predictor(model: str | Path) -> tuple[Predict, dict, int | None]:
    """``predict(lms, pan)`` from a network checkpoint (``.ckpt``) or a MindIR export (``.mindir``)."""
    if str(model).endswith(".mindir"):
        from .export import load_mindir

        predict, meta = load_mindir(model)
        return predict, meta, int(meta["tile"])
    import mindspore as ms

    from .checkpoint import load_network

    net = load_network(model)

    def predict(lms: np.ndarray, pan: np.ndarray) -> np.ndarray:
        return net(ms.Tensor(np.ascontiguousarray(lms, np.float32)),
                   ms.Tensor(np.ascontiguousarray(pan, np.float32))).asnumpy()

    return predict, net.meta, None


def resolve_tiling(meta: dict, fixed: int | None, *, tile: int | None, overlap: int | None,
                   whole_scene: bool, where: str) -> tuple[int | None, int]:
    """Tile size and overlap for a model: explicit values, else the model's training patch size."""
    if whole_scene and tile is not None:
        raise ValueError("--whole-scene and --tile exclude each other")
    if fixed is not None:
        if whole_scene:
            raise ValueError(f"{where} is a MindIR export with a static {fixed} px tile: whole-scene "
                             "inference needs the .ckpt")
        if tile is not None and tile != fixed:
            raise ValueError(f"{where} was exported for {fixed} px tiles; got --tile {tile} "
                             f"(drop --tile, or export again with --tile {tile})")
        tile = fixed
    if whole_scene:
        return None, 0
    if tile is None:
        tile = meta.get("train_patch")
        if not tile:
            raise ValueError(f"{where} does not record the patch size it was trained on: pass "
                             "--tile N (that size, px) or --whole-scene")
    tile = int(tile)
    overlap = default_overlap(tile) if overlap is None else int(overlap)
    if tile < 8 or not 0 <= overlap < tile:
        raise ValueError(f"need --tile >= 8 and 0 <= --overlap < tile; got tile {tile}, overlap {overlap}")
    return tile, overlap


def range_report(fused_dn: np.ndarray, bits: int) -> dict:
    """How much of an output lies outside the sensor's range ``[0, 2**bits - 1]`` DN."""
    top = float(2 ** int(bits) - 1)
    n = max(int(fused_dn.size), 1)
    below = float(np.count_nonzero(fused_dn < 0.0)) / n
    above = float(np.count_nonzero(fused_dn > top)) / n
    return {"below": below, "above": above, "fraction": below + above,
            "min": float(np.min(fused_dn)), "max": float(np.max(fused_dn)), "range": [0.0, top]}


def _check_model(mmeta: dict, *, where: str, model: str | Path, bands: int | None = None,
                 sensor: str | None = None, ratio: int | None = None, bits: int | None = None) -> None:
    """The data must fit the model: band count and ratio (errors); another sensor or bit depth
    than the model was trained on is only logged. ``None``: not checked here."""
    from ..io.metadata import check_setting, same_sensor
    from ..validation import MetadataConflictError

    if bands is not None and int(mmeta["bands"]) != bands:
        raise ValueError(f"{where} has {bands} bands but the model was trained on {mmeta['bands']}")
    trained = mmeta.get("ratio")
    try:
        check_setting("ratio", trained, ratio, source=where, flag=f"model {model}")
    except MetadataConflictError:
        raise MetadataConflictError(
            f"{where} has ratio {ratio} but the model {model} was trained at ratio {trained}: use a "
            f"model trained for ratio {ratio}") from None
    if None not in (sensor, mmeta.get("sensor")) and not same_sensor(mmeta["sensor"], sensor):
        log.warning("%s is %s data but the model %s was trained on %s data: going on (check that "
                    "it transfers)", where, sensor, model, mmeta["sensor"])
    if None not in (bits, mmeta.get("bits")) and int(mmeta["bits"]) != int(bits):
        log.warning("%s has %d bits but the model %s was trained on %s-bit data (both normalised "
                    "to [0, 1]: going on)", where, int(bits), model, mmeta["bits"])


def _model_files(model: str | Path) -> list[Path]:
    model = Path(model)
    return [model, Path(f"{model}.json")] if str(model).endswith(".mindir") else [model]


def _prepare_out(out: str | Path, names: Sequence[str], inputs: Sequence[str | Path]) -> Path:
    """The method folder, after checking that no planned result file is an input (nothing written)."""
    from .scenes import check_not_inputs

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder")
    check_not_inputs([out / n for n in names], inputs, flag="--out")
    return out


def infer_h5(model: str | Path, data: str | Path, out: str | Path, *, batch: int = 8,
             tile: int | None = None, overlap: int | None = None, whole_scene: bool = False,
             blend: str = DEFAULT_BLEND, clip: bool = False, sensor: str | None = None,
             ratio: int | None = None, bits: int | None = None) -> dict:
    """Fuse every patch of a reduced-resolution h5 and score it against its ``gt``."""
    import h5py

    from .dataset import H5PatchSource
    from .h5data import read_meta
    from .tiling import tiled_predict
    from .validate import MIN_RR_SIZE, predict_batches, reduced_quality

    meta = read_meta(data, sensor=sensor, ratio=ratio, bits=bits)
    if meta.size < MIN_RR_SIZE:
        raise ValueError(f"{data}: patches of {meta.size} px cannot be scored (the reduced-resolution "
                         f"protocol needs >= {MIN_RR_SIZE} px); prepare a test set with --patch 80 or more")
    out = _prepare_out(out, [f"{Path(data).stem}.h5", "metrics.json"], [data, *_model_files(model)])
    predict, mmeta, fixed = load_predictor(model)
    _check_model(mmeta, bands=meta.bands, sensor=meta.sensor, ratio=meta.ratio, bits=meta.bits,
                 where=str(data), model=model)
    tile, overlap = resolve_tiling(mmeta, fixed, tile=tile, overlap=overlap,
                                   whole_scene=whole_scene, where=str(model))
    if fixed is not None:
        if meta.size < fixed:
            raise ValueError(f"the MindIR was exported for {fixed} px tiles, the patches of {data} are "
                             f"{meta.size} px: export with --tile {meta.size} (or less)")
        batch = int(mmeta["batch"])
    lms, pan, gt = H5PatchSource(meta).batch(range(meta.n))
    if tile is None or meta.size <= tile:
        fused = predict_batches(predict, lms, pan, batch)
    else:
        fused = np.stack([tiled_predict(predict, a, b, tile=tile, overlap=overlap, batch=batch,
                                        blend=blend) for a, b in zip(lms, pan, strict=True)])
    fused_dn = fused.astype(np.float64) * meta.dn_scale
    report = range_report(fused_dn, meta.bits)
    if clip:
        np.clip(fused_dn, 0.0, meta.dn_scale, out=fused_dn)
        fused = np.clip(fused, 0.0, 1.0)
    out.mkdir(parents=True, exist_ok=True)
    with h5py.File(out / f"{Path(data).stem}.h5", "w") as f:
        f.create_dataset("sr", data=fused_dn)
        f.attrs.update({"result_scale": "dn", "sensor": meta.sensor, "bits": meta.bits,
                        "ratio": meta.ratio, "model": str(model), "clipped": bool(clip)})
    # the [0, 1] output itself, scored as validation scores it (one metric): float32 x
    # (2**bits - 1) is exact in float64, so these are the numbers fused_dn would give, bit for bit
    metric = reduced_quality(meta, producer=PRODUCER)
    metric.update(fused, gt)
    table = metric.compute()
    names = metric.index_names
    doc = {"model": str(model), "data": str(data), "resolution": "reduced", "sensor": meta.sensor,
           "ratio": meta.ratio, "bits": meta.bits, "result_scale": "dn",
           "tile": tile, "overlap": overlap if tile else None, "blend": blend if tile else None,
           "clip": bool(clip), "out_of_range": report,
           "mean": {k: table[k] for k in names}, "std": table["std"],
           "scenes": {f"{Path(data).stem}_{i}": {k: table["per_image"][k][i] for k in names}
                      for i in range(meta.n)},
           "protocol": table["protocol"]}
    (out / "metrics.json").write_text(json.dumps(doc, indent=2))
    if report["fraction"] > 0:
        log.info("%.3g %% of the output lies outside [0, %d] DN%s", 100 * report["fraction"],
                 int(meta.dn_scale), " (clipped)" if clip else " (kept; --clip to clip)")
    return doc


def infer_scenes(model: str | Path, scenes: Sequence[str | Path], out: str | Path, *,
                 tile: int | None = None, overlap: int | None = None, whole_scene: bool = False,
                 blend: str = DEFAULT_BLEND, batch: int = 1, reduced: bool = False,
                 clip: bool = False, sensor: str | None = None, ratio: int | None = None,
                 bits: int | None = None) -> dict:
    """Fuse whole scenes (tiled, by default with the model's training patch size) and evaluate them."""
    import scipy.io as sio

    import pansharp_iqa as core

    from .h5data import degrade_scene
    from .scenes import load_scene, resolve_metadata, scene_name, stated_metadata
    from .tiling import BLENDS, tiled_predict

    if blend not in BLENDS:
        raise ValueError(f"blend must be one of {BLENDS}, got {blend!r}")
    specs = [str(s) for s in scenes]
    parts = [part for spec in specs for part in spec.split(",")]
    for part in parts:
        if not Path(part).is_file():
            raise FileNotFoundError(f"{part}: no such scene file")
    out = _prepare_out(out, [f"{scene_name(spec)}.mat" for spec in specs] + ["metrics.json"],
                       [*parts, *_model_files(model)])
    settings = [resolve_metadata(*stated_metadata(spec), sensor=sensor, ratio=ratio, bits=bits,
                                 where=spec) for spec in specs]
    predict, mmeta, fixed = load_predictor(model)
    for spec, (s_name, r, b) in zip(specs, settings, strict=True):
        _check_model(mmeta, sensor=s_name, ratio=r, bits=b, where=spec, model=model)
    tile, overlap = resolve_tiling(mmeta, fixed, tile=tile, overlap=overlap,
                                   whole_scene=whole_scene, where=str(model))
    if fixed is not None:
        batch = int(mmeta["batch"])
    out.mkdir(parents=True, exist_ok=True)
    doc: dict = {"model": str(model), "resolution": "reduced" if reduced else "full",
                 "tile": tile, "overlap": overlap if tile else None, "blend": blend if tile else None,
                 "clip": bool(clip), "result_scale": "dn", "scenes": {}}
    for spec, (s_name, r, b) in zip(specs, settings, strict=True):
        scene = load_scene(spec)
        _check_model(mmeta, bands=scene.ms.shape[2], where=scene.source, model=model)
        scale = float(2 ** b - 1)
        if reduced:
            quad = degrade_scene(scene, s_name, r)
            lms, pan = quad["lms"], quad["pan"]
        else:
            lms = core.interp23tap(np.asarray(scene.ms, np.float64), r)
            pan = np.asarray(scene.pan, np.float64)
        fused = tiled_predict(predict, np.transpose(lms, (2, 0, 1)) / scale, pan / scale,
                              tile=tile, overlap=overlap, batch=batch, blend=blend)
        fused_dn = np.transpose(fused, (1, 2, 0)).astype(np.float64) * scale
        report = range_report(fused_dn, b)
        if clip:
            np.clip(fused_dn, 0.0, scale, out=fused_dn)
        sio.savemat(out / f"{scene.name}.mat", {"I_F": fused_dn})
        declared = core.Declarations().with_value("fused", "dn", True, PRODUCER)
        if reduced:
            res = core.evaluate({"fused": fused_dn, "reference": quad["gt"]},
                                core.reduced_settings(ratio=r, bits=b, declared=declared))
        else:
            res = core.evaluate({"fused": fused_dn, "ms": np.asarray(scene.ms, np.float64),
                                 "pan": np.asarray(scene.pan, np.float64)},
                                core.full_settings(sensor=s_name, ratio=r, bits=b, declared=declared))
        res = {k: (float(v) if isinstance(v, (int, float, np.floating)) else v) for k, v in res.items()}
        doc["scenes"][scene.name] = {"sensor": s_name, "ratio": r, "bits": b, **res,
                                     "out_of_range": report}
        log.info("%s: %s; %.3g %% outside [0, %d] DN%s", scene.name,
                 {k: v for k, v in res.items() if k != "protocol"}, 100 * report["fraction"],
                 int(scale), " (clipped)" if clip else "")
    (out / "metrics.json").write_text(json.dumps(doc, indent=2, default=str))
    return doc

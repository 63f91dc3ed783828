"""Reduced-resolution training sets in the PanCollection HDF5 layout.

``prepare`` degrades full-resolution scenes with the Wald protocol (``pansharp_iqa.wald_degrade``
with the scene's sensor), cuts patches and writes ``gt``, ``ms``, ``lms``, ``pan`` (N x C x H x W,
float32, normalised by 2**bits - 1), with the sensor, ratio, bits and protocol as HDF5
attributes. ``read_meta`` reads those attributes back, or, for an existing PanCollection file
(no attributes, values in DN), takes them from the caller. Data for NLRNet (Lei et al.,
IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..io.metadata import NLRNET_LAYOUT, read_recorded
from ..validation import MetadataConflictError
from .scenes import Scene, check_not_inputs, load_scene, resolve_metadata

__all__ = ["H5Meta", "prepare", "read_meta", "check_h5_name", "degrade_scene", "cut_patches",
           "validation_rows", "LAYOUT", "H5_SUFFIXES"]

log = logging.getLogger("pansharp_iqa.nlrnet")

#: ``layout`` attribute of the files :func:`prepare` writes (defined in :mod:`pansharp_iqa.io.metadata`)
LAYOUT = NLRNET_LAYOUT
#: file suffixes read as HDF5 (those :func:`pansharp_iqa.io.metadata.read_recorded` reads)
H5_SUFFIXES = (".h5", ".hdf5")
PROTOCOL = (
    "Wald reduced resolution (toolbox2020): gt = MS at native scale; ms = MTF(sensor) filter + "
    "decimation at offset ratio//2; pan = MATLAB bicubic imresize(PAN, 1/ratio); "
    "lms = interp23tap(ms, ratio)"
)


@dataclasses.dataclass(frozen=True)
class H5Meta:
    """What an NLRNet h5 file holds."""

    path: str
    sensor: str
    ratio: int
    bits: int
    n: int
    bands: int
    size: int
    data_scale: float
    protocol: str

    @property
    def dn_scale(self) -> float:
        """Multiply [0, 1] data by this to get DN (2**bits - 1)."""
        return float(2 ** self.bits - 1)


def degrade_scene(scene: Scene, sensor: str, ratio: int) -> dict[str, np.ndarray]:
    """Reduced-resolution quadruple of one scene, in DN, (H, W, C) layout."""
    import pansharp_iqa as core

    h, w = scene.ms.shape[:2]
    h, w = h - h % ratio, w - w % ratio  # whole low-resolution pixels only
    gt = np.asarray(scene.ms[:h, :w], dtype=np.float64)
    pan = np.asarray(scene.pan[: h * ratio, : w * ratio], dtype=np.float64)
    ms_lr, pan_lr = core.wald_degrade(gt, pan, sensor, ratio)
    lms = core.interp23tap(ms_lr, ratio)
    return {"gt": gt, "ms": ms_lr, "lms": lms, "pan": pan_lr}


def cut_patches(quad: dict[str, np.ndarray], patch: int, stride: int, ratio: int
                ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Cut aligned patches (N x C x H x W) from a reduced-resolution quadruple."""
    if patch % ratio or stride % ratio or patch <= 0 or stride <= 0:
        raise ValueError(f"patch ({patch}) and stride ({stride}) must be positive multiples of ratio {ratio}")
    h, w = quad["gt"].shape[:2]
    rows = range(0, h - patch + 1, stride)
    cols = range(0, w - patch + 1, stride)
    origins = np.array([(y, x) for y in rows for x in cols], dtype=np.int64).reshape(-1, 2)
    p, q = patch, patch // ratio
    out = {
        "gt": np.stack([quad["gt"][y:y + p, x:x + p] for y, x in origins]) if len(origins) else None,
        "lms": np.stack([quad["lms"][y:y + p, x:x + p] for y, x in origins]) if len(origins) else None,
        "ms": np.stack([quad["ms"][y // ratio:y // ratio + q, x // ratio:x // ratio + q]
                        for y, x in origins]) if len(origins) else None,
        "pan": np.stack([quad["pan"][y:y + p, x:x + p, None] for y, x in origins]) if len(origins) else None,
    }
    if not len(origins):
        raise ValueError(f"scene {h}x{w} is smaller than one {patch}x{patch} patch")
    return {k: np.ascontiguousarray(v.transpose(0, 3, 1, 2)) for k, v in out.items()}, origins


def _write(out: Path, parts: list[tuple[dict[str, np.ndarray], np.ndarray, int]], *, sensor: str,
           ratio: int, bits: int, patch: int, stride: int, sources: list[str]) -> H5Meta:
    import h5py

    scale = float(2 ** bits - 1)
    out.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(out, "w") as f:
        for key in ("gt", "ms", "lms", "pan"):
            data = np.concatenate([p[key] for p, _, _ in parts]) / scale
            f.create_dataset(key, data=data.astype(np.float32))
        f.create_dataset("origin", data=np.concatenate([o for _, o, _ in parts]))
        f.create_dataset("scene_index", data=np.concatenate(
            [np.full(len(o), i, np.int64) for _, o, i in parts]))
        f.attrs.update({
            "layout": LAYOUT, "sensor": sensor, "ratio": int(ratio), "bits": int(bits),
            "normalised_by": scale, "protocol": PROTOCOL, "patch": int(patch), "stride": int(stride),
            "sources": json.dumps(sources),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        })
    return read_meta(out)


def validation_rows(height: int, *, val_fraction: float, val_patch: int, patch: int, ratio: int,
                    where: str) -> int:
    """Rows (at GT scale) of the bottom validation strip: whole validation patches within the fraction."""
    want = height * val_fraction
    rows = int(want / val_patch + 1e-9) * val_patch
    if rows == 0:
        fit = int(want) // ratio * ratio
        need = math.ceil(100.0 * val_patch / height) / 100.0
        hint = f"--val-patch {fit}, or " if fit >= 74 else ""  # 74 px: the protocol's minimum
        raise ValueError(
            f"{where}: --val-fraction {val_fraction} gives {want:.0f} of {height} rows, fewer than one "
            f"--val-patch {val_patch}: use {hint}--val-fraction {need:.2f} or more")
    if height - rows < patch:
        raise ValueError(
            f"{where}: --val-fraction {val_fraction} with --val-patch {val_patch} leaves {height - rows} "
            f"training rows, fewer than one --patch {patch}: lower --val-fraction or --patch")
    return rows


def prepare(scenes: Sequence[str | Path], out: str | Path, *, patch: int = 128,
            stride: int | None = None, sensor: str | None = None, ratio: int | None = None,
            bits: int | None = None, val_out: str | Path | None = None,
            val_fraction: float = 0.0, val_patch: int | None = None) -> list[H5Meta]:
    """Build reduced-resolution patch sets from full-resolution scenes."""
    stride = patch if stride is None else stride
    val_patch = patch if val_patch is None else val_patch
    if val_out is not None and not 0.0 < val_fraction < 1.0:
        raise ValueError("--val-out needs 0 < --val-fraction < 1")
    check_h5_name(out, flag="--out")
    if val_out is not None:
        check_h5_name(val_out, flag="--val-out")
    check_not_inputs([out] + ([val_out] if val_out is not None else []),
                     [part for spec in scenes for part in str(spec).split(",")], flag="--out/--val-out")
    common: tuple[str, int, int] | None = None
    train_parts, val_parts, sources = [], [], []
    for i, spec in enumerate(scenes):
        scene = load_scene(spec)
        meta = resolve_metadata(scene.sensor, scene.ratio, scene.bits, sensor=sensor, ratio=ratio,
                                bits=bits, where=scene.source)
        if common is not None and meta != common:
            raise MetadataConflictError(
                f"{scene.source}: (sensor, ratio, bits) = {meta} differs from the other scenes' {common}")
        common = meta
        s_name, r, b = meta
        sources.append(scene.source)
        h = scene.ms.shape[0]
        split = h
        if val_out is not None:
            split = h - validation_rows(h, val_fraction=val_fraction, val_patch=val_patch,
                                        patch=patch, ratio=r, where=scene.source)
        parts = [(train_parts, slice(0, split))]
        if val_out is not None:
            parts.append((val_parts, slice(split, h)))
        for target, rows in parts:
            sub = Scene(scene.name, scene.ms[rows], scene.pan[rows.start * r: (rows.stop) * r],
                        *meta, scene.source)
            quad = degrade_scene(sub, s_name, r)
            is_val = target is val_parts
            p, o = cut_patches(quad, val_patch if is_val else patch, val_patch if is_val else stride, r)
            target.append((p, o, i))
        log.info("%s: sensor %s ratio %d bits %d", scene.source, s_name, r, b)
    assert common is not None, "no scenes given"
    s_name, r, b = common
    written = [_write(Path(out), train_parts, sensor=s_name, ratio=r, bits=b, patch=patch,
                      stride=stride, sources=sources)]
    if val_out is not None:
        written.append(_write(Path(val_out), val_parts, sensor=s_name, ratio=r, bits=b,
                              patch=val_patch, stride=val_patch, sources=sources))
    return written


def check_h5_name(path: str | Path, *, flag: str) -> None:
    """Refuse a file name without the HDF5 suffix (``.h5``/``.hdf5``) the package reads metadata by.

    Raises
    ------
    ValueError
        Naming the file and the fix.

    Examples
    --------
    >>> check_h5_name("notes.txt", flag="--data")
    Traceback (most recent call last):
    ...
    ValueError: --data notes.txt: expected an HDF5 file named .h5 or .hdf5 (PanCollection layout: gt, ms, lms, pan)
    """
    if Path(path).suffix.lower() not in H5_SUFFIXES:
        raise ValueError(f"{flag} {path}: expected an HDF5 file named .h5 or .hdf5 (PanCollection "
                         "layout: gt, ms, lms, pan)")


def read_meta(path: str | Path, *, sensor: str | None = None, ratio: int | None = None,
              bits: int | None = None) -> H5Meta:
    """Read an NLRNet/PanCollection h5's metadata."""
    import h5py

    check_h5_name(path, flag="data file")
    # sensor, ratio, bits and layout through the package's one parser (io.metadata); it also
    # turns an unreadable file into one DataError line
    recorded = read_recorded(path)
    ours = recorded.resolution == "reduced"  # layout == NLRNET_LAYOUT and a gt dataset
    with h5py.File(path, "r") as f:
        for key in ("gt", "lms", "pan"):
            if not isinstance(f.get(key), h5py.Dataset):
                raise ValueError(f"{path}: missing dataset {key!r} (PanCollection layout: gt, ms, lms, pan)")
        gt = f["gt"]
        if gt.ndim != 4:
            raise ValueError(f"{path}: gt has shape {gt.shape}, expected N x C x H x W")
        n, c, hh, ww = gt.shape
        s, r, b = resolve_metadata(recorded.sensor, recorded.ratio, recorded.bits, sensor=sensor,
                                   ratio=ratio, bits=bits, where=str(path))
        if ours:
            data_scale = 1.0
            protocol = str(f.attrs.get("protocol", PROTOCOL))
        else:
            peak = float(np.max(gt[: min(n, 8)]))
            data_scale = float(2 ** b - 1) if peak > 1.0 else 1.0
            protocol = "external PanCollection file (protocol unknown)"
            log.info("%s: external file, values %s -> divided by %g", path,
                     "in DN" if peak > 1.0 else "already in [0, 1]", data_scale)
    if hh != ww:
        raise ValueError(f"{path}: patches must be square, got {hh}x{ww}")
    return H5Meta(str(path), str(s), int(r), int(b), int(n), int(c), int(hh), data_scale, protocol)

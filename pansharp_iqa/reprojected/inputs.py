"""Inputs of the reprojected protocol: the validated (fused, MS, PAN) triple, its ratio and GNyq.

The checks are the package's one gate (:mod:`pansharp_iqa.validation`); this module only knows
how the protocol resolves its ratio (the argument, else the sensor's nominal ratio, else the
PAN/MS size ratio) and which MTF values it needs (one MS GNyq per band, any override the
sensor records for the protocol applied, as the settings' ``ms_gnyq`` does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rules import Evidence, apply_rules
from ..sensors import Sensor, resolve_sensor
from ..validation import (
    SettingError,
    ShapeError,
    as_image,
    as_pan,
    check_ratio,
    check_sensor_bands,
    image_facts,
)

__all__ = ["PROTOCOL_NAME", "REFERENCE", "ResolvedInputs", "resolve_inputs", "band_planes"]

#: Name under which the protocol is registered (its sensor MTF values are looked up under it).
PROTOCOL_NAME = "reprojected2022"

#: Citation of the protocol implemented by this package.
REFERENCE = (
    "G. Scarpa, M. Ciotola, 'Full-Resolution Quality Assessment for Pansharpening', "
    "Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808"
)


class ResolvedInputs:
    """Validated float64 inputs of the protocol."""

    def __init__(self, fused: np.ndarray, ms: np.ndarray, pan: np.ndarray | None, ratio: int,
                 gnyq: tuple[float, ...], sensor_obj: Sensor) -> None:
        self.fused = fused
        self.ms = ms
        self.pan = pan
        self.ratio = ratio
        self.gnyq = gnyq
        self.sensor_obj = sensor_obj
        self.sensor = sensor_obj.name


def resolve_inputs(fused: Any, ms: Any, pan: Any, *, sensor: Any, ratio: Any = None,
                   need_pan: bool = True) -> ResolvedInputs:
    """Validate (fused, ms, pan), resolve the sensor, the ratio and the per-band GNyq."""
    if sensor is None:
        raise SettingError(
            "sensor is required (the protocol's MTF kernels need one GNyq per MS band): pass a name "
            "from pansharp_iqa.sensors.list_sensors(), e.g. 'WV2', or 'none' for the generic MTF"
        )
    sensor_obj = resolve_sensor(sensor)
    fus = as_image("fused", fused, allow_2d=True)
    ms_a = as_image("ms", ms, allow_2d=True)
    pan_a = None
    if pan is not None:
        pan_a = as_pan("pan", pan)
    elif need_pan:
        raise SettingError("pan is required for the coregistration (or pass shifts=...)")
    if fus.shape[2] != ms_a.shape[2]:
        raise ShapeError(
            f"fused and ms must have the same number of bands: fused has {fus.shape[2]}, ms has {ms_a.shape[2]}"
        )
    if pan_a is not None and pan_a.shape != fus.shape[:2]:
        raise ShapeError(
            f"fused must have the same height and width as pan: fused {fus.shape[:2]}, pan {pan_a.shape}"
        )
    h, w = ms_a.shape[:2]
    big_h, big_w = fus.shape[:2]
    if ratio is not None:
        r = check_ratio(ratio, exp=False)
        source = "the ratio argument"
    elif sensor_obj.ratio is not None:
        r = int(sensor_obj.ratio)
        source = f"sensor {sensor_obj.name!r}"
    else:
        if big_h % h or big_w % w or big_h // h != big_w // w or big_h // h < 2:
            raise ShapeError(
                f"cannot infer the ratio: sensor {sensor_obj.name!r} has no nominal ratio and the "
                f"pan/fused size {(big_h, big_w)} is not an integer multiple >= 2 of the ms size "
                f"{(h, w)}; pass ratio=..."
            )
        r = big_h // h
        source = "the PAN/MS size ratio"
    if (big_h, big_w) != (r * h, r * w):
        raise ShapeError(
            f"pan and fused must be ratio x ms in both dimensions: ratio {r} (from {source}) and ms "
            f"{(h, w)} need {(r * h, r * w)}, got {(big_h, big_w)}; crop the images or pass the right "
            "ratio=..."
        )
    gnyq = check_sensor_bands(sensor_obj, ms_a.shape[2], protocol=PROTOCOL_NAME)
    facts = {"fused": image_facts("fused", fus), "reference": image_facts("ms", ms_a)}
    if pan_a is not None:
        facts["pan"] = image_facts("pan", pan_a)
    apply_rules(Evidence(facts, reads=frozenset({"fused", "reference"})))  # gain-invariant in the PAN
    return ResolvedInputs(fus, ms_a, pan_a, r, gnyq, sensor_obj)


def band_planes(image: np.ndarray, rows_per_chunk: int = 64) -> np.ndarray:
    """Contiguous ``(B, H, W)`` float64 copy of an ``(H, W, B)`` image, transposed in row chunks
    (cache-friendly: the image is read once instead of once per band).

    Examples
    --------
    >>> band_planes(np.arange(6.0).reshape(1, 2, 3))[:, 0, 0].tolist()
    [0.0, 1.0, 2.0]
    """
    h, w, n_bands = image.shape
    out = np.empty((n_bands, h, w), dtype=np.float64)
    for r0 in range(0, h, rows_per_chunk):
        r1 = min(h, r0 + rows_per_chunk)
        chunk = image[r0:r1]
        for b in range(n_bands):
            out[b, r0:r1] = chunk[:, :, b]
    return out

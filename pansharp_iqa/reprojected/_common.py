"""Shared helpers of the reprojected protocol: errors, input coercion, citation string."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

__all__ = ["REFERENCE", "input_error", "as_image", "as_pan"]

#: Citation of the protocol implemented by this package.
REFERENCE = (
    "G. Scarpa, M. Ciotola, 'Full-Resolution Quality Assessment for Pansharpening', "
    "Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808"
)


def input_error(message: str) -> ValueError:
    """Build the project's input error (``pansharp_iqa.InputError``, a ``ValueError``).

    Falls back to a plain ``ValueError`` while the core package does not define ``InputError``.
    """
    cls: Any = ValueError
    try:
        pkg = importlib.import_module("pansharp_iqa")
        candidate = getattr(pkg, "InputError", None)
        if isinstance(candidate, type) and issubclass(candidate, ValueError):
            cls = candidate
    except Exception:  # pragma: no cover - core not importable yet
        cls = ValueError
    return cls(message)


def as_image(value: Any, name: str, *, ndim: int = 3) -> np.ndarray:
    """Coerce ``value`` to a float64 array of ``ndim`` dimensions (never modifies the input).

    A 2-D array is accepted for a 3-D argument and treated as a single band.
    """
    arr = np.asarray(value)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise input_error(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise input_error(f"{name} must be real-valued, got dtype {arr.dtype}")
    if ndim == 3 and arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != ndim:
        shape = "(H, W, B)" if ndim == 3 else "(H, W)"
        raise input_error(f"{name} must be a {shape} array, got shape {arr.shape}")
    if min(arr.shape) == 0:
        raise input_error(f"{name} must not be empty, got shape {arr.shape}")
    # Read-only use everywhere in this package: float64 input is not copied.
    out = np.asarray(arr, dtype=np.float64)
    # A finite sum proves every value finite (the full check only runs when the sum is not).
    if not np.isfinite(out.sum()) and not np.all(np.isfinite(out)):
        raise input_error(f"{name} contains NaN or infinite values; mask or fill them before evaluating")
    return out


def as_pan(value: Any, name: str = "pan") -> np.ndarray:
    """Coerce a PAN image to ``(H, W)`` float64; ``(H, W, 1)`` is accepted."""
    arr = np.asarray(value)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    return as_image(arr, name, ndim=2)


class ResolvedInputs:
    """Validated float64 inputs of the protocol (internal)."""

    def __init__(
        self,
        fused: np.ndarray,
        ms: np.ndarray,
        pan: np.ndarray | None,
        ratio: int,
        gnyq: tuple[float, ...],
        sensor_obj: Any,
    ) -> None:
        self.fused = fused
        self.ms = ms
        self.pan = pan
        self.ratio = ratio
        self.gnyq = gnyq
        self.sensor_obj = sensor_obj
        self.sensor = getattr(sensor_obj, "name", str(sensor_obj))


def check_ratio(ratio: Any, name: str = "ratio") -> int:
    """Validate an integer scale ratio >= 2."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, np.integer, float, np.floating)):
        raise input_error(f"{name} must be an integer >= 2 (PAN/MS scale ratio), got {ratio!r}")
    if int(ratio) != ratio or int(ratio) < 2:
        raise input_error(f"{name} must be an integer >= 2 (PAN/MS scale ratio), got {ratio!r}")
    return int(ratio)


def resolve_inputs(
    fused: Any,
    ms: Any,
    pan: Any,
    *,
    sensor: Any,
    ratio: Any = None,
    need_pan: bool = True,
) -> ResolvedInputs:
    """Validate and coerce (fused, ms, pan), resolve the sensor, the ratio and the per-band GNyq.

    Ratio: the ``ratio`` argument, else the sensor's nominal ratio, else the PAN/MS size ratio.
    Raises the project's ``InputError`` (a ``ValueError``) naming the argument and the fix.
    """
    from pansharp_iqa.sensors import resolve_sensor

    if sensor is None:
        raise input_error(
            "sensor is required (the protocol's MTF kernels need one GNyq per MS band): pass a name "
            "from pansharp_iqa.sensors.list_sensors(), e.g. 'WV2', or 'none' for the generic MTF"
        )
    sensor_obj = resolve_sensor(sensor)
    fus = as_image(fused, "fused")
    ms_a = as_image(ms, "ms")
    pan_a = None
    if pan is not None:
        pan_a = as_pan(pan, "pan")
    elif need_pan:
        raise input_error("pan is required for the coregistration (or pass shifts=...)")
    if fus.shape[2] != ms_a.shape[2]:
        raise input_error(
            f"fused and ms must have the same number of bands: fused has {fus.shape[2]}, ms has "
            f"{ms_a.shape[2]}"
        )
    if pan_a is not None and pan_a.shape != fus.shape[:2]:
        raise input_error(
            f"fused must have the same height and width as pan: fused {fus.shape[:2]}, pan {pan_a.shape}"
        )
    h, w = ms_a.shape[:2]
    big_h, big_w = fus.shape[:2]
    if ratio is not None:
        r = check_ratio(ratio)
        source = "the ratio argument"
    elif getattr(sensor_obj, "ratio", None) is not None:
        r = int(sensor_obj.ratio)
        source = f"sensor {sensor_obj.name!r}"
    else:
        if big_h % h or big_w % w or big_h // h != big_w // w or big_h // h < 2:
            raise input_error(
                f"cannot infer the ratio: sensor {sensor_obj.name!r} has no nominal ratio and the "
                f"pan/fused size {(big_h, big_w)} is not an integer multiple >= 2 of the ms size "
                f"{(h, w)}; pass ratio=..."
            )
        r = big_h // h
        source = "the PAN/MS size ratio"
    if (big_h, big_w) != (r * h, r * w):
        raise input_error(
            f"pan and fused must be ratio x ms in both dimensions: ratio {r} (from {source}) and ms "
            f"{(h, w)} need {(r * h, r * w)}, got {(big_h, big_w)}; crop the images or pass the right "
            "ratio=..."
        )
    try:
        gnyq = tuple(float(g) for g in sensor_obj.gnyq_for(ms_a.shape[2]))
    except ValueError as exc:
        raise input_error(f"sensor: {exc}") from exc
    if any(not 0.0 < g < 1.0 for g in gnyq) or len(gnyq) != ms_a.shape[2]:
        raise input_error(f"sensor {sensor_obj.name!r} gives invalid MS GNyq values {gnyq}; need one in (0, 1) per band")
    return ResolvedInputs(fus, ms_a, pan_a, r, gnyq, sensor_obj)


def band_planes(image: np.ndarray, rows_per_chunk: int = 64) -> np.ndarray:
    """Contiguous ``(B, H, W)`` float64 copy of an ``(H, W, B)`` image, transposed in row chunks
    (cache-friendly: the image is read once instead of once per band)."""
    h, w, n_bands = image.shape
    out = np.empty((n_bands, h, w), dtype=np.float64)
    for r0 in range(0, h, rows_per_chunk):
        r1 = min(h, r0 + rows_per_chunk)
        chunk = image[r0:r1]
        for b in range(n_bands):
            out[b, r0:r1] = chunk[:, :, b]
    return out

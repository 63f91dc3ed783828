"""Loading one scene's MS, PAN and GT, in digital numbers, validated."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from .arrays import read_h5_item, read_mat, read_npy, read_npz
from .discovery import SceneSource
from .errors import DataError
from .geotiff import read_geotiff
from .orientation import as_hw, as_hwb
from .scale import check_finite, check_input_range
from .settings import DatasetSettings


class _Shaped:
    """Stand-in with the ``shape`` of an image (the geometry checks need nothing else)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

__all__ = ["ROLE_KEYS", "check_geometry", "load_scene"]

#: Accepted variable names per role in ``.mat``/``.npz`` files (first match wins).
ROLE_KEYS: dict[str, tuple[str, ...]] = {
    "ms": ("ms", "I_MS_LR", "I_MS"),
    "pan": ("pan", "I_PAN"),
    "gt": ("gt", "I_GT"),
}


def _pick(arrays: dict[str, np.ndarray], role: str, path: str) -> tuple[str, np.ndarray]:
    lower = {k.lower(): k for k in arrays}
    for key in ROLE_KEYS[role]:
        real = key if key in arrays else lower.get(key.lower())
        if real is not None:
            return real, arrays[real]
    raise DataError(
        f"{Path(path).name}: no {role} array (looked for {', '.join(ROLE_KEYS[role])}; "
        f"found {', '.join(sorted(arrays)) or 'nothing'})"
    )


def _read_role(source: SceneSource, role: str, cache: dict[str, dict[str, np.ndarray]]) -> tuple[str, np.ndarray]:
    path = source.file_for(role)
    if path is None:
        raise DataError(f"scene {source.name!r} has no {role} file ({source.name}_{role}.tif or .npy)")
    if source.kind == "h5":
        return f"{Path(path).name}:{role}[{source.index}]", read_h5_item(path, role, source.index)
    if source.kind == "split":
        arr = read_geotiff(path) if Path(path).suffix.lower() in (".tif", ".tiff") else read_npy(path)
        return Path(path).name, arr
    if path not in cache:
        cache[path] = read_mat(path) if source.kind == "mat" else read_npz(path)
    key, arr = _pick(cache[path], role, path)
    return f"{Path(path).name}:{key}", arr


def load_scene(
    source: SceneSource, settings: DatasetSettings, roles: Iterable[str] = ("ms", "pan", "gt")
) -> dict[str, np.ndarray]:
    """Read, orient, validate and scale a scene's inputs.

    Parameters
    ----------
    source : SceneSource
        From :func:`~.discovery.discover_scenes`.
    settings : DatasetSettings
        Gives the ratio, the bits and the input scale.
    roles : iterable of str
        Which of ``"ms"`` (low-resolution MS, ``(H/ratio, W/ratio, B)``), ``"pan"`` (``(H, W)``)
        and ``"gt"`` (``(H, W, B)``) to load.

    Returns
    -------
    dict of str to numpy.ndarray
        float64 arrays in digital numbers (stored values times the input scale).

    Raises
    ------
    DataError
        Unreadable file, missing array, wrong orientation or size, NaN/Inf values, or values that
        contradict the declared scale or bit depth.
    """
    if source.problem:
        raise DataError(source.problem)
    roles = tuple(roles)
    cache: dict[str, dict[str, np.ndarray]] = {}
    out: dict[str, np.ndarray] = {}
    for role in roles:
        label, raw = _read_role(source, role, cache)
        if source.kind == "h5" and role != "pan" and raw.ndim == 3:
            raw = np.moveaxis(raw, 0, -1)  # PanCollection items are C x H x W
        arr = as_hw(raw, name=label) if role == "pan" else as_hwb(raw, name=label)
        check_finite(arr, name=label)
        check_input_range(
            arr,
            name=label,
            label=settings.input_scale_label,
            multiplier=settings.input_scale,
            bits=settings.bits,
        )
        out[role] = np.ascontiguousarray(arr, dtype=np.float64) * settings.input_scale
    check_geometry(source, settings, {role: arr.shape for role, arr in out.items()})
    return out


def check_geometry(source: SceneSource, settings: DatasetSettings, shapes: Mapping[str, tuple[int, ...]]) -> None:
    """Check that a scene's images fit together: PAN = ratio x MS, GT = PAN, band counts.

    Parameters
    ----------
    source : SceneSource
        The scene (named in the messages).
    settings : DatasetSettings
        Gives the ratio and ``band_names``.
    shapes : mapping
        ``{"ms": (h, w, B), "pan": (H, W), "gt": (H, W, B)}``, any subset (pixels, bands).

    Raises
    ------
    DataError
        If the shapes contradict each other or the settings; the message names the fix.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from pansharp_iqa.io import SceneSource, load_settings
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> toml = ['sensor = "none"', "ratio = 4", "bits = 11", 'resolution = "full"']
    >>> _ = (folder / "dataset.toml").write_text(chr(10).join(toml))
    >>> check_geometry(SceneSource("s", "split", ()), load_settings(folder), {"ms": (8, 8, 4), "pan": (16, 16)})
    Traceback (most recent call last):
    ...
    pansharp_iqa.io.errors.DataError: scene 's': PAN shape (16, 16) is not ratio 4 times the MS shape (8, 8)
    """
    arrays = {role: _Shaped(tuple(shape)) for role, shape in shapes.items()}
    r = settings.ratio
    ms, pan, gt = arrays.get("ms"), arrays.get("pan"), arrays.get("gt")
    if ms is not None and pan is not None:
        if pan.shape != (ms.shape[0] * r, ms.shape[1] * r):
            if pan.shape == ms.shape[:2]:
                raise DataError(
                    f"scene {source.name!r}: the MS ({ms.shape}) is already at PAN scale {pan.shape}; "
                    "provide the low-resolution MS (ms / I_MS_LR), not the upsampled one"
                )
            raise DataError(
                f"scene {source.name!r}: PAN shape {pan.shape} is not ratio {r} times the MS shape "
                f"{ms.shape[:2]}"
            )
    if gt is not None and pan is not None and gt.shape[:2] != pan.shape:
        raise DataError(f"scene {source.name!r}: GT shape {gt.shape[:2]} differs from PAN shape {pan.shape}")
    if gt is not None and ms is not None:
        if gt.shape[2] != ms.shape[2]:
            raise DataError(f"scene {source.name!r}: GT has {gt.shape[2]} bands, MS has {ms.shape[2]}")
        if gt.shape[:2] != (ms.shape[0] * r, ms.shape[1] * r):
            raise DataError(
                f"scene {source.name!r}: GT shape {gt.shape[:2]} is not ratio {r} times the MS shape {ms.shape[:2]}"
            )
    if settings.band_names is not None:
        for role in ("ms", "gt"):
            arr = arrays.get(role)
            if arr is not None and arr.shape[2] != len(settings.band_names):
                raise DataError(
                    f"scene {source.name!r}: {role} has {arr.shape[2]} bands, dataset.toml band_names "
                    f"lists {len(settings.band_names)}"
                )

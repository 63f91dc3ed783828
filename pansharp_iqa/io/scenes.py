"""Loading one scene's MS, PAN and GT in the values their files declare, and what the files declare (their unit,
band names) for the settings value."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np

from ..validation import (
    InputError,
    ShapeError,
    check_pan_ratio,
    check_reduced_geometry,
    check_sensor_bands,
)
from .arrays import h5_dataset_shapes, read_h5_item, read_mat, read_npy, read_npz
from .dataset_config import DatasetSettings
from .declared import Declared, read_declared
from .discovery import SceneSource
from .errors import DataError
from .geotiff import read_geotiff
from .orientation import AmbiguousLayout, as_hw, as_hwb, as_pan


def _shaped(shape: tuple[int, ...]) -> np.ndarray:
    """A stand-in of that shape, without data (the geometry checks need nothing else)."""
    return np.broadcast_to(np.float32(0), shape)

__all__ = ["ROLE_KEYS", "S2_GROUP_KEYS", "role_keys", "check_geometry", "check_scene_bands", "load_scene",
           "scene_records", "scene_shapes", "pan_bands_declared", "spatial_of"]

#: Accepted variable names per role in ``.mat``/``.npz`` files (first match wins): ours, the toolboxes' (the 2020
#: toolbox's and the hyperspectral toolbox's ``I_MS_LR``/``I_PAN``/``I_GT``), and the Sentinel-2 toolbox's
#: ``S2_10`` (the 10 m bands, in the PAN's place) and ``S2_GT``; its MS is the group the sensor names
#: (:data:`S2_GROUP_KEYS`).
ROLE_KEYS: dict[str, tuple[str, ...]] = {
    "ms": ("ms", "I_MS_LR", "I_MS"),
    "pan": ("pan", "I_PAN", "S2_10"),
    "gt": ("gt", "I_GT", "S2_GT"),
}
#: The Sentinel-2 toolbox's key of the band group being sharpened, by sensor (``S2_20`` at 20 m, ``S2_60`` at 60 m).
S2_GROUP_KEYS = {"S2-20": "S2_20", "S2-60": "S2_60"}


def role_keys(role: str, sensor: str | None = None) -> tuple[str, ...]:
    """The variable names a role is looked up under, for a dataset of ``sensor`` (its Sentinel-2 group first).

    Examples
    --------
    >>> role_keys("ms", "S2-60")
    ('S2_60', 'ms', 'I_MS_LR', 'I_MS')
    """
    group = S2_GROUP_KEYS.get(str(sensor)) if role == "ms" else None
    return (group, *ROLE_KEYS[role]) if group else ROLE_KEYS[role]


def pan_bands_declared(settings: DatasetSettings) -> bool:
    """Whether the dataset's sensor puts several bands in the PAN's place (its ``pan_sensor``: Sentinel-2's 10 m
    bands); otherwise a PAN is one band."""
    from ..sensors import get_sensor

    return get_sensor(settings.sensor).pan_sensor is not None


def _pan(settings: DatasetSettings) -> Callable[..., np.ndarray]:
    """The PAN's orientation rule for this dataset (one band, or the bands its sensor declares)."""
    return as_pan if pan_bands_declared(settings) else as_hw


def _window_role(role: str, settings: DatasetSettings) -> str:
    """The window reader's role of a scene file (``"pan-bands"`` for several bands in the PAN's place)."""
    return "pan-bands" if role == "pan" and pan_bands_declared(settings) else role


def _pick(arrays: dict[str, np.ndarray], role: str, path: str, sensor: str | None = None) -> tuple[str, np.ndarray]:
    lower = {k.lower(): k for k in arrays}
    for key in role_keys(role, sensor):
        real = key if key in arrays else lower.get(key.lower())
        if real is not None:
            return real, arrays[real]
    raise DataError(
        f"{Path(path).name}: no {role} array (looked for {', '.join(role_keys(role, sensor))}; "
        f"found {', '.join(sorted(arrays)) or 'nothing'})"
    )


def _read_role(source: SceneSource, role: str, cache: dict[str, dict[str, np.ndarray]],
               sensor: str | None = None) -> tuple[str, np.ndarray]:
    path = source.file_for(role)
    if path is None:
        raise DataError(f"scene {source.name!r} has no {role} file ({source.name}_{role}.tif or .npy)")
    if source.kind == "h5":
        return f"{Path(path).name}:{role}[{source.index}]", read_h5_item(path, role, source.index)
    if source.kind == "split":
        arr = read_geotiff(path) if Path(path).suffix.lower() in (".tif", ".tiff") else read_npy(path)
        return Path(path).name, arr
    if source.kind == "h5bundle":  # one scene's datasets under the bundle keys: only this role's is read
        key, _ = _pick(dict.fromkeys(h5_dataset_shapes(path), np.zeros(0)), role, path, sensor)
        return f"{Path(path).name}:{key}", read_h5_item(path, key)
    if path not in cache:
        cache[path] = read_mat(path) if source.kind == "mat" else read_npz(path)
    key, arr = _pick(cache[path], role, path, sensor)
    return f"{Path(path).name}:{key}", arr


def load_scene(
    source: SceneSource, settings: DatasetSettings, roles: Iterable[str] = ("ms", "pan", "gt"), *,
    cache: dict[str, dict[str, np.ndarray]] | None = None,
) -> dict[str, np.ndarray]:
    """A scene's inputs, oriented, in the values their files declare (GeoTIFF scale/offset, HDF5
    ``scale_factor``/``add_offset``): the input scale is the settings value's, applied by the core.

    Parameters
    ----------
    source : SceneSource
        The scene (from :func:`discover_scenes`).
    settings : DatasetSettings
        The dataset's settings (:func:`load_settings`): its sensor decides where each role is looked up and
        whether the PAN holds one band or several (Sentinel-2's 10 m bands); its ratio, the geometry checked.
    roles : iterable of str
        The images to load: ``"ms"``, ``"pan"``, ``"gt"`` (the reference), ``"lms"`` (a PanCollection file's
        upsampled MS).
    cache : dict, optional
        Bundles (``.mat``/``.npz``/``.h5`` files) already read, by path; filled as files are read, and shared
        with ``scene_shapes`` so that a file is read once.

    Returns
    -------
    dict of str to ndarray
        By role: ``(H, W, B)`` arrays (the PAN ``(H, W)``, or ``(H, W, B)`` for several bands in its place), in
        their stored dtype, or float64 where the file declares a scale/offset.

    Raises
    ------
    DataError
        The scene's ``problem``, a file that cannot be read, or images whose shapes do not fit the ratio.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> from pansharp_iqa.io import discover_scenes, load_settings
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "dataset.toml").write_text('sensor = "QB"\\nratio = 4\\nbits = 11\\nresolution = "full"')
    >>> np.savez(folder / "scene1.npz", ms=np.ones((16, 16, 4), np.uint16), pan=np.ones((64, 64), np.uint16))
    >>> images = load_scene(discover_scenes(folder)[0][0], load_settings(folder), roles=("ms", "pan"))
    >>> {role: (image.shape, image.dtype.name) for role, image in images.items()}
    {'ms': ((16, 16, 4), 'uint16'), 'pan': ((64, 64), 'uint16')}
    """
    if source.problem:
        raise DataError(source.problem)
    roles = tuple(roles)
    cache = {} if cache is None else cache
    out: dict[str, np.ndarray] = {}
    for role in roles:
        label, raw = _read_role(source, role, cache, settings.sensor)
        if source.kind == "h5" and role != "pan" and raw.ndim == 3:
            raw = np.moveaxis(raw, 0, -1)  # PanCollection items are C x H x W
        arr = (_pan(settings)(raw, name=label) if role == "pan"
               else _oriented(raw, label, role, source, settings, cache, out.get("pan")))
        if source.kind == "h5":  # its CF scale/offset (a GeoTIFF's is applied by its reader)
            arr = read_declared(str(source.file_for(role)), role).values(arr)
        out[role] = np.ascontiguousarray(arr)  # the core converts strips: no float64 copy of the scene here
    check_geometry(source, settings, {role: arr.shape for role, arr in out.items()})
    return out


def spatial_of(role: str, pan_shape: tuple[int, ...], ratio: int) -> tuple[int, int]:
    """The rows and columns of a scene's ``role`` beside its PAN: the GT's and an upsampled MS's are the PAN's, the
    MS's the PAN's over the ratio (at both resolutions)."""
    h, w = int(pan_shape[0]), int(pan_shape[1])
    return (h // ratio, w // ratio) if role == "ms" else (h, w)


def _oriented(raw: np.ndarray, label: str, role: str, source: SceneSource, settings: DatasetSettings,
              cache: dict[str, dict[str, np.ndarray]], pan: np.ndarray | None) -> np.ndarray:
    """A role's array as (H, W, B); where its shape alone does not tell the band axis, by the PAN's size (the PAN
    already read, else its shape from the headers, :func:`scene_shapes`)."""
    try:
        return as_hwb(raw, name=label)
    except AmbiguousLayout:
        if source.file_for("pan") is None:
            raise
        shape = pan.shape if pan is not None else scene_shapes(source, settings, cache=cache)["pan"]
        return as_hwb(raw, name=label, spatial=spatial_of(role, shape, settings.ratio))


def scene_records(source: SceneSource, roles: Iterable[str]) -> dict[str, Declared]:
    """What each role's file declares about its pixels (:func:`.declared.read_declared`; a ``.mat``/``.npz`` bundle
    declares nothing)."""
    out = {}
    for role in roles:
        path = source.file_for(role)
        if path is not None:
            out[role] = read_declared(path, role if source.kind == "h5" else None)
    return out


def scene_shapes(source: SceneSource, settings: DatasetSettings, *,
                 cache: dict[str, dict[str, np.ndarray]] | None = None) -> dict[str, tuple[int, ...]]:
    """Shapes of every image a scene holds (``ms``, ``pan``, ``gt``), read from headers where the format allows (per-
    role ``.npy``/GeoTIFF files, HDF5), else from the file (one read per file)."""
    from .windows import NotWindowed, open_windowed

    shapes: dict[str, tuple[int, ...]] = {}
    cache = {} if cache is None else cache
    h5_shapes: dict[str, tuple[int, ...]] | None = None
    for role in ("pan", "ms", "gt"):  # the PAN first: its size tells a cube's band axis (spatial_of)
        path = source.file_for(role)
        if path is None:
            continue
        spatial = spatial_of(role, shapes["pan"], settings.ratio) if "pan" in shapes and role != "pan" else None
        if source.kind == "split":
            try:
                shape = open_windowed(path, role=_window_role(role, settings), spatial=spatial).shape
                shapes[role] = shape[:2] if role == "pan" and shape[2] == 1 else shape
                continue
            except NotWindowed:
                pass
        if source.kind == "h5bundle":  # header only: the role's dataset as stored (H x W x B, or B x H x W)
            if h5_shapes is None:
                h5_shapes = h5_dataset_shapes(path)
            try:
                key, _ = _pick(dict.fromkeys(h5_shapes, np.zeros(0)), role, path, settings.sensor)
            except DataError:
                continue  # a bundle without this role
            raw = np.broadcast_to(np.float32(0), h5_shapes[key])
        elif source.kind == "h5":  # header only: PanCollection datasets are N x C x H x W
            if h5_shapes is None:
                h5_shapes = h5_dataset_shapes(path)
            if role not in h5_shapes:
                continue  # e.g. full-resolution files have no gt
            raw = np.broadcast_to(np.float32(0), h5_shapes[role][1:])  # a shape without data
            if role != "pan" and raw.ndim == 3:
                raw = np.moveaxis(raw, 0, -1)
        else:
            try:
                _, raw = _read_role(source, role, cache, settings.sensor)
            except DataError:
                if source.kind in ("mat", "npz"):
                    continue  # a bundle without this role
                raise
        shapes[role] = (_pan(settings)(raw, name=role) if role == "pan" else as_hwb(raw, name=role,
                                                                                  spatial=spatial)).shape
    return shapes


def check_scene_bands(source: SceneSource) -> None:
    """The files of one scene that name their bands name them in one order (a result made from one of them, e.g. by
    ``pansharp-eval baselines`` from the MS, follows it), else a :class:`DataError` naming both."""
    named = [(Path(p).name, n) for p in source.paths if source.kind == "split" and len(n := read_declared(p).names) > 1]
    for (a, na), (b, nb) in zip(named, named[1:], strict=False):
        if len(na) == len(nb) and any(x is not None and y is not None and x.strip().casefold() != y.strip().casefold()
                                      for x, y in zip(na, nb, strict=True)):
            raise DataError(f"{a} names its bands {', '.join(map(str, na))} but {b} names them "
                            f"{', '.join(map(str, nb))}: one scene's files must store its bands in one order (a result "
                            "made from one of them follows it); rewrite one of them in the other's order")


def check_geometry(source: SceneSource, settings: DatasetSettings, shapes: Mapping[str, tuple[int, ...]]) -> None:
    """Check that a scene's images fit together and fit the settings."""
    arrays = {role: _shaped(tuple(shape)) for role, shape in shapes.items()}
    r = settings.ratio
    ms, pan, gt = arrays.get("ms"), arrays.get("pan"), arrays.get("gt")
    try:
        if ms is not None and pan is not None and pan.shape[:2] == ms.shape[:2]:
            raise ShapeError(
                f"the MS ({ms.shape}) is already at PAN scale {pan.shape}; provide the low-resolution MS "
                "(ms / I_MS_LR), not the upsampled one"
            )
        if gt is not None:
            check_reduced_geometry(gt, ratio=r, ms=ms, pan=pan)
        elif ms is not None and pan is not None:
            check_pan_ratio(_shaped((*pan.shape[:2], ms.shape[2])), ms, pan, r, fused_name="pan")
        bands = next((a.shape[2] for a in (gt, ms) if a is not None and len(a.shape) == 3), None)
        if bands is not None:
            if settings.band_names is not None and bands != len(settings.band_names):
                raise ShapeError(f"the images have {bands} bands, dataset.toml band_names lists "
                                 f"{len(settings.band_names)}")
            check_sensor_bands(settings.resolved_sensor(), bands, name="the scene")
    except InputError as exc:
        raise DataError(f"scene {source.name!r}: {exc}") from None

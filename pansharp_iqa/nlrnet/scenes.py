"""Full-resolution scenes (MS + PAN in DN) and their metadata (sensor, ratio, bits).

Reads MATLAB ``.mat`` scenes (``I_MS``/``I_MS_LR``, ``I_PAN``, optional ``sensor``, ``ratio``,
``L``) and GeoTIFF pairs given as ``MS.tif,PAN.tif``. Nothing that changes numbers is guessed:
the sensor, ratio and bit depth come from the file, else from the caller (CLI flags), and a value
present in both must agree. Used to prepare NLRNet data (Lei et al., IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2021.3067097).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..io.arrays import read_mat
from ..io.metadata import check_setting, read_recorded
from ..validation import SettingError

__all__ = ["Scene", "load_scene", "scene_name", "stated_metadata", "resolve_metadata",
           "check_not_inputs", "MetadataError"]

_MS_KEYS = ("I_MS", "I_MS_LR", "MS", "ms")
_PAN_KEYS = ("I_PAN", "PAN", "pan")


class MetadataError(SettingError):
    """A sensor, ratio or bit depth stated nowhere (file, flag, registry)."""


@dataclasses.dataclass
class Scene:
    """One full-resolution scene."""

    name: str
    ms: np.ndarray
    pan: np.ndarray
    sensor: str | None
    ratio: int | None
    bits: int | None
    source: str


def _load_mat(path: Path) -> Scene:
    # read_mat: MATLAB v5 and v7.3, an unreadable file is one DataError line. The metadata is
    # read by io.metadata's one parser (a second, small read: read_mat keeps numeric arrays only)
    data = read_mat(path)
    ms = next((data[k] for k in _MS_KEYS if k in data), None)
    pan = next((data[k] for k in _PAN_KEYS if k in data), None)
    if ms is None or pan is None:
        raise ValueError(f"{path}: needs an MS variable (one of {_MS_KEYS}) and a PAN variable "
                         f"(one of {_PAN_KEYS}); found {sorted(data)}")
    ms = np.asarray(ms)
    if ms.ndim == 2:
        ms = ms[:, :, None]
    return Scene(scene_name(path), ms, np.asarray(pan), *stated_metadata(path), str(path))


def _load_tif(ms_path: Path, pan_path: Path) -> Scene:
    from pansharp_iqa.io.geotiff import read_geotiff  # the values the files declare (scale/offset, nodata, mask)

    ms = read_geotiff(ms_path)
    pan = read_geotiff(pan_path)
    if ms.ndim == 2:
        ms = ms[:, :, None]
    elif ms.ndim == 3 and ms.shape[0] < min(ms.shape[1:]):
        ms = np.moveaxis(ms, 0, -1)  # (B, H, W) -> (H, W, B)
    pan = np.squeeze(pan)
    return Scene(scene_name(f"{ms_path},{pan_path}"), ms, pan, None, None, None,
                 f"{ms_path},{pan_path}")


def scene_name(spec: str | Path) -> str:
    """The name of a scene (its results are ``<name>.mat``): the stem of the ``.mat`` or MS file."""
    return Path(str(spec).split(",", 1)[0]).stem


def stated_metadata(spec: str | Path) -> tuple[str | None, int | None, int | None]:
    """(sensor, ratio, bits) as a scene file records them (``None``: not recorded); no image is read."""
    text = str(spec)
    if "," in text:
        return None, None, None
    recorded = read_recorded(text)
    return recorded.sensor, recorded.ratio, recorded.bits


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return a.samefile(b)  # also hard links
    return a.resolve() == b.resolve()


def check_not_inputs(outputs: Sequence[str | Path], inputs: Sequence[str | Path], *, flag: str) -> None:
    """Refuse output files that are one of the input files (or each other); nothing is written.

    Parameters
    ----------
    outputs : sequence of path
        Every file a command is about to write.
    inputs : sequence of path
        Every file it reads.
    flag : str
        The option that chose the outputs (``--out``), for the message.

    Raises
    ------
    ValueError
        Naming the output, the input it would overwrite and the fix.

    Examples
    --------
    >>> check_not_inputs(["d/test.h5"], ["d/test.h5"], flag="--out")
    Traceback (most recent call last):
    ...
    ValueError: --out would overwrite the input d/test.h5 with its results: choose another --out
    """
    seen: list[Path] = []
    for out in (Path(o) for o in outputs):
        for src in (Path(i) for i in inputs):
            if _same_file(out, src):
                raise ValueError(f"{flag} would overwrite the input {src} with its results: choose "
                                 f"another {flag}")
        for other in seen:
            if _same_file(out, other):
                raise ValueError(f"{flag}: two outputs would be written to {out}: give them (or "
                                 "the inputs they are named after) different names")
        seen.append(out)


def load_scene(spec: str | Path) -> Scene:
    """Load a scene from ``FILE.mat`` or ``MS.tif,PAN.tif``."""
    text = str(spec)
    if "," in text:
        ms_path, pan_path = (Path(p) for p in text.split(",", 1))
        return _load_tif(ms_path, pan_path)
    path = Path(text)
    if path.suffix.lower() == ".mat":
        return _load_mat(path)
    raise ValueError(f"unsupported scene {text!r}: give FILE.mat or MS.tif,PAN.tif")


def _pick(name: str, stated: object, given: object, where: str) -> object:
    check_setting(name, given, stated, source=where, flag=f"--{name}")
    return stated if stated is not None else given


def resolve_metadata(stated_sensor: str | None, stated_ratio: int | None, stated_bits: int | None,
                     *, sensor: str | None, ratio: int | None, bits: int | None,
                     where: str) -> tuple[str, int, int]:
    """Combine file metadata with user flags: file first, flag second, sensor registry third."""
    from pansharp_iqa import get_sensor

    name = _pick("sensor", stated_sensor, sensor, where)
    if name is None:
        raise MetadataError(
            f"{where} does not state its sensor: pass --sensor NAME (e.g. WV2, QB, 'WV2[4band]', "
            "or 'none' for the generic MTF)")
    s = get_sensor(str(name))
    r = _pick("ratio", stated_ratio, ratio, where)
    r = r if r is not None else s.ratio
    if r is None:
        raise MetadataError(f"{where}: the ratio is stated nowhere (file, flag, sensor {s.name}): pass --ratio")
    b = _pick("bits", stated_bits, bits, where)
    b = b if b is not None else s.bits
    if b is None:
        raise MetadataError(f"{where}: the bit depth is stated nowhere (file, flag, sensor {s.name}): pass --bits")
    return str(name), int(r), int(b)

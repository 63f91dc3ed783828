"""What a dataset's files record about themselves: sensor, ratio, bit depth, value scale.

The GRIP/PNN ``.mat`` scenes record ``sensor``, ``ratio`` and ``L`` (bits); the h5 files written
by ``pansharp-nlrnet prepare`` record ``sensor``, ``ratio``, ``bits``, ``normalised_by`` (stored
values x this = DN) and their ``layout``. :func:`read_recorded` reads these without loading the
images; :func:`check_recorded` holds the user's settings against them with the package's one
metadata rule (:func:`pansharp_iqa.validation.check_metadata`): a contradiction is an error,
never a silent choice.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..validation import check_metadata
from .errors import DataError

__all__ = ["Recorded", "read_recorded", "check_recorded", "check_setting", "same_sensor", "NLRNET_LAYOUT"]

#: ``layout`` attribute of the h5 files ``pansharp-nlrnet prepare`` writes.
NLRNET_LAYOUT = "pansharp_iqa.nlrnet/PanCollection-v1"


@dataclasses.dataclass(frozen=True)
class Recorded:
    """Settings a file records about itself (``None``: not recorded)."""

    source: str
    sensor: str | None = None
    ratio: int | None = None
    bits: int | None = None
    scale: float | None = None
    resolution: str | None = None
    result_scale: str | None = None

    def as_settings(self) -> dict[str, Any]:
        """The recorded values under the keys of ``dataset.toml`` (only those recorded)."""
        values = {"sensor": self.sensor, "ratio": self.ratio, "bits": self.bits, "scale": self.scale,
                  "resolution": self.resolution}
        return {k: v for k, v in values.items() if v is not None}


def _scalar(value: object) -> object:
    arr = np.asarray(value)
    if arr.size == 0:
        return None
    if arr.dtype.kind in "US":
        return str(arr.reshape(-1)[0]).strip() or None
    if arr.dtype.kind == "O":
        return _scalar(arr.reshape(-1)[0])
    item = arr.reshape(-1)[0].item()
    return item.decode() if isinstance(item, bytes) else item


def _int(value: object) -> int | None:
    v = _scalar(value)
    return None if v is None else int(float(v))  # type: ignore[arg-type]


def _mat(path: Path) -> Recorded:
    import scipy.io

    try:
        data = scipy.io.loadmat(os.fspath(path), variable_names=["sensor", "ratio", "L"])
    except NotImplementedError:  # v7.3 (HDF5): attributes are datasets there
        return _h5(path, mat73=True)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read MATLAB file {path}: {type(exc).__name__}: {exc}") from None
    sensor = _scalar(data["sensor"]) if "sensor" in data else None
    return Recorded(path.name, sensor=None if sensor is None else str(sensor),
                    ratio=_int(data["ratio"]) if "ratio" in data else None,
                    bits=_int(data["L"]) if "L" in data else None)


def _h5(path: Path, *, mat73: bool = False) -> Recorded:
    import h5py

    try:
        with h5py.File(path, "r") as f:
            if mat73:
                def get(key: str) -> object:
                    return None if key not in f else np.asarray(f[key][()])

                sensor = get("sensor")
                if sensor is not None and np.asarray(sensor).dtype.kind in "ui":  # MATLAB chars
                    sensor = "".join(chr(int(c)) for c in np.asarray(sensor).ravel())
                return Recorded(path.name, sensor=None if sensor is None else str(_scalar(sensor)),
                                ratio=_int(get("ratio")) if "ratio" in f else None,
                                bits=_int(get("L")) if "L" in f else None)
            a = f.attrs
            ours = _scalar(a.get("layout", "")) == NLRNET_LAYOUT
            sensor = _scalar(a["sensor"]) if "sensor" in a else None
            return Recorded(
                path.name,
                sensor=None if sensor is None else str(sensor),
                ratio=_int(a["ratio"]) if "ratio" in a else None,
                bits=_int(a["bits"]) if "bits" in a else None,
                scale=float(_scalar(a["normalised_by"])) if "normalised_by" in a else None,  # type: ignore[arg-type]
                resolution="reduced" if ours and "gt" in f else None,
                result_scale=str(_scalar(a["result_scale"])) if "result_scale" in a else None,
            )
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot read HDF5 file {path}: {type(exc).__name__}: {exc}") from None


def read_recorded(path: str | os.PathLike[str]) -> Recorded:
    """The settings a dataset file records (MATLAB ``.mat``, HDF5 ``.h5``); nothing is loaded."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".mat":
        return _mat(p)
    if suffix in (".h5", ".hdf5"):
        return _h5(p)
    return Recorded(p.name)


def check_recorded(recorded: Recorded, settings: Mapping[str, Any], sources: Mapping[str, str]) -> None:
    """Hold the user's settings against what a file records about itself."""
    flags = {"sensor": "--sensor", "ratio": "--ratio", "bits": "--bits", "scale": "--input-scale"}
    for key, value in recorded.as_settings().items():
        given = settings.get(key)
        if key == "resolution" or sources.get(key) == "default":
            continue
        where = "dataset.toml" if sources.get(key) == "dataset.toml" else flags[key]
        check_setting(key, given, value, source=recorded.source, flag=where)


def check_setting(setting: str, given: object, recorded: object, *, source: str, flag: str) -> None:
    """:func:`pansharp_iqa.validation.check_metadata` with sensors compared by registry name (aliases and band subsets
    of one sensor agree): the one place that rule is applied."""
    if setting == "sensor" and given is not None and recorded is not None and same_sensor(given, recorded):
        return
    check_metadata(setting, given, recorded, source=source, flag=flag)


def same_sensor(a: object, b: object) -> bool:
    """Whether two sensor names mean the same sensor (aliases and band subsets of one sensor agree)."""
    from ..sensors import get_sensor

    try:
        sa, sb = get_sensor(str(a)), get_sensor(str(b))
    except ValueError:
        return str(a).strip().lower() == str(b).strip().lower()
    return (sa.parent or sa.name) == (sb.parent or sb.name)

"""Dataset settings: ``dataset.toml`` plus command-line overrides.

Everything that changes the numbers (sensor, ratio, bits, resolution, protocol, the scale of the
inputs and of the results) is read from ``dataset.toml`` or given on the command line; nothing is
guessed from the data. Missing required settings raise :class:`~.errors.DatasetConfigError`.

``dataset.toml`` keys
---------------------
sensor : str (required)
    A registry name (``"WV2"``, ``"QB"``, ...) or ``"none"`` for the generic MTF.
ratio : int (required)
    PAN/MS resolution ratio (a power of two).
bits : int (required at reduced resolution)
    Radiometric resolution of the inputs in bits (e.g. 11); at full resolution only ``scale =
    "unit"`` needs it (no full-resolution index does; the core then records the sensor's).
resolution : ``"reduced"`` or ``"full"`` (required)
    Reduced: each scene has a ground truth ``gt`` at PAN scale (Wald protocol). Full: no GT.
protocol : str (optional, default ``"toolbox2020"``, always recorded in the results)
band_names : list of str (optional)
    Band order of the MS, as the files store the bands: with a named sensor every name must be one
    of its bands, none twice, and each band gets its own MTF (a subset, or another order, is
    applied); with the generic sensor, distinct labels.
scale : ``"dn"``, ``"unit"`` or a number (optional, default ``"dn"``)
    Multiplier that brings the stored inputs to digital numbers (``"unit"`` = ``2**bits - 1``).
result_scale : ``"dn"``, ``"unit"`` or a number
    The same for the fused results; required by the evaluation (or ``--result-scale``).
scale_mismatch : ``"raise"`` or ``"warn"`` (optional, default ``"raise"``)
    A result on another scale than its reference (e.g. a bit-depth factor of 2) fails its pair, or
    is scored with a warning recorded in its card (``--scale-mismatch``).
indexes : list of str or a comma-separated str (optional, default: the protocol's table)
    The indexes to report: ``"default"`` stands for the protocol's table, and the catalogue's
    extras (``"PSNR"``, ``"CC"``, ``"MPSNR"``, ``"RMSE"``, ``"SSIM"`` at reduced resolution) are added by name, e.g.
    ``["default", "PSNR", "CC"]`` (``--indexes default,PSNR,CC``).
preset : str (optional)
    A benchmark preset (:func:`pansharp_iqa.presets.list_presets`, ``--preset``) for a
    PanCollection ``.h5``: it fixes sensor, ratio, bits and protocol, and the resolution from the
    file's keys (``gt`` present: reduced); an explicit setting that contradicts it is refused.
    ``result_scale`` defaults to ``"dn"`` (the scripts' ``sr``); at full resolution the file's
    ``lms`` is the upsampled MS. A
    file that is not the published test set (another SHA-256 or band count) is refused unless
    ``preset_force = true`` (``--preset-force``); the settings' ``preset`` entry records which.

Integer settings (``ratio``, ``bits``) follow the package's one rule
(:func:`pansharp_iqa.validation.integer_setting`): ``4``, ``4.0`` and ``"4"`` alike.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..rules import SCALE_MISMATCH_POLICIES
from ..validation import (
    InputError,
    check_band_names,
    check_bits,
    check_choice,
    check_ratio,
)
from .errors import DatasetConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["DEFAULT_PROTOCOL", "METHOD_FILE", "DatasetSettings", "load_settings", "method_settings", "parse_scale",
           "settings_file_for"]

DEFAULT_PROTOCOL = "toolbox2020"
_REQUIRED = ("sensor", "ratio", "bits", "resolution")
_KNOWN = set(_REQUIRED) | {
    "protocol", "band_names", "scale", "result_scale", "scale_mismatch", "name", "description", "notes", "source",
    "license", "attribution", "indexes", "preset", "preset_force",
}
_FLAG = {
    "sensor": "--sensor", "ratio": "--ratio", "bits": "--bits", "resolution": "--resolution",
    "protocol": "--protocol", "scale": "--input-scale", "result_scale": "--result-scale",
    "scale_mismatch": "--scale-mismatch", "indexes": "--indexes",
    "preset": "--preset", "preset_force": "--preset-force",
}


@dataclasses.dataclass(frozen=True)
class DatasetSettings:
    """The settings one evaluation runs with (all recorded in ``results.json``).

    Parameters
    ----------
    name : str
        Dataset name (the folder or ``.h5`` file stem unless ``name`` is set in the TOML).
    root : str
        Absolute path of the dataset folder or ``.h5`` file.
    sensor : str
        Sensor name as given (resolved through :func:`pansharp_iqa.sensors.get_sensor`).
    ratio : int
        PAN/MS resolution ratio.
    bits : int or None
        Radiometric resolution of the inputs (bits); None: not given (full resolution only).
    resolution : str
        ``"reduced"`` or ``"full"``.
    protocol : str
        Protocol name for :func:`pansharp_iqa.evaluate_reduced` / ``evaluate_full``.
    input_scale : float
        Multiplier from stored input values to DN.
    input_scale_label : str
        ``"dn"``, ``"unit"`` or the number as given.
    result_scale : float or None
        Multiplier from stored result values to DN (``None``: not declared).
    result_scale_label : str or None
        As given.
    band_names : tuple of str or None
        MS band order, when declared (spelled as the sensor spells them).
    sources : dict
        For each setting, where it came from (``"dataset.toml"``, ``"flag"`` or ``"default"``).
    scale_mismatch : str
        ``"raise"`` or ``"warn"`` (see :func:`pansharp_iqa.evaluation.evaluate_reduced`).
    indexes : tuple of str or None
        The indexes to report (``"default"`` for the protocol's table, and extras such as
        ``"PSNR"``, ``"CC"``), as given; None: the protocol's table. Checked against the protocol
        before anything runs.
    preset : mapping or None
        The preset's card entry (:meth:`pansharp_iqa.Preset.card`: its name, what it fixes,
        the data's SHA-256 and whether it is the published test set); None without a preset.
    """

    name: str
    root: str
    sensor: str
    ratio: int
    bits: int | None
    resolution: str
    protocol: str
    input_scale: float
    input_scale_label: str
    result_scale: float | None
    result_scale_label: str | None
    band_names: tuple[str, ...] | None
    sources: Mapping[str, str]
    scale_mismatch: str = "raise"
    indexes: tuple[str, ...] | None = None
    preset: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable copy."""
        out = dataclasses.asdict(self)
        out["band_names"] = list(self.band_names) if self.band_names is not None else None
        out["sources"] = dict(self.sources)
        if self.indexes is None:  # absent unless asked for (results.json of a default run unchanged)
            del out["indexes"]
        else:
            out["indexes"] = list(self.indexes)
        if self.preset is None:
            del out["preset"]
        return out

    def resolved_sensor(self) -> Any:
        """The :class:`pansharp_iqa.sensors.Sensor`, its bands in the ``band_names`` order (a subset or
        another order gets each named band's own MTF; the sensor's own order leaves it as it is)."""
        from pansharp_iqa.sensors import get_sensor

        sensor = get_sensor(self.sensor)
        if self.band_names is None or sensor.is_generic:
            return sensor
        if tuple(b.lower() for b in self.band_names) == tuple(b.lower() for b in sensor.band_names or ()):
            return sensor
        return sensor.select_bands(list(self.band_names))


def parse_scale(value: Any, bits: int | None, *, what: str = "scale") -> tuple[float, str]:
    """Turn a scale declaration into a multiplier to digital numbers.

    Parameters
    ----------
    value : str or number
        ``"dn"`` (values are DN: multiplier 1), ``"unit"`` (values in [0, 1]: multiplier
        ``2**bits - 1``) or a positive number (the multiplier itself, e.g. 2047).
    bits : int or None
        Radiometric resolution; required for ``"unit"``.
    what : str
        Name used in error messages.

    Returns
    -------
    (float, str)
        The multiplier and a label for reports.

    Raises
    ------
    DatasetConfigError
        If the value is not understood.
    """
    if isinstance(value, str):
        key = value.strip().lower()
        if key in ("dn", "digital_numbers"):
            return 1.0, "dn"
        if key in ("unit", "[0,1]", "0-1", "01"):
            if bits is None:
                raise DatasetConfigError(f"{what} 'unit' needs the bit depth: set bits (dataset.toml or --bits)")
            return float(2 ** int(bits) - 1), "unit"
        try:
            number = float(key)
        except ValueError:
            raise DatasetConfigError(
                f"{what} must be 'dn', 'unit' or a positive number, got {value!r}"
            ) from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        raise DatasetConfigError(f"{what} must be 'dn', 'unit' or a positive number, got {value!r}")
    if not math.isfinite(number) or number <= 0:
        raise DatasetConfigError(f"{what} must be a positive number, got {value!r}")
    return number, f"{number:g}"


def _merge_recorded(path: Path, merged: dict[str, Any], sources: dict[str, str]) -> None:
    """Fill settings the user did not give from what the file records; refuse contradictions."""
    from .metadata import check_recorded, read_recorded

    recorded = read_recorded(path)
    given: dict[str, Any] = {k: merged[k] for k in ("sensor", "ratio", "bits", "scale") if k in merged}
    if "scale" in given:  # compare multipliers, not labels
        try:
            given["scale"] = parse_scale(given["scale"], merged.get("bits", recorded.bits), what="scale")[0]
        except DatasetConfigError:
            given.pop("scale")
    try:
        check_recorded(recorded, given, sources)
    except InputError as exc:
        raise DatasetConfigError(str(exc)) from None
    for key, value in recorded.as_settings().items():
        if key not in merged:
            merged[key] = value
            sources[key] = f"{path.name} attributes"


def settings_file_for(dataset: Path) -> Path:
    """Path of the ``dataset.toml`` that belongs to a dataset folder or ``.h5`` file."""
    return (dataset if dataset.is_dir() else dataset.parent) / "dataset.toml"


def _read_toml(path: Path, known: set[str] = _KNOWN) -> dict[str, Any]:
    """A settings file's keys (``{}`` without the file); unreadable files and unknown keys refused."""
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DatasetConfigError(f"cannot read {path}: {exc}") from None
    unknown = sorted(set(data) - known)
    if unknown:
        raise DatasetConfigError(f"{path}: unknown key(s) {unknown}; known keys: {sorted(known)}")
    return data


def load_settings(dataset: str | Path, overrides: Mapping[str, Any] | None = None) -> DatasetSettings:
    """Read ``dataset.toml`` (if any) and apply command-line overrides.

    Parameters
    ----------
    dataset : path-like
        Dataset folder, or a PanCollection-style ``.h5`` file (its ``dataset.toml`` is the one
        beside it).
    overrides : mapping, optional
        Values given on the command line (keys ``sensor``, ``ratio``, ``bits``, ``resolution``,
        ``protocol``, ``scale``, ``result_scale``); ``None`` values are ignored. They take
        precedence over the TOML.

    Returns
    -------
    DatasetSettings

    Raises
    ------
    DatasetConfigError
        A required setting is missing, a value is invalid, or the sensor is unknown.
    """
    path = Path(dataset).expanduser().resolve()
    if not path.exists():
        raise DatasetConfigError(f"dataset {dataset} does not exist")
    toml_path = settings_file_for(path)
    data = _read_toml(toml_path)
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, value in data.items():
        merged[key] = value
        sources[key] = "dataset.toml"
    for key, value in (overrides or {}).items():
        if value is not None:
            merged[key] = value
            sources[key] = "flag"
    preset = _apply_preset(path, merged, sources) if merged.get("preset") is not None else None
    if path.is_file():  # an .h5 dataset records its own settings (pansharp-nlrnet prepare writes them)
        _merge_recorded(path, merged, sources)
    full = str(merged.get("resolution", "")).strip().lower() == "full"  # no full-resolution index needs bits
    missing = [k for k in _REQUIRED if k not in merged and not (k == "bits" and full)]
    if missing:
        hint = ", ".join(f"{k} (TOML key '{k}' or {_FLAG[k]})" for k in missing)
        where = str(toml_path) if toml_path.is_file() else f"{toml_path} (not found)"
        raise DatasetConfigError(f"missing dataset setting(s): {hint}; looked in {where}")
    sensor_name = str(merged["sensor"])
    from pansharp_iqa.sensors import get_sensor

    try:
        sensor = get_sensor(sensor_name)
    except ValueError as exc:
        raise DatasetConfigError(str(exc)) from None
    try:  # the package's one bits rule (1..16; 11, 11.0 and "11" alike)
        bits = check_bits(merged["bits"]) if "bits" in merged else None
    except InputError as exc:
        raise DatasetConfigError(f"{exc} ({_FLAG['bits']} or dataset.toml 'bits')") from None
    resolution = str(merged["resolution"]).strip().lower()
    if resolution not in ("reduced", "full"):
        raise DatasetConfigError(f"resolution must be 'reduced' or 'full', got {merged['resolution']!r}")
    try:  # the package's one ratio rule: a power of two where the 23-tap EXP runs (full resolution)
        ratio = check_ratio(merged["ratio"], exp=resolution == "full")
    except InputError as exc:
        raise DatasetConfigError(f"{exc} ({_FLAG['ratio']} or dataset.toml 'ratio')") from None
    protocol = str(merged.get("protocol", DEFAULT_PROTOCOL))
    sources.setdefault("protocol", "default")
    input_scale, input_label = parse_scale(merged.get("scale", "dn"), bits, what="scale")
    sources.setdefault("scale", "default")
    if "result_scale" in merged:
        result_scale, result_label = parse_scale(merged["result_scale"], bits, what="result_scale")
    else:
        result_scale, result_label = None, None
    band_names = merged.get("band_names")
    if band_names is not None:
        try:  # every name one of the sensor's bands, none twice: each band gets its own MTF
            band_names = check_band_names(sensor, band_names, what="dataset.toml band_names")
        except InputError as exc:
            raise DatasetConfigError(str(exc)) from None
    try:
        scale_mismatch = check_choice("scale_mismatch", merged.get("scale_mismatch", "raise"), SCALE_MISMATCH_POLICIES)
    except InputError as exc:
        raise DatasetConfigError(f"{exc} ({_FLAG['scale_mismatch']} or dataset.toml 'scale_mismatch')") from None
    indexes = _index_names(merged.get("indexes"))
    name = str(data.get("name") or (path.name if path.is_dir() else path.stem))
    return DatasetSettings(
        name=name,
        root=str(path),
        sensor=sensor_name,
        ratio=ratio,
        bits=bits,
        resolution=resolution,
        protocol=protocol,
        input_scale=input_scale,
        input_scale_label=input_label,
        result_scale=result_scale,
        result_scale_label=result_label,
        band_names=band_names,
        sources=sources,
        scale_mismatch=scale_mismatch,
        indexes=indexes,
        preset=preset,
    )


def _apply_preset(path: Path, merged: dict[str, Any], sources: dict[str, str]) -> dict[str, Any]:
    """Fix the settings a preset fixes (refusing contradicting ones); return its card entry."""
    from pansharp_iqa.presets import get_preset
    from pansharp_iqa.sensors import get_sensor

    try:
        preset = get_preset(merged["preset"])
        if not (path.is_file() and path.suffix.lower() in (".h5", ".hdf5")):
            raise InputError(f"preset {preset.name} evaluates a PanCollection .h5 file; {path} is not one")
        data = preset.check_data(path, force=merged.get("preset_force") is True)
    except InputError as exc:
        raise DatasetConfigError(str(exc)) from None
    fixed = {"resolution": data.resolution, "ratio": preset.ratio, "bits": preset.bits,
             "protocol": preset.protocol.name,
             "sensor": preset.mtf_sensor if data.resolution == "full" else preset.sensor}
    for key, value in fixed.items():
        if key in merged:
            given = merged[key]
            try:
                if key == "sensor":
                    same = get_sensor(str(given)).name in (preset.sensor, preset.mtf_sensor)
                elif key in ("ratio", "bits"):
                    same = (check_ratio(given) if key == "ratio" else check_bits(given)) == value
                else:
                    same = str(given).strip().lower() == value
            except (InputError, ValueError):
                same = False
            if not same:
                raise DatasetConfigError(f"{key} = {given!r} ({sources[key]}) contradicts preset {preset.name} "
                                         f"({key} = {value!r}); drop one of the two")
        merged[key] = value
        sources[key] = f"preset {preset.name}"
    if "result_scale" not in merged:  # the scripts read sr in DN (sr / const); a method.toml may say otherwise
        merged["result_scale"], sources["result_scale"] = "dn", f"preset {preset.name}"
    full = {"upsampled_ms": "the file's lms (ms_exp), as the scripts"} if data.resolution == "full" else {}
    return {**preset.card(data), **full}


def _index_names(value: Any) -> tuple[str, ...] | None:
    """``indexes`` as a tuple of names (a comma-separated string or a list of strings)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(t, str) for t in items):
        raise DatasetConfigError(f"indexes must be a comma-separated string or a list of names, got {value!r}")
    names = tuple(t.strip() for t in items if t.strip())
    if not names:
        raise DatasetConfigError(f"indexes is empty: name at least one index, e.g. default,PSNR "
                                 f"({_FLAG['indexes']} or dataset.toml 'indexes')")
    return names


#: A method's own declarations, in its results folder (``METHOD/method.toml``).
METHOD_FILE = "method.toml"
_METHOD_KEYS = {"result_scale", "scale_mismatch", "name", "description", "notes", "source", "license", "attribution"}


def method_settings(settings: DatasetSettings, method_dir: str | Path) -> DatasetSettings:
    """The settings one method's results are evaluated with: ``METHOD/method.toml`` may declare
    ``result_scale = "unit" | "dn" | <multiplier>`` and ``scale_mismatch``, which override the
    dataset's (and the flags) for that method only; without the file, ``settings`` unchanged.

    Parameters
    ----------
    settings : DatasetSettings
        The dataset's (from :func:`load_settings`).
    method_dir : path-like
        The method's results folder.

    Returns
    -------
    DatasetSettings
        ``result_scale`` from the method's file, its source recorded as ``"<method>/method.toml"``.

    Raises
    ------
    DatasetConfigError
        Unreadable file, an unknown key or a scale that is not understood.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "dataset.toml").write_text('sensor = "WV3"\\nratio = 4\\nbits = 11\\nresolution = "reduced"')
    >>> (folder / "PNN").mkdir(); _ = (folder / "PNN" / "method.toml").write_text('result_scale = "unit"')
    >>> s = method_settings(load_settings(folder), folder / "PNN"); s.result_scale, s.sources["result_scale"]
    (2047.0, 'PNN/method.toml')
    """
    path = Path(method_dir) / METHOD_FILE
    data = _read_toml(path, _METHOD_KEYS)
    source = f"{Path(method_dir).resolve().name}/{METHOD_FILE}"
    if "scale_mismatch" in data:
        try:
            mismatch = check_choice("scale_mismatch", data["scale_mismatch"], SCALE_MISMATCH_POLICIES)
        except InputError as exc:
            raise DatasetConfigError(f"{path}: {exc}") from None
        settings = dataclasses.replace(settings, scale_mismatch=mismatch,
                                       sources={**settings.sources, "scale_mismatch": source})
    if "result_scale" not in data:
        return settings
    value, label = parse_scale(data["result_scale"], settings.bits, what=f"{path} result_scale")
    return dataclasses.replace(settings, result_scale=value, result_scale_label=label,
                               sources={**settings.sources, "result_scale": source})

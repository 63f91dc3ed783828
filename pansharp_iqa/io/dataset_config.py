"""Dataset settings: ``dataset.toml``, a method's ``method.toml``, a preset, what the files record and the
command-line flags, made into the one settings value of :mod:`pansharp_iqa.settings`.

Everything that changes the numbers (sensor, ratio, bits, resolution, protocol, the scale of the
inputs and of the results) is read from ``dataset.toml`` or given on the command line; nothing is
guessed from the data. Missing required settings raise :class:`~.errors.DatasetConfigError`. Which
source wins, and which contradictions are refused: :data:`PRECEDENCE`. Each role's scale is a
declaration (:class:`~pansharp_iqa.rules.Declarations`, with its source) that the core applies.

The keys of ``dataset.toml`` and ``method.toml``: ``docs/cli.md``; what files declare and the precedence:
``docs/validation.md``. Integer settings (``ratio``, ``bits``) follow the package's one
rule (:func:`pansharp_iqa.validation.integer_setting`): ``4``, ``4.0`` and ``"4"`` alike.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..indexes.regression import EXPONENT_CASES
from ..rules import SCALE_MISMATCH_POLICIES, Declarations, Declared, Wording
from ..settings import FullSettings, Settings, full_settings, reduced_settings
from ..validation import InputError, check_band_names, check_bits, check_choice, check_ratio
from .errors import DatasetConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["DEFAULT_PROTOCOL", "METHOD_FILE", "PRECEDENCE", "DatasetSettings", "cli_wording", "input_roles",
           "load_settings", "method_settings", "parse_scale", "settings_file_for"]

DEFAULT_PROTOCOL = "toolbox2020"
_REQUIRED = ("sensor", "ratio", "bits", "resolution")
_KNOWN = set(_REQUIRED) | {"protocol", "band_names", "scale", "result_scale", "scale_mismatch", "name", "description",
                           "notes", "source", "license", "attribution", "indexes", "preset", "preset_force",
                           "sam_zero_norm", "per_band", "exponents"}
_FLAG = {k: f"--{k.replace('_', '-')}" for k in (*_REQUIRED, "protocol", "result_scale", "scale_mismatch", "indexes",
                                                 "preset", "preset_force", "sam_zero_norm", "per_band",
                                                 "exponents")} | {"scale": "--input-scale"}
#: Where a setting of ``pansharp-eval`` comes from, the first that gives it winning: a method's ``method.toml``
#: (``result_scale``, ``scale_mismatch``, ``first_index``: for that method), the command line, ``dataset.toml``,
#: the results' own records (``result_scale`` an h5 result records), then the defaults (a preset's ``result_scale =
#: "dn"``, ``scale = "dn"``). What the data declare about themselves is no setting to override: a preset's fixed
#: values, an h5/.mat file's recorded sensor, ratio, bits and scale, a file's band names, scale tags and no-data
#: value. A setting that contradicts one of them is refused, naming both (:meth:`pansharp_iqa.rules.Declarations.
#: with_value`); the file's own unit is applied by its reader and a setting's scale multiplies it.
PRECEDENCE = ("method.toml", "flag", "dataset.toml", "result file attributes", "default")


def input_roles(resolution: str, given: bool = False) -> tuple[str, ...]:
    """The core's input roles: ``("reference",)`` (the GT), else ``("ms", "pan")`` and ``"ms_exp"`` when given."""
    return ("reference",) if resolution == "reduced" else ("ms", "pan", "ms_exp") if given else ("ms", "pan")


def cli_wording(method: str | None = None) -> Wording:
    """The words of ``pansharp-eval`` in refusals (a result's scale is its method's, with ``method``)."""
    where = f"{method}/method.toml (this method only)" if method else None
    override = (f"declare scale_mismatch = 'warn' in {where}, or pass --scale-mismatch warn (every method), to score "
                "it with a warning" if where else "declare scale_mismatch = 'warn' in dataset.toml (or "
                "--scale-mismatch warn) to score it with a warning")
    result = ("result_scale", f"{where or 'dataset.toml'} (or --result-scale)")
    inputs = ("scale", "dataset.toml (or --input-scale)")
    return Wording(override, {"fused": result, "reference": inputs, "pan": inputs})


def _source(key: str, sources: Mapping[str, str]) -> str:
    """A setting's source as messages name it: ``dataset.toml scale``, ``--input-scale``, ``preset ...``."""
    where = sources.get(key, "default")
    return {"dataset.toml": f"dataset.toml {key}", "flag": _FLAG.get(key, key)}.get(where, f"{where} {key}")


def _override(declared: Declarations, role: str, key: str, value: Any, source: str) -> Declarations:
    """``declared`` with ``role``'s ``key`` given by a source of higher :data:`PRECEDENCE`."""
    return Declarations({**declared.items, role: {**declared.items.get(role, {}), key: Declared(value, source)}})


@dataclasses.dataclass(frozen=True)
class DatasetSettings:
    """Where a dataset is and the one settings value it is evaluated with, with what ``results.json`` records
    beside it. Built by :func:`load_settings` (and, per method, ``method_settings``).

    Parameters
    ----------
    name : str
        The dataset's name: ``dataset.toml``'s ``name``, else the folder's name (the ``.h5`` file's stem).
    root : str
        Absolute path of the dataset folder or PanCollection-style ``.h5`` file.
    sensor : str
        The data's sensor (a registry name); at full resolution ``settings.sensor`` is the sensor whose MTF is
        used, which a preset may set to another (``IKONOS`` for QuickBird data).
    settings : ReducedSettings or FullSettings
        The validated settings value of the evaluation (:func:`pansharp_iqa.reduced_settings` /
        :func:`pansharp_iqa.full_settings`), with each role's declared scale.
    band_names : tuple of str, optional
        The MS bands declared by ``dataset.toml``'s ``band_names``, in storage order; None: the sensor's order.
    labels : mapping of str to object
        ``scale``, ``result_scale`` and ``indexes`` as given (``"unit"``, ``"dn"``, ``"4"``; the index names
        as typed), for ``results.json``.
    sources : mapping of str to str
        Per setting, where it came from: ``"dataset.toml"``, ``"flag"``, ``"preset <name>"``,
        ``"<file> attributes"``, ``"default"`` (the first of ``method.toml``, a flag, ``dataset.toml``, a result
        file's attributes and the default that gives a setting wins: ``PRECEDENCE``).
    preset : mapping of str to object, optional
        The preset's card entry (:meth:`pansharp_iqa.Preset.card`, with what it found about the data); None
        without a preset.
    first_index : int
        A method's first PanCollection result number (``output_mulExm_<i>``: 0 as the scripts write them, or 1;
        ``method.toml``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "dataset.toml").write_text('sensor = "QB"\\nratio = 4\\nbits = 11\\nresolution = "full"')
    >>> d = load_settings(folder)
    >>> d.sensor, d.resolution, d.ratio, d.protocol, d.sources["sensor"], d.first_index
    ('QB', 'full', 4, 'toolbox2020', 'dataset.toml', 0)
    """

    name: str
    root: str
    sensor: str
    settings: Settings
    band_names: tuple[str, ...] | None = None
    labels: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)
    preset: Mapping[str, Any] | None = None
    first_index: int = 0

    @property
    def resolution(self) -> str:
        """``reduced`` or ``full``."""
        return self.settings.resolution

    @property
    def ratio(self) -> int:
        """PAN/MS resolution ratio."""
        return self.settings.ratio

    @property
    def bits(self) -> int | None:
        """Radiometric resolution, or None."""
        return self.settings.bits

    @property
    def protocol(self) -> str:
        """Protocol name."""
        return self.settings.protocol.name

    @property
    def indexes(self) -> tuple[str, ...] | None:
        """The indexes asked for (None: the protocol's table)."""
        return self.settings.requested

    @property
    def scale_mismatch(self) -> str:
        """``raise`` or ``warn``."""
        return self.settings.scale_mismatch

    @property
    def input_scale(self) -> float:
        """Multiplier from stored input values to DN."""
        return self.settings.scale_of(input_roles(self.resolution)[0])

    @property
    def input_scale_label(self) -> str:
        """The input scale as given."""
        return str(self.labels.get("scale", "dn"))

    @property
    def result_scale_label(self) -> str | None:
        """The results' scale as given."""
        return self.labels.get("result_scale")

    @property
    def exponents(self) -> str:
        """The QNR-like indexes' exponent case (full resolution; ``"unitary"`` otherwise)."""
        return str(getattr(self.settings, "exponents", "unitary"))

    @property
    def result_scale(self) -> float | None:
        """Multiplier from stored result values to DN (None: not declared)."""
        d = self.settings.declared.get("fused", "scale")
        return None if d is None else float(d.value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable record (``results.json``)."""
        out = {"name": self.name, "root": self.root, "sensor": self.sensor, "ratio": self.ratio, "bits": self.bits,
               "resolution": self.resolution, "protocol": self.protocol, "input_scale": self.input_scale,
               "input_scale_label": self.input_scale_label, "result_scale": self.result_scale,
               "result_scale_label": self.result_scale_label,
               "band_names": list(self.band_names) if self.band_names is not None else None,
               "sources": dict(self.sources), "scale_mismatch": self.scale_mismatch,
               **({"exponents": self.exponents} if self.exponents != "unitary" else {})}
        if self.indexes is not None:  # absent unless asked for (results.json of a default run unchanged)
            out["indexes"] = list(self.labels.get("indexes", self.indexes))
        return {**out, **({"preset": self.preset} if self.preset is not None else {})}

    def resolved_sensor(self) -> Any:
        """The :class:`pansharp_iqa.sensors.Sensor`, its bands in the ``band_names`` order."""
        from pansharp_iqa.sensors import get_sensor

        if isinstance(self.settings, FullSettings):
            return self.settings.sensor
        sensor = get_sensor(self.sensor)
        return sensor if self.band_names is None or sensor.is_generic else \
            full_settings(sensor=sensor, ratio=self.ratio).for_bands(self.band_names).sensor


def parse_scale(value: Any, bits: int | None, *, what: str = "scale") -> tuple[float, str]:
    """A scale declaration as its multiplier to DN and its label.

    Parameters
    ----------
    value : str or float
        ``"dn"`` (the values are DN: multiplier 1), ``"unit"`` (the values are within [0, 1]: multiplier
        ``2**bits - 1``) or a positive multiplier (a number, or a string holding one).
    bits : int or None
        Radiometric resolution in bits; needed by ``"unit"``.
    what : str
        The setting's name in messages (``"scale"``, ``"result_scale"``).

    Returns
    -------
    multiplier : float
        What the stored values are multiplied by to give DN.
    label : str
        The declaration as ``results.json`` records it: ``"dn"``, ``"unit"`` or the number.

    Raises
    ------
    DatasetConfigError
        Anything else, or ``"unit"`` without ``bits`` (the message names ``what``).

    Examples
    --------
    >>> parse_scale("unit", 11), parse_scale(4, None)
    ((2047.0, 'unit'), (4.0, '4'))
    """
    key = value.strip().lower() if isinstance(value, str) else None
    if key in ("dn", "digital_numbers"):
        return 1.0, "dn"
    if key in ("unit", "[0,1]", "0-1", "01"):
        if bits is None:
            raise DatasetConfigError(f"{what} 'unit' needs the bit depth: set bits (dataset.toml or --bits)")
        return float(2 ** int(bits) - 1), "unit"
    try:
        number = float(key if key is not None else value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if math.isnan(number):
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
    """``dataset.toml`` beside a dataset folder or PanCollection ``.h5`` file, the flags, a preset and what the
    ``.h5`` records, made into a :class:`DatasetSettings` (a flag wins over ``dataset.toml``, which wins over
    the defaults; what the data declare is not overridden: ``PRECEDENCE``).

    Parameters
    ----------
    dataset : str or os.PathLike
        The dataset folder (its ``dataset.toml`` inside) or PanCollection-style ``.h5`` file (``dataset.toml``
        beside it).
    overrides : mapping of str to object, optional
        Settings given on the command line, by ``dataset.toml`` key (``sensor``, ``ratio``, ``bits``,
        ``resolution``, ``protocol``, ``scale``, ``result_scale``, ``indexes``, ...); None values are ignored.
        They win over ``dataset.toml``; a value that contradicts what the data declare (a preset's fixed values,
        an ``.h5`` file's recorded settings) is refused.

    Returns
    -------
    DatasetSettings

    Raises
    ------
    DatasetConfigError
        A missing dataset, a missing required setting (``sensor``, ``ratio``, ``bits`` at reduced resolution,
        ``resolution``), an invalid value, or a contradiction (both sources named).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "dataset.toml").write_text('sensor = "WV3"\\nratio = 4\\nresolution = "reduced"\\nscale = "unit"')
    >>> d = load_settings(folder, {"bits": 11, "protocol": None})
    >>> d.bits, d.sources["bits"], d.input_scale, d.input_scale_label, d.protocol
    (11, 'flag', 2047.0, 'unit', 'toolbox2020')
    """
    path = Path(dataset).expanduser().resolve()
    if not path.exists():
        raise DatasetConfigError(f"dataset {dataset} does not exist")
    toml_path = settings_file_for(path)
    data = _read_toml(toml_path)
    merged: dict[str, Any] = dict(data)
    sources: dict[str, str] = {key: "dataset.toml" for key in data}
    for key, value in (overrides or {}).items():
        if value is not None:
            merged[key], sources[key] = value, "flag"
    preset = _apply_preset(path, merged, sources) if merged.get("preset") is not None else None
    if path.is_file():  # an .h5 dataset records its own settings (pansharp-nlrnet prepare writes them)
        _merge_recorded(path, merged, sources)
    full = str(merged.get("resolution", "")).strip().lower() == "full"  # no full-resolution index needs bits
    missing = [k for k in _REQUIRED if k not in merged and not (k == "bits" and full)]
    if missing:
        hint = ", ".join(f"{k} (TOML key '{k}' or {_FLAG[k]})" for k in missing)
        where = str(toml_path) if toml_path.is_file() else f"{toml_path} (not found)"
        raise DatasetConfigError(f"missing dataset setting(s): {hint}; looked in {where}")
    from pansharp_iqa.sensors import get_sensor

    try:
        sensor = get_sensor(str(merged["sensor"]))
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
    band_names = merged.get("band_names")
    try:
        if band_names is not None:  # every name one of the sensor's bands, none twice: each band gets its own MTF
            band_names = check_band_names(sensor, band_names, what="dataset.toml band_names")
        scale_mismatch = check_choice("scale_mismatch", merged.get("scale_mismatch", "raise"), SCALE_MISMATCH_POLICIES)
    except InputError as exc:
        raise DatasetConfigError(str(exc) if band_names is not None and "scale_mismatch" not in str(exc) else
                                 f"{exc} ({_FLAG['scale_mismatch']} or dataset.toml 'scale_mismatch')") from None
    given = preset is not None and resolution == "full"  # a preset's .h5: its lms is the upsampled MS
    declared, labels = Declarations(), dict[str, Any](indexes=_index_names(merged.get("indexes")))
    for key, roles in (("scale", input_roles(resolution, given)), ("result_scale", ("fused",))):
        if key in merged:
            value, labels[key] = parse_scale(merged[key], bits, what=key)
            for role in roles:
                declared = declared.with_value(role, "scale", value, _source(key, sources))
    if bits is not None:
        declared = declared.with_value("all", "bits", bits, _source("bits", sources))
    common: dict[str, Any] = dict(indexes=_index_names(merged.get("indexes")), scale_mismatch=scale_mismatch,
                                  declared=declared, wording=cli_wording())
    try:
        if preset is not None:
            from pansharp_iqa.presets import get_preset

            core: Settings = get_preset(preset["name"]).settings(resolution, **common)
        else:
            common.update(protocol=str(merged.get("protocol", DEFAULT_PROTOCOL)), ratio=ratio, bits=bits)
            core = reduced_settings(**common) if resolution == "reduced" else full_settings(sensor=sensor, **common)
        core = core.for_bands(band_names or ()) if isinstance(core, FullSettings) else core
        if merged.get("sam_zero_norm") is not None:  # the protocol's setting, changed (recorded under overrides)
            core = dataclasses.replace(core, protocol=core.protocol.with_settings(
                sam_zero_norm=str(merged["sam_zero_norm"])))
        if merged.get("per_band"):
            core = dataclasses.replace(core, per_band=True)
    except ValueError as exc:  # an unknown protocol or index, a protocol without this resolution
        flag = "--indexes or dataset.toml 'indexes'" if "ndex" in str(exc) else "--sam-zero-norm or dataset.toml " \
            "'sam_zero_norm'" if "zero_norm" in str(exc) else "--protocol or dataset.toml 'protocol'"
        raise DatasetConfigError(f"{exc} ({flag})") from None
    if "exponents" in merged:  # the QNR-like indexes' exponents (get_alpha_beta's cases), full resolution only
        where = f"{_FLAG['exponents']} or dataset.toml 'exponents'"
        if not isinstance(core, FullSettings):
            raise DatasetConfigError(f"exponents is a full-resolution setting ({where}); this dataset is evaluated at "
                                     "reduced resolution")
        try:
            core = dataclasses.replace(core, exponents=check_choice("exponents", merged["exponents"], EXPONENT_CASES))
        except InputError as exc:
            raise DatasetConfigError(f"{exc} ({where})") from None
    sources.setdefault("protocol", "default")
    sources.setdefault("scale", "default")
    return DatasetSettings(str(data.get("name") or (path.name if path.is_dir() else path.stem)), str(path),
                           sensor.name, core, band_names, labels, sources, preset)


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
             "protocol": preset.protocol.name, "sensor": preset.sensor}
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
_METHOD_KEYS = {"result_scale", "scale_mismatch", "first_index", "name", "description", "notes", "source", "license",
                "attribution"}


def method_settings(settings: DatasetSettings, method_dir: str | Path) -> DatasetSettings:
    """The settings of one method's results: ``METHOD/method.toml`` may declare ``result_scale``, ``scale_mismatch``
    (over the dataset's and the flags, for that method only) and ``first_index`` (its PanCollection results are
    numbered ``output_mulExm_<i>`` from it: 0 as the scripts write them, or 1); without a declared
    ``result_scale``, the one its h5 results record (``pansharp-nlrnet infer``). Refusals name its file.

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
    method = Path(method_dir).resolve().name
    source = f"{method}/{METHOD_FILE}"
    core, sources, labels = settings.settings, dict(settings.sources), dict(settings.labels)
    first = data.get("first_index", settings.first_index)
    try:
        if "scale_mismatch" in data:
            core = dataclasses.replace(core, scale_mismatch=check_choice("scale_mismatch", data["scale_mismatch"],
                                                                         SCALE_MISMATCH_POLICIES))
        if isinstance(first, bool) or not isinstance(first, int) or first < 0:
            raise InputError(f"first_index must be the number of the first result (0 or 1), got {first!r}")
    except InputError as exc:
        raise DatasetConfigError(f"{path}: {exc}") from None
    if "result_scale" not in data and settings.result_scale is None and (label := _recorded(method_dir)):
        data["result_scale"], source = label, f"{method} result file attributes"
    if "result_scale" in data:
        value, labels["result_scale"] = parse_scale(data["result_scale"], settings.bits, what=f"{path} result_scale")
        core = dataclasses.replace(core, declared=_override(core.declared, "fused", "scale", value,
                                                            f"{source} result_scale"))
    sources.update({k: source for k in ("result_scale", "scale_mismatch", "first_index") if k in data})
    return dataclasses.replace(settings, settings=dataclasses.replace(core, wording=cli_wording(method)),
                               labels=labels, sources=sources, first_index=first)


def _recorded(method_dir: str | Path) -> str | None:
    """The ``result_scale`` every h5 result of a method records (``pansharp-nlrnet infer`` writes it), else None."""
    from .errors import DataError
    from .metadata import read_recorded

    try:
        found = {read_recorded(p).result_scale for p in sorted(Path(method_dir).iterdir())
                 if p.suffix.lower() in (".h5", ".hdf5") and p.is_file()}
    except (DataError, OSError):
        return None
    return found.pop() if len(found) == 1 and None not in found else None

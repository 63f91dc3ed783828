"""Sensor registry: per-sensor MTF gains at Nyquist (GNyq), band names, ratio and bit depth.

Each sensor is one TOML file in the top-level ``sensors/`` folder of the source tree, installed as
the package ``pansharp_iqa.sensor_files``. Every file records the sources of its values and, where
sources disagree, says so in ``notes``.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from .validation import SensorMismatchError, SettingError, check_band_names

__all__ = ["Sensor", "UnknownSensorError", "get_sensor", "list_sensors", "resolve_sensor"]


class UnknownSensorError(SettingError):
    """Raised when a sensor name (or alias) is not in the registry."""


@dataclasses.dataclass(frozen=True)
class Sensor:
    """Immutable description of a pansharpening sensor.

    Parameters
    ----------
    name : str
        Canonical short name (``"WV2"``, ``"QB"``, ``"none"``...).
    full_name : str
        Human-readable name.
    aliases : tuple of str
        Other accepted names (case-insensitive).
    band_names : tuple of str or None
        MS band names in product order; ``None`` for a sensor with any band count (the generic
        ``none``; a hyperspectral cube such as ``PRISMA``).
    ms_gnyq : tuple of float
        MTF gain at the MS Nyquist frequency, one per band (empty for a sensor with any band count,
        whose per-band value is ``ms_gnyq_all_bands``).
    pan_gnyq : float or None
        MTF gain of the PAN at its Nyquist frequency; ``None`` where no source gives one.
    ratio : int or None
        Nominal PAN/MS resolution ratio; ``None`` when unknown (must then be given explicitly).
    bits : int or None
        Radiometric resolution in bits; ``None`` when unknown.
    sources : tuple of str
        Where the values come from.
    notes : str
        Disagreements between sources, caveats.
    ms_gnyq_all_bands : float or None
        For a sensor with any band count: the GNyq applied to every band, whatever their number.
    subsets : Mapping[str, tuple of str]
        Named band subsets (e.g. ``"4band"`` for 4-band WorldView products).
    protocol_overrides : Mapping[str, Mapping[str, Any]]
        Values that a named protocol uses instead of the defaults (e.g. the 2015 toolbox's
        generic GNyq 0.15).
    parent : str or None
        For a band subset, the name of the full sensor it was selected from.
    pan_sensor : str or None
        The registry sensor whose bands play the PAN's role, each with its own GNyq (Sentinel-2's
        20 m and 60 m groups: the four 10 m bands of ``S2-10``); such a sensor has no ``pan_gnyq``.
    """

    name: str
    full_name: str = ""
    aliases: tuple[str, ...] = ()
    band_names: tuple[str, ...] | None = None
    ms_gnyq: tuple[float, ...] = ()
    pan_gnyq: float | None = None
    ratio: int | None = None
    bits: int | None = None
    sources: tuple[str, ...] = ()
    notes: str = ""
    ms_gnyq_all_bands: float | None = None
    subsets: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    protocol_overrides: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    parent: str | None = None
    pan_sensor: str | None = None

    @property
    def n_bands(self) -> int | None:
        """Number of MS bands, or ``None`` for a sensor with any band count."""
        return None if self.band_names is None else len(self.band_names)

    @property
    def is_generic(self) -> bool:
        """True for a sensor without a fixed band list (any band count, one GNyq for all bands: the
        explicit generic entry ``"none"``, a hyperspectral cube such as ``PRISMA``)."""
        return self.band_names is None

    def gnyq_for(self, n_bands: int, *, protocol: str | None = None) -> tuple[float, ...]:
        """MS GNyq values for an image of ``n_bands`` bands.

        Parameters
        ----------
        n_bands : int
            Band count of the image being filtered.
        protocol : str, optional
            Protocol name; a protocol override recorded in the sensor file (e.g. the 2015
            toolbox's generic value) takes precedence.

        Returns
        -------
        tuple of float
            One gain per band (dimensionless, in (0, 1)).

        Raises
        ------
        SensorMismatchError
            If the band count does not match the sensor's (select a band subset first).
        """
        override = dict(self.protocol_overrides.get(protocol or "", {}))
        if self.is_generic:
            value = override.get("ms_gnyq_all_bands", self.ms_gnyq_all_bands)
            assert value is not None  # a sensor without band names defines ms_gnyq_all_bands (registry check)
            return (float(value),) * int(n_bands)
        if n_bands != self.n_bands:
            subsets = ", ".join(f"{k}={list(v)}" for k, v in self.subsets.items()) or "none recorded"
            raise SensorMismatchError(
                f"sensor {self.name!r} has {self.n_bands} bands {list(self.band_names or ())}, "
                f"but the image has {n_bands}. Select the bands the product carries with "
                f"get_sensor({self.name!r}).select_bands([...]) (named subsets: {subsets}), "
                f"or use sensor 'none' explicitly if the sensor is unknown."
            )
        return tuple(float(g) for g in override.get("ms_gnyq", self.ms_gnyq))

    def pan_gnyq_for(self, *, protocol: str | None = None) -> float:
        """PAN GNyq, raising a clear error where the registry has no value for this sensor.

        Parameters
        ----------
        protocol : str, optional
            Protocol name whose overrides apply (``protocol_overrides``).

        Returns
        -------
        float

        Raises
        ------
        SensorMismatchError
            No PAN GNyq for this sensor.
        """
        override = dict(self.protocol_overrides.get(protocol or "", {}))
        value = override.get("pan_gnyq", self.pan_gnyq)
        if value is None and self.pan_sensor is not None:
            raise SensorMismatchError(
                f"sensor {self.name!r} has no single PAN: the bands of sensor {self.pan_sensor!r} play its role, "
                f"each with its own GNyq (get_sensor({self.pan_sensor!r}).gnyq_for(n_bands))"
            )
        if value is None:
            raise SensorMismatchError(
                f"sensor {self.name!r} has no PAN GNyq in the registry (see its notes: {self.notes!r}); "
                "this index needs the PAN MTF. Use a protocol that does not (e.g. 'toolbox2020') "
                "or pass a Sensor with pan_gnyq set (dataclasses.replace(sensor, pan_gnyq=...))."
            )
        return float(value)

    def select_bands(self, bands: str | Sequence[str]) -> Sensor:
        """Return the sensor restricted to a subset of its bands.

        Parameters
        ----------
        bands : str or sequence of str
            A named subset (e.g. ``"4band"``) or band names in the order the product stores them
            (case-insensitive), e.g. ``["Blue", "Green", "Red", "NIR1"]``.

        Returns
        -------
        Sensor
            A new sensor whose ``band_names`` and ``ms_gnyq`` follow the selection.
        """
        if self.is_generic:
            raise SensorMismatchError("the generic sensor 'none' has no named bands to select")
        assert self.band_names is not None
        if isinstance(bands, str):
            key = {k.lower(): k for k in self.subsets}.get(bands.lower())
            if key is None:
                raise SensorMismatchError(
                    f"sensor {self.name!r} has no band subset {bands!r}; known subsets: "
                    f"{sorted(self.subsets)}; or pass band names from {list(self.band_names)}"
                )
            names = self.subsets[key]
            label = key
        else:
            names = check_band_names(self, bands, what="the selection")  # no typos, no band twice
            label = ",".join(bands)
        lookup = {b.lower(): i for i, b in enumerate(self.band_names)}
        idx = []
        for b in names:
            if b.lower() not in lookup:
                raise SensorMismatchError(
                    f"sensor {self.name!r} has no band {b!r}; its bands are {list(self.band_names)}"
                )
            idx.append(lookup[b.lower()])
        return dataclasses.replace(
            self,
            name=f"{self.name}[{label}]",
            aliases=(),
            band_names=tuple(self.band_names[i] for i in idx),
            ms_gnyq=tuple(self.ms_gnyq[i] for i in idx),
            subsets={},
            parent=self.name,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (used in provenance cards; ``pan_sensor`` only where set)."""
        out = {
            "name": self.name,
            "full_name": self.full_name,
            "band_names": list(self.band_names) if self.band_names is not None else None,
            "ms_gnyq": list(self.ms_gnyq),
            "ms_gnyq_all_bands": self.ms_gnyq_all_bands,
            "pan_gnyq": self.pan_gnyq,
            "ratio": self.ratio,
            "bits": self.bits,
            "sources": list(self.sources),
            "parent": self.parent,
        }
        if self.pan_sensor is not None:
            out["pan_sensor"] = self.pan_sensor
        return out


def _from_toml(data: Mapping[str, Any]) -> Sensor:
    return Sensor(
        name=str(data["name"]),
        full_name=str(data.get("full_name", data["name"])),
        aliases=tuple(data.get("aliases", ())),
        band_names=tuple(data["band_names"]) if "band_names" in data else None,
        ms_gnyq=tuple(float(g) for g in data.get("ms_gnyq", ())),
        pan_gnyq=float(data["pan_gnyq"]) if "pan_gnyq" in data else None,
        ratio=int(data["ratio"]) if "ratio" in data else None,
        bits=int(data["bits"]) if "bits" in data else None,
        sources=tuple(data.get("sources", ())),
        notes=str(data.get("notes", "")).strip(),
        ms_gnyq_all_bands=(
            float(data["ms_gnyq_all_bands"]) if "ms_gnyq_all_bands" in data else None
        ),
        subsets={k: tuple(v) for k, v in data.get("subsets", {}).items()},
        protocol_overrides={k: dict(v) for k, v in data.get("protocol_overrides", {}).items()},
        pan_sensor=str(data["pan_sensor"]) if "pan_sensor" in data else None,
    )


def _sensor_file_entries() -> list[Any]:
    """The installed sensor files, or the source tree's ``sensors/`` when run from a checkout."""
    try:
        return list(resources.files("pansharp_iqa.sensor_files").iterdir())
    except (ModuleNotFoundError, TypeError):
        source_tree = Path(__file__).resolve().parent.parent / "sensors"
        if not source_tree.is_dir():
            raise
        return list(source_tree.iterdir())


@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, Sensor]:
    sensors: dict[str, Sensor] = {}
    for entry in _sensor_file_entries():
        if entry.name.endswith(".toml"):
            sensor = _from_toml(tomllib.loads(entry.read_text(encoding="utf-8")))
            if sensor.band_names is not None and len(sensor.band_names) != len(sensor.ms_gnyq):
                raise RuntimeError(f"sensor file {entry.name}: band_names and ms_gnyq differ in length")
            if sensor.band_names is None and sensor.ms_gnyq_all_bands is None:
                raise RuntimeError(f"sensor file {entry.name}: no band_names needs ms_gnyq_all_bands")
            sensors[sensor.name] = sensor
    return sensors


def _lookup_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for s in _registry().values():
        for n in (s.name, *s.aliases):
            table[n.lower()] = s.name
    return table


def list_sensors() -> list[str]:
    """Canonical names of all registered sensors, sorted.

    Returns
    -------
    list of str
    """
    return sorted(_registry(), key=str.lower)


def get_sensor(name: str) -> Sensor:
    """Look a sensor up by name or alias (case-insensitive).

    Parameters
    ----------
    name : str
        E.g. ``"WV2"``, ``"WorldView-2"``, ``"quickbird"``, ``"none"``. A band subset can be
        appended in brackets: ``"WV3[4band]"`` or ``"WV2[Blue,Green,Red,NIR1]"``.

    Returns
    -------
    Sensor

    Raises
    ------
    UnknownSensorError
        If the name is not registered; the message lists the known names.
    """
    if not isinstance(name, str):
        raise SettingError(f"sensor name must be a str, got {type(name).__name__}")
    base, subset = name.strip(), None
    if base.endswith("]") and "[" in base:
        base, subset = base[:-1].split("[", 1)
    canonical = _lookup_table().get(base.strip().lower())
    if canonical is None:
        known = ", ".join(
            f"{s.name} ({', '.join(s.aliases)})" if s.aliases else s.name
            for s in sorted(_registry().values(), key=lambda s: s.name.lower())
        )
        raise UnknownSensorError(
            f"unknown sensor {name!r}. Known sensors: {known}. If the sensor is truly unknown, "
            "pass 'none' explicitly (generic GNyq 0.30)."
        )
    sensor = _registry()[canonical]
    if subset is not None:
        parts = [p.strip() for p in subset.split(",")]
        sensor = sensor.select_bands(parts[0] if len(parts) == 1 else parts)
    return sensor


def resolve_sensor(sensor: str | Sensor) -> Sensor:
    """Accept a name or a :class:`Sensor` and return a :class:`Sensor`.

    Parameters
    ----------
    sensor : str or Sensor
        A registry name (:func:`get_sensor`; ``"WV3[4band]"`` selects a subset) or a sensor object
        (returned as is).

    Returns
    -------
    Sensor

    Raises
    ------
    SettingError
        ``None`` (the sensor is required).
    UnknownSensorError
        An unknown name.

    Examples
    --------
    >>> resolve_sensor("wv2").name
    'WV2'
    """
    if isinstance(sensor, Sensor):
        return sensor
    if sensor is None:
        raise SettingError(
            "sensor is required (no silent default): pass a name from list_sensors(), e.g. 'WV2', "
            "or 'none' for the generic MTF"
        )
    return get_sensor(sensor)

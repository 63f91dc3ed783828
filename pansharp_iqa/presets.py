"""Presets: the settings of a published benchmark's own evaluation code, fixed under one name.

``pancollection-wv3``, ``-qb``, ``-gf2`` and ``-wv2`` reproduce the MATLAB evaluation of the
PanCollection / DLPan-Toolbox test files (``test_<sensor>_multiExm1.h5``, reduced resolution;
``test_<sensor>_OrigScale_multiExm1.h5``, full resolution; ``gt`` present = reduced): toolbox 2020
index code, no border cut, 32-pixel blocks, no threshold, ratio 4, the band-mean PSNR and SSIM with
peak ``2**bits - 1`` (1023 for GF2), and at full resolution D_lambda_K, D_s and HQNR with the MTF
the scripts pass (``IKONOS`` for QB and GF2) and the file's ``lms`` as upsampled MS. Use
``evaluate({"fused": sr, "reference": gt}, preset.settings("reduced"))``, ``evaluate({"fused": sr, "ms": ms,
"pan": pan, "ms_exp": lms}, preset.settings("full"))`` or ``ReducedMetrics(settings=preset.settings())``;
:meth:`pansharp_iqa.Preset.check_data` tells the published test set (SHA-256) from other data, which is refused
unless forced and then marked in the card. Every value and its source line: ``docs/benchmark.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .hashing import sha256_file
from .protocols import Protocol, get_protocol
from .settings import Settings, full_settings, reduced_settings
from .validation import InputError, SettingError, check_choice

__all__ = ["Preset", "PresetData", "PANCOLLECTION", "PUBLISHED_SHA256", "list_presets", "get_preset"]

#: The protocol of the PanCollection evaluation scripts (``get_protocol("pancollection")``).
PANCOLLECTION: Protocol = get_protocol("pancollection")

#: SHA-256 of the published test files, where a public record pins them (file name -> hex digest):
#: BIYONGHIYON/CtrS ``SSA-MRN/README.md`` (2026), table of the reduced-resolution files it verified.
PUBLISHED_SHA256: dict[str, str] = {
    "test_wv3_multiExm1.h5": "00db0d62f63693410935208e287aea21a736d11840d92eedd2d093c99be5314a",
    "test_qb_multiExm1.h5": "9842a1232ad2d5b9a61c9fd7fb353e8fc6214eeac6e947d888f221ad6ecdda35",
    "test_gf2_multiExm1.h5": "709a9a53b2e0f29d3dcd5c6ca4410c2913b62cc03c104fed6c049911dbe1c8ea",
}


@dataclasses.dataclass(frozen=True)
class PresetData:
    """What :meth:`pansharp_iqa.Preset.check_data` found about a file (recorded in cards under ``"preset"``).

    Parameters
    ----------
    file : str
        The file's name (without its folder).
    resolution : {"reduced", "full"}
        From the file's keys: ``gt`` present, reduced resolution; else full resolution.
    sha256 : str
        The file's SHA-256, 64 hexadecimal digits.
    published : bool or None
        Whether the hash is the published test file's; None where no published hash is recorded
        (:data:`PUBLISHED_SHA256`).
    reasons : tuple of str
        Why the file is not the published test set (another hash, another band count); non-empty only for a
        forced preset.

    Examples
    --------
    >>> d = PresetData("test_wv3_OrigScale_multiExm1.h5", "full", "0" * 64, None)
    >>> d.card()["published_test_set"], d.card()["data_note"].split(":")[0]
    (None, 'no published SHA-256 recorded for this file')
    """

    file: str
    resolution: str
    sha256: str
    published: bool | None
    reasons: tuple[str, ...] = ()

    def card(self) -> dict[str, Any]:
        """Card entries for the data (JSON-serialisable).

        Returns
        -------
        dict
            ``file``, ``sha256``, ``published_test_set`` (``published``) and ``data_note`` (one line: whether
            the data is the published test set, and why not).
        """
        note = {True: "the published PanCollection test file (SHA-256 matches)",
                None: "no published SHA-256 recorded for this file: not verified against the published test set",
                False: "NOT the published PanCollection test set: " + "; ".join(self.reasons)}[self.published]
        return {"file": self.file, "sha256": self.sha256, "published_test_set": self.published, "data_note": note}


@dataclasses.dataclass(frozen=True)
class Preset:
    """Every setting of one benchmark's evaluation, fixed (see :func:`get_preset`).

    Parameters
    ----------
    name : str
        Registry name (``"pancollection-wv3"``, ...).
    sensor : str
        The data's sensor (a name of the sensor registry, :func:`pansharp_iqa.get_sensor`).
    bands : int
        MS bands of the test files.
    bits : int
        Radiometric resolution in bits; the peak of MPSNR, RMSE and SSIM is ``2**bits - 1`` DN (the scripts'
        ``const``).
    mtf_sensor : str
        The sensor whose MTF the full-resolution scripts use (D_lambda_K, D_s): ``"IKONOS"`` for QB and GF2.
    files : (str, str)
        The published reduced- and full-resolution file names.
    ratio : int
        PAN/MS resolution ratio (4 for every PanCollection set).
    protocol : Protocol
        The index conventions of the scripts: :data:`PANCOLLECTION`.

    Examples
    --------
    >>> p = get_preset("pancollection-qb")
    >>> p.sensor, p.mtf_sensor, p.bands, p.bits, p.ratio, p.protocol.name
    ('QB', 'IKONOS', 4, 11, 4, 'pancollection')
    """

    name: str
    sensor: str
    bands: int
    bits: int
    mtf_sensor: str
    files: tuple[str, str]
    ratio: int = 4
    protocol: Protocol = PANCOLLECTION

    @property
    def peak(self) -> int:
        """The scripts' ``const``: ``2**bits - 1`` DN."""
        return 2**self.bits - 1

    def settings(self, resolution: str = "reduced", **keywords: Any) -> Settings:
        """The settings value of this benchmark's evaluation at ``resolution``: ratio, bits and
        :data:`PANCOLLECTION`; at full resolution also the MTF the scripts use (``sensor``; ``satellite`` is the
        data's) and the file's ``lms`` as the upsampled MS (the input ``ms_exp``, ``upsampled="given"``).

        Parameters
        ----------
        resolution : {"reduced", "full"}
            Reduced resolution (the ``gt`` files: Q2n, Q, SAM, ERGAS, SCC, MPSNR, SSIM) or full resolution
            (D_lambda_K, D_s, HQNR).
        **keywords
            The other keywords of :func:`~pansharp_iqa.reduced_settings` / :func:`~pansharp_iqa.full_settings`
            (``indexes``, ``scale``, ``declared``, ``upsampled="interp23tap"`` to compute the EXP, ...); they
            override the preset's values.

        Returns
        -------
        ReducedSettings or FullSettings
            The validated settings value that :func:`pansharp_iqa.evaluation.evaluate` takes.

        Examples
        --------
        >>> s = get_preset("pancollection-gf2").settings("reduced")
        >>> s.ratio, s.bits, s.protocol.name, s.protocol.dim_cut
        (4, 10, 'pancollection', None)
        >>> from pansharp_iqa import evaluate, wald_degrade
        >>> from pansharp_iqa.baselines import gsa
        >>> from pansharp_iqa.demo_data import load_demo
        >>> ms, pan = load_demo()  # 11-bit, 4 bands: the QB preset's shape of data
        >>> ms_lr, pan_lr = wald_degrade(ms, pan, "QB", ratio=4)
        >>> r = evaluate({"fused": gsa(ms_lr, pan_lr, ratio=4), "reference": ms},
        ...              get_preset("pancollection-qb").settings("reduced"))
        >>> [k for k in r if k != "protocol"], r["protocol"]["evaluated_shape"]
        (['Q2n', 'Q', 'SAM', 'ERGAS', 'SCC', 'MPSNR', 'SSIM'], [144, 144, 4])
        >>> f = get_preset("pancollection-qb").settings("full")
        >>> f.sensor.name, f.satellite.name, f.roles, f.protocol.full_indexes
        ('IKONOS', 'QB', ('fused', 'ms', 'pan', 'ms_exp'), ('D_s', 'D_lambda_K', 'HQNR'))
        """
        fixed: dict[str, Any] = dict(ratio=self.ratio, bits=self.bits, protocol=self.protocol)
        if check_choice("resolution", resolution, ("reduced", "full")) == "reduced":
            return reduced_settings(**{**fixed, **keywords})
        return full_settings(**{**fixed, "sensor": self.mtf_sensor, "satellite": self.sensor, "upsampled": "given",
                                **keywords})

    def check_data(self, path: str | Path, *, force: bool = False,
                   known: Mapping[str, str] | None = None) -> PresetData:
        """Whether a PanCollection-style ``.h5`` (``gt``/``ms``/``lms``/``pan``, N x C x H x W) is this preset's
        published test set: another hash or band count is an :class:`~pansharp_iqa.InputError` naming both values,
        unless ``force`` (the card then says the data is not the published test set).

        Parameters
        ----------
        path : str or os.PathLike
            The ``.h5`` file; its keys decide the resolution (``gt`` present: reduced).
        force : bool
            Accept data that is not the published test set (its :class:`PresetData` then lists the reasons).
        known : mapping of str to str, optional
            File name -> SHA-256 (hexadecimal) of the published files; default :data:`PUBLISHED_SHA256`.

        Returns
        -------
        PresetData
            The file's name, resolution, SHA-256 and whether it is the published file.

        Raises
        ------
        InputError
            The file cannot be read as HDF5, lacks ``ms``/``pan``, or (without ``force``) differs from the
            published test set.

        Examples
        --------
        >>> import h5py, tempfile, os
        >>> import numpy as np
        >>> path = os.path.join(tempfile.mkdtemp(), "mine.h5")
        >>> with h5py.File(path, "w") as f:
        ...     for k, s in (("ms", 16), ("lms", 64), ("pan", 64)):
        ...         _ = f.create_dataset(k, data=np.ones((1, 1 if k == "pan" else 8, s, s)))
        >>> d = get_preset("pancollection-wv3").check_data(path)
        >>> d.resolution, d.published
        ('full', None)
        """
        import h5py

        path = Path(path)
        known = PUBLISHED_SHA256 if known is None else known
        try:
            with h5py.File(path, "r") as f:
                keys = list(f.keys())
                bands = int(f["ms"].shape[1]) if "ms" in f and len(f["ms"].shape) == 4 else None
        except OSError as exc:
            raise InputError(f"preset {self.name}: cannot read {path} as HDF5 ({exc})") from None
        if not {"ms", "pan"} <= set(keys):
            raise InputError(f"preset {self.name}: a PanCollection file has 'ms' and 'pan' (and 'gt' at reduced "
                             f"resolution, 'lms'); {path.name} has {sorted(keys)}")
        resolution = "reduced" if "gt" in keys else "full"  # the file's keys decide
        digest = sha256_file(path)
        reasons = []
        expected_name = self.files[0 if resolution == "reduced" else 1]
        expected = known.get(expected_name)
        if expected is not None and digest != expected:
            reasons.append(f"SHA-256 {digest[:12]}... differs from the published {expected_name}'s "
                           f"({expected[:12]}...)")
        if bands != self.bands:
            reasons.append(f"its MS has {bands} bands, the {self.sensor} test set {self.bands}")
        if reasons and not force:
            raise InputError(f"preset {self.name} does not fit {path.name}: {'; '.join(reasons)}. Evaluate it "
                             f"without the preset, or force the preset (force=True, --preset-force): the card "
                             f"then says the data is not the published test set")
        published = False if reasons else (True if expected is not None else None)
        return PresetData(path.name, resolution, digest, published, tuple(reasons))

    def card(self, data: PresetData | None = None) -> dict[str, Any]:
        """The card entry ``"preset"``: name, what it fixes, and what ``data`` says of the data.

        Parameters
        ----------
        data : PresetData, optional
            What :meth:`check_data` found about the evaluated file; None: the preset's values only.

        Returns
        -------
        dict
            JSON-serialisable: ``name``, ``sensor``, ``mtf_sensor``, ``bits``, ``peak`` (DN), ``ratio``,
            ``protocol``, ``files``, and with ``data`` its entries (:meth:`PresetData.card`).

        Examples
        --------
        >>> c = get_preset("pancollection-gf2").card()
        >>> c["name"], c["mtf_sensor"], c["peak"]
        ('pancollection-gf2', 'IKONOS', 1023)
        """
        out = {"name": self.name, "sensor": self.sensor, "mtf_sensor": self.mtf_sensor, "bits": self.bits,
               "peak": self.peak, "ratio": self.ratio, "protocol": self.protocol.name, "files": list(self.files)}
        return {**out, **(data.card() if data is not None else {})}


def _pancollection(tag: str, sensor: str, bands: int, bits: int, mtf: str) -> Preset:
    """One PanCollection preset."""
    return Preset(f"pancollection-{tag}", sensor, bands, bits, mtf,
                  (f"test_{tag}_multiExm1.h5", f"test_{tag}_OrigScale_multiExm1.h5"))


_PRESETS: dict[str, Preset] = {p.name: p for p in (
    _pancollection("wv3", "WV3", 8, 11, "WV3"),
    _pancollection("qb", "QB", 4, 11, "IKONOS"),  # analysis_unref_batched_images.m: QB -> 'IKONOS'
    _pancollection("gf2", "GF2", 4, 10, "IKONOS"),  # GF2 -> 'IKONOS'; const 1023
    _pancollection("wv2", "WV2", 8, 11, "WV2"),
)}


def list_presets() -> list[str]:
    """Names of the presets.

    Examples
    --------
    >>> list_presets()
    ['pancollection-wv3', 'pancollection-qb', 'pancollection-gf2', 'pancollection-wv2']
    """
    return list(_PRESETS)


def get_preset(name: str | Preset) -> Preset:
    """A preset by name, or a :class:`Preset` passed through.

    Parameters
    ----------
    name : str or Preset
        A name of :func:`list_presets`, case-insensitive: ``"pancollection-wv3"``, ``-qb``, ``-gf2``, ``-wv2``.

    Returns
    -------
    Preset

    Raises
    ------
    SettingError
        An unknown name (the message lists the known ones).

    Examples
    --------
    >>> p = get_preset("PanCollection-WV3")
    >>> p.sensor, p.bits, p.peak, p.files[0]
    ('WV3', 11, 2047, 'test_wv3_multiExm1.h5')
    """
    if isinstance(name, Preset):
        return name
    key = str(name).strip().lower()
    if key not in _PRESETS:
        raise SettingError(f"unknown preset {name!r}; known presets: {', '.join(_PRESETS)}")
    return _PRESETS[key]

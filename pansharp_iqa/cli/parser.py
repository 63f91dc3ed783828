"""The command line of ``pansharp-eval``: one parser with a subcommand per job, built from one
registry of options (:data:`OPTIONS`; each command lists the ones it takes in :data:`COMMANDS`).

A usage error is one line on stderr and exit status 2 (:class:`ArgumentParser`), never the usage
block; ``--help`` prints it.
"""

from __future__ import annotations

import argparse
from typing import Any

from .errors import UsageError

__all__ = ["ALL_FORMATS", "COMMANDS", "DEFAULT_FORMATS", "OPTIONS", "TABLE_FORMATS", "ArgumentParser", "build_parser",
           "parse_formats"]

ALL_FORMATS = ("table", "csv", "json", "md", "tex", "html")
#: Written when --format is not given (html, with its images, only on request or with 'all').
DEFAULT_FORMATS = ("table", "csv", "json", "md", "tex")


class ArgumentParser(argparse.ArgumentParser):
    """An argument parser whose usage errors raise :class:`~.errors.UsageError` (one line)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see {self.prog} --help)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def parse_formats(text: str) -> list[str]:
    """Split ``--format`` (comma-separated; ``all`` for every format).

    Raises
    ------
    argparse.ArgumentTypeError
        On an unknown format.

    Examples
    --------
    >>> parse_formats("csv, md"), len(parse_formats("all"))
    (['csv', 'md'], 6)
    """
    items = [t.strip().lower() for t in text.split(",") if t.strip()]
    if items == ["all"]:
        return list(ALL_FORMATS)
    unknown = [t for t in items if t not in ALL_FORMATS]
    if unknown or not items:
        raise argparse.ArgumentTypeError(
            f"unknown format(s) {unknown or [text]}; choose from {','.join(ALL_FORMATS)} or 'all'"
        )
    return items


#: The files of ``pansharp-eval table`` (``table.<format>``).
TABLE_FORMATS = ("md", "tex", "csv", "html")


def _table_formats(text: str) -> list[str]:
    items = [t.strip().lower() for t in text.split(",") if t.strip()]
    if items == ["all"]:
        return list(TABLE_FORMATS)
    if not items or any(t not in TABLE_FORMATS for t in items):
        raise argparse.ArgumentTypeError(f"unknown format(s) in {text!r}; choose from {','.join(TABLE_FORMATS)} "
                                         "or 'all'")
    return items


#: Every option of every command, defined once: name -> (flags, ``add_argument`` keywords). A
#: command may override keywords (its help, default, ``required``) in :data:`COMMANDS`.
OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "dataset": (("dataset",), {"metavar": "DATASET",
                               "help": "folder with dataset.toml and one input per scene, or a PanCollection .h5"}),
    "results": (("results",), {"metavar": "RESULTS", "nargs": "+",
                               "help": "one folder per method holding <scene>.{mat,tif,npy,npz,h5}"}),
    "out": (("--out",), {"metavar": "DIR", "help": "output folder"}),
    "runs": (("runs",), {"metavar": "RUN", "nargs": "+",
                         "help": "output folder (or results.json) of a pansharp-eval evaluate run, here or elsewhere"}),
    "table_format": (("--format",), {"dest": "format", "type": _table_formats, "default": list(TABLE_FORMATS),
                                     "help": "comma-separated table files to write: md,tex,csv,html or all (default)"}),
    "protocol": (("--protocol",), {"help": "protocol name (default: dataset.toml's, else toolbox2020)"}),
    "indexes": (("--indexes",), {
        "metavar": "NAMES",
        "help": "comma-separated indexes to report: 'default' is the protocol's table, extras are added by name "
                "(reduced resolution: PSNR, CC, MPSNR, RMSE, SSIM), e.g. default,PSNR,CC (default: dataset.toml's, "
                "else the table)"}),
    "sam_zero_norm": (("--sam-zero-norm",), {
        "choices": ("exclude", "zero", "right_angle", "nan"),
        "help": "SAM's pixels of zero norm, instead of the protocol's convention: left out of the mean (MATLAB "
                "toolboxes), counted as 0 degrees (hyperspectral2024, sentinel2-2025), as 90 degrees, or a NaN "
                "result; recorded in the card"}),
    "per_band": (("--per-band",), {
        "action": "store_true", "default": None,
        "help": "also write OUT/per_band.csv: each index's value per band where it has one (ERGAS's band terms, Q, "
                "CC; at full resolution R-ERGAS and D_rho), one row per scene, method, index and band"}),
    "preset": (("--preset",), {
        "metavar": "NAME",
        "help": "benchmark preset for a PanCollection .h5 (pancollection-wv3, -qb, -gf2, -wv2): fixes sensor, ratio, "
                "bits and protocol as the benchmark's MATLAB code does, resolution from the file's keys; a "
                "contradicting setting is refused (docs/benchmark.md)"}),
    "preset_force": (("--preset-force",), {
        "action": "store_true", "default": None,
        "help": "apply --preset to a file that is not the published test set (another SHA-256 or band count); "
                "the results' card says so"}),
    "result_scale": (("--result-scale",), {
        "help": "scale of the results: dn, unit ([0,1], times 2**bits-1) or a multiplier; required unless "
                "dataset.toml sets result_scale"}),
    # dataset settings (override dataset.toml)
    "sensor": (("--sensor",), {"help": "sensor name from the registry, or 'none' for the generic MTF"}),
    # integers: the package's one rule (validation.check_ratio/check_bits, in load_settings): 4 = 4.0 = "4"
    "ratio": (("--ratio",), {"help": "PAN/MS resolution ratio"}),
    "bits": (("--bits",), {"help": "radiometric resolution of the inputs (bits)"}),
    "resolution": (("--resolution",), {"choices": ("reduced", "full"),
                                       "help": "reduced (with GT) or full resolution"}),
    "input_scale": (("--input-scale",), {"help": "inputs' scale: dn, unit or a multiplier"}),
    "exponents": (("--exponents",), {
        "choices": ("unitary", "sensor-based", "overall"),
        "help": "full resolution: (alpha, beta) of QNR, HQNR and RQNR as the GRSM 2022 code's get_alpha_beta: "
                "unitary (1, 1; default), sensor-based (GeoEye1, IKONOS, WV3 rows; others overall) or overall"}),
    "scale_mismatch": (("--scale-mismatch",), {
        "help": "raise (default) or warn: score results on another scale than their reference (e.g. a bit-depth "
                "factor of 2), recorded in the card"}),
    # what a run writes and how it runs
    "format": (("--format",), {
        "type": parse_formats, "default": list(DEFAULT_FORMATS),
        "help": f"comma-separated outputs among {','.join(ALL_FORMATS)}, or 'all' (default: "
                f"{','.join(DEFAULT_FORMATS)}); html: OUT/report.html, one self-contained page with the tables, "
                "statistics and every method's images"}),
    "jobs": (("--jobs",), {"type": _positive_int, "default": 1,
                           "help": "worker processes (results are identical for any value; default 1)"}),
    "scheduler": (("--scheduler",), {
        "metavar": "ADDRESS",
        "help": "Dask distributed scheduler (e.g. tcp://host:8786): evaluate the scenes on that cluster (needs "
                "the 'scale' extra; workers must see the same files and package version); identical results"}),
    "tiled": (("--tiled",), {
        "choices": ("auto", "always", "never"), "default": "auto",
        "help": "evaluate scenes tile by tile in bounded memory, with identical numbers (auto: when the "
                "in-memory estimate exceeds half the available memory per job, or tile-wise is faster, for "
                "<scene>_gt/_ms/_pan .npy or GeoTIFF files; the terminal says which)"}),
    "resume": (("--resume",), {
        "action": "store_true",
        "help": "reuse (scene, method) results already in OUT for the same inputs and settings"}),
    "force": (("--force",), {"action": "store_true",
                             "help": "replace what earlier runs of this command wrote in OUT (its manifest lists "
                                     "it; nothing else is ever touched)"}),
    "plots": (("--plots",), {
        "action": "store_true",
        "help": "write PNG box plots per index and, at reduced resolution, Q2n/SAM maps per scene (with --per-band: "
                "each index's values against the band, one line per method)"}),
    "maps": (("--maps",), {
        "action": "store_true",
        "help": "write every index's quality map (the reference code's: Q2n and SAM; D_lambda, D_s, D_lambda_K/F "
                "block maps; D_s_R, RQNR, HQNR on the PAN grid) as OUT/maps/<method>/<scene>/<index>.tif, "
                "georeferenced like the scene, and show them as heat maps in report.html"}),
    "figures": (("--figures",), {
        "action": "store_true",
        "help": "write each scene's comparison grid (every method's true-colour image, zoomed crop, residual "
                "maps) as OUT/figures/<scene>.png (300 dpi) and .pdf"}),
    "misregistration": (("--misregistration",), {
        "action": "store_true",
        "help": "full resolution only: evaluate each scene again with the MS shifted by -1, -1/2, +1/2, +1 PAN pixel "
                "along rows and columns and report how far each index and each ranking moves (results.json, md, "
                "html); 9 times the work, in memory, after the evaluation"}),
    "progress": (("--no-progress",), {"dest": "progress", "action": "store_false", "default": None,
                                      "help": "no progress bar (it is shown only on a terminal anyway)"}),
    "methods": (("--methods",), {"help": "comma-separated subset of EXP, BT-H, GSA, MTF-GLP-HPM (default: all)"}),
    "layout": (("--layout",), {
        "choices": ("npy", "npz"), "default": "npy",
        "help": "npy: <scene>_gt/_ms/_pan.npy (read tile-wise when large; default); npz: <scene>.npz"}),
}
_SETTINGS = ("sensor", "ratio", "bits", "resolution", "input_scale", "scale_mismatch")
_FR_SETTINGS = ("exponents",)
_RUN = ("format", "jobs", "resume", "force", "plots", "figures", "progress")
_Entry = str | tuple[str, dict[str, Any]]

#: Each command: its one-line description and its options (a name of :data:`OPTIONS`, or a name
#: with overriding keywords), in the order of its ``--help``.
COMMANDS: dict[str, tuple[str, list[_Entry]]] = {
    "evaluate": (("Evaluate folders of pansharpening results against a dataset: one fixed protocol, every "
                  "index, every scene."), [
        "dataset", "results", ("out", {"help": "output folder (default: ./pansharp-eval-<dataset>/)"}), "protocol",
        "indexes", "result_scale", *_RUN, "maps", "scheduler", "tiled", "misregistration", *_SETTINGS, *_FR_SETTINGS,
        "sam_zero_norm", "per_band", "preset",
        "preset_force"]),
    "demo": (("Run the baselines and the evaluation on the bundled real scene: the solaris tutorial pair "
              "(Apache-2.0) at reduced and full resolution, the tables printed."), [
        ("out", {"help": "output folder (default: ./pansharp-eval-demo/)"}),
        ("format", {"default": list(ALL_FORMATS), "help": "the outputs, as for evaluate (default: all)"}), *_RUN[1:]]),
    "baselines": (("Fuse every scene of a dataset with the classical baselines: the results in the RESULTS "
                   "layout (<out>/<method>/<scene>.npy)."), [
        "dataset", ("out", {"required": True, "help": "folder that receives one subfolder per method"}),
        "methods",
        ("result_scale", {"help": "scale to write the results in (default: dataset.toml's result_scale, else dn)"}),
        ("force", {"help": "replace baseline results an earlier run wrote there (never a file it did not write)"}),
        *_SETTINGS]),
    "degrade": (("Build a reduced-resolution dataset from a full-resolution one with the Wald protocol: the MS "
                 "filtered with the sensor's MTF and decimated by the ratio, the PAN shrunk by the ratio, the original "
                 "MS as the ground truth (the first step of a benchmark on real scenes)."), [
        ("dataset", {"metavar": "FULL_DATASET"}),
        ("out", {"required": True, "help": "new folder for the reduced-resolution dataset (never overwritten)"}),
        "layout", *_SETTINGS]),
    "table": (("Merge the results.json of several evaluate runs (reduced and full resolution, or runs made "
               "elsewhere on the same data) into one paper table: mean ± std, best in bold, ranks."), [
        "runs", ("out", {"required": True, "help": "output folder of table.md, table.tex, table.csv, table.html"}),
        "table_format", ("force", {"help": "replace the tables an earlier run of this command wrote in OUT"})]),
}

_EPILOG = """\
exit status: 0 all done, 1 some (scene, method) pairs failed (see the report), 2 usage error or a
file operation the system refused (one line on stderr). Documentation: docs/cli.md
"""


def _version() -> str:
    from pansharp_iqa import __version__

    return __version__


def _add_options(parser: argparse.ArgumentParser, entries: list[_Entry]) -> None:
    names = [e if isinstance(e, str) else e[0] for e in entries]
    settings = parser.add_argument_group("dataset settings (override dataset.toml)")
    exclusive = parser.add_mutually_exclusive_group() if {"resume", "force"} <= set(names) else parser
    for entry in entries:
        name, override = (entry, {}) if isinstance(entry, str) else entry
        flags, keywords = OPTIONS[name]
        group = name in (*_SETTINGS, *_FR_SETTINGS)
        where = settings if group else exclusive if name in ("resume", "force") else parser
        where.add_argument(*flags, **{**keywords, **override})


def build_parser() -> ArgumentParser:
    """The parser of ``pansharp-eval COMMAND ...`` (``evaluate``, ``demo``, ``baselines``, ``degrade``)."""
    parser = ArgumentParser(prog="pansharp-eval", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                            description="Pansharpening quality indexes, computed exactly as the reference "
                                        "toolbox does, on folders of results.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (description, entries) in COMMANDS.items():
        _add_options(commands.add_parser(name, help=description.split(":")[0], description=description), entries)
    return parser

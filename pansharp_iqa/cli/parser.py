"""Argument parsers of ``pansharp-eval`` (evaluate is the default form; ``demo`` and
``baselines`` are subcommands)."""

from __future__ import annotations

import argparse

__all__ = [
    "ALL_FORMATS", "DEFAULT_FORMATS", "build_baselines_parser", "build_degrade_parser", "build_demo_parser",
    "build_evaluate_parser",
    "parse_formats",
]

ALL_FORMATS = ("table", "csv", "json", "md", "tex", "html")
#: Written when --format is not given (html, with its images, only on request or with 'all').
DEFAULT_FORMATS = ("table", "csv", "json", "md", "tex")

_EPILOG = """\
other commands:
  pansharp-eval demo [--out DIR]              run everything on the bundled demo scene
  pansharp-eval baselines DATASET --out DIR   write EXP, BT-H, GSA, MTF-GLP-HPM results
  pansharp-eval degrade FULL --out REDUCED    Wald protocol: a reduced-resolution dataset from full-resolution scenes

exit status: 0 all evaluated, 1 some (scene, method) pairs failed (see the report), 2 usage error.
A dataset folder literally named 'demo', 'baselines' or 'degrade' must be written ./demo.
Documentation: docs/cli.md
"""


def _version() -> str:
    try:
        from pansharp_iqa import __version__

        return __version__
    except Exception:  # noqa: BLE001
        return "unknown"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def parse_formats(text: str) -> list[str]:
    """Split ``--format`` (comma-separated; ``all`` for every format).

    Raises
    ------
    argparse.ArgumentTypeError
        On an unknown format.
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


def _add_settings_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("dataset settings (override dataset.toml)")
    group.add_argument("--sensor", help="sensor name from the registry, or 'none' for the generic MTF")
    # integers: the package's one rule (validation.check_ratio/check_bits, in load_settings): 4 = 4.0 = "4"
    group.add_argument("--ratio", help="PAN/MS resolution ratio")
    group.add_argument("--bits", help="radiometric resolution of the inputs (bits)")
    group.add_argument("--resolution", choices=("reduced", "full"), help="reduced (with GT) or full resolution")
    group.add_argument("--input-scale", dest="input_scale", help="inputs' scale: dn, unit or a multiplier")
    group.add_argument("--scale-mismatch", dest="scale_mismatch", help="raise (default) or warn: score results on "
                       "another scale than their reference (e.g. a bit-depth factor of 2), recorded in the card")


def _add_run_flags(parser: argparse.ArgumentParser, *, default_out: str,
                   default_formats: tuple[str, ...] = DEFAULT_FORMATS) -> None:
    parser.add_argument("--out", help=f"output folder (default: {default_out})")
    parser.add_argument("--format", type=parse_formats, default=list(default_formats),
                        help=f"comma-separated outputs among {','.join(ALL_FORMATS)}, or 'all' "
                             f"(default: {','.join(default_formats)}); html: OUT/report.html, one self-contained "
                             "page with the tables, statistics and every method's images")
    parser.add_argument("--jobs", type=_positive_int, default=1,
                        help="worker processes (results are identical for any value; default 1)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="Dask distributed scheduler (e.g. tcp://host:8786): evaluate the scenes on that "
                             "cluster (needs the 'scale' extra; workers must see the same files and package "
                             "version); results are identical to a local run")
    parser.add_argument("--tiled", choices=("auto", "always", "never"), default="auto",
                        help="evaluate scenes tile by tile in bounded memory, with identical numbers (auto: when "
                             "the in-memory estimate exceeds half the available memory per job, or tile-wise is "
                             "faster, for <scene>_gt/_ms/_pan .npy or GeoTIFF files; the terminal says which)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true",
                      help="reuse (scene, method) results already in OUT for the same inputs and settings")
    mode.add_argument("--force", action="store_true", help="overwrite previous outputs in OUT")
    parser.add_argument("--plots", action="store_true",
                        help="write PNG box plots per index and, at reduced resolution, Q2n/SAM maps per scene")
    parser.add_argument("--figures", action="store_true",
                        help="write each scene's comparison grid (every method's true-colour image, zoomed crop, "
                             "residual maps) as OUT/figures/<scene>.png (300 dpi) and .pdf")
    parser.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                        help="no progress bar (it is shown only on a terminal anyway)")


def build_evaluate_parser() -> argparse.ArgumentParser:
    """``pansharp-eval DATASET RESULTS... [options]``."""
    parser = argparse.ArgumentParser(
        prog="pansharp-eval",
        description="Evaluate folders of pansharpening results against a dataset with one fixed protocol.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", metavar="DATASET",
                        help="folder with dataset.toml and one input per scene, or a PanCollection .h5")
    parser.add_argument("results", metavar="RESULTS", nargs="+",
                        help="one folder per method holding <scene>.{mat,tif,npy,npz,h5}")
    parser.add_argument("--protocol", help="protocol name (default: dataset.toml's, else toolbox2020)")
    parser.add_argument("--result-scale", dest="result_scale",
                        help="scale of the results: dn, unit ([0,1], times 2**bits-1) or a multiplier; "
                             "required unless dataset.toml sets result_scale")
    _add_settings_flags(parser)
    _add_run_flags(parser, default_out="./pansharp-eval-<dataset>/")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    return parser


def build_demo_parser() -> argparse.ArgumentParser:
    """``pansharp-eval demo [options]``."""
    description = ("Run the baselines and the evaluation on the bundled real scene (solaris tutorial pair, "
                   "Apache-2.0) at reduced and full resolution, and print the tables.")
    parser = argparse.ArgumentParser(prog="pansharp-eval demo", description=description)
    _add_run_flags(parser, default_out="./pansharp-eval-demo/", default_formats=ALL_FORMATS)
    return parser


def build_baselines_parser() -> argparse.ArgumentParser:
    """``pansharp-eval baselines DATASET --out DIR [options]``."""
    from pansharp_iqa.baselines import list_baselines

    parser = argparse.ArgumentParser(
        prog="pansharp-eval baselines",
        description="Fuse every scene of a dataset with the classical baselines and write the "
                    "results in the RESULTS layout (<out>/<method>/<scene>.npy).",
    )
    parser.add_argument("dataset", metavar="DATASET", help="dataset folder or PanCollection .h5")
    parser.add_argument("--out", required=True, help="folder that receives one subfolder per method")
    parser.add_argument("--methods", default=",".join(list_baselines()),
                        help=f"comma-separated subset of {','.join(list_baselines())} (default: all)")
    parser.add_argument("--result-scale", dest="result_scale",
                        help="scale to write the results in (default: dataset.toml's result_scale, else dn)")
    parser.add_argument("--force", action="store_true", help="overwrite existing result files")
    _add_settings_flags(parser)
    return parser


def build_degrade_parser() -> argparse.ArgumentParser:
    """``pansharp-eval degrade FULL_DATASET --out REDUCED_DATASET [options]``."""
    parser = argparse.ArgumentParser(
        prog="pansharp-eval degrade",
        description="Build a reduced-resolution dataset from a full-resolution one with the Wald protocol "
                    "(MS filtered with the sensor's MTF and decimated by the ratio, PAN shrunk by the ratio; "
                    "the original MS is the ground truth): the first step of a benchmark on real scenes.",
    )
    parser.add_argument("dataset", metavar="FULL_DATASET", help="full-resolution dataset folder or PanCollection .h5")
    parser.add_argument("--out", required=True, help="new folder for the reduced-resolution dataset (never overwritten)")
    parser.add_argument("--layout", choices=("npy", "npz"), default="npy",
                        help="npy: <scene>_gt/_ms/_pan.npy (read tile-wise when large; default); npz: <scene>.npz")
    _add_settings_flags(parser)
    return parser

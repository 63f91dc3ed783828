"""Entry point of ``pansharp-eval``.

Commands::

    pansharp-eval evaluate DATASET RESULTS... [options]   the evaluation
    pansharp-eval demo [options]                          bundled demo, reduced + full resolution
    pansharp-eval baselines DATASET --out DIR             classical baselines in the RESULTS layout
    pansharp-eval degrade FULL --out REDUCED              Wald protocol: reduced-resolution dataset
    pansharp-eval table RUN... --out DIR                  one paper table from several runs
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence

from .errors import EXIT_USAGE, UsageError

__all__ = ["main"]

#: The function that runs each command, ``run(namespace, argv) -> exit status``.
_RUNNERS = {
    "evaluate": "evaluate_command:run_evaluate",
    "demo": "demo_command:run_demo",
    "baselines": "baselines_command:run_baselines",
    "degrade": "degrade_command:run_degrade",
    "table": "table_command:run_table",
}


def _dispatch(argv: list[str]) -> int:
    from .parser import build_parser

    if argv and not argv[0].startswith("-") and argv[0] not in _RUNNERS:
        raise UsageError(f"{argv[0]!r} is not a command ({', '.join(_RUNNERS)}); to evaluate a dataset, write "
                         f"pansharp-eval evaluate {argv[0]} RESULTS... (see pansharp-eval --help)")
    ns = build_parser().parse_args(argv)
    module, function = _RUNNERS[ns.command].split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)(ns, argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pansharp-eval``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # a scene named 'scène' prints on an ASCII-only terminal too
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    from pansharp_iqa.allocator import keep_freed_memory

    keep_freed_memory()  # a command-line process: reuse freed buffers (see pansharp_iqa.allocator)
    # GDAL's note that a plain TIFF has no georeference says nothing here (grids are compared from the tags): one
    # line per failure on stderr, not a library's warning beside it
    warnings.filterwarnings("ignore", message="Dataset has no geotransform")
    warnings.filterwarnings("ignore", message=".*identity matrix.*")
    try:
        return _dispatch(argv)
    except UsageError as exc:
        print(f"pansharp-eval: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # the system refused a file operation (no space, no rights, ...): its reason and path
        paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
        where = f" ({' -> '.join(paths)})" if paths else ""
        print(f"pansharp-eval: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # argparse: --help or --version
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("pansharp-eval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""Entry point of ``pansharp-eval``.

Forms::

    pansharp-eval DATASET RESULTS... [options]     evaluate (also: pansharp-eval evaluate ...)
    pansharp-eval demo [options]                   bundled demo, reduced + full resolution
    pansharp-eval baselines DATASET --out DIR      classical baselines in the RESULTS layout
    pansharp-eval degrade FULL --out REDUCED       Wald protocol: reduced-resolution dataset
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .errors import EXIT_USAGE, UsageError

__all__ = ["main"]


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "demo":
        from .demo_command import run_demo
        from .parser import build_demo_parser

        return run_demo(build_demo_parser().parse_args(argv[1:]), argv)
    if argv and argv[0] == "baselines":
        from .baselines_command import run_baselines
        from .parser import build_baselines_parser

        return run_baselines(build_baselines_parser().parse_args(argv[1:]), argv)
    if argv and argv[0] == "degrade":
        from .degrade_command import run_degrade
        from .parser import build_degrade_parser

        return run_degrade(build_degrade_parser().parse_args(argv[1:]), argv)
    from .evaluate_command import run_evaluate
    from .parser import build_evaluate_parser

    args = argv[1:] if argv and argv[0] == "evaluate" else argv
    return run_evaluate(build_evaluate_parser().parse_args(args), argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pansharp-eval``.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 success, 1 some evaluations failed (each reported with its reason),
        2 usage error (bad arguments or dataset settings, an output location that cannot be
        created, or a file operation the system refused; one line on stderr).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    from pansharp_iqa.allocator import keep_freed_memory

    keep_freed_memory()  # a command-line process: reuse freed buffers (see pansharp_iqa.allocator)
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
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except KeyboardInterrupt:
        print("pansharp-eval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""Exit statuses and the usage-error exception of ``pansharp-eval``."""

from __future__ import annotations

__all__ = ["EXIT_FAILURES", "EXIT_OK", "EXIT_USAGE", "UsageError"]

EXIT_OK = 0
#: Some (scene, method) pairs failed; the others were evaluated and reported.
EXIT_FAILURES = 1
#: Bad command line or dataset settings; nothing was evaluated.
EXIT_USAGE = 2


class UsageError(Exception):
    """A usage error: printed as ``pansharp-eval: error: <message>``, exit status 2."""

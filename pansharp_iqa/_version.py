"""Version of pansharp_iqa: the one source (``pyproject.toml`` reads it, ``pansharp-eval --version``
and every provenance card show it)."""

__version__ = "0.1.0"

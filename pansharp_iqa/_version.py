"""Installed version of pansharp_iqa."""

from importlib import metadata

try:
    __version__ = metadata.version("pansharp_iqa")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

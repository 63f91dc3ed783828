"""Bundled demo scene (CosmiQ solaris tutorial pair; see ``NOTICE``).

Files: ``solaris_ms.tif`` (144 x 144 x 4 uint16, 2 m), ``solaris_pan.tif`` (576 x 576 uint16,
0.5 m) and ``dataset.toml`` (generic sensor ``"none"``, ratio 4, 11 bits, full resolution).
"""

from __future__ import annotations

import sys
from importlib import resources
from typing import Any

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["load_demo", "demo_settings", "DEMO_SCENE"]

#: Scene name of the bundled pair.
DEMO_SCENE = "solaris"


def demo_settings() -> dict[str, Any]:
    """The bundled ``dataset.toml`` as a dict."""
    return tomllib.loads(resources.files(__name__).joinpath("dataset.toml").read_text(encoding="utf-8"))


def load_demo() -> tuple[np.ndarray, np.ndarray]:
    """Load the bundled MS/PAN pair.

    Returns
    -------
    ms : numpy.ndarray
        ``(144, 144, 4)`` uint16, digital numbers (11-bit), 2 m.
    pan : numpy.ndarray
        ``(576, 576)`` uint16, digital numbers (11-bit), 0.5 m.
    """
    import tifffile

    base = resources.files(__name__)
    with resources.as_file(base.joinpath(f"{DEMO_SCENE}_ms.tif")) as p:
        ms = tifffile.imread(p)
    with resources.as_file(base.joinpath(f"{DEMO_SCENE}_pan.tif")) as p:
        pan = tifffile.imread(p)
    return np.asarray(ms), np.asarray(pan)

"""SHA-256 of files (bottom floor): the inputs recorded in every result, a preset's published test files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["sha256_file"]

_CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 digest of a file's bytes.

    Parameters
    ----------
    path : path-like
        File to hash.

    Returns
    -------
    str
        64 lowercase hexadecimal characters (FIPS 180-4 SHA-256).
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()

"""Exceptions of the I/O layer, in the package's one family (:mod:`pansharp_iqa.validation`).

:class:`DatasetConfigError` (a dataset's settings are missing or inconsistent: a usage error) and
:class:`DataError` (one scene's files cannot be used: that scene's failure) are
:class:`~pansharp_iqa.validation.InputError` subclasses defined with every other rule in
:mod:`pansharp_iqa.validation`; they are re-exported here for the I/O modules. The window readers
(:mod:`.windows`) add :class:`SceneReadError`, a :class:`DataError`, and :class:`NotWindowed`,
which is no error of the data: such a file is read whole instead.
"""

from __future__ import annotations

from ..validation import DataError, DatasetConfigError

__all__ = ["DataError", "NotWindowed", "SceneReadError", "DatasetConfigError"]


class SceneReadError(DataError):
    """A scene's file cannot be read (corrupt, truncated, missing, unsupported layout).

    Subclass of :class:`DataError`, so ``pansharp-eval`` reports it as that scene's failure and
    goes on with the other scenes. The message names the file, the window being read and the
    underlying GDAL/OS error.
    """


class NotWindowed(Exception):
    """The file cannot be read window by window (its reason is the message); read it whole."""

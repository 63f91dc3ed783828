"""Exceptions of the I/O layer: the package's one family (:mod:`pansharp_iqa.validation`).

:class:`SettingsError` (a dataset's settings are missing or inconsistent: a usage error) and
:class:`DataError` (one scene's files cannot be used: that scene's failure) are
:class:`~pansharp_iqa.validation.InputError` subclasses defined with every other rule in
:mod:`pansharp_iqa.validation`; they are re-exported here for the I/O modules.
"""

from __future__ import annotations

from ..validation import DataError, SettingsError

__all__ = ["DataError", "SettingsError"]

"""Exceptions of the I/O layer."""

from __future__ import annotations

__all__ = ["DataError", "SettingsError"]


class SettingsError(ValueError):
    """The dataset's settings are missing or inconsistent (a usage error: exit status 2)."""


class DataError(ValueError):
    """One scene's files cannot be used (unreadable, wrong shape, NaNs, contradicting scale).

    The message is the reason reported for that scene; the other scenes are still evaluated.
    """

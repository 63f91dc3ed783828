"""CI runs the suite against the installed (non-editable) package, with its data files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pansharp_iqa as pi


def test_runs_against_installed_package_in_ci():
    if not os.environ.get("PANSHARP_EXPECT_INSTALLED"):
        pytest.skip("only meaningful in CI, where the package is installed non-editable")
    assert "site-packages" in Path(pi.__file__).resolve().parts
    assert "WV2" in pi.list_sensors()  # the sensor files came with the wheel

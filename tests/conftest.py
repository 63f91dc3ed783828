"""Suite-wide settings: what is checked once elsewhere is not repeated here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Tests that build a wheel of the checkout: skipped when the suite runs against an installed
#: (non-editable) package, which was built from it: README's test command, and CI, which builds
#: the wheel once and checks its modules and data files from a fresh venv (.ci/smoke_installed.py).
BUILDS_THE_WHEEL = ("tests/spec/test_spec_sensors.py::test_non_editable_wheel_ships_sensor_files",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import pansharp_iqa

    installed = "site-packages" in Path(pansharp_iqa.__file__).resolve().parts
    if not (installed or os.environ.get("PANSHARP_EXPECT_INSTALLED")):
        return
    skip = pytest.mark.skip(reason="runs against an installed package, built from this checkout "
                                   "(CI builds and checks the wheel once: .ci/run)")
    for item in items:
        if item.nodeid in BUILDS_THE_WHEEL:
            item.add_marker(skip)

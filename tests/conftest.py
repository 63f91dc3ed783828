"""Suite-wide settings: what CI (``.ci/run``) checks once elsewhere is not repeated here."""

from __future__ import annotations

import os

import pytest

#: Tests that build the wheel: CI builds it once (``python -m build``) and checks its modules and
#: data files from a fresh venv (``.ci/smoke_installed.py``), and runs this suite against the
#: installed package (``PANSHARP_EXPECT_INSTALLED=1``, tests/architecture/test_install.py).
BUILDS_THE_WHEEL = ("tests/spec/test_spec_sensors.py::test_non_editable_wheel_ships_sensor_files",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not os.environ.get("PANSHARP_EXPECT_INSTALLED"):
        return
    skip = pytest.mark.skip(reason="CI builds the wheel once and checks it (.ci/run, .ci/smoke_installed.py)")
    for item in items:
        if item.nodeid in BUILDS_THE_WHEEL:
            item.add_marker(skip)

"""Fixtures for the independent spec tests (tests/spec); helpers live in spec_helpers.py."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


@pytest.fixture(scope="session")
def piq():
    return pytest.importorskip("pansharp_iqa")

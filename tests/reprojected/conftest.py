"""Fixtures for the reprojected-protocol tests (Scarpa & Ciotola, Remote Sensing 14:1808, 2022)."""

from __future__ import annotations

import numpy as np
import pytest

from reproj_helpers import load_mat


@pytest.fixture(scope="session")
def wv2_scene() -> tuple[np.ndarray, np.ndarray]:
    d = load_mat("imgWV2.mat")
    return d["I_MS"].astype(np.float64), d["I_PAN"].astype(np.float64)


@pytest.fixture(scope="session")
def ik_scene() -> tuple[np.ndarray, np.ndarray]:
    d = load_mat("imgIK.mat")
    return d["I_MS"].astype(np.float64), d["I_PAN"].astype(np.float64)


@pytest.fixture(scope="session")
def wv3_scene() -> tuple[np.ndarray, np.ndarray]:
    d = load_mat("WV3_example.mat")
    return d["I_MS_LR"].astype(np.float64), d["I_PAN"].astype(np.float64)

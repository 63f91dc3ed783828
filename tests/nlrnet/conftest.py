"""Fixtures of the NLRNet tests: CPU ISA work-around, shared real data, tiny synthetic h5 sets."""

from __future__ import annotations

import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore is imported

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nlrnet_helpers import shared_data_dir, synthetic_arrays, write_h5  # noqa: E402


@pytest.fixture(scope="session")
def wv2_mat() -> Path:
    path = shared_data_dir() / "imgWV2.mat"
    if not path.is_file():
        pytest.skip(f"real data not available ({path})")
    return path


@pytest.fixture
def tiny_h5(tmp_path: Path) -> Path:
    gt, lms, pan = synthetic_arrays(8, 32)
    return write_h5(tmp_path / "tiny.h5", gt, lms, pan)


@pytest.fixture
def tiny_val_h5(tmp_path: Path) -> Path:
    gt, lms, pan = synthetic_arrays(2, 80, seed=5)
    return write_h5(tmp_path / "val.h5", gt, lms, pan)

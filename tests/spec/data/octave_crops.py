"""Real-data crops of the Octave fixture: where they are cut and how their fused images are made.

Shared by ``make_octave_fixtures.py`` (which ran the toolbox on them) and
``tests/spec/test_spec_octave_fixtures.py`` (which rebuilds them from ``../shared/data`` at run time and
checks their SHA-256 against the fixture). The crops are never stored in the repository (GRIP-UNINA
licence). Every recipe is element-wise IEEE arithmetic on integer DN (no reductions, no RNG), so the
bytes are the same on every platform and numpy version.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

#: scene -> (file, MS variable, PAN variable, sensor)
SCENES = {
    "wv2": ("imgWV2.mat", "I_MS", "I_PAN", "WV2"),
    "ik": ("imgIK.mat", "I_MS", "I_PAN", "IKONOS"),
    "wv3": ("WV3_example.mat", "I_MS_LR", "I_PAN", "WV3"),
}
#: reduced-resolution crops: case -> (scene, first MS row, first MS column, side); GT = the MS crop
RR_CROPS = {"wv2_rr": ("wv2", 96, 160, 128), "ik_rr": ("ik", 160, 40, 128), "wv3_rr": ("wv3", 0, 0, 32)}
#: full-resolution crops: case -> (scene, first MS row, first MS column, MS side); PAN 4x
FR_CROPS = {"wv2_fr": ("wv2", 8, 200, 32), "ik_fr": ("ik", 120, 250, 32), "wv3_fr": ("wv3", 0, 0, 32)}
RATIO = 4


def load_scene(data_dir: Path, scene: str) -> tuple[np.ndarray, np.ndarray, str]:
    """(MS, PAN, sensor) of one shared scene as float64."""
    import scipy.io

    name, ms_key, pan_key, sensor = SCENES[scene]
    d = scipy.io.loadmat(str(Path(data_dir) / name))
    return d[ms_key].astype(np.float64), d[pan_key].astype(np.float64), sensor


def crop(ms: np.ndarray, pan: np.ndarray, r0: int, c0: int, side: int) -> tuple[np.ndarray, np.ndarray]:
    """MS crop ``side`` x ``side`` at (r0, c0) and the PAN crop it covers (RATIO times larger)."""
    m = np.ascontiguousarray(ms[r0:r0 + side, c0:c0 + side, :])
    p = np.ascontiguousarray(pan[RATIO * r0:RATIO * (r0 + side), RATIO * c0:RATIO * (c0 + side)])
    assert m.shape[:2] == (side, side) and p.shape == (RATIO * side, RATIO * side)
    return m, p


def rr_fused(gt: np.ndarray) -> np.ndarray:
    """A fused image for the RR indexes: a shifted 3-tap blur with per-band gain and offset, rounded."""
    b = np.arange(gt.shape[2], dtype=np.float64)
    blur = 0.5 * gt + 0.25 * np.roll(gt, 1, axis=0) + 0.25 * np.roll(gt, -2, axis=1)
    return np.round(blur * (1.0 + 0.02 * (b - 2.0)) + 3.0 * b)


def fr_fused(ms: np.ndarray, pan: np.ndarray) -> np.ndarray:
    """A fused image for the FR indexes: replicated MS plus a per-band share of the PAN, rounded."""
    up = np.repeat(np.repeat(ms, RATIO, axis=0), RATIO, axis=1)
    b = np.arange(ms.shape[2], dtype=np.float64)
    return np.round(0.6 * up + (0.25 + 0.05 * b) * pan[:, :, None])


def sha256(a: np.ndarray) -> str:
    """SHA-256 of an array's float64 little-endian C-order bytes, prefixed by its shape."""
    a = np.ascontiguousarray(a, dtype="<f8")
    return hashlib.sha256(repr(a.shape).encode() + a.tobytes()).hexdigest()


def rr_inputs(data_dir: Path, case: str) -> dict[str, np.ndarray | str]:
    """GT, PAN crop and fused image of one RR crop case."""
    scene, r0, c0, side = RR_CROPS[case]
    ms, pan, sensor = load_scene(data_dir, scene)
    gt, p = crop(ms, pan, r0, c0, side)
    return {"gt": gt, "pan": p, "fu": rr_fused(gt), "sensor": sensor}


def fr_inputs(data_dir: Path, case: str) -> dict[str, np.ndarray | str]:
    """MS, PAN and fused image of one FR crop case."""
    scene, r0, c0, side = FR_CROPS[case]
    ms, pan, sensor = load_scene(data_dir, scene)
    m, p = crop(ms, pan, r0, c0, side)
    return {"ms": m, "pan": p, "fu": fr_fused(m, p), "sensor": sensor}

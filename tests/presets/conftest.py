"""PanCollection-shaped .h5 files built in a temporary folder from the real WV2 scene of ../shared/data
(never copied into the repository): a reduced-resolution file (gt/ms/lms/pan, N x C x H x W, Wald
protocol) and a full-resolution one (ms/lms/pan), with each scene's GSA result (H x W x C, DN).
Without the shared data, from a synthetic WorldView-2-like scene (issue 34: the preset tests keep
their coverage; the real scene adds realism)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as pi

SHARED = Path(os.environ.get("PANSHARP_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data"
               ) / "imgWV2.mat"


def _nchw(scenes: list[np.ndarray]) -> np.ndarray:
    return np.stack([s.transpose(2, 0, 1) if s.ndim == 3 else s[None] for s in scenes]).astype(np.float64)


def _synthetic_wv2(seed: int = 3401) -> tuple[np.ndarray, np.ndarray]:
    """MS 128 x 128 x 8 and PAN 512 x 512 (11-bit DN): block means of seeded smooth fields sharing one
    structure at PAN scale, and their band mean plus noise."""
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    common = ndimage.zoom(rng.uniform(0, 1, (32, 32)), 16, order=3)
    hr = np.stack([0.7 * common + 0.3 * ndimage.zoom(rng.uniform(0, 1, (32, 32)), 16, order=3) for _ in range(8)],
                  axis=-1)
    hr = 150 + 1300 * (hr - hr.min()) / (hr.max() - hr.min()) * rng.uniform(0.6, 1.0, 8)
    pan = np.clip(np.round(hr.mean(axis=2) + rng.normal(0, 8, (512, 512))), 0, 2047)
    return np.round(hr.reshape(128, 4, 128, 4, 8).mean(axis=(1, 3))), pan


def _write(path: Path, **arrays: list[np.ndarray]) -> Path:
    import h5py

    with h5py.File(path, "w") as f:
        for key, scenes in arrays.items():
            f.create_dataset(key, data=_nchw(scenes))
    return path


@pytest.fixture(scope="session")
def pancollection(tmp_path_factory):
    """Reduced (4 scenes: gt 64x64x8, ms 16x16, pan 64x64) and full (2 scenes: ms 32x32x8, pan 128x128)
    files named as the published WV2 test files, plus the GSA results per scene."""
    from pansharp_iqa.baselines import gsa

    if SHARED.is_file():
        from scipy.io import loadmat

        mat = loadmat(SHARED)
        ms, pan = mat["I_MS"][:128, :128].astype(np.float64), mat["I_PAN"][:512, :512].astype(np.float64)
    else:
        ms, pan = _synthetic_wv2()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "WV2", ratio=4)  # ms_lr 32x32, pan_lr 128x128, gt = ms
    tiles = [(r, c) for r in (0, 64) for c in (0, 64)]
    gt = [ms[r:r + 64, c:c + 64] for r, c in tiles]
    ms_rr = [ms_lr[r // 4:r // 4 + 16, c // 4:c // 4 + 16] for r, c in tiles]
    pan_rr = [pan_lr[r:r + 64, c:c + 64] for r, c in tiles]
    lms_rr = [pi.interp23tap(m, 4) for m in ms_rr]
    out = tmp_path_factory.mktemp("pancollection")
    reduced = _write(out / "test_wv2_multiExm1.h5", gt=gt, ms=ms_rr, lms=lms_rr, pan=pan_rr)
    ms_fr = [ms[:32, :32], ms[32:64, :32]]
    pan_fr = [pan[:128, :128], pan[128:256, :128]]
    lms_fr = [pi.interp23tap(m, 4) for m in ms_fr]
    full = _write(out / "test_wv2_OrigScale_multiExm1.h5", ms=ms_fr, lms=lms_fr, pan=pan_fr)
    return {
        "reduced": reduced, "full": full, "write": _write,
        "gt": gt, "ms_rr": ms_rr, "pan_rr": pan_rr,
        "sr_rr": [gsa(m, p, ratio=4) for m, p in zip(ms_rr, pan_rr, strict=True)],
        "ms_fr": ms_fr, "pan_fr": pan_fr, "lms_fr": lms_fr,
        "sr_fr": [gsa(m, p, ratio=4) for m, p in zip(ms_fr, pan_fr, strict=True)],
        "ms4": [m[..., [1, 2, 4, 6]] for m in ms_fr],
    }

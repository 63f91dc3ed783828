"""PanCollection-shaped ``.h5`` test sets built in a temporary folder from the real GRIP WorldView-2
scene (``../shared/data/imgWV2.mat``, never copied into the repository): Wald-degraded crops."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cli_helpers import shared_data_dir

RATIO, BITS, PEAK = 4, 11, 2047


def wv2_crops(n: int, size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` MS crops ``size x size x 8`` and their PAN crops (DN) of imgWV2.mat, or skip the test."""
    import pytest
    import scipy.io

    folder = shared_data_dir()
    if folder is None:
        pytest.skip("the real scene imgWV2.mat is not available (../shared/data)")
    data = scipy.io.loadmat(folder / "imgWV2.mat")
    ms, pan = np.asarray(data["I_MS"], float), np.asarray(data["I_PAN"], float)
    per_row = ms.shape[0] // size
    crops = []
    for k in range(n):
        r, c = (k // per_row) * size, (k % per_row) * size
        crops.append((ms[r:r + size, c:c + size], pan[RATIO * r:RATIO * (r + size), RATIO * c:RATIO * (c + size)]))
    return crops


def write_h5(path: Path, **arrays: np.ndarray) -> Path:
    import h5py

    with h5py.File(path, "w") as handle:
        for key, value in arrays.items():
            handle.create_dataset(key, data=value)
    return path


def nchw(images: list[np.ndarray]) -> np.ndarray:
    """``H x W x C`` (or ``H x W``) images as one ``N x C x H x W`` stack."""
    return np.stack([np.moveaxis(np.atleast_3d(i), -1, 0) for i in images])


def reduced_h5(folder: Path, n: int = 4, size: int = 96, *, scale: float = 1.0) -> tuple[Path, list[dict]]:
    """``test_wv2_multiExm1.h5`` (gt size x size, ms, lms, pan; stored values = DN x ``scale``)
    and the scenes in DN (``gt``, ``ms``, ``pan``: H x W x C)."""
    from pansharp_iqa import wald_degrade

    scenes = []
    for ms, pan in wv2_crops(n, size):
        ms_lr, pan_lr = wald_degrade(ms, pan, "WV2", RATIO)
        scenes.append({"gt": ms, "ms": ms_lr, "pan": pan_lr})
    lms = [np.repeat(np.repeat(s["ms"], RATIO, 0), RATIO, 1) for s in scenes]
    folder.mkdir(parents=True, exist_ok=True)
    path = write_h5(folder / "test_wv2_multiExm1.h5", gt=nchw([s["gt"] for s in scenes]) * scale,
                    ms=nchw([s["ms"] for s in scenes]) * scale, lms=nchw(lms) * scale,
                    pan=nchw([s["pan"] for s in scenes]) * scale)
    return path, scenes


def full_h5(folder: Path, n: int = 2, size: int = 32) -> tuple[Path, list[dict]]:
    """``test_wv2_OrigScale_multiExm1.h5`` (ms size x size, lms, pan) and the scenes in DN."""
    scenes = [{"ms": ms, "pan": pan} for ms, pan in wv2_crops(n, size)]
    lms = [np.repeat(np.repeat(s["ms"], RATIO, 0), RATIO, 1) for s in scenes]
    folder.mkdir(parents=True, exist_ok=True)
    path = write_h5(folder / "test_wv2_OrigScale_multiExm1.h5", ms=nchw([s["ms"] for s in scenes]), lms=nchw(lms),
                    pan=nchw([s["pan"] for s in scenes]))
    return path, scenes


def write_toml_for(h5: Path, resolution: str, **extra: object) -> None:
    """``dataset.toml`` beside ``h5``: WV2, ratio 4, 11 bits, ``resolution``, and ``extra``."""
    lines = ['sensor = "WV2"', f"ratio = {RATIO}", f"bits = {BITS}", f'resolution = "{resolution}"']
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in extra.items()]
    (h5.parent / "dataset.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_network_results(folder: Path, fused: list[np.ndarray], *, sub: str = "results", scale: float = 1.0) -> Path:
    """``folder/<sub>/output_mulExm_<i>.mat`` with ``sr`` (H x W x C) = ``fused[i] * scale``."""
    import scipy.io

    target = folder / sub if sub else folder
    target.mkdir(parents=True, exist_ok=True)
    for i, image in enumerate(fused):
        scipy.io.savemat(target / f"output_mulExm_{i}.mat", {"sr": image * scale})
    return folder

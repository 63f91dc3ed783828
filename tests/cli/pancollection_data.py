"""PanCollection-shaped ``.h5`` test sets built in a temporary folder from the real GRIP WorldView-2
scene (``../shared/data/imgWV2.mat``, never copied into the repository): Wald-degraded crops. Without
the shared data, the crops are synthetic WorldView-2-like scenes (issue 34: the tests keep their
coverage; the real scene adds realism)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cli_helpers import shared_data_dir

RATIO, BITS, PEAK = 4, 11, 2047


def synthetic_wv2(seed: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """A WorldView-2-like scene: MS ``size x size x 8`` and PAN ``4 size x 4 size`` (11-bit DN, integer), the
    MS the 4 x 4 block means of seeded smooth fields at PAN scale sharing one structure, the PAN their
    band mean plus noise, so the scenes of different seeds differ and a fusion has detail to inject."""
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    big = RATIO * size
    common = ndimage.zoom(rng.uniform(0, 1, (big // 16, big // 16)), 16, order=3)
    hr = np.stack([0.7 * common + 0.3 * ndimage.zoom(rng.uniform(0, 1, (big // 16, big // 16)), 16, order=3)
                   for _ in range(8)], axis=-1)
    hr = 150 + 1300 * (hr - hr.min()) / (hr.max() - hr.min()) * rng.uniform(0.6, 1.0, 8)
    pan = np.clip(np.round(hr.mean(axis=2) + rng.normal(0, 8, (big, big))), 0, 2047)
    ms = np.round(hr.reshape(size, RATIO, size, RATIO, 8).mean(axis=(1, 3)))
    return ms, pan


def wv2_crops(n: int, size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` MS crops ``size x size x 8`` and their PAN crops (DN) of imgWV2.mat, else ``n`` synthetic
    WorldView-2-like scenes (:func:`synthetic_wv2`)."""
    import scipy.io

    folder = shared_data_dir()
    if folder is None:
        return [synthetic_wv2(3400 + k, size) for k in range(n)]
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

"""Fixtures for the ``pansharp-eval`` tests (data helpers in ``cli_helpers``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml


@pytest.fixture
def reduced_dataset(tmp_path: Path) -> tuple[Path, dict[str, dict[str, np.ndarray]]]:
    """Three reduced-resolution scenes as .npz (keys ms, pan, gt), 128 x 128 x 4 at PAN scale."""
    folder = tmp_path / "rr"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    scenes = {}
    for i, name in enumerate(["s1", "s2", "s3"]):
        scenes[name] = make_scene(10 + i)
        np.savez(folder / f"{name}.npz", **scenes[name])
    return folder, scenes


@pytest.fixture
def rr_methods(tmp_path: Path, reduced_dataset) -> dict[str, Path]:
    """Two methods for ``reduced_dataset``: ``good`` (noise 10 DN, .npy) and ``bad`` (80 DN, .mat)."""
    import scipy.io

    _, scenes = reduced_dataset
    out = {}
    for method, sigma in (("good", 10.0), ("bad", 80.0)):
        folder = tmp_path / "res" / method
        folder.mkdir(parents=True)
        for j, (name, sc) in enumerate(scenes.items()):
            fused = noisy(sc["gt"], sigma, 100 + j)
            if method == "good":
                np.save(folder / f"{name}.npy", fused)
            else:
                scipy.io.savemat(folder / f"{name}.mat", {"I_F": fused})
        out[method] = folder
    return out

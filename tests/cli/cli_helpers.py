"""Helpers for the ``pansharp-eval`` tests: small synthetic datasets written on the fly."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
from scipy import ndimage

RATIO = 4
BITS = 11


def make_scene(seed: int, size: int = 128, bands: int = 4) -> dict[str, np.ndarray]:
    """Smooth random 11-bit scene: ``gt`` (size x size x bands), ``ms`` (decimated), ``pan``."""
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(0.0, 1.0, (size // 8, size // 8, bands))
    gt = ndimage.zoom(coarse, (8, 8, 1), order=3) + 0.05 * rng.normal(size=(size, size, bands))
    gt = np.round(200 + 1200 * (gt - gt.min()) / (gt.max() - gt.min()))
    pan = np.clip(np.round(gt.mean(axis=2) + rng.normal(0, 5, (size, size))), 1, 2047)
    ms = gt[RATIO // 2 :: RATIO, RATIO // 2 :: RATIO]
    return {"gt": gt.astype(np.uint16), "ms": ms.astype(np.uint16), "pan": pan.astype(np.uint16)}


def noisy(reference: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """``reference`` plus Gaussian noise of ``sigma`` DN (float64)."""
    return reference.astype(np.float64) + np.random.default_rng(seed).normal(0, sigma, reference.shape)


def write_toml(folder: Path, **settings: object) -> None:
    lines = []
    for k, v in settings.items():
        lines.append(f"{k} = {json.dumps(v)}")
    (folder / "dataset.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def shared_data_dir() -> Path | None:
    """``../shared/data`` relative to the repository root, or ``$PANSHARP_SHARED_DATA`` (the shared
    folder or its ``data`` subfolder); ``None`` when absent."""
    env = os.environ.get("PANSHARP_SHARED_DATA")
    # the variable overrides (PANSHARP_SHARED_DATA=/nonexistent: as if the data were absent)
    default = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    candidates = [Path(env), Path(env) / "data"] if env else [default]
    for c in candidates:
        if (c / "imgWV2.mat").is_file():
            return c.resolve()
    return None


def full_resolution_dataset(tmp_path: Path, seed: int, *, short_pan: str | None = None) -> tuple[Path, Path]:
    """Two full-resolution scenes ``a``, ``b`` (``.npz``, sensor ``none``) and one method ``m``
    (``.npy`` noisy results); ``short_pan`` names a scene whose PAN is cropped to 120 x 120.
    Returns ``(dataset folder, method folder)``."""
    folder, res = tmp_path / "fr", tmp_path / "m"
    folder.mkdir()
    res.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="full", result_scale="dn")
    for i, name in enumerate(["a", "b"]):
        sc = make_scene(seed + i)
        pan = sc["pan"][:120, :120] if name == short_pan else sc["pan"]
        np.savez(folder / f"{name}.npz", ms=sc["ms"], pan=pan)
        np.save(res / f"{name}.npy", noisy(sc["gt"], 5, i))
    return folder, res


def one_error_line(err: str, *needles: object) -> str:
    """The one line of an expected failure (``pansharp-eval: error: ...``, no traceback, no usage
    block), checked to name every needle."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pansharp-eval: error:"), err
    assert all(str(n) in lines[0] for n in needles), (lines[0], needles)
    return lines[0]


def run_cli(*args: object, env: dict[str, str] | None = None, prelude: str = "",
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``pansharp-eval ARGS`` with its exit status, stdout and stderr: in this process (``main``),
    or in a fresh one when ``env`` (e.g. the terminal's encoding) or ``prelude`` (Python run first
    there, e.g. to slow a step down) is given; tests of signals and locks use :func:`cli_command`."""
    if env or prelude:
        return subprocess.run(cli_command(*args, prelude=prelude), capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, timeout=timeout)
    from pansharp_iqa.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(["pansharp-eval", *map(str, args)], code, out.getvalue(), err.getvalue())


def cli_command(*args: object, prelude: str = "") -> list[str]:
    """The command line that runs ``pansharp-eval ARGS`` in a fresh process (see :func:`run_cli`)."""
    import sys

    code = f"{prelude}\nimport sys\nfrom pansharp_iqa.cli.main import main\nsys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", code, *map(str, args)]

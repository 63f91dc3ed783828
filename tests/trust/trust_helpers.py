"""Data and helpers of the trust tests (issue 20): real scenes, their Wald degradation, a CLI runner.

The bundled real scene (SpaceNet/solaris, 11-bit, 4 bands) is always available; the shared
WorldView-2, IKONOS and WV3 scenes are used where present (tests skip cleanly without them).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import gsa
from pansharp_iqa.demo_data import load_demo

HYPOTHESIS = dict(deadline=None, derandomize=True)


@functools.cache
def demo() -> dict[str, np.ndarray]:
    """The bundled scene: full resolution (``ms``, ``pan``, ``fr`` = GSA) and reduced resolution
    (``gt`` = the MS, ``ms_lr``, ``pan_lr``, ``rr`` = GSA of the degraded pair); a small FR crop
    (``ms_s``, ``pan_s``, ``fr_s``) for fast full-resolution evaluations."""
    ms, pan = load_demo()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "none", ratio=4)
    ms_s, pan_s = ms[:32, :32], pan[:128, :128]
    out = {
        "ms": ms, "pan": pan, "fr": gsa(ms, pan, ratio=4),
        "gt": ms.astype(np.float64), "ms_lr": ms_lr, "pan_lr": pan_lr, "rr": gsa(ms_lr, pan_lr, ratio=4),
        "ms_s": ms_s, "pan_s": pan_s, "fr_s": gsa(ms_s, pan_s, ratio=4),
    }
    for a in out.values():
        a.setflags(write=False)
    return out


def shared_data() -> Path | None:
    env = os.environ.get("PANSHARP_SHARED_DATA")
    # the variable overrides (PANSHARP_SHARED_DATA=/nonexistent: as if the data were absent)
    default = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    candidates = [Path(env), Path(env) / "data"] if env else [default]
    return next((c.resolve() for c in candidates if (c / "imgWV2.mat").is_file()), None)


def synthetic_wv2(seed: int = 3430) -> dict[str, Any]:
    """A WorldView-2-like scene: MS 128 x 128 x 8 and PAN 512 x 512 (11-bit DN), the MS the block means of
    seeded smooth fields sharing one structure at PAN scale, the PAN 0.8 times their band mean plus
    noise (PAN/MS about 0.8, as the real crops)."""
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    common = ndimage.zoom(rng.uniform(0, 1, (32, 32)), 16, order=3)
    hr = np.stack([0.7 * common + 0.3 * ndimage.zoom(rng.uniform(0, 1, (32, 32)), 16, order=3) for _ in range(8)],
                  axis=-1)
    hr = 150 + 1300 * (hr - hr.min()) / (hr.max() - hr.min()) * rng.uniform(0.6, 1.0, 8)
    pan = np.clip(np.round(0.8 * hr.mean(axis=2) + rng.normal(0, 8, (512, 512))), 0, 2047)
    return {"ms": np.round(hr.reshape(128, 4, 128, 4, 8).mean(axis=(1, 3))), "pan": pan, "sensor": "WV2"}


@functools.cache
def real_scene(name: str) -> dict[str, Any]:
    """``imgWV2.mat`` / ``imgIK.mat`` / ``WV3_example.mat``: ``ms``, ``pan`` (float64 DN), ``sensor``.
    Without ../shared/data, ``imgWV2.mat`` is :func:`synthetic_wv2` (issue 34: its tests keep their
    coverage) and the others skip (their tests check numbers of those scenes)."""
    folder = shared_data()
    if folder is None and name == "imgWV2.mat":
        return synthetic_wv2()
    if folder is None:
        pytest.skip("the shared real scenes are not present (../shared/data)")
    import scipy.io

    d = scipy.io.loadmat(str(folder / name))
    ms = d["I_MS"] if "I_MS" in d else d["I_MS_LR"]
    sensor = str(np.asarray(d["sensor"]).ravel()[0]).strip() if "sensor" in d else "WV3"
    return {"ms": ms.astype(np.float64), "pan": d["I_PAN"].astype(np.float64), "sensor": sensor}


def values(result: dict[str, Any]) -> dict[str, float]:
    return {k: v for k, v in result.items() if k != "protocol"}


def rr(fused: Any, gt: Any = None, **kw: Any) -> dict[str, Any]:
    return pi.evaluate_reduced(fused, demo()["gt"] if gt is None else gt, ratio=4, bits=11, **kw)


def fr(fused: Any, ms: Any = None, pan: Any = None, **kw: Any) -> dict[str, Any]:
    d = demo()
    kw.setdefault("sensor", "none")
    return pi.evaluate_full(fused, d["ms_s"] if ms is None else ms, d["pan_s"] if pan is None else pan,
                            ratio=4, bits=11, **kw)


def write_toml(folder: Path, **settings: Any) -> None:
    (folder / "dataset.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items()))


def rr_dataset(tmp_path: Path, results: dict[str, np.ndarray], *, gt: np.ndarray | None = None,
               **settings: Any) -> tuple[Path, Path]:
    """A reduced-resolution dataset ``data/s_{gt,ms,pan}.npy`` (the demo's degraded scene) and a
    method folder ``res/m`` holding ``results`` (file name -> array, saved with np.save)."""
    d = demo()
    data, method = tmp_path / "data", tmp_path / "res" / "m"
    data.mkdir(parents=True)
    method.mkdir(parents=True)
    np.save(data / "s_gt.npy", d["ms"] if gt is None else gt)
    np.save(data / "s_ms.npy", d["ms_lr"])
    np.save(data / "s_pan.npy", d["pan_lr"])
    for name, arr in results.items():
        np.save(method / name, arr)
    write_toml(data, **{"sensor": "none", "ratio": 4, "bits": 11, "resolution": "reduced", "result_scale": "dn",
                        **settings})
    return data, method


def fr_dataset(tmp_path: Path, results: dict[str, np.ndarray], *, ms: np.ndarray, pan: np.ndarray,
               **settings: Any) -> tuple[Path, Path]:
    """A full-resolution dataset ``data/s_{ms,pan}.npy`` and a method folder ``res/m``."""
    data, method = tmp_path / "data", tmp_path / "res" / "m"
    data.mkdir(parents=True)
    method.mkdir(parents=True)
    np.save(data / "s_ms.npy", ms)
    np.save(data / "s_pan.npy", pan)
    for name, arr in results.items():
        np.save(method / name, arr)
    write_toml(data, **{"sensor": "none", "ratio": 4, "bits": 11, "resolution": "full", "result_scale": "dn",
                        **settings})
    return data, method


def run_eval(capsys: Any, data: Path, method: Path, out: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    """``pansharp-eval evaluate DATA METHOD --out OUT --format json``: exit code, the pairs of
    ``results.json`` (``{(scene, method): entry}``, empty on a usage error) and stderr."""
    from pansharp_iqa.cli.main import main

    code = main(["evaluate", str(data), str(method), "--out", str(out), "--format", "json", "--no-progress",
                 *map(str, extra)])
    err = capsys.readouterr().err
    doc = out / "results.json"
    pairs = {}
    if doc.is_file():
        scenes = json.loads(doc.read_text())["scenes"]
        pairs = {(s, m): v for s, methods in scenes.items() for m, v in methods.items()}
    return code, pairs, err


def one_line(err: str) -> str:
    """The usage error of a failed run: exactly one line on stderr."""
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]

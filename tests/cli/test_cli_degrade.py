"""``pansharp-eval degrade`` (issue 14, item 6) and ``pansharp-eval baselines`` failures (item 4)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import BITS, RATIO, make_scene, write_toml
from pansharp_iqa.cli.main import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _full_dataset(tmp_path: Path, n: int = 2) -> tuple[Path, dict[str, dict[str, np.ndarray]]]:
    """Full-resolution scenes: native MS 128 x 128 x 4 (11-bit), PAN 512 x 512."""
    folder = tmp_path / "full"
    folder.mkdir()
    write_toml(folder, sensor="QB", ratio=RATIO, bits=BITS, resolution="full", result_scale="dn",
               band_names=["Blue", "Green", "Red", "NIR"])
    scenes = {}
    for i in range(n):
        ms = make_scene(30 + i, size=128)["gt"]
        rng = np.random.default_rng(i)
        pan = np.kron(ms.mean(axis=2), np.ones((RATIO, RATIO))) + rng.normal(0, 4, (128 * RATIO,) * 2)
        scenes[f"sc{i}"] = {"ms": ms, "pan": np.clip(np.round(pan), 0, 2047).astype(np.uint16)}
        np.savez(folder / f"sc{i}.npz", **scenes[f"sc{i}"])
    return folder, scenes


@pytest.mark.parametrize("layout", ["npy", "npz"])
def test_degraded_dataset_evaluates_to_wald_degrade_in_python(tmp_path, capsys, layout):
    import pansharp_iqa as psi
    from pansharp_iqa.baselines import BASELINES

    full, scenes = _full_dataset(tmp_path)
    reduced = tmp_path / "reduced"
    assert main(["degrade", str(full), "--out", str(reduced), "--layout", layout]) == 0
    toml = tomllib.loads((reduced / "dataset.toml").read_text())
    assert {k: toml[k] for k in ("resolution", "sensor", "ratio", "bits", "scale", "band_names")} == {
        "resolution": "reduced", "sensor": "QB", "ratio": RATIO, "bits": BITS, "scale": "dn",
        "band_names": ["Blue", "Green", "Red", "NIR"]}
    methods = tmp_path / "methods"
    assert main(["baselines", str(reduced), "--out", str(methods), "--methods", "EXP,GSA"]) == 0
    assert main(["evaluate", str(reduced), str(methods / "EXP"), str(methods / "GSA"), "--out", str(tmp_path / "ev"),
                 "--format", "json"]) == 0
    doc = json.loads((tmp_path / "ev" / "results.json").read_text())
    for name, sc in scenes.items():
        ms_lr, pan_lr = psi.wald_degrade(sc["ms"].astype(float), sc["pan"].astype(float), "QB", RATIO)
        for method in ("EXP", "GSA"):
            fused = BASELINES[method](ms_lr, pan_lr, sensor="QB", ratio=RATIO)
            expected = psi.evaluate_reduced(fused, sc["ms"].astype(float), ratio=RATIO, bits=BITS)
            got = doc["scenes"][name][method]["metrics"]
            for index in ("Q2n", "Q", "SAM", "ERGAS", "SCC"):
                assert got[index] == pytest.approx(expected[index], rel=1e-12, abs=1e-15), (name, method, index)


def test_degrade_refuses_to_overwrite_and_reduced_input(tmp_path, capsys):
    full, _ = _full_dataset(tmp_path, n=1)
    out = tmp_path / "reduced"
    out.mkdir()
    (out / "mine.txt").write_text("x")
    assert main(["degrade", str(full), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not empty" in err and len(err.strip().splitlines()) == 1
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    assert main(["degrade", str(full), "--out", str(tmp_path / "r2"), "--resolution", "reduced"]) == 2
    assert "full-resolution" in capsys.readouterr().err and not (tmp_path / "r2").exists()


def test_degrade_failing_scene_is_reported(tmp_path, capsys):
    full, _ = _full_dataset(tmp_path, n=1)
    np.savez(full / "odd.npz", ms=np.full((30, 30, 4), 500, np.uint16), pan=np.full((120, 120), 500, np.uint16))
    out = tmp_path / "reduced"
    assert main(["degrade", str(full), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "FAILED odd: " in err and "multiple of ratio" in err
    assert sorted(p.name for p in out.iterdir()) == ["dataset.toml", "sc0_gt.npy", "sc0_ms.npy", "sc0_pan.npy"]


def test_baselines_exit_1_when_every_scene_fails(tmp_path, capsys):
    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="full")  # no result_scale
    for i in range(2):
        np.savez(folder / f"s{i}.npz", ms=np.zeros((4, 4, 4)), pan=np.zeros((16, 16)))
    out = tmp_path / "methods"
    assert main(["baselines", str(folder), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "wrote" not in captured.out
    assert captured.err.count("cannot tell the band axis") == 2 and "no baseline result was written" in captured.err
    assert not out.exists() or not any(out.rglob("*.npy"))


def test_baselines_scale_note_only_when_needed(tmp_path, capsys):
    folder = tmp_path / "ds"
    folder.mkdir()
    np.savez(folder / "s0.npz", **{k: v for k, v in make_scene(3).items() if k != "gt"})
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="full", result_scale="unit")
    assert main(["baselines", str(folder), "--out", str(tmp_path / "a"), "--methods", "EXP"]) == 0
    assert "pansharp-eval: note:" not in capsys.readouterr().out
    assert main(["baselines", str(folder), "--out", str(tmp_path / "b"), "--methods", "EXP",
                 "--result-scale", "dn"]) == 0
    assert "evaluate them with --result-scale dn" in capsys.readouterr().out
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="full")
    assert main(["baselines", str(folder), "--out", str(tmp_path / "c"), "--methods", "EXP"]) == 0
    assert "does not declare result_scale" in capsys.readouterr().out

"""In memory or tile-wise (issue 14, item 5): --tiled auto decides from the estimated in-memory
footprint and the memory available, for .npy, GeoTIFF and .h5 files in any band layout, with the
same numbers and the same checks as the in-memory path, and says which path each scene took."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
import tifffile

from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml
from pansharp_iqa.cli.main import main
from pansharp_iqa.cli.memory_plan import choose_path, estimate_in_memory_bytes
from pansharp_iqa.io.memory import available_memory

LAYOUTS = ["hwb", "bhw", "fortran", "tif", "tif_planar", "h5"]


def _store(path: Path, arr: np.ndarray, layout: str) -> None:
    """``arr`` ((H, W) or (H, W, B)) as ``path`` + suffix in one of the layouts a user may have
    (``h5``: a band-first HDF5 result)."""
    if layout in ("tif", "tif_planar"):
        pytest.importorskip("rasterio")
        planar = layout == "tif_planar" and arr.ndim == 3
        tifffile.imwrite(path.with_suffix(".tif"), np.moveaxis(arr, -1, 0) if planar else arr,
                         photometric="minisblack", planarconfig="separate" if planar else "contig")
    elif layout == "h5":
        with h5py.File(path.with_suffix(".h5"), "w") as handle:
            handle["sr"] = np.moveaxis(arr, -1, 0)  # results may be stored band-first
    elif layout == "bhw":
        np.save(path.with_suffix(".npy"), np.moveaxis(arr, -1, 0) if arr.ndim == 3 else arr[None])
    elif layout == "fortran":
        np.save(path.with_suffix(".npy"), np.asfortranarray(arr))
    else:
        np.save(path.with_suffix(".npy"), arr)


def _dataset(tmp_path: Path, resolution: str, layouts=LAYOUTS, result_scale: str = "unit") -> tuple[Path, Path]:
    folder = tmp_path / resolution
    folder.mkdir()
    write_toml(folder, sensor="QB", ratio=RATIO, bits=BITS, resolution=resolution, result_scale=result_scale)
    res = tmp_path / f"res_{resolution}" / "m"
    res.mkdir(parents=True)
    for i, layout in enumerate(layouts):
        sc = make_scene(90 + i, size=96)
        roles = {"gt": sc["gt"]} if resolution == "reduced" else {"ms": sc["ms"], "pan": sc["pan"]}
        for role, arr in roles.items():
            _store(folder / f"{layout}_{role}", arr, layout if layout != "h5" else "hwb")  # no split .h5 inputs
        fused = noisy(sc["gt"], 9.0, i) / ((2**BITS - 1) if result_scale == "unit" else 1)
        _store(res / layout, fused.astype(np.float32) if layout == "bhw" else fused, layout)
    return folder, res


def _cards(out: Path) -> dict:
    doc = json.loads((out / "results.json").read_text())
    return {(s, m): v for s, methods in doc["scenes"].items() for m, v in methods.items()}


@pytest.mark.parametrize("resolution", ["reduced", "full"])
def test_tile_wise_reads_every_layout_with_the_in_memory_numbers(tmp_path, resolution):
    folder, res = _dataset(tmp_path, resolution)
    for mode in ("never", "always"):
        assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / mode), "--format", "json",
                     "--tiled", mode]) == 0
    mem, tiled = _cards(tmp_path / "never"), _cards(tmp_path / "always")
    assert len(mem) == len(LAYOUTS)
    for key, entry in mem.items():
        assert entry["protocol"]["evaluation_path"] == "in-memory"
        assert tiled[key]["status"] == "ok", tiled[key]
        assert tiled[key]["protocol"]["evaluation_path"] == "tile-wise" and "tiling" in tiled[key]["protocol"]
        for name, value in entry["metrics"].items():
            assert tiled[key]["metrics"][name] == pytest.approx(value, rel=1e-9, abs=1e-12), (key, name)


def test_auto_goes_tile_wise_when_memory_is_short_and_says_so(tmp_path, capsys, monkeypatch):
    import pansharp_iqa.cli.scene_eval as scene_eval

    folder, res = _dataset(tmp_path, "reduced", layouts=["hwb", "bhw"])
    np.savez(folder / "z.npz", gt=make_scene(99, size=96)["gt"])  # read whole: stays in memory
    np.save(res / "z.npy", noisy(make_scene(99, size=96)["gt"], 9.0, 0) / (2**BITS - 1))
    estimate = estimate_in_memory_bytes("reduced", 96, 96, 4)
    monkeypatch.setattr(scene_eval, "available_memory", lambda: estimate)  # budget: half of it
    assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / "low"), "--format", "table,json"]) == 0
    out = capsys.readouterr().out
    cards = _cards(tmp_path / "low")
    assert {s: c["protocol"]["evaluation_path"] for (s, _), c in cards.items()} == {
        "bhw": "tile-wise", "hwb": "tile-wise", "z": "in-memory"}
    assert cards[("hwb", "m")]["protocol"]["in_memory_estimate_bytes"] == estimate
    assert "pansharp-eval: tile-wise: bhw, hwb (2 evaluations; in-memory estimate above the memory budget" in out
    assert "pansharp-eval: in memory: z (1 evaluation; .npz scenes are read whole)" in out
    monkeypatch.setattr(scene_eval, "available_memory", lambda: 100 * estimate)
    assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / "high"), "--format", "json"]) == 0
    assert {c["protocol"]["evaluation_path"] for c in _cards(tmp_path / "high").values()} == {"in-memory"}
    assert "pansharp-eval: in memory: bhw, hwb (2 evaluations; fits in memory" in capsys.readouterr().out


@pytest.mark.parametrize("case, expected", [
    ("dn_declared_unit", "contradicts the data"),
    ("nan", "NaN/Inf"),
    ("wrong_bands", "wrong band count"),
    ("gt_over_bits", "Bring hwb_gt.npy to the scale of hwb.npy: divide it by about 4"),
])
def test_tile_wise_path_makes_the_in_memory_checks(tmp_path, case, expected):
    # bhw fits the settings: hwb's gt above the bits fails that scene alone (were it every scene, the
    # run would stop before anything is evaluated)
    folder, res = _dataset(tmp_path, "reduced", layouts=["hwb", "bhw"])
    fused = np.load(res / "hwb.npy")
    if case == "dn_declared_unit":
        np.save(res / "hwb.npy", fused * (2**BITS - 1))
    elif case == "nan":
        fused[5, 7, 1] = np.nan
        np.save(res / "hwb.npy", fused)
    elif case == "wrong_bands":
        np.save(res / "hwb.npy", fused[:, :, :3])
    else:
        np.save(folder / "hwb_gt.npy", np.load(folder / "hwb_gt.npy") * 4)
    reasons = {}
    for mode in ("never", "always"):
        assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / mode), "--format", "json",
                     "--tiled", mode]) == 1
        reasons[mode] = _cards(tmp_path / mode)[("hwb", "m")]["reason"]
    assert expected in reasons["never"] and expected in reasons["always"], reasons


def test_choose_path():
    gb = 2**30
    big, small = (4096, 4096, 8), (256, 256, 4)
    assert choose_path("never", resolution="full", shape=big, available=gb).path == "in-memory"
    assert choose_path("always", resolution="full", shape=small, available=64 * gb).path == "tile-wise"
    low = choose_path("auto", resolution="full", shape=big, available=8 * gb, jobs=2)
    assert low.path == "tile-wise" and low.budget == 2 * gb and low.estimate > 5 * gb
    assert choose_path("auto", resolution="reduced", shape=small, available=8 * gb).path == "in-memory"
    whole = choose_path("auto", resolution="full", shape=None, available=gb, not_windowed=(".mat scenes", "x.mat"))
    assert whole.path == "in-memory" and "read whole" in whole.why
    # the estimate grows with pixels x bands, from the measured bytes per sample
    assert estimate_in_memory_bytes("full", 2048, 2048, 8) - estimate_in_memory_bytes("full", 1024, 1024, 8) == \
        44 * 3 * 1024 * 1024 * 8


def test_available_memory_takes_the_smallest_limit(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemAvailable:   16000000 kB\n")
    root = tmp_path / "cgroup"
    root.mkdir()
    assert available_memory(meminfo=meminfo, cgroup_root=root) == 16000000 * 1024
    (root / "memory.max").write_text("4294967296\n")
    (root / "memory.current").write_text("1073741824\n")
    assert available_memory(meminfo=meminfo, cgroup_root=root) == 3 * 2**30
    (root / "memory.max").write_text("max\n")
    assert available_memory(meminfo=meminfo, cgroup_root=root) == 16000000 * 1024


def test_truncated_tiff_fails_with_one_line_and_no_tifffile_noise(tmp_path):
    import subprocess
    import sys

    folder, res = _dataset(tmp_path, "reduced", layouts=["hwb"])
    sc = make_scene(5, size=96)
    tifffile.imwrite(res / "tmp.tif", noisy(sc["gt"], 5, 0), photometric="minisblack")
    data = (res / "tmp.tif").read_bytes()
    (res / "tmp.tif").unlink()
    (res / "hwb.npy").unlink()
    (res / "hwb.tif").write_bytes(data[: len(data) // 3])  # tifffile logs on stderr about such files
    # a fresh process: pytest's own log capture would hide the stray line
    proc = subprocess.run([sys.executable, "-m", "pansharp_iqa.cli.main", "evaluate", str(folder), str(res), "--out",
                           str(tmp_path / "o"), "--format", "csv", "--no-progress"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [
        "pansharp-eval: 1 of 1 evaluation(s) failed (exit status 1)"], proc.stderr
    assert "FAILED hwb / m: cannot read TIFF" in proc.stdout

"""pansharp-eval on GeoTIFF scenes tile by tile (--tiled) and on a Dask cluster (--scheduler):
the same numbers as the in-memory, local run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tifffile

from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml
from pansharp_iqa.cli.main import main


def _tif(path: Path, hwb: np.ndarray) -> None:
    """One multi-band GeoTIFF (planar bands), as GDAL writes them."""
    tifffile.imwrite(path, np.moveaxis(hwb, -1, 0), photometric="minisblack", planarconfig="separate")


def _dataset(tmp_path: Path, resolution: str) -> tuple[Path, Path]:
    folder = tmp_path / resolution
    folder.mkdir()
    write_toml(folder, sensor="QB", ratio=RATIO, bits=BITS, resolution=resolution, result_scale="dn")
    res = tmp_path / f"res_{resolution}" / "noisy"
    res.mkdir(parents=True)
    for i, name in enumerate(["a", "b"]):
        sc = make_scene(60 + i, size=160)
        if resolution == "reduced":
            _tif(folder / f"{name}_gt.tif", sc["gt"])
            fused = noisy(sc["gt"], 12.0, i)
        else:
            _tif(folder / f"{name}_ms.tif", sc["ms"])
            tifffile.imwrite(folder / f"{name}_pan.tif", sc["pan"])
            fused = noisy(sc["gt"], 6.0, i)
        _tif(res / f"{name}.tif", fused)
    return folder, res


def _metrics(out: Path) -> dict:
    doc = json.loads((out / "results.json").read_text())
    return {(s, m): v for s, methods in doc["scenes"].items() for m, v in methods.items()}


@pytest.mark.parametrize("resolution", ["reduced", "full"])
def test_tiled_geotiff_scenes_equal_in_memory(tmp_path, resolution):
    pytest.importorskip("rasterio")
    folder, res = _dataset(tmp_path, resolution)
    for mode, out in (("never", "mem"), ("always", "tiled")):
        assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / out), "--format", "json",
                     "--tiled", mode]) == 0
    mem, tiled = _metrics(tmp_path / "mem"), _metrics(tmp_path / "tiled")
    assert mem.keys() == tiled.keys() and len(mem) == 2
    for key in mem:
        assert tiled[key]["status"] == "ok", tiled[key]
        assert "tiling" in tiled[key]["protocol"] and "tiling" not in mem[key]["protocol"]
        for name, value in mem[key]["metrics"].items():
            assert tiled[key]["metrics"][name] == pytest.approx(value, rel=1e-9, abs=1e-12), (key, name)


def test_page_stacks_are_refused_tile_wise_with_a_clear_reason(tmp_path):
    pytest.importorskip("rasterio")
    folder, res = _dataset(tmp_path, "reduced")
    sc = make_scene(70, size=160)
    tifffile.imwrite(res / "a.tif", np.moveaxis(noisy(sc["gt"], 5.0, 3), -1, 0), photometric="minisblack")
    assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / "o"), "--format", "json",
                 "--tiled", "always"]) == 1
    failed = _metrics(tmp_path / "o")[("a", "noisy")]
    assert failed["status"] == "failed" and "multi-page" in failed["reason"]


def test_scheduler_runs_on_a_dask_cluster_with_identical_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    folder, res = _dataset(tmp_path, "reduced")
    assert main(["evaluate", str(folder), str(res), "--out", str(tmp_path / "local"), "--format", "json"]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        code = main(["evaluate", str(folder), str(res), "--out", str(tmp_path / "dask"), "--format", "json",
                     "--scheduler", cluster.scheduler_address])
    assert code == 0
    local, remote = _metrics(tmp_path / "local"), _metrics(tmp_path / "dask")
    assert {k: v["metrics"] for k, v in local.items()} == {k: v["metrics"] for k, v in remote.items()}


def test_core_refuses_page_stacks_given_as_paths(tmp_path):
    pytest.importorskip("rasterio")
    from pansharp_iqa.io.errors import SceneReadError

    sc = make_scene(71, size=128)
    tifffile.imwrite(tmp_path / "stack.tif", np.moveaxis(sc["gt"], -1, 0), photometric="minisblack")
    _tif(tmp_path / "gt.tif", sc["gt"])
    with pytest.raises(SceneReadError, match="multi-page"):
        import pansharp_iqa as pi

        pi.evaluate_reduced(tmp_path / "stack.tif", tmp_path / "gt.tif", ratio=RATIO, bits=BITS)

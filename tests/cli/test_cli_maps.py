"""``pansharp-eval evaluate --maps``: every index's quality map as a GeoTIFF georeferenced like the scene, the
same values as the library's ``evaluate(..., maps=True)`` in memory and tile-wise, listed in the manifest, shown
as heat maps in ``report.html`` (rendered by a headless browser where one is installed); ``--exponents``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pansharp_iqa as pi
from cli_helpers import BITS, RATIO, make_scene, noisy, one_error_line, run_cli, write_toml

rasterio = pytest.importorskip("rasterio")
from rasterio.transform import Affine  # noqa: E402

CRS = "EPSG:32631"
PAN_T = Affine(0.5, 0.0, 500000.0, 0.0, -0.5, 4000000.0)
FR_MAPS = ["D_lambda", "D_s", "D_lambda_K", "HQNR", "D_s_R", "RQNR"]
BLOCK_MAPS = {"D_lambda", "D_s", "D_lambda_K", "Q2n"}


def _write(path: Path, array: np.ndarray, transform: Affine) -> None:
    bands = np.moveaxis(array, 2, 0) if array.ndim == 3 else array[None]
    with rasterio.open(path, "w", driver="GTiff", height=bands.shape[1], width=bands.shape[2], count=bands.shape[0],
                       dtype=bands.dtype.name, crs=CRS, transform=transform) as ds:
        ds.write(bands)


@pytest.fixture(scope="module")
def fr_dataset(tmp_path_factory):
    """Two full-resolution GeoTIFF scenes (MS 32 x 32 x 4 at 2 m, PAN 128 x 128 at 0.5 m) and two methods."""
    root = tmp_path_factory.mktemp("fr-maps")
    data, methods = root / "fr", {"GOOD": root / "GOOD", "NOISY": root / "NOISY"}
    data.mkdir()
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="full", result_scale="dn")
    arrays = {}
    for folder in methods.values():
        folder.mkdir()
    for i, scene in enumerate(("a", "b")):
        sc = make_scene(30 + i)
        _write(data / f"{scene}_pan.tif", sc["pan"], PAN_T)
        _write(data / f"{scene}_ms.tif", sc["ms"], PAN_T @ Affine.scale(RATIO))
        for sigma, (name, folder) in zip((3.0, 30.0), methods.items(), strict=True):
            np.save(folder / f"{scene}.npy", noisy(sc["gt"], sigma, i))
            arrays[(scene, name)] = (np.load(folder / f"{scene}.npy"), sc["ms"], sc["pan"])
    return data, methods, arrays


def _evaluate(tmp_path: Path, fr_dataset, tiled: str, *extra: str) -> Path:
    data, methods, _ = fr_dataset
    out = tmp_path / f"out-{tiled}"
    r = run_cli("evaluate", data, *methods.values(), "--out", out, "--maps", "--indexes", "default,rqnr,d_s_r",
                "--format", "html,json", "--no-progress", "--tiled", tiled, *extra)
    assert r.returncode == 0, r.stderr
    return out


def _read(path: Path) -> tuple[np.ndarray, object, Affine]:
    with rasterio.open(path) as ds:
        return ds.read(1), ds.crs, ds.transform


@pytest.mark.parametrize("tiled", ["never", "always"])
def test_geotiff_maps_equal_the_library_and_are_georeferenced_like_the_scene(tmp_path, fr_dataset, tiled):
    out = _evaluate(tmp_path, fr_dataset, tiled)
    doc = json.loads((out / "results.json").read_text())
    manifest = json.loads((out / ".pansharp-eval-manifest.json").read_text())
    for (scene, method), (fused, ms, pan) in fr_dataset[2].items():
        want = pi.evaluate_full(fused, ms, pan, sensor="none", ratio=RATIO, indexes=["default", "RQNR", "D_s_R"],
                                maps=True, tiled="never")
        card = doc["scenes"][scene][method]["protocol"]
        assert card["evaluation_path"] == ("tile-wise" if tiled == "always" else "in-memory")
        assert sorted(card["maps"]) == sorted(FR_MAPS)
        for name in FR_MAPS:
            rel = f"maps/{method}/{scene}/{name}.tif"
            assert rel in manifest["files"]
            values, crs, transform = _read(out / rel)
            np.testing.assert_allclose(values, want["maps"][name], rtol=0, atol=1e-9, err_msg=rel)
            assert crs.to_string() == CRS
            assert transform == (PAN_T @ Affine.scale(32) if name in BLOCK_MAPS else PAN_T), rel
        assert doc["scenes"][scene][method]["metrics"]["RQNR"] == pytest.approx(want["RQNR"], rel=1e-12)


def test_report_shows_the_maps_as_heat_maps(tmp_path, fr_dataset):
    out = _evaluate(tmp_path, fr_dataset, "never")
    page = (out / "report.html").read_text(encoding="utf-8")
    for scene in ("a", "b"):
        assert f"id='maps-{scene}'" in page
    for method in ("GOOD", "NOISY"):
        for name in FR_MAPS:
            assert page.count(f"alt='{method}: {name} map' src='data:image/png;base64,") == 2  # both scenes
    assert page.count("colour scale</td>") == 2 and "RQNR ↑" in page and "D_s_R ↓" in page


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.mark.skipif(_browser() is None, reason="no headless browser (chromium) installed")
def test_the_heat_maps_render_in_a_headless_browser(tmp_path, fr_dataset):
    from PIL import Image

    out = _evaluate(tmp_path, fr_dataset, "never")
    # the page holding only the map tables (the report's other images would pass the test on their own)
    page = (out / "report.html").read_text(encoding="utf-8")
    head, tables = page.split("<body>")[0], page.count("<table class='maps'")
    maps_only = head + "<body>" + "".join("<table class='maps'" + part.split("</table>")[0] + "</table>"
                                          for part in page.split("<table class='maps'")[1:]) + "</body></html>"
    assert tables == 2
    (tmp_path / "maps.html").write_text(maps_only, encoding="utf-8")
    shot = tmp_path / "shot.png"
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900", f"--screenshot={shot}",
           (tmp_path / "maps.html").resolve().as_uri()]
    subprocess.run(cmd, check=False, capture_output=True, timeout=120)
    assert shot.is_file(), "the browser wrote no screenshot"
    with Image.open(shot) as img:
        pixels = np.asarray(img.convert("RGB"), dtype=float)
    # viridis heat maps drawn: many saturated (blue-green-yellow) pixels, which text and borders do not have
    saturated = (pixels.max(axis=2) - pixels.min(axis=2)) > 80
    assert saturated.mean() > 0.15


def test_resume_keeps_the_maps_and_remakes_a_missing_one(tmp_path, fr_dataset):
    out = _evaluate(tmp_path, fr_dataset, "never")
    lost = out / "maps/GOOD/a/RQNR.tif"
    kept = out / "maps/NOISY/b/HQNR.tif"
    before = kept.stat().st_mtime_ns
    lost.unlink()
    data, methods, _ = fr_dataset
    r = run_cli("evaluate", data, *methods.values(), "--out", out, "--maps", "--indexes", "default,rqnr,d_s_r",
                "--format", "html,json", "--no-progress", "--resume")
    assert r.returncode == 0, r.stderr
    assert lost.is_file() and kept.stat().st_mtime_ns == before
    assert json.loads((out / "results.json").read_text())["run"]["resumed"] == 3
    # a run without --maps keeps no map files (as a fresh run would write none)
    r = run_cli("evaluate", data, *methods.values(), "--out", out, "--indexes", "default,rqnr,d_s_r",
                "--format", "json", "--no-progress", "--resume")
    assert r.returncode == 0, r.stderr
    assert not (out / "maps").exists()


def test_exponents_are_a_setting_recorded_in_the_card(tmp_path, fr_dataset):
    out = _evaluate(tmp_path, fr_dataset, "never", "--exponents", "overall")
    doc = json.loads((out / "results.json").read_text())
    fused, ms, pan = fr_dataset[2][("a", "NOISY")]
    want = pi.evaluate_full(fused, ms, pan, sensor="none", ratio=RATIO, indexes=["default", "RQNR", "D_s_R"],
                            exponents="overall", tiled="never")
    got = doc["scenes"]["a"]["NOISY"]
    assert got["protocol"]["exponents"] == {"case": "overall", "QNR": [0.0, 1.19], "HQNR": [0.98, 0.89],
                                            "RQNR": [1.81, 0.9]}
    for name in ("QNR", "HQNR", "RQNR"):
        assert got["metrics"][name] == pytest.approx(want[name], rel=1e-12)
    assert doc["dataset"]["exponents"] == "overall"


def test_reduced_resolution_maps_without_a_georeference(tmp_path):
    data, method = tmp_path / "rr", tmp_path / "m"
    data.mkdir()
    method.mkdir()
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    sc = make_scene(5)
    for role in ("gt", "ms", "pan"):
        np.save(data / f"s_{role}.npy", sc[role])
    fused = noisy(sc["gt"], 10.0, 1)
    np.save(method / "s.npy", fused)
    out = tmp_path / "out"
    r = run_cli("evaluate", data, method, "--out", out, "--maps", "--format", "json", "--no-progress", "--tiled",
                "always")
    assert r.returncode == 0, r.stderr
    want = pi.evaluate_reduced(fused, sc["gt"], ratio=RATIO, bits=BITS, maps=True, tiled="never")
    assert sorted(want["maps"]) == ["Q2n", "SAM"]
    for name in ("Q2n", "SAM"):
        values, crs, _ = _read(out / f"maps/m/s/{name}.tif")
        assert crs is None
        np.testing.assert_allclose(values, want["maps"][name], rtol=0, atol=1e-9, err_msg=name)


def test_exponents_at_reduced_resolution_are_a_usage_error(tmp_path):
    data, method = tmp_path / "rr", tmp_path / "m"
    data.mkdir()
    method.mkdir()
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    r = run_cli("evaluate", data, method, "--out", tmp_path / "out", "--exponents", "overall")
    assert r.returncode == 2
    one_error_line(r.stderr, "exponents", "full-resolution")


@pytest.mark.parametrize(("extra", "needles"), [
    (("--indexes", "QNR"), ["(QNR)", "'toolbox2020' at full resolution: D_lambda, D_s, D_lambda_K, HQNR",
                            "add one with --indexes, or leave --maps out"]),
    (("--protocol", "reprojected2022"), ["'reprojected2022'", "no index has one", "leave --maps off"]),
    (("--protocol", "hyperspectral2024"), ["(D_lambda, D_sR, QNR)", "'hyperspectral2024'", "D_lambda_F, D_s_R, RQNR"]),
])
def test_maps_where_no_index_of_the_run_has_one_is_a_usage_error_before_any_work(tmp_path, fr_dataset, extra,
                                                                                 needles):
    data, methods, _ = fr_dataset
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("the user's")
    r = run_cli("evaluate", data, *methods.values(), "--out", out, "--maps", "--format", "json", "--no-progress",
                *extra)
    assert r.returncode == 2, r.stderr
    one_error_line(r.stderr, "--maps: none of the requested indexes", "has a quality map", *needles,
                   "nothing was evaluated or written")
    assert [p.name for p in out.iterdir()] == ["mine.txt"]  # OUT untouched


@pytest.mark.parametrize(("extra", "made"), [
    (("--indexes", "QNR,HQNR"), "HQNR"),
    # the protocol's own forms decide (its D_lambda has no map), in the manifest as in the library
    (("--protocol", "hyperspectral2024", "--indexes", "default,rqnr"), "RQNR"),
])
def test_maps_of_the_indexes_that_have_one_where_some_do(tmp_path, fr_dataset, extra, made):
    data, methods, _ = fr_dataset
    out = tmp_path / "out"
    r = run_cli("evaluate", data, *methods.values(), "--out", out, "--maps", "--format", "json", "--no-progress",
                *extra)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / ".pansharp-eval-manifest.json").read_text())
    assert sorted(f for f in manifest["files"] if f.startswith("maps/")) == sorted(
        f"maps/{m}/{s}/{made}.tif" for m in ("GOOD", "NOISY") for s in ("a", "b"))
    assert sorted(p.name for p in (out / "maps/GOOD/a").iterdir()) == [f"{made}.tif"]


def test_plots_at_reduced_resolution_without_an_index_that_has_a_map(tmp_path):
    data, method = tmp_path / "rr", tmp_path / "m"
    data.mkdir()
    method.mkdir()
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    sc = make_scene(6)
    for role in ("gt", "ms", "pan"):
        np.save(data / f"s_{role}.npy", sc[role])
    np.save(method / "s.npy", noisy(sc["gt"], 10.0, 1))
    out = tmp_path / "out"
    r = run_cli("evaluate", data, method, "--out", out, "--plots", "--indexes", "ERGAS", "--format", "json",
                "--no-progress")
    assert r.returncode == 0, r.stderr  # the previews are not asked of the library where there is none to make
    assert json.loads((out / "results.json").read_text())["scenes"]["s"]["m"]["status"] == "ok"


def test_force_rerun_replaces_the_runs_own_map_files(tmp_path, fr_dataset):
    out = _evaluate(tmp_path, fr_dataset, "never")
    first = {p: _read(p)[0] for p in sorted((out / "maps").rglob("*.tif"))}
    data, methods, _ = fr_dataset
    for again in ("--force", "--resume"):  # the run's own files are replaced (or kept), never refused
        r = run_cli("evaluate", data, *methods.values(), "--out", out, "--maps", "--indexes", "default,rqnr,d_s_r",
                    "--format", "html,json", "--no-progress", "--tiled", "always", again)
        assert r.returncode == 0, r.stderr
        assert sorted((out / "maps").rglob("*.tif")) == list(first) and len(first) == 2 * 2 * len(FR_MAPS)
        for path, values in first.items():
            np.testing.assert_allclose(_read(path)[0], values, rtol=0, atol=1e-9, err_msg=str(path))

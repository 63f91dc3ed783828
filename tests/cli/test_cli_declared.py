"""Issue 27 (input model) through ``pansharp-eval``, in memory (``--tiled never``) and tile-wise
(``--tiled always``): a GeoTIFF result's GDAL scale/offset is applied, its mask band honoured (a mask
that masks nothing is accepted), its band descriptions followed when the scene names its bands too
(a contradiction refused, generic names ignored), a south-up result told it is flipped, and a ``.mat``
holding two different results refused. Expected numbers: the undeclared arrays, scored in memory on
a real WorldView-2 crop (without ../shared/data, a synthetic WorldView-2-like scene)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pansharp_iqa as pi
from cli_helpers import run_cli, shared_data_dir, write_toml
from pansharp_iqa.baselines import gsa

rasterio = pytest.importorskip("rasterio")
from rasterio.transform import Affine, from_origin  # noqa: E402

NAMES = ("Coastal", "Blue", "Green", "Yellow", "Red", "Red Edge", "NIR1", "NIR2")
ORIGIN = (593270.0, 5747657.0)


@functools.cache
def wv2() -> dict[str, np.ndarray]:
    """A 128 x 128 crop of the real WV2 scene (``gt``) and GSA's fusion of its Wald degradation."""
    folder = shared_data_dir()
    if folder is None:  # issue 34: a synthetic WorldView-2-like scene keeps the coverage
        from pancollection_data import synthetic_wv2

        ms, pan = synthetic_wv2(3410, 128)
    else:
        import scipy.io

        d = scipy.io.loadmat(str(folder / "imgWV2.mat"))
        ms, pan = d["I_MS"][:128, :128].astype(np.float64), d["I_PAN"][:512, :512].astype(np.float64)
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "WV2", ratio=4)
    return {"gt": ms, "fused": gsa(ms_lr, pan_lr, ratio=4)}


def write(path: Path, hwb: np.ndarray, *, dtype: Any = None, scales: Any = None, offsets: Any = None,
          names: Any = None, mask: np.ndarray | None = None, transform: Any = None, nodata: Any = None) -> None:
    """``hwb`` as GDAL bands, with what it declares, written by GDAL (rasterio)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    bands = np.moveaxis(np.atleast_3d(hwb), -1, 0).astype(dtype or hwb.dtype)
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True), rasterio.open(
            path, "w", driver="GTiff", height=bands.shape[1], width=bands.shape[2], count=bands.shape[0],
            dtype=bands.dtype, crs="EPSG:32631", transform=transform or from_origin(*ORIGIN, 2.0, 2.0),
            nodata=nodata) as ds:
        ds.write(bands)
        for attr, value in (("scales", scales), ("offsets", offsets), ("descriptions", names)):
            if value is not None:
                setattr(ds, attr, tuple(value))
        if mask is not None:
            ds.write_mask(mask)


def rr(fused: np.ndarray) -> dict[str, float]:
    out = pi.evaluate_reduced(np.asarray(fused, dtype=np.float64), wv2()["gt"], ratio=4, bits=11)
    return {k: v for k, v in out.items() if k != "protocol"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Any]:
    """One dataset (the named WV2 reference), one folder per declared result, and the expected
    scores of the arrays they stand for; the CLI run once per mode."""
    import json

    import scipy.io

    d = wv2()
    root = tmp_path_factory.mktemp("declared")
    data, res = root / "data", root / "res"
    write(data / "s_gt.tif", d["gt"], dtype=np.uint16, names=NAMES)
    write_toml(data, sensor="WV2", ratio=4, bits=11, resolution="reduced", result_scale="dn")
    fused, flipped = d["fused"].astype(np.float32), d["fused"][..., ::-1].astype(np.float32)
    stored = np.round(d["fused"] + 1000).astype(np.uint16)
    unit = (d["fused"] / 2047).astype(np.float32)
    holes = fused.copy()
    holes[40:80, 40:80] = 0
    mask = np.full((128, 128), 255, np.uint8)
    mask[40:80, 40:80] = 0
    write(res / "offset" / "s.tif", stored, offsets=[-1000.0] * 8)
    write(res / "unit" / "s.tif", unit, scales=[2047.0] * 8)
    gaps = stored.copy()
    gaps[:8, :8] = 0  # raw 0 is the no-data value (-1000 once the offset applies)
    write(res / "nodata" / "s.tif", gaps, offsets=[-1000.0] * 8, nodata=0)
    write(res / "reversed" / "s.tif", flipped, names=NAMES[::-1])
    write(res / "generic" / "s.tif", flipped, names=[f"Band {i}" for i in range(1, 9)])
    write(res / "contradicts" / "s.tif", flipped, names=("SWIR1", *NAMES[1:]))
    write(res / "masked" / "s.tif", holes, mask=mask)
    write(res / "unmasked" / "s.tif", fused, mask=np.full((128, 128), 255, np.uint8))
    south_up = Affine(2.0, 0.0, ORIGIN[0], 0.0, 2.0, ORIGIN[1] - 256.0)
    write(res / "southup" / "s.tif", fused[::-1], transform=south_up)
    (res / "twomat").mkdir()
    scipy.io.savemat(res / "twomat" / "s.mat", {"sr": d["fused"], "I_F": d["fused"] + 50.0})
    (res / "samemat").mkdir()
    scipy.io.savemat(res / "samemat" / "s.mat", {"sr": d["fused"], "I_F": d["fused"]})
    expected = {"offset": rr(stored.astype(np.float64) - 1000.0), "unit": rr(unit.astype(np.float64) * 2047.0),
                "reversed": rr(fused), "generic": rr(flipped), "unmasked": rr(fused), "samemat": rr(d["fused"])}
    runs = {}
    for mode in ("never", "always"):
        methods = [p for p in sorted(res.iterdir()) if mode == "never" or not p.name.endswith("mat")]
        out = root / mode
        proc = run_cli("evaluate", data, *methods, "--out", out, "--format", "json", "--no-progress",
                       "--tiled", mode)
        scenes = json.loads((out / "results.json").read_text())["scenes"]
        runs[mode] = (proc, scenes["s"])
    return {"expected": expected, "runs": runs}


@pytest.mark.parametrize("mode", ["never", "always"])
def test_declared_results_score_as_the_arrays_they_stand_for(runs, mode):
    proc, pairs = runs["runs"][mode]
    assert proc.returncode == 1, proc.stderr  # some pairs are refused (below), none crash
    assert "Traceback" not in proc.stderr
    for method, expected in runs["expected"].items():
        if mode == "always" and method.endswith("mat"):
            continue
        entry = pairs[method]
        assert entry["status"] == "ok", (method, entry.get("reason"))
        for k, v in expected.items():
            assert entry["metrics"][k] == pytest.approx(v, rel=1e-9), (method, k)
    if shared_data_dir() is not None:  # the real crop's numbers, for realism
        assert pairs["offset"]["metrics"]["Q2n"] == pytest.approx(0.882, abs=1e-3)  # not 0.232
        assert pairs["reversed"]["metrics"]["SAM"] == pytest.approx(7.29, abs=1e-2)  # not 23.46


@pytest.mark.parametrize("mode", ["never", "always"])
def test_contradictions_and_masked_pixels_are_refused_in_one_line(runs, mode):
    _, pairs = runs["runs"][mode]
    reasons = {m: pairs[m].get("reason") or "" for m in ("contradicts", "masked", "southup", "nodata")}
    assert "s.tif names its bands SWIR1, Blue" in reasons["contradicts"], reasons
    assert "s_gt.tif" in reasons["contradicts"] and "names them Coastal, Blue" in reasons["contradicts"]
    assert "1600 pixels are masked out by its GDAL mask band (internal mask)" in reasons["masked"], reasons
    assert "is flipped north-south against s_gt.tif" in reasons["southup"], reasons
    assert f"{8 * 8 * 8} values hold the declared no-data value 0" in reasons["nodata"], reasons
    assert all(pairs[m]["status"] == "failed" and "\n" not in r for m, r in reasons.items())
    if mode == "never":
        reason = pairs["twomat"].get("reason") or ""
        assert "holds two results, 'I_F' and 'sr', with different arrays" in reason, reason


@pytest.mark.parametrize("mode", ["never", "always"])
def test_full_resolution_bands_follow_the_ms(tmp_path, mode):
    import json

    from cli_helpers import make_scene

    sc = make_scene(7)
    names = ("Blue", "Green", "Red", "NIR")
    data, res = tmp_path / "data", tmp_path / "res"
    write(data / "s_ms.tif", sc["ms"], names=names, transform=from_origin(*ORIGIN, 8.0, 8.0))
    write(data / "s_pan.tif", sc["pan"])
    write_toml(data, sensor="none", ratio=4, bits=11, resolution="full", result_scale="dn")
    fused = gsa(sc["ms"].astype(np.float64), sc["pan"].astype(np.float64), ratio=4)
    write(res / "reversed" / "s.tif", fused[..., ::-1], names=names[::-1])
    write(res / "contradicts" / "s.tif", fused, names=("Red", "Green", "Blue", "Red Edge"))
    proc = run_cli("evaluate", data, res / "reversed", res / "contradicts", "--out", tmp_path / "o",
                   "--format", "json", "--no-progress", "--tiled", mode)
    pairs = json.loads((tmp_path / "o" / "results.json").read_text())["scenes"]["s"]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    expected = pi.evaluate_full(fused, sc["ms"], sc["pan"], sensor="none", ratio=4, bits=11)
    for k in ("D_lambda", "D_s", "QNR"):
        assert pairs["reversed"]["metrics"][k] == pytest.approx(expected[k], rel=1e-9), k
    assert "names its bands Red, Green, Blue, Red Edge but s_ms.tif" in pairs["contradicts"]["reason"]

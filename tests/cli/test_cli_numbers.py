"""The CLI's numbers equal evaluate_reduced / evaluate_full on the same arrays, in every layout."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import scipy.io
import tifffile

import pansharp_iqa as psi
from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml
from pansharp_iqa.cli.main import main


def _json(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


def test_reduced_numbers_equal_core(tmp_path, reduced_dataset, rr_methods):
    folder, scenes = reduced_dataset
    out = tmp_path / "out"
    code = main(["evaluate", str(folder), str(rr_methods["good"]), str(rr_methods["bad"]), "--out", str(out)])
    assert code == 0
    doc = _json(out)
    assert doc["methods"] == ["good", "bad"]
    for name, sc in scenes.items():
        good = np.load(rr_methods["good"] / f"{name}.npy")
        # loadmat returns Fortran-ordered arrays; the CLI hands the core C-ordered arrays (the
        # core's float sums depend on memory order at the last bit), so compare on those
        bad = np.ascontiguousarray(scipy.io.loadmat(rr_methods["bad"] / f"{name}.mat")["I_F"])
        for method, fused in (("good", good), ("bad", bad)):
            ref = psi.evaluate_reduced(fused, sc["gt"], ratio=RATIO, bits=BITS, protocol="toolbox2020")
            got = doc["scenes"][name][method]
            assert got["status"] == "ok"
            for key, value in ref.items():
                if key != "protocol":
                    assert got["metrics"][key] == value, (name, method, key)
            assert got["protocol"]["name"] == "toolbox2020"
    # summary = mean over scenes of those values
    q = [doc["scenes"][s]["good"]["metrics"]["Q2n"] for s in scenes]
    assert doc["summary"]["good"]["Q2n"]["mean"] == float(np.mean(q))
    assert doc["summary"]["good"]["Q2n"]["std"] == float(np.std(q, ddof=1))
    # the good method wins every index
    assert all(doc["summary"]["best"][m] == ["good"] for m in doc["metrics"])
    # provenance: card and SHA-256 of every input and result file
    assert doc["protocol"]["library"] == "pansharp_iqa" and doc["protocol"]["ratio"] == RATIO
    assert set(doc["inputs_sha256"]) == {"s1.npz", "s2.npz", "s3.npz"}
    import hashlib

    assert doc["inputs_sha256"]["s1.npz"] == hashlib.sha256((folder / "s1.npz").read_bytes()).hexdigest()
    assert set(doc["results_sha256"]["bad"]) == {"bad/s1.mat", "bad/s2.mat", "bad/s3.mat"}


def test_full_resolution_geotiff_numbers_equal_core(tmp_path):
    folder = tmp_path / "fr"
    folder.mkdir()
    write_toml(folder, sensor="QB", ratio=RATIO, bits=BITS, resolution="full", result_scale="dn")
    res = tmp_path / "res" / "exp"
    res.mkdir(parents=True)
    arrays = {}
    for i, name in enumerate(["a", "b"]):
        sc = make_scene(30 + i)
        # MS stored band-interleaved (B, H, W), PAN as (H, W)
        tifffile.imwrite(folder / f"{name}_ms.tif", np.moveaxis(sc["ms"], -1, 0), photometric="minisblack")
        tifffile.imwrite(folder / f"{name}_pan.tif", sc["pan"])
        fused = psi.interp23tap(sc["ms"], RATIO) + noisy(np.zeros(sc["gt"].shape), 3.0, i)
        tifffile.imwrite(res / f"{name}.tif", fused.astype(np.float32), photometric="minisblack")
        arrays[name] = (sc, tifffile.imread(res / f"{name}.tif"))
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), str(res), "--out", str(out), "--format", "json"]) == 0
    doc = _json(out)
    for name, (sc, fused) in arrays.items():
        ref = psi.evaluate_full(fused, sc["ms"], sc["pan"], sensor="QB", ratio=RATIO, bits=BITS)
        got = doc["scenes"][name]["exp"]
        for key, value in ref.items():
            if key != "protocol":
                assert got["metrics"][key] == value, (name, key)
    assert doc["protocol"]["sensor"]["name"] == "QB"
    assert not (out / "results.csv").exists()  # only the formats asked for


def test_toolbox_mat_names_and_band_first_results(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="unit")
    sc = make_scene(5)
    scipy.io.savemat(folder / "toolbox.mat", {"I_MS_LR": sc["ms"], "I_PAN": sc["pan"], "I_GT": sc["gt"]})
    res = tmp_path / "net"
    res.mkdir()
    fused_unit = noisy(sc["gt"], 15.0, 1) / (2**BITS - 1)
    np.save(res / "toolbox.npy", np.moveaxis(fused_unit, -1, 0))  # (B, H, W), [0, 1]
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), str(res), "--out", str(out)]) == 0
    got = _json(out)["scenes"]["toolbox"]["net"]["metrics"]
    ref = psi.evaluate_reduced(fused_unit * (2**BITS - 1), sc["gt"], ratio=RATIO, bits=BITS)
    assert got["Q2n"] == ref["Q2n"] and got["ERGAS"] == ref["ERGAS"]


def test_pancollection_h5_with_flags_and_stacked_results(tmp_path):
    data = tmp_path / "pc"
    data.mkdir()
    scenes = [make_scene(40 + i) for i in range(3)]
    chw = lambda key: np.stack([np.moveaxis(s[key], -1, 0) for s in scenes]).astype(np.float64)  # noqa: E731
    with h5py.File(data / "test_qb.h5", "w") as f:
        f["gt"] = chw("gt")
        f["ms"] = chw("ms")
        f["lms"] = np.stack([np.moveaxis(psi.interp23tap(s["ms"], RATIO), -1, 0) for s in scenes])
        f["pan"] = np.stack([s["pan"][None] for s in scenes]).astype(np.float64)
    res = tmp_path / "net"
    res.mkdir()
    fused = np.stack([np.moveaxis(noisy(s["gt"], 10.0, i), -1, 0) for i, s in enumerate(scenes)])
    with h5py.File(res / "test_qb.h5", "w") as f:
        f["sr"] = fused
    out = tmp_path / "out"
    argv = ["evaluate", str(data / "test_qb.h5"), str(res), "--out", str(out), "--sensor", "QB", "--ratio", "4",
            "--bits", "11", "--resolution", "reduced", "--result-scale", "dn"]
    assert main(argv) == 0
    doc = _json(out)
    assert list(doc["scenes"]) == ["test_qb_0", "test_qb_1", "test_qb_2"]
    for i, s in enumerate(scenes):
        ref = psi.evaluate_reduced(np.moveaxis(fused[i], 0, -1), s["gt"], ratio=RATIO, bits=BITS)
        assert doc["scenes"][f"test_qb_{i}"]["net"]["metrics"]["SAM"] == ref["SAM"]
    assert doc["dataset"]["sources"]["sensor"] == "flag"


def test_full_resolution_pancollection_h5_without_gt(tmp_path, monkeypatch):
    # PanCollection full-resolution files hold ms, lms and pan only: shapes come from the headers,
    # each image is read once
    import pansharp_iqa.io.scenes as scenes_module

    data = tmp_path / "pc"
    data.mkdir()
    scenes = [make_scene(60 + i) for i in range(2)]
    with h5py.File(data / "test_full.h5", "w") as f:
        f["ms"] = np.stack([np.moveaxis(s["ms"], -1, 0) for s in scenes]).astype(np.float64)
        f["lms"] = np.stack([np.moveaxis(psi.interp23tap(s["ms"], RATIO), -1, 0) for s in scenes])
        f["pan"] = np.stack([s["pan"][None] for s in scenes]).astype(np.float64)
    res = tmp_path / "net"
    res.mkdir()
    fused = np.stack([np.moveaxis(noisy(s["gt"], 10.0, i), -1, 0) for i, s in enumerate(scenes)])
    with h5py.File(res / "test_full.h5", "w") as f:
        f["sr"] = fused
    reads = []
    real = scenes_module.read_h5_item
    monkeypatch.setattr(scenes_module, "read_h5_item", lambda path, key, index=None: reads.append(key) or
                        real(path, key, index))
    out = tmp_path / "out"
    argv = ["evaluate", str(data / "test_full.h5"), str(res), "--out", str(out), "--sensor", "QB", "--ratio", "4",
            "--bits", "11", "--resolution", "full", "--result-scale", "dn", "--tiled", "never"]
    assert main(argv) == 0
    doc = _json(out)
    for i, s in enumerate(scenes):
        ref = psi.evaluate_full(np.moveaxis(fused[i], 0, -1), s["ms"].astype(np.float64),
                                s["pan"].astype(np.float64), ratio=RATIO, sensor="QB", bits=BITS)
        assert doc["scenes"][f"test_full_{i}"]["net"]["metrics"]["QNR"] == ref["QNR"]
    # once per scene, and the first scene once more by the dataset check before the run (docs/cli.md)
    assert sorted(reads) == ["ms", "ms", "ms", "pan", "pan", "pan"]


def test_jobs_two_gives_identical_results(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    docs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert main(["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out), "--jobs", jobs]) == 0
        docs.append(_json(out))
        docs[-1]["csv"] = (out / "results.csv").read_text()
    for key in ("scenes", "summary", "protocol", "inputs_sha256", "results_sha256", "csv"):
        assert docs[0][key] == docs[1][key], key

"""Executors: local process pool and a Dask LocalCluster give the local numbers exactly; a corrupt
or truncated GeoTIFF fails its scene only, with SceneReadError."""

from __future__ import annotations

import os

import pytest

from pansharp_iqa.io.errors import DataError
from pansharp_iqa.tiled import (
    Scene,
    SceneReadError,
    evaluate_full_tiled,
    evaluate_reduced_tiled,
    evaluate_scenes,
)

from .conftest import make_scene, write_tif

pytest.importorskip("rasterio")

RR = dict(ratio=4, bits=11)
FR = dict(sensor="QB")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("dist")
    rr = make_scene(31, 330, 300, bands=4)
    fr = make_scene(37, 256, 224, bands=4)
    out = {f"rr_{k}": write_tif(d / f"rr_{k}.tif", rr[k], block=64) for k in ("fused", "gt")}
    out.update({f"fr_{k}": write_tif(d / f"fr_{k}.tif", fr[k], block=64) for k in ("fused", "ms", "pan")})
    data = open(out["rr_fused"], "rb").read()
    out["truncated"] = str(d / "truncated.tif")
    with open(out["truncated"], "wb") as fh:
        fh.write(data[: len(data) * 2 // 3])
    out["corrupt"] = str(d / "corrupt.tif")
    with open(out["corrupt"], "wb") as fh:
        fh.write(b"II*\x00" + os.urandom(2000))
    return out


def _scenes(f):
    return [
        Scene("rr", "reduced", f["rr_fused"], f["rr_gt"], settings=RR),
        Scene("truncated", "reduced", f["truncated"], f["rr_gt"], settings=RR),
        Scene("fr", "full", f["fr_fused"], ms=f["fr_ms"], pan=f["fr_pan"], settings=dict(FR, protocol="qnr-paper")),
        Scene("corrupt", "full", f["corrupt"], ms=f["fr_ms"], pan=f["fr_pan"], settings=FR),
    ]


def _values(result):
    return {k: v for k, v in result.items() if k != "protocol"}


def test_truncated_geotiff_fails_with_scene_read_error(files):
    with pytest.raises(SceneReadError, match="truncated.tif") as info:
        evaluate_reduced_tiled(files["truncated"], files["rr_gt"], tile_size=64, **RR)
    assert "corrupt or truncated" in str(info.value)
    assert isinstance(info.value, DataError)  # pansharp-eval reports DataError per scene
    with pytest.raises(SceneReadError, match="corrupt.tif"):
        evaluate_full_tiled(files["corrupt"], files["fr_ms"], files["fr_pan"], **FR)


def test_process_pool_equals_serial_and_isolates_failures(files):
    serial = evaluate_scenes(_scenes(files), jobs=1, tile_size=64)
    pooled = evaluate_scenes(_scenes(files), jobs=2, tile_size=64)
    assert [o.ok for o in serial] == [True, False, True, False]
    assert [o.ok for o in pooled] == [True, False, True, False]
    assert isinstance(pooled[1].error, SceneReadError) and isinstance(pooled[3].error, SceneReadError)
    for a, b in zip(serial, pooled, strict=True):
        if a.ok:
            assert _values(a.result) == _values(b.result)  # bit-identical
    direct = evaluate_reduced_tiled(files["rr_fused"], files["rr_gt"], tile_size=64, **RR)
    assert _values(direct) == _values(serial[0].result)


def test_dask_local_cluster_equals_local_run(files):
    distributed = pytest.importorskip("distributed")
    local = evaluate_scenes(_scenes(files), jobs=1, tile_size=64)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        remote = evaluate_scenes(_scenes(files), scheduler=cluster.scheduler_address, tile_size=64)
        with distributed.Client(cluster) as client:
            one = evaluate_full_tiled(files["fr_fused"], files["fr_ms"], files["fr_pan"], tile_size=64,
                                      scheduler=client, **FR)
    assert [o.ok for o in remote] == [True, False, True, False]
    assert isinstance(remote[1].error, SceneReadError), repr(remote[1].error)
    assert "truncated.tif" in str(remote[1].error)
    for a, b in zip(local, remote, strict=True):
        if a.ok:
            assert _values(a.result) == _values(b.result)  # bit-identical
            assert a.result["protocol"] == b.result["protocol"]
    direct = evaluate_full_tiled(files["fr_fused"], files["fr_ms"], files["fr_pan"], tile_size=64, **FR)
    assert _values(one) == _values(direct)


def test_progress_reports_tiles_and_throughput(files, capsys):
    evaluate_reduced_tiled(files["rr_fused"], files["rr_gt"], tile_size=64, progress=True, **RR)
    err = capsys.readouterr().err
    assert "25/25" in err and "MP/s" in err


def test_bad_jobs_value(files):
    from pansharp_iqa import InputError

    with pytest.raises(InputError, match="jobs"):
        evaluate_reduced_tiled(files["rr_fused"], files["rr_gt"], jobs=0, **RR)

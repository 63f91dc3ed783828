"""Every catalogue index through every evaluation path, against the in-memory host value.

The cases are read from the catalogue (:data:`pansharp_iqa.indexes.catalog.INDEXES`): each index,
default or extra, reduced or full resolution, is evaluated by the first protocol that computes it,
in one group per (protocol, resolution) on two small scenes (96 x 96 x 4 at reduced resolution,
PAN 128 x 128 at full), and every path must give the in-memory value of each scene:

=============  ===============================================================  ==================
path           how                                                              tolerance
=============  ===============================================================  ==================
alone          in memory, ``indexes=[name]`` (the index without its group)      exact
tiled          ``tiled="always"`` on the arrays                                 1e-9 relative
npy            ``.npy`` paths (tile-wise)                                       1e-9 relative
tiles          the tile engine on 32-pixel tiles (many tiles merged)            1e-9 relative
host_batch     ``layout="NCHW"``, ``backend="host"`` (both scenes in one batch)  exact
torch_batch    ``layout="NCHW"``, ``backend="torch"`` on CPU tensors             1e-10 relative
accumulator    ``ReducedMetrics`` / ``FullMetrics`` (per image, and the mean)   exact / 1e-12
cli            ``pansharp-eval evaluate --indexes`` (in-process) ``results.csv``  1e-9 relative
=============  ===============================================================  ==================

``torch_batch`` is skipped without PyTorch; for a protocol the torch backend does not compute it
checks the one-line refusal instead. The CLI gets the names in lower case (names are
case-insensitive) and must report them under their canonical names. An index added to the
catalogue is tested on every path with no new test code here.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pansharp_iqa as pi
from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml
from pansharp_iqa.cli.main import main
from pansharp_iqa.indexes import catalog

SIZE = {"reduced": 96, "full": 128}
SCENES = ("a", "b")
TOLERANCE = {"alone": 0.0, "tiled": 1e-9, "npy": 1e-9, "tiles": 1e-9, "host_batch": 0.0, "torch_batch": 1e-10,
             "accumulator": 0.0, "cli": 1e-9}
PATHS = tuple(TOLERANCE)
#: The tile engine's paths, and the indexes it refuses in one line (SSIM: computed in memory only).
TILE_PATHS = ("tiled", "npy", "tiles")
IN_MEMORY_ONLY = {i.name for i in catalog.INDEXES
                  if any(catalog.get_statistic(s).support == "ssim" for s in i.statistics)}


def _protocol_for(spec: catalog.Index) -> str | None:
    """The first protocol whose table has the index (this form of it: ``catalog.get_index``) or that offers it on
    request."""
    for name in pi.list_protocols():
        proto = pi.get_protocol(name)
        engine = proto.full_engine if spec.resolution == "full" else "toolbox"
        if not proto.indexes(spec.resolution) and spec.on_request:
            continue  # no table at this resolution: nothing to add an extra to
        if (spec.name in proto.indexes(spec.resolution) and catalog.get_index(spec.name, name) is spec) or (
                spec.on_request and spec.engine == engine):
            return name
    return None


#: Protocols whose settings (not their index forms) change the reduced-resolution numbers: their tables too.
SETTINGS_PROTOCOLS = ("hyperspectral2024", "sentinel2-2025")
CASES = [(spec.name, _protocol_for(spec), spec.resolution) for spec in catalog.INDEXES]
CASES += [(n, p, "reduced") for p in SETTINGS_PROTOCOLS for n in pi.get_protocol(p).indexes("reduced")]
GROUPS: dict[tuple[str, str], tuple[str, ...]] = {}
for _name, _proto, _res in CASES:
    if _proto is not None:
        GROUPS[(_proto, _res)] = (*GROUPS.get((_proto, _res), ()), _name)


def test_every_catalogue_index_is_computed_by_some_protocol():
    assert [name for name, proto, _ in CASES if proto is None] == []


@functools.cache
def scenes(resolution: str) -> dict[str, dict[str, np.ndarray]]:
    """Two smooth 11-bit scenes and a noisy result each: ``fused``/``reference`` or ``fused``/``ms``/``pan``."""
    out = {}
    for i, name in enumerate(SCENES):
        sc = make_scene(40 + i, size=SIZE[resolution])
        fused = noisy(sc["gt"], 8.0 + 4 * i, 70 + i)
        if resolution == "reduced":
            out[name] = {"fused": fused, "reference": sc["gt"], "ms": sc["ms"], "pan": sc["pan"]}
        else:
            out[name] = {"fused": fused, "ms": sc["ms"], "pan": sc["pan"]}
    return out


def _kw(protocol: str, resolution: str, names: tuple[str, ...]) -> dict[str, Any]:
    kw: dict[str, Any] = {"ratio": RATIO, "bits": BITS, "protocol": protocol, "indexes": list(names)}
    return kw if resolution == "reduced" else {**kw, "sensor": "none"}


def _images(resolution: str, inputs: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("fused", "reference") if resolution == "reduced" else ("fused", "ms", "pan")
    return tuple(inputs[k] for k in keys)


def _evaluate(resolution: str, *images: Any, **kw: Any) -> dict[str, Any]:
    fn = pi.evaluate_reduced if resolution == "reduced" else pi.evaluate_full
    return fn(*images, **kw)


def _values(result: dict[str, Any], names: tuple[str, ...]) -> dict[str, float]:
    return {n: float(result[n]) for n in names}


@functools.cache
def expected(protocol: str, resolution: str) -> dict[str, dict[str, float]]:
    """The in-memory host values of the group's indexes on each scene (the reference of every path)."""
    names = GROUPS[(protocol, resolution)]
    return {s: _values(_evaluate(resolution, *_images(resolution, inp), **_kw(protocol, resolution, names)), names)
            for s, inp in scenes(resolution).items()}


def _batch(resolution: str, as_tensor: bool = False) -> tuple[Any, ...]:
    """Both scenes as one NCHW batch (PAN as (N, 1, H, W))."""
    per_scene = [_images(resolution, inp) for inp in scenes(resolution).values()]
    out = [np.stack([p[None] if p.ndim == 2 else np.moveaxis(p, 2, 0) for p in parts]).astype(np.float64)
           for parts in zip(*per_scene, strict=True)]
    if as_tensor:
        import torch

        return tuple(torch.from_numpy(x) for x in out)
    return tuple(out)


def _per_image(result: dict[str, Any], names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    return {s: {n: float(np.asarray(result[n])[i]) for n in names} for i, s in enumerate(SCENES)}


def _tiles(resolution: str, images: tuple[Any, ...], kw: dict[str, Any]) -> dict[str, Any]:
    """The tile engine on 32-pixel tiles (the default 512 would make these scenes one tile)."""
    from pansharp_iqa import tiled

    fn = tiled.evaluate_reduced_tiled if resolution == "reduced" else tiled.evaluate_full_tiled
    kw = {k: v for k, v in kw.items() if k != "sensor"} | ({"sensor": "none"} if resolution == "full" else {})
    return fn(*images, tile_size=32, **kw)


def _cli(folder: Path, protocol: str, resolution: str, names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    data, method, out = folder / "data", folder / "m", folder / "out"
    data.mkdir()
    method.mkdir()
    write_toml(data, sensor="none", ratio=RATIO, bits=BITS, resolution=resolution, result_scale="dn")
    for s, inp in scenes(resolution).items():
        keys = {"gt": inp["reference"]} if resolution == "reduced" else {}
        np.savez(data / f"{s}.npz", ms=inp["ms"], pan=inp["pan"], **keys)
        np.save(method / f"{s}.npy", inp["fused"])
    code = main(["evaluate", str(data), str(method), "--out", str(out), "--protocol", protocol,
                 "--indexes", ",".join(n.lower() for n in names), "--format", "csv", "--no-progress"])
    assert code == 0
    with open(out / "results.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["status"] for r in rows] == ["ok"] * len(SCENES), rows
    return {r["scene"]: {n: float(r[n]) for n in names} for r in rows}


@pytest.fixture(scope="module")
def via(tmp_path_factory):
    """``via(path, protocol, resolution)``: the group's values on each scene through one path (cached)."""
    cache: dict[tuple[str, str, str], Any] = {}

    def run(path: str, protocol: str, resolution: str) -> dict[str, dict[str, float]]:
        key = (path, protocol, resolution)
        if key not in cache:
            cache[key] = _run(path, protocol, resolution, tmp_path_factory.mktemp(f"{path}-{protocol}-{resolution}"))
        return cache[key]

    return run


def _run(path: str, protocol: str, resolution: str, folder: Path) -> dict[str, dict[str, float]]:
    names = tuple(n for n in GROUPS[(protocol, resolution)] if path not in TILE_PATHS or n not in IN_MEMORY_ONLY)
    kw = _kw(protocol, resolution, names)
    per_scene = {s: _images(resolution, inp) for s, inp in scenes(resolution).items()}
    if path == "alone":
        return {s: {n: float(_evaluate(resolution, *imgs, **{**kw, "indexes": [n]})[n]) for n in names}
                for s, imgs in per_scene.items()}
    if path == "tiled":
        return {s: _values(_evaluate(resolution, *imgs, tiled="always", **kw), names) for s, imgs in per_scene.items()}
    if path == "npy":
        out = {}
        for s, imgs in per_scene.items():
            files = []
            for k, img in enumerate(imgs):
                files.append(folder / f"{s}-{k}.npy")
                np.save(files[-1], img)
            out[s] = _values(_evaluate(resolution, *files, **kw), names)
        return out
    if path == "tiles":
        return {s: _values(_tiles(resolution, imgs, kw), names) for s, imgs in per_scene.items()}
    if path == "host_batch":
        return _per_image(_evaluate(resolution, *_batch(resolution), layout="NCHW", backend="host", **kw), names)
    if path == "torch_batch":
        result = _evaluate(resolution, *_batch(resolution, as_tensor=True), layout="NCHW", backend="torch", **kw)
        assert result["protocol"]["batch"]["backend"] == "torch"
        return _per_image(result, names)
    if path == "accumulator":
        kw = {k: v for k, v in kw.items() if k != "indexes"}
        metric = (pi.ReducedMetrics if resolution == "reduced" else pi.FullMetrics)(
            indexes=list(names), layout="NCHW", backend="host", **kw)
        per_image = _per_image(metric.update(*_batch(resolution)), names)
        means = metric.compute()
        for n in names:  # the accumulated mean is the mean of the per-image values
            assert means[n] == pytest.approx(np.mean([per_image[s][n] for s in SCENES]), rel=1e-12, abs=1e-15), n
        return per_image
    assert path == "cli", path
    return _cli(folder, protocol, resolution, names)


def _torch_refusal(protocol: str, resolution: str) -> str | None:
    """The one-line refusal of ``backend="torch"`` for a protocol it does not compute, else None."""
    names = GROUPS[(protocol, resolution)]
    try:
        _evaluate(resolution, *_batch(resolution, as_tensor=True), layout="NCHW", backend="torch",
                  **_kw(protocol, resolution, names))
    except pi.InputError as err:
        return str(err)
    return None


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("name", "protocol", "resolution"), [c for c in CASES if c[1] is not None],
                         ids=[f"{c[0]}-{c[1]}" for c in CASES if c[1] is not None])
def test_every_index_on_every_path(via, name, protocol, resolution, path):
    if path == "torch_batch":
        pytest.importorskip("torch")
        from pansharp_iqa.settings import full_settings, reduced_settings
        from pansharp_iqa.torch_backend import torch_computes

        settings = (reduced_settings(protocol=protocol, ratio=RATIO, bits=BITS) if resolution == "reduced"
                    else full_settings(sensor="none", ratio=RATIO, bits=BITS, protocol=protocol))
        if not torch_computes(settings):
            message = _torch_refusal(protocol, resolution)
            assert message is not None and "\n" not in message and "backend='host'" in message
            return
    if path in TILE_PATHS and name in IN_MEMORY_ONLY:
        images = _images(resolution, scenes(resolution)["a"])
        with pytest.raises(pi.InputError, match="in memory only") as err:
            _evaluate(resolution, *images, tiled="always", **{**_kw(protocol, resolution, (name,))})
        assert "\n" not in str(err.value)
        return
    got = via(path, protocol, resolution)
    tol = TOLERANCE[path]
    for scene, want in expected(protocol, resolution).items():
        assert got[scene][name] == pytest.approx(want[name], rel=tol, abs=tol), (scene, name, path)

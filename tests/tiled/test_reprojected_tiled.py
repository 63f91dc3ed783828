"""Tile-wise ``reprojected2022`` equals the in-memory protocol (Scarpa & Ciotola 2022) to 1e-9.

Scenes are generated so that the coregistration picks non-zero, per-band different phases (the MS
band b is the protocol's kernel-filtered ground truth decimated at a chosen phase), with sizes that
are not multiples of the tile nor of the 32-sample block at MS scale.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from pansharp_iqa import InputError, evaluate_full, full_settings
from pansharp_iqa.borders import border_index
from pansharp_iqa.mtf import filter_replicate as filter_band
from pansharp_iqa.reprojected.kernels import reprojection_kernels
from pansharp_iqa.sensors import resolve_sensor
from pansharp_iqa.tiled import Scene, TiledJob, evaluate_full_tiled, evaluate_scenes
from pansharp_iqa.tiled import job as plan_job
from pansharp_iqa.tiled.accumulate import combine

from .conftest import make_scene, rel_diff, smooth_field, write_tif

TOL = 1e-9
PROTO = "reprojected2022"
REPRO_QB = full_settings(sensor="QB", protocol=PROTO)  # the settings value, built once
PHASES_4 = [(3, 1), (0, 2), (2, 2), (1, 3)]
PHASES_8 = [(1, 2), (3, 0), (2, 3), (0, 1), (3, 3), (1, 1), (2, 0), (0, 3)]


def shifted_scene(seed: int, h: int, w: int, sensor: str, phases, ratio: int = 4) -> dict[str, np.ndarray]:
    """uint16 scene whose MS band b is the reprojection of the ground truth at phase ``phases[b]``."""
    rng = np.random.default_rng(seed)
    nb = len(phases)
    gt = 900.0 + 1200.0 * smooth_field(rng, h, w, 1, 1.5) + 300.0 * smooth_field(rng, h, w, nb, 1.2)
    gt = np.clip(gt + np.linspace(0.0, 200.0, nb)[None, None, :], 1.0, 2047.0)
    kernels = reprojection_kernels(resolve_sensor(sensor).gnyq_for(nb), ratio)
    ms = np.stack([filter_band(np.ascontiguousarray(gt[:, :, b]), kernels[:, :, b])[pr::ratio, pc::ratio]
                   for b, (pr, pc) in enumerate(phases)], axis=2)
    pan = gt.mean(axis=2) + 5.0 * rng.normal(size=(h, w))
    fused = gt + 15.0 * rng.normal(size=gt.shape)
    return {k: np.round(np.clip(v, 0.0, 2047.0)).astype(np.uint16) for k, v in
            {"fused": fused, "ms": ms, "pan": pan}.items()}


class RecordingArray:
    """Lazy array-like (``.shape``, ``.dtype``, slicing) that records every window read."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.reads: list[tuple[int, int, int, int]] = []

    def __getitem__(self, key):
        rows, cols = key[0], key[1]
        self.reads.append((rows.start, rows.stop, cols.start, cols.stop))
        return self.array[key]


def _values(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "protocol"}


def assert_same(tiled: dict, memory: dict, *, tol: float = TOL) -> dict[str, float]:
    """Every index within ``tol`` relative; the card equal but for ``tiling`` (and the mean
    correlations of the coregistration, which are sums too: equal to 1e-12)."""
    assert set(tiled) == set(memory)
    diffs = {}
    for key, value in _values(memory).items():
        assert isinstance(tiled[key], float)
        diffs[key] = rel_diff(tiled[key], value)
        assert diffs[key] <= tol, (key, tiled[key], value)
    card, mem_card = dict(tiled["protocol"]), dict(memory["protocol"])
    tiling = card.pop("tiling")
    assert tiling["n_tiles"] >= 1 and tiling["tile_size"] % (32 * card["ratio"]) == 0
    rep, mem_rep = dict(card.pop("reprojection")), dict(mem_card.pop("reprojection"))
    corr = np.array(rep.pop("coregistration_correlations"))
    mem_corr = np.array(mem_rep.pop("coregistration_correlations"))
    assert corr.shape == mem_corr.shape
    np.testing.assert_allclose(corr, mem_corr, rtol=1e-12, atol=1e-14)
    assert rep == mem_rep  # shifts included
    assert card == mem_card
    return diffs


@pytest.fixture(scope="module")
def scene4():
    return shifted_scene(1, 300, 280, "QB", PHASES_4)  # MS 75 x 70: Q2n pads both ways (int16 path)


@pytest.fixture(scope="module")
def tifs4(scene4, tmp_path_factory):
    pytest.importorskip("rasterio")
    d = tmp_path_factory.mktemp("repro4")
    return {k: write_tif(d / f"{k}.tif", v, block=64) for k, v in scene4.items()}


@pytest.fixture(scope="module")
def memory4(scene4):
    return evaluate_full(scene4["fused"], scene4["ms"], scene4["pan"], sensor="QB", protocol=PROTO)


@pytest.fixture(scope="module")
def tall_scene():
    # MS 179 x 75: several tiles down the rows, so interior tiles see image rows on both sides
    return shifted_scene(3, 716, 300, "QB", PHASES_4)


def test_reflect_index_is_numpy_reflect():
    for n in (1, 2, 3, 5, 31, 33):
        idx = np.arange(-2 * n - 3, 3 * n + 4)
        a = np.arange(n)
        pad = np.pad(a, (2 * n + 3, 2 * n + 4), mode="reflect")
        np.testing.assert_array_equal(a[border_index(idx, n, "reflect")], pad)


@pytest.mark.parametrize("sensor,phases,size", [("QB", PHASES_4, (300, 280)), ("WV3", PHASES_8, (260, 200))])
def test_geotiff_equals_in_memory_with_nonzero_shifts(sensor, phases, size, tmp_path):
    pytest.importorskip("rasterio")
    s = shifted_scene(1, *size, sensor, phases)
    paths = {k: write_tif(tmp_path / f"{k}.tif", v, block=64) for k, v in s.items()}
    memory = evaluate_full(s["fused"], s["ms"], s["pan"], sensor=sensor, protocol=PROTO)
    assert memory["protocol"]["reprojection"]["shifts"] == [list(p) for p in phases]  # the designed phases
    # pansharp_iqa.evaluate_full dispatches file paths tile-wise (default tile: one 512 tile here)
    dispatched = evaluate_full(paths["fused"], paths["ms"], paths["pan"], sensor=sensor, protocol=PROTO)
    assert "tiling" in dispatched["protocol"]
    assert_same(dispatched, memory)
    tiled = evaluate_full_tiled(paths["fused"], paths["ms"], paths["pan"], sensor=sensor, protocol=PROTO,
                                tile_size=128)
    assert tiled["protocol"]["tiling"]["n_tiles"] == (9 if sensor == "QB" else 6)
    assert_same(tiled, memory)


def test_lazy_array_likes_equal_in_memory(tall_scene):
    s = tall_scene
    memory = evaluate_full(s["fused"], s["ms"], s["pan"], sensor="QB", protocol=PROTO)
    lazy = {k: RecordingArray(v) for k, v in s.items()}
    result = evaluate_full(lazy["fused"], lazy["ms"], lazy["pan"], sensor="QB", protocol=PROTO)  # tile 512: 2 x 1
    assert result["protocol"]["tiling"]["n_tiles"] == 2
    assert_same(result, memory)
    # read window by window, never the whole fused image at once
    assert lazy["fused"].reads and all(r1 - r0 < s["fused"].shape[0] for r0, r1, _, _ in lazy["fused"].reads)


def _rows_read(rec: RecordingArray) -> tuple[int, int]:
    return min(r[0] for r in rec.reads), max(r[1] for r in rec.reads)


def _cols_read(rec: RecordingArray) -> tuple[int, int]:
    return min(r[2] for r in rec.reads), max(r[3] for r in rec.reads)


def test_reads_bounded_by_tile_and_halo(tall_scene):
    s, r, tile_size = tall_scene, 4, 128
    lazy = {k: RecordingArray(v) for k, v in s.items()}
    big_h, big_w = s["pan"].shape
    job = plan_job({k: lazy[k] for k in ("fused", "ms", "pan")}, REPRO_QB, tile_size=tile_size)
    assert len(job.tiles) == 6 * 3

    def run(job, check):
        parts = []
        for tile in job.tiles:
            for rec in lazy.values():
                rec.reads.clear()
            parts.append(job.tile_fn(job.ctx, tile))
            check(tile)
        return job.finalize(combine(parts))

    def within(span, lo, hi):
        return lo <= span[0] and span[1] <= hi

    def check_coreg(tile):
        (R0, R1), (C0, C1) = tile.rows, tile.cols
        assert not lazy["fused"].reads  # pass 1 reads only the MS and the PAN
        # MS: own samples + 2 w = 4 (correlation field); PAN: the same + the kernel's 20 pixels
        assert within(_rows_read(lazy["ms"]), R0 // r - 4, R1 // r + 4)
        assert within(_cols_read(lazy["ms"]), C0 // r - 4, C1 // r + 4)
        assert within(_rows_read(lazy["pan"]), R0 - 16 - 20, R1 + 16 + 20)
        assert within(_cols_read(lazy["pan"]), C0 - 16 - 20, C1 + 16 + 20)

    def check_index(tile):
        (R0, R1), (C0, C1) = tile.rows, tile.cols
        # fused: kernel halo 20 before; after: R-Q's 31 extra MS rows + 20. The last tile also reads
        # the rows Q2n's reflect padding mirrors (at most 32 MS rows above the image end).
        before = 20 + (32 * r if R1 == big_h else 0)
        assert within(_rows_read(lazy["fused"]), R0 - before, R1 + 31 * r + 20)
        before = 20 + (32 * r if C1 == big_w else 0)
        assert within(_cols_read(lazy["fused"]), C0 - before, C1 + 31 * r + 20)
        lo, hi = _rows_read(lazy["fused"])
        assert hi - lo <= tile_size + 31 * r + 40 < big_h  # bounded by the tile, not the scene
        assert within(_rows_read(lazy["ms"]), R0 // r - 32, R1 // r + 31)
        assert within(_rows_read(lazy["pan"]), R0 - 4, R1 + 4)  # D_rho: 2 ceil(ratio/2)
        assert within(_cols_read(lazy["pan"]), C0 - 4, C1 + 4)

    second = run(job, check_coreg)
    assert isinstance(second, TiledJob) and second.ctx.shifts == tuple(PHASES_4)
    result = run(second, check_index)
    assert_same(result, evaluate_full(s["fused"], s["ms"], s["pan"], sensor="QB", protocol=PROTO))


def test_reprojected_pixels_equal_in_memory(scene4, memory4):
    # the per-tile reprojection (41 x 41 kernels with a 20-pixel replicate halo, per-band phase) on
    # every MS position a tile uses equals the in-memory reprojected image pixel by pixel
    from pansharp_iqa.borders import consecutive_runs
    from pansharp_iqa.reprojected import reproject
    from pansharp_iqa.tiled.patch import fetch
    from pansharp_iqa.tiled.reprojected import index_positions, kernel_support, reprojected_at

    s = scene4
    shifts = np.array(memory4["protocol"]["reprojection"]["shifts"])
    job = plan_job({k: s[k] for k in ("fused", "ms", "pan")}, REPRO_QB, tile_size=128)
    ctx = dataclasses.replace(job.ctx, shifts=tuple(map(tuple, shifts.tolist())))
    whole = reproject(s["fused"].astype(np.float64), ctx.kernels, 4, shifts)
    big_h, big_w = s["pan"].shape
    for tile in job.tiles:
        prow, pcol = index_positions(ctx, tile)
        rows, cols = prow.union(), pcol.union()
        fus, _ = fetch(ctx.fused, [kernel_support(a, b, 4, big_h) for a, b in consecutive_runs(rows)],
                       [kernel_support(a, b, 4, big_w) for a, b in consecutive_runs(cols)])
        x = np.moveaxis(reprojected_at(ctx, fus, rows, cols).data, 0, 2)  # band planes
        np.testing.assert_allclose(x, whole[np.ix_(rows, cols)], rtol=1e-13, atol=0)


def test_tile_size_and_workers_do_not_change_numbers(tifs4, memory4):
    f = (tifs4["fused"], tifs4["ms"], tifs4["pan"])
    serial = evaluate_full_tiled(*f, sensor="QB", protocol=PROTO, tile_size=128)
    bigger = evaluate_full_tiled(*f, sensor="QB", protocol=PROTO, tile_size=256)
    pooled = evaluate_full_tiled(*f, sensor="QB", protocol=PROTO, tile_size=128, jobs=2)
    assert serial["protocol"]["tiling"]["n_tiles"] == 9 and bigger["protocol"]["tiling"]["n_tiles"] == 4
    assert _values(pooled) == _values(serial)  # bit-identical
    assert pooled["protocol"] == serial["protocol"]
    for key, value in _values(serial).items():
        assert rel_diff(bigger[key], value) <= TOL, key
    assert_same(serial, memory4)
    assert_same(bigger, memory4)


def test_dask_local_cluster_equals_local_run(tifs4, memory4):
    distributed = pytest.importorskip("distributed")
    f = (tifs4["fused"], tifs4["ms"], tifs4["pan"])
    local = evaluate_full_tiled(*f, sensor="QB", protocol=PROTO, tile_size=128)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl:
        with distributed.Client(cl) as client:
            remote = evaluate_full_tiled(*f, sensor="QB", protocol=PROTO, tile_size=128, scheduler=client)
    assert _values(remote) == _values(local)  # bit-identical
    assert remote["protocol"] == local["protocol"]
    assert_same(remote, memory4)


def test_scenes_mix_protocols_and_passes(tifs4, memory4):
    s = make_scene(37, 256, 224, bands=4)
    scenes = [
        Scene("repro", "full", tifs4["fused"], ms=tifs4["ms"], pan=tifs4["pan"], settings=REPRO_QB),  # the value
        Scene("toolbox", "full", s["fused"], ms=s["ms"], pan=s["pan"], settings=dict(sensor="QB")),
        Scene("bad", "full", tifs4["fused"], ms=tifs4["ms"], pan=tifs4["pan"],
              settings=dict(sensor="QB", protocol=PROTO, bits=10, threshold=True)),  # clip at 2**10: MS exceeds it
    ]
    out = evaluate_scenes(scenes, tile_size=128)
    assert [o.ok for o in out] == [True, True, False]
    assert isinstance(out[2].error, InputError) and "10-bit" in str(out[2].error)
    assert_same(out[0].result, memory4)
    direct = evaluate_full_tiled(s["fused"], s["ms"], s["pan"], sensor="QB", tile_size=128)
    assert _values(out[1].result) == _values(direct)


@pytest.mark.parametrize(
    "case",
    [
        "rows whole, columns partial",  # MS 64 x 50: Q2n's last block column partial, no padding
        "no padding",  # MS 32 x 64: whole blocks, float values
        "ratio 2",
        "ratio 8",
    ],
)
def test_block_layouts_and_ratios(case):
    if case == "rows whole, columns partial":
        s, kw, tile = shifted_scene(5, 256, 200, "QB", PHASES_4), dict(sensor="QB"), 128
    elif case == "no padding":
        s, kw, tile = shifted_scene(6, 128, 256, "QB", PHASES_4), dict(sensor="QB"), 128
    elif case == "ratio 2":
        s, kw, tile = make_scene(13, 200, 134, bands=4, ratio=2), dict(sensor="none", ratio=2, bits=11), 64
    else:
        s, kw, tile = make_scene(13, 520, 296, bands=4, ratio=8), dict(sensor="none", ratio=8, bits=11), 256
    memory = evaluate_full(s["fused"], s["ms"], s["pan"], protocol=PROTO, **kw)
    tiled = evaluate_full_tiled(s["fused"], s["ms"], s["pan"], protocol=PROTO, tile_size=tile, **kw)
    assert tiled["protocol"]["tiling"]["n_tiles"] > 1
    assert_same(tiled, memory)


def test_threshold_and_scale():
    s = shifted_scene(7, 192, 200, "QB", PHASES_4)
    s["ms"] = s["ms"].copy()
    s["ms"][30:40:3, 5:15:3] = 0  # isolated zero-norm MS pixels: no angle, but counted in R-SAM's mean
    f = s["fused"] / 2047.0 * 1.05  # some values above 1: the threshold matters
    kw = dict(sensor="QB", scale=2047.0, threshold=True, protocol=PROTO)
    memory = evaluate_full(f, s["ms"] / 2047.0, s["pan"] / 2047.0, **kw)
    assert_same(evaluate_full_tiled(f, s["ms"] / 2047.0, s["pan"] / 2047.0, tile_size=128, **kw), memory)


def test_all_zero_images_apply_the_global_clip():
    # Sxx / Syy maxima below 1e-20: the upper clip by the global maximum is not a no-op, so the
    # pass is run again with the global maxima
    s = shifted_scene(8, 192, 200, "QB", PHASES_4)
    z = dict(s, ms=np.zeros_like(s["ms"]))  # an all-zero MS: R-ERGAS is undefined, in both paths
    for fn in (evaluate_full, evaluate_full_tiled):
        with pytest.raises(InputError, match="zero mean; ERGAS is undefined"):
            fn(z["fused"], z["ms"], z["pan"], sensor="QB", protocol=PROTO)
    for zero in ("pan",):
        z = dict(s)
        z[zero] = np.zeros_like(s[zero])
        memory = evaluate_full(z["fused"], z["ms"], z["pan"], sensor="QB", protocol=PROTO)
        job = plan_job({k: z[k] for k in ("fused", "ms", "pan")}, REPRO_QB, tile_size=128)
        again = job.finalize(combine([job.tile_fn(job.ctx, t) for t in job.tiles]))
        assert isinstance(again, TiledJob) and again.ctx.coreg_tops is not None and again.ctx.shifts is None
        assert_same(evaluate_full_tiled(z["fused"], z["ms"], z["pan"], sensor="QB", protocol=PROTO, tile_size=128),
                    memory)


def test_same_input_errors_as_in_memory():
    s = shifted_scene(9, 120, 200, "QB", PHASES_4)  # MS 30 x 50: too small for R-Q's 32 window
    for fn in (evaluate_full, evaluate_full_tiled):
        with pytest.raises(InputError, match="too large for images of"):
            fn(s["fused"], s["ms"], s["pan"], sensor="QB", protocol=PROTO)
    s = shifted_scene(9, 160, 160, "QB", PHASES_4)
    for fn in (evaluate_full, evaluate_full_tiled):
        with pytest.raises(InputError, match="exceeds the 10-bit range"):  # bits matter under threshold only
            fn(s["fused"], s["ms"], s["pan"], sensor="QB", bits=10, threshold=True, protocol=PROTO)
        with pytest.raises(InputError, match="fused is on another scale than ms"):
            fn(s["fused"] / 2047.0, s["ms"], s["pan"], sensor="QB", protocol=PROTO)
        with pytest.raises(InputError, match="float data within"):  # everything [0, 1]: pass scale=
            fn(s["fused"] / 2047.0, s["ms"] / 2047.0, s["pan"] / 2047.0, sensor="QB", protocol=PROTO)
        with pytest.raises(ValueError, match="8 bands"):
            fn(s["fused"], s["ms"], s["pan"], sensor="WV3", protocol=PROTO)
    bad = s["fused"].astype(np.float64)
    bad[100, 90, 2] = np.nan
    with pytest.raises(InputError, match="non-finite"):
        evaluate_full_tiled(bad, s["ms"], s["pan"], sensor="QB", protocol=PROTO, tile_size=128)


def test_constant_no_data_area_warns_that_shifts_are_noise():
    """An exactly constant corner (no-data fill) turns the correlation field into rounding noise
    (mean correlations far outside [-1, 1]); both paths say so instead of silently picking shifts,
    while the clean scene gives no such warning."""
    from pansharp_iqa.reprojected.coregistration import CorrelationNoiseWarning

    s = shifted_scene(3, 300, 280, "QB", PHASES_4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorrelationNoiseWarning)
        clean = evaluate_full(s["fused"], s["ms"], s["pan"], sensor="QB", protocol=PROTO)
    assert [tuple(x) for x in clean["protocol"]["reprojection"]["shifts"]] == PHASES_4
    yy, xx = np.mgrid[:300, :280]
    corner = (yy / 300 + xx / 280) > 1.3
    fused, pan, ms = s["fused"].copy(), s["pan"].copy(), s["ms"].copy()
    fused[corner], pan[corner], ms[corner[::4, ::4]] = 0, 0, 0
    with pytest.warns(CorrelationNoiseWarning, match="constant areas"):
        evaluate_full(fused, ms, pan, sensor="QB", protocol=PROTO)
    with pytest.warns(CorrelationNoiseWarning, match="constant areas"):
        evaluate_full_tiled(fused, ms, pan, sensor="QB", protocol=PROTO, tile_size=128)

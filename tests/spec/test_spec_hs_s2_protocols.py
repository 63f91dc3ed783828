"""The ``hyperspectral2024`` and ``sentinel2-2025`` protocols against the reference code's own numbers.

Expected values: ``tests/data/hs_s2/reference.npz``, made by RUNNING the authors' toolboxes
(``matciotola/hyperspectral_pansharpening_toolbox`` 1b2ea9b, ``matciotola/Sentinel2-SR-Toolbox`` d43e106) on
the scenes of ``tests/data/hs_s2/scenes.py`` (see its README): the ``*_shipped`` vectors, i.e. the code as
it is. Every input is rebuilt here bit for bit (synthetic scenes stored; real-data ones from
``../shared/data/imgWV2.mat``, skipped when absent) and checked by SHA-256 against the fixture's record.

Tolerances (relative): 1e-9 where the reference code computes in float64 (ERGAS, SAM, D_sR, R-ERGAS,
R-SAM); 1e-6 of the float32 quantity where it is float32 (Q2n; D_lambda = 1 - Q2n: 1e-6 of Q2n; QNR;
D_rho). Real-data HS reduced-resolution cases: 1e-5 (their fused images depend on the HS degradation,
which that code computes in float32 and truncates to uint16, so a float64 rebuild lands 1 DN away on a
few pixels: README of the fixture), unless the rebuilt products hash equal.
"""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from spec_helpers import REPO_ROOT, arr_close, rel_close, shared_data_dir

FIXTURE = REPO_ROOT / "tests" / "data" / "hs_s2"
if str(FIXTURE) not in sys.path:
    sys.path.insert(0, str(FIXTURE))
import scenes as S  # noqa: E402  (the fixture's own scene builders)

Z = np.load(FIXTURE / "reference.npz")
META = json.loads(str(Z["meta_json"]))
RR = ("ERGAS", "SAM", "Q2n")
HS_FR = ("D_lambda", "D_sR", "QNR")
S2_FR = ("D_lambda", "R-ERGAS", "R-SAM", "D_rho")
FLOAT32 = {"Q2n", "QNR", "D_rho"}  # float32 in the reference code (D_lambda: its Q2n)
FUSED = ("exp", "di", "noisy")
HS, S2 = "hyperspectral2024", "sentinel2-2025"


def check(result, key, columns, *, rtol=None, where=""):
    """Every column of ``result`` against the fixture's ``<key>_shipped`` vector (tolerances: module docstring)."""
    for name, want in zip(columns, Z[key + "_shipped"], strict=True):
        what = f"{key} {name} {where}"
        if rtol is not None:
            rel_close(result[name], want, rtol=rtol, what=what)
        elif name == "D_lambda":  # 1 - Q2n: Q2n is float32
            rel_close(result[name], want, atol=1e-6 * (1.0 - want), what=what)
        else:
            rel_close(result[name], want, rtol=1e-6 if name in FLOAT32 else 1e-9, what=what)


def fused_of(case, exp, detail, ratio):
    """The case's three fused images (the fixture's recipes), each checked against its recorded SHA-256."""
    r = META["fused_recipe"][case]
    out = S.fused_set(exp, detail, ratio, r["seed"], r["amplitude"])
    return out, {f: S.sha256(im) == META["fused_sha256"].get(f"{case}_{f}") for f, im in out.items()}


def sha_ok(case, key, arr):
    return S.sha256(arr) == META["scenes_sha256"][f"{case}_{key}"]


# ---------------------------------------------------------------------------------------------
# synthetic cases (stored in the fixture): reduced resolution
# ---------------------------------------------------------------------------------------------
RR_CASES = {  # case -> (protocol, ratio, detail source of the fused images)
    "hs_syn": (HS, 6, lambda: Z["hs_syn_pan"]),
    "s2_syn_rr20": (S2, 2, lambda: S.s2_detail_pan(Z["s2_syn_rr20_b10lr"], 20)),
    "s2_syn_rr60": (S2, 6, lambda: S.s2_detail_pan(Z["s2_syn_rr60_b10lr"], 60)),
}


def _rr_inputs(case):
    protocol, ratio, detail = RR_CASES[case]
    gt, exp = Z[f"{case}_gt"], Z[f"{case}_exp"]
    fused, same = fused_of(case, exp, detail(), ratio)
    assert all(same.values()), f"{case}: rebuilt fused images differ from the fixture's"
    return protocol, ratio, gt, fused


def _key(case, kind, f):
    return f"hs_syn_{kind}_{f}" if case == "hs_syn" else f"{case}_{f}"


@pytest.mark.parametrize("case", list(RR_CASES))
def test_reduced_resolution_in_memory(piq, case):
    protocol, ratio, gt, fused = _rr_inputs(case)
    for f in FUSED:
        r = piq.evaluate_reduced(fused[f], gt, ratio=ratio, bits=16, protocol=protocol)
        assert tuple(k for k in r if k != "protocol") == ("Q2n", "SAM", "ERGAS")  # the catalogue's report order
        check(r, _key(case, "rr", f), RR)


@pytest.mark.parametrize("case", ["hs_syn", "s2_syn_rr60"])
def test_reduced_resolution_tile_wise(piq, case):
    from pansharp_iqa.tiled import evaluate_reduced_tiled

    protocol, ratio, gt, fused = _rr_inputs(case)
    r = evaluate_reduced_tiled(fused["noisy"], gt, ratio=ratio, bits=16, protocol=protocol, tile_size=32)
    assert r["protocol"]["tiling"]["n_tiles"] == 36
    check(r, _key(case, "rr", "noisy"), RR, where="tile-wise")


def test_reduced_resolution_non_square_tiles_equal_memory_and_kernel(piq):
    """A non-square image: Q2n's swapped padding (spec 1.4 step 4) by the strip pass, the tiles and q2n()."""
    from pansharp_iqa.tiled import evaluate_reduced_tiled

    gt, exp = Z["s2_syn_rr60_gt"][:150, :190], Z["s2_syn_rr60_exp"][:150, :190]
    mem = piq.evaluate_reduced(exp, gt, ratio=6, bits=16, protocol=S2)
    tiles = evaluate_reduced_tiled(exp, gt, ratio=6, bits=16, protocol=S2, tile_size=32)
    q = piq.q2n(gt[10:-11, 10:-11].astype(float), np.clip(exp[10:-11, 10:-11].astype(float), 0, 65536),
                cast="round-half-even", padding="symmetric-swapped", std_floor=1e-10, block_precision="float32")
    assert mem["Q2n"] == q and piq.q2n(gt[10:-11, 10:-11].astype(float), exp[10:-11, 10:-11].astype(float),
                                       cast="round-half-even", block_precision="float32") != q
    for n in RR:
        rel_close(tiles[n], mem[n], rtol=1e-12, what=f"non-square {n}")


# ---------------------------------------------------------------------------------------------
# synthetic cases: full resolution
# ---------------------------------------------------------------------------------------------
def _s2_fr_inputs(group):
    ratio = 2 if group == 20 else 6
    ms, b10 = Z[f"s2_syn_fr_b{group}"], Z["s2_syn_fr_b10"]
    fused, same = fused_of(f"s2_syn_fr{group}", Z[f"s2_syn_fr{group}_exp"], S.s2_detail_pan(b10, group), ratio)
    assert all(same.values())
    return ratio, ms, b10, fused


def test_hs_full_resolution_in_memory_and_tile_wise(piq):
    lr, pan = Z["hs_syn_lr"], Z["hs_syn_pan"]
    fused, same = fused_of("hs_syn", Z["hs_syn_exp"], pan, 6)
    assert all(same.values())
    for f in FUSED:
        r = piq.evaluate_full(fused[f], lr, pan, sensor="PRISMA", protocol=HS)
        assert tuple(k for k in r if k != "protocol") == HS_FR
        check(r, f"hs_syn_fr_{f}", HS_FR)
    r = piq.evaluate_full(fused["di"], lr, pan, sensor="PRISMA", protocol=HS, tiled="always")
    check(r, "hs_syn_fr_di", HS_FR, where="tile-wise")


def test_hs_full_resolution_decimated_operand(piq):
    """The operand of D_lambda: MTF(fused)[3::6, 3::6] (spec 2.2 steps 2-3), via the catalogue's derived image."""
    from pansharp_iqa.indexes.full_pass import Scene
    from pansharp_iqa.settings import full_settings

    settings = full_settings(sensor="PRISMA", protocol=HS)
    fused = Z["hs_syn_exp"].astype(float)
    ctx = settings.chunk_context(settings.ms_gnyq(5), fused.shape)
    scene = Scene.of({"fused": np.moveaxis(fused, 2, 0), "ms": np.moveaxis(Z["hs_syn_lr"].astype(float), 2, 0)}, ctx)
    flr = scene.window("fused_lr", np.arange(32), np.arange(32))
    arr_close(np.moveaxis(flr, 0, 2), Z["hs_syn_fr_exp_flr_shipped"], rtol=1e-13, what="MTF(F)[3::6, 3::6]")


@pytest.mark.parametrize("group", [20, 60])
def test_s2_full_resolution_in_memory(piq, group):
    ratio, ms, b10, fused = _s2_fr_inputs(group)
    for f in FUSED:
        r = piq.evaluate_full(fused[f], ms, b10, sensor=f"S2-{group}", ratio=ratio, protocol=S2, per_band=True)
        assert tuple(k for k in r if k not in ("protocol", "per_band")) == S2_FR
        check(r, f"s2_syn_fr{group}_{f}", S2_FR)
        arr_close(r["per_band"]["D_rho"], Z[f"s2_syn_fr{group}_{f}_drho_bands_shipped"], rtol=1e-6,
                  what="D_rho per band")


def test_s2_full_resolution_tile_wise(piq):
    from pansharp_iqa.tiled import evaluate_full_tiled

    ratio, ms, b10, fused = _s2_fr_inputs(20)
    r = evaluate_full_tiled(fused["noisy"], ms, b10, sensor="S2-20", ratio=ratio, protocol=S2, tile_size=32)
    assert r["protocol"]["tiling"]["n_tiles"] == 9  # 64-pixel tiles: whole 32-pixel blocks at 20 m
    check(r, "s2_syn_fr20_noisy", S2_FR, where="tile-wise")


def test_s2_ratio6_keeps_the_phase_offset(piq):
    """Spec finding 6: the ratio-6 decimation after the half-pixel shift is 2.5 fine pixels off EXP's phase; it
    is kept (EXP's own D_lambda is large), and the start-3 decimation would give another number."""
    ratio, ms, b10, fused = _s2_fr_inputs(60)
    kept = piq.evaluate_full(fused["exp"], ms, b10, sensor="S2-60", ratio=6, protocol=S2)["D_lambda"]
    moved = piq.get_protocol(S2).with_settings(fr_half_shift=False, fr_decimation_start=3)
    other = piq.evaluate_full(fused["exp"], ms, b10, sensor="S2-60", ratio=6, protocol=moved)
    assert kept > 0.8 and other["D_lambda"] < 0.5
    assert other["protocol"]["overrides"] == {"fr_half_shift": False, "fr_decimation_start": 3}


# ---------------------------------------------------------------------------------------------
# the Wald degradation and the reference code's probes
# ---------------------------------------------------------------------------------------------
def test_hs_degradation(piq):
    """HS part of downsample_hs_pan (float32 in its code: 0.05 DN, fixture README finding 2)."""
    from pansharp_iqa.mtf import HS_KERNEL

    lr, _ = piq.wald_degrade(Z["hs_syn_gt"], np.full((1152, 1152), 1000.0), "PRISMA", protocol=HS, cast="none")
    assert np.abs(lr - Z["hs_syn_lr_f32"]).max() < 0.05
    trunc, _ = piq.wald_degrade(Z["hs_syn_gt"], np.full((1152, 1152), 1000.0), "PRISMA", protocol=HS)
    assert np.array_equal(trunc, np.trunc(lr)) and (trunc != Z["hs_syn_lr"]).mean() < 0.01
    pan_lr = piq.decimate(HS_KERNEL.filter(Z["hs_syn_pan"], 0.2, 6), 6)  # the PAN's (PRISMA PAN GNyq 0.2)
    assert np.abs(pan_lr - Z["hs_syn_panlr_f32"]).max() < 0.05


@pytest.mark.parametrize("ratio", [2, 6])
def test_s2_degradation_reproduces_the_helper(piq, ratio):
    """downsample_protocol (its GNyq-0.3 fall-back: sensor 'none'); the fixture stores its products rounded."""
    full = S.s2_synthetic()
    scene = S.s2_crop(full, 192, 192) if ratio == 2 else full
    group = "b20" if ratio == 2 else "b60"
    lr, b10lr = piq.wald_degrade(scene[group], scene["b10"], "none", ratio=ratio, protocol=S2)
    assert np.array_equal(np.round(lr), Z[f"s2_syn_rr{10 * ratio}_{group}lr"])
    assert np.array_equal(np.round(b10lr), Z[f"s2_syn_rr{10 * ratio}_b10lr"])


def test_reference_code_probes(piq):
    from pansharp_iqa.mtf import HS_KERNEL, S2_KERNEL
    from pansharp_iqa.resample import fineshift

    arr_close(piq.interp23tap(Z["interp_r6_in"], 6), Z["interp_r6_out"], rtol=1e-12, what="interp23tap(x, 6)")
    arr_close(piq.interp23tap(Z["interp_r2_in"], 2), Z["interp_r2_out"], rtol=1e-13, what="interp23tap(x, 2)")
    arr_close(fineshift(Z["fineshift_in"], 1, 1), Z["fineshift_out"], rtol=1e-13, what="fineshift")
    # float32 taps: the float64 design goes through numpy's FFT, whose last bits differ between numpy
    # 1.x (C pocketfft) and 2.x (C++ pocketfft), so a tap may round to the neighbouring float32:
    # one float32 ulp (2**-23 relative) is the tolerance, not a rounding of the reference's numbers
    ulp32 = 2.0 ** -23
    arr_close(HS_KERNEL.kernel(0.3, 6), Z["hs_mtf_r6"].astype(np.float32), rtol=ulp32, what="HS kernel (float32 taps)")
    for group, sensor in ((10, "S2-10"), (20, "S2-20"), (60, "S2-60")):
        for r in (2, 6):
            g = piq.get_sensor(sensor).gnyq_for(Z[f"s2_mtf_{group}_r{r}"].shape[2])
            for b, gb in enumerate(g):
                arr_close(S2_KERNEL.kernel(gb, r), Z[f"s2_mtf_{group}_r{r}"][:, :, b].astype(np.float32), rtol=ulp32,
                          what=f"S2 kernel {sensor} ratio {r} band {b}")


# ---------------------------------------------------------------------------------------------
# settings: the card names every setting; the toolbox's choices at these ratios on request
# ---------------------------------------------------------------------------------------------
def test_card_names_every_setting(piq):
    _, _, gt, fused = _rr_inputs("hs_syn")
    card = piq.evaluate_reduced(fused["exp"], gt, ratio=6, bits=16, protocol=HS)["protocol"]
    assert card["name"] == HS and card["dim_cut"] == [10, 11] and card["fused_clip"] == [0.0, 65536.0]
    assert (card["q2n_padding"], card["q2n_std_floor"], card["q2n_precision"], card["sam_zero_norm"]) == (
        "symmetric-swapped", 1e-10, "float32", "zero")
    assert card["q2n_cast"].startswith("round half to even")
    assert card["mtf_kernel"] == {"size": 41, "sigma_form": "2020", "normalise": "none", "raw_at_ratios": [],
                                  "tap_precision": "float32"}
    ratio, ms, b10, fs = _s2_fr_inputs(60)
    fr = piq.evaluate_full(fs["exp"], ms, b10, sensor="S2-60", ratio=6, protocol=S2)["protocol"]
    assert fr["mtf_kernel"]["raw_at_ratios"] == [6] and fr["fr_decimation_start"] == 1 and fr["fr_half_shift"]
    assert fr["d_rho"]["half_width"] == 3 and fr["d_rho"]["references"] == ["B2", "B3", "B4", "B8"]
    assert fr["pan_bands"] == ["B2", "B3", "B4", "B8"]
    rel_close(fr["mtf_kernel_sums"][0], 0.997319, atol=5e-7, what="raw ratio-6 kernel sum (spec 1.1)")


def test_toolbox_choices_on_request_move_the_numbers(piq):
    _, _, gt, fused = _rr_inputs("hs_syn")
    hs = piq.evaluate_reduced(fused["noisy"], gt, ratio=6, bits=16, protocol=HS)
    tb = piq.get_protocol(HS).with_settings(dim_cut=(20, 21), q2n_cast="uint16", q2n_padding="symmetric",
                                            q2n_std_floor=piq.protocols.EPS_STD_FLOOR, q2n_precision="float64",
                                            sam_zero_norm="exclude", rr_fused_clip=None)
    other = piq.evaluate_reduced(fused["noisy"], gt, ratio=6, bits=16, protocol=tb)
    assert abs(other["SAM"] - hs["SAM"]) > 1e-3 and other["Q2n"] != hs["Q2n"]
    assert set(other["protocol"]["overrides"]) == {"dim_cut", "q2n_cast", "q2n_padding", "q2n_std_floor",
                                                  "q2n_precision", "sam_zero_norm", "rr_fused_clip"}
    cut = (slice(20, -21), slice(20, -21))
    g, f = gt[cut].astype(float), fused["noisy"][cut].astype(float)
    rel_close(other["Q2n"], piq.q2n(g, f), rtol=1e-12, what="toolbox Q2n")
    rel_close(other["SAM"], piq.sam(g, f), rtol=1e-12, what="toolbox SAM")


@pytest.mark.parametrize("convention", ["exclude", "zero", "right_angle", "nan"])
def test_sam_zero_norm_setting_on_every_path(piq, convention):
    """hs_syn has a 6 x 6 zero patch (36 zero-norm pixels after the cut): each convention by hand."""
    _, _, gt, fused = _rr_inputs("hs_syn")
    g, f = gt[10:-11, 10:-11].astype(float), np.clip(fused["exp"][10:-11, 10:-11].astype(float), 0, 65536)
    norm = np.linalg.norm(g, axis=2) * np.linalg.norm(f, axis=2)
    zero = norm == 0
    assert zero.sum() == 36
    ang = np.degrees(np.arccos(np.clip((g * f).sum(2)[~zero] / norm[~zero], -1, 1)))
    want = {"exclude": ang.mean(), "zero": ang.sum() / norm.size, "right_angle": (ang.sum() + 36 * 90) / norm.size,
            "nan": np.nan}[convention]
    got = [piq.evaluate_reduced(fused["exp"], gt, ratio=6, bits=16, protocol=HS, sam_zero_norm=convention,
                                tiled=t, indexes=["SAM"])["SAM"] for t in ("never", "always")]
    torch = pytest.importorskip("torch")
    batch = [torch.from_numpy(np.moveaxis(a.astype(float), 2, 0)[None]) for a in (fused["exp"], gt)]
    got.append(float(piq.evaluate_reduced(*batch, ratio=6, bits=16, protocol=HS, sam_zero_norm=convention,
                                          layout="NCHW", backend="torch", indexes=["SAM"])["SAM"][0]))
    for v in got:
        assert np.isnan(v) if convention == "nan" else abs(v - want) <= 1e-12 * want, (convention, got, want)
    card = piq.reduced_settings(ratio=6, bits=16, protocol=HS, sam_zero_norm=convention).card(
        image_shape=[1, 1, 1], evaluated_shape=[1, 1, 1])
    assert card["sam_zero_norm"] == convention


# ---------------------------------------------------------------------------------------------
# real-data cases (rebuilt from ../shared/data/imgWV2.mat; skipped without it)
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wv2():
    data = shared_data_dir()
    if not (data / "imgWV2.mat").is_file():
        pytest.skip(f"real data imgWV2.mat not found in {data} (set PANSHARP_SHARED_DATA)")
    return data


def _hs_exp(piq, lr):
    return np.round(np.clip(piq.interp23tap(lr, 6), 0, 65535)).astype(np.uint16)


@pytest.mark.parametrize("bands", [60, 70, 159])
def test_real_hs_full_resolution(piq, wv2, bands):
    case = f"hs_wv2_b{bands}_fr"
    sc = S.hs_wv2_fr(wv2, bands)
    assert sha_ok(case, "ms_lr", sc["ms_lr"]) and sha_ok(case, "pan", sc["pan"])
    exp = _hs_exp(piq, sc["ms_lr"].astype(float))
    fused, same = fused_of(case, exp, sc["pan"], 6)
    from pansharp_iqa.tiled import evaluate_full_tiled

    for f in FUSED if bands != 159 else ("exp",):
        if bands == 70:  # tile-wise: 192-pixel tiles (whole 32-pixel blocks at the HS scale), 2 x 2 of them
            r = evaluate_full_tiled(fused[f], sc["ms_lr"], sc["pan"], sensor="PRISMA", protocol=HS, tile_size=32)
            assert r["protocol"]["tiling"]["n_tiles"] == 4
        else:
            r = piq.evaluate_full(fused[f], sc["ms_lr"], sc["pan"], sensor="PRISMA", protocol=HS)
        check(r, f"hs_wv2_b{bands}_fr_{f}", HS_FR, rtol=None if same[f] else 1e-5)


@pytest.mark.parametrize("bands", [60, 70])
def test_real_hs_reduced_resolution(piq, wv2, bands):
    case = f"hs_wv2_b{bands}_rr"
    sc = S.hs_wv2_rr(wv2, bands)
    assert sha_ok(case, "gt", sc["gt"]) and sha_ok(case, "pan", sc["pan"])
    lr, pan_lr = piq.wald_degrade(sc["gt"], sc["pan"], "PRISMA", protocol=HS, cast="none")
    exp = _hs_exp(piq, lr)  # the code interpolates HS_lr before its truncation
    fused, same = fused_of(case, exp, np.trunc(pan_lr).astype(np.uint16), 6)
    for f in FUSED if bands == 60 else ("exp",):
        r = piq.evaluate_reduced(fused[f], sc["gt"], ratio=6, bits=16, protocol=HS)
        check(r, f"hs_wv2_b{bands}_rr_{f}", RR, rtol=None if same[f] else 1e-5)


@pytest.mark.parametrize("group", [20, 60])
def test_real_s2(piq, wv2, group):
    ratio = 2 if group == 20 else 6
    real = S.s2_wv2(wv2)
    fr = S.s2_crop(real, 384, 384)
    ms, b10 = fr[f"b{group}"], fr["b10"]
    exp = np.round(np.clip(piq.interp23tap(ms.astype(float), ratio), 0, 65535)).astype(np.uint16)
    fused, same = fused_of(f"s2_wv2_fr{group}", exp, S.s2_detail_pan(b10, group), ratio)
    for f in FUSED:
        r = piq.evaluate_full(fused[f], ms, b10, sensor=f"S2-{group}", ratio=ratio, protocol=S2)
        check(r, f"s2_wv2_fr{group}_{f}", S2_FR, rtol=None if same[f] else 1e-5)
    scene = fr if ratio == 2 else real
    lr, b10lr = piq.wald_degrade(scene[f"b{group}"], scene["b10"], "none", ratio=ratio, protocol=S2)
    lr, b10lr = (np.clip(np.round(x), 0, 65535).astype(np.uint16) for x in (lr, b10lr))
    exp = np.round(np.clip(piq.interp23tap(lr.astype(float), ratio), 0, 65535)).astype(np.uint16)
    fused, same = fused_of(f"s2_wv2_rr{group}", exp, S.s2_detail_pan(b10lr, group), ratio)
    for f in FUSED:
        r = piq.evaluate_reduced(fused[f], scene[f"b{group}"], ratio=ratio, bits=16, protocol=S2)
        check(r, f"s2_wv2_rr{group}_{f}", RR, rtol=None if same[f] else 1e-5)


# ---------------------------------------------------------------------------------------------
# the command line: the toolboxes' file layouts (HS .mat; S2 keys in a one-scene .h5, tile-wise)
# ---------------------------------------------------------------------------------------------
def _cli(tmp_path, toml, files, fused, *flags):
    import csv

    from pansharp_iqa.cli.main import main

    data, method, out = tmp_path / "data", tmp_path / "m", tmp_path / "out"
    data.mkdir()
    method.mkdir()
    (data / "dataset.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in toml.items()), encoding="utf-8")
    files(data)
    np.save(method / "syn.npy", fused)
    assert main(["evaluate", str(data), str(method), "--out", str(out), "--format", "csv,json", "--no-progress",
                 *flags]) == 0
    with open(out / "results.csv", newline="", encoding="utf-8") as fh:
        row = next(csv.DictReader(fh))
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return row, doc["scenes"]["syn"]["m"], out


def test_cli_hyperspectral_mat_layout(piq, tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    _, _, gt, fused = _rr_inputs("hs_syn")

    def files(data):  # the HS toolbox's variables (open_mat: I_GT, I_MS_LR, I_PAN, I_MS, wavelengths, overlap)
        scipy_io.savemat(data / "syn.mat", {"I_GT": gt, "I_MS_LR": Z["hs_syn_lr"], "I_PAN": Z["hs_syn_pan"],
                                            "I_MS": Z["hs_syn_exp"], "wavelengths": np.arange(5.0)[None],
                                            "overlap": np.array([[3]])})

    toml = dict(sensor="PRISMA", ratio=6, bits=16, resolution="reduced", result_scale="dn", protocol=HS)
    row, entry, out = _cli(tmp_path, toml, files, fused["noisy"], "--per-band", "--plots")
    check({k: float(row[k]) for k in RR}, "hs_syn_rr_noisy", RR, where="pansharp-eval")
    assert entry["protocol"]["q2n_padding"] == "symmetric-swapped" and len(entry["per_band"]["ERGAS"]) == 5
    assert (out / "per_band.csv").read_text().count("\n") == 1 + 5
    assert (out / "plots" / "bands_ERGAS.png").is_file()  # the spectrum of the per-band values


def test_cli_sentinel2_h5_bundle_tile_wise(piq, tmp_path):
    h5py = pytest.importorskip("h5py")
    ratio, _, _, fused = _s2_fr_inputs(20)

    def files(data):  # the S2 toolbox's variables (S2_10 in the PAN's place, S2_20 the MS), one scene per file
        with h5py.File(data / "syn.h5", "w") as h:
            for key, group in (("S2_10", "b10"), ("S2_20", "b20"), ("S2_60", "b60")):
                h[key] = Z[f"s2_syn_fr_{group}"]

    toml = dict(sensor="S2-20", ratio=2, bits=16, resolution="full", result_scale="dn", protocol=S2)
    row, entry, _ = _cli(tmp_path, toml, files, fused["noisy"], "--tiled", "always")
    assert entry["protocol"]["evaluation_path"] == "tile-wise"
    check({k: float(row[k]) for k in S2_FR}, "s2_syn_fr20_noisy", S2_FR, where="pansharp-eval")


@pytest.mark.parametrize("case", list(RR_CASES))
def test_the_protocols_fused_clip_applies_on_every_path(piq, case):
    """A fused image with values below 0 and above 2^16 (a network's undershoot and overshoot): every path
    clips it to [0, 2^16] as the reference code does (``rr_fused_clip``), so in memory = tile-wise = the
    in-memory numbers of the image clipped by hand (tile-wise once skipped the clip: SAM moved by 0.06)."""
    protocol, ratio, gt, fused = _rr_inputs(case)
    f = np.array(fused["noisy"], dtype=np.float64)
    f[::7, ::5, 0] = -0.03 * f.max()  # undershoot within the resampling allowance
    f[3::11, 2::9, -1] = 70000.0  # overshoot past 2^16
    want = piq.evaluate_reduced(np.clip(f, 0, 65536.0), gt, ratio=ratio, bits=16, protocol=protocol)
    for tiled in ("never", "always"):
        got = piq.evaluate_reduced(f, gt, ratio=ratio, bits=16, protocol=protocol, tiled=tiled)
        for k in RR:
            assert got[k] == pytest.approx(want[k], rel=1e-12), (tiled, k)


@pytest.mark.parametrize("layout", ["split", "npz"])
@pytest.mark.parametrize("tiled", ["never", "always"])
def test_a_cube_with_more_bands_than_pixels_a_side_is_read_by_the_pans_size(piq, tmp_path, layout, tiled):
    """A full-resolution HS scene whose MS is 32 x 32 x 40 (more bands than pixels a side: its shape alone does
    not tell the band axis): the PAN's size tells it, in memory and tile-wise, for pansharp-eval's evaluate and
    baselines; the same cube stored band-first is read as band-first; without a PAN's size it is refused in one
    line that no longer tells the user to store H x W x B (it is)."""
    from pansharp_iqa.cli.main import main
    from pansharp_iqa.io.orientation import as_hwb

    if layout == "npz" and tiled == "always":
        pytest.skip("an .npz scene is read whole")
    rng = np.random.default_rng(4)
    ms = rng.uniform(200, 900, (32, 32, 40)).round()
    pan = pi_pan = np.kron(ms.mean(axis=2), np.ones((6, 6))) + rng.uniform(0, 2, (192, 192))
    data, method, out = tmp_path / "data", tmp_path / "m", tmp_path / "out"
    data.mkdir()
    method.mkdir()
    if layout == "split":
        np.save(data / "s_ms.npy", ms)
        np.save(data / "s_pan.npy", pan)
    else:
        np.savez(data / "s.npz", ms=ms, pan=pan)
    (data / "dataset.toml").write_text('sensor = "none"\nratio = 6\nbits = 16\nresolution = "full"\n'
                                       'protocol = "hyperspectral2024"\nresult_scale = "dn"\n', encoding="utf-8")
    fused = piq.interp23tap(ms, 6)
    np.save(method / "s.npy", fused)
    assert main(["evaluate", str(data), str(method), "--out", str(out), "--format", "json", "--tiled", tiled,
                 "--no-progress"]) == 0
    got = json.loads((out / "results.json").read_text())["scenes"]["s"]["m"]["metrics"]
    want = piq.evaluate_full(fused, ms, pi_pan, sensor="none", ratio=6, bits=16, protocol=HS)
    assert {k: got[k] for k in HS_FR} == pytest.approx({k: want[k] for k in HS_FR}, rel=1e-12)
    assert main(["baselines", str(data), "--out", str(tmp_path / "b"), "--methods", "EXP"]) == 0
    assert np.load(tmp_path / "b" / "EXP" / "s.npy").shape == (192, 192, 40)
    assert as_hwb(np.moveaxis(ms, 2, 0), name="ms", spatial=(32, 32)).shape == (32, 32, 40)
    with pytest.raises(piq.InputError, match=r"band axis of shape \(32, 32, 40\).*give the scene's PAN"):
        as_hwb(ms, name="ms")

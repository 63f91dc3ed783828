"""How much the ``hyperspectral2024`` / ``sentinel2-2025`` settings move the numbers against the 2020 toolbox's
choices at the same ratios, on the reference fixture's scenes (``tests/data/hs_s2``), and their agreement with
the reference code (in memory and tile-wise).

For each case (the fused images ``exp``, ``di``, ``noisy`` of the fixture's recipes):

* the protocol's numbers next to the reference code's (``*_shipped``): the largest relative difference,
  in memory and tile-wise (``--tiles``: small tiles, many of them);
* each setting switched alone to the 2020 toolbox's choice (``Protocol.with_settings``), and all of them
  together, and ``toolbox2020`` itself: the value of each index.

Usage::

    python benchmarks/hs_s2_differences.py [--data ../shared/data] [--markdown]

Without ``../shared/data`` only the synthetic cases run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import pansharp_iqa as pi
from pansharp_iqa.mtf import TOOLBOX_KERNEL
from pansharp_iqa.protocols import EPS_STD_FLOOR
from pansharp_iqa.tiled import evaluate_full_tiled, evaluate_reduced_tiled

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "hs_s2"
sys.path.insert(0, str(FIXTURE))
import scenes as S  # noqa: E402

Z = np.load(FIXTURE / "reference.npz")
META = json.loads(str(Z["meta_json"]))
HS, S2 = "hyperspectral2024", "sentinel2-2025"
RR = ("ERGAS", "SAM", "Q2n")

#: The 2020 toolbox's choice of each reduced-resolution setting.
TOOLBOX_RR = {
    "dim_cut": (20, 21), "rr_fused_clip": None, "q2n_cast": "uint16", "q2n_padding": "symmetric",
    "q2n_std_floor": EPS_STD_FLOOR, "q2n_precision": "float64", "sam_zero_norm": "exclude",
}


def fused_set(case: str, exp: np.ndarray, detail: np.ndarray, ratio: int) -> dict[str, np.ndarray]:
    r = META["fused_recipe"][case]
    return S.fused_set(exp, detail, ratio, r["seed"], r["amplitude"])


def rr_cases(data: Path | None) -> list[tuple[str, str, int, np.ndarray, dict[str, np.ndarray]]]:
    """(key prefix, protocol, ratio, GT, fused images) of the reduced-resolution cases."""
    out = [("hs_syn_rr", HS, 6, Z["hs_syn_gt"], fused_set("hs_syn", Z["hs_syn_exp"], Z["hs_syn_pan"], 6))]
    for r in (2, 6):
        case = f"s2_syn_rr{10 * r}"
        out.append((case, S2, r, Z[f"{case}_gt"], fused_set(case, Z[f"{case}_exp"],
                                                           S.s2_detail_pan(Z[f"{case}_b10lr"], 10 * r), r)))
    if data is not None:
        for bands in (60, 70):
            sc = S.hs_wv2_rr(data, bands)
            lr, plr = pi.wald_degrade(sc["gt"], sc["pan"], "PRISMA", protocol=HS, cast="none")
            exp = np.round(np.clip(pi.interp23tap(lr, 6), 0, 65535)).astype(np.uint16)
            out.append((f"hs_wv2_b{bands}_rr", HS, 6, sc["gt"],
                        fused_set(f"hs_wv2_b{bands}_rr", exp, np.trunc(plr).astype(np.uint16), 6)))
    return out


def agreement(result: dict, key: str, names: tuple[str, ...]) -> float:
    """The largest relative difference from the reference code's value (D_lambda = 1 - Q2n: relative to Q2n, the
    float32 quantity of that code)."""
    want = Z[key + "_shipped"]
    return max(abs(result[n] - w) / abs(1.0 - w if n == "D_lambda" else w) for n, w in zip(names, want, strict=True))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    args = p.parse_args()
    data = Path(args.data) if (Path(args.data) / "imgWV2.mat").is_file() else None

    print("## Reduced resolution: agreement with the reference code (max relative difference of ERGAS, SAM, Q2n)")
    print("| case | fused | in memory | tile-wise (32-px tiles) |")
    print("|---|---|---|---|")
    for prefix, proto, r, gt, fused in rr_cases(data):
        for f, img in fused.items():
            key = f"{prefix}_{f}"
            mem = pi.evaluate_reduced(img, gt, ratio=r, bits=16, protocol=proto)
            til = evaluate_reduced_tiled(img, gt, ratio=r, bits=16, protocol=proto, tile_size=32)
            print(f"| {prefix} | {f} | {agreement(mem, key, RR):.1e} | {agreement(til, key, RR):.1e} |")

    print("\n## Reduced resolution: the 2020 toolbox's choices at the same ratio (noisy fused image)")
    print("| case | setting(s) | ERGAS | SAM (deg) | Q2n |")
    print("|---|---|---|---|---|")
    for prefix, proto, r, gt, fused in rr_cases(data):
        base = pi.get_protocol(proto)
        variants = [("protocol as published", base)]
        variants += [(f"{k} = {v!r}", base.with_settings(**{k: v})) for k, v in TOOLBOX_RR.items()
                     if getattr(base, k) != v]
        variants += [("all of them", base.with_settings(**TOOLBOX_RR)), ("toolbox2020", pi.get_protocol("toolbox2020"))]
        for label, pr in variants:
            res = pi.evaluate_reduced(fused["noisy"], gt, ratio=r, bits=16, protocol=pr)
            print(f"| {prefix} | {label} | {res['ERGAS']:.6f} | {res['SAM']:.6f} | {res['Q2n']:.6f} |")

    print("\n## Full resolution: agreement with the reference code (max relative difference, every index)")
    print("| case | fused | in memory | tile-wise (smallest tiles) |")
    print("|---|---|---|---|")
    for case, proto, sensor, r, names, args, fused in fr_cases(data):
        for f, img in fused.items():
            mem = pi.evaluate_full(img, *args, sensor=sensor, ratio=r, protocol=proto)
            til = evaluate_full_tiled(img, *args, sensor=sensor, ratio=r, protocol=proto, tile_size=32)
            print(f"| {case} | {f} | {agreement(mem, f'{case}_{f}', names):.1e} | "
                  f"{agreement(til, f'{case}_{f}', names):.1e} ({til['protocol']['tiling']['n_tiles']} tiles) |")

    print("\n## Full resolution: the 2020 toolbox's choices at the same ratio (noisy fused image)")
    for case, proto, sensor, r, names, args, fused in fr_cases():
        base = pi.get_protocol(proto)
        print(f"\n{case} (ratio {r})\n\n| setting(s) | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        every = {**TOOLBOX_FR, "fr_decimation_start": r // 2}
        variants = [("protocol as published", base)]
        variants += [(f"{k} = {v!r}" if k != "mtf" else "mtf = toolbox kernel (raw, float64 taps)",
                      base.with_settings(**{k: v})) for k, v in every.items() if getattr(base, k) != v]
        variants += [("all of them", base.with_settings(**every))]
        for label, pr in variants:
            res = pi.evaluate_full(fused["noisy"], *args, sensor=sensor, ratio=r, protocol=pr)
            print(f"| {label} | " + " | ".join(f"{res[n]:.6f}" for n in names) + " |")
        if proto == HS:
            tb = pi.evaluate_full(fused["noisy"], *args, sensor=sensor, ratio=r, protocol="toolbox2020")
            print("\ntoolbox2020 at ratio 6 (its own indexes; EXP = the ratio-6 composite): "
                  + ", ".join(f"{k} {v:.6f}" for k, v in tb.items() if k != "protocol"))


#: The 2020 toolbox's choice of the full-resolution settings (start: ratio // 2, filled in per ratio).
TOOLBOX_FR = {"mtf": TOOLBOX_KERNEL, "q2n_cast": "uint16", "q2n_padding": "symmetric", "q2n_std_floor": EPS_STD_FLOOR,
              "q2n_precision": "float64", "sam_zero_norm": "exclude", "fr_half_shift": False}


def fr_cases(data: Path | None = None) -> list[tuple]:
    """(case, protocol, sensor, ratio, index names, (ms, pan), fused images) of the full-resolution cases."""
    lr, pan, b10 = Z["hs_syn_lr"], Z["hs_syn_pan"], Z["s2_syn_fr_b10"]
    hs_names, s2_names = ("D_lambda", "D_sR", "QNR"), ("D_lambda", "R-ERGAS", "R-SAM", "D_rho")
    out = [("hs_syn_fr", HS, "PRISMA", 6, hs_names, (lr, pan), fused_set("hs_syn", Z["hs_syn_exp"], pan, 6))]
    for group, r in ((20, 2), (60, 6)):
        case = f"s2_syn_fr{group}"
        out.append((case, S2, f"S2-{group}", r, s2_names, (Z[f"s2_syn_fr_b{group}"], b10),
                    fused_set(case, Z[f"{case}_exp"], S.s2_detail_pan(b10, group), r)))
    if data is not None:
        for bands in (60, 70, 159):
            sc = S.hs_wv2_fr(data, bands)
            exp = np.round(np.clip(pi.interp23tap(sc["ms_lr"].astype(float), 6), 0, 65535)).astype(np.uint16)
            fused = fused_set(f"hs_wv2_b{bands}_fr", exp, sc["pan"], 6)
            out.append((f"hs_wv2_b{bands}_fr", HS, "PRISMA", 6, hs_names, (sc["ms_lr"], sc["pan"]),
                        fused if bands != 159 else {"exp": fused["exp"]}))
        fr = S.s2_crop(S.s2_wv2(data), 384, 384)
        for group, r in ((20, 2), (60, 6)):
            exp = np.round(np.clip(pi.interp23tap(fr[f"b{group}"].astype(float), r), 0, 65535)).astype(np.uint16)
            out.append((f"s2_wv2_fr{group}", S2, f"S2-{group}", r, s2_names, (fr[f"b{group}"], fr["b10"]),
                        fused_set(f"s2_wv2_fr{group}", exp, S.s2_detail_pan(fr["b10"], group), r)))
    return out


if __name__ == "__main__":
    main()

"""The misregistration sensitivity of docs/misregistration.md, measured on the real WorldView-2 scene.

Reads ``imgWV2.mat`` (GRIP-UNINA, non-profit licence: read from where it lies, never copied; ``I_MS`` 320 x 320 x 8,
``I_PAN`` 1280 x 1280, 11-bit DN) from the path given, crops an MS window and its PAN, fuses it with three
baselines (GSA, MTF-GLP-HPM, BT-H; sensor WV2) and prints, per full-resolution index, the values unshifted, the
largest change of each method over the shifts -1, -1/2, +1/2, +1 PAN pixel along rows and columns, and the ranking
changes (:func:`pansharp_iqa.misregistration_sensitivity`), with the wall time.

Run: ``python benchmarks/misregistration_wv2.py ../shared/data/imgWV2.mat [--crop ROW COL SIZE]`` (MS pixels;
``--crop 0 0 320``: the whole scene).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.io

import pansharp_iqa as pi
from pansharp_iqa.baselines import bt_h, gsa, mtf_glp_hpm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mat", help="path of imgWV2.mat")
    parser.add_argument("--crop", type=int, nargs=3, default=(128, 128, 64), metavar=("ROW", "COL", "SIZE"),
                        help="MS window (default: 128 128 64)")
    args = parser.parse_args()
    data = scipy.io.loadmat(args.mat)
    r, c, n = args.crop
    ms = np.asarray(data["I_MS"])[r : r + n, c : c + n]
    pan = np.asarray(data["I_PAN"])[4 * r : 4 * (r + n), 4 * c : 4 * (c + n)]
    fused = {name: f(ms, pan, sensor="WV2", ratio=4) for name, f in
             (("GSA", gsa), ("MTF-GLP-HPM", mtf_glp_hpm), ("BT-H", bt_h))}
    t0 = time.perf_counter()
    out = pi.misregistration_sensitivity(fused, ms, pan, sensor="WV2")
    seconds = time.perf_counter() - t0
    methods = out["methods"]
    print(f"WV2 MS[{r}:{r + n}, {c}:{c + n}] ({n} x {n} x 8, PAN {4 * n} x {4 * n}); "
          f"{len(out['labels'])} evaluations x {len(methods)} methods in {seconds:.1f} s\n")
    print("| index | " + " | ".join(f"{m} unshifted | {m} max abs change (rel.)" for m in methods)
          + " | ranking unshifted | ranking changes (shifts, min Kendall tau) |")
    print("|---" * (2 * len(methods) + 3) + "|")
    for name in out["indexes"]:
        v = out["values"][name]
        cells = []
        for j in range(len(methods)):
            rel = out["max_rel_change"][name][j]
            cells += [f"{v[0, j]:.4f}", f"{out['max_abs_change'][name][j]:.4f} ({100 * rel:.1f}%)"]
        order = " > ".join(methods[j] for j in np.argsort(out["ranks"][name][0], kind="stable"))
        flips = [(lab, sw) for lab, sw in zip(out["labels"], out["swaps"][name], strict=True) if sw]
        change = "none" if not flips else "; ".join(
            f"{lab}: " + ", ".join(f"{a}<->{b}" for a, b in sw) for lab, sw in flips) + \
            f" (tau {np.nanmin(out['kendall_tau'][name]):.2f})"
        print(f"| {name} | " + " | ".join(cells) + f" | {order} | {change} |")


if __name__ == "__main__":
    main()

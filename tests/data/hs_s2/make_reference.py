"""Generator of ``reference.npz``: the HS and Sentinel-2 toolboxes' own outputs on the scenes of ``scenes.py``.

NOT run by the tests (documentation of how the committed fixture was made). It needs checkouts of

* ``matciotola/hyperspectral_pansharpening_toolbox`` at commit 1b2ea9b545d28d9d48c5bbd7ff87436087b61a14 ("HS"),
* ``matciotola/Sentinel2-SR-Toolbox`` at commit d43e106d7af21d10000b3a496f3b47767720a389 ("S2"),

and a Python with torch, torchvision, numpy, scipy, PyWavelets and h5py (the toolboxes' imports; the
fixture was made with torch 2.14.1 (CPU), torchvision 0.29.1, numpy 2.4.6, scipy 1.17.1, PyWavelets 1.8.0,
h5py 3.16.0)::

    python tests/data/hs_s2/make_reference.py --hs /path/to/hyperspectral_pansharpening_toolbox \\
        --s2 /path/to/Sentinel2-SR-Toolbox --data /path/to/shared/data --out tests/data/hs_s2/reference.npz

Nothing of the toolboxes is copied: each toolbox runs in its own subprocess (both name their packages
``Metrics`` and ``Utils``) with its root on ``sys.path``; this script imports their functions, calls them on
the scenes and records what they return. Intermediate values are read by wrapping (not replacing) a few
of their callables: ``Q2n.forward`` and ``D_rho.forward`` record their inputs and block maps, and the names
``mtf``, ``mtf_pan``, ``func`` and ``ideal_interpolator`` that ``elaborate_PRISMA_images`` looks up record
what passes through them.

Two variants of every metric: ``shipped`` (the code as it is: torch's default dtype float32, MTF kernels cast
to float32 by ``mtf_kernel_to_torch``) and ``f64`` (torch's default dtype set to float64, which makes the Q2n
block-value tensor, the D_rho stack and the x3 interpolator's sinc taps float64, and ``mtf_kernel_to_torch``
replaced by the same reshape without the float32 cast). Every input is produced once, by the shipped code.
The real-data scenes' inputs and the fused images derived from them are not stored (licence), only their
SHA-256 (``scenes.sha256``), some statistics and the metrics.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import scenes as S  # noqa: E402

HS_COMMIT = "1b2ea9b545d28d9d48c5bbd7ff87436087b61a14"
S2_COMMIT = "d43e106d7af21d10000b3a496f3b47767720a389"
VARIANTS = ("shipped", "f64")
FUSED = ("exp", "di", "noisy")
RR_NAMES = ["ERGAS", "SAM", "Q2n"]
HS_FR_NAMES = ["D_lambda", "D_sR", "QNR"]
S2_FR_NAMES = ["D_lambda", "Repro-ERGAS", "Repro-SAM", "D_rho"]
NOISE_AMPLITUDE = {"hs": 60, "s2": 40}


def F64_RUNS(out):
    """Whether the f64 variant is run for a metric key (all but the real-data HS cases)."""
    return not out.startswith("hs_wv2")


# ============================================================================================ worker side
# (runs in a subprocess whose sys.path starts with one toolbox's root)

def _t(a):
    """rows x cols (x bands) numpy -> 1 x bands x rows x cols float64 tensor."""
    import torch

    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 2:
        a = a[:, :, None]
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(a, -1, 0)[None]))


def _n(t):
    """1 x bands x rows x cols tensor -> rows x cols x bands numpy (dtype kept)."""
    return np.moveaxis(t.detach().cpu().numpy()[0], 0, -1)


class _Rec:
    """Records what passes through wrapped toolbox callables."""

    def __init__(self):
        self.calls = []

    def clear(self):
        self.calls = []

    def get(self, kind):
        return [c for c in self.calls if c[0] == kind]


def _f64_kernel(h):
    """``mtf_kernel_to_torch`` without the float32 cast (the f64 variant)."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(np.expand_dims(np.moveaxis(h, -1, 0), axis=1)).astype(np.float64))


def _install_recorders(rec, toolbox):
    from Metrics import metrics_fr, metrics_rr

    q2n_forward = metrics_rr.Q2n.forward

    def q2n(self, outputs, labels, channels=0):
        o, lab = outputs.detach().clone(), labels.detach().clone()
        q, qmap = q2n_forward(self, outputs, labels, channels)
        rec.calls.append(("q2n", o, lab, q.detach().clone(), qmap.detach().clone()))
        return q, qmap

    metrics_rr.Q2n.forward = q2n
    if toolbox == "s2":
        drho_forward = metrics_fr.D_rho.forward

        def drho(self, outputs, labels):
            d, per_band = drho_forward(self, outputs, labels)
            rec.calls.append(("drho", d.detach().clone(), per_band.detach().clone(), self.scale))
            return d, per_band

        metrics_fr.D_rho.forward = drho


def _set_variant(variant, toolbox):
    import torch

    if variant == "shipped":
        return
    torch.set_default_dtype(torch.float64)
    import Metrics.evaluation
    import Utils.spectral_tools

    mods = [Utils.spectral_tools, Metrics.evaluation]
    if toolbox == "s2":
        import Metrics.metrics_fr
        import Utils.pan_generation

        mods += [Metrics.metrics_fr, Utils.pan_generation]
    for m in mods:
        m.mtf_kernel_to_torch = _f64_kernel


def _interp_probes(out, variant):
    """The ideal interpolator at ratio 6 on the probe image, and the x3 stage's 1-D impulse response."""
    import torch
    from Utils.interpolator_tools import ideal_interpolator, interp_3x_1d

    out["interp_r6_out"] = _n(ideal_interpolator(_t(_probe("interp_r6_in")), 6))
    imp = np.zeros(101)
    imp[50] = 1.0
    out["interp3_impulse_out"] = interp_3x_1d(torch.from_numpy(imp)[None, None, None, :], 30)[0, 0, 0].numpy()
    out["interp_r6_dtype_f32_input"] = np.array(str(ideal_interpolator(torch.zeros(1, 1, 31, 31,
                                                                                   dtype=torch.float32), 6).dtype))


def _probe(name):
    """Small seeded probe inputs (ours): float64, smooth plus texture, shapes chosen to be non-square."""
    if name == "interp_r6_in":
        a = S.smooth_field(901, (31, 34), 3, 100, 4000, passes=2) + S.uniform_int(902, (31, 34), 0, 400)
        return (a[:, :, None] + S.uniform_int(903, (31, 34, 1), 0, 999) / 1000.0).astype(np.float64)
    if name in ("interp_r2_in", "fineshift_in"):
        seed = 911 if name == "interp_r2_in" else 921
        a = np.stack([S.smooth_field(seed + b, (20, 24), 3, 100, 4000, passes=2) for b in range(2)], axis=-1)
        return (a + S.uniform_int(seed + 5, (20, 24, 2), 0, 999) / 1000.0).astype(np.float64)
    raise KeyError(name)


def _hs_task(task, arr, out, rec, variant):
    import torch

    op, key = task["op"], task.get("key", "")
    if op == "kernels":
        from Utils.spectral_tools import gen_mtf, gen_mtf_pan

        k3 = gen_mtf(6, "PRISMA", nbands=3)
        assert np.array_equal(k3[:, :, 0], k3[:, :, 2])
        out["hs_mtf_r6"] = k3[:, :, 0]
        out["hs_mtf_pan_r6"] = gen_mtf_pan(6, "PRISMA")[:, :, 0]
        out["hs_mtf_pan_other_r6"] = gen_mtf_pan(6, "any-other-name")[:, :, 0]
    elif op == "probes":
        _interp_probes(out, variant)
    elif op == "degrade":
        import elaborate_PRISMA_images as E

        real = {"mtf": E.mtf, "mtf_pan": E.mtf_pan, "func": E.func, "ideal_interpolator": E.ideal_interpolator}

        def mtf(img, sensor, ratio, mode="replicate"):
            r = real["mtf"](img, sensor, ratio, mode)
            rec.calls.append(("mtf", r.detach().clone()))
            return r

        def mtf_pan(img, sensor, ratio, mode="replicate"):
            r = real["mtf_pan"](img, sensor, ratio, mode)
            rec.calls.append(("mtf_pan", r.detach().clone()))
            return r

        def interpolate(x, **kw):
            r = real["func"].interpolate(x, **kw)
            rec.calls.append(("interpolate", r.detach().clone(), kw))
            return r

        def ideal(img, ratio):
            rec.calls.append(("ideal_in", img.detach().clone()))
            return real["ideal_interpolator"](img, ratio)

        E.mtf, E.mtf_pan, E.ideal_interpolator = mtf, mtf_pan, ideal
        E.func = types.SimpleNamespace(interpolate=interpolate)
        try:
            rec.clear()
            hs_lr, pan_lr, hs_exp = E.downsample_hs_pan(arr[key + "_gt"], arr[key + "_pan"], 6)
        finally:
            E.mtf, E.mtf_pan, E.ideal_interpolator, E.func = (real["mtf"], real["mtf_pan"],
                                                              real["ideal_interpolator"], real["func"])
        out[key + "_lr"] = hs_lr
        out[key + "_panlr"] = pan_lr
        out[key + "_exp"] = hs_exp
        hs_lp = rec.get("mtf")[0][1]
        out[key + "_lp_mean"] = hs_lp.double().mean(dim=(0, 2, 3)).numpy()
        out[key + "_lp_dtype"] = np.array(str(hs_lp.dtype))
        out[key + "_panlp_mean"] = rec.get("mtf_pan")[0][1].double().mean().numpy()
        lr_f = rec.get("ideal_in")[0][1]          # float32 values of HS_lr before the uint16 truncation
        out[key + "_lr_f32"] = _n(lr_f).astype(np.float32)
        ip = rec.get("interpolate")
        out[key + "_panlr_f32"] = _n(ip[1][1])[:, :, 0].astype(np.float32)
        lp = hs_lp.numpy()[0]
        out[key + "_decimation_is_start3"] = np.array(bool(np.array_equal(_n(ip[0][1]), np.moveaxis(
            lp[:, 3::6, 3::6], 0, -1))))
    elif op == "exp_fr":
        import elaborate_PRISMA_images as E

        out[key + "_exp"] = E.interpolate_hs(arr[key + "_ms_lr"], 6)
    elif op == "eval_rr":
        from Metrics.evaluation import evaluation_rr

        rec.clear()
        v = evaluation_rr(_t(arr[task["fused"]]), _t(arr[task["gt"]]), ratio=6)
        out[task["out"]] = np.array(v, dtype=np.float64)
        out[task["out"] + "_q2nmap"] = rec.get("q2n")[0][4][0].double().numpy()
    elif op == "eval_fr":
        from Metrics.evaluation import evaluation_fr

        rec.clear()
        fused = _t(arr[task["fused"]])
        v = evaluation_fr(fused, _t(arr[task["pan"]]), _t(arr[task["ms_lr"]]), fused.clone(), ratio=6,
                          sensor="PRISMA", overlap=torch.arange(0, 10))
        out[task["out"]] = np.array(v, dtype=np.float64)
        c = rec.get("q2n")[0]
        out[task["out"] + "_q2nmap"] = c[4][0].double().numpy()
        out[task["out"] + "_flr"] = _n(c[1])
    else:
        raise ValueError(op)


def _s2_task(task, arr, out, rec, variant):
    import torch

    op, key = task["op"], task.get("key", "")
    if op == "kernels":
        from Utils.spectral_tools import gen_mtf

        for r in (2, 6):
            for grp in ("10", "20", "60"):
                out[f"s2_mtf_{grp}_r{r}"] = gen_mtf(r, "S2-" + grp)
            out[f"s2_mtf_fallback_r{r}"] = gen_mtf(r, "S2_20", nbands=1)[:, :, 0]
    elif op == "probes":
        from Metrics.coregistration import fineshift
        from Utils.interpolator_tools import ideal_interpolator

        out["interp_r2_out"] = _n(ideal_interpolator(_t(_probe("interp_r2_in")), 2))
        out["fineshift_out"] = _n(fineshift(_t(_probe("fineshift_in")), 1, 1, "cpu"))
        ramp = torch.arange(40, dtype=torch.float64)[None, None, None, :].repeat(1, 1, 40, 1)
        out["fineshift_ramp_row20"] = fineshift(ramp, 1, 1, "cpu")[0, 0, 20].numpy()
        _interp_probes(out, variant)
    elif op == "degrade":
        from Utils.image_preprocessing import downsample_protocol

        r = task["ratio"]
        lr = downsample_protocol(_t(arr[key + "_b10"]), _t(arr[key + "_b20"]), _t(arr[key + "_b60"]), r)
        for name, t in zip(("b10lr", "b20lr", "b60lr"), lr, strict=True):
            out[f"{key}_{name}_float"] = _n(t)
    elif op == "interp":
        from Utils.interpolator_tools import ideal_interpolator

        out[task["out"]] = _n(ideal_interpolator(_t(arr[task["in"]]), task["ratio"]))
    elif op == "eval_rr":
        from Metrics.evaluation import evaluation_rr

        rec.clear()
        v = evaluation_rr(_t(arr[task["fused"]]), _t(arr[task["gt"]]), ratio=task["ratio"])
        out[task["out"]] = np.array(v, dtype=np.float64)
        out[task["out"] + "_q2nmap"] = rec.get("q2n")[0][4][0].double().numpy()
    elif op == "eval_fr":
        from Metrics.evaluation import evaluation_fr

        rec.clear()
        r = task["ratio"]
        v = evaluation_fr(_t(arr[task["fused"]]), _t(arr[task["b10"]]), _t(arr[task["blr"]]), ratio=r,
                          sensor="S2-20" if r == 2 else "S2-60")
        out[task["out"]] = np.array(v, dtype=np.float64)
        c = rec.get("q2n")[0]
        out[task["out"] + "_q2nmap"] = c[4][0].double().numpy()
        out[task["out"] + "_flr"] = _n(c[1])
        d = rec.get("drho")[0]
        out[task["out"] + "_drho_bands"] = d[2][0].double().numpy()
        out[task["out"] + "_drho_halfwidth"] = np.array(d[3])
    else:
        raise ValueError(op)


def worker(args):
    """Subprocess entry: run the tasks of ``args.tasks`` with one toolbox and one variant."""
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(args.root).resolve()))
    rec = _Rec()
    _install_recorders(rec, args.worker)
    _set_variant(args.variant, args.worker)
    tasks = json.loads(Path(args.tasks).read_text())
    out: dict[str, np.ndarray] = {}
    with np.load(args.inputs) as f:
        arr = {k: f[k] for k in f.files}
    run = _hs_task if args.worker == "hs" else _s2_task
    with torch.no_grad():
        for i, task in enumerate(tasks):
            t0 = time.time()
            run(task, arr, out, rec, args.variant)
            print(f"[{args.worker}/{args.variant}] {i + 1}/{len(tasks)} {task.get('op')} "
                  f"{task.get('out', task.get('key', ''))} {time.time() - t0:.1f}s", flush=True)
    out["_versions"] = np.array(json.dumps(_versions()))
    np.savez(args.output, **out)


def _versions():
    import numpy
    import pywt
    import scipy
    import torch
    import torchvision

    return {"torch": torch.__version__, "torchvision": torchvision.__version__, "numpy": numpy.__version__,
            "scipy": scipy.__version__, "pywt": pywt.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "torch_threads": torch.get_num_threads()}


# ============================================================================================ driver side

def cache_key(toolbox, variant, tasks, arrays):
    """Key of a worker call: toolbox, variant, tasks and the inputs' names, dtypes, shapes and SHA-256."""
    h = [toolbox, variant, json.dumps(tasks, sort_keys=True)]
    h += [f"{k}:{arrays[k].dtype.str}:{arrays[k].shape}:{S.sha256(arrays[k])}" for k in sorted(arrays)]
    return hashlib.sha256("\n".join(h).encode()).hexdigest()[:32]


_CALLS = [0]


def _run_worker(toolbox, root, variant, tasks, arrays, tmp, cache=None):
    """Run one worker subprocess (or reuse its cached outputs) and return its outputs."""
    key = cache_key(toolbox, variant, tasks, arrays)
    if cache is not None and (Path(cache) / f"{key}.npz").is_file():
        print(f"[{toolbox}/{variant}] {len(tasks)} tasks: cached {key}", flush=True)
        with np.load(Path(cache) / f"{key}.npz") as f:
            return {k: f[k] for k in f.files}
    _CALLS[0] += 1
    base = Path(tmp) / f"{_CALLS[0]:02d}_{toolbox}_{variant}"
    np.savez(str(base) + "_in.npz", **arrays)
    Path(str(base) + "_tasks.json").write_text(json.dumps(tasks))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", toolbox, "--variant", variant, "--root",
           str(root), "--inputs", str(base) + "_in.npz", "--tasks", str(base) + "_tasks.json",
           "--output", str(base) + "_out.npz"]
    subprocess.run(cmd, check=True, cwd=str(root))
    if cache is not None:
        Path(cache).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(str(base) + "_out.npz", Path(cache) / f"{key}.npz")
    with np.load(str(base) + "_out.npz") as f:
        return {k: f[k] for k in f.files}


def _round_u16(x):
    """round (half to even) and clip to [0, 65535], uint16: how floating products become stored DN here."""
    return np.clip(np.round(x), 0, S.U16_MAX).astype(np.uint16)


def _stats(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "band_mean": a.reshape(-1, a.shape[-1]).mean(axis=0).tolist() if a.ndim == 3
            else [float(a.mean())]}


def build_cases(data_dir):
    """All scenes (synthetic always, real when ``data_dir`` holds imgWV2.mat): name -> dict of arrays."""
    syn_hs = S.hs_synthetic()
    syn_s2 = S.s2_synthetic()
    cases = {"hs_syn": {"gt": syn_hs["gt"], "pan": syn_hs["pan"]}}
    fr = S.s2_crop(syn_s2, 186, 192)
    cases["s2_syn_fr"] = fr
    cases["s2_syn_rr20"] = S.s2_crop(syn_s2, 192, 192)
    cases["s2_syn_rr60"] = syn_s2
    if data_dir is not None and (Path(data_dir) / "imgWV2.mat").is_file():
        for b in (60, 70):
            cases[f"hs_wv2_b{b}_fr"] = S.hs_wv2_fr(data_dir, b)
            cases[f"hs_wv2_b{b}_rr"] = S.hs_wv2_rr(data_dir, b)
        cases["hs_wv2_b159_fr"] = S.hs_wv2_fr(data_dir, 159)
        real = S.s2_wv2(data_dir)
        cases["s2_wv2_fr"] = S.s2_crop(real, 384, 384)
        cases["s2_wv2_rr20"] = S.s2_crop(real, 384, 384)
        cases["s2_wv2_rr60"] = real
    return cases


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hs", help=f"checkout of the HS toolbox (commit {HS_COMMIT})")
    p.add_argument("--s2", help=f"checkout of the S2 toolbox (commit {S2_COMMIT})")
    p.add_argument("--data", default=None, help="shared data directory with imgWV2.mat (real-data cases)")
    p.add_argument("--out", default=str(HERE / "reference.npz"))
    p.add_argument("--cache", default=None, help="directory caching each worker call's outputs (re-runs)")
    p.add_argument("--worker", choices=("hs", "s2"), help=argparse.SUPPRESS)
    p.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    p.add_argument("--inputs", help=argparse.SUPPRESS)
    p.add_argument("--tasks", help=argparse.SUPPRESS)
    p.add_argument("--output", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return
    if not (args.hs and args.s2):
        p.error("--hs and --s2 are required")
    t_start = time.time()
    cases = build_cases(args.data)
    store: dict[str, np.ndarray] = {}          # what goes into the fixture
    meta: dict = {"hs_commit": HS_COMMIT, "s2_commit": S2_COMMIT, "scenes_sha256": {}, "products_sha256": {},
                  "fused_sha256": {}, "stats": {}, "real_data": any(k.startswith(("hs_wv2", "s2_wv2")) for k in cases),
                  "noise_amplitude": NOISE_AMPLITUDE, "fused_recipe": {},
                  "cases": {n: {k: list(v.shape) for k, v in c.items()} for n, c in cases.items()},
                  "f64_variant_skips": "hs_wv2_* (real-data HS cases: shipped variant only)"}
    for name, c in cases.items():
        for k, v in c.items():
            meta["scenes_sha256"][f"{name}_{k}"] = S.sha256(v)

    with tempfile.TemporaryDirectory() as tmp:
        # ---------------------------------------------------------------- phase 1: HS products (shipped code)
        arr, tasks = {}, [{"op": "kernels"}, {"op": "probes"}]
        for name in [n for n in cases if n.startswith("hs_") and (n == "hs_syn" or n.endswith("_rr"))]:
            arr[name + "_gt"], arr[name + "_pan"] = cases[name]["gt"], cases[name]["pan"]
            tasks.append({"op": "degrade", "key": name})
        for name in [n for n in cases if n.startswith("hs_wv2") and n.endswith("_fr")]:
            arr[name + "_ms_lr"] = cases[name]["ms_lr"]
            tasks.append({"op": "exp_fr", "key": name})
        hs1 = _run_worker("hs", args.hs, "shipped", tasks, arr, tmp, args.cache)
        hs1_f64 = _run_worker("hs", args.hs, "f64", [{"op": "probes"}], {}, tmp, args.cache)
        # ---------------------------------------------------------------- phase 1: S2 products (shipped code)
        arr, tasks = {}, [{"op": "kernels"}, {"op": "probes"}]
        s2_rr = {"s2_syn_rr20": 2, "s2_syn_rr60": 6, "s2_wv2_rr20": 2, "s2_wv2_rr60": 6}
        for name, r in s2_rr.items():
            if name in cases:
                for g in ("b10", "b20", "b60"):
                    arr[f"{name}_{g}"] = cases[name][g]
                tasks.append({"op": "degrade", "key": name, "ratio": r})
        s2a = _run_worker("s2", args.s2, "shipped", tasks, arr, tmp, args.cache)
        s2_f64_probe = _run_worker("s2", args.s2, "f64", [{"op": "probes"}], {}, tmp, args.cache)
        # RR products as stored DN (rounded), then EXP of every S2 case
        s2_in: dict[str, np.ndarray] = {}
        arr, tasks = {}, []
        for name, r in s2_rr.items():
            if name not in cases:
                continue
            grp = "b20" if r == 2 else "b60"
            s2_in[name + "_gt"] = cases[name][grp]
            s2_in[name + "_b10lr"] = _round_u16(s2a[name + "_b10lr_float"])
            s2_in[f"{name}_{grp}lr"] = _round_u16(s2a[f"{name}_{grp}lr_float"])
            meta["stats"][f"{name}_{grp}lr_float"] = _stats(s2a[f"{name}_{grp}lr_float"])
            meta["stats"][name + "_b10lr_float"] = _stats(s2a[name + "_b10lr_float"])
            arr[name + "_mslr"] = s2_in[f"{name}_{grp}lr"]
            tasks.append({"op": "interp", "in": name + "_mslr", "out": name + "_expf", "ratio": r})
        for name in ("s2_syn_fr", "s2_wv2_fr"):
            if name in cases:
                for g in ("b10", "b20", "b60"):
                    s2_in[f"{name}_{g}"] = cases[name][g]
                for g, r in (("b20", 2), ("b60", 6)):
                    arr[f"{name}_{g}"] = cases[name][g]
                    tasks.append({"op": "interp", "in": f"{name}_{g}", "out": f"{name}{g[1:]}_expf", "ratio": r})
        s2b = _run_worker("s2", args.s2, "shipped", tasks, arr, tmp, args.cache)

        # ---------------------------------------------------------------- fused images (scenes.py recipes)
        hs_eval: dict[str, np.ndarray] = {}
        hs_tasks: list[dict] = []
        seed = 0
        for name in [n for n in cases if n.startswith("hs_")]:
            seed += 1
            if name == "hs_syn" or name.endswith("_rr"):
                gt, exp, pan_rr = cases[name]["gt"], hs1[name + "_exp"], hs1[name + "_panlr"]
                pan_fused = cases[name]["pan"] if name == "hs_syn" else pan_rr
                fused = S.fused_set(exp, pan_fused, 6, 100 + seed, NOISE_AMPLITUDE["hs"])
                meta["fused_recipe"][name] = {"exp": name + "_exp (downsample_hs_pan)", "ratio": 6,
                                              "pan": "scene pan" if name == "hs_syn" else name + "_panlr",
                                              "seed": 100 + seed, "amplitude": NOISE_AMPLITUDE["hs"]}
                hs_eval[name + "_gt"] = gt
                for f, im in fused.items():
                    hs_eval[f"{name}_{f}"] = im
                    meta["fused_sha256"][f"{name}_{f}"] = S.sha256(im)
                    hs_tasks.append({"op": "eval_rr", "fused": f"{name}_{f}", "gt": name + "_gt",
                                     "out": f"{name.removesuffix('_rr')}_rr_{f}"})
                for k in ("_lr", "_panlr", "_exp"):
                    meta["products_sha256"][name + k] = S.sha256(hs1[name + k])
                meta["stats"][name + "_lr"] = _stats(hs1[name + "_lr"])
                meta["stats"][name + "_lr_f32"] = _stats(hs1[name + "_lr_f32"])
                meta["stats"][name + "_panlr_f32"] = _stats(hs1[name + "_panlr_f32"])
                meta["stats"][name + "_exp"] = _stats(hs1[name + "_exp"])
                meta["stats"][name + "_lp_mean"] = hs1[name + "_lp_mean"].tolist()
                meta["stats"][name + "_panlp_mean"] = float(hs1[name + "_panlp_mean"])
                meta["stats"][name + "_decimation_is_start3"] = bool(hs1[name + "_decimation_is_start3"])
                if name == "hs_syn":      # the synthetic pair is also evaluated at full resolution
                    hs_eval["hs_syn_pan"], hs_eval["hs_syn_mslr"] = cases[name]["pan"], hs1["hs_syn_lr"]
                    for f in FUSED:
                        hs_tasks.append({"op": "eval_fr", "fused": f"hs_syn_{f}", "pan": "hs_syn_pan",
                                         "ms_lr": "hs_syn_mslr", "out": f"hs_syn_fr_{f}"})
            else:
                exp = hs1[name + "_exp"]
                fused = S.fused_set(exp, cases[name]["pan"], 6, 100 + seed, NOISE_AMPLITUDE["hs"])
                meta["fused_recipe"][name] = {"exp": "interpolate_hs(ms_lr, 6)", "ratio": 6, "pan": "scene pan",
                                              "seed": 100 + seed, "amplitude": NOISE_AMPLITUDE["hs"]}
                hs_eval[name + "_pan"], hs_eval[name + "_mslr"] = cases[name]["pan"], cases[name]["ms_lr"]
                meta["products_sha256"][name + "_exp"] = S.sha256(exp)
                meta["stats"][name + "_exp"] = _stats(exp)
                if name == "hs_wv2_b159_fr":     # run time: EXP only
                    fused = {"exp": fused["exp"]}
                for f, im in fused.items():
                    hs_eval[f"{name}_{f}"] = im
                    meta["fused_sha256"][f"{name}_{f}"] = S.sha256(im)
                    hs_tasks.append({"op": "eval_fr", "fused": f"{name}_{f}", "pan": name + "_pan",
                                     "ms_lr": name + "_mslr", "out": f"{name.removesuffix('_fr')}_fr_{f}"})
        s2_eval = dict(s2_in)
        s2_tasks: list[dict] = []
        for name, r in s2_rr.items():
            if name not in cases:
                continue
            seed += 1
            exp = _round_u16(s2b[name + "_expf"])
            meta["stats"][name + "_expf"] = _stats(s2b[name + "_expf"])
            fused = S.fused_set(exp, S.s2_detail_pan(s2_in[name + "_b10lr"], 10 * r), r, 100 + seed,
                                NOISE_AMPLITUDE["s2"])
            meta["fused_recipe"][name] = {"exp": f"round(ideal_interpolator({name}_{'b20' if r == 2 else 'b60'}lr))",
                                          "ratio": r, "pan": f"s2_detail_pan({name}_b10lr, {10 * r})",
                                          "seed": 100 + seed, "amplitude": NOISE_AMPLITUDE["s2"]}
            for f, im in fused.items():
                s2_eval[f"{name}_{f}"] = im
                meta["fused_sha256"][f"{name}_{f}"] = S.sha256(im)
                s2_tasks.append({"op": "eval_rr", "fused": f"{name}_{f}", "gt": name + "_gt", "ratio": r,
                                 "out": f"{name}_{f}"})
            for k in ("_b10lr", "_b20lr" if r == 2 else "_b60lr"):
                meta["products_sha256"][name + k] = S.sha256(s2_in[name + k])
        for name in ("s2_syn_fr", "s2_wv2_fr"):
            if name not in cases:
                continue
            for g, r in (("20", 2), ("60", 6)):
                seed += 1
                key = f"{name}{g}"
                exp = _round_u16(s2b[key + "_expf"])
                meta["stats"][key + "_expf"] = _stats(s2b[key + "_expf"])
                fused = S.fused_set(exp, S.s2_detail_pan(cases[name]["b10"], int(g)), r, 100 + seed,
                                    NOISE_AMPLITUDE["s2"])
                meta["fused_recipe"][key] = {"exp": f"round(ideal_interpolator({name}_b{g}))", "ratio": r,
                                             "pan": f"s2_detail_pan({name}_b10, {g})", "seed": 100 + seed,
                                             "amplitude": NOISE_AMPLITUDE["s2"]}
                for f, im in fused.items():
                    s2_eval[f"{key}_{f}"] = im
                    meta["fused_sha256"][f"{key}_{f}"] = S.sha256(im)
                    s2_tasks.append({"op": "eval_fr", "fused": f"{key}_{f}", "b10": f"{name}_b10",
                                     "blr": f"{name}_b{g}", "ratio": r, "out": f"{key}_{f}"})

        # ---------------------------------------------------------------- phase 2: metrics, both variants
        # one worker call per case (cache granularity); the f64 variant skips the real-data HS cases (run time:
        # torch's float64 depthwise 41 x 41 convolution is slow on CPU)
        res: dict[str, dict[str, np.ndarray]] = {}
        for v in VARIANTS:
            for tb, tasks, pool in (("hs", hs_tasks, hs_eval), ("s2", s2_tasks, s2_eval)):
                res[f"{tb}_{v}"] = {}
                groups: dict[str, list[dict]] = {}
                for t in tasks:
                    if v == "f64" and not F64_RUNS(t["out"]):
                        continue
                    groups.setdefault(t["out"].rsplit("_", 1)[0], []).append(t)
                for g in groups.values():
                    names = {t[k] for t in g for k in ("fused", "gt", "pan", "ms_lr", "b10", "blr") if k in t}
                    res[f"{tb}_{v}"].update(_run_worker(tb, args.hs if tb == "hs" else args.s2, v, g,
                                                        {k: pool[k] for k in sorted(names)}, tmp, args.cache))

    # ---------------------------------------------------------------- assemble the fixture
    for k in ("hs_mtf_r6", "hs_mtf_pan_r6", "hs_mtf_pan_other_r6"):
        store[k] = hs1[k]
    for k in s2a:
        if k.startswith("s2_mtf_"):
            store[k] = s2a[k]
    store["interp_r6_in"] = _probe("interp_r6_in")
    store["interp_r6_out"] = hs1["interp_r6_out"]
    d = hs1_f64["interp_r6_out"] - hs1["interp_r6_out"]
    meta["interp_r6_f64_minus_shipped"] = {"max_abs": float(np.abs(d).max()), "mean": float(d.mean())}
    meta["interp_r6_s2_equals_hs"] = bool(np.array_equal(s2a["interp_r6_out"], hs1["interp_r6_out"]))
    store["interp3_impulse_out_shipped"] = hs1["interp3_impulse_out"]
    store["interp3_impulse_out_f64"] = hs1_f64["interp3_impulse_out"]
    store["interp_r2_in"] = _probe("interp_r2_in")
    store["interp_r2_out"] = s2a["interp_r2_out"]
    meta["interp_r2_f64_equals_shipped"] = bool(np.array_equal(s2_f64_probe["interp_r2_out"], s2a["interp_r2_out"]))
    store["fineshift_in"] = _probe("fineshift_in")
    store["fineshift_out"] = s2a["fineshift_out"]
    store["fineshift_ramp_row20"] = s2a["fineshift_ramp_row20"]
    meta["fineshift_f64_equals_shipped"] = bool(np.array_equal(s2_f64_probe["fineshift_out"], s2a["fineshift_out"]))
    meta["interp_r6_out_dtype_for_float32_input"] = str(hs1["interp_r6_dtype_f32_input"])
    meta["hs_degradation_lp_dtype"] = str(hs1["hs_syn_lp_dtype"])

    # synthetic inputs and the reference products derived from them (all ours: stored)
    store["hs_syn_gt"], store["hs_syn_pan"] = cases["hs_syn"]["gt"], cases["hs_syn"]["pan"]
    for k in ("_lr", "_lr_f32", "_panlr", "_panlr_f32", "_exp"):
        store["hs_syn" + k] = hs1["hs_syn" + k]
    for k, a in s2_in.items():
        if k.startswith("s2_syn"):
            store[k] = a
    for k, a in s2_eval.items():
        if k.startswith("s2_syn") and k.endswith("_exp"):
            store[k] = a
    # metrics and intermediates
    for v in VARIANTS:
        for tb in ("hs", "s2"):
            for k, a in res[f"{tb}_{v}"].items():
                if k == "_versions":
                    meta[f"versions_{tb}_{v}"] = json.loads(str(a))
                    continue
                if k.endswith("_flr"):
                    base = k[:-4]
                    meta["stats"][f"{base}_flr_{v}"] = _stats(a)
                    if base in ("hs_syn_fr_exp", "s2_syn_fr60_exp"):
                        store[f"{k}_{v}"] = a
                    elif base == "s2_syn_fr20_exp":
                        store[f"{k}_corner_{v}"] = a[:24, :24]
                    continue
                if k.endswith("_q2nmap") and not k.split("_q2nmap")[0].endswith("exp"):
                    continue
                if k.endswith("_drho_halfwidth"):
                    meta["stats"][k] = int(a)
                    continue
                store[f"{k}_{v}"] = np.asarray(a, dtype=np.float64)
    meta["metric_columns"] = {"rr": RR_NAMES, "hs_fr": HS_FR_NAMES, "s2_fr": S2_FR_NAMES}
    meta["seconds"] = round(time.time() - t_start, 1)
    store["meta_json"] = np.array(json.dumps(meta, indent=1, sort_keys=True))
    np.savez_compressed(args.out, **store)
    size = os.path.getsize(args.out)
    print(f"wrote {args.out}: {len(store)} keys, {size / 1e6:.2f} MB, {meta['seconds']} s")


if __name__ == "__main__":
    main()

"""The index catalogue: every index declared once, every declared index reported, every reported
index declared; names in any case; each statistic's backends and derived images as the engines
use them; the extras PSNR and CC against independent implementations (scikit-image, numpy); the
bounded indexes exactly 1.0 on identical images. Every index on every path:
``tests/harness/test_every_path.py``."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from skimage.metrics import peak_signal_noise_ratio

import pansharp_iqa as pi
from pansharp_iqa.indexes import catalog
from pansharp_iqa.reports.latex import render_latex
from pansharp_iqa.reports.summary import METRIC_DIRECTIONS, summarise

SHARED = Path(os.environ.get("PANSHARP_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")


def shared_data_dir() -> Path | None:
    return SHARED if (SHARED / "imgWV2.mat").is_file() else None


@pytest.fixture(scope="module")
def demo():
    from pansharp_iqa.baselines import gsa
    from pansharp_iqa.demo_data import load_demo

    ms, pan = load_demo()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "none", ratio=4)
    return {"ms": ms, "pan": pan, "rr": gsa(ms_lr, pan_lr, ratio=4), "fr": gsa(ms, pan, ratio=4)}


def _all_results(demo):
    out = {}
    for name in pi.list_protocols():
        p = pi.get_protocol(name)
        if p.reduced_indexes:
            out[(name, "reduced")] = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, protocol=name)
        out[(name, "full")] = pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="none", ratio=4, bits=11,
                                               protocol=name)
    return out


def test_every_reported_index_is_declared_and_tables_come_from_the_catalogue(demo):
    declared = set(catalog.index_names())
    for (name, res), result in _all_results(demo).items():
        keys = [k for k in result if k != "protocol"]
        assert set(keys) <= declared, (name, res)
        assert tuple(keys) == tuple(i.name for i in catalog.indexes_of(name, res)), (name, res)
        assert tuple(keys) == pi.get_protocol(name).indexes(res)


def test_every_declared_index_is_reported_somewhere(demo):
    """An index is in a protocol's table or offered on request, and the reports know its direction
    and TeX label (a declaration the reports cannot show fails here)."""
    reachable = {k for r in _all_results(demo).values() for k in r if k != "protocol"}
    for spec in catalog.INDEXES:
        assert spec.name in reachable or spec.on_request, spec.name
        assert METRIC_DIRECTIONS[spec.name] == spec.direction
        assert spec.tex and spec.definition and spec.references, spec.name
        assert all(s in catalog.STATISTICS for s in spec.statistics), spec.name
        assert all(n in catalog.index_names() for n in spec.needs), spec.name
        if spec.engine == "toolbox":
            assert spec.compute is not None and (spec.statistics or spec.needs), spec.name
    extras = [i.name for i in catalog.INDEXES if i.on_request and i.resolution == "reduced" and i.engine == "toolbox"]
    result = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes=["default", *extras])
    assert set(extras) <= set(result)
    records = [{"scene": "a", "method": "m", "status": "ok",
                "metrics": {k: v for k, v in result.items() if k != "protocol"}}]
    tex = render_latex(summarise(records, ["m"]))
    for name in result:
        if name != "protocol":
            assert catalog.tex_label(name) in tex, name


def test_reports_and_protocols_hold_no_second_list_of_indexes():
    """Directions, TeX labels and protocol tables are read from the catalogue only."""
    root = Path(pi.__file__).parent
    for rel in ("protocols.py", "reports/latex.py", "reports/summary.py", "reports/stats.py"):
        text = (root / rel).read_text(encoding="utf-8")
        assert '("Q2n", "Q"' not in text and '("D_lambda", "D_s"' not in text and '"Q2n":' not in text, rel


def test_default_tables_keep_their_cards_and_extras_are_recorded(demo):
    plain = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11)
    same = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes="default")
    assert plain == same and "indexes" not in plain["protocol"]
    extra = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes=["SAM", "PSNR"])
    assert list(extra)[:2] == ["SAM", "PSNR"] and extra["SAM"] == plain["SAM"]
    assert extra["protocol"]["indexes"] == ["SAM", "PSNR"]
    assert "scikit-image" in extra["protocol"]["extra_indexes"]["PSNR"]
    sub = pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="none", ratio=4, bits=11, indexes=["D_s"])
    full = pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="none", ratio=4, bits=11)
    assert list(sub) == ["D_s", "protocol"] and sub["D_s"] == full["D_s"]
    assert "d_lambda_k" not in sub["protocol"]


@pytest.mark.parametrize("indexes, match", [
    (["PSNRR"], "unknown index 'PSNRR'"),
    (["QNR"], "full-resolution index"),
    ([], "at least one"),
])
def test_wrong_index_requests_are_refused(demo, indexes, match):
    with pytest.raises(pi.InputError, match=match):
        pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes=indexes)


def test_extras_are_not_offered_where_the_engine_cannot_compute_them(demo):
    with pytest.raises(pi.InputError, match="reduced-resolution index"):
        pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="none", ratio=4, bits=11, indexes=["PSNR"])
    with pytest.raises(pi.InputError, match="does not compute HQNR"):
        pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="none", ratio=4, bits=11,
                         protocol="toolbox2015", indexes=["HQNR"])


def _cut(x):
    return x[20:-21, 20:-21].astype(np.float64)


def _independent(ref, fus, peak):
    r, f = _cut(ref), _cut(fus)
    ccs = [np.corrcoef(r[..., b].ravel(), f[..., b].ravel())[0, 1] for b in range(r.shape[2])]
    return peak_signal_noise_ratio(r, f, data_range=peak), float(np.mean(ccs))


def test_psnr_and_cc_equal_scikit_image_and_numpy(demo):
    got = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes=["PSNR", "CC"])
    psnr, cc = _independent(demo["ms"], demo["rr"], 2047)
    assert got["PSNR"] == pytest.approx(psnr, rel=1e-12)
    assert got["CC"] == pytest.approx(cc, rel=1e-12)
    # [0, 1] network outputs brought to DN with scale: the PSNR of the [0, 1] data with peak 1
    unit = pi.evaluate_reduced(demo["rr"] / 2047, demo["ms"] / 2047, ratio=4, bits=11, scale=2047,
                               indexes=["PSNR", "CC"])
    assert unit["PSNR"] == pytest.approx(peak_signal_noise_ratio(_cut(demo["ms"] / 2047), _cut(demo["rr"] / 2047),
                                                                 data_range=1.0), rel=1e-12)
    assert unit["CC"] == pytest.approx(cc, rel=1e-12)
    # the public functions on whole images
    assert pi.psnr(demo["ms"], demo["rr"], data_range=2047) == pytest.approx(
        peak_signal_noise_ratio(demo["ms"].astype(float), demo["rr"], data_range=2047), rel=1e-12)
    want = np.mean([np.corrcoef(demo["ms"][..., b].ravel(), demo["rr"][..., b].ravel())[0, 1] for b in range(4)])
    assert pi.cc(demo["ms"], demo["rr"]) == pytest.approx(want, rel=1e-12)


def test_cc_refuses_a_constant_band():
    ref = np.random.default_rng(0).integers(1, 2048, (80, 80, 2)).astype(float)
    fus = ref.copy()
    fus[..., 1] = 700.0
    with pytest.raises(pi.InputError, match=r"band\(s\) \[1\] are constant"):
        pi.cc(ref, fus)


@pytest.mark.skipif(shared_data_dir() is None, reason="../shared/data is absent")
def test_psnr_and_cc_on_the_real_worldview2_scene():
    import scipy.io as sio

    from pansharp_iqa.baselines import mtf_glp_hpm

    d = sio.loadmat(shared_data_dir() / "imgWV2.mat")
    ms, pan = d["I_MS"].astype(np.float64), d["I_PAN"].astype(np.float64)
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "WV2")
    fused = mtf_glp_hpm(ms_lr, pan_lr, ratio=4, sensor="WV2")
    got = pi.evaluate_reduced(fused, ms, ratio=4, bits=11, indexes=["PSNR", "CC"])
    psnr, cc = _independent(ms, fused, 2047)
    assert got["PSNR"] == pytest.approx(psnr, rel=1e-12)
    assert got["CC"] == pytest.approx(cc, rel=1e-12)


# --------------------------------------------------------------------------- names in any case


def test_index_names_in_any_case_are_reported_under_their_canonical_names(demo):
    got = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes="q2N,psnr,DEFAULT")
    want = pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes=["Q2n", "PSNR", "default"])
    assert [k for k in got if k != "protocol"] == ["Q2n", "PSNR", "Q", "SAM", "ERGAS", "SCC"]
    assert got == want
    full = pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="none", ratio=4, bits=11, indexes=["qnr"])
    assert list(full) == ["QNR", "protocol"]
    with pytest.raises(pi.InputError, match="unknown index 'q2'"):  # the neighbour: a wrong name is still refused
        pi.evaluate_reduced(demo["rr"], demo["ms"], ratio=4, bits=11, indexes=["q2"])


def test_index_names_differ_in_more_than_their_case():
    names = catalog.index_names()
    assert len({n.casefold() for n in names}) == len(names)


# --------------------------------------------------------------------------- backends and derived images


def test_torch_implementations_are_the_declared_backends():
    """Each statistic declaring ``"torch"`` has its ``stat_<name>``; no device function is undeclared."""
    pytest.importorskip("torch")
    from pansharp_iqa import torch_backend

    declared = {s.name for s in catalog.STATISTICS.values() if "torch" in s.backends}
    defined = {k.removeprefix("stat_") for k in vars(torch_backend) if k.startswith("stat_")}
    assert declared == defined
    assert all(set(s.backends) <= set(catalog.BACKENDS) for s in catalog.STATISTICS.values())
    assert all(set(s.reads) <= {*catalog.DERIVED, *catalog.ROLE_SCALES} for s in catalog.STATISTICS.values())


def _host_only(monkeypatch, name):
    import dataclasses

    monkeypatch.setitem(catalog.STATISTICS, name, dataclasses.replace(catalog.STATISTICS[name], backends=("host",)))


def test_a_statistic_without_a_torch_backend_runs_on_the_host_and_is_recorded(demo, monkeypatch):
    torch = pytest.importorskip("torch")
    _host_only(monkeypatch, "band_moments")
    batch = torch.from_numpy(np.stack([demo["rr"], demo["ms"] * 1.01]))
    ref = torch.from_numpy(np.stack([demo["ms"], demo["ms"]]).astype(np.float64))
    got = pi.evaluate_reduced(batch, ref, ratio=4, bits=11, layout="NHWC", backend="torch", indexes=["CC", "SAM"])
    assert got["protocol"]["batch"]["host_statistics"] == ["band_moments"]
    host = pi.evaluate_reduced(batch.numpy(), ref.numpy(), ratio=4, bits=11, layout="NHWC", backend="host",
                               indexes=["CC", "SAM"])
    np.testing.assert_allclose(got["CC"], host["CC"], rtol=1e-12)
    monkeypatch.undo()  # the neighbour: every statistic on the device, nothing recorded
    plain = pi.evaluate_reduced(batch, ref, ratio=4, bits=11, layout="NHWC", backend="torch", indexes=["CC"])
    assert "host_statistics" not in plain["protocol"]["batch"]


def test_a_full_resolution_statistic_without_a_torch_backend_is_one_line(demo, monkeypatch):
    torch = pytest.importorskip("torch")
    _host_only(monkeypatch, "khan_q2n")
    args = [torch.from_numpy(x.astype(np.float64)) for x in (demo["fr"], demo["ms"], demo["pan"])]
    with pytest.raises(pi.InputError, match=r"^backend='torch' has no device implementation of khan_q2n .*"
                                            r"use backend='host'$"):
        pi.evaluate_full(*args, sensor="none", ratio=4, bits=11, indexes=["HQNR"], backend="torch")
    got = pi.evaluate_full(*args, sensor="none", ratio=4, bits=11, indexes=["QNR"], backend="torch")
    assert got["QNR"] == pytest.approx(pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="none", ratio=4,
                                                        bits=11)["QNR"], rel=1e-10)


@pytest.mark.parametrize(("names", "protocol", "given", "want"), [
    (["D_lambda"], "toolbox2020", False, {"exp", "pan_lr", "pan_lr_exp"}),
    (["D_s"], "toolbox2015", False, {"exp", "pan_mtf"}),
    (["QNR"], "qnr-paper", False, {"pan_lr"}),
    (["D_lambda_K"], "qnr-paper", False, {"exp", "mtf_fused"}),
    (["HQNR"], "qnr-paper", False, {"exp", "pan_lr", "mtf_fused"}),
    (["HQNR"], "toolbox2020", True, {"pan_lr", "pan_lr_exp", "mtf_fused"}),  # the upsampled MS given
])
def test_the_engine_computes_the_derived_images_the_declarations_name(demo, monkeypatch, names, protocol, given, want):
    import dataclasses

    computed = set()
    for name, d in catalog.DERIVED.items():
        if d.compute is not None:
            monkeypatch.setitem(catalog.DERIVED, name, dataclasses.replace(
                d, compute=lambda x, c, n=name, f=d.compute: computed.add(n) or f(x, c)))
    exp = {"ms_exp": pi.interp23tap(demo["ms"], 4)} if given else {}
    pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], sensor="QB", protocol=protocol, indexes=names, **exp)
    assert computed == want
    assert catalog.image_of("low_pan", pi.get_protocol(protocol)) in {*catalog.DERIVED, *catalog.ROLE_SCALES}
    computed.clear()  # D_lambda without a PAN: its band pairs only (no low-pass PAN)
    pi.d_lambda(demo["fr"], demo["ms"], ratio=4, protocol=protocol)
    assert computed == ({"exp"} if pi.get_protocol(protocol).low_res_terms == "exp" else set())


def test_every_derived_image_is_declared_once_with_its_sources_first():
    order = list(catalog.DERIVED)
    for name, d in catalog.DERIVED.items():
        if d.choice is not None:  # an alias: every option is an image
            assert d.compute is None and set(d.options.values()) <= {*catalog.DERIVED, *catalog.ROLE_SCALES}, name
            continue
        assert d.source in catalog.ROLE_SCALES or order.index(d.source) < order.index(name), name
        assert d.scale in ("pan", "ms") and d.compute is not None and d.halo(4) >= 0, name


def test_the_engines_compute_the_exp_only_where_declared(demo, monkeypatch):
    """qnr-paper compares with the MS itself: its QNR needs no EXP; its HQNR does."""
    calls = []
    real = catalog.interp23tap_planes
    monkeypatch.setattr(catalog, "interp23tap_planes", lambda *a: calls.append(1) or real(*a))
    kw = dict(sensor="none", ratio=4, bits=11, protocol="qnr-paper")
    pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], indexes=["QNR"], **kw)
    assert calls == []
    pi.evaluate_full(demo["fr"], demo["ms"], demo["pan"], indexes=["HQNR"], **kw)
    assert calls == [1]


# --------------------------------------------------------------------------- bounded by 1


def _identical_case():
    """An 8-band uint16 scene on which the earlier formulas gave Q2n 1.0000000000000004 and SCC
    0.9999999999999998 for identical images (float rounding around the Cauchy-Schwarz bound)."""
    from scipy import ndimage

    rng = np.random.default_rng(1)
    for seed in range(6):
        nb = [3, 4, 8][seed % 3]
        gt = np.round(ndimage.zoom(rng.uniform(0, 2047, (8, 8, nb)), (12, 12, 1), order=1)
                      + rng.normal(0, rng.uniform(0, 300), (96, 96, nb))).clip(0, 2047)
    return gt.astype(np.uint16)


def test_identical_images_give_exactly_one():
    gt = _identical_case()
    assert np.sqrt(8.0) * np.sqrt(8.0) != 8.0  # the earlier mean-bias term of an 8-band block: rounding
    kw = dict(ratio=4, bits=11, indexes=["Q2n", "Q", "SCC", "CC"])
    for result in (pi.evaluate_reduced(gt, gt, **kw), pi.evaluate_reduced(gt, gt, tiled="always", **kw),
                   pi.evaluate_reduced(gt, gt, protocol="toolbox2015", **kw)):
        assert [result[k] for k in kw["indexes"]] == [1.0, 1.0, 1.0, 1.0]
    assert (pi.q2n(gt, gt), pi.scc(gt, gt), pi.q_index(gt, gt), pi.cc(gt, gt)) == (1.0, 1.0, 1.0, 1.0)
    # the neighbour: a slightly different result stays below 1
    assert pi.evaluate_reduced(gt + 1.0, gt, **kw)["Q2n"] < 1.0


def test_the_bound_removes_rounding_only():
    from pansharp_iqa.indexes.strips import within_unit

    assert within_unit(1.0000000000000004) == 1.0 and within_unit(-1.0000000000000002) == -1.0
    assert within_unit(1.0 + 1e-9) == 1.0 + 1e-9  # not rounding: left for the caller to see
    assert within_unit(0.9999999999999999) == 0.9999999999999999

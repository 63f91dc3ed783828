"""The index catalogue: every index declared once, every declared index reported, every reported
index declared; the extras PSNR and CC against independent implementations (scikit-image, numpy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from skimage.metrics import peak_signal_noise_ratio

import pansharp_iqa as pi
from pansharp_iqa.indexes import catalog
from pansharp_iqa.reports.latex import render_latex
from pansharp_iqa.reports.summary import METRIC_DIRECTIONS, summarise

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"


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
    extras = [i.name for i in catalog.INDEXES if i.on_request]
    assert extras == ["PSNR", "CC", "MPSNR", "RMSE"]
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


def test_extras_tile_wise_equal_in_memory(demo):
    kw = dict(ratio=4, bits=11, indexes=["default", "PSNR", "CC"])
    whole = pi.evaluate_reduced(demo["rr"], demo["ms"], **kw)
    tiles = pi.evaluate_reduced(demo["rr"], demo["ms"], tiled="always", **kw)
    for k in kw["indexes"][1:] + list(pi.get_protocol("toolbox2020").reduced_indexes):
        assert tiles[k] == pytest.approx(whole[k], rel=1e-12), k
    assert tiles["protocol"]["extra_indexes"] == whole["protocol"]["extra_indexes"]


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

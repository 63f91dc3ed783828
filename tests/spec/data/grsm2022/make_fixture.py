"""Generator of ``grsm2022.npz``: the GRSM 2022 full-resolution indexes (RQNR, D_s_R, LSR, HQNR and
the block maps of D_lambda_F, D_lambda_Q and D_s_Q) as the authors' MATLAB code computes them, run
under GNU Octave.

NOT run by the tests (documentation of how the committed fixture was made). It needs GNU Octave (7.3
was used) with the ``image`` and ``signal`` packages, a folder holding the authors' MATLAB functions
(``RQNR.m``, ``HQNR.m``, ``D_lambda_F.m``, ``D_s_R.m``, ``LSR.m``, ``D_lambda_Q.m``, ``D_s_Q.m``; see
FACTS.md beside this file for where they were read) and a checkout of the 2020 Pansharpening Toolbox
(its ``Tools/`` and ``Quality_Indices/``: ``MTF``, ``genMTF``, ``q2n``, ``onions_quality``,
``interp23tap``, ``D_lambda_K``; e.g. the ``02-Test-toolbox-for-traditional-and-DL(Matlab)`` folder of
github liangjiandeng/DLPan-Toolbox)::

    python tests/spec/data/grsm2022/make_fixture.py GRSM_DIR TOOLBOX_DIR \\
        tests/spec/data/grsm2022/grsm2022.npz [SHARED_DATA_DIR]

Nothing of either code base is copied here: Octave runs them on inputs made by
``tests/spec/grsm2022_inputs.py``. The authors' folder comes first on Octave's path (its ``HQNR``, the
map version, shadows the toolbox's). Three MATLAB functions that Octave lacks or defines differently get
stand-ins written below from MATLAB's documentation: ``fwind1`` (the image package has none),
``cov(x, y)`` (Octave 7 returns the covariance only, MATLAB the 2x2 matrix) and ``blockproc`` (Octave's
passes the block's data, MATLAB's a block struct with ``data`` and ``location``, which the authors'
``D_lambda_Q``/``D_s_Q`` read).

Contents (float64; ``<case>`` = ``syn4``, ``syn3``, ``wv2``, ``ik``; ``<f>`` = ``exp``, ``gsa``, ``noisy``):

* ``<case>_sensor``, ``<case>_ratio``, ``<case>_block``; exponents ``alpha_rqnr``, ``beta_rqnr``,
  ``alpha_hqnr``, ``beta_hqnr`` (the code's ``get_alpha_beta`` "overall" values);
* ``<case>_<f>_sha256`` (and ``<case>_ms_sha256``, ``<case>_pan_sha256``): SHA-256 of every input
  (``grsm2022_inputs.sha256_array``); synthetic cases also store the inputs themselves
  (``<case>_ms``, ``<case>_pan``, ``<case>_<f>``);
* scalars ``<case>_<f>_<name>``: ``rqnr``, ``rqnr_ab`` (with the exponents), ``hqnr``, ``hqnr_ab``,
  ``dl_f``, ``ds_r``, ``ds_q``, ``dl_q``, ``d_lambda_k`` (the 2020 toolbox's), ``lsr_w`` (B,),
  ``lsr_res``, ``lsr_cd``, ``lsr_var_pan``;
* block maps (H/S, W/S) ``dl_f_block``, ``ds_q_block``, ``dl_q_block`` (as ``D_lambda_F``, ``D_s_Q``,
  ``D_lambda_Q`` return them);
* PAN-grid maps (H, W): ``ds_r_map`` for every case; for ``gsa`` also ``rqnr_map``, ``hqnr_map`` and
  the resized maps ``dl_f_map_pan``, ``ds_q_map_pan`` (as ``RQNR``/``HQNR`` return them); for the
  synthetic ``gsa`` also ``rqnr_ab_map``, ``hqnr_ab_map``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.io

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/spec: grsm2022_inputs
sys.path.insert(0, str(HERE.parents[3]))  # the repository: pansharp_iqa

import grsm2022_inputs as G  # noqa: E402

#: get_alpha_beta(tag, 'overall'): RQNR (1.81, 0.90), HQNR (0.98, 0.89) (FACTS.md, section 7).
EXPONENTS = {"alpha_rqnr": 1.81, "beta_rqnr": 0.90, "alpha_hqnr": 0.98, "beta_hqnr": 0.89}

FWIND1 = """function h = fwind1(hd, w1)
  n = length(w1); w1 = w1(:).';
  t = (-(n-1)/2:(n-1)/2)*(2/(n-1));
  [t1, t2] = meshgrid(t, t);
  r = sqrt(t1.^2 + t2.^2);
  outside = (r < t(1)) | (r > t(end));
  r(outside) = 0;
  w = reshape(interp1(t, w1, r(:)), size(r));
  w(outside) = 0;
  h = fftshift(ifft2(rot90(fftshift(rot90(hd, 2)), 2))) .* w;
end
"""

COV = """function c = cov(x, y)
  x = x(:); y = y(:);
  a = x - mean(x); b = y - mean(y);
  c = [a'*a, a'*b; b'*a, b'*b] / (numel(x) - 1);
end
"""

BLOCKPROC = """function B = blockproc(A, blk, fun)
  [nr, nc] = size(A(:, :, 1));
  rows = 1:blk(1):nr; cols = 1:blk(2):nc;
  B = [];
  for a = 1:numel(rows)
    r = [];
    for b = 1:numel(cols)
      r0 = rows(a); c0 = cols(b);
      r1 = min(r0 + blk(1) - 1, nr); c1 = min(c0 + blk(2) - 1, nc);
      bs = struct('data', A(r0:r1, c0:c1, :), 'location', [r0 c0], 'blockSize', blk, ...
                  'imageSize', size(A), 'border', [0 0]);
      r = [r, fun(bs)];
    end
    B = [B; r];
  end
end
"""

RUN = """args = argv();
I = load(args{1});
F = I.fused; E = I.exp_; M = I.ms; P = I.pan; r = double(I.ratio); S = double(I.block); s = I.sensor;
o = struct();
[o.rqnr, o.dl_f, o.ds_r, o.rqnr_map, o.dl_f_map_pan, o.ds_r_map] = RQNR(F, E, P, r, S, s, 1, 1);
[o.rqnr_ab, ~, ~, o.rqnr_ab_map] = RQNR(F, E, P, r, S, s, I.alpha_rqnr, I.beta_rqnr);
[o.hqnr, dl_f_h, o.ds_q, o.hqnr_map, dl_f_map_h, o.ds_q_map_pan] = HQNR(F, E, M, P, r, S, s, 1, 1);
[o.hqnr_ab, ~, ~, o.hqnr_ab_map] = HQNR(F, E, M, P, r, S, s, I.alpha_hqnr, I.beta_hqnr);
[dl_f_b, o.dl_f_block] = D_lambda_F(F, E, r, s, S);
[ds_q_b, o.ds_q_block] = D_s_Q(F, E, M, P, r, S);
[o.dl_q, o.dl_q_block] = D_lambda_Q(F, E, M, r, S);
[o.lsr_w, o.lsr_res, o.lsr_cd, cd_map, o.lsr_var_pan, err_reg] = LSR(F, P, S);
o.d_lambda_k = D_lambda_K(F, E, r, s, S);
o.same = [dl_f_h - o.dl_f, max(abs(dl_f_map_h(:) - o.dl_f_map_pan(:))), dl_f_b - o.dl_f, ds_q_b - o.ds_q, ...
          max(abs(cd_map(:) - (1 - o.ds_r_map(:))))];
save('-v7', args{2}, '-struct', 'o');
"""

SCALARS = ("rqnr", "rqnr_ab", "hqnr", "hqnr_ab", "dl_f", "ds_r", "ds_q", "dl_q", "d_lambda_k", "lsr_res",
           "lsr_cd", "lsr_var_pan")


def _octave(tmp: Path, grsm: Path, toolbox: Path, args: list[str]) -> None:
    # packages first, then addpath, which prepends: the last added comes first (stand-ins, then the
    # authors' code, then the toolbox), so the stand-in blockproc shadows the image package's
    folders = [toolbox / "Quality_Indices", toolbox / "Tools", grsm, tmp / "standins"]
    job = tmp / "job.m"
    head = "pkg load image\npkg load signal\n" + "".join(f"addpath('{f}');\n" for f in folders)
    job.write_text(head + RUN, encoding="utf-8")
    subprocess.run(["octave", "--no-gui", "-q", str(job), *args], check=True, capture_output=True)


def _run_case(tmp: Path, grsm: Path, toolbox: Path, sensor: str, ms: np.ndarray, pan: np.ndarray,
              fused: np.ndarray, exp: np.ndarray) -> dict[str, np.ndarray]:
    scipy.io.savemat(tmp / "in.mat", {"fused": fused, "exp_": exp, "ms": ms, "pan": pan, "ratio": float(G.RATIO),
                                      "block": float(G.BLOCK), "sensor": sensor, **EXPONENTS})
    _octave(tmp, grsm, toolbox, [str(tmp / "in.mat"), str(tmp / "out.mat")])
    out = scipy.io.loadmat(tmp / "out.mat")
    same = out.pop("same").ravel()
    assert np.all(same == 0.0), f"the reference code's own outputs disagree: {same}"
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items() if not k.startswith("__")}


def _keep(case: str, fusion: str, out: dict[str, np.ndarray], synthetic: bool) -> dict[str, np.ndarray]:
    keep = {k: out[k].reshape(()) for k in SCALARS}
    keep["lsr_w"] = out["lsr_w"].ravel()
    keep.update({k: out[k] for k in ("dl_f_block", "ds_q_block", "dl_q_block", "ds_r_map")})
    if fusion == "gsa":
        keep.update({k: out[k] for k in ("rqnr_map", "hqnr_map", "dl_f_map_pan", "ds_q_map_pan")})
        if synthetic:
            keep.update({k: out[k] for k in ("rqnr_ab_map", "hqnr_ab_map")})
    return {f"{case}_{fusion}_{k}": v for k, v in keep.items()}


def main(grsm: str, toolbox: str, target: str, shared: str | None = None) -> None:
    shared_dir = Path(shared) if shared else HERE.parents[4] / "shared" / "data"
    fixture: dict[str, np.ndarray] = {k: np.array(v) for k, v in EXPONENTS.items()}
    cases: dict[str, tuple[str, np.ndarray, np.ndarray, bool]] = {}
    for case, (sensor, shape, seed) in G.SYNTHETIC.items():
        ms, pan = G.synthetic_pair(shape, seed)
        cases[case] = (sensor, ms, pan, True)
    for case, (name, sensor, crop) in G.REAL_SCENES.items():
        ms, pan = G.real_pair(scipy.io.loadmat(shared_dir / name), crop)
        cases[case] = (sensor, ms, pan, False)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "standins").mkdir()
        for fname, text in (("fwind1", FWIND1), ("cov", COV), ("blockproc", BLOCKPROC)):
            (tmp / "standins" / f"{fname}.m").write_text(text, encoding="utf-8")
        for case, (sensor, ms, pan, synthetic) in cases.items():
            fused = G.fused_images(ms, pan)
            fixture.update({f"{case}_sensor": np.array(sensor), f"{case}_ratio": np.array(G.RATIO),
                            f"{case}_block": np.array(G.BLOCK), f"{case}_ms_sha256": np.array(G.sha256_array(ms)),
                            f"{case}_pan_sha256": np.array(G.sha256_array(pan))})
            if synthetic:
                fixture.update({f"{case}_ms": ms, f"{case}_pan": pan})
            for fusion, img in fused.items():
                fixture[f"{case}_{fusion}_sha256"] = np.array(G.sha256_array(img))
                if synthetic:
                    fixture[f"{case}_{fusion}"] = img
                out = _run_case(tmp, Path(grsm), Path(toolbox), sensor, ms, pan, img, fused["exp"])
                fixture.update(_keep(case, fusion, out, synthetic))
                shown = {k: round(out[k].item(), 6) for k in ("rqnr", "hqnr", "dl_f", "ds_r", "ds_q")}
                print(case, fusion, shown, flush=True)
    np.savez_compressed(target, **fixture)


if __name__ == "__main__":
    main(*sys.argv[1:])

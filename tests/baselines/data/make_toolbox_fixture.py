"""Generator of ``toolbox_baselines.npz``: the 2020 toolbox's own baselines, run under GNU Octave.

NOT run by the tests (documentation of how the committed fixture was made). It needs GNU Octave
(7.3 was used) with the ``image`` and ``signal`` packages, and a checkout of the toolbox's MATLAB
code -- e.g. the ``02-Test-toolbox-for-traditional-and-DL(Matlab)`` folder of the DLPan-Toolbox
repository (github liangjiandeng/DLPan-Toolbox), which mirrors the 2020 Pansharpening Toolbox
(Vivone et al., IEEE GRSM 9(1), 2021, doi:10.1109/MGRS.2020.3019315)::

    TOOLBOX=/path/to/02-Test-toolbox-for-traditional-and-DL\\(Matlab\\) \\
    PANSHARP_SHARED_DATA=/path/to/shared/data \\
        python tests/baselines/data/make_toolbox_fixture.py tests/baselines/data/toolbox_baselines.npz

Nothing of the toolbox is copied: Octave runs its ``interp23tap``, ``BroveyRegHazeMin`` (BT-H),
``GSA``, ``MTF_GLP_HPM``, ``LPfilterPlusDec``, ``ndwt2_working`` and ``indwt2_working`` on inputs
made here, exactly as its ``Demo_Reduced_Resolution.m`` calls them (``I_MS`` = the EXP image).
Two MATLAB functions that Octave lacks or defines differently get stand-ins written below: the
image package has no ``fwind1`` (the stand-in is MATLAB's documented 1-D-window design: frequency
sampling times the circular window made from the 1-D window, as ``docs/spec`` and
``pansharp_iqa.mtf`` describe it), and Octave 7's ``cov(x, y)`` returns the covariance only, not
MATLAB's 2x2 matrix.

Contents of the fixture (all float64):

* ``<case>_ms``, ``<case>_pan``, ``<case>_ratio``, ``<case>_sensor``: three small synthetic pairs
  (``qb4``: 4 bands ratio 4, sensor QB; ``wv2r2``: 8 bands ratio 2, WV2; ``none3``: 3 bands ratio
  4, generic MTF), and for each ``<case>_<method>`` the toolbox's whole output (EXP, BT-H, GSA,
  MTF-GLP-HPM);
* ``lp_x``, ``lp_full_<r>``, ``lp_dec_<r>`` (r = 2, 4, 8): a random image, the low-pass of
  ``LPfilterPlusDec`` before its decimation (its wavelet calls, its filter bank) and
  ``LPfilterPlusDec`` itself;
* when the shared data are found: ``<scene>_rows``, ``<scene>_cols`` and ``<scene>_<method>`` --
  the toolbox's output at those pixels (all bands) and ``<scene>_<method>_mean`` (band means) for
  the GRIP WorldView-2 scene at reduced resolution (``wv2rr``: Wald protocol with
  :func:`pansharp_iqa.wald_degrade`, sensor WV2, ratio 4) and at full resolution (``wv2fr``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.io

METHODS = {"EXP": "exp_", "BT-H": "bth", "GSA": "gsa", "MTF-GLP-HPM": "hpm"}

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

RUN = """pkg load image
pkg load signal
args = argv();
S = load(args{1});
ms = double(S.ms); pan = double(S.pan); ratio = double(S.ratio); sensor = S.sensor;
exp_ = interp23tap(ms, ratio);
bth = BroveyRegHazeMin(exp_, pan, ratio);
gsa = GSA(exp_, pan, ms, ratio);
hpm = MTF_GLP_HPM(exp_, pan, sensor, ratio);
save('-v7', args{2}, 'exp_', 'bth', 'gsa', 'hpm');
"""

LOWPASS = """pkg load image
args = argv();
S = load(args{1});
h = sqrt(2) * [1 4 6 4 1] / 16; g = sqrt(2) * ([0 0 1 0 0] - [1 4 6 4 1] / 16);
ht = sqrt(2) * [1 4 6 4 1] / 16; gt = sqrt(2) * ([0 0 1 0 0] + [1 4 6 4 1] / 16);
out = struct();
for r = [2 4 8]
  wt = ndwt2_working(S.x, ceil(log2(r)), {h, g, ht, gt});
  for k = 2:numel(wt.dec), wt.dec{k} = zeros(size(wt.dec{k})); end
  out.(sprintf('lp_full_%d', r)) = indwt2_working(wt, 'c');
  out.(sprintf('lp_dec_%d', r)) = LPfilterPlusDec(S.x, r);
end
save('-v7', args{2}, '-struct', 'out');
"""


def _octave(script: str, tmp: Path, toolbox: Path, args: list[str]) -> None:
    path = tmp / "job.m"
    folders = [tmp / "standins", *[toolbox / d for d in ("Tools", "GS", "BT-H", "GLP")]]
    path.write_text("".join(f"addpath('{f}');\n" for f in folders) + script, encoding="utf-8")
    subprocess.run(["octave", "--no-gui", "-q", str(path), *args], check=True, capture_output=True)


def _case(rng: np.random.Generator, h: int, w: int, bands: int, ratio: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy import ndimage

    coarse = rng.random((h // 2 + 1, w // 2 + 1, bands))
    ms = 200.0 + 800.0 * ndimage.zoom(coarse, (2, 2, 1), order=1)[:h, :w] + 60.0 * rng.random((h, w, bands))
    pan = 250.0 + 700.0 * ndimage.zoom(coarse.mean(axis=2), (2 * ratio, 2 * ratio), order=1)[: h * ratio, : w * ratio]
    return np.round(ms), np.round(pan + 40.0 * rng.random(pan.shape))


def _run_pair(tmp: Path, toolbox: Path, tag: str, ms: np.ndarray, pan: np.ndarray, ratio: int,
              sensor: str) -> dict[str, np.ndarray]:
    scipy.io.savemat(tmp / f"{tag}_in.mat", {"ms": ms, "pan": pan, "ratio": float(ratio), "sensor": sensor})
    _octave(RUN, tmp, toolbox, [str(tmp / f"{tag}_in.mat"), str(tmp / f"{tag}_out.mat")])
    out = scipy.io.loadmat(tmp / f"{tag}_out.mat")
    return {m: out[k].reshape(out[k].shape[0], out[k].shape[1], -1) for m, k in METHODS.items()}


def _sample(shape: tuple[int, ...], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    h, w = shape[:2]
    edge_r, edge_c = [0, 1, 7, h // 2, h - 8, h - 1], [0, 2, 7, w // 2, w - 3, w - 1]
    rows = np.concatenate([np.repeat(edge_r, len(edge_c)), rng.integers(0, h, 28)])
    cols = np.concatenate([np.tile(edge_c, len(edge_r)), rng.integers(0, w, 28)])
    return rows, cols


def main(target: str) -> None:
    toolbox = Path(os.environ["TOOLBOX"])
    rng = np.random.default_rng(20)
    fixture: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "standins").mkdir()
        (tmp / "standins" / "fwind1.m").write_text(FWIND1, encoding="utf-8")
        (tmp / "standins" / "cov.m").write_text(COV, encoding="utf-8")
        for tag, (h, w, bands, ratio, sensor) in {"qb4": (6, 5, 4, 4, "QB"), "wv2r2": (6, 5, 8, 2, "WV2"),
                                                  "none3": (6, 6, 3, 4, "none")}.items():
            ms, pan = _case(rng, h, w, bands, ratio)
            fixture.update({f"{tag}_ms": ms, f"{tag}_pan": pan, f"{tag}_ratio": np.array(ratio),
                            f"{tag}_sensor": np.array(sensor)})
            for method, fused in _run_pair(tmp, toolbox, tag, ms, pan, ratio, sensor).items():
                fixture[f"{tag}_{method}"] = fused
        x = 1000.0 * rng.random((32, 36))
        scipy.io.savemat(tmp / "lp_in.mat", {"x": x})
        _octave(LOWPASS, tmp, toolbox, [str(tmp / "lp_in.mat"), str(tmp / "lp_out.mat")])
        lp = scipy.io.loadmat(tmp / "lp_out.mat")
        fixture["lp_x"] = x
        fixture.update({k: lp[k] for k in lp if k.startswith("lp_")})
        shared = os.environ.get("PANSHARP_SHARED_DATA")
        if shared and (Path(shared) / "imgWV2.mat").exists():
            sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
            from pansharp_iqa import wald_degrade

            data = scipy.io.loadmat(Path(shared) / "imgWV2.mat")
            ms, pan = data["I_MS"].astype(float), data["I_PAN"].astype(float)
            for tag, (m, p) in {"wv2rr": wald_degrade(ms, pan, "WV2", 4), "wv2fr": (ms, pan)}.items():
                out = _run_pair(tmp, toolbox, tag, m, p, 4, "WV2")
                rows, cols = _sample(out["EXP"].shape, rng)
                fixture[f"{tag}_rows"], fixture[f"{tag}_cols"] = rows, cols
                for method, fused in out.items():
                    fixture[f"{tag}_{method}"] = fused[rows, cols]
                    fixture[f"{tag}_{method}_mean"] = fused.mean(axis=(0, 1))
    np.savez_compressed(target, **fixture)


if __name__ == "__main__":
    main(sys.argv[1])

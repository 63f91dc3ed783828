"""Each baseline equals the 2020 toolbox's own code (issue 20 item 9), through the library and
through ``pansharp-eval baselines``.

The expected values were computed by the toolbox's MATLAB functions themselves (``interp23tap``,
``BroveyRegHazeMin``, ``GSA``, ``MTF_GLP_HPM``, ``LPfilterPlusDec``) under GNU Octave, on the inputs
stored beside them; ``data/make_toolbox_fixture.py`` says how. Three small synthetic pairs give
whole outputs (every pixel, borders included); the GRIP WorldView-2 scene, at reduced resolution
(Wald protocol) and full resolution, gives the toolbox's values at 64 pixels per band and its band
means (skipped when the shared data are absent).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from baselines_helpers import shared_data_dir, write_dataset
from pansharp_iqa.baselines import BASELINES
from pansharp_iqa.baselines.lowpass import plusdec_lowpass, plusdec_lowpass_decimate
from pansharp_iqa.cli.main import main

FIXTURE = np.load(Path(__file__).parent / "data" / "toolbox_baselines.npz")
CASES = ("qb4", "wv2r2", "none3")
PARITY = 1e-9  # relative to the image's largest value


def _case(case: str) -> tuple[np.ndarray, np.ndarray, int, str]:
    return (FIXTURE[f"{case}_ms"], FIXTURE[f"{case}_pan"], int(FIXTURE[f"{case}_ratio"]),
            str(FIXTURE[f"{case}_sensor"]))


def _close(got: np.ndarray, ref: np.ndarray, rel: float = PARITY) -> None:
    np.testing.assert_allclose(got, ref, rtol=0, atol=rel * np.abs(ref).max())


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("method", list(BASELINES))
def test_each_baseline_equals_the_toolbox_on_every_pixel(method, case):
    ms, pan, ratio, sensor = _case(case)
    ref = FIXTURE[f"{case}_{method}"]
    _close(BASELINES[method](ms, pan, sensor=sensor, ratio=ratio), ref)
    # strips one MS row high: every strip is a border strip, the halos wrap and replicate
    _close(BASELINES[method](ms, pan, sensor=sensor, ratio=ratio, strip_rows=ratio), ref)


@pytest.mark.parametrize("ratio", [2, 4, 8])
def test_gsa_lowpass_is_lpfilterplusdec_borders_included(ratio):
    x = FIXTURE["lp_x"]
    _close(plusdec_lowpass(x, ratio), FIXTURE[f"lp_full_{ratio}"], 1e-13)
    _close(plusdec_lowpass_decimate(x, ratio), FIXTURE[f"lp_dec_{ratio}"], 1e-13)


def test_the_toolbox_wavelet_never_dilates_its_filter():
    # ndwt2_working filters every level with the same 5 taps: away from the borders, ratio 4 (two
    # levels, analysis and synthesis) is [1 4 6 4 1]/16 convolved with itself 4 times, 17 taps, no holes
    impulse = np.zeros((41, 41))
    impulse[20, 20] = 1.0
    b3 = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0
    taps = np.convolve(np.convolve(b3, b3), np.convolve(b3, b3))
    expected = np.zeros((41, 41))
    expected[12:29, 12:29] = np.outer(taps, taps)
    np.testing.assert_allclose(plusdec_lowpass(impulse, 4), expected, rtol=0, atol=1e-16)


def _shared_scene(tag: str) -> tuple[np.ndarray, np.ndarray]:
    import scipy.io

    data = shared_data_dir()
    if data is None or f"{tag}_rows" not in FIXTURE.files:
        pytest.skip("../shared/data/imgWV2.mat not available")
    scene = scipy.io.loadmat(data / "imgWV2.mat")
    ms, pan = scene["I_MS"].astype(float), scene["I_PAN"].astype(float)
    if tag == "wv2rr":
        from pansharp_iqa import wald_degrade

        ms, pan = wald_degrade(ms, pan, "WV2", 4)
    return ms, pan


@pytest.mark.parametrize("tag", ["wv2rr", "wv2fr"])
def test_baselines_equal_the_toolbox_on_the_worldview2_scene(tag):
    ms, pan = _shared_scene(tag)
    rows, cols = FIXTURE[f"{tag}_rows"], FIXTURE[f"{tag}_cols"]
    for method, fuse in BASELINES.items():
        fused = fuse(ms, pan, sensor="WV2", ratio=4)
        ref = FIXTURE[f"{tag}_{method}"]
        np.testing.assert_allclose(fused[rows, cols], ref, rtol=0, atol=PARITY * np.abs(ref).max(), err_msg=method)
        # band means: MTF-GLP-HPM's ratio is ill-conditioned where its low-pass PAN nears 0 (dark pixels),
        # so the means are held to the same bound as the pixels, relative to the image's largest value
        np.testing.assert_allclose(fused.mean(axis=(0, 1)), FIXTURE[f"{tag}_{method}_mean"], rtol=0,
                                   atol=PARITY * np.abs(fused).max(), err_msg=method)


@pytest.mark.parametrize("case", ["qb4", "none3"])  # (6, 5, 8) is an ambiguous layout for the readers
def test_pansharp_eval_baselines_writes_the_toolboxs_numbers(tmp_path, capsys, case):
    ms, pan, ratio, sensor = _case(case)
    folder = write_dataset(tmp_path / "data", {"s": (ms.astype(np.uint16), pan.astype(np.uint16))}, sensor=sensor,
                           ratio=ratio, bits=11, resolution="full", result_scale="dn")
    assert main(["baselines", str(folder), "--out", str(tmp_path / "out")]) == 0
    for method in BASELINES:
        _close(np.load(tmp_path / "out" / method / "s.npy"), FIXTURE[f"{case}_{method}"])
    assert "wrote" in capsys.readouterr().out

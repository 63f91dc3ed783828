"""Sanity of the classical baselines on real data at reduced resolution (Wald protocol).

Reads the GRIP-UNINA WorldView-2 scene ``imgWV2.mat`` from ``../shared/data`` (or
``$PANSHARP_SHARED_DATA``; never copied into the repository); without it, a synthetic
WorldView-2-like scene (issue 34: the check keeps running; the real scene adds realism).
"""

from __future__ import annotations

from cli_helpers import shared_data_dir

DATA = shared_data_dir()


def test_baselines_beat_exp_on_wv2_crop():
    import scipy.io

    import pansharp_iqa as psi
    from pansharp_iqa.baselines import BASELINES

    if DATA is None:
        from pancollection_data import synthetic_wv2

        ms, pan = synthetic_wv2(3440, 128)
    else:
        data = scipy.io.loadmat(DATA / "imgWV2.mat")
        ms = data["I_MS"][64:192, 64:192].astype(float)  # 128 x 128 x 8, native MS = GT
        pan = data["I_PAN"][256:768, 256:768].astype(float)
    ms_lr, pan_lr = psi.wald_degrade(ms, pan, "WV2", 4)
    scores = {
        name: psi.evaluate_reduced(fn(ms_lr, pan_lr, sensor="WV2", ratio=4), ms, ratio=4, bits=11)
        for name, fn in BASELINES.items()
    }
    for name in ("BT-H", "GSA", "MTF-GLP-HPM"):
        assert scores[name]["Q2n"] > scores["EXP"]["Q2n"], name
        assert scores[name]["ERGAS"] < scores["EXP"]["ERGAS"], name

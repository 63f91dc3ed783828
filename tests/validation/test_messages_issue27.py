"""Issue 27 item 14: messages that name the real mistake and a fix that helps, each with its
legitimate neighbour (the same data given right gets numbers)."""

from __future__ import annotations

import numpy as np
import pytest

import pansharp_iqa as pi
from pansharp_iqa.baselines import gsa
from pansharp_iqa.demo_data import load_demo
from pansharp_iqa.validation import ScaleError, ShapeError


@pytest.fixture(scope="module")
def pair():
    ms, pan = load_demo()
    ms_lr, pan_lr = pi.wald_degrade(ms, pan, "none", ratio=4)
    return gsa(ms_lr, pan_lr, ratio=4)[:96, :96], ms[:96, :96].astype(np.float64)


def test_a_4d_array_without_layout_names_layout(pair):
    fused, gt = pair
    with pytest.raises(ShapeError, match=r"4-D array of shape \(1, 96, 96, 4\).*layout='NHWC'"):
        pi.evaluate_reduced(fused[None], gt[None], ratio=4, bits=11)
    r = pi.evaluate_reduced(fused[None], gt[None], ratio=4, bits=11, layout="NHWC")
    assert r["Q2n"][0] == pytest.approx(pi.evaluate_reduced(fused, gt, ratio=4, bits=11)["Q2n"], rel=1e-9)


def test_a_channel_last_batch_declared_nchw_names_the_layout(pair):
    fused, gt = pair
    f8, g8 = np.concatenate([fused, fused], 2)[None], np.concatenate([gt, gt], 2)[None]
    with pytest.raises(ShapeError, match=r"96x8 pixels.*reads as 96 bands of 96x8 pixels.*layout="):
        pi.evaluate_reduced(f8, g8, ratio=4, bits=11, layout="NCHW")
    assert pi.evaluate_reduced(f8, g8, ratio=4, bits=11, layout="NHWC")["Q2n"][0] > 0


def test_batch_messages_say_how_images_and_bands_are_counted(pair):
    fused, gt = pair
    f = np.stack([fused, fused])
    f[1, ..., 3] /= 2047
    with pytest.raises(ScaleError, match=r"image 1 of the batch: fused band 4 \(of 4\).*images are counted from 0, "
                                         "bands from 1"):
        pi.evaluate_reduced(f, np.stack([gt, gt]), ratio=4, bits=11, layout="NHWC")


def test_standardised_data_are_named_as_such_with_a_fix_that_helps(pair):
    fused, gt = pair
    z = (fused - gt.mean()) / gt.std()
    with pytest.raises(ScaleError, match="standardised or mean-subtracted data") as err:
        pi.evaluate_reduced(z, gt, ratio=4, bits=11)
    assert "scale=" not in str(err.value)  # no scale setting turns standardised data into DN
    with pytest.raises(ScaleError, match="standardised or offset data"):
        pi.evaluate_reduced(z, (gt - gt.mean()) / gt.std(), ratio=4, bits=11)
    assert 0 < pi.evaluate_reduced(z * gt.std() + gt.mean(), gt, ratio=4, bits=11)["Q2n"] < 1

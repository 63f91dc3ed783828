"""Loss terms against numpy (released NLRNet recipe: 85 L1 + 15 (1 - cos) + 15 band-difference L1)."""

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

from pansharp_iqa.nlrnet.losses import NLRNetLoss, band_difference  # noqa: E402


def _np_terms(x, y):
    x, y = x.astype(np.float64), y.astype(np.float64)
    l1 = np.abs(x - y).mean()
    cos = (x * y).sum(1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))
    spec = (1 - cos).mean()
    bx = x - x[:, [1, 2, 3, 4, 5, 0]]
    by = y - y[:, [1, 2, 3, 4, 5, 0]]
    band = np.abs(bx - by).mean()
    return l1, spec, band


def test_loss_terms_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.random((3, 6, 7, 5)).astype(np.float32)
    y = rng.random((3, 6, 7, 5)).astype(np.float32)
    loss = NLRNetLoss()
    terms = [float(t.asnumpy()) for t in loss.terms(ms.Tensor(x), ms.Tensor(y))]
    ref = _np_terms(x, y)
    np.testing.assert_allclose(terms, ref, rtol=1e-5)
    total = float(loss(ms.Tensor(x), ms.Tensor(y)).asnumpy())
    np.testing.assert_allclose(total, 85 * ref[0] + 15 * ref[1] + 15 * ref[2], rtol=1e-5)


def test_band_difference_direction():
    x = np.arange(4, dtype=np.float32).reshape(1, 4, 1, 1) ** 2  # 0 1 4 9
    out = band_difference(ms.Tensor(x)).asnumpy().ravel()
    np.testing.assert_array_equal(out, [0 - 1, 1 - 4, 4 - 9, 9 - 0])


def test_identical_images_give_zero_loss():
    x = np.random.default_rng(1).random((2, 8, 4, 4)).astype(np.float32) + 0.1
    assert float(NLRNetLoss()(ms.Tensor(x), ms.Tensor(x)).asnumpy()) == pytest.approx(0.0, abs=1e-5)

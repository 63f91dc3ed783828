"""NLRNet model: parameter counts, InstanceNorm, ENLA and gates against numpy."""

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

from pansharp_iqa.nlrnet.model import ENLA, NLRNet, ResidualBlock, count_parameters  # noqa: E402


def _expected_count(bands: int, blocks: int, unused: bool) -> int:
    f = 64
    block = 2 * (f * f * 9) + 4 * f + 1          # two 3x3 convs, two affine INs, gamma
    block += (f + 1) + 9 + 1                      # ENLA mask conv (+bias), Conv1d k9, beta
    if unused:
        block += (f * 8 + 8) + 16 + (8 * f + f)   # released code's unused channel-add transform
    total = (bands + 1) * f * 49 + blocks * block + f * f * 9 + 2 * f + f * f + f * bands
    if unused:
        total += f * bands * 9                    # unused 3x3 output conv
    return total


def test_default_parameter_count_matches_released_code():
    net = NLRNet()
    assert count_parameters(net) == 675_808
    assert count_parameters(net, used_only=True) == 662_304


@pytest.mark.parametrize("bands,blocks,unused", [(4, 2, True), (8, 1, False), (3, 3, True)])
def test_parameter_count_formula(bands, blocks, unused):
    net = NLRNet(bands=bands, blocks=blocks, released_unused=unused)
    assert count_parameters(net) == _expected_count(bands, blocks, unused)


def test_groupnorm_is_instance_norm():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 64, 9, 7)).astype(np.float32) * 3 + 1
    block = ResidualBlock(64, released_unused=False)
    gamma = rng.standard_normal(64).astype(np.float32)
    beta = rng.standard_normal(64).astype(np.float32)
    block.in1.gamma.set_data(ms.Tensor(gamma))
    block.in1.beta.set_data(ms.Tensor(beta))
    out = block.in1(ms.Tensor(x)).asnumpy()
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=(2, 3), keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=(2, 3), keepdims=True)
    ref = (x64 - mean) / np.sqrt(var + 1e-5) * gamma[:, None, None] + beta[:, None, None]
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_fresh_residual_block_is_identity():
    x = np.random.default_rng(1).standard_normal((1, 64, 8, 8)).astype(np.float32)
    out = ResidualBlock(64)(ms.Tensor(x)).asnumpy()
    np.testing.assert_array_equal(out, x)  # both gates start at 0 (ReZero)


def test_enla_against_numpy():
    rng = np.random.default_rng(2)
    c, h, w = 64, 5, 6
    x = rng.standard_normal((2, c, h, w)).astype(np.float32)
    cell = ENLA(c, released_unused=False)
    wm = rng.standard_normal((1, c, 1, 1)).astype(np.float32) * 0.3
    bm = np.array([0.2], np.float32)
    k = rng.standard_normal(9).astype(np.float32)
    cell.conv_mask.weight.set_data(ms.Tensor(wm))
    cell.conv_mask.bias.set_data(ms.Tensor(bm))
    cell.mixer.weight.set_data(ms.Tensor(k.reshape(1, 1, 1, 9)))
    cell.beta.set_data(ms.Tensor(np.array([0.7], np.float32)))
    out = cell(ms.Tensor(x)).asnumpy()
    xd = x.astype(np.float64)
    logits = np.einsum("nchw,c->nhw", xd, wm[0, :, 0, 0].astype(np.float64)) + bm[0]
    p = np.exp(logits - logits.max(axis=(1, 2), keepdims=True))
    p /= p.sum(axis=(1, 2), keepdims=True)
    ctx = np.einsum("nchw,nhw->nc", xd, p)
    padded = np.pad(ctx, ((0, 0), (4, 4)))
    mixed = np.stack([(padded[:, i:i + 9] * k).sum(axis=1) for i in range(c)], axis=1)
    ref = xd + 0.7 * mixed[:, :, None, None]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_forward_shape_and_variants():
    rng = np.random.default_rng(0)
    lms = ms.Tensor(rng.random((2, 4, 16, 16)).astype(np.float32))
    pan = ms.Tensor(rng.random((2, 1, 16, 16)).astype(np.float32))
    for variant in ("released", "paper"):
        out = NLRNet(bands=4, blocks=1, variant=variant)(lms, pan)
        assert out.shape == (2, 4, 16, 16)
        assert np.isfinite(out.asnumpy()).all()
    with pytest.raises(ValueError, match="variant"):
        NLRNet(variant="other")

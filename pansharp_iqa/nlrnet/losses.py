"""NLRNet training loss (MindSpore).

The released recipe of Lei et al., "NLRNet: An Efficient Nonlocal Attention ResNet for
Pansharpening", IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097 (authors' code, github
aaabbbcq/NLRNET)::

    loss = 85 * mean|x - y|
         + 15 * mean_pixels(1 - cos_bands(x, y))
         + 15 * mean|(x - roll(x)) - (y - roll(y))|

where ``roll(x)[:, b] = x[:, (b + 1) mod B]`` (band differences) and the cosine is taken over the
band axis at every pixel, ``cos = <x, y> / sqrt(max(|x|^2 |y|^2, eps^2))`` with eps = 1e-8 (the
PyTorch ``cosine_similarity`` convention). All terms are dimensionless on [0, 1]-normalised data.
"""

from __future__ import annotations

import mindspore as ms
from mindspore import nn, ops

__all__ = ["NLRNetLoss", "NetWithLoss", "band_difference", "pixel_cosine"]


def band_difference(x: ms.Tensor) -> ms.Tensor:
    """``x - roll(x)`` along the band axis: ``out[:, b] = x[:, b] - x[:, (b + 1) mod B]``."""
    return x - ops.concat((x[:, 1:], x[:, :1]), axis=1)


def pixel_cosine(x: ms.Tensor, y: ms.Tensor, eps: float = 1e-8) -> ms.Tensor:
    """Per-pixel cosine similarity over the band axis (dimensionless, in [-1, 1])."""
    dot = (x * y).sum(axis=1)
    nx = (x * x).sum(axis=1)
    ny = (y * y).sum(axis=1)
    return dot / ops.sqrt(ops.maximum(nx * ny, eps * eps))


class NLRNetLoss(nn.Cell):
    """Weighted L1 + spectral-angle + band-difference loss of the released NLRNet code."""

    def __init__(self, w_l1: float = 85.0, w_cos: float = 15.0, w_band: float = 15.0,
                 eps: float = 1e-8) -> None:
        super().__init__()
        self.w_l1, self.w_cos, self.w_band, self.eps = float(w_l1), float(w_cos), float(w_band), float(eps)

    def terms(self, out: ms.Tensor, gt: ms.Tensor) -> tuple[ms.Tensor, ms.Tensor, ms.Tensor]:
        """The three unweighted terms (L1, mean(1 - cos), band-difference L1)."""
        l1 = ops.abs(out - gt).mean()
        cos = (1.0 - pixel_cosine(out, gt, self.eps)).mean()
        band = ops.abs(band_difference(out) - band_difference(gt)).mean()
        return l1, cos, band

    def construct(self, out: ms.Tensor, gt: ms.Tensor) -> ms.Tensor:
        """Scalar loss for the fused ``out`` and reference ``gt`` (both (N, B, H, W), [0, 1])."""
        l1, cos, band = self.terms(out, gt)
        return self.w_l1 * l1 + self.w_cos * cos + self.w_band * band


class NetWithLoss(nn.Cell):
    """``(lms, pan, gt) -> loss`` wrapper for ``nn.TrainOneStepCell``."""

    def __init__(self, net: nn.Cell, loss: nn.Cell) -> None:
        super().__init__(auto_prefix=False)
        self.net = net
        self.loss = loss

    def construct(self, lms: ms.Tensor, pan: ms.Tensor, gt: ms.Tensor) -> ms.Tensor:
        """Loss of ``net(lms, pan)`` against ``gt``."""
        out = self.net(lms, pan)
        return self.loss(out.astype(ms.float32), gt)

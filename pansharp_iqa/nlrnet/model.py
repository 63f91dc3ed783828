"""NLRNet network (MindSpore).

Architecture facts from Lei et al., "NLRNet: An Efficient Nonlocal Attention ResNet for
Pansharpening", IEEE TGRS 60, 2022, art. 5401113, doi:10.1109/TGRS.2021.3067097, and from the
authors' released PyTorch code (github aaabbbcq/NLRNET), re-implemented here:

* head: EXP-upsampled MS (B bands) concatenated with the PAN, 7x7 conv (B+1 -> 64, no bias),
  LeakyReLU(0.2);
* ``n_blocks`` residual blocks: conv3x3 -> InstanceNorm(affine) -> LeakyReLU(0.2) -> conv3x3 ->
  InstanceNorm, times a scalar gate initialised to 0 (ReZero), plus identity; then an efficient
  non-local attention ("ENLA", GCNet-style context block): a 1x1 conv (64 -> 1, bias) and a softmax
  over all pixels pool one context vector per image, a Conv1d (kernel 9, padding 4, no bias) mixes
  it across channels, and it is added back to every pixel through a second zero-initialised gate;
* spectral aggregation: conv3x3 -> InstanceNorm, multiplied elementwise by the head's output
  (long skip, "range scaling"), then 1x1 conv 64->64, LeakyReLU(0.2), 1x1 conv 64->B. The output
  is the fused image itself (no ``+ EXP``).

InstanceNorm is ``nn.GroupNorm(C, C)`` (one group per channel: the same statistics, eps 1e-5 and
affine parameters; MindSpore 2.10 has no CPU kernel for ``nn.InstanceNorm2d``).

LeakyReLU(0.2) is :class:`LeakyReLU`: ``nn.LeakyReLU`` in inference and, while the cell is
training, the same function written as ``relu(x) - 0.2 * relu(-x)`` (a faster training step on
CPU with the same losses, slower in inference: ``docs/performance.md``). No parameters either way.

The width (64 feature channels in the released code) is an argument, ``features``, so that
small test networks and converted reduced-width PyTorch weights can be built.

The released code also builds two modules that its forward pass never uses (a 3x3 ``64 -> B``
output conv and, in every block, a GCNet channel-add transform 64 -> 8 -> 64 with LayerNorm);
they are kept by default (``released_unused=True``) so that the parameter count is the one the
released code prints (675,808 for 8 bands and 8 blocks; 662,304 used).

Initialisation as released: every Conv2d weight ~ N(0, sqrt(2 / (k*k*C_out))), biases 0;
InstanceNorm affine 1/0; both gates 0; the Conv1d keeps PyTorch's default
(uniform in +-1/sqrt(fan_in) = +-1/3).
"""

from __future__ import annotations

import math
from typing import Literal

import mindspore as ms
from mindspore import nn, ops
from mindspore.common.initializer import Normal, Uniform, Zero

__all__ = ["NLRNet", "ResidualBlock", "ENLA", "LeakyReLU", "count_parameters", "FEATURES"]

FEATURES = 64
_SLOPE = 0.2


def _conv2d(c_in: int, c_out: int, k: int, *, bias: bool = False) -> nn.Conv2d:
    """Conv2d with 'same' zero padding and the released initialisation N(0, sqrt(2/(k*k*C_out)))."""
    sigma = math.sqrt(2.0 / (k * k * c_out))
    return nn.Conv2d(
        c_in, c_out, k, stride=1, pad_mode="pad" if k > 1 else "valid", padding=k // 2,
        has_bias=bias, weight_init=Normal(sigma=sigma, mean=0.0),
        bias_init=Zero() if bias else None,
    )


class LeakyReLU(nn.Cell):
    """LeakyReLU with slope 0.2: ``nn.LeakyReLU`` in inference, ``relu(x) - 0.2 relu(-x)`` in training."""

    def __init__(self, slope: float = _SLOPE) -> None:
        super().__init__()
        self.slope = float(slope)
        self.leaky = nn.LeakyReLU(self.slope)
        self.relu = ops.ReLU()

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        """Apply the activation elementwise."""
        if self.training:
            return self.relu(x) - self.slope * self.relu(-x)
        return self.leaky(x)


def _instance_norm(c: int) -> nn.GroupNorm:
    """InstanceNorm2d(c, affine=True) as GroupNorm with one group per channel (eps 1e-5)."""
    return nn.GroupNorm(c, c, eps=1e-5, affine=True)


class ENLA(nn.Cell):
    """Efficient non-local attention (GCNet-style global context with a Conv1d channel mixer)."""

    def __init__(self, channels: int = FEATURES, released_unused: bool = True) -> None:
        super().__init__()
        self.conv_mask = _conv2d(channels, 1, 1, bias=True)
        self.softmax = nn.Softmax(axis=-1)
        self.mixer = nn.Conv1d(1, 1, 9, pad_mode="pad", padding=4, has_bias=False,
                               weight_init=Uniform(scale=1.0 / 3.0))
        self.beta = ms.Parameter(ms.Tensor([0.0], ms.float32), name="beta")
        self.released_unused = released_unused
        if released_unused:
            hidden = channels // 8
            self.unused_channel_add = nn.SequentialCell(
                _conv2d(channels, hidden, 1, bias=True),
                nn.LayerNorm((hidden, 1, 1), begin_norm_axis=1, begin_params_axis=1),
                nn.ReLU(),
                _conv2d(hidden, channels, 1, bias=True),
            )

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        """Apply the block to ``x`` of shape (N, C, H, W)."""
        n, c, h, w = x.shape
        weights = self.softmax(self.conv_mask(x).reshape(n, 1, h * w))  # (N, 1, HW)
        context = ops.matmul(x.reshape(n, c, h * w), weights.transpose(0, 2, 1))  # (N, C, 1)
        mixed = self.mixer(context.transpose(0, 2, 1))  # (N, 1, C)
        return x + self.beta * mixed.reshape(n, c, 1, 1)


class ResidualBlock(nn.Cell):
    """ReZero residual block followed by ENLA (Lei et al., TGRS 60, 2022, Fig. 2)."""

    def __init__(self, channels: int = FEATURES, released_unused: bool = True) -> None:
        super().__init__()
        self.conv1 = _conv2d(channels, channels, 3)
        self.in1 = _instance_norm(channels)
        self.act = LeakyReLU(_SLOPE)
        self.conv2 = _conv2d(channels, channels, 3)
        self.in2 = _instance_norm(channels)
        self.gamma = ms.Parameter(ms.Tensor([0.0], ms.float32), name="gamma")
        self.enla = ENLA(channels, released_unused)

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        """Apply the block to ``x`` of shape (N, C, H, W)."""
        y = self.in2(self.conv2(self.act(self.in1(self.conv1(x)))))
        return self.enla(self.gamma * y + x)


class NLRNet(nn.Cell):
    """NLRNet (Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097)."""

    def __init__(self, bands: int = 8, blocks: int = 8,
                 variant: Literal["released", "paper"] = "released",
                 released_unused: bool = True, features: int = FEATURES) -> None:
        super().__init__()
        if variant not in ("released", "paper"):
            raise ValueError(f"variant must be 'released' or 'paper', got {variant!r}")
        if bands < 1 or blocks < 1:
            raise ValueError(f"bands and blocks must be >= 1, got {bands}, {blocks}")
        if features < 8 or features % 8:
            raise ValueError(f"features must be a positive multiple of 8, got {features}")
        self.bands, self.blocks, self.variant = int(bands), int(blocks), variant
        self.features, self.released_unused = int(features), bool(released_unused)
        f = self.features
        self.conv_input = _conv2d(bands + 1, f, 7)
        self.act = LeakyReLU(_SLOPE)
        self.residual = nn.SequentialCell([ResidualBlock(f, released_unused) for _ in range(blocks)])
        self.conv_mid = _conv2d(f, f, 3)
        self.norm_mid = _instance_norm(f) if variant == "released" else LeakyReLU(_SLOPE)
        self.conv_out1 = _conv2d(f, f, 1)
        self.conv_out2 = _conv2d(f, bands, 1)
        self.out_act = LeakyReLU(_SLOPE) if variant == "paper" else nn.Identity()
        if released_unused:
            self.unused_outconv = _conv2d(f, bands, 3)

    def construct(self, lms: ms.Tensor, pan: ms.Tensor) -> ms.Tensor:
        """Fuse ``lms`` (N, B, H, W) and ``pan`` (N, 1, H, W) into (N, B, H, W)."""
        head = self.act(self.conv_input(ops.concat((lms, pan), axis=1)))
        out = self.residual(head)
        out = self.norm_mid(self.conv_mid(out)) * head
        return self.out_act(self.conv_out2(self.act(self.conv_out1(out))))

    def config(self) -> dict:
        """Constructor arguments (JSON/TOML-serialisable) to rebuild this network."""
        return {"bands": self.bands, "blocks": self.blocks, "variant": self.variant,
                "released_unused": self.released_unused, "features": self.features}


def count_parameters(net: nn.Cell, *, used_only: bool = False) -> int:
    """Number of trainable scalars in ``net``."""
    total = 0
    for p in net.trainable_params():
        if used_only and "unused_" in p.name:
            continue
        total += int(math.prod(p.shape))
    return total

"""Generator of ``nlrnet_tiny_torch.pt`` and ``nlrnet_tiny_expected.npz`` (documentation only).

NOT run by the tests and NOT part of the package: it needs PyTorch, which the project keeps out
of its dependencies. It was run once, in a throwaway virtual environment with ``torch`` installed,
to make the committed fixture that ``tests/nlrnet/test_torch_import.py`` converts without torch::

    python tests/nlrnet/data/make_torch_fixture.py tests/nlrnet/data

The network below is a PyTorch re-expression of NLRNet as the authors released it (Lei et al.,
IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097; github aaabbbcq/NLRNET, read for its
parameter names, shapes and forward pass, no code copied), with the width, band count and block
count as arguments so that the fixture stays small. The released ``NLRNet.py`` (top level,
residual blocks) is source; the released context block ``GCblock.ContextBlock2d`` is only
published as compiled ``.pyc`` files, so ``GlobalContext`` below is a reconstruction from its
parameter names and shapes and the paper, not checked against the released ``.pyc``. Module names
follow the released code, so
its ``state_dict`` keys are the released ones (``conv_input``, ``residual.<i>.conv1``,
``residual.<i>.in1``, ``residual.<i>.gc.conv_mask``, ``residual.<i>.gc.conv`` (Conv1d k9),
``residual.<i>.gc.channel_add_conv.{0,1,3}``, ``residual.<i>.gc.gamma``, ``residual.<i>.gamma``,
``conv_mid``, ``bn_mid``, ``conv_output.{0,2}``, ``outconv``). With ``features=64, bands=8,
blocks=8`` it has the released 675,808 parameters (143 tensors).

Every parameter (the two zero-initialised gates per block included) is set to a non-zero random
value so that every path of the network shows in the outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

SEED = 20240615
FEATURES, BANDS, BLOCKS, SIZE = 16, 4, 2, 24


class GlobalContext(nn.Module):
    """Softmax-pooled context, Conv1d channel mixer, zero-initialised gate (released 'gc')."""

    def __init__(self, c: int) -> None:
        super().__init__()
        hidden = c // 8
        self.conv_mask = nn.Conv2d(c, 1, kernel_size=1)
        self.softmax = nn.Softmax(dim=2)
        self.avg_pool = nn.AdaptiveAvgPool2d(1)          # built, never used (no parameters)
        self.channel_add_conv = nn.Sequential(            # built, never used (parameters only)
            nn.Conv2d(c, hidden, kernel_size=1), nn.LayerNorm([hidden, 1, 1]),
            nn.ReLU(inplace=True), nn.Conv2d(hidden, c, kernel_size=1))
        self.conv = nn.Conv1d(1, 1, kernel_size=9, padding=4, bias=False)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        attn = self.softmax(self.conv_mask(x).reshape(n, 1, h * w))          # (n, 1, hw)
        context = torch.bmm(x.reshape(n, c, h * w), attn.transpose(1, 2))     # (n, c, 1)
        mixed = self.conv(context.transpose(1, 2))                            # (n, 1, c)
        return x + self.gamma * mixed.reshape(n, c, 1, 1)


class Block(nn.Module):
    """conv3x3 - IN - LeakyReLU - conv3x3 - IN, ReZero gate, identity; then the context block."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.in1 = nn.InstanceNorm2d(c, affine=True)
        self.relu = nn.LeakyReLU(0.2)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.in2 = nn.InstanceNorm2d(c, affine=True)
        self.gc = GlobalContext(c)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.in2(self.conv2(self.relu(self.in1(self.conv1(x)))))
        return self.gc(self.gamma * y + x)


class TorchNLRNet(nn.Module):
    """NLRNet forward pass of the released code: fused = f(lms, pan)."""

    def __init__(self, bands: int = 8, blocks: int = 8, features: int = 64) -> None:
        super().__init__()
        self.lrelu = nn.LeakyReLU(0.2)
        self.conv_input = nn.Conv2d(bands + 1, features, 7, padding=3, bias=False)
        self.residual = nn.Sequential(*[Block(features) for _ in range(blocks)])
        self.conv_mid = nn.Conv2d(features, features, 3, padding=1, bias=False)
        self.bn_mid = nn.InstanceNorm2d(features, affine=True)
        self.conv_output = nn.Sequential(
            nn.Conv2d(features, features, 1, bias=False), nn.LeakyReLU(0.2),
            nn.Conv2d(features, bands, 1, bias=False))
        self.outconv = nn.Conv2d(features, bands, 3, padding=1, bias=False)   # never used

    def forward(self, lms: torch.Tensor, pan: torch.Tensor) -> torch.Tensor:
        head = self.lrelu(self.conv_input(torch.cat((lms, pan), dim=1)))
        out = self.bn_mid(self.conv_mid(self.residual(head))) * head
        return self.conv_output(out)


def main(folder: str) -> None:
    out = Path(folder)
    full = TorchNLRNet()
    n_full = sum(p.numel() for p in full.parameters())
    assert n_full == 675_808 and len(full.state_dict()) == 143, (n_full, len(full.state_dict()))

    torch.manual_seed(SEED)
    net = TorchNLRNet(BANDS, BLOCKS, FEATURES).eval()
    with torch.no_grad():
        for name, p in net.named_parameters():
            norm_scale = name.endswith("weight") and p.ndim == 1  # InstanceNorm affine scale
            p.copy_(torch.randn_like(p) * (0.3 if p.ndim == 1 else 0.15) + (1.0 if norm_scale else 0.0))
    torch.save(net.state_dict(), out / "nlrnet_tiny_torch.pt")

    rng = np.random.default_rng(SEED)
    lms = rng.random((2, BANDS, SIZE, SIZE), dtype=np.float32)
    pan = rng.random((2, 1, SIZE, SIZE), dtype=np.float32)
    with torch.no_grad():
        fused = net(torch.from_numpy(lms), torch.from_numpy(pan)).numpy()
    np.savez(out / "nlrnet_tiny_expected.npz", lms=lms, pan=pan, fused=fused,
             bands=BANDS, blocks=BLOCKS, features=FEATURES, torch_version=torch.__version__)
    print(f"wrote {out}: {sum(p.numel() for p in net.parameters())} parameters, "
          f"{len(net.state_dict())} tensors; fused range {fused.min():.3f}..{fused.max():.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

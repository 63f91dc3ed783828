"""NLRNet pansharpening network in MindSpore, evaluated through :mod:`pansharp_iqa`.

NLRNet: D. Lei, H. Chen, L. Zhang and W. Li, "NLRNet: An Efficient Nonlocal Attention ResNet for
Pansharpening", IEEE TGRS 60, 2022, art. 5401113, doi:10.1109/TGRS.2021.3067097.

This package is import-light: importing it does not import MindSpore (nor anything heavy).
The submodules (``model``, ``losses``, ``h5data``, ``dataset``, ``train``, ``tiling``, ``infer``,
``export``, ``checkpoint``, ``convert``, ``doctor``, ``cli``) import MindSpore when they need it;
install the optional extra ``pansharp_iqa[nlrnet]`` for them. ``torch_pickle`` reads PyTorch
weights without PyTorch.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["CITATION", "DOI", "load_network"]

DOI = "10.1109/TGRS.2021.3067097"
CITATION = (
    "D. Lei, H. Chen, L. Zhang and W. Li, \"NLRNet: An Efficient Nonlocal Attention ResNet for "
    "Pansharpening\", IEEE Trans. Geosci. Remote Sens. 60, 2022, art. 5401113, doi:" + DOI
)


def load_network(path: str | Path):  # noqa: ANN201 - NLRNet (MindSpore imported lazily)
    """An NLRNet, ready for ``net(lms, pan)``, from a network checkpoint (trained or converted).

    Parameters
    ----------
    path : path
        ``.ckpt`` written by ``pansharp-nlrnet train`` (``best.ckpt``, ``last_net.ckpt``) or by
        ``pansharp-nlrnet convert --from-torch``.

    Returns
    -------
    NLRNet
        MindSpore cell in inference mode; inputs ``lms`` (N, B, H, W) and ``pan`` (N, 1, H, W)
        normalised to [0, 1] by 2**bits - 1; ``net.meta`` holds sensor, ratio, bits, the
        training patch size ``train_patch`` (px) and the architecture.

    Examples
    --------
    >>> from pansharp_iqa.nlrnet import load_network
    >>> net = load_network("net.ckpt")                                           # doctest: +SKIP
    >>> fused = net(mindspore.Tensor(lms), mindspore.Tensor(pan)).asnumpy()      # doctest: +SKIP
    """
    from . import checkpoint, env

    if "mindspore" not in sys.modules:
        env.ensure_cpu_isa()
    return checkpoint.load_network(path)

"""NLRNet pansharpening network in MindSpore, evaluated through :mod:`pansharp_iqa`.

NLRNet: D. Lei, H. Chen, L. Zhang and W. Li, "NLRNet: An Efficient Nonlocal Attention ResNet for
Pansharpening", IEEE TGRS 60, 2022, art. 5401113, doi:10.1109/TGRS.2021.3067097.

This package is import-light: importing it does not import MindSpore (nor anything heavy).
The submodules (``model``, ``losses``, ``h5data``, ``dataset``, ``train``, ``tiling``, ``infer``,
``export``, ``doctor``, ``cli``) import MindSpore when they need it; install the optional extra
``pansharp_iqa[nlrnet]`` for them.
"""

from __future__ import annotations

__all__ = ["CITATION", "DOI"]

DOI = "10.1109/TGRS.2021.3067097"
CITATION = (
    "D. Lei, H. Chen, L. Zhang and W. Li, \"NLRNet: An Efficient Nonlocal Attention ResNet for "
    "Pansharpening\", IEEE Trans. Geosci. Remote Sens. 60, 2022, art. 5401113, doi:" + DOI
)

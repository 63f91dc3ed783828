"""Quality indexes: one module per index family (chunk sums + finalize), and the catalogue that
declares every index once (:mod:`.catalog`). The full-resolution functions that take a protocol
(``d_lambda``, ``d_s``, ...) live in :mod:`pansharp_iqa.no_reference`, above the protocols."""

from .cc import cc
from .ergas import ergas
from .full_resolution import ConstantBlockError
from .psnr import psnr
from .q2n import q2n
from .sam import sam
from .scc import scc
from .uiqi import q_index

__all__ = ["q2n", "q_index", "sam", "ergas", "scc", "psnr", "cc", "ConstantBlockError"]

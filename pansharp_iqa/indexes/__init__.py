"""Quality indexes, one module per index family."""

from .ergas import ergas
from .full_resolution import ConstantBlockError, d_lambda, d_lambda_k, d_s, hqnr, qnr
from .q2n import q2n
from .sam import sam
from .scc import scc
from .uiqi import q_index

__all__ = [
    "q2n", "q_index", "sam", "ergas", "scc",
    "d_lambda", "d_s", "qnr", "d_lambda_k", "hqnr", "ConstantBlockError",
]

"""Training loops, the top floor: metric classes over :func:`pansharp_iqa.evaluation.evaluate`.

* ``metrics``: :class:`ReducedMetrics` / :class:`FullMetrics`, streaming accumulators for
  validation loops;
* :mod:`.torchmetrics_adapter`, :mod:`.mindspore_adapter`: framework metric classes;
* :mod:`.losses`: the full-resolution indexes (D_s, D_lambda_K, HQNR, D_s_R, RQNR) as
  differentiable PyTorch functions, for unsupervised training.

Framework arrays and declared batch layouts are recognised on the bottom floor
(``pansharp_iqa.foreign``); the PyTorch backend is ``pansharp_iqa.torch_backend``.

No framework is imported until it is used.
"""

from typing import Any

__all__ = ["ReducedMetrics", "FullMetrics"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import metrics

        return getattr(metrics, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

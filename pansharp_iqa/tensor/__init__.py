"""Tensors, batches and training loops: the core's exact numbers on PyTorch, MindSpore, CuPy and
DLPack arrays, batch by batch, on the tensor's device.

* ``inputs``: recognising framework arrays, declared batch layouts (``"NCHW"``, ``"NHWC"``);
* ``batch``: evaluating a batch (one value per image) on the host or on the device;
* ``metrics``: :class:`ReducedMetrics` / :class:`FullMetrics`, streaming accumulators for
  validation loops;
* ``torch_ops``, ``torch_backend``: the PyTorch backend (float64 on the tensor's device);
* :mod:`.torchmetrics_adapter`, :mod:`.mindspore_adapter`: framework metric classes.

No framework is imported until it is used.
"""

from typing import Any

__all__ = ["ReducedMetrics", "FullMetrics"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import metrics

        return getattr(metrics, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

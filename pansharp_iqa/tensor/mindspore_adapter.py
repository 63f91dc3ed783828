"""MindSpore metrics: the core's exact indexes in ``Model.eval`` / ``Model.fit`` and validation loops.

:class:`ReducedQuality` (against a reference, the Wald protocol) and :class:`FullQuality` (no
reference) are :class:`mindspore.train.Metric` subclasses over :class:`~.metrics.ReducedMetrics`
/ :class:`~.metrics.FullMetrics`: MindSpore's ``clear()`` / ``update(*inputs)`` / ``eval()``
protocol on the library's accumulators, so the numbers are those of
:func:`pansharp_iqa.evaluate_reduced` / ``evaluate_full`` on each image (host numpy core, exact
to the toolbox), the means are correctly rounded sums (independent of batch size and order) and
bad inputs are refused with the same one-line :class:`~pansharp_iqa.InputError` as arrays.

``Model.eval`` calls ``update`` with the eval network's outputs (``update(pred, target)`` for a
network returning ``(pred, target)``, e.g. :class:`WithTarget`; with ``loss_fn`` and no
``eval_network``, MindSpore passes ``(outputs, label)``) and returns ``{name: metric.eval()}``.
``eval()`` gives each index's mean (a dict; ``monitor="Q2n"`` makes it one float, for
callbacks that monitor a scalar such as ``EarlyStopping`` under ``Model.fit``);
:meth:`ReducedQuality.compute` gives the whole table (standard deviations, per-image values, the
provenance card).

MindSpore is imported here; :mod:`pansharp_iqa.tensor` does not import this module (import it
explicitly where MindSpore is installed: ``pip install 'pansharp_iqa[nlrnet]'``). Tensors from
PyNative or graph mode and ``Parameter`` objects are copied to the host by
``pansharp_iqa.foreign`` and evaluated there (``backend="host"``); MindSpore places
tensors itself, so every one counts as on one device for the checks.

Examples
--------
>>> import mindspore as ms
>>> gt = np.random.default_rng(0).integers(100, 2000, (3, 4, 96, 96)) / 2047
>>> metric = ReducedQuality(ratio=4, bits=11, scale=2047)
>>> metric.clear()
>>> for i in (0, 2):  # two batches, of 2 and 1 images
...     metric.update(ms.Tensor(gt[i:i + 2] * 1.01, ms.float32), ms.Tensor(gt[i:i + 2], ms.float32))
>>> sorted(metric.eval()), metric.n_images
(['ERGAS', 'Q', 'Q2n', 'SAM', 'SCC'], 3)
"""

from __future__ import annotations

from typing import Any

import mindspore
import numpy as np  # noqa: F401 - the docstring examples use np
from mindspore import nn
from mindspore.train import Metric, rearrange_inputs

from ..settings import Settings
from ..validation import SettingError
from .metrics import FullMetrics, ReducedMetrics

__all__ = ["ReducedQuality", "FullQuality", "WithTarget"]


class _Quality(Metric):
    """What both metrics share: MindSpore's protocol on one of the library's accumulators."""

    _inputs: tuple[str, ...] = ()

    def __init__(self, metrics: ReducedMetrics | FullMetrics, monitor: str | None) -> None:
        super().__init__()
        self.metrics = metrics
        if monitor is not None and monitor not in metrics.indexes:
            raise SettingError(f"monitor must be one of the table's indexes ({', '.join(metrics.indexes)}), "
                               f"got {monitor!r}")
        self.monitor = monitor

    @property
    def index_names(self) -> tuple[str, ...]:
        """The index names of the table, in order (``indexes`` is MindSpore's input selection)."""
        return self.metrics.indexes

    @property
    def higher_is_better(self) -> dict[str, bool]:
        """For each index of the table, whether higher values are better
        (:attr:`pansharp_iqa.Index.higher_is_better`)."""
        return self.metrics.higher_is_better

    @property
    def mode(self) -> str:
        """``"max"`` or ``"min"``: how ``EarlyStopping`` / ``ReduceLROnPlateau`` should treat
        :attr:`monitor` (``mode=metric.mode``)."""
        if self.monitor is None:
            raise SettingError("mode needs monitor=: the metric's eval() is a dict, not one scalar")
        return "max" if self.higher_is_better[self.monitor] else "min"

    @property
    def n_images(self) -> int:
        """Images seen since the last :meth:`clear`."""
        return self.metrics.n_images

    def clear(self) -> None:
        """Forget every image seen (``Model.eval`` calls it before evaluating)."""
        self.metrics.reset()

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        """Evaluate one batch and keep its per-image values."""
        if len(inputs) != len(self._inputs):
            raise TypeError(f"{type(self).__name__}.update takes ({', '.join(self._inputs)}), got {len(inputs)} "
                            f"inputs: return them from the eval network, or choose them with "
                            f"metric.set_indexes([...])")
        self.metrics.update(*inputs)

    def compute(self) -> dict[str, Any]:
        """The whole table over every image seen since :meth:`clear`."""
        if self.n_images == 0:
            raise SettingError(f"{type(self).__name__}: no image was updated since clear() (an empty "
                               "validation dataset?)")
        return self.metrics.compute()

    def eval(self) -> dict[str, float] | float:
        """Each index's mean over the images seen (or the :attr:`monitor` index's mean)."""
        table = self.compute()
        if self.monitor is not None:
            return table[self.monitor]
        return {n: table[n] for n in self.index_names}


class ReducedQuality(_Quality):
    """Reduced-resolution indexes (Wald protocol) as a :class:`mindspore.train.Metric`.

    ``update(pred, target)``: predictions and references, (N, C, H, W) by default.

    Parameters
    ----------
    settings : ReducedSettings, optional
        The settings value (:func:`pansharp_iqa.reduced_settings`), built once.
    layout : {"NCHW", "NHWC"}, default "NCHW"
    monitor : str, optional
        ``eval()`` returns this index's mean alone (a float), e.g. for ``EarlyStopping(monitor=
        "quality", mode=metric.mode)`` under ``Model.fit``.
    **keywords
        Instead of ``settings``: the keywords of :func:`~pansharp_iqa.reduced_settings` (``ratio``,
        ``bits``, ``protocol``, ``scale``: ``2**bits - 1`` for networks working on [0, 1] data
        (NLRNet, PanCollection), ``threshold``, ``indexes``, ``scale_mismatch``).

    Examples
    --------
    >>> import mindspore as ms
    >>> class Net(ms.nn.Cell):  # the "network": a slightly brighter copy of its input
    ...     def construct(self, x):
    ...         return x * 1.01
    >>> gt = (np.random.default_rng(1).integers(100, 2000, (4, 4, 96, 96)) / 2047).astype(np.float32)
    >>> data = ms.dataset.NumpySlicesDataset({"x": gt, "gt": gt}, shuffle=False).batch(2)
    >>> metric = ReducedQuality(ratio=4, bits=11, scale=2047)
    >>> net = Net()
    >>> model = ms.train.Model(net, metrics={"quality": metric}, eval_network=WithTarget(net))
    >>> out = model.eval(data)["quality"]
    >>> round(out["Q2n"], 4), metric.n_images, metric.higher_is_better["SAM"]
    (0.9998, 4, False)
    """

    _inputs = ("pred", "target")

    def __init__(self, settings: Settings | None = None, *, layout: str = "NCHW",
                 monitor: str | None = None, **keywords: Any) -> None:
        super().__init__(ReducedMetrics(settings, layout=layout, backend="host", **keywords), monitor)


class FullQuality(_Quality):
    """Full-resolution (no reference) indexes as a :class:`mindspore.train.Metric`.

    ``update(pred, ms, pan)``: fused images (N, C, H, W), their MS (N, C, H/ratio, W/ratio) and
    PAN (N, 1, H, W) or (N, H, W), by default.

    Parameters
    ----------
    settings : FullSettings, optional
        The settings value (:func:`pansharp_iqa.full_settings`), built once.
    layout : {"NCHW", "NHWC"}, default "NCHW"
    monitor : str, optional
        ``eval()`` returns this index's mean alone (a float).
    **keywords
        Instead of ``settings``: the keywords of :func:`~pansharp_iqa.full_settings` (``sensor``,
        required, ``ratio``, ``bits``, ``protocol``, ``scale``: ``2**bits - 1`` for [0, 1] data,
        ``threshold``, ``nan_policy``, ``indexes``, ``scale_mismatch``).

    Examples
    --------
    >>> import mindspore as ms
    >>> rng = np.random.default_rng(2)
    >>> lr = rng.integers(100, 2000, (2, 4, 16, 16)) / 2047
    >>> pan = rng.integers(100, 2000, (2, 1, 64, 64)) / 2047
    >>> metric = FullQuality(sensor="none", ratio=4, bits=11, scale=2047, monitor="QNR")
    >>> metric.clear()
    >>> fused = ms.Tensor(np.kron(lr, np.ones((1, 1, 4, 4))), ms.float32)
    >>> metric.update(fused, ms.Tensor(lr, ms.float32), ms.Tensor(pan, ms.float32))
    >>> 0 <= metric.eval() <= 1, metric.mode
    (True, 'max')
    """

    _inputs = ("pred", "ms", "pan")

    def __init__(self, settings: Settings | None = None, *, layout: str = "NCHW",
                 monitor: str | None = None, **keywords: Any) -> None:
        super().__init__(FullMetrics(settings, layout=layout, backend="host", **keywords), monitor)


class WithTarget(nn.Cell):
    """Eval network for ``Model.eval``: ``(*inputs, target) -> (network(*inputs), target)``.

    The last column of the dataset is the reference; the others are the network's inputs (NLRNet:
    ``lms, pan, gt``). With ``loss_fn`` it returns ``(loss, pred, target)``, for
    ``Model(..., eval_indexes=[0, 1, 2])``: what ``Model.fit`` needs to report the validation
    loss. Works in PyNative and graph mode; parameters keep the network's names.

    Parameters
    ----------
    network : mindspore.nn.Cell
    loss_fn : mindspore.nn.Cell, optional
        ``loss_fn(pred, target)``.

    Examples
    --------
    >>> import mindspore as ms
    >>> pred, gt = WithTarget(ms.nn.ReLU())(ms.Tensor([-1.0, 2.0]), ms.Tensor([0.0, 2.0]))
    >>> pred.asnumpy().tolist(), gt.asnumpy().tolist()
    ([0.0, 2.0], [0.0, 2.0])
    >>> loss, _, _ = WithTarget(ms.nn.ReLU(), ms.nn.L1Loss())(ms.Tensor([-1.0, 2.0]), ms.Tensor([0.0, 1.0]))
    >>> float(loss)
    0.5
    """

    def __init__(self, network: nn.Cell, loss_fn: nn.Cell | None = None) -> None:
        super().__init__(auto_prefix=False)
        self.network = network
        self.loss_fn = loss_fn

    def construct(self, *inputs: mindspore.Tensor) -> tuple[mindspore.Tensor, ...]:
        pred = self.network(*inputs[:-1])
        if self.loss_fn is None:
            return pred, inputs[-1]
        return self.loss_fn(pred, inputs[-1]), pred, inputs[-1]

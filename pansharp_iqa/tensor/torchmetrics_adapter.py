"""torchmetrics adapters: the toolbox's exact indexes as ``torchmetrics.Metric`` objects.

:class:`ReducedQuality` (reduced resolution, against a reference) and :class:`FullQuality` (full
resolution) keep one value per image and index as ``"cat"`` states, so a distributed run gathers
every process's images and :meth:`~ReducedQuality.compute` returns the numbers of a single process
that saw them all (means over images by correctly rounded sums: the order does not matter).
``compute()`` returns ``{index: mean}`` as float64 scalar tensors; :meth:`~ReducedQuality.std`,
:meth:`~ReducedQuality.per_image` and :meth:`~ReducedQuality.card` give the rest. Each index's
direction is ``metric.higher_is_better_of``; :func:`index_metric` makes a metric of
one index whose class declares its ``higher_is_better`` (for ``MetricCollection``, ``plot()`` and
checkpoint callbacks that read it).

Needs PyTorch and torchmetrics (``pip install 'pansharp_iqa[torch]'``).

Examples
--------
>>> import torch
>>> gt = torch.rand(2, 4, 96, 96, dtype=torch.float64) * 0.8 + 0.1
>>> metric = ReducedQuality(ratio=4, bits=11, scale=2047)
>>> metric.update(gt * 1.01, gt)
>>> out = metric.compute()
>>> sorted(out), out["Q2n"].dtype
(['ERGAS', 'Q', 'Q2n', 'SAM', 'SCC'], torch.float64)
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

from ..evaluation import evaluate
from ..foreign import check_layout
from ..indexes.catalog import get_index
from ..settings import Settings, full_settings, reduced_settings, settings_of
from .metrics import summarize

__all__ = ["ReducedQuality", "FullQuality", "index_metric"]


def _state_name(index: str) -> str:
    return "values_" + index.replace("-", "_")


class _Quality(Metric):
    """Per-image states of every index of the table (``dist_reduce_fx="cat"``)."""

    is_differentiable = False
    full_state_update = False
    higher_is_better: bool | None = None

    def __init__(self, resolution: str, settings: Settings | None, layout: str, backend: str,
                 keywords: dict[str, Any]) -> None:
        build = reduced_settings if resolution == "reduced" else full_settings
        names = inspect.signature(build).parameters
        super().__init__(**{k: v for k, v in keywords.items() if k not in names})
        settings = settings_of(resolution, settings, **{k: v for k, v in keywords.items() if k in names})
        lay = check_layout(layout)
        if lay is None:
            raise ValueError("layout: give 'NCHW' (default) or 'NHWC'")
        self.settings, self.layout, self.backend = settings, lay, backend
        self.indexes = tuple(settings.indexes)
        self.higher_is_better_of = {n: get_index(n).higher_is_better for n in self.indexes}
        self._card: dict[str, Any] | None = None
        for n in self.indexes:
            self.add_state(_state_name(n), default=[], dist_reduce_fx="cat")

    def _store(self, inputs: dict[str, object]) -> None:
        """Evaluate one batch and append its per-image values to the states."""
        result = evaluate(inputs, self.settings, layout=self.layout, backend=self.backend)
        self._card = self._card or result["protocol"]
        for n in self.indexes:
            values = torch.as_tensor(result[n], dtype=torch.float64).reshape(-1).to(self.device)
            getattr(self, _state_name(n)).append(values)

    def per_image(self) -> dict[str, list[float]]:
        """Index -> the value of every image seen (gathered across processes after a sync)."""
        out = {}
        for n in self.indexes:
            state = getattr(self, _state_name(n))
            out[n] = dim_zero_cat(state).tolist() if len(state) else []
        return out

    def compute(self) -> dict[str, torch.Tensor]:
        """Each index's mean over the images seen (float64 scalar tensors)."""
        means, _ = summarize(self.per_image())
        return {n: torch.tensor(v, dtype=torch.float64) for n, v in means.items()}

    def std(self) -> dict[str, float]:
        """Each index's standard deviation over the images seen (``ddof=1``)."""
        return summarize(self.per_image())[1]

    def card(self) -> dict[str, Any] | None:
        """The provenance card of the first batch (None before any update)."""
        return self._card


class ReducedQuality(_Quality):
    """Reduced-resolution indexes (Q2n, Q, SAM, ERGAS, SCC, extras) as a torchmetrics metric.

    Parameters
    ----------
    settings : ReducedSettings, optional
        The settings value (:func:`pansharp_iqa.reduced_settings`), built once.
    layout : {"NCHW", "NHWC"}, default "NCHW"
        Layout of the prediction and target batches.
    backend : {"auto", "host", "torch"}
        ``"auto"``: on the tensors' device when it is an accelerator, else the host core.
    **kwargs
        Instead of ``settings``, the keywords of :func:`~pansharp_iqa.reduced_settings` (``ratio``,
        ``bits``, ``protocol``, ``scale``: e.g. 2047 for [0, 1] outputs of 11-bit data,
        ``threshold``, ``indexes``: e.g. ``["Q2n"]`` alone, ``scale_mismatch``); and torchmetrics
        ``Metric`` options (``sync_on_compute``, ``process_group``, ...).

    Examples
    --------
    >>> ReducedQuality(ratio=4, bits=11, indexes=["SAM", "Q2n"]).higher_is_better_of
    {'SAM': False, 'Q2n': True}
    """

    def __init__(self, settings: Settings | None = None, *, layout: str = "NCHW", backend: str = "auto",
                 **kwargs: Any) -> None:
        super().__init__("reduced", settings, layout, backend, kwargs)

    def update(self, pred: torch.Tensor, target: torch.Tensor) -> None:
        """Evaluate a batch of predictions against their references.

        Parameters
        ----------
        pred, target : torch.Tensor
            Predictions and references in the metric's layout.
        """
        self._store({"fused": pred, "reference": target})


class FullQuality(_Quality):
    """Full-resolution indexes (D_lambda, D_s, QNR, D_lambda_K, HQNR) as a torchmetrics metric.

    Parameters
    ----------
    settings : FullSettings, optional
        The settings value (:func:`pansharp_iqa.full_settings`), built once.
    layout : {"NCHW", "NHWC"}, default "NCHW"
        Of the prediction and MS batches; PAN as (N, 1, H, W) / (N, H, W, 1) or (N, H, W).
    backend : {"auto", "host", "torch"}
        ``"auto"``: on the tensors' device when it is an accelerator, else the host core.
    **kwargs
        Instead of ``settings``, the keywords of :func:`~pansharp_iqa.full_settings` (``sensor``,
        required, ``ratio``, ``bits``, ``protocol``, ``scale``, ``threshold``, ``nan_policy``,
        ``indexes``, ``scale_mismatch``); and torchmetrics ``Metric`` options.

    Examples
    --------
    >>> FullQuality(sensor="WV3").higher_is_better_of["HQNR"]
    True
    """

    def __init__(self, settings: Settings | None = None, *, layout: str = "NCHW", backend: str = "auto",
                 **kwargs: Any) -> None:
        super().__init__("full", settings, layout, backend, kwargs)

    def update(self, pred: torch.Tensor, ms: torch.Tensor, pan: torch.Tensor) -> None:
        """Evaluate a batch of fused images against their MS and PAN.

        Parameters
        ----------
        pred, ms : torch.Tensor
            Fused images and their low-resolution MS in the metric's layout.
        pan : torch.Tensor
            PAN images, (N, 1, H, W) / (N, H, W, 1) or (N, H, W).
        """
        self._store({"fused": pred, "ms": ms, "pan": pan})


_CLASSES: dict[str, Any] = {}


def index_metric(index: str, **settings: Any) -> _Quality:
    """A torchmetrics metric of one index, whose class declares the index's ``higher_is_better``.

    Parameters
    ----------
    index : str
        An index name (``"Q2n"``, ``"SAM"``, ``"HQNR"``, ``"PSNR"``, ...).
    **settings
        The options of :class:`ReducedQuality` (reduced-resolution indexes) or
        :class:`FullQuality` (full-resolution ones), without ``indexes``.

    Returns
    -------
    ReducedQuality or FullQuality
        An instance of a subclass named after the index (e.g. ``SAMQuality``).

    Examples
    --------
    >>> m = index_metric("SAM", ratio=4, bits=11, scale=2047)
    >>> type(m).__name__, m.higher_is_better
    ('SAMQuality', False)
    """
    spec = get_index(index)
    if index not in _CLASSES:
        base = ReducedQuality if spec.resolution == "reduced" else FullQuality
        name = index.replace("-", "_") + "Quality"
        _CLASSES[index] = type(name, (base,), {"higher_is_better": spec.higher_is_better, "__module__": __name__,
                                               "__doc__": f"{index} alone: {spec.definition}."})
    return _CLASSES[index](indexes=[index], **settings)

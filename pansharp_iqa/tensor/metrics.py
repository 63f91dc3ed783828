"""Streaming metrics for validation loops: update per batch, compute the table, reset.

:class:`ReducedMetrics` (against a reference, the Wald protocol) and :class:`FullMetrics` (no
reference) take their settings value once (or its keywords), evaluate every image of each batch with
the core's exact definitions (:func:`pansharp_iqa.evaluation.evaluate` with ``layout=``), and keep
one value per image and index. :meth:`~ReducedMetrics.compute` returns what papers report: each
index's mean over the images seen, their standard deviation (``ddof=1``, as ``pansharp-eval``),
the per-image values in update order, and the provenance card. Means and deviations are computed
with correctly rounded sums (:func:`math.fsum`), so they do not depend on the batch size or the
order of the images.

Examples
--------
>>> gt = np.random.default_rng(0).integers(100, 2000, (3, 4, 96, 96)) / 2047
>>> m = ReducedMetrics(ratio=4, bits=11, scale=2047)
>>> _ = m.update(gt[:2] * 1.01, gt[:2]); _ = m.update(gt[2:] * 1.01, gt[2:])
>>> out = m.compute()
>>> len(out["per_image"]["Q2n"]), out["protocol"]["batch"]["images"]
(3, 3)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..evaluation import BACKENDS, evaluate
from ..foreign import check_layout
from ..indexes.catalog import get_index
from ..settings import Settings, settings_of
from ..validation import SettingError

__all__ = ["ReducedMetrics", "FullMetrics", "summarize"]


def summarize(per_image: dict[str, list[float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean and standard deviation (``ddof=1``) of each index over its finite values.

    Undefined values (NaN) are left out, as ``pansharp-eval`` does; an index with no finite value
    has NaN; so has the deviation of one value (the sample std is undefined there).

    Examples
    --------
    >>> summarize({"SAM": [1.0, 2.0, 3.0]})
    ({'SAM': 2.0}, {'SAM': 1.0})
    """
    means, stds = {}, {}
    for name, values in per_image.items():
        v = [x for x in values if math.isfinite(x)]
        n = len(v)
        mean = math.fsum(v) / n if n else math.nan
        means[name] = mean
        stds[name] = math.sqrt(math.fsum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else math.nan
    return means, stds


class _Accumulator:
    """What both metrics share: per-image values, the first card, update/compute/reset."""

    def __init__(self, settings: Settings, layout: str | None, backend: str) -> None:
        lay = check_layout(layout)
        if lay is None:
            raise SettingError("layout: a metric accumulates batches; give 'NCHW' (default) or 'NHWC'")
        if backend not in BACKENDS:
            raise SettingError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self.settings, self.layout, self.backend = settings, lay, backend
        self.reset()

    @property
    def indexes(self) -> tuple[str, ...]:
        """The index names of the table, in order."""
        return tuple(self.settings.indexes)

    @property
    def higher_is_better(self) -> dict[str, bool]:
        """For each index of the table, whether higher values are better."""
        return {n: get_index(n).higher_is_better for n in self.indexes}

    def reset(self) -> None:
        """Forget every image seen."""
        self._values: dict[str, list[float]] = {n: [] for n in self.indexes}
        self._card: dict[str, Any] | None = None
        self._shapes: list[list[int]] = []
        self._backends: set[str] = set()

    def _add(self, inputs: dict[str, object]) -> dict[str, np.ndarray]:
        """Evaluate one batch and keep its per-image values."""
        result = evaluate(inputs, self.settings, layout=self.layout, backend=self.backend)
        for n in self.indexes:
            self._values[n].extend(float(v) for v in np.atleast_1d(result[n]))
        card = result["protocol"]
        self._card = self._card or card
        shape = card.get("image_shape")
        if shape is not None and shape not in self._shapes:
            self._shapes.append(shape)
        self._backends.add(card["batch"]["backend"])
        return {n: np.atleast_1d(result[n]) for n in self.indexes}

    @property
    def n_images(self) -> int:
        """Images seen since the last reset."""
        return len(self._values[self.indexes[0]])

    def compute(self) -> dict[str, Any]:
        """The table over every image seen since the last reset."""
        if self._card is None:
            raise SettingError("compute() before any update(): no image to average")
        means, stds = summarize(self._values)
        batch = {**self._card["batch"], "images": self.n_images, "backend": "+".join(sorted(self._backends))}
        card = {**self._card, "batch": batch, "image_shapes": self._shapes}
        card.pop("image_shape", None)
        return {**means, "std": stds, "per_image": {n: list(v) for n, v in self._values.items()}, "protocol": card}


class ReducedMetrics(_Accumulator):
    """Reduced-resolution indexes (Wald protocol) accumulated over batches.

    Parameters
    ----------
    settings : ReducedSettings, optional
        The settings value (:func:`pansharp_iqa.reduced_settings`), built once.
    layout : {"NCHW", "NHWC"}, default "NCHW"
        Layout of every batch (PAN-free).
    backend : {"auto", "host", "torch"}
        See :func:`pansharp_iqa.evaluate_reduced`.
    **keywords
        Instead of ``settings``: the keywords of :func:`~pansharp_iqa.reduced_settings` (``ratio``,
        ``bits``, ``protocol``, ``scale`` -- e.g. ``2047`` for [0, 1] outputs of 11-bit data,
        PanCollection's convention --, ``threshold``, ``indexes``, ``scale_mismatch``).

    Examples
    --------
    >>> gt = np.random.default_rng(1).integers(100, 2000, (2, 96, 96, 4)).astype(float)
    >>> m = ReducedMetrics(ratio=4, bits=11, layout="NHWC")
    >>> batch = m.update(gt + 5.0, gt)
    >>> sorted(m.compute()) == sorted([*m.indexes, "std", "per_image", "protocol"])
    True
    """

    def __init__(self, settings: Settings | None = None, *, layout: str = "NCHW", backend: str = "auto",
                 **keywords: Any) -> None:
        super().__init__(settings_of("reduced", settings, **keywords), layout, backend)

    def update(self, pred: object, target: object) -> dict[str, np.ndarray]:
        """Evaluate one batch and keep its per-image values.

        Parameters
        ----------
        pred, target : batch
            Predictions and references in the metric's layout (tensors or arrays).

        Returns
        -------
        dict
            This batch's values: index -> (N,) array.
        """
        return self._add({"fused": pred, "reference": target})


class FullMetrics(_Accumulator):
    """Full-resolution (no reference) indexes accumulated over batches.

    Parameters
    ----------
    settings : FullSettings, optional
        The settings value (:func:`pansharp_iqa.full_settings`), built once.
    layout : {"NCHW", "NHWC"}, default "NCHW"
        Layout of the prediction and MS batches; PAN as (N, 1, H, W) / (N, H, W, 1) or (N, H, W).
    backend : {"auto", "host", "torch"}
        See :func:`pansharp_iqa.evaluate_full`.
    **keywords
        Instead of ``settings``: the keywords of :func:`~pansharp_iqa.full_settings` (``sensor``,
        required, ``ratio``, ``bits``, ``protocol``, ``scale``, ``threshold``, ``nan_policy``,
        ``indexes``, ``scale_mismatch``).

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> ms = rng.integers(100, 2000, (1, 4, 16, 16)).astype(float)
    >>> pan = rng.integers(100, 2000, (1, 64, 64)).astype(float)
    >>> m = FullMetrics(sensor="none", ratio=4, bits=11)
    >>> _ = m.update(np.kron(ms, np.ones((1, 1, 4, 4))), ms, pan)
    >>> round(m.compute()["D_lambda"], 6) >= 0
    True
    """

    def __init__(self, settings: Settings | None = None, *, layout: str = "NCHW", backend: str = "auto",
                 **keywords: Any) -> None:
        super().__init__(settings_of("full", settings, **keywords), layout, backend)

    def update(self, pred: object, ms: object, pan: object) -> dict[str, np.ndarray]:
        """Evaluate one batch (fused, MS, PAN) and keep its per-image values.

        Parameters
        ----------
        pred, ms : batch
            Fused images and their low-resolution MS in the metric's layout (tensors or arrays).
        pan : batch
            PAN images, (N, 1, H, W) / (N, H, W, 1) or (N, H, W).

        Returns
        -------
        dict
            This batch's values: index -> (N,) array.
        """
        return self._add({"fused": pred, "ms": ms, "pan": pan})

"""Validation of NLRNet on a reduced-resolution h5 through the library's MindSpore metric.

The network's [0, 1] outputs are scored batch by batch by
:class:`pansharp_iqa.tensor.mindspore_adapter.ReducedQuality` (a ``mindspore.train.Metric``) with
``scale = 2**bits - 1`` (bits from the h5 metadata): each patch's toolbox-2020 indexes (Q2n, Q,
SAM, ERGAS, SCC) are exactly those of ``pansharp_iqa.evaluate_reduced`` on it in DN, and the
mean over patches is reported, as image-set averages are in Lei et al., IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2021.3067097.

The trainer runs an explicit loop (:func:`evaluate_h5`) rather than ``Model.eval``: validation
patches larger than the training patches are fused tile by tile (:mod:`.tiling`, a numpy loop
around the network, as ``infer`` does), which no eval network can express in graph mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .dataset import H5PatchSource
from .h5data import H5Meta

__all__ = ["reduced_quality", "iter_predictions", "predict_batches", "evaluate_h5", "MIN_RR_SIZE", "INDEXES"]

#: smallest patch the reduced-resolution protocol scores: 20 + 21 px cut, then a 32 px Q window
MIN_RR_SIZE = 20 + 21 + 32
INDEXES = ("Q2n", "Q", "SAM", "ERGAS", "SCC")

Predict = Callable[[np.ndarray, np.ndarray], Any]


def reduced_quality(meta: H5Meta, *, producer: str | None = None):  # noqa: ANN201 - ReducedQuality (lazy MindSpore)
    """The validation metric of an h5's [0, 1] patches: the toolbox-2020 reduced-resolution indexes (:data:`INDEXES`) at
    the file's ratio and bits, ``scale = 2**bits - 1``; ``producer`` declares the predictions DN (its name)."""
    from .. import Declarations, reduced_settings
    from ..tensor.mindspore_adapter import ReducedQuality

    declared = None if producer is None else Declarations().with_value("fused", "dn", True, producer)
    return ReducedQuality(reduced_settings(ratio=meta.ratio, bits=meta.bits, scale=meta.dn_scale, declared=declared))


def iter_predictions(predict: Predict, lms: np.ndarray, pan: np.ndarray, batch: int
                     ) -> Iterator[tuple[slice, Any]]:
    """Run ``predict`` over (N, B, H, W) inputs in batches of a fixed size."""
    n = lms.shape[0]
    for start in range(0, n, batch):
        idx = np.arange(start, start + batch).clip(max=n - 1)
        keep = min(batch, n - start)
        out = predict(lms[idx], pan[idx])
        yield slice(start, start + keep), (out if keep == batch else out[:keep])


def predict_batches(predict: Predict, lms: np.ndarray, pan: np.ndarray, batch: int) -> np.ndarray:
    """The outputs of :func:`iter_predictions` as one float32 (N, B, H, W) numpy array."""
    from ..foreign import to_numpy

    return np.concatenate([np.asarray(to_numpy("fused", out), dtype=np.float32)
                           for _, out in iter_predictions(predict, lms, pan, batch)])


def evaluate_h5(predict: Predict, meta: H5Meta, *, batch: int = 8, chunk: int = 64) -> dict:
    """Score a model on every patch of an h5 file through :func:`reduced_quality`."""
    if meta.size < MIN_RR_SIZE:
        raise ValueError(
            f"{meta.path}: validation patches are {meta.size} px; the reduced-resolution protocol "
            f"cuts 20+21 px and needs 32 px Q windows, so use patches >= {MIN_RR_SIZE} px "
            f"(e.g. prepare --patch 128 for the validation set)")
    source = H5PatchSource(meta)
    metric = reduced_quality(meta)
    metric.clear()
    for start in range(0, meta.n, chunk):
        lms, pan, gt = source.batch(range(start, min(meta.n, start + chunk)))
        for patches, fused in iter_predictions(predict, lms, pan, batch):
            metric.update(fused, gt[patches])
    table = metric.compute()
    result: dict = {k: table[k] for k in metric.index_names}
    result.update(std=table["std"], n_patches=meta.n, sensor=meta.sensor, protocol=table["protocol"])
    return result

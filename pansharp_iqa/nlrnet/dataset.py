"""``mindspore.dataset.GeneratorDataset`` source over an NLRNet h5 file.

The file is opened lazily, once per worker process (the handle is never pickled), so the source
works with multi-process data loading. Samples are ``(lms, pan, gt)`` float32 in [0, 1]
(N x C x H x W layout, one patch per item). For NLRNet training (Lei et al., IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2021.3067097).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .h5data import H5Meta

__all__ = ["H5PatchSource", "make_dataset", "epoch_order", "COLUMNS"]

COLUMNS = ["lms", "pan", "gt"]


class H5PatchSource:
    """Random-access source of ``(lms, pan, gt)`` patches."""

    def __init__(self, meta: H5Meta) -> None:
        self.meta = meta
        self._h5 = None
        self._pid: int | None = None

    def _file(self):  # noqa: ANN202 - h5py.File
        if self._h5 is None or self._pid != os.getpid():
            import h5py

            self._h5 = h5py.File(self.meta.path, "r")
            self._pid = os.getpid()
        return self._h5

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_h5"] = None
        state["_pid"] = None
        return state

    def __len__(self) -> int:
        return self.meta.n

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f = self._file()
        i = int(index)
        s = np.float32(self.meta.data_scale)
        return tuple(np.asarray(f[k][i], dtype=np.float32) / s for k in COLUMNS)  # type: ignore[return-value]

    def batch(self, indices: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stack several patches (validation / inference helper)."""
        items = [self[i] for i in indices]
        return tuple(np.stack([it[k] for it in items]) for k in range(3))  # type: ignore[return-value]


def epoch_order(n: int, seed: int, epoch: int, global_batch: int) -> np.ndarray:
    """Deterministic shuffled patch order of one epoch (incomplete last global batch dropped)."""
    order = np.random.default_rng([int(seed), int(epoch)]).permutation(n)
    return order[: (n // global_batch) * global_batch]


def make_dataset(source: H5PatchSource, order: np.ndarray, batch_size: int, *, rank: int = 0,
                 world: int = 1, workers: int = 1):  # noqa: ANN201 - mindspore.dataset.Dataset
    """Batched ``GeneratorDataset`` for one epoch, sharded for data parallelism."""
    import mindspore.dataset as ds

    g = batch_size * world
    steps = len(order) // g
    mine = order[: steps * g].reshape(steps, world, batch_size)[:, rank, :].reshape(-1)
    dataset = ds.GeneratorDataset(
        source, column_names=COLUMNS, sampler=ds.SubsetSampler([int(i) for i in mine]),
        num_parallel_workers=max(1, workers), python_multiprocessing=workers > 1,
    )
    return dataset.batch(batch_size, drop_remainder=True)

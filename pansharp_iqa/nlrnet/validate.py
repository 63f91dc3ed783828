"""Validation of NLRNet on a reduced-resolution h5 through ``pansharp_iqa.evaluate_reduced``.

Outputs are brought to DN (x (2**bits - 1), bits from the h5 metadata) and scored per patch with
the toolbox-2020 protocol (Q2n, Q, SAM, ERGAS, SCC); the mean over patches is reported, as
image-set averages are in Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .dataset import H5PatchSource
from .h5data import H5Meta

__all__ = ["predict_batches", "evaluate_h5", "score_reduced", "MIN_RR_SIZE", "INDEXES"]

#: smallest patch the reduced-resolution protocol scores: 20 + 21 px cut, then a 32 px Q window
MIN_RR_SIZE = 20 + 21 + 32
INDEXES = ("Q2n", "Q", "SAM", "ERGAS", "SCC")


def predict_batches(predict: Callable[[np.ndarray, np.ndarray], np.ndarray], lms: np.ndarray,
                    pan: np.ndarray, batch: int) -> np.ndarray:
    """Run ``predict`` over (N, B, H, W) inputs in batches of a fixed size.

    The last batch is padded (by repeating its last item) so every call sees the same shape
    (graph mode on Ascend/GPU compiles once); padded outputs are discarded.

    Parameters
    ----------
    predict : callable
        ``predict(lms, pan) -> fused`` on numpy float32 arrays.
    lms : ndarray, shape (N, B, H, W)
    pan : ndarray, shape (N, 1, H, W)
    batch : int

    Returns
    -------
    ndarray, shape (N, B, H, W), float32
    """
    n = lms.shape[0]
    outs = []
    for start in range(0, n, batch):
        idx = np.arange(start, start + batch).clip(max=n - 1)
        out = np.asarray(predict(lms[idx], pan[idx]), dtype=np.float32)
        outs.append(out[: min(batch, n - start)])
    return np.concatenate(outs)


def evaluate_h5(predict: Callable[[np.ndarray, np.ndarray], np.ndarray], meta: H5Meta, *,
                batch: int = 8, chunk: int = 64) -> dict:
    """Score a model on every patch of an h5 file.

    Parameters
    ----------
    predict : callable
        ``predict(lms, pan) -> fused`` on [0, 1] float32 (N, C, H, W) arrays.
    meta : H5Meta
        Validation file metadata (sensor, ratio, bits).
    batch : int
        Inference batch size.
    chunk : int
        Patches read from disk at a time.

    Returns
    -------
    dict
        Mean of each index over patches (``Q2n``, ``Q``, ``SAM`` in degrees, ``ERGAS``, ``SCC``),
        ``n_patches``, ``sensor``, and the protocol card of ``evaluate_reduced`` (``protocol``).

    Raises
    ------
    ValueError
        If the patches are smaller than the protocol can score (:data:`MIN_RR_SIZE` px).
    """
    if meta.size < MIN_RR_SIZE:
        raise ValueError(
            f"{meta.path}: validation patches are {meta.size} px; the reduced-resolution protocol "
            f"cuts 20+21 px and needs 32 px Q windows, so use patches >= {MIN_RR_SIZE} px "
            f"(e.g. prepare --patch 128 for the validation set)")
    source = H5PatchSource(meta)
    per_patch: list[dict] = []
    card = None
    for start in range(0, meta.n, chunk):
        lms, pan, gt = source.batch(range(start, min(meta.n, start + chunk)))
        fused = predict_batches(predict, lms, pan, batch)
        scores, card = score_reduced(fused, gt, ratio=meta.ratio, bits=meta.bits)
        per_patch.extend(scores)
    result: dict = {k: float(np.mean([p[k] for p in per_patch])) for k in INDEXES}
    result.update(n_patches=meta.n, sensor=meta.sensor, protocol=card)
    return result


def score_reduced(fused: np.ndarray, gt: np.ndarray, *, ratio: int, bits: int
                  ) -> tuple[list[dict], dict | None]:
    """Reduced-resolution indexes of each (fused, gt) pair of [0, 1] (N, B, H, W) stacks.

    Both are brought to DN with ``scale = 2**bits - 1`` inside ``pansharp_iqa.evaluate_reduced``
    (recorded in its card).

    Parameters
    ----------
    fused, gt : ndarray, shape (N, B, H, W), [0, 1]
    ratio : int
        Resolution ratio (ERGAS).
    bits : int
        Radiometric bits of the data.

    Returns
    -------
    (scores, card)
        One dict of ``Q2n Q SAM ERGAS SCC`` per pair, and the protocol card of the last call.
    """
    import pansharp_iqa as core

    scores, card = [], None
    for f, g in zip(fused, gt):
        res = core.evaluate_reduced(
            np.transpose(f, (1, 2, 0)).astype(np.float64),
            np.transpose(g, (1, 2, 0)).astype(np.float64),
            ratio=ratio, bits=bits, scale=float(2 ** bits - 1))
        scores.append({k: float(res[k]) for k in INDEXES})
        card = res["protocol"]
    return scores, card

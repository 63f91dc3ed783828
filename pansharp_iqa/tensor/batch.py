"""Evaluating a batch: one value per image and index, on the host or on the tensor's device.

:func:`evaluate_batch` is what :func:`pansharp_iqa.evaluate_reduced` / ``evaluate_full`` run for
``layout=`` batches and framework tensors. ``backend="host"`` evaluates each image with the numpy
core (the reference path, exactly the single-image numbers); ``backend="torch"`` computes every
index's chunk statistics for the whole batch on the tensor's device in float64
(:mod:`.torch_backend`) and finalizes them with the catalogue's shared finalize steps;
``backend="auto"`` takes the device path for tensors on an accelerator and the host path
otherwise (on CPU the numpy core is the faster one: ``benchmarks/bench_tensor.py``).

Examples
--------
>>> import pansharp_iqa as pi
>>> gt = np.random.default_rng(0).integers(100, 2000, (2, 4, 96, 96)).astype(float)
>>> r = pi.evaluate_reduced(gt * 1.01, gt, ratio=4, bits=11, layout="NCHW")
>>> r["Q2n"].shape, r["protocol"]["batch"]["images"]
((2,), 2)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..settings import EvaluationSettings
from ..validation import SettingError, ShapeError, check_choice
from .inputs import (
    Layout,
    check_layout,
    check_same_device,
    device_of,
    framework_of,
    host_images,
    host_pans,
    image_of_batch,
    is_tensor_like,
    to_numpy,
)

__all__ = ["BACKENDS", "choose_backend", "evaluate_batch", "needs_batch_path"]

#: ``backend=`` choices.
BACKENDS = ("auto", "host", "torch")


def needs_batch_path(inputs: Mapping[str, object], layout: object, backend: str) -> bool:
    """Whether an evaluation goes through :func:`evaluate_batch` (a batch, a tensor, or the torch
    backend asked for) rather than the single-array paths.

    Examples
    --------
    >>> needs_batch_path({"fused": np.zeros((4, 4, 1))}, None, "auto")
    False
    """
    check_choice("backend", backend, BACKENDS)
    return layout is not None or backend == "torch" or any(is_tensor_like(v) for v in inputs.values())


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def choose_backend(backend: str, inputs: Mapping[str, object]) -> str:
    """``"host"`` or ``"torch"`` for these inputs.

    ``"auto"`` picks ``"torch"`` for PyTorch tensors (or DLPack arrays PyTorch can take) on an
    accelerator, ``"host"`` for everything on the CPU.

    Raises
    ------
    SettingError
        ``backend="torch"`` without PyTorch installed, or on arrays PyTorch cannot take.

    Examples
    --------
    >>> choose_backend("auto", {"fused": np.zeros(2)})
    'host'
    """
    check_choice("backend", backend, BACKENDS)
    if backend == "host":
        return "host"
    on_device = any(device_of(v) != "cpu" for v in inputs.values() if v is not None)
    if backend == "auto":
        torchable = all(framework_of(v) in ("torch", "cupy", "dlpack", "numpy") for v in inputs.values()
                        if v is not None)
        return "torch" if on_device and torchable and _torch_available() else "host"
    if not _torch_available():
        raise SettingError("backend='torch' needs PyTorch: pip install 'pansharp_iqa[torch]' (torch==2.13.0 "
                           "for a CPU build), or use backend='host'")
    return "torch"


def _split(name: str, x: object, layout: Layout | None, pan: bool) -> list[np.ndarray]:
    if layout is None:  # one image, possibly a framework tensor
        return [np.asarray(to_numpy(name, x)) if is_tensor_like(x) else x]  # type: ignore[list-item]
    return (host_pans if pan else host_images)(name, x, layout)


def _batch_card(card: dict[str, Any], n: int, layout: Layout | None, backend: str, device: str) -> dict[str, Any]:
    return {**card, "batch": {"images": n, "layout": layout or "HWB", "backend": backend, "device": device}}


def evaluate_batch(engine: Callable[..., dict[str, Any]], settings: EvaluationSettings, inputs: Mapping[str, object], *,
                   layout: object, backend: str, pans: tuple[str, ...] = ()) -> dict[str, Any]:
    """Evaluate each image of a batch (or one tensor image) with validated settings.

    Parameters
    ----------
    engine : callable
        The host engine of one in-memory image, ``engine(*images, settings) -> result``
        (``reduced_in_memory`` / ``full_in_memory`` of :mod:`pansharp_iqa.evaluate`).
    settings : ReducedSettings or FullSettings
    inputs : dict
        The images by argument name, in the engine's order (e.g. ``fused``, ``reference``).
    layout : {"NCHW", "NHWC"} or None
        None: one (H, W, B) image (the result holds floats).
    backend : {"auto", "host", "torch"}
    pans : tuple of str
        Which inputs are PAN images.

    Returns
    -------
    dict
        Each index as a (N,) float64 array (floats for one image) and ``"protocol"``: the card,
        with ``"batch"``: ``images``, ``layout``, ``backend``, ``device``.

    Raises
    ------
    InputError
        Any rule of the gate, for the image it concerns (``image i of the batch: ...``); inputs
        on different devices; batches of different sizes.
    """
    lay = check_layout(layout)
    device = check_same_device(inputs)
    chosen = choose_backend(backend, inputs)
    if chosen == "torch":
        from .torch_backend import evaluate_torch, torch_computes

        if torch_computes(settings) or backend == "torch":
            return evaluate_torch(settings, inputs, layout=lay, pans=pans)
    split = {k: _split(k, v, lay, k in pans) for k, v in inputs.items()}
    sizes = {k: len(v) for k, v in split.items()}
    if len(set(sizes.values())) > 1:
        raise ShapeError(f"batches of different sizes: {sizes}")
    n = next(iter(sizes.values()))
    results = []
    for i in range(n):
        with image_of_batch(i) if lay is not None else _no_context():
            results.append(engine(*(split[k][i] for k in inputs), settings))
    card = _batch_card(results[0]["protocol"], n, lay, "host", device)
    if lay is None:
        return {**results[0], "protocol": card}
    names = [k for k in results[0] if k != "protocol"]
    return {**{k: np.array([r[k] for r in results], dtype=np.float64) for k in names}, "protocol": card}


class _no_context:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

"""Foreign arrays, the bottom floor: which framework holds an array, where it lives, and its images.

The core computes on numpy (H, W, B) images. This module lets every entry point take what
training loops hold: PyTorch tensors (CPU or CUDA, with or without ``requires_grad``), MindSpore
tensors, CuPy arrays and anything with ``__dlpack__`` or ``__array__``; and batches whose layout
is declared, never guessed: ``layout="NCHW"`` (PyTorch, MindSpore, PanCollection) or
``"NHWC"``. A single image keeps (H, W, B) and needs no ``layout``.

Nothing here imports a framework: arrays are recognised by their type's module and converted
through their own methods (``detach().cpu().numpy()``, ``asnumpy()``, ``get()``, DLPack).

Examples
--------
>>> imgs = host_images("fused", np.zeros((2, 4, 64, 48)), "NCHW")
>>> len(imgs), imgs[0].shape
(2, (64, 48, 4))
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import numpy as np

from .validation import InputError, LayoutError, SettingError, ShapeError

__all__ = [
    "Layout", "LAYOUTS", "framework_of", "is_tensor_like", "device_of", "to_numpy", "check_layout",
    "host_images", "host_pans", "check_same_device", "image_of_batch", "batched",
]

Layout = Literal["NCHW", "NHWC"]
LAYOUTS = ("NCHW", "NHWC")
F = TypeVar("F", bound=Callable[..., Any])


def framework_of(x: object) -> str:
    """``"numpy"``, ``"torch"``, ``"mindspore"``, ``"cupy"``, ``"jax"``, ``"dlpack"`` (another array with
    ``__dlpack__``), ``"array"`` (``__array__``) or ``"other"``."""
    if isinstance(x, np.ndarray):
        return "numpy"
    root = type(x).__module__.split(".")[0]
    if root in ("torch", "mindspore", "cupy", "jax", "jaxlib"):
        return "jax" if root == "jaxlib" else root
    if hasattr(x, "__dlpack__"):
        return "dlpack"
    if hasattr(x, "__array__"):
        return "array"
    return "other"


def is_tensor_like(x: object) -> bool:
    """Whether ``x`` is a framework's array (not numpy, not a path or a plain sequence)."""
    return framework_of(x) in ("torch", "mindspore", "cupy", "jax", "dlpack")


def device_of(x: object) -> str:
    """Where an array lives: ``"cpu"``, ``"cuda:0"``, ... (``"cpu"`` for numpy and host arrays)."""
    kind = framework_of(x)
    if kind == "torch":
        return str(x.device)  # type: ignore[attr-defined]
    if kind == "cupy":
        return f"cuda:{x.device.id}"  # type: ignore[attr-defined]
    if kind == "dlpack" and hasattr(x, "__dlpack_device__"):
        dev_type, dev_id = x.__dlpack_device__()
        return "cpu" if int(dev_type) == 1 else f"device{int(dev_type)}:{int(dev_id)}"
    return "cpu"


def to_numpy(name: str, x: object) -> np.ndarray | object:
    """A host numpy view or copy of a framework array (``x`` itself for anything else)."""
    kind = framework_of(x)
    if kind == "torch":
        t = x.detach()  # type: ignore[attr-defined]
        if t.device.type != "cpu":
            t = t.cpu()
        return t.resolve_conj().resolve_neg().numpy()
    if kind == "mindspore":
        return x.asnumpy()  # type: ignore[attr-defined]
    if kind == "cupy":
        return x.get()  # type: ignore[attr-defined]
    if kind == "jax":
        return np.asarray(x)
    if kind == "dlpack":
        try:
            return np.from_dlpack(x)  # type: ignore[arg-type]  # framework_of found __dlpack__ (duck typing)
        except (TypeError, RuntimeError, BufferError) as exc:
            raise InputError(f"{name}: numpy cannot read this array from its device ({exc}); copy it to "
                             "the host first, or pass a PyTorch tensor with backend='torch'") from None
    return x


def check_layout(layout: object) -> Layout | None:
    """Validate ``layout=`` (None: a single (H, W, B) image)."""
    if layout is None:
        return None
    key = str(layout).upper()
    if key not in LAYOUTS:
        raise SettingError(f"layout must be one of {', '.join(LAYOUTS)} (a batch) or None (one (H, W, B) image), "
                           f"got {layout!r}")
    return key  # type: ignore[return-value]


def _stack_list(name: str, x: Sequence[object], layout: Layout) -> np.ndarray:
    items = [np.asarray(to_numpy(f"{name}[{i}]", v)) for i, v in enumerate(x)]
    shapes = {a.shape for a in items}
    if len(shapes) > 1:
        raise ShapeError(f"{name}: the batch mixes image sizes {sorted(shapes)}; a batch holds images of one "
                         "size (evaluate the others in another call or update)")
    if not items:
        raise ShapeError(f"{name}: empty batch")
    return np.stack(items)


def _batch_array(name: str, x: object, layout: Layout) -> np.ndarray:
    arr = _stack_list(name, x, layout) if isinstance(x, (list, tuple)) else np.asarray(to_numpy(name, x))
    if arr.ndim != 4:
        what = "(N, C, H, W)" if layout == "NCHW" else "(N, H, W, C)"
        hint = " (a single image is (H, W, B) without layout=)" if arr.ndim == 3 else ""
        raise LayoutError(f"{name}: layout={layout!r} needs a 4-D {what} batch, got shape {arr.shape}{hint}")
    if arr.shape[0] == 0:
        raise ShapeError(f"{name}: empty batch")
    return arr


def host_images(name: str, x: object, layout: Layout) -> list[np.ndarray]:
    """The images of a batch as host (H, W, B) views, in batch order."""
    arr = _batch_array(name, x, layout)
    return [a.transpose(1, 2, 0) for a in arr] if layout == "NCHW" else list(arr)


def host_pans(name: str, x: object, layout: Layout) -> list[np.ndarray]:
    """The PAN images of a batch as host (H, W) views: (N, 1, H, W) / (N, H, W, 1) or (N, H, W)."""
    arr = _stack_list(name, x, layout) if isinstance(x, (list, tuple)) else np.asarray(to_numpy(name, x))
    if arr.ndim == 3:
        return list(arr)
    single = 1 if layout == "NCHW" else 3
    if arr.ndim != 4 or arr.shape[single] != 1:
        want = "(N, 1, H, W)" if layout == "NCHW" else "(N, H, W, 1)"
        raise LayoutError(f"{name}: a PAN batch is {want} or (N, H, W) with layout={layout!r}, got shape {arr.shape}")
    return list(arr[:, 0] if layout == "NCHW" else arr[..., 0])


def check_same_device(named: Mapping[str, object]) -> str:
    """All framework arrays of one call on one device; returns it."""
    devices = {k: device_of(v) for k, v in named.items() if v is not None and not isinstance(v, (list, tuple))}
    if len(set(devices.values())) > 1:
        where = ", ".join(f"{k} on {d}" for k, d in devices.items())
        raise InputError(f"inputs on different devices ({where}): move them to one device first")
    return next(iter(devices.values()), "cpu")


@contextlib.contextmanager
def image_of_batch(i: int) -> Iterator[None]:
    """Name the batch image an :class:`~pansharp_iqa.InputError` raised inside the block is about.

    Examples
    --------
    >>> try:
    ...     with image_of_batch(3):
    ...         raise ShapeError("fused: too small")
    ... except ShapeError as exc:
    ...     print(exc)
    image 3 of the batch: fused: too small (the batch's images are counted from 0, bands from 1)
    """
    try:
        yield
    except InputError as exc:
        raise type(exc)(f"image {i} of the batch: {exc} (the batch's images are counted from 0, bands from 1)") \
            from None


def batched(*images: str, pans: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Let an index function of (H, W, B) images take tensors and ``layout=`` batches.

    The decorated function has a ``layout`` keyword (default None). Without it, framework arrays
    are converted to host numpy images and the function runs once; with ``layout="NCHW"`` or
    ``"NHWC"`` it runs on every image of the batch and returns a (N,) float64 array.

    Parameters
    ----------
    *images : str
        Names of the image parameters.
    pans : tuple of str
        Names of PAN parameters ((N, 1, H, W) / (N, H, W) in a batch).

    Examples
    --------
    >>> @batched("a")
    ... def total(a, *, layout=None):
    ...     return float(np.sum(a))
    >>> total(np.ones((2, 3, 4, 4)), layout="NCHW").tolist()
    [48.0, 48.0]
    """
    def wrap(func: F) -> F:
        sig = inspect.signature(func)
        names = (*images, *pans)

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            layout = check_layout(kwargs.pop("layout", None))
            bound = sig.bind(*args, **kwargs)
            given = {n: bound.arguments.get(n) for n in names}
            if layout is None:
                if not any(is_tensor_like(v) for v in given.values()):
                    return func(*args, **kwargs)
                check_same_device(given)
                for n, v in given.items():
                    if v is not None:
                        bound.arguments[n] = to_numpy(n, v)
                return func(*bound.args, **bound.kwargs)
            if bound.arguments.get("return_map"):
                raise SettingError("return_map needs a single image; call without layout= for each image")
            check_same_device(given)
            split = {n: (host_pans if n in pans else host_images)(n, v, layout)
                     for n, v in given.items() if v is not None}
            sizes = {n: len(v) for n, v in split.items()}
            if len(set(sizes.values())) > 1:
                raise ShapeError(f"batches of different sizes: {sizes}")
            out = []
            for i in range(next(iter(sizes.values()))):
                for n, v in split.items():
                    bound.arguments[n] = v[i]
                with image_of_batch(i):
                    out.append(func(*bound.args, **bound.kwargs))
            return np.asarray(out, dtype=np.float64)

        return run  # type: ignore[return-value]

    return wrap

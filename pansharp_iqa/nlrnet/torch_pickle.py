"""Read a PyTorch ``state_dict`` file (``torch.save``) into numpy arrays, without PyTorch.

``torch.save`` (PyTorch >= 1.6, the default "zip" format) writes a zip archive
``<name>/data.pkl`` + ``<name>/data/<key>`` (one raw little-endian buffer per storage) +
``<name>/byteorder`` (optional). ``data.pkl`` is a pickle whose tensors are
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` and
whose storages are persistent ids ``('storage', <torch.XStorage>, key, location, numel)``.

Unpickling runs code named by the file, so this reader is restricted: it resolves exactly
``collections.OrderedDict``, ``torch._utils._rebuild_tensor_v2`` (rebuilt here as a numpy view)
and the ``torch.*Storage`` type names (read as dtypes only; nothing of torch is imported). Any
other global, persistent id or archive layout is refused with :class:`TorchFormatError`.
Used to import the NLRNet weights released by Lei et al. (IEEE TGRS 60, 2022,
doi:10.1109/TGRS.2021.3067097), whose ``main.py`` saves ``torch.save(model.state_dict(), ...)``.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["read_torch_state_dict", "TorchFormatError", "STORAGE_DTYPES"]

#: ``torch.<name>`` storage types and the numpy dtype of their raw buffers (little-endian)
STORAGE_DTYPES = {
    "FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2", "BFloat16Storage": "bf16",
    "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2", "CharStorage": "i1",
    "ByteStorage": "u1", "BoolStorage": "?",
}


class TorchFormatError(ValueError):
    """The file is not a plain PyTorch state_dict this reader accepts (one-line message)."""


class _StorageType:
    """Stands in for ``torch.XStorage`` inside persistent ids: carries the dtype only."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = STORAGE_DTYPES[name]


class _Tensor:
    """A tensor to rebuild once the pickle is read: storage key, offset, size, stride."""

    def __init__(self, storage: tuple, offset: int, size: tuple, stride: tuple) -> None:
        self.storage, self.offset, self.size, self.stride = storage, int(offset), tuple(size), tuple(stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,  # noqa: ANN001
                       backward_hooks=None, metadata=None) -> _Tensor:  # noqa: ANN001
    return _Tensor(storage, storage_offset, size, stride)


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, where: str) -> None:  # noqa: ANN001
        super().__init__(file)
        self.where = where

    def find_class(self, module: str, name: str):  # noqa: ANN201
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if module == "torch" and name in STORAGE_DTYPES:
            return _StorageType(name)
        raise TorchFormatError(f"{self.where}: refused to load {module}.{name} (only tensors of a "
                               "state_dict are read; save the model with torch.save(model.state_dict(), ...))")

    def persistent_load(self, pid):  # noqa: ANN001, ANN201
        if (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            return pid  # ('storage', type, key, location, numel)
        raise TorchFormatError(f"{self.where}: unsupported persistent id {str(pid)[:60]!r}")


def _buffer(z: zipfile.ZipFile, prefix: str, storage: tuple, where: str) -> np.ndarray:
    _, stype, key, _location, numel = storage
    name = f"{prefix}data/{key}"
    try:
        raw = z.read(name)
    except KeyError:
        raise TorchFormatError(f"{where}: storage {key} is missing from the archive") from None
    if stype.dtype == "bf16":  # bfloat16: the high 16 bits of a float32
        arr = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        arr = np.frombuffer(raw, np.dtype(stype.dtype))
    if arr.size < int(numel):
        raise TorchFormatError(f"{where}: storage {key} holds {arr.size} values, {numel} expected")
    return arr


def read_torch_state_dict(path: str | Path) -> dict[str, np.ndarray]:
    """The tensors of a ``torch.save``'d state_dict, as numpy arrays, without importing torch."""
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):
        raise TorchFormatError(
            f"{where}: not a torch.save zip archive (legacy format of PyTorch < 1.6, or not PyTorch "
            "at all); re-save it with a recent PyTorch: torch.save(torch.load(f), f)")
    with zipfile.ZipFile(path) as z:
        pkl = [n for n in z.namelist() if n.endswith("data.pkl") and n.count("/") <= 1]
        if len(pkl) != 1:
            raise TorchFormatError(f"{where}: a torch.save archive has one <name>/data.pkl; found {len(pkl)}")
        prefix = pkl[0][: -len("data.pkl")]
        if f"{prefix}byteorder" in z.namelist() and z.read(f"{prefix}byteorder").strip() != b"little":
            raise TorchFormatError(f"{where}: big-endian archive (byteorder file): not supported")
        with z.open(pkl[0]) as f:
            try:
                obj = _RestrictedUnpickler(f, where).load()
            except TorchFormatError:
                raise
            except Exception as exc:  # noqa: BLE001 - any malformed pickle is a format error
                raise TorchFormatError(f"{where}: unreadable data.pkl ({type(exc).__name__}: {exc})") from None
        if not isinstance(obj, dict):
            raise TorchFormatError(f"{where}: holds a {type(obj).__name__}, not a state_dict (a mapping "
                                   "of names to tensors); save model.state_dict()")
        out: dict[str, np.ndarray] = {}
        cache: dict[str, np.ndarray] = {}
        for name, t in obj.items():
            if not isinstance(t, _Tensor):
                raise TorchFormatError(f"{where}: entry {name!r} is a {type(t).__name__}, not a tensor")
            key = str(t.storage[2])
            if key not in cache:
                cache[key] = _buffer(z, prefix, t.storage, where)
            buf = cache[key]
            size = tuple(int(s) for s in t.size)
            if not size:
                out[str(name)] = np.array(buf[t.offset])
                continue
            # strict=False: size and stride are as the file gives them (as_strided below refuses a mismatch)
            last = (t.offset + sum((s - 1) * st for s, st in zip(size, t.stride, strict=False))
                    if all(size) else t.offset)
            if t.offset < 0 or last >= buf.size or min(t.stride) < 0:
                raise TorchFormatError(f"{where}: tensor {name!r} lies outside its storage")
            view = np.lib.stride_tricks.as_strided(
                buf[t.offset:], shape=size, strides=tuple(s * buf.itemsize for s in t.stride),
                writeable=False)
            out[str(name)] = np.ascontiguousarray(view).copy()
    return out

"""Locating and loading a method's fused image for a scene (``<method>/<scene>.<ext>``) in the values
and band order its file declares, and holding a GeoTIFF result's georeference against its scene's."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..validation import finite_range
from .arrays import h5_dataset_shapes, read_h5_item, read_mat, read_npy, read_npz
from .declared import Declared, band_order, read_declared
from .discovery import NETWORK_RESULT_PATTERN, RESULT_SUBFOLDER, SceneSource, network_result_index
from .errors import DataError
from .geotiff import check_same_grid_files, read_geotiff
from .orientation import match_expected_shape

__all__ = ["RESULT_EXTENSIONS", "RESULT_KEYS", "band_names_file", "check_result_georeference", "find_result_file",
           "check_numbering", "load_result", "method_result_files", "result_key", "result_record", "stacked_items"]

RESULT_EXTENSIONS = (".mat", ".tif", ".tiff", ".npy", ".npz", ".h5", ".hdf5")
#: Variable names tried, in order, when a container holds more than one array.
RESULT_KEYS = ("I_F", "sr", "fused", "I_Fus", "output")


def method_result_files(method_dir: str | Path) -> list[Path]:
    """The result files of a method folder: ``METHOD/*`` and ``METHOD/results/*`` with a result extension."""
    method_dir = Path(method_dir)
    files = []
    for folder in (method_dir, method_dir / RESULT_SUBFOLDER):
        try:  # the extension in any case (B.NPY is B's result)
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        files += [folder / n for n in names if Path(n).suffix.lower() in RESULT_EXTENSIONS and (folder / n).is_file()]
    return files


def stacked_items(path: str | Path) -> int | None:
    """``N`` when the file's result array is 4-D (N x C x H x W, read from its header), else ``None``."""
    path = Path(path)
    ext = path.suffix.lower()
    try:
        if ext == ".npy":
            shapes = {"": tuple(np.load(path, mmap_mode="r", allow_pickle=False).shape)}
        elif ext in (".h5", ".hdf5"):
            shapes = h5_dataset_shapes(path)
        elif ext == ".mat":
            import scipy.io

            try:
                shapes = {n: tuple(s) for n, s, c in scipy.io.whosmat(os.fspath(path)) if c not in ("char", "cell",
                                                                                                  "struct")}
            except NotImplementedError:  # v7.3: HDF5, MATLAB's axis order reversed
                shapes = {k: s[::-1] for k, s in h5_dataset_shapes(path).items()}
        else:
            return None
        shape = shapes[result_key(list(shapes), path)]
    except (DataError, OSError, ValueError, KeyError):
        return None
    return int(shape[0]) if len(shape) == 4 else None


def check_numbering(method_dir: str | Path, items: int, first_index: int = 0) -> None:
    """Refuse PanCollection results numbered from another number than ``first_index`` (``method.toml``): files
    ``output_mulExm_1..N`` for the ``N`` items of a file numbered from 0 would each be scored against the next item.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = [(folder / f"output_mulExm_{i}.mat").write_bytes(b"") for i in (1, 2)]
    >>> check_numbering(folder, 2, first_index=1)  # declared: accepted; check_numbering(folder, 2) refuses them
    """
    numbers = sorted({n for p in method_result_files(method_dir) if (n := network_result_index(p.stem)) is not None})
    if not numbers or items < 1:
        return
    other = 1 - first_index if first_index in (0, 1) else 0
    # the evidence: a number only the other numbering has, and the one end only the declared numbering has missing
    out, need = (items - 1 + other, first_index) if other > first_index else (other, items - 1 + first_index)
    if out in numbers and need not in numbers:
        where = Path(method_dir).resolve().name
        raise DataError(
            f"{NETWORK_RESULT_PATTERN.replace('<i>', f'{numbers[0]}..{numbers[-1]}')} number the {items} items of the "
            f"dataset from {other}, not from {first_index} ({NETWORK_RESULT_PATTERN.replace('<i>', str(out))} exists, "
            f"{NETWORK_RESULT_PATTERN.replace('<i>', str(need))} does not): each would be scored against the "
            f"{'next' if other > first_index else 'previous'} item. If they are numbered from {other}, declare "
            f"first_index = {other} in {where}/method.toml (else rename them)")


def find_result_file(method_dir: str | Path, source: SceneSource,
                     first_index: int = 0) -> tuple[Path, int | None] | None:
    """The result file of one scene in a method folder (``METHOD/`` or ``METHOD/results/``).

    Looked up as ``<scene>.<ext>``; for item ``i`` of a PanCollection ``.h5`` also
    ``output_mulExm_<i + first_index>.<ext>`` as networks write it, else a stacked result (N x C x H x W, ``N`` the
    dataset's): ``<stem>.<ext>``, or the method's only such file.

    Parameters
    ----------
    method_dir : str or os.PathLike
        The method's folder (its results in it or in its ``results/`` subfolder).
    source : SceneSource
        The scene (from :func:`discover_scenes`).
    first_index : int
        The number of the first item in ``output_mulExm_<i>`` names: 0 as the PanCollection scripts write them,
        or 1 (``method.toml``'s ``first_index``).

    Returns
    -------
    (Path, int or None) or None
        The result file and the item of the scene in it (None: a file of its own); None where the method has no
        result for the scene.

    Raises
    ------
    DataError
        Several files claim the scene, or a file named as the dataset's stack is not one.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp()); (folder / "results").mkdir()
    >>> _ = (folder / "results" / "output_mulExm_3.mat").write_bytes(b"")
    >>> scene = SceneSource("test_wv3_03", "h5", (("bundle", "test_wv3.h5"),), index=3, count=20)
    >>> path, item = find_result_file(folder, scene); path.relative_to(folder).as_posix(), item
    ('results/output_mulExm_3.mat', None)
    """
    files = method_result_files(method_dir)
    index = source.index if source.kind == "h5" else None
    found = [p for p in files if p.stem == source.name or (index is not None and network_result_index(p.stem)
                                                           == index + first_index)]
    if len(found) > 1:
        raise DataError(
            f"several result files for scene {source.name!r}: {', '.join(_shown(p, method_dir) for p in found)}"
        )
    if found:
        return found[0], None
    if index is None:
        return None
    stem = Path(source.file_for("bundle") or "").stem
    named = [p for p in files if p.stem == stem]
    if named:
        n = stacked_items(named[0])
        if n is not None and source.count in (None, n):
            return named[0], index
        raise DataError(f"{_shown(named[0], method_dir)} is named as the dataset's stack but is not an N x C x H x W "
                        f"array of its {source.count} scenes" + (f" (it holds {n})" if n is not None else ""))
    stacks = [p for p in files if network_result_index(p.stem) is None and stacked_items(p) == source.count]
    if len(stacks) > 1:
        raise DataError(f"several stacked result files: {', '.join(_shown(p, method_dir) for p in stacks)}")
    return (stacks[0], index) if stacks else None


def _shown(path: Path, method_dir: str | Path) -> str:
    return path.relative_to(method_dir).as_posix()


def result_key(names: Sequence[str], path: str | os.PathLike[str]) -> str:
    """The array of a container that holds the fused image: the only one, or the one named like :data:`RESULT_KEYS` (the
    last component of an HDF5 path: ``results/fused`` is ``fused``)."""
    names = list(names)
    name = Path(path).name
    if not names:
        raise DataError(f"{name}: holds no numeric array (looked at every dataset and variable)")
    if len(names) == 1:
        return names[0]
    for key in RESULT_KEYS:
        hits = [n for n in names if n.rsplit("/", 1)[-1].lower() == key.lower()]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise DataError(f"{name}: several arrays are named {key!r} ({', '.join(hits)}); keep one result per file")
    raise DataError(
        f"{name}: holds several arrays ({', '.join(sorted(names))}); name the fused one "
        f"{' or '.join(RESULT_KEYS)}"
    )


def _one_result(arrays: dict[str, np.ndarray], path: Path) -> np.ndarray:
    """The result array of a container; two known result names holding different arrays are refused."""
    key = result_key(list(arrays), path)
    known = {k.lower() for k in RESULT_KEYS}
    other = next((n for n in sorted(arrays) if n != key and n.rsplit("/", 1)[-1].lower() in known
                  and not np.array_equal(arrays[n], arrays[key])), None)
    if other is not None:
        raise DataError(f"{path.name}: holds two results, {key!r} and {other!r}, with different arrays; keep one "
                        f"result per file (or rename the other, e.g. {other}_old)")
    return arrays[key]


def result_record(path: str | Path) -> Declared:
    """What a result file declares about its pixels (an HDF5 file: its result dataset's attributes)."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext in (".h5", ".hdf5"):
        return read_declared(path, result_key(list(h5_dataset_shapes(path)), path))
    return read_declared(path) if ext in (".tif", ".tiff") else Declared(path.name)


def load_result(path: str | Path, expected_shape: Sequence[int], index: int | None = None, *,
                like: str | os.PathLike[str] | None = None, names: Sequence[str | None] | None = None) -> np.ndarray:
    """A fused image as ``(H, W, B)`` float64, in the values its file declares (its scale/offset), its bands in
    the scene's order by name (``pansharp_iqa.io.declared.band_order``).

    Parameters
    ----------
    path : str or os.PathLike
        The result file: ``.mat``, ``.npz``, ``.npy``, GeoTIFF (``.tif``/``.tiff``) or HDF5 (``.h5``/``.hdf5``);
        a container holds one array, or names the fused one (``I_F``, ``sr``, ``fused``, ``I_Fus`` or ``output``).
    expected_shape : sequence of int
        The scene's ``(H, W, B)``: the result is oriented to it (``(B, H, W)`` storage accepted) and must have it.
    index : int, optional
        The item of a stacked file (N x C x H x W, from :func:`find_result_file`); None: the file is one image.
    like : str or os.PathLike, optional
        The scene file whose declared band names give the scene's band order.
    names : sequence of str or None, optional
        The scene's band names (None entries: unnamed), instead of ``like``'s.

    Returns
    -------
    ndarray, shape expected_shape, float64
        The fused image, its bands reordered to the scene's where both declare names.

    Raises
    ------
    DataError
        A file that cannot be read, an unsupported format, non-numeric data, another shape, band names that do
        not pair with the scene's, or NaN/Inf values.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s1.npy"
    >>> np.save(path, np.arange(2 * 3 * 4, dtype=np.uint16).reshape(4, 2, 3))  # stored (B, H, W)
    >>> fused = load_result(path, (2, 3, 4))
    >>> fused.shape, fused.dtype.name, fused[0, 1].tolist()
    ((2, 3, 4), 'float64', [1.0, 7.0, 13.0, 19.0])
    """
    path = Path(path)
    ext = path.suffix.lower()
    declared = result_record(path)
    if ext == ".mat":
        raw = _one_result(read_mat(path), path)
    elif ext == ".npz":
        raw = _one_result(read_npz(path), path)
    elif ext == ".npy":
        raw = read_npy(path)
    elif ext in (".tif", ".tiff"):
        raw = read_geotiff(path)  # the GeoTIFF reader applies its scale/offset
    elif ext in (".h5", ".hdf5"):
        raw, index = read_h5_item(path, result_key(list(h5_dataset_shapes(path)), path), index), None
    else:
        raise DataError(f"{path.name}: unsupported result format {ext!r}")
    if index is not None:
        raw = raw[index]
    if raw.dtype.kind not in "biuf":
        raise DataError(f"{path.name}: non-numeric data (dtype {raw.dtype})")
    arr = match_expected_shape(raw, expected_shape, name=path.name)
    if ext not in (".tif", ".tiff"):
        arr = declared.values(arr)
    scene = names if names is not None else read_declared(like).names if like is not None else None
    order = None if scene is None else band_order(declared.names, scene, result_name=path.name,
                                                  scene_name=Path(like).name if like is not None else "the scene")
    arr = arr if order is None else arr[..., list(order)]
    finite_range(path.name, np.asarray(arr))  # NaN/Inf refused; min/max in row chunks, no copy
    return np.ascontiguousarray(arr, dtype=np.float64)


def band_names_file(scene: SceneSource, resolution: str) -> str | None:
    """The scene file whose band names a result follows: its ground truth at reduced resolution, its MS at full."""
    return scene.file_for("gt" if resolution == "reduced" else "ms") if scene.kind == "split" else None


def check_result_georeference(result_file: str | os.PathLike[str], scene: SceneSource, resolution: str) -> None:
    """A GeoTIFF result must be on its scene's grid when both are georeferenced."""
    grid = scene.file_for("gt" if resolution == "reduced" else "pan")
    if grid is None or scene.kind != "split":
        return
    check_same_grid_files(result_file, grid, result_name=f"{Path(result_file).parent.name}/{Path(result_file).name}",
                          scene_name=Path(grid).name)

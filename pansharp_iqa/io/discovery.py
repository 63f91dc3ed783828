"""Which scenes a dataset holds, and which files make up each scene.

Layouts (one per scene, mixable within a folder):

* ``<scene>.mat`` -- arrays ``ms``/``pan``/``gt`` or the toolbox's ``I_MS_LR``/``I_PAN``/``I_GT``;
* ``<scene>.npz`` -- the same keys;
* ``<scene>_ms.tif``, ``<scene>_pan.tif``, ``<scene>_gt.tif`` (``.tiff``, ``.npy`` likewise);
* ``<scene>.h5`` holding ONE scene under the bundle keys (``I_MS_LR``/``I_PAN``/``I_GT``, as the
  hyperspectral toolbox's files; ``S2_10``/``S2_20``/``S2_60``/``S2_GT``, as the Sentinel-2 toolbox's;
  or ``ms``/``pan``/``gt``), H x W x B: read window by window (a whole PRISMA scene in bounded memory);
* a PanCollection-style ``.h5`` (datasets ``gt``, ``ms``, ``lms``, ``pan``, N x C x H x W): one
  scene per item, named ``<stem>_<i>`` (``i`` zero-padded to the width of ``N - 1``). Networks
  trained on PanCollection write item ``i``'s result as ``output_mulExm_<i>.mat`` (``i`` from 0, as
  DLPan-Toolbox's scripts write it and its MATLAB test loads ``output_mulExm_(num-1)`` for its
  ``num``-th scene): :func:`network_result_index`.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from .arrays import h5_dataset_shapes
from .errors import DataError, DatasetConfigError

__all__ = ["SceneSource", "discover_scenes", "network_result_index", "H5_SUFFIXES", "NETWORK_RESULT_PATTERN",
           "RESULT_SUBFOLDER", "SPLIT_SUFFIXES"]

H5_SUFFIXES = (".h5", ".hdf5")
SPLIT_SUFFIXES = (".tif", ".tiff", ".npy")
_ROLE_RE = re.compile(r"^(?P<scene>.+)_(?P<role>ms|pan|gt)$", re.IGNORECASE)
#: How PanCollection networks name item ``i``'s result (``i`` from 0), e.g. ``output_mulExm_3.mat``.
NETWORK_RESULT_PATTERN = "output_mulExm_<i>"
_NETWORK_RE = re.compile(r"^output_mulExm_(\d+)$", re.IGNORECASE)
#: Subfolder of a method's folder where those scripts write them (``METHOD/results/``).
RESULT_SUBFOLDER = "results"


def network_result_index(stem: str) -> int | None:
    """Item ``i`` of a result named ``output_mulExm_<i>`` (0-based), else ``None``.

    Examples
    --------
    >>> network_result_index("output_mulExm_07"), network_result_index("test_wv3_07")
    (7, None)
    """
    match = _NETWORK_RE.match(stem)
    return int(match[1]) if match else None


@dataclasses.dataclass(frozen=True)
class SceneSource:
    """Where one scene's inputs are (one entry of :func:`discover_scenes`).

    Parameters
    ----------
    name : str
        The scene's name; its results are looked up as ``<method>/<name>.<ext>`` (:func:`find_result_file`).
    kind : {"mat", "npz", "split", "h5", "h5bundle"}
        Its layout: one ``.mat`` or ``.npz`` file, one file per role (``"split"``: ``<name>_ms.tif``, ...), an
        item of a PanCollection-style ``.h5`` stack (``"h5"``) or a one-scene ``.h5`` (``"h5bundle"``).
    files : tuple of (str, str)
        ``(role, absolute path)`` pairs (roles ``"ms"``, ``"pan"``, ``"gt"``); role ``"bundle"`` for the
        single-file kinds, whose file holds every role.
    index : int, optional
        The item of a ``.h5`` stack (0-based); None for the other kinds.
    problem : str, optional
        Why the scene cannot be used (two layouts claim its name, a role file is missing): loading it fails
        with this message. None: usable.
    count : int, optional
        The number of items ``N`` of the ``.h5`` stack; None for the other kinds.

    Examples
    --------
    >>> s = SceneSource("s1", "split", (("ms", "/data/s1_ms.tif"), ("pan", "/data/s1_pan.tif")))
    >>> s.file_for("pan"), s.file_for("gt"), s.paths
    ('/data/s1_pan.tif', None, ['/data/s1_ms.tif', '/data/s1_pan.tif'])
    """

    name: str
    kind: str
    files: tuple[tuple[str, str], ...]
    index: int | None = None
    problem: str | None = None
    count: int | None = None

    @property
    def paths(self) -> list[str]:
        """Distinct input files of the scene, in a stable order."""
        return sorted({p for _, p in self.files})

    def file_for(self, role: str) -> str | None:
        """Path of the file holding ``role`` (``"bundle"`` files hold every role).

        Parameters
        ----------
        role : str
            ``"ms"``, ``"pan"``, ``"gt"`` (or ``"bundle"``).

        Returns
        -------
        str or None
            The file's absolute path; None where the scene has no file for ``role``.
        """
        for r, p in self.files:
            if r in (role, "bundle"):
                return p
        return None


def _natural_key(text: str) -> list[object]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", text)]


#: Dataset names of a one-scene HDF5 bundle (the toolboxes' variable names; a stack uses 4-D ms/pan/gt instead).
BUNDLE_KEYS = ("I_MS_LR", "I_PAN", "I_GT", "S2_10", "S2_20", "S2_60", "S2_GT")


def _h5_scenes(path: Path) -> list[SceneSource]:
    shapes = h5_dataset_shapes(path)
    if any(k in shapes and len(shapes[k]) in (2, 3) for k in BUNDLE_KEYS):
        return [SceneSource(path.stem, "h5bundle", (("bundle", str(path)),))]
    counts = {shapes[k][0] for k in ("pan", "ms", "gt") if k in shapes and len(shapes[k]) == 4}
    if not counts:
        raise DataError(
            f"{path}: not a PanCollection-style file (needs 4-D datasets 'pan', 'ms' and/or 'gt', "
            f"N x C x H x W; found {shapes})"
        )
    if len(counts) > 1:
        raise DataError(f"{path}: datasets disagree on the number of scenes: {shapes}")
    n = counts.pop()
    width = len(str(max(n - 1, 0)))
    return [
        SceneSource(f"{path.stem}_{i:0{width}d}", "h5", (("bundle", str(path)),), index=i, count=n)
        for i in range(n)
    ]


def discover_scenes(dataset: str | Path) -> tuple[list[SceneSource], list[str]]:
    """The scenes of a dataset folder or PanCollection ``.h5`` file, in natural name order, and the warnings of
    the discovery.

    A folder's scenes, one layout each (mixable within a folder): ``<scene>.mat`` or ``<scene>.npz`` (arrays
    ``ms``/``pan``/``gt`` or the toolbox's ``I_MS_LR``/``I_PAN``/``I_GT``); ``<scene>_ms.tif``,
    ``<scene>_pan.tif``, ``<scene>_gt.tif`` (``.tiff``, ``.npy`` likewise); ``<scene>.h5`` holding one scene
    (``I_MS_LR``/``I_PAN``/``I_GT``, Sentinel-2's ``S2_10``/``S2_20``/``S2_60``/``S2_GT``, or
    ``ms``/``pan``/``gt``, H x W x B); a PanCollection-style ``.h5`` (datasets ``gt``, ``ms``, ``lms``, ``pan``,
    N x C x H x W), one scene per item, named ``<stem>_<i>`` (``i`` zero-padded to the width of ``N - 1``).

    Parameters
    ----------
    dataset : str or os.PathLike
        The dataset folder, or a PanCollection-style ``.h5`` file.

    Returns
    -------
    scenes : list of SceneSource
        The scenes, in natural name order (``s2`` before ``s10``).
    warnings : list of str
        One line per ignored file or ambiguous name.

    Raises
    ------
    DatasetConfigError
        A missing dataset, a file that is not a PanCollection-style ``.h5``, or a dataset without scenes.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> np.savez(folder / "scene1.npz", ms=np.ones((16, 16, 4), np.uint16), pan=np.ones((64, 64), np.uint16))
    >>> np.save(folder / "other.npy", np.ones(3))
    >>> scenes, warnings = discover_scenes(folder)
    >>> [(s.name, s.kind) for s in scenes], warnings
    ([('scene1', 'npz')], ['ignored other.npy: per-role files are named <scene>_ms, <scene>_pan, <scene>_gt'])
    """
    root = Path(dataset).expanduser().resolve()
    warnings: list[str] = []
    if root.is_file():
        if root.suffix.lower() not in H5_SUFFIXES:
            raise DatasetConfigError(f"{root}: a dataset is a folder or a PanCollection-style .h5 file")
        try:
            return _h5_scenes(root), warnings
        except DataError as exc:
            raise DatasetConfigError(str(exc)) from None
    if not root.is_dir():
        raise DatasetConfigError(f"dataset {dataset} does not exist")
    claims: dict[str, list[SceneSource]] = {}
    split: dict[str, dict[str, str]] = {}
    for path in sorted(root.iterdir()):
        if not path.is_file():
            continue
        suffix = path.suffix.lower()
        if suffix in (".mat", ".npz"):
            src = SceneSource(path.stem, suffix[1:], (("bundle", str(path)),))
            claims.setdefault(src.name, []).append(src)
        elif suffix in H5_SUFFIXES:
            try:
                for src in _h5_scenes(path):
                    claims.setdefault(src.name, []).append(src)
            except DataError as exc:
                warnings.append(f"ignored {path.name}: {exc}")
        elif suffix in SPLIT_SUFFIXES:
            match = _ROLE_RE.match(path.stem)
            if match is None:
                warnings.append(
                    f"ignored {path.name}: per-role files are named <scene>_ms, <scene>_pan, <scene>_gt"
                )
                continue
            roles = split.setdefault(match["scene"], {})
            role = match["role"].lower()
            if role in roles:
                warnings.append(f"ignored {path.name}: {Path(roles[role]).name} already holds {role}")
                continue
            roles[role] = str(path)
    for scene, roles in split.items():
        src = SceneSource(scene, "split", tuple(sorted(roles.items())))
        claims.setdefault(scene, []).append(src)
    scenes: list[SceneSource] = []
    for name in sorted(claims, key=_natural_key):
        found = claims[name]
        if len(found) > 1:
            files = sorted({Path(p).name for s in found for p in s.paths})
            problem = f"ambiguous scene {name!r}: several layouts claim it ({', '.join(files)})"
            scenes.append(dataclasses.replace(found[0], problem=problem))
        else:
            scenes.append(found[0])
    if not scenes:
        raise DatasetConfigError(
            f"no scenes found in {root}: expected <scene>.mat, <scene>.npz, <scene>_ms/_pan/_gt.tif "
            "or .npy files, or a PanCollection-style .h5"
        )
    return scenes, warnings

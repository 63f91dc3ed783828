"""Display material of one (scene, method) pair for ``--format html`` and ``--figures``.

The evaluation worker already holds the pair's images, so it makes the display images there
(:func:`display_from_arrays`) and returns them, a few tens of kilobytes, with the pair's outcome:
nothing is read twice and the main process never holds whole scenes. Scenes evaluated tile-wise
are never loaded whole for a thumbnail: :func:`display_from_files` reads a decimated view of each
file (nearest neighbour, one row window at a time, through the same window readers as the
evaluation) plus the crop's window. Every pair makes the scene's reference panels too (a failed
pair from the inputs it read), so they do not depend on which pair succeeds. Pairs reused by
``--resume`` are read again by a display-only task (:attr:`pansharp_iqa.cli.scene_eval.SceneTask.display_only`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pansharp_iqa.io.dataset_config import DatasetSettings
from pansharp_iqa.io.windows import Source
from pansharp_iqa.reports.display import DISPLAY_SIDE, RgbChoice, downsample, residual_map, rgb_bands
from pansharp_iqa.reports.pair_display import ArrayImages, PairDisplay, make_pair_display

__all__ = ["display_from_arrays", "display_from_files", "rgb_choice"]


def rgb_choice(settings: DatasetSettings, n_bands: int) -> RgbChoice:
    """Bands shown as R, G, B for a dataset: ``band_names`` from ``dataset.toml``, else the
    sensor registry's band names (see :func:`pansharp_iqa.reports.display.rgb_bands`)."""
    names = settings.band_names
    if names is None:
        try:
            names = settings.resolved_sensor().band_names
        except Exception:  # noqa: BLE001 - an unknown sensor just means unknown band names
            names = None
    return rgb_bands(n_bands, names, sensor=settings.sensor)


class _DecimatedImages:
    """:class:`~pansharp_iqa.reports.pair_display.ImageAccess` over images read window by window
    (:class:`pansharp_iqa.io.windows.Source`: GeoTIFF, ``.npy`` or HDF5), in DN (times ``scales``): decimated views
    (nearest neighbour, one row window at a time) and crop windows, never the whole image."""

    def __init__(self, images: Mapping[str, Source], scales: Mapping[str, float]) -> None:
        self.images, self.scales = dict(images), scales
        self._views: dict[tuple[str, tuple[int, int]], np.ndarray] = {}
        H, W = self.shape("gt" if "gt" in self.images else "pan")
        self.notes = (
            f"tile-wise scene ({H} x {W}): shown from a decimated read (nearest neighbour) of each file, "
            "not loaded whole; its residual map is made from |fused - GT| at the sampled pixels",
        )

    def shape(self, role: str) -> tuple[int, int]:
        shape = self.images[role].shape
        return (int(shape[0]), int(shape[1]))

    def _view(self, role: str, shape: Sequence[int]) -> np.ndarray:
        key = (role, (int(shape[0]), int(shape[1])))
        if key not in self._views:
            img = self.images[role]
            H, W = self.shape(role)
            rows = np.minimum((np.arange(key[1][0]) + 0.5) * H / key[1][0], H - 1).astype(np.int64)
            cols = np.minimum((np.arange(key[1][1]) + 0.5) * W / key[1][1], W - 1).astype(np.int64)
            out = np.stack([np.asarray(img.read(r, r + 1, 0, W), dtype=np.float64)[0][cols] for r in rows])
            self._views[key] = (out * self.scales.get(role, 1.0)).astype(np.float32)
        return self._views[key]

    def display(self, role: str, bands: Sequence[int], shape: Sequence[int]) -> np.ndarray:
        view = self._view(role, shape)
        return view[:, :, list(bands)] if bands else view[:, :, 0]

    def window(self, role: str, rows: tuple[int, int], cols: tuple[int, int], bands: Sequence[int]) -> np.ndarray:
        part = np.asarray(self.images[role].read(*rows, *cols), dtype=np.float64) * self.scales.get(role, 1.0)
        return part[:, :, list(bands)] if bands else part[:, :, 0]

    def residual(self, shape: Sequence[int]) -> np.ndarray:
        # from the largest view already read (the display one), never a further read of the files
        size = max((k[1] for k in self._views if k[0] == "fused"), default=(int(shape[0]), int(shape[1])))
        return downsample(residual_map(self._view("fused", size), self._view("gt", size)), shape)


def _make(access: object, n_bands: int, *, method: str, settings: DatasetSettings, max_side: int,
          with_fused: bool) -> PairDisplay:
    return make_pair_display(access, method=method, resolution=settings.resolution,  # type: ignore[arg-type]
                             ratio=settings.ratio, rgb=rgb_choice(settings, n_bands),
                             max_side=int(max_side) or DISPLAY_SIDE, with_fused=with_fused)


def display_from_arrays(
    fused: np.ndarray | None, inputs: Mapping[str, np.ndarray], *, method: str, settings: DatasetSettings,
    max_side: int = DISPLAY_SIDE, scales: Mapping[str, float] | None = None,
) -> PairDisplay | str:
    """Display material from the arrays the evaluation already loaded (``scales``: each role's multiplier to DN)."""
    try:
        n_bands = (inputs["gt"] if "gt" in inputs else inputs["ms"]).shape[2]
        return _make(ArrayImages(fused, inputs, scales or {}), n_bands, method=method, settings=settings,
                     max_side=max_side, with_fused=fused is not None)
    except Exception as exc:  # noqa: BLE001 - a display problem never fails an evaluation
        return f"no display: {type(exc).__name__}: {exc}"


def display_from_files(
    images: Mapping[str, Source], *, method: str, settings: DatasetSettings, max_side: int = DISPLAY_SIDE,
    scales: Mapping[str, float] | None = None,
) -> PairDisplay | str:
    """Display material of a tile-wise pair from decimated reads of its files (bounded memory): ``images`` holds
    ``fused`` and ``gt`` (reduced) or ``ms`` and ``pan`` (full) as :class:`pansharp_iqa.io.windows.Source`; the rest
    as in :func:`display_from_arrays`."""
    try:
        n_bands = int(images["gt" if "gt" in images else "ms"].shape[2])
        return _make(_DecimatedImages(images, scales or {}), n_bands, method=method, settings=settings,
                     max_side=max_side, with_fused="fused" in images)
    except Exception as exc:  # noqa: BLE001 - a display problem never fails an evaluation
        return f"no display: {type(exc).__name__}: {exc}"

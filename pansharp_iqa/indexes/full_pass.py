"""The one full-resolution engine: the catalogue's statistics over one window of a scene.

A :class:`Scene` reads the inputs (``read(role, rows, cols)``: band planes at global positions)
and computes every image a requested statistic reads from the catalogue's declarations
(:data:`~.catalog.DERIVED`): a window of a derived image is its operator applied to the window of
its source widened by the declared halo, whose positions beyond the image follow the declared
border rule (:func:`pansharp_iqa.borders.border_index`), so the kept part equals the whole-image
result. :meth:`Scene.sums` hands each statistic (``Statistic.chunk``) the images it reads.

In memory (:mod:`pansharp_iqa.evaluation`, :mod:`pansharp_iqa.no_reference`) the whole image is
one window (:meth:`Scene.of`); tile by tile (:mod:`pansharp_iqa.tiled.full`), each tile's, whose
input pixels :meth:`Scene.support` lists; the PyTorch backend (``pansharp_iqa.torch_backend``)
computes the same declarations on the device. Nothing here names an index, an image or a protocol.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..borders import border_index, consecutive_runs
from ..validation import ShapeError, as_image
from .catalog import (
    DERIVED,
    FITS,
    FITTED_MAPS,
    ROLE_SCALES,
    ChunkContext,
    Derived,
    Index,
    Statistic,
    chunk_map,
    image_of,
    later_pass,
)
from .q2n import q2n_padded_positions

__all__ = ["Reader", "Scene", "given_planes", "scale_of", "whole_image", "split_maps", "following_context",
           "map_images"]

#: ``read(role, rows, cols) -> (C, len(rows), len(cols))`` float64 planes of an input at global positions.
Reader = Callable[[str, np.ndarray, np.ndarray], np.ndarray]


def given_planes(name: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
    """A caller's image of a derived one (e.g. the upsampled MS ``ms_exp``) as float64 band planes,
    checked against the fused image's ``(H, W, B)`` shape.

    Examples
    --------
    >>> given_planes("ms_exp", np.ones((4, 4, 2)), (4, 4, 2)).shape
    (2, 4, 4)
    """
    arr = as_image(name, value)
    if arr.shape != tuple(shape):
        raise ShapeError(f"{name} {arr.shape} must have the fused image's shape {tuple(shape)}")
    return np.moveaxis(arr, 2, 0)


def scale_of(name: str) -> str:
    """The grid an input or a derived image lives on: ``"pan"`` or ``"ms"``.

    Examples
    --------
    >>> scale_of("ms"), scale_of("pan_lr"), scale_of("exp")
    ('ms', 'ms', 'pan')
    """
    return DERIVED[name].scale if name in DERIVED else ROLE_SCALES.get(name, "pan")


@dataclasses.dataclass
class Scene:
    """The inputs of one full-resolution evaluation as the engine reads them.

    Parameters
    ----------
    read : Reader
        Planes of an input at global positions (a tile's patches; :meth:`of` in memory).
    roles : tuple of str
        The images given (``fused``, ``ms``, ``pan``; a derived image given instead, e.g. ``exp``).
    shape : (int, int)
        The fused image's rows and columns (PAN scale).
    ctx : ChunkContext
        Block size, ratio, protocol and MTF gains the declarations read.
    cache : dict, optional
        Keeps what does not read the sensor's MTF for another call on the same inputs and
        protocol (:func:`pansharp_iqa.evaluation.sensor_sensitivity`).
    """

    read: Reader
    roles: tuple[str, ...]
    shape: tuple[int, int]
    ctx: ChunkContext
    cache: dict[Any, Any] | None = None

    @classmethod
    def of(cls, planes: Mapping[str, np.ndarray], ctx: ChunkContext, cache: dict[Any, Any] | None = None) -> Scene:
        """A scene held in memory: whole (C, h, w) planes by role, read without a copy where a whole axis is.

        Examples
        --------
        >>> scene = Scene.of({"fused": np.ones((2, 8, 8)), "pan": np.arange(64.0).reshape(1, 8, 8)}, ChunkContext())
        >>> scene.window("pan", np.arange(2), np.array([7, 0])).tolist()
        [[[7.0, 0.0], [15.0, 8.0]]]
        """
        def read(name: str, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
            a = planes[name]
            a = a if np.array_equal(rows, np.arange(a.shape[1])) else a[:, rows]
            return a if np.array_equal(cols, np.arange(a.shape[2])) else a[:, :, cols]

        return cls(read, tuple(planes), planes["fused"].shape[1:], ctx, cache)

    def _length(self, name: str, axis: int) -> int:
        """Samples of ``name`` along an axis."""
        return self.shape[axis] // (self.ctx.ratio if scale_of(name) == "ms" else 1)

    def _source(self, d: Derived, lo: int, hi: int, axis: int, valid: bool = False) -> tuple[np.ndarray, int]:
        """The source positions the window ``[lo, hi)`` of ``d`` reads along an axis, and where the window starts in
        the operator's output (a whole axis needs no halo, unless for ``d.window``: ``valid``)."""
        r = self.ctx.ratio
        num, den = {("pan", "ms"): (r, 1), ("ms", "pan"): (1, r)}.get((d.scale, scale_of(d.source)), (1, 1))
        n_src = self._length(d.source, axis)
        assert all(scale_of(s) == scale_of(d.source) for s in d.also), "sources on different grids"
        if d.support is not None and (given := d.support(lo * den // num, hi * den // num, n_src, r)) is not None:
            return given, -1  # window_at computes the window itself (whole axes too, so both axes agree)
        if lo == 0 and hi == self._length(d.name, axis) and not valid:
            return np.arange(n_src), 0
        h = d.halo(r) if d.context_halo is None else d.context_halo(self.ctx)
        assert lo * den % num == 0 and hi * den % num == 0 and h * num % den == 0, "windows off the source grid"
        positions = border_index(np.arange(lo * den // num - h, hi * den // num + h), n_src, d.border)
        return positions, 0 if valid else h * num // den

    def provides(self, name: str) -> bool:
        """Whether ``name`` is given or computed from what is given."""
        return name in self.roles or (name in DERIVED and all(map(self.provides, DERIVED[name].sources)))

    def sensor_free(self, name: str) -> bool:
        """Whether ``name`` is computed without the sensor's MTF."""
        d = DERIVED.get(name)
        return name in self.roles or d is None or (not d.sensor and all(map(self.sensor_free, d.sources)))

    def support(self, name: str, positions: np.ndarray, axis: int, out: dict[str, list[np.ndarray]]) -> None:
        """Add to ``out[role]`` the positions (along an axis) of each input that ``name`` at ``positions`` reads."""
        d = DERIVED.get(name)
        if name in self.roles or d is None:
            out.setdefault(name, []).append(positions)
            return
        for lo, hi in consecutive_runs(np.unique(positions[positions >= 0])):  # -1: zeros (a "constant" border)
            at = self._source(d, lo, hi, axis, d.window is not None)[0]
            for source in d.sources:
                self.support(source, at, axis, out)

    def window(self, name: str, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``name``'s (C, len(rows), len(cols)) planes at global positions (at its scale), each run of
        consecutive positions computed from its source's window (see the module docstring); ``-1``
        positions (a ``"constant"`` border) read as zeros."""
        if (rows < 0).any() or (cols < 0).any():
            inside = self.window(name, rows[rows >= 0], cols[cols >= 0])
            out = np.zeros((inside.shape[0], rows.size, cols.size))
            out[np.ix_(np.arange(inside.shape[0]), np.flatnonzero(rows >= 0), np.flatnonzero(cols >= 0))] = inside
            return out
        d = DERIVED.get(name)
        if name in self.roles or d is None:
            return self.read(name, rows, cols)
        assert d.compute is not None, f"{name} is an alias"
        if self._pointwise(d):  # no halo on the source's grid: each pixel from the source's own, at any positions
            return d.compute(self._sources(d, rows, cols), self.ctx)
        row_parts, whole = [], (rows.size, cols.size) == (self._length(name, 0), self._length(name, 1))
        for r0, r1 in consecutive_runs(rows):
            parts = []
            for c0, c1 in consecutive_runs(cols):
                valid = d.window is not None and not (whole and r0 == c0 == 0)  # a window: its halo on both axes
                (src_rows, top), (src_cols, left) = self._source(d, r0, r1, 0, valid), self._source(d, c0, c1, 1, valid)
                if top < 0 or left < 0:  # a window of its own support (Derived.window_at)
                    f = self._length(d.name, 0) // self._length(d.source, 0)
                    parts.append(d.window_at(self.window(d.source, src_rows, src_cols), self.ctx,  # type: ignore[misc]
                                             (r0 // f, r1 // f), (c0 // f, c1 // f),
                                             (self._length(d.source, 0), self._length(d.source, 1))))
                    continue
                src = self._sources(d, src_rows, src_cols)
                out = (d.window if valid else d.compute)(src, self.ctx)  # type: ignore[misc]
                parts.append(out[:, top : top + r1 - r0, left : left + c1 - c0])
            row_parts.append(parts[0] if len(parts) == 1 else np.concatenate(parts, axis=2))
        return row_parts[0] if len(row_parts) == 1 else np.concatenate(row_parts, axis=1)

    def _pointwise(self, d: Derived) -> bool:
        """Whether ``d`` reads no halo on its source's grid (then it is computed pixel by pixel, at any positions)."""
        return (d.support is None and d.context_halo is None and d.halo(self.ctx.ratio) == 0
                and all(scale_of(s) == d.scale for s in d.sources))

    def _sources(self, d: Derived, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The window of ``d``'s sources (its ``also`` images as further channels)."""
        parts = [self.window(s, rows, cols) for s in d.sources]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)

    def following(self, sums: Mapping[str, Any], block_maps: Mapping[str, np.ndarray]) -> Scene:
        """The scene of the later pass (:func:`following_context`)."""
        return dataclasses.replace(self, ctx=following_context(self.ctx, sums, block_maps))

    def positions(self, name: str, rows: tuple[int, int], cols: tuple[int, int]) -> list[np.ndarray]:
        """The rows and columns of ``name`` (at its scale) covering the PAN-scale window ``rows`` x ``cols``."""
        f = self.ctx.ratio if scale_of(name) == "ms" else 1
        return [np.arange(lo // f, hi // f) for lo, hi in (rows, cols)]

    def images(self, statistics: Sequence[Statistic]) -> tuple[str, ...]:
        """The images (aliases resolved) the statistics read that the inputs provide."""
        names = {image_of(r, self.ctx.protocol) for s in statistics for r in s.reads}
        return tuple(sorted(n for n in names if self.provides(n)))

    def reads(self, stat: Statistic, rows: tuple[int, int], cols: tuple[int, int]
              ) -> tuple[dict[str, tuple[str, np.ndarray, np.ndarray]], ChunkContext]:
        """What a statistic reads over the PAN-scale window ``rows`` x ``cols``: each read name's image and
        positions (widened by its ``halo``, clamped to the image; extended to Q2n's grid under ``extend``), and
        the context its chunk gets (``own``: where the window's own pixels lie under a halo)."""
        out, ctx = {}, self.ctx
        halo = stat.halo(ctx) if stat.halo is not None else 0
        for r in stat.reads:
            name = image_of(r, ctx.protocol)
            if not self.provides(name):
                continue
            pos = self.positions(name, rows, cols)
            if halo:
                lims = [(max(0, int(p[0]) - halo), min(self._length(name, a), int(p[-1]) + 1 + halo))
                        for a, p in enumerate(pos)]
                ctx = dataclasses.replace(ctx, own=tuple(slice(int(p[0]) - lo, int(p[-1]) + 1 - lo)  # type: ignore[arg-type]
                                                         for p, (lo, _) in zip(pos, lims, strict=True)))
                pos = [np.arange(lo, hi) for lo, hi in lims]
            if stat.extend == "q2n":
                n = (self._length(name, 0), self._length(name, 1))
                pos = [q2n_padded_positions(n[a], n[1 - a], ctx.block_size, ctx.q2n_padding)[int(p[0]):]
                       if int(p[-1]) + 1 == n[a] else p for a, p in enumerate(pos)]
            out[r] = (name, pos[0], pos[1])
        return out, ctx

    def sums(self, statistics: Sequence[Statistic], rows: tuple[int, int] | None = None,
             cols: tuple[int, int] | None = None) -> dict[str, dict[str, Any]]:
        """Each statistic's chunk fields over the window ``rows`` x ``cols`` (PAN scale, whole blocks; default: the
        whole image), each image computed once for all the statistics that read it (what reads no MTF: once for all
        calls with a ``cache``)."""
        return self.pass_over(statistics, rows, cols)[0]

    def pass_over(self, statistics: Sequence[Statistic], rows: tuple[int, int] | None = None,
                  cols: tuple[int, int] | None = None, *,
                  maps: Sequence[Index] = ()) -> tuple[dict[str, dict[str, Any]], dict[str, np.ndarray]]:
        """:meth:`sums` and, under ``ctx.maps``, the window's quality map of each index of ``maps``
        (``Index.map``: from the statistics' chunk maps, or, in a later pass, from the images it
        reads and the whole block maps of ``ctx.fitted``)."""
        rows, cols = rows or (0, self.shape[0]), cols or (0, self.shape[1])
        cache: dict[Any, Any] = {} if self.cache is None else self.cache
        memo: dict[Any, Any] = {}

        def kept(key: tuple[Any, ...], free: bool, make: Callable[[], Any]) -> Any:
            store = cache if free else memo
            if key not in store:
                store[key] = make()
            return store[key]

        def image(name: str, at: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
            key = ("image", name, *(a.tobytes() for a in at))
            (ur, ir), (uc, ic) = (np.unique(a, return_inverse=True) for a in at)
            whole = kept(key, self.sensor_free(name), lambda: self.window(name, ur, uc))
            return whole if ur.size == ir.size and uc.size == ic.size else whole[:, ir][:, :, ic]

        def fields(stat: Statistic) -> Any:
            reads, ctx = self.reads(stat, rows, cols)
            assert stat.chunk is not None
            return kept(("statistic", stat.name), all(self.sensor_free(n) for n, _, _ in reads.values()),
                        lambda: stat.chunk({r: image(n, (pr, pc)) for r, (n, pr, pc) in reads.items()}, ctx))  # type: ignore[misc]

        out: dict[str, dict[str, Any]] = {}
        chunk_maps: dict[str, Any] = {}
        for stat in statistics:
            out[stat.name], chunk_maps[stat.name] = chunk_map(fields(stat), self.ctx)
        made: dict[str, np.ndarray] = {}
        for spec in maps if self.ctx.maps else ():
            m = spec.map
            assert m is not None
            if m.compose is not None:
                images = {r: image(n, tuple(self.positions(n, rows, cols)))  # type: ignore[arg-type]
                          for r in m.reads if (n := image_of(r, self.ctx.protocol))}
                made[spec.name] = m.compose(images, self.ctx.fitted.get(FITTED_MAPS, {}), self.ctx, rows, cols)
            else:
                assert m.chunk is not None
                made[spec.name] = m.chunk(chunk_maps, self.ctx)
        return out, made


def following_context(ctx: ChunkContext, sums: Mapping[str, Any], block_maps: Mapping[str, np.ndarray]) -> ChunkContext:
    """The context of a later pass: ``fitted`` holds every :data:`~.catalog.FITS` value whose statistics ``sums``
    (the whole image's, merged) has, and the whole ``block_maps`` (:data:`~.catalog.FITTED_MAPS`).

    Examples
    --------
    >>> ctx = following_context(ChunkContext(), {}, {"D_s": np.zeros((1, 1))})
    >>> sorted(ctx.fitted)
    ['block_maps']
    """
    fitted = {name: fit.compute(sums) for name, fit in FITS.items() if all(s in sums for s in fit.statistics)}
    return dataclasses.replace(ctx, fitted={**ctx.fitted, **fitted, FITTED_MAPS: dict(block_maps)})


def map_images(scene: Scene, specs: Sequence[Index]) -> tuple[str, ...]:
    """The images (aliases resolved) the maps of ``specs`` read that the inputs provide."""
    names = {image_of(r, scene.ctx.protocol) for spec in specs if spec.map is not None for r in spec.map.reads}
    return tuple(sorted(n for n in names if scene.provides(n)))


def split_maps(specs: Sequence[Index]) -> tuple[tuple[Index, ...], tuple[Index, ...]]:
    """The map indexes whose maps the first pass makes (from chunk maps) and those of the later pass (composed).

    Examples
    --------
    >>> from pansharp_iqa.indexes.catalog import map_indexes
    >>> [[i.name for i in part] for part in split_maps(map_indexes(["HQNR"]))]
    [['D_s', 'D_lambda_K'], ['HQNR']]
    """
    return (tuple(i for i in specs if i.map is not None and i.map.compose is None),
            tuple(i for i in specs if i.map is not None and i.map.compose is not None))


def whole_image(scene: Scene, statistics: Sequence[Statistic],
                specs: Sequence[Index] = ()) -> tuple[dict[str, dict[str, Any]], dict[str, np.ndarray]]:
    """The merged fields of ``statistics`` and (under ``ctx.maps``) the maps of ``specs`` over the whole scene,
    in one window: a first pass, then, when a statistic reads fitted values or a map is composed, the later
    pass (:meth:`Scene.following`), as the tile engine runs them over tiles.

    Examples
    --------
    >>> from pansharp_iqa.indexes.catalog import statistics_for
    >>> f = np.random.default_rng(0).uniform(100, 900, (3, 32, 32))
    >>> scene = Scene.of({"fused": f, "pan": np.tensordot([0.2, 0.3, 0.5], f, 1)[None]}, ChunkContext())
    >>> sums, _ = whole_image(scene, statistics_for(["D_s_R"]))
    >>> sorted(sums), bool(abs(sums["lsr_residual"]["residual_sq"]) < 1e-6)
    (['lsr_gram', 'lsr_residual'], True)
    """
    first, later = later_pass(statistics)
    early, late = split_maps(specs)
    sums, maps = scene.pass_over(first, maps=early)
    if later or (scene.ctx.maps and late):
        more, composed = scene.following(sums, maps).pass_over(later, maps=late)
        sums.update(more)
        maps.update(composed)
    return sums, maps

"""The index catalogue: every quality index declared once, for every path and report to iterate over.

An :class:`Index` says what an index is (name, direction, unit, TeX label, definition and
references), which protocols' default tables have it (``Index.protocols``; an index with
``on_request=True`` is an extra a user can add with ``indexes=`` / ``--indexes``), which chunk
:class:`Statistic` objects it is computed from, and its finalize step. A :class:`Statistic` says
what one chunk of the images contributes (its chunk function and its fields), how chunks merge
(:meth:`Statistic.reduce`), the pixels around a chunk it reads (its :data:`Support`), the backends
that compute it (:data:`BACKENDS`) and, at full resolution, the images it reads: the inputs and
the :class:`Derived` images (:data:`DERIVED`: the EXP, the low-pass PANs, the MTF-filtered fused
image), each declared once with the halo a window of it needs, its border rule and its numpy and
torch functions.

The in-memory strip pass (``pansharp_iqa.indexes.reduced_pass``), the full-resolution engine
(``pansharp_iqa.indexes.full_pass``: the whole image as one window in memory, a tile with its
halos in :mod:`pansharp_iqa.tiled`), the PyTorch backend (which statistics and derived images it
computes on the device), the protocols' tables (:mod:`pansharp_iqa.protocols`) and the report
writers (directions, TeX labels) read this module; nothing else names an index's formula or a
derived image.

Adding an index: declare its :class:`Statistic` (if no existing one carries its sums), the
:class:`Derived` images it reads that are not declared yet, and its :class:`Index` here, with its
formula (chunk sums + finalize) in a module of its own, then add its tests and docs (the checklist
is in ``docs/architecture.md``).

Examples
--------
>>> [i.name for i in indexes_of("toolbox2020", "reduced")]
['Q2n', 'Q', 'SAM', 'ERGAS', 'SCC']
>>> get_index("PSNR").unit, get_index("PSNR").higher_is_better, get_index("PSNR").on_request
('dB', True, True)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ..borders import BorderMode
from ..hypercomplex import BlockPrecision
from ..mtf import TOOLBOX_KERNEL, MtfKernelSettings, filter_planes, mtf_kernel
from ..resample import exp_halo_support, exp_halo_window, fineshift, imresize, interp23tap_planes
from ..validation import SensorMismatchError, SettingError
from .band_errors import mpsnr_from_sums, peak_of, rmse_from_sums
from .cc import band_moment_sums, cc_from_sums
from .ergas import ergas_from_sums, ergas_sums
from .full_resolution import (
    BLOCK_FAMILIES,
    block_uiqi_sums,
    d_lambda_block_map,
    d_lambda_from_means,
    d_lambda_k_from_sums,
    d_s_block_map,
    d_s_from_means,
    khan_q2n_sums,
    mean_block_uiqi,
)
from .local_correlation import d_rho_max_sums
from .psnr import psnr_from_sums
from .q2n import Cast, Padding, cast_to, q2n_block_grid, q2n_strip, q2n_strip_grid, q2n_value
from .regression import (
    d_s_r_from_sums,
    d_s_r_map,
    lsr_fit,
    lsr_gram_sums,
    lsr_residual,
    lsr_residual_sums,
    lsr_window,
    qnr_like,
    to_pan_grid,
)
from .regression_hs import D_SR_SUMS, d_sr_from_sums, d_sr_sums
from .sam import ZeroNorm, sam_from_sums, sam_sums
from .scc import scc_from_sums, scc_sums
from .ssim import ssim_window_sums
from .strips import StripImage
from .uiqi import q_from_sums, q_window_sums

__all__ = [
    "Index", "Statistic", "Derived", "ChunkContext", "FinalizeContext", "Support", "SUPPORTS", "BACKENDS",
    "DERIVED", "ROLE_SCALES", "INDEXES", "STATISTICS", "get_index", "get_statistic", "indexes_of", "index_names",
    "resolve_indexes", "statistics_for", "image_of", "finalize", "direction", "tex_label", "closure", "per_band_values",
    "Fit", "FITS", "QualityMap", "MAP", "FITTED_MAPS", "chunk_map", "later_pass", "map_indexes",
]

#: What a chunk function reads around the chunk it owns (each engine provides each support):
#: ``"pixels"``: its own pixels; ``"windows"``: its sliding windows' pixels (``block_size - 1``
#: more rows and columns after it); ``"blocks"``: whole ``block_size`` blocks, the image
#: mirror-extended at its bottom/right end (MATLAB ``'symmetric'``); ``"sobel"``: one pixel around
#: it (zero outside the frame of the SCC form); ``"scene"``: whole blocks of the full-resolution
#: images a statistic ``reads`` (inputs and :data:`DERIVED` images, each with its own halo);
#: ``"ssim"``: the valid 11x11 windows starting in the chunk's rows (10 rows after it; the strip pass only).
Support = Literal["pixels", "windows", "blocks", "sobel", "scene", "ssim"]

SUPPORTS: dict[str, str] = {
    "pixels": "the chunk's own pixels (no halo)",
    "windows": "block_size - 1 rows and columns after the chunk (its windows' overlap)",
    "blocks": "whole blocks; the image mirror-extended (edge repeated) at its bottom/right end",
    "sobel": "one pixel around the chunk; zero outside the SCC form's frame",
    "scene": "whole blocks of the full-resolution images it reads; a derived image's halo is its own (DERIVED)",
    "ssim": "the valid 11x11 windows starting in the chunk's rows (10 rows after it); in memory only",
}

#: Who computes a statistic: ``"host"`` (numpy: the strip pass, the tile engine, the full-resolution
#: engines) and ``"torch"`` (``pansharp_iqa.torch_backend``, its function ``stat_<name>``, on
#: the tensors' device). A torch batch computes a statistic without ``"torch"`` on the host, per
#: image (recorded in the card's ``batch.host_statistics``), or refuses it in one line (``"scene"``).
BACKENDS = ("host", "torch")



class _Exponents:
    """The QNR-like indexes' exponents of a context (its ``exponents`` field)."""

    exponents: Mapping[str, tuple[float, float]]

    def exponent(self, name: str) -> tuple[float, float]:
        """(alpha, beta) of a QNR-like index (1, 1 unless the settings' ``exponents`` say otherwise).

        Parameters
        ----------
        name : str
            The index (``"QNR"``, ``"HQNR"``, ``"RQNR"``).

        Returns
        -------
        (float, float)
        """
        return tuple(self.exponents.get(name, (1.0, 1.0)))  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class ChunkContext(_Exponents):
    """What a chunk function needs besides its pixels.

    Parameters
    ----------
    block_size : int
        Q2n block and Q window side (pixels).
    gradient : {"magnitude", "vertical"}
        SCC's gradient form.
    col_halo : bool
        The planes of a ``"sobel"`` chunk carry one halo column each side (a tile; strips do not).
    peak : float or None
        ``2**bits - 1`` DN, the dynamic range of SSIM (None: bits not given).
    ratio : int
        PAN/MS resolution ratio (full resolution).
    protocol : Protocol or None
        Its fields choose the images ``low_res`` and ``low_pan`` stand for, and the PAN MTF's sigma form.
    ms_gnyq : tuple of float
        Per-band MS GNyq of the sensor (``mtf_fused``).
    pan_gnyq : float or None
        The sensor's PAN GNyq (``pan_mtf``; None: no sensor given).
    q2n_cast, q2n_padding, q2n_std_floor, q2n_precision
        Q2n's integer cast, block padding, zero-std replacement and block-value precision
        (:func:`pansharp_iqa.q2n`'s ``cast``, ``padding``, ``std_floor``, ``block_precision``; the
        protocol's ``q2n_*`` settings).
    grid : (int, int) or None
        ``"blocks"`` chunks of the strip pass: the (rows, cols) of the evaluated image, whose block
        grid the chunk extends the image to itself; None: the planes given are extended already (a tile).
    kernel : MtfKernelSettings
        How the MTF kernels of ``mtf_fused`` are designed (the protocol's ``mtf``).
    start : int
        The decimation start of ``fused_lr`` (the protocol's ``fr_decimation_start``).
    half_width : int
        D_rho's window half width (the protocol's ``d_rho_half_width_rule`` at ``ratio``).
    shape : (int, int)
        Rows and columns of the whole fused image (PAN scale): where the images a statistic reads end.
    own : (slice, slice) or None
        For a statistic with a ``halo``: where its chunk's own pixels lie in the planes it is given.
    maps : bool
        Quality maps are asked for: chunk functions also return their chunk's per-block (or
        per-pixel) values under the key :data:`MAP` (:func:`chunk_map`).
    fitted : mapping
        Values fitted from the whole image's sums of an earlier pass (:data:`FITS`, by name; and
        :data:`FITTED_MAPS`: the whole block maps), read by the later pass's chunk functions,
        derived images and maps.
    exponents : mapping
        (alpha, beta) of each QNR-like index (the settings' ``exponents``; absent: (1, 1)).
    """

    block_size: int = 32
    gradient: str = "magnitude"
    col_halo: bool = False
    peak: float | None = None
    ratio: int = 4
    protocol: Any = None
    ms_gnyq: tuple[float, ...] = ()
    pan_gnyq: float | None = None
    q2n_cast: Cast = "uint16"
    q2n_padding: Padding = "symmetric"
    q2n_std_floor: float = float(np.finfo(np.float64).eps)
    q2n_precision: BlockPrecision = "float64"
    grid: tuple[int, int] | None = None
    kernel: MtfKernelSettings = TOOLBOX_KERNEL
    start: int = 0
    half_width: int = 2
    shape: tuple[int, int] = (0, 0)
    own: tuple[slice, slice] | None = None

    maps: bool = False
    fitted: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    exponents: Mapping[str, tuple[float, float]] = dataclasses.field(default_factory=dict)

    @property
    def toolbox_q2n(self) -> bool:
        """Whether Q2n follows the toolbox (uint16 cast, symmetric padding, epsilon floor, float64 values)."""
        return (self.q2n_cast, self.q2n_padding, self.q2n_std_floor, self.q2n_precision) == (
            "uint16", "symmetric", float(np.finfo(np.float64).eps), "float64")


@dataclasses.dataclass(frozen=True)
class FinalizeContext(_Exponents):
    """What a finalize step needs besides the sums.

    Parameters
    ----------
    ratio : float
        PAN/MS resolution ratio (ERGAS).
    bits : int or None
        Radiometric resolution: PSNR's peak is ``2**bits - 1`` DN.
    n_bands : int
        Bands of the evaluated images.
    nan_policy : {"raise", "omit", "propagate"}
        Constant blocks of D_lambda/D_s (see ``indexes.full_resolution.mean_block_uiqi``).
    sam_zero_norm : {"exclude", "zero", "right_angle", "nan"}
        SAM's zero-norm pixels (the protocol's ``sam_zero_norm``; ``indexes.sam.sam_from_sums``).
    q2n_precision : {"float64", "float32"}
        Q2n's block-value precision: ``"float32"`` rounds the mean to float32 too.
    protocol : str or None
        The protocol whose forms of the indexes are finalized (:func:`get_index`).
    exponents : mapping
        (alpha, beta) of each QNR-like index (absent: (1, 1)).
    """

    ratio: float = 4.0
    bits: int | None = None
    n_bands: int = 0
    nan_policy: str = "raise"
    sam_zero_norm: ZeroNorm = "exclude"
    q2n_precision: BlockPrecision = "float64"
    protocol: str | None = None
    exponents: Mapping[str, tuple[float, float]] = dataclasses.field(default_factory=dict)


def _sum_fields(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Fields summed in chunk order: vectors with ``np.sum(axis=0)``, scalars with ``sum``."""
    out: dict[str, Any] = {}
    for key in parts[0]:
        values = [p[key] for p in parts]
        out[key] = np.sum(values, axis=0) if isinstance(values[0], np.ndarray) else sum(values)
    return out


def _concat_blocks(parts: Sequence[np.ndarray]) -> dict[str, Any]:
    """Q2n block values of all chunks: their sum and count (one sum over the concatenation)."""
    blocks = np.concatenate(parts)
    return {"sum": float(blocks.sum()), "count": int(blocks.size)}


@dataclasses.dataclass(frozen=True)
class Statistic:
    """The sums one chunk of the images contributes, and how chunks merge.

    Parameters
    ----------
    name : str
        Its key in the merged sums that finalize steps read (``"q2n_blocks"``, ``"sam_angles"``, ...).
    support : Support
        Pixels around a chunk the chunk function reads.
    fields : tuple of str
        Keys of the merged sums (each a number or a 1-D vector, e.g. one value per band).
    scalars : tuple of str
        The fields that are numbers (the others are vectors, e.g. one value per band).
    chunk : callable
        ``"blocks"``: ``chunk(ref, fus, r0, r1, ctx)`` on ``StripImage`` images (``indexes.strips``) and
        the block rows starting in ``[r0, r1)``; ``"scene"``: ``chunk(images, ctx)``, ``images``
        mapping each name of ``reads`` that the inputs provide to its (C, h, w) float64 planes over the
        chunk (at its own scale); other supports: ``chunk(ref_planes, fus_planes, ctx)`` on (B, h, w)
        float64 planes of the chunk with its halo. Returns a dict of fields (``"blocks"``: the block
        values).
    merge : callable
        ``merge(chunk results in chunk order) -> dict of fields``; the tile engine adds the
        fields of its tiles exactly (:func:`math.fsum`).
    backends : tuple of str
        Who computes it (:data:`BACKENDS`); ``("host",)`` for a statistic without a device
        implementation.
    reads : tuple of str
        The images a ``"scene"`` statistic reads: input roles (:data:`ROLE_SCALES`) and
        :data:`DERIVED` images.
    extend : {"none", "q2n"}
        ``"q2n"``: the images it reads are extended past their bottom/right end to Q2n's block grid at
        their scale (``ChunkContext.q2n_padding``, ``pansharp_iqa.indexes.q2n.q2n_padded_positions``).
    halo : callable or None
        ``halo(ctx) -> int``: PAN-scale pixels around its chunk that it reads (clamped to the image; the
        chunk finds its own pixels at ``ctx.own``).
    fits : tuple of str
        The :data:`FITS` values its chunk function reads (``ChunkContext.fitted``): it is computed in
        a later pass over the image, once the first pass's sums are complete.
    """

    name: str
    support: Support
    fields: tuple[str, ...]
    scalars: tuple[str, ...] = ()
    chunk: Callable[..., Any] | None = None
    merge: Callable[[Sequence[Any]], dict[str, Any]] = _sum_fields
    backends: tuple[str, ...] = ("host",)
    reads: tuple[str, ...] = ()
    extend: Literal["none", "q2n"] = "none"
    halo: Callable[[ChunkContext], int] | None = None
    fits: tuple[str, ...] = ()

    def reduce(self, parts: Sequence[Any]) -> dict[str, Any]:
        """Merge chunk results (in chunk order) into the statistic's fields.

        Parameters
        ----------
        parts : sequence
            The chunk function's results, in chunk order.

        Returns
        -------
        dict
            The statistic's fields.

        Examples
        --------
        >>> get_statistic("sam_angles").reduce([{"angle_sum": 1.0, "valid": 2, "pixels": 2}] * 2)
        {'angle_sum': 2.0, 'valid': 4, 'pixels': 4}
        """
        return self.merge(parts)


@dataclasses.dataclass(frozen=True)
class Derived:
    """An image the full-resolution statistics read, computed window by window from another image.

    A window of it (at its own scale) is ``compute`` (or ``window``) applied to the window of its
    ``source`` that covers it, widened by ``halo`` source samples each side that follow the
    image-wide ``border`` rule, so the kept part equals the whole-image result; a whole image needs
    no halo (the operator's own border handling is ``border``). In memory the whole image is one
    window; tile by tile, each tile's.

    Parameters
    ----------
    name : str
        Its key in ``Statistic.reads`` and in the other derived images' ``source``.
    what : str
        One line: what it is.
    source : str
        The image it is computed from: an input role (:data:`ROLE_SCALES`) or another derived image.
    scale : {"pan", "ms"}
        The grid it lives on (the source's may differ by ``ratio``).
    halo : callable
        ``halo(ratio) -> int``: source samples each side a window reads (a multiple of ``ratio``
        from PAN to MS scale, so that grids stay aligned).
    border : BorderMode
        The image's extension beyond its edges (``pansharp_iqa.borders.border_index``).
    compute : callable
        ``compute(planes, ctx) -> planes``: the whole-image operator, (C, h, w) float64 source planes
        to (C, h', w') planes (numpy; ``ctx`` is a :class:`ChunkContext`).
    window : callable or None
        The same operator on a window given with its halo, returning only what the halo covers
        (cheaper than ``compute`` and a crop); None: ``compute`` and a crop.
    torch : callable or None
        ``torch(batch, ctx, ops)``: the whole-image operator on an (N, C, H, W) tensor, ``ops`` being
        ``pansharp_iqa.torch_ops`` (the same operators on torch); None where the torch backend has none
        (refused in one line).
    sensor : bool
        It reads the sensor's MTF (recomputed for each sensor of ``sensor_sensitivity``).
    choice, options : str or None, mapping
        An alias instead: the :class:`~pansharp_iqa.protocols.Protocol` field, and the image each
        of its values picks.
    also : tuple of str
        More sources on the source's grid, read at the same positions and handed to ``compute`` as
        further channels after the source's.
    context_halo : callable or None
        ``context_halo(ctx) -> int``: the halo where it depends on more than the ratio (a window
        set by the block size); None: ``halo``.
    support, window_at : callable or None
        Where a halo and a border rule cannot say which source samples a window reads (the ratio-6
        EXP: a mirrored x3 stage under a wrapped x2 one): ``support(lo, hi, n, ratio)``, the source
        positions along an axis for the window's source range ``[lo, hi)`` (None: ``halo`` and
        ``border`` apply), and ``window_at(planes, ctx, rows, cols, shape)``, the window from them.
    """

    name: str
    what: str
    source: str = ""
    scale: Literal["pan", "ms"] = "pan"
    halo: Callable[[int], int] = lambda ratio: 0
    border: BorderMode = "replicate"
    compute: Callable[[np.ndarray, ChunkContext], np.ndarray] | None = None
    window: Callable[[np.ndarray, ChunkContext], np.ndarray] | None = None
    torch: Callable[[Any, ChunkContext, Any], Any] | None = None
    support: Callable[[int, int, int, int], np.ndarray | None] | None = None
    window_at: Callable[..., np.ndarray] | None = None
    sensor: bool = False
    choice: str | None = None
    options: Mapping[Any, str] = dataclasses.field(default_factory=dict)
    also: tuple[str, ...] = ()
    context_halo: Callable[[ChunkContext], int] | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        """The images a window of it is computed from (``source``, then ``also``)."""
        return (self.source, *self.also)


#: The key of a chunk's map in a chunk function's result under ``ChunkContext.maps``.
MAP = "map"
#: The key of the whole block maps (by index name) in ``ChunkContext.fitted``.
FITTED_MAPS = "block_maps"


@dataclasses.dataclass(frozen=True)
class QualityMap:
    """An index's quality map, as the reference code returns it (``evaluate(..., maps=True)``).

    Parameters
    ----------
    grid : {"blocks", "pixels"}
        One value per ``block_size`` block (the block grid) or per pixel of the evaluated image (the
        PAN grid at full resolution).
    what : str
        One line: what each value is.
    unit : str
        ``""`` for dimensionless values.
    chunk : callable or None
        ``chunk(maps, ctx)``: the map over a window from the chunk maps (:data:`MAP`) of the
        window's statistics, by statistic name.
    reads : tuple of str
        Images a map of the later pass reads over its window (inputs and :data:`DERIVED` images).
    block_maps : tuple of str
        Indexes whose whole block maps a map of the later pass reads (``ctx.fitted[FITTED_MAPS]``).
    compose : callable or None
        ``compose(images, block_maps, ctx, rows, cols)``: a map of the later pass over the window
        ``rows`` x ``cols`` (PAN grid), from the images it reads and the whole block maps.
    """

    grid: Literal["blocks", "pixels"]
    what: str
    unit: str = ""
    chunk: Callable[[Mapping[str, Any], ChunkContext], np.ndarray] | None = None
    reads: tuple[str, ...] = ()
    block_maps: tuple[str, ...] = ()
    compose: Callable[..., np.ndarray] | None = None

    @property
    def later(self) -> bool:
        """Whether it is made in the later pass (it reads images or whole block maps)."""
        return self.compose is not None


@dataclasses.dataclass(frozen=True)
class Index:
    """One quality index, declared once.

    Parameters
    ----------
    name : str
        Key in results and reports.
    resolution : {"reduced", "full"}
        Reduced resolution (against a reference) or full resolution (no reference).
    higher_is_better : bool
        The direction of better values (reports mark the best method with it).
    unit : str
        ``""`` for dimensionless indexes.
    tex : str
        Column label in ``results.tex``.
    definition : str
        One line: what is computed (recorded in cards of extras).
    references : tuple of str
        Where it is defined (authors, venue, DOI).
    protocols : tuple of str
        Protocols whose default table has the index, in table order (protocol names). Several
        indexes may share a name when their ``protocols`` differ: each is that protocol's form of the
        index (e.g. the hyperspectral protocol's ``D_lambda = 1 - Q2n`` at MS scale), looked up with
        :func:`get_index`'s ``protocol``; the first one declared is the general form.
    on_request : bool
        An extra: computed only when asked for (``indexes=``), by any protocol whose engine has
        the statistics it needs (``engine``).
    engine : {"toolbox", "reprojected"}
        Which family of evaluators computes it (``"reprojected"``: the reprojected protocol's own
        pipeline, :mod:`pansharp_iqa.reprojected`).
    statistics : tuple of str
        The :class:`Statistic` objects it is computed from.
    needs : tuple of str
        Indexes whose values its finalize reads (e.g. QNR reads D_lambda and D_s).
    compute : callable or None
        ``compute(sums, values, ctx) -> float``: ``sums`` maps statistic names to merged fields,
        ``values`` the indexes computed before it, ``ctx`` a :class:`FinalizeContext`.
    reads : tuple of str or None
        The roles whose values the number depends on beyond a gain (None: every role of its
        resolution); the input rules fire only for roles a requested index reads.
    casts : bool
        It rounds the images to integer DN (the toolbox's uint16 cast).
    per_band : callable or None
        ``per_band(sums, ctx) -> (B,) array``: the index of each band alone, where it is a mean over bands
        (ERGAS's band terms, Q, CC, D_rho); None where it has no per-band form (Q2n, SAM, ...).
    map : QualityMap or None
        Its quality map, where the reference code returns one.
    """

    name: str
    resolution: Literal["reduced", "full"]
    higher_is_better: bool
    unit: str
    tex: str
    definition: str
    references: tuple[str, ...] = ()
    protocols: tuple[str, ...] = ()
    on_request: bool = False
    engine: Literal["toolbox", "reprojected"] = "toolbox"
    statistics: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    compute: Callable[[Mapping[str, Any], Mapping[str, float], FinalizeContext], float] | None = None
    reads: tuple[str, ...] | None = None
    casts: bool = False
    per_band: Callable[[Mapping[str, Any], FinalizeContext], np.ndarray] | None = None
    map: QualityMap | None = None

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles it reads (its ``reads``, else every role of its resolution)."""
        if self.reads is not None:
            return self.reads
        return ("fused", "reference") if self.resolution == "reduced" else ("fused", "ms", "pan")

    @property
    def direction(self) -> int:
        """+1 when higher is better, -1 when lower is better."""
        return 1 if self.higher_is_better else -1


# --------------------------------------------------------------------------- chunk functions


def _q2n_chunk(ref: StripImage, fus: StripImage, r0: int, r1: int, ctx: ChunkContext) -> np.ndarray:
    if ctx.toolbox_q2n:
        return q2n_strip(ref, fus, r0, r1, ctx.block_size)
    return q2n_strip_grid(ref, fus, r0, r1, block_size=ctx.block_size, cast=ctx.q2n_cast,
                          std_floor=ctx.q2n_std_floor, precision=ctx.q2n_precision, padding=ctx.q2n_padding,
                          grid=ctx.grid)


def _q_chunk(ref: np.ndarray, fus: np.ndarray, ctx: ChunkContext) -> dict[str, Any]:
    bs = ctx.block_size
    return {"sums": q_window_sums(ref, fus, bs), "count": (ref.shape[1] - bs + 1) * (ref.shape[2] - bs + 1)}


def _sam_chunk(ref: np.ndarray, fus: np.ndarray, ctx: ChunkContext) -> dict[str, Any]:
    angles = np.full(ref.shape[1:], 0.5 * np.pi) if ctx.maps else None  # SAM.m's map: acos(0 / eps) at norm 0
    angle_sum, valid, pixels = sam_sums(ref, fus, angle_map=angles)
    return {"angle_sum": angle_sum, "valid": valid, "pixels": pixels, **({MAP: angles} if ctx.maps else {})}


def _sq_error_chunk(ref: np.ndarray, fus: np.ndarray, ctx: ChunkContext) -> dict[str, Any]:
    sse, ref_sum = ergas_sums(ref, fus)
    return {"sse": sse, "ref_sum": ref_sum, "pixels": ref.shape[1] * ref.shape[2]}


def _sobel_chunk(ref: np.ndarray, fus: np.ndarray, ctx: ChunkContext) -> dict[str, Any]:
    return {"sums": scc_sums(ref, fus, gradient=ctx.gradient, col_halo=ctx.col_halo)}  # type: ignore[arg-type]


_MOMENTS = ("sx", "sy", "sxx", "syy", "sxy")
_LSR_RESIDUAL = ("residual_dev", "residual_sq", "pan_dev", "pan_sq", "pixels")


def _moments_chunk(ref: np.ndarray, fus: np.ndarray, ctx: ChunkContext) -> dict[str, Any]:
    return {**dict(zip(_MOMENTS, band_moment_sums(ref, fus), strict=True)), "pixels": ref.shape[1] * ref.shape[2]}


def _ssim_chunk(ref: np.ndarray, fus: np.ndarray, ctx: ChunkContext) -> dict[str, Any]:
    if ctx.peak is None:
        raise SettingError("SSIM needs bits (its dynamic range is 2**bits - 1 DN)")
    return {"sums": ssim_window_sums(ref, fus, ctx.peak), "count": (ref.shape[1] - 10) * (ref.shape[2] - 10)}


def _block_uiqi_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    blocks: dict[str, np.ndarray] | None = {} if ctx.maps else None
    out: dict[str, Any] = block_uiqi_sums(im["fused"], im.get("pan"), im["low_res"], im.get("low_pan"),
                                          ctx.block_size, ctx.ratio, blocks=blocks)
    return out if blocks is None else {**out, MAP: blocks}


def _khan_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    blocks: list[np.ndarray] | None = [] if ctx.maps else None
    total, count = khan_q2n_sums(im["exp"], im["mtf_fused"], ctx.block_size, blocks=blocks)
    return {"sum": total, "count": count, **({MAP: blocks[0]} if blocks else {})}


def _lsr_gram_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    return lsr_gram_sums(im["fused"], im["pan"])


def _lsr_residual_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    return lsr_residual_sums(im["fused"], im["pan"], ctx.fitted["lsr"])


def _lr_q2n_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    ref, fus = (cast_to(ctx.q2n_cast, np.array(im[k], dtype=np.float64)) for k in ("ms", "fused_fr_lr"))
    q = q2n_block_grid(ref, fus, block_size=ctx.block_size, shift=ctx.block_size, std_floor=ctx.q2n_std_floor,
                       integer_valued=ctx.q2n_cast != "none", block_precision=ctx.q2n_precision)
    return {"sum": float(q.sum()), "count": int(q.size)}


def _lr_errors_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    return _sq_error_chunk(im["ms"], im["fused_fr_lr"], ctx)


def _lr_sam_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    return _sam_chunk(im["ms"], im["fused_fr_lr"], ctx)


def _d_sr_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    if im["pan"].shape[0] != 1:
        raise SettingError(f"D_sR regresses one PAN on the fused bands; the PAN has {im['pan'].shape[0]} bands")
    sums = d_sr_sums(im["fused"], im["pan"][0])
    return {**sums, "gram": sums["gram"].ravel()}


def _d_rho_chunk(im: Mapping[str, np.ndarray], ctx: ChunkContext) -> dict[str, Any]:
    own = ctx.own or (slice(None), slice(None))
    sums = d_rho_max_sums(im["fused"], im["pan"], ctx.half_width, own)
    rows, cols = (len(range(*sl.indices(n))) for sl, n in zip(own, im["fused"].shape[1:], strict=True))
    return {"sums": sums, "pixels": rows * cols}


def _sobel_merge(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return _sum_fields(parts) if parts else {"sums": np.zeros(3)}


#: Every chunk statistic, by name.
STATISTICS: dict[str, Statistic] = {
    s.name: s
    for s in (
        Statistic("q2n_blocks", "blocks", ("sum", "count"), ("sum", "count"), _q2n_chunk, _concat_blocks,
                  backends=BACKENDS),
        Statistic("q_windows", "windows", ("sums", "count"), ("count",), _q_chunk, backends=BACKENDS),
        Statistic("sam_angles", "pixels", ("angle_sum", "valid", "pixels"), ("angle_sum", "valid", "pixels"),
                  _sam_chunk, backends=BACKENDS),
        Statistic("squared_errors", "pixels", ("sse", "ref_sum", "pixels"), ("pixels",), _sq_error_chunk,
                  backends=BACKENDS),
        Statistic("sobel_products", "sobel", ("sums",), (), _sobel_chunk, _sobel_merge, backends=BACKENDS),
        Statistic("ssim_windows", "ssim", ("sums", "count"), ("count",), _ssim_chunk),
        Statistic("band_moments", "pixels", (*_MOMENTS, "pixels"), ("pixels",), _moments_chunk, backends=BACKENDS),
        # full resolution: block UIQIs of D_lambda (band pairs) and D_s (bands vs PAN; without a PAN,
        # D_lambda's only), one moment pass per side, and D_lambda_K's Q2n
        Statistic("block_uiqi", "scene", tuple(BLOCK_FAMILIES), (), _block_uiqi_chunk, backends=BACKENDS,
                  reads=("fused", "pan", "low_res", "low_pan")),
        Statistic("khan_q2n", "scene", ("sum", "count"), ("sum", "count"), _khan_chunk, backends=BACKENDS,
                  reads=("exp", "mtf_fused")),
        # full resolution, hyperspectral/Sentinel-2 protocols: the fused image filtered and decimated to MS scale
        # (fused_fr_lr) against the MS (Q2n on MS-scale blocks, squared errors, angles); D_sR's regression sums;
        # D_rho against the PAN's bands (a halo of 2w: its boxes cross the chunk)
        Statistic("lr_q2n", "scene", ("sum", "count"), ("sum", "count"), _lr_q2n_chunk,
                  reads=("ms", "fused_fr_lr"), extend="q2n"),
        Statistic("lr_squared_errors", "scene", ("sse", "ref_sum", "pixels"), ("pixels",), _lr_errors_chunk,
                  reads=("ms", "fused_fr_lr")),
        Statistic("lr_sam_angles", "scene", ("angle_sum", "valid", "pixels"), ("angle_sum", "valid", "pixels"),
                  _lr_sam_chunk, reads=("ms", "fused_fr_lr")),
        Statistic("d_sr_sums", "scene", D_SR_SUMS, ("p_sum", "p_sq", "n"), _d_sr_chunk, reads=("fused", "pan")),
        Statistic("d_rho_max", "scene", ("sums", "pixels"), ("pixels",), _d_rho_chunk, reads=("fused", "pan"),
                  halo=lambda c: 2 * c.half_width),
        # D_s_R: LSR's regression sums (Gram matrix), then, once the fit is known, the residual's variance sums
        Statistic("lsr_gram", "scene", ("gram", "ftp", "fused_sum", "pan_sum", "pixels"), ("pan_sum", "pixels"),
                  _lsr_gram_chunk, backends=BACKENDS, reads=("fused", "pan")),
        Statistic("lsr_residual", "scene", _LSR_RESIDUAL, _LSR_RESIDUAL, _lsr_residual_chunk, backends=BACKENDS,
                  reads=("fused", "pan"), fits=("lsr",)),
    )
}


@dataclasses.dataclass(frozen=True)
class Fit:
    """A value fitted from whole-image sums of a first pass, which a later pass reads (``ChunkContext.fitted``).

    Parameters
    ----------
    name : str
        Its key in ``ChunkContext.fitted`` and in ``Statistic.fits``.
    what : str
        One line: what it is.
    statistics : tuple of str
        The statistics whose merged fields it is computed from (a first pass).
    compute : callable
        ``compute(sums)``: the value from the merged fields, by statistic name.
    """

    name: str
    what: str
    statistics: tuple[str, ...]
    compute: Callable[[Mapping[str, Any]], Any]


#: Every fitted value, by name.
FITS: dict[str, Fit] = {
    f.name: f
    for f in (
        Fit("lsr", "LSR's global regression of the PAN on the fused bands (weights, means)", ("lsr_gram",),
            lambda sums: lsr_fit(sums["lsr_gram"])),
    )
}


def later_pass(statistics: Sequence[Statistic]) -> tuple[tuple[Statistic, ...], tuple[Statistic, ...]]:
    """The statistics of the first pass and those that read fitted values (the later pass).

    Parameters
    ----------
    statistics : sequence of Statistic
        The statistics of an evaluation (:func:`statistics_for`).

    Returns
    -------
    (tuple of Statistic, tuple of Statistic)

    Examples
    --------
    >>> [[s.name for s in p] for p in later_pass(statistics_for(["D_s_R"]))]
    [['lsr_gram'], ['lsr_residual']]
    """
    return tuple(s for s in statistics if not s.fits), tuple(s for s in statistics if s.fits)


def chunk_map(part: Any, ctx: ChunkContext, width: int = 0) -> tuple[Any, Any]:
    """A chunk function's result without its map, and the map (None unless ``ctx.maps``).

    Parameters
    ----------
    part : dict or ndarray
        A chunk function's result: fields with the map under :data:`MAP`, or a ``"blocks"``
        statistic's block values (row-major over whole block rows of the chunk).
    ctx : ChunkContext
        Its ``maps`` says whether the chunk function made a map; its ``block_size`` the block columns.
    width : int
        The chunk's width in pixels (a ``"blocks"`` statistic's block columns).

    Returns
    -------
    (object, ndarray or None)

    Examples
    --------
    >>> chunk_map({"sum": 1.0, MAP: np.zeros((1, 2))}, ChunkContext(maps=True))
    ({'sum': 1.0}, array([[0., 0.]]))
    >>> chunk_map(np.arange(4.0), ChunkContext(maps=True, block_size=2), width=4)[1].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    if not ctx.maps:
        return part, None
    if isinstance(part, Mapping):
        return {k: v for k, v in part.items() if k != MAP}, part.get(MAP)
    return part, np.asarray(part).reshape(-1, -(-int(width) // ctx.block_size))

# --------------------------------------------------------------------------- derived images

#: The grid each input of a full-resolution evaluation lives on.
ROLE_SCALES = {"fused": "pan", "ms": "ms", "pan": "pan"}


def _exp_halo(ratio: int) -> int:
    """MS samples a window of interp23tap reads each side: each x2 step mixes samples up to 6 away at its input
    scale (6 + 3 + 1.5 + ... MS samples), one more for the phase."""
    return math.ceil(12 * (1 - 1 / ratio)) + 1


def _imresize_halo(ratio: int) -> int:
    """PAN pixels a window of imresize(., 1/ratio) reads each side (kernel 4 ratio wide), a multiple of the ratio."""
    return ratio * -(-(2 * ratio + 3) // ratio)


def _pan_mtf_kernel(ctx: ChunkContext) -> list[np.ndarray]:
    """The PAN MTF kernel (the protocol's sigma form), or the one-line refusal without a sensor."""
    if ctx.pan_gnyq is None:
        raise SensorMismatchError(f"sensor is required for D_s under {ctx.protocol.name!r} (its low-pass PAN uses "
                                  "the sensor's PAN MTF); pass sensor='WV2' etc.")
    return [mtf_kernel(ctx.pan_gnyq, ctx.ratio, sigma_form=ctx.protocol.sigma_form)]


def _mtf(kernels: Callable[[ChunkContext], list[np.ndarray]]) -> dict[str, Any]:
    """An MTF filter's operators: the whole image, a window given its 20-pixel halo (41 x 41 kernels), torch."""
    return {"halo": lambda r: 20, "border": "replicate", "sensor": True,
            "compute": lambda x, c: filter_planes(x, kernels(c)),
            "window": lambda x, c: filter_planes(x, kernels(c), valid=True),
            "torch": lambda x, c, ops: ops.filter_replicate(x, np.stack(kernels(c)))}


#: The ratio-6 EXP's windows (the x3 sinc stage's mirror under the x2 stage's wrap: resample.exp_halo_support).
_EXP6: dict[str, Any] = {
    "support": lambda lo, hi, n, r: exp_halo_support(lo, hi, n, 6) if r == 6 else None,
    "window_at": lambda x, c, rows, cols, shape: np.moveaxis(exp_halo_window(np.moveaxis(x, 0, 2), rows, cols, shape,
                                                                            6), 2, 0),
}


def _fineshift_planes(x: np.ndarray, ctx: ChunkContext) -> np.ndarray:
    return np.moveaxis(fineshift(np.moveaxis(x, 0, 2), 1, 1), 2, 0)


def _decimated(x: np.ndarray, ctx: ChunkContext) -> np.ndarray:
    return np.ascontiguousarray(x[:, ctx.start :: ctx.ratio, ctx.start :: ctx.ratio])


def _imresize_planes(x: np.ndarray, ctx: ChunkContext) -> np.ndarray:
    return np.moveaxis(imresize(np.moveaxis(x, 0, 2), 1.0 / ctx.ratio), 2, 0)


#: Every derived image, by name, sources first.
DERIVED: dict[str, Derived] = {
    d.name: d
    for d in (
        Derived("exp", "the MS upsampled to PAN scale by the 23-tap interpolator (interp23tap)", "ms", "pan",
                _exp_halo, "wrap", lambda x, c: interp23tap_planes(x, c.ratio), None,
                lambda x, c, ops: ops.interp23tap(x, c.ratio), **_EXP6),
        Derived("pan_lr", "imresize(PAN, 1/ratio): MATLAB's bicubic, antialiased", "pan", "ms", _imresize_halo,
                "symmetric", _imresize_planes, None, lambda x, c, ops: ops.imresize(x, 1.0 / c.ratio)),
        Derived("pan_lr_exp", "interp23tap(imresize(PAN, 1/ratio), ratio)", "pan_lr", "pan", _exp_halo, "wrap",
                lambda x, c: interp23tap_planes(x, c.ratio), None, lambda x, c, ops: ops.interp23tap(x, c.ratio),
                **_EXP6),
        Derived("pan_mtf", "the PAN filtered by the sensor's PAN MTF (the protocol's sigma form)", "pan", "pan",
                **_mtf(_pan_mtf_kernel)),
        Derived("mtf_fused", "the fused image filtered by the sensor's per-band MS MTF (the protocol's kernel design: "
                "the toolbox's D_lambda_K, the HS/S2 full-resolution decimation)", "fused", "pan",
                **_mtf(lambda c: [c.kernel.kernel(g, c.ratio) for g in c.ms_gnyq])),
        Derived("fused_shift", "MTF(fused) shifted by half a pixel along both axes (fineshift(x, 1, 1), zeros outside: "
                "Sentinel-2)", "mtf_fused", "pan", lambda r: 6, "constant", _fineshift_planes),
        Derived("fused_lr", "MTF(fused) decimated to MS scale from the protocol's start: x[start::ratio]",
                "mtf_fused", "ms", compute=_decimated),
        Derived("fused_shift_lr", "the half-pixel-shifted MTF(fused) decimated to MS scale: x[start::ratio]",
                "fused_shift", "ms", compute=_decimated),
        Derived("fused_fr_lr", "the fused image at MS scale of the HS/S2 full-resolution indexes "
                "(Protocol.fr_half_shift)", choice="fr_half_shift",
                options={False: "fused_lr", True: "fused_shift_lr"}),
        Derived("low_res", "D_lambda's and D_s's low-resolution terms (Protocol.low_res_terms)",
                choice="low_res_terms", options={"exp": "exp", "ms": "ms"}),
        Derived("low_pan", "D_s's low-pass PAN (Protocol.d_s_low_pass)", choice="d_s_low_pass",
                options={"exp-imresize": "pan_lr_exp", "pan-mtf": "pan_mtf", "imresize": "pan_lr"}),
        Derived("lsr_residual", "LSR's residual e = P - F w of the global fit, and the PAN (two channels)", "fused",
                "pan", compute=lambda x, c: lsr_residual(x[:-1], x[-1:], c.fitted["lsr"]), also=("pan",)),
        Derived("d_s_r_map", "D_s_R's map: 1 - LSR's local cd over (block_size - 1)-pixel windows, 'symmetric' "
                "borders", "lsr_residual", "pan", border="symmetric",
                compute=lambda x, c: d_s_r_map(x, c.block_size)[None],
                context_halo=lambda c: lsr_window(c.block_size) // 2),
    )
}


# --------------------------------------------------------------------------- finalize steps


def _block_means(sums: Mapping[str, Any], ctx: FinalizeContext, keys: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    fam = sums["block_uiqi"]
    high, low = (mean_block_uiqi(fam[k], what=BLOCK_FAMILIES[k], nan_policy=ctx.nan_policy) for k in keys)
    return high, low


def _d_lambda(sums: Mapping[str, Any], values: Mapping[str, float], ctx: FinalizeContext) -> float:
    return d_lambda_from_means(*_block_means(sums, ctx, ("pairs_high", "pairs_low")), ctx.n_bands)


def _d_s(sums: Mapping[str, Any], values: Mapping[str, float], ctx: FinalizeContext) -> float:
    return d_s_from_means(*_block_means(sums, ctx, ("pan_high", "pan_low")))


def _psnr(sums: Mapping[str, Any], values: Mapping[str, float], ctx: FinalizeContext) -> float:
    if ctx.bits is None:
        raise SettingError("PSNR needs bits (its peak is 2**bits - 1 DN)")
    s = sums["squared_errors"]
    return psnr_from_sums(s["sse"], s["pixels"], float(2**ctx.bits - 1))


def _qnr_like(name: str, d_lambda: Any, d_s: Any, ctx: Any) -> Any:
    alpha, beta = ctx.exponent(name)
    return qnr_like(d_lambda, d_s, alpha=alpha, beta=beta)


def _rqnr_map(images: Mapping[str, np.ndarray], block_maps: Mapping[str, np.ndarray], ctx: ChunkContext,
              rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
    dl = to_pan_grid(block_maps["D_lambda_F"], block_size=ctx.block_size, rows=rows, cols=cols)
    return np.asarray(_qnr_like("RQNR", dl, images["d_s_r_map"][0], ctx))


def _hqnr_map(images: Mapping[str, np.ndarray], block_maps: Mapping[str, np.ndarray], ctx: ChunkContext,
              rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
    dl, ds = (to_pan_grid(block_maps[k], block_size=ctx.block_size, rows=rows, cols=cols)
              for k in ("D_lambda_K", "D_s"))
    return np.asarray(_qnr_like("HQNR", dl, ds, ctx))


_KHAN_MAP = QualityMap("blocks", "1 - Q2n(EXP, MTF(fused)) of each block (the code's D_lambda_F map)",
                       chunk=lambda m, c: 1.0 - m["khan_q2n"])
_PAN_GRID = "on the PAN grid: the block maps enlarged by MATLAB's bicubic imresize, not clipped"

_TOOLBOX_RR = ("toolbox2020", "toolbox2015", "qnr-paper")
_PC_RR = (*_TOOLBOX_RR, "pancollection")  # the PanCollection scripts' tables (presets)
_HS_S2 = ("hyperspectral2024", "sentinel2-2025")  # their RR tables: ERGAS, SAM, Q2n
_ALL_RR = (*_PC_RR, *_HS_S2)
_TB2020 = "Vivone et al., IEEE GRSM 9(1), 2021, doi:10.1109/MGRS.2020.3019315"
_QNR = "Alparone et al., PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193"
_KHAN = "Khan, Alparone, Chanussot, IEEE TGRS 47(11), 2009, doi:10.1109/TGRS.2009.2029094"
_REPRO = "Scarpa & Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808"
_HS = "Ciotola et al., arXiv 2407.01355, 2024 (hyperspectral pansharpening toolbox)"
_S2 = "Ciotola et al., Remote Sensing 17(12):1983, 2025, doi:10.3390/rs17121983 (Sentinel-2 toolbox)"


def _ergas_bands(stat: str) -> Callable[[Mapping[str, Any], FinalizeContext], np.ndarray]:
    """ERGAS of each band alone (``100/ratio * RMSE_b / mean_b``) from a squared-error statistic."""
    def bands(sums: Mapping[str, Any], ctx: FinalizeContext) -> np.ndarray:
        s = sums[stat]
        return np.array([ergas_from_sums(s["sse"][b : b + 1], s["ref_sum"][b : b + 1], s["pixels"], ctx.ratio)
                         for b in range(np.size(s["sse"]))])
    return bands


def _cc_bands(sums: Mapping[str, Any], ctx: FinalizeContext) -> np.ndarray:
    m = np.stack([np.atleast_1d(sums["band_moments"][k]) for k in _MOMENTS])
    return np.array([cc_from_sums(m[:, b : b + 1], sums["band_moments"]["pixels"]) for b in range(m.shape[1])])


def _d_sr(sums: Mapping[str, Any], values: Mapping[str, float], ctx: FinalizeContext) -> float:
    s = sums["d_sr_sums"]
    n = int(np.sqrt(np.size(s["gram"])))
    return d_sr_from_sums(np.reshape(s["gram"], (n, n)), s["cross"], s["f_sum"], s["p_sum"], s["p_sq"], int(s["n"]))
_GRSM = ("Arienzo, Vivone, Garzelli, Alparone, Chanussot, IEEE GRSM 10(3), 2022, doi:10.1109/MGRS.2022.3170092 "
         "(the authors' MATLAB code: RQNR.m, D_s_R.m, LSR.m, D_lambda_F.m, HQNR.m with maps)")
_IGARSS18 = "Alparone, Garzelli, Vivone, Proc. IGARSS 2018, pp. 5132-5134 (regression-based spatial consistency)"


def _reprojected(name: str, higher: bool, unit: str, tex: str, definition: str,
                 reads: tuple[str, ...] = ("fused", "ms"), casts: bool = False) -> Index:
    """A reprojected index (the PAN enters only through gain-invariant correlations)."""
    return Index(name, "full", higher, unit, tex, definition, (_REPRO,), ("reprojected2022",), engine="reprojected",
                 reads=reads, casts=casts)


#: Every index, in report order (a protocol's table keeps this order).
INDEXES: tuple[Index, ...] = (
    Index("Q2n", "reduced", True, "", "Q2\\textsuperscript{n}",
          "mean hypercomplex quality of 32x32 blocks after the uint16 cast",
          ("Garzelli & Nencini, IEEE GRSL 6(4), 2009, doi:10.1109/LGRS.2009.2022650", _TB2020), _ALL_RR,
          statistics=("q2n_blocks",), casts=True,
          compute=lambda s, v, c: q2n_value(s["q2n_blocks"]["sum"], s["q2n_blocks"]["count"], c.q2n_precision),
          map=QualityMap("blocks", "Q2n of each block (q2n.m's map)", chunk=lambda m, c: m["q2n_blocks"])),
    Index("Q", "reduced", True, "", "Q", "band mean of the UIQI on a sliding 32x32 window",
          ("Wang & Bovik, IEEE SPL 9(3), 2002, doi:10.1109/97.995823", _TB2020), _PC_RR,
          statistics=("q_windows",),
          compute=lambda s, v, c: q_from_sums(s["q_windows"]["sums"], s["q_windows"]["count"]),
          per_band=lambda s, c: np.asarray(s["q_windows"]["sums"]) / s["q_windows"]["count"]),
    Index("SAM", "reduced", False, "degrees", "SAM",
          "mean spectral angle; pixels of zero norm by the protocol's convention (sam_zero_norm)",
          ("Yuhas, Goetz, Boardman, JPL AVIRIS Workshop, 1992", _TB2020), _ALL_RR,
          statistics=("sam_angles",),
          compute=lambda s, v, c: sam_from_sums(s["sam_angles"]["angle_sum"], s["sam_angles"]["valid"],
                                                s["sam_angles"]["pixels"], zero_norm=c.sam_zero_norm),
          map=QualityMap("pixels", "spectral angle of each pixel, pi/2 where a norm is 0 (SAM.m's map)", "radians",
                         chunk=lambda m, c: m["sam_angles"])),
    Index("ERGAS", "reduced", False, "", "ERGAS", "100/ratio sqrt(mean_b MSE_b / mean_b^2)",
          ("Wald, Proc. Fusion of Earth Data, 2000", _TB2020), _ALL_RR,
          statistics=("squared_errors",),
          compute=lambda s, v, c: ergas_from_sums(s["squared_errors"]["sse"], s["squared_errors"]["ref_sum"],
                                                  s["squared_errors"]["pixels"], c.ratio),
          per_band=_ergas_bands("squared_errors")),
    Index("SCC", "reduced", True, "", "SCC", "correlation of Sobel gradients (the protocol's form)",
          ("Zhou, Civco, Silander, IJRS 19(4), 1998", _TB2020), _PC_RR,
          statistics=("sobel_products",),
          compute=lambda s, v, c: scc_from_sums(s["sobel_products"]["sums"])),
    Index("PSNR", "reduced", True, "dB", "PSNR",
          "10 log10(peak^2 / MSE), MSE over all pixels and bands, peak = 2**bits - 1 DN "
          "(scikit-image peak_signal_noise_ratio with data_range = 2**bits - 1)",
          ("Wang et al., IEEE TIP 13(4), 2004, doi:10.1109/TIP.2003.819861",
           "van der Walt et al., PeerJ 2:e453, 2014, doi:10.7717/peerj.453"),
          on_request=True, statistics=("squared_errors",), compute=_psnr),
    Index("CC", "reduced", True, "", "CC", "band mean of Pearson's correlation coefficient over all pixels",
          ("Loncan et al., IEEE GRSM 3(3), 2015, doi:10.1109/MGRS.2015.2440094",),
          on_request=True, statistics=("band_moments",),
          compute=lambda s, v, c: cc_from_sums(np.stack([s["band_moments"][k] for k in _MOMENTS]),
                                               s["band_moments"]["pixels"]), per_band=_cc_bands),
    # PanCollection scripts' extras (presets): band-mean PSNR and peak-normalised RMSE, peak 2**bits - 1
    Index("MPSNR", "reduced", True, "dB", "mPSNR",
          "mean over bands of 10 log10(peak^2 / MSE_b), peak = 2**bits - 1 DN (PanCollection quality_assess.m)",
          ("Efficient-MIF Pansharpening_Hyper_SR_Matlab_Test_Package/quality_assess.m, github.com/294coder",),
          ("pancollection",), on_request=True, statistics=("squared_errors",),
          compute=lambda s, v, c: mpsnr_from_sums(s["squared_errors"]["sse"], s["squared_errors"]["pixels"],
                                                  peak_of(c.bits, "MPSNR"))),
    Index("RMSE", "reduced", False, "", "RMSE",
          "sqrt(MSE over all pixels and bands) / peak, peak = 2**bits - 1 DN (PanCollection tables' RMSE)",
          ("XiaoXiao-Woo/PanCollection pancollection/common/evaluate.py",),
          on_request=True, statistics=("squared_errors",),
          compute=lambda s, v, c: rmse_from_sums(s["squared_errors"]["sse"], s["squared_errors"]["pixels"],
                                                 peak_of(c.bits, "RMSE"))),
    Index("SSIM", "reduced", True, "", "SSIM",
          "band mean of the mean SSIM over valid 11x11 Gaussian windows (sigma 1.5, K = 0.01, 0.03), dynamic "
          "range 2**bits - 1 DN (PanCollection ssim_index.m; scikit-image structural_similarity)",
          ("Wang et al., IEEE TIP 13(4), 2004, doi:10.1109/TIP.2003.819861",
           "Efficient-MIF Pansharpening_Hyper_SR_Matlab_Test_Package/ssim_index.m, github.com/294coder"),
          ("pancollection",), on_request=True, statistics=("ssim_windows",),
          compute=lambda s, v, c: float(np.mean(s["ssim_windows"]["sums"] / s["ssim_windows"]["count"]))),
    Index("D_lambda", "full", False, "", "$D_\\lambda$",
          "mean |Q(F_i, F_j) - Q(L_i, L_j)| of block UIQIs over band pairs", (_QNR, _TB2020), _TOOLBOX_RR,
          statistics=("block_uiqi",), compute=_d_lambda, reads=("fused", "ms"),
          map=QualityMap("blocks", "mean over band pairs of |Q(F_i, F_j) - Q(L_i, L_j)| of each block (the code's "
                         "D_lambda_Q map)", chunk=lambda m, c: d_lambda_block_map(m["block_uiqi"]))),
    Index("D_s", "full", False, "", "$D_S$",
          "mean |Q(F_b, PAN) - Q(L_b, low-pass PAN)| of block UIQIs over bands", (_QNR, _TB2020), _PC_RR,
          statistics=("block_uiqi",), compute=_d_s,
          map=QualityMap("blocks", "mean over bands of |Q(F_b, PAN) - Q(L_b, low-pass PAN)| of each block (the "
                         "code's D_s_Q map)", chunk=lambda m, c: d_s_block_map(m["block_uiqi"]))),
    Index("QNR", "full", True, "", "QNR", "(1 - D_lambda)^alpha (1 - D_s)^beta (alpha = beta = 1 unless exponents)",
          (_QNR,), _TOOLBOX_RR, needs=("D_lambda", "D_s"),
          compute=lambda s, v, c: _qnr_like("QNR", v["D_lambda"], v["D_s"], c)),
    Index("D_lambda_K", "full", False, "", "$D_\\lambda^{(K)}$",
          "1 - Q2n(EXP, MTF(fused)) at PAN scale", (_KHAN, _TB2020), ("toolbox2020", "qnr-paper", "pancollection"),
          statistics=("khan_q2n",), reads=("fused", "ms"), casts=True,
          compute=lambda s, v, c: d_lambda_k_from_sums(s["khan_q2n"]["sum"], s["khan_q2n"]["count"]), map=_KHAN_MAP),
    Index("HQNR", "full", True, "", "HQNR", "(1 - D_lambda_K)^alpha (1 - D_s)^beta (alpha = beta = 1 unless exponents)",
          ("Aiazzi et al., Proc. SPIE 9244, 2014", _TB2020, _GRSM),
          ("toolbox2020", "qnr-paper", "pancollection", "grsm2022"), needs=("D_lambda_K", "D_s"),
          compute=lambda s, v, c: _qnr_like("HQNR", v["D_lambda_K"], v["D_s"], c),
          map=QualityMap("pixels", "(1 - D_lambda_K map)^alpha (1 - D_s map)^beta " + _PAN_GRID,
                         block_maps=("D_lambda_K", "D_s"), compose=_hqnr_map)),
    Index("D_lambda_F", "full", False, "", "$D_\\lambda^{(F)}$",
          "D_lambda_K under the GRSM 2022 code's name: 1 - Q2n(EXP, MTF(fused)) at PAN scale", (_GRSM, _KHAN),
          ("grsm2022",), on_request=True, needs=("D_lambda_K",), reads=("fused", "ms"), casts=True,
          compute=lambda s, v, c: v["D_lambda_K"], map=_KHAN_MAP),
    Index("D_s_R", "full", False, "", "$D_S^{(R)}$",
          "var(P - F w) / var(P), w the least squares of the PAN on the fused bands at PAN scale (no intercept)",
          (_GRSM, _IGARSS18), ("grsm2022",), on_request=True, statistics=("lsr_gram", "lsr_residual"),
          reads=("fused", "pan"), compute=lambda s, v, c: d_s_r_from_sums(s["lsr_residual"]),
          map=QualityMap("pixels", "1 - LSR's local cd over 31 x 31 windows, in [0, 1] (the code's D_s_R map)",
                         reads=("d_s_r_map",), compose=lambda im, bm, c, r, cl: im["d_s_r_map"][0])),
    Index("RQNR", "full", True, "", "RQNR", "(1 - D_lambda_F)^alpha (1 - D_s_R)^beta", (_GRSM,), ("grsm2022",),
          on_request=True, needs=("D_lambda_F", "D_s_R"),
          compute=lambda s, v, c: _qnr_like("RQNR", v["D_lambda_F"], v["D_s_R"], c),
          map=QualityMap("pixels", "(1 - D_lambda_F map)^alpha (1 - D_s_R map)^beta " + _PAN_GRID,
                         reads=("d_s_r_map",), block_maps=("D_lambda_F",), compose=_rqnr_map)),
    _reprojected("R-Q2n", True, "", "R-Q2n", "Q2n of the reprojected fused image against the MS (int16 cast where "
                 "padded)", casts=True),
    _reprojected("R-Q", True, "", "R-Q", "Q of the reprojected fused image against the MS (edge-extended windows)"),
    _reprojected("R-SAM", False, "degrees", "R-SAM", "SAM of the reprojected fused image against the MS"),
    _reprojected("R-ERGAS", False, "", "R-ERGAS", "ERGAS of the reprojected fused image against the MS"),
    _reprojected("D_rho", False, "", "D\\_rho", "mean 1 - local correlation of fused bands with the PAN", ("fused",)),
    # the hyperspectral (2024) and Sentinel-2 (2025) protocols' forms: the fused image MTF-filtered and decimated
    # to MS scale (fused_fr_lr) against the MS; D_sR from the regression of the PAN on the fused bands; D_rho
    # against the PAN's bands (the four 10 m bands)
    Index("D_lambda", "full", False, "", "$D_\\lambda$",
          "1 - Q2n(MS, MTF(fused) decimated to MS scale) on MS-scale blocks (the protocol's Q2n settings)",
          (_HS, _S2, _KHAN), _HS_S2, statistics=("lr_q2n",), reads=("fused", "ms"), casts=True,
          compute=lambda s, v, c: 1.0 - q2n_value(s["lr_q2n"]["sum"], s["lr_q2n"]["count"], c.q2n_precision)),
    Index("D_sR", "full", False, "", "$D_{S,R}$",
          "var(P - F alpha) / var(P): 1 - R^2 of the PAN regressed on the fused bands without intercept",
          (_HS,), ("hyperspectral2024",), statistics=("d_sr_sums",), reads=("fused",), compute=_d_sr),
    Index("QNR", "full", True, "", "QNR", "(1 - D_lambda)(1 - D_sR)", (_HS,), ("hyperspectral2024",),
          needs=("D_lambda", "D_sR"), reads=("fused", "ms"),
          compute=lambda s, v, c: (1.0 - v["D_lambda"]) * (1.0 - v["D_sR"])),
    Index("R-ERGAS", "full", False, "", "R-ERGAS",
          "ERGAS of MTF(fused) shifted by half a pixel and decimated to MS scale, against the MS", (_S2,),
          ("sentinel2-2025",), statistics=("lr_squared_errors",), reads=("fused", "ms"),
          compute=lambda s, v, c: ergas_from_sums(s["lr_squared_errors"]["sse"], s["lr_squared_errors"]["ref_sum"],
                                                  s["lr_squared_errors"]["pixels"], c.ratio),
          per_band=_ergas_bands("lr_squared_errors")),
    Index("R-SAM", "full", False, "degrees", "R-SAM",
          "SAM of MTF(fused) shifted by half a pixel and decimated to MS scale, against the MS", (_S2,),
          ("sentinel2-2025",), statistics=("lr_sam_angles",), reads=("fused", "ms"),
          compute=lambda s, v, c: sam_from_sums(s["lr_sam_angles"]["angle_sum"], s["lr_sam_angles"]["valid"],
                                                s["lr_sam_angles"]["pixels"], zero_norm=c.sam_zero_norm)),
    Index("D_rho", "full", False, "", "D\\_rho",
          "mean 1 - max over the PAN's bands of the local correlation with each fused band", (_S2, _REPRO),
          ("sentinel2-2025",), statistics=("d_rho_max",), reads=("fused",),
          compute=lambda s, v, c: float(np.sum(s["d_rho_max"]["sums"]))
          / (s["d_rho_max"]["pixels"] * np.size(s["d_rho_max"]["sums"])),
          per_band=lambda s, c: np.asarray(s["d_rho_max"]["sums"]) / s["d_rho_max"]["pixels"]),
)

_BY_NAME: dict[str, Index] = {}
_FORMS: dict[str, list[Index]] = {}  # casefolded name -> its forms, the general one first
for _i in INDEXES:
    _BY_NAME.setdefault(_i.name, _i)
    _FORMS.setdefault(_i.name.casefold(), []).append(_i)
assert all(len({f.name for f in forms}) == 1 for forms in _FORMS.values()), "index names must differ in more than case"
assert all(len({p for f in forms for p in f.protocols}) == sum(len(f.protocols) for f in forms)
           for forms in _FORMS.values()), "one form of an index per protocol"


def get_index(name: str, protocol: str | None = None) -> Index:
    """The declaration of an index, by its name in any case (``Index.name`` is the canonical one).

    Parameters
    ----------
    name : str
        Index name (``"Q2n"``, ``"D_lambda"``, ``"psnr"``, ...).
    protocol : str, optional
        A protocol name: its own form of the index where it has one (``Index.protocols``), else the
        general form (the first declared).

    Returns
    -------
    Index

    Raises
    ------
    SettingError
        Unknown name; the message lists the known ones.

    Examples
    --------
    >>> get_index("SAM").unit, get_index("q2N").name
    ('degrees', 'Q2n')
    >>> get_index("D_lambda", "hyperspectral2024").statistics, get_index("D_lambda").statistics
    (('lr_q2n',), ('block_uiqi',))
    """
    forms = _FORMS.get(str(name).casefold())
    if forms is None:
        raise SettingError(f"unknown index {name!r}; known indexes: {', '.join(_BY_NAME)}")
    return next((f for f in forms if protocol in f.protocols), forms[0])


def get_statistic(name: str) -> Statistic:
    """A chunk statistic by name.

    Parameters
    ----------
    name : str
        Statistic name (``"q_windows"``, ``"block_uiqi"``, ...).

    Returns
    -------
    Statistic

    Raises
    ------
    KeyError
        Unknown name.

    Examples
    --------
    >>> get_statistic("q_windows").support
    'windows'
    """
    return STATISTICS[name]


def indexes_of(protocol: str, resolution: str) -> tuple[Index, ...]:
    """The default table of a protocol (by name) at ``"reduced"`` or ``"full"`` resolution.

    Parameters
    ----------
    protocol : str
        Protocol name (``"toolbox2020"``, ...).
    resolution : {"reduced", "full"}
        Which table.

    Returns
    -------
    tuple of Index
        In report order (empty for a protocol without that table).

    Examples
    --------
    >>> [i.name for i in indexes_of("toolbox2015", "full")]
    ['D_lambda', 'D_s', 'QNR']
    """
    return tuple(i for i in INDEXES if i.resolution == resolution and protocol in i.protocols)


def index_names(resolution: str | None = None) -> tuple[str, ...]:
    """Names of the declared indexes (of one resolution), in report order.

    Parameters
    ----------
    resolution : {"reduced", "full"}, optional
        Only the indexes of this resolution (default: all).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> index_names("reduced")
    ('Q2n', 'Q', 'SAM', 'ERGAS', 'SCC', 'PSNR', 'CC', 'MPSNR', 'RMSE', 'SSIM')
    """
    return tuple(dict.fromkeys(i.name for i in INDEXES if resolution is None or i.resolution == resolution))


def resolve_indexes(requested: Sequence[str] | str | None, *, default: Sequence[str], resolution: str,
                    engine: str, protocol: str) -> tuple[str, ...]:
    """Validate a user's ``indexes=`` against what a protocol can compute.

    Parameters
    ----------
    requested : sequence of str, str or None
        Index names in any case (a comma-separated string is split); ``"default"`` stands for the
        protocol's table; None: the protocol's table.
    default : sequence of str
        The protocol's table at this resolution.
    resolution : {"reduced", "full"}
    engine : {"toolbox", "reprojected"}
        The protocol's engine at this resolution.
    protocol : str
        For messages.

    Returns
    -------
    tuple of str
        Canonical names (``Index.name``), in the order given (duplicates dropped).

    Raises
    ------
    SettingError
        An unknown index, one of the other resolution, or one this protocol cannot compute.

    Examples
    --------
    >>> resolve_indexes(["default", "psnr"], default=("Q2n", "SAM"), resolution="reduced",
    ...                 engine="toolbox", protocol="toolbox2020")
    ('Q2n', 'SAM', 'PSNR')
    """
    if requested is None:
        return tuple(default)
    names = [t.strip() for t in requested.split(",")] if isinstance(requested, str) else [str(t) for t in requested]
    out: list[str] = []
    for name in names:
        for spec in (get_index(d, protocol) for d in (default if name.casefold() == "default" else [name])):
            n = spec.name
            if spec.resolution != resolution:
                raise SettingError(f"{n} is a {spec.resolution}-resolution index; this evaluation is at "
                                   f"{resolution} resolution")
            if n not in default and not (spec.on_request and spec.engine == engine):
                offered = [*default, *(i.name for i in INDEXES if i.resolution == resolution and i.on_request
                                       and i.engine == engine and i.name not in default)]
                raise SettingError(f"protocol {protocol!r} does not compute {n} at {resolution} resolution; "
                                   f"it offers: {', '.join(offered)}")
            if n not in out:
                out.append(n)
    if not out:
        raise SettingError("indexes: give at least one index name")
    return tuple(out)


def statistics_for(names: Sequence[str], protocol: str | None = None) -> tuple[Statistic, ...]:
    """The statistics the named indexes are computed from (through their ``needs`` too), in
    :data:`STATISTICS` order.

    Parameters
    ----------
    names : sequence of str
        Index names.
    protocol : str, optional
        The protocol whose forms of the indexes are meant (:func:`get_index`).

    Returns
    -------
    tuple of Statistic

    Examples
    --------
    >>> [s.name for s in statistics_for(["QNR"])]
    ['block_uiqi']
    """
    wanted = {s for spec in closure(names, protocol) for s in spec.statistics}
    wanted |= {f for s in list(wanted) for fit in STATISTICS[s].fits for f in FITS[fit].statistics}
    return tuple(s for s in STATISTICS.values() if s.name in wanted)


def map_indexes(names: Sequence[str], protocol: str | None = None) -> tuple[Index, ...]:
    """The indexes whose quality maps an evaluation of ``names`` makes: those of the closure with a map (the
    block maps a composed map reads included), in catalogue order.

    Parameters
    ----------
    names : sequence of str
        Index names.
    protocol : str, optional
        The protocol whose forms of the indexes are meant (:func:`get_index`).

    Returns
    -------
    tuple of Index

    Examples
    --------
    >>> [i.name for i in map_indexes(["HQNR"])]
    ['D_s', 'D_lambda_K', 'HQNR']
    """
    return tuple(i for i in closure(names, protocol) if i.map is not None)


def closure(names: Sequence[str], protocol: str | None = None) -> tuple[Index, ...]:
    """The named indexes and every index their finalize reads (``needs``), in catalogue order (the
    ``protocol``'s forms, :func:`get_index`).

    Parameters
    ----------
    names : sequence of str
        Index names.
    protocol : str, optional
        The protocol whose forms of the indexes are meant (:func:`get_index`).

    Returns
    -------
    tuple of Index

    Examples
    --------
    >>> [i.name for i in closure(["HQNR"])]
    ['D_s', 'D_lambda_K', 'HQNR']
    """
    wanted: set[int] = set()
    todo = list(names)
    while todo:
        spec = get_index(todo.pop(), protocol)
        if id(spec) not in wanted:
            wanted.add(id(spec))
            todo.extend(spec.needs)
    return tuple(i for i in INDEXES if id(i) in wanted)


def image_of(name: str, protocol: Any) -> str:
    """The image a name of ``Statistic.reads`` stands for under a protocol (aliases resolved by its fields).

    Parameters
    ----------
    name : str
        An input role or a :data:`DERIVED` image (an alias among them).
    protocol : Protocol
        Its fields choose the aliases' images.

    Returns
    -------
    str

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> image_of("low_pan", SimpleNamespace(d_s_low_pass="imresize")), image_of("exp", None)
    ('pan_lr', 'exp')
    """
    d = DERIVED.get(name)
    while d is not None and d.choice is not None:
        name = d.options[getattr(protocol, d.choice)]
        d = DERIVED.get(name)
    return name


def finalize(names: Sequence[str], sums: Mapping[str, Any], ctx: FinalizeContext) -> dict[str, float]:
    """The named indexes from merged statistics, each by its declared finalize step.

    Indexes are finalized in catalogue order (an index's ``needs`` first, whether requested or
    not); the result has the requested names in the order given.

    Parameters
    ----------
    names : sequence of str
        The indexes to finalize.
    sums : mapping
        Statistic name -> merged fields (a mapping that computes a statistic when first read is
        fine: statistics are read in catalogue order).
    ctx : FinalizeContext
        Settings the finalize steps read (ratio, bits, band count, constant-block policy).

    Returns
    -------
    dict of str to float

    Examples
    --------
    >>> finalize(["Q2n"], {"q2n_blocks": {"sum": 9.0, "count": 10}}, FinalizeContext())
    {'Q2n': 0.9}
    """
    values: dict[str, float] = {}
    for spec in closure(names, ctx.protocol):
        if spec.compute is None:
            raise SettingError(f"{spec.name} is computed by the {spec.engine} engine, not from chunk sums")
        values[spec.name] = float(spec.compute(sums, values, ctx))
    return {n: values[n] for n in names}


def per_band_values(names: Sequence[str], sums: Mapping[str, Any], ctx: FinalizeContext) -> dict[str, list[float]]:
    """The per-band values of the named indexes that have a per-band form (``Index.per_band``).

    Parameters
    ----------
    names : sequence of str
        Index names (``Index.name``); those without a per-band form are left out.
    sums : mapping
        Statistic name -> merged fields (as for :func:`finalize`).
    ctx : FinalizeContext
        Ratio, protocol and the other values the finalize steps read (:class:`FinalizeContext`).

    Returns
    -------
    dict of str to list of float
        Index name -> one value per band (band order of the images).

    Examples
    --------
    >>> per_band_values(["ERGAS", "SAM"], {"squared_errors": {"sse": np.array([4.0, 16.0]),
    ...                 "ref_sum": np.array([8.0, 8.0]), "pixels": 4}}, FinalizeContext())
    {'ERGAS': [12.5, 25.0]}
    """
    out = {}
    for name in names:
        spec = get_index(name, ctx.protocol)
        if spec.per_band is not None:
            out[name] = [float(v) for v in spec.per_band(sums, ctx)]
    return out


def direction(name: str) -> int | None:
    """+1 (higher is better), -1 (lower is better), or None for a name that is not an index.

    Parameters
    ----------
    name : str
        Index name, or another column of a report.

    Returns
    -------
    int or None

    Examples
    --------
    >>> direction("SAM"), direction("HQNR"), direction("loss")
    (-1, 1, None)
    """
    spec = _BY_NAME.get(name)
    return None if spec is None else spec.direction


def tex_label(name: str) -> str | None:
    """The index's ``results.tex`` column label, or None for a name that is not an index.

    Parameters
    ----------
    name : str
        Index name, or another column of a report.

    Returns
    -------
    str or None

    Examples
    --------
    >>> tex_label("D_lambda_K")
    '$D_\\\\lambda^{(K)}$'
    """
    spec = _BY_NAME.get(name)
    return None if spec is None else spec.tex

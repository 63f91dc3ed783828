"""The one evaluation path: :func:`evaluate` (inputs, settings) -> the indexes and a provenance card.

Every result is a dict of Python floats (a (N,) float64 array per index for a batch) plus
``"protocol"``: a JSON-serialisable card naming the protocol, the library version and every setting
that affects the numbers.

1. The settings are validated once into one value (:func:`~pansharp_iqa.settings.reduced_settings`,
   :func:`~pansharp_iqa.settings.full_settings`); :func:`evaluate_reduced` / :func:`evaluate_full`
   build it from their keywords, the accumulators (:class:`~pansharp_iqa.ReducedMetrics`), the
   framework adapters and ``pansharp-eval`` take it built.
2. :func:`evaluate` dispatches on the inputs (explicitly): batches (``layout=``), framework tensors
   and ``backend="torch"`` go to the batch path (each image on the host core, or every image's
   statistics on the device: ``pansharp_iqa.torch_backend``); file paths, rasterio datasets,
   lazy array-likes and arrays that the one rule :func:`pansharp_iqa.tiled.plan.choose_path` sends
   tile by tile go to the tile engine (:mod:`pansharp_iqa.tiled`); other arrays are evaluated here.
3. Every path checks the inputs against the settings by the rules of
   :mod:`pansharp_iqa.validation` and computes the catalogue's statistics, finalized by
   :func:`pansharp_iqa.indexes.catalog.finalize`: the reduced-resolution strip pass
   (``pansharp_iqa.indexes.reduced_pass``), the toolbox-family full-resolution indexes
   (``pansharp_iqa.indexes.full_resolution``) or the reprojected protocol
   (:mod:`pansharp_iqa.reprojected`), chosen by ``protocol.full_engine``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .foreign import (
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
from .indexes.catalog import map_indexes
from .indexes.full_pass import Scene, given_planes, whole_image
from .indexes.full_resolution import NanPolicy
from .indexes.reduced_pass import reduced_sums
from .indexes.scc import check_gradient
from .indexes.strips import StripImage
from .io.memory import available_memory
from .io.windows import is_lazy_input
from .protocols import Protocol
from .quality_maps import MapInfo, MapSink, check_map_names, map_infos, map_sink, maps_asked
from .sensors import Sensor, resolve_sensor
from .settings import FullSettings, ReducedSettings, Settings, full_settings, protocol_card, reduced_settings
from .tiled.api import evaluate_tiled
from .tiled.plan import DEFAULT_TILE_SIZE, choose_path
from .validation import (
    SensorMismatchError,
    SettingError,
    ShapeError,
    check_choice,
    check_pan_ratio,
    check_same_shape,
    image_array,
    image_facts,
    pan_bands_array,
)

__all__ = ["evaluate", "evaluate_reduced", "evaluate_full", "sensor_sensitivity", "protocol_card", "BACKENDS",
           "ROLES"]

#: ``backend=`` choices.
BACKENDS = ("auto", "host", "torch")
#: The images of each resolution (the keys of ``inputs``), in order; full resolution takes ``"ms_exp"`` too
#: under settings whose upsampled MS is given (``full_settings(upsampled="given")``).
ROLES = {"reduced": ("fused", "reference"), "full": ("fused", "ms", "pan")}
_TILED_CHOICES = ("auto", "always", "never")


def evaluate(
    inputs: Mapping[str, object],
    settings: Settings,
    *,
    tiled: str = "auto",
    layout: str | None = None,
    backend: str = "auto",
    tile_size: int = DEFAULT_TILE_SIZE,
    jobs: int = 1,
    scheduler: Any = None,
    progress: bool = False,
    maps: bool | None = None,
    maps_to: Any = None,
) -> dict[str, Any]:
    """The indexes of one evaluation (an image, a batch or a scene of any size) with validated settings.

    Parameters
    ----------
    inputs : dict
        The images by role: ``{"fused", "reference"}`` for reduced-resolution settings,
        ``{"fused", "ms", "pan"}`` for full-resolution ones (:data:`ROLES`; and ``"ms_exp"``, the
        upsampled MS in DN, under ``upsampled="given"``). Each is a numpy array,
        a framework tensor (PyTorch, MindSpore, CuPy, DLPack), a file path (GeoTIFF, ``.npy``), a
        rasterio dataset or a lazy array-like, in DN (or multiplied to DN by the settings' ``scale``);
        shapes as for :func:`evaluate_reduced` / :func:`evaluate_full`.
    settings : ReducedSettings or FullSettings
        Built once with :func:`~pansharp_iqa.settings.reduced_settings` or
        :func:`~pansharp_iqa.settings.full_settings`; reused for every call.
    tiled : {"auto", "always", "never"}
        ``"auto"``: lazy inputs tile by tile, numpy arrays where
        :func:`pansharp_iqa.tiled.plan.choose_path` says (the rule ``pansharp-eval`` applies to each
        scene: tile-wise when the in-memory estimate exceeds half the available memory, or from
        ``TILED_FASTER_SAMPLES`` pixels x bands); ``"always"`` / ``"never"`` force a path
        (``"never"``: numpy arrays only). Both give the same numbers (1e-9 relative or better).
    layout : {"NCHW", "NHWC"}, optional
        The inputs are batches in this declared layout: each index is returned as a (N,) float64
        array (PAN batches: (N, 1, H, W) / (N, H, W, 1) or (N, H, W)). Without it, a tensor is one
        (H, W, B) image.
    backend : {"auto", "host", "torch"}
        Where batches and tensors are computed: ``"host"`` the numpy core (the reference),
        ``"torch"`` the PyTorch backend on the tensor's device in float64 (equal to the host within
        1e-12 relative), ``"auto"`` the device for tensors on an accelerator, the host otherwise.
    tile_size : int, default 512
        Tile side in pixels (rounded up to the block grid), tile-wise only.
    jobs : int, default 1
        Local worker processes, tile-wise only.
    scheduler : str or distributed.Client, optional
        Dask scheduler address or client: the tiles run on that cluster.
    progress : bool
        tqdm bar over the tiles.
    maps : bool, optional
        Also return the quality map of every requested index that has one, as the reference code
        returns it (``result["maps"][index]``, float64 arrays; see :mod:`pansharp_iqa.quality_maps`):
        block maps (one value per ``block_size`` block: Q2n, D_lambda, D_s, D_lambda_K, D_lambda_F)
        and pixel maps (SAM in radians with pi/2 where a norm is 0, as ``SAM.m``; on the PAN grid
        D_s_R, RQNR, HQNR). One image on the host only (not batches or tensors). None (default):
        maps exactly when ``maps_to`` is given. Refused before any work: a value that is not a bool,
        ``maps=False`` with a ``maps_to``, and maps asked for when no requested index has one.
    maps_to : path-like or MapSink, optional
        Where the maps go instead of arrays (asks for the maps by itself): a folder (created if
        missing; a file is refused) receives ``<index>.tif`` GeoTIFFs, georeferenced like the
        reference input when it is a GeoTIFF (the PAN at full resolution), written tile by tile in
        bounded memory under temporary names, renamed when complete; ``result["maps"]`` then holds
        the paths. A map file already in the folder is refused before any work (the maps never
        replace a file they did not write). Or any :class:`~pansharp_iqa.quality_maps.MapSink`.

    Returns
    -------
    dict
        The settings' indexes (``settings.indexes``) and ``"protocol"``: the card (``"tiling"`` in it
        when the tile engine ran, ``"batch"`` for batches and tensors, ``"maps"`` with where each map
        lies when maps were asked for); ``"maps"`` with ``maps``/``maps_to``.

    Raises
    ------
    InputError
        Any rule of :mod:`pansharp_iqa.validation`; inputs that are not the settings' roles.

    Examples
    --------
    >>> from pansharp_iqa import reduced_settings, wald_degrade
    >>> from pansharp_iqa.baselines import gsa
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> settings = reduced_settings(ratio=4, bits=11)  # validated once, for every call
    >>> fused = gsa(*wald_degrade(ms, pan, "none", ratio=4), ratio=4)
    >>> round(evaluate({"fused": fused, "reference": ms}, settings)["Q2n"], 4)
    0.8779
    """
    images = _roles(inputs, settings)
    check_choice("backend", backend, BACKENDS)
    check_choice("tiled", tiled, _TILED_CHOICES)
    given = "ms_exp" in images
    asked = maps_asked(maps, maps_to)
    if layout is not None or backend == "torch" or any(is_tensor_like(v) for v in images.values()):
        if given:
            raise SettingError("ms_exp is for one in-memory numpy image; batches and tensors compute their EXP")
        if asked:
            raise SettingError("quality maps are made for one image on the host (numpy arrays, files), not for "
                               "batches or tensors: evaluate one image without layout/backend='torch'")
        return _batch(images, settings, layout=layout, backend=backend)
    sink = map_sink(maps_to, like=images["pan" if "pan" in images else "reference"],
                    names=check_map_names(settings)) if asked else None
    try:
        if _tile_wise(tiled, images, settings, pinned=given):
            result = evaluate_tiled(images, settings, tile_size=tile_size, jobs=jobs, scheduler=scheduler,
                                    progress=progress, maps=sink)
        else:
            result = _in_memory(images, settings, sink=sink)
    except BaseException:
        if sink is not None and hasattr(sink, "abort"):
            sink.abort()
        raise
    return result if sink is None else {**result, "maps": sink.close()}


def _roles(inputs: Mapping[str, object], settings: Settings) -> dict[str, object]:
    """The inputs in the order of the settings' roles (refused when they are other roles)."""
    if not isinstance(settings, (ReducedSettings, FullSettings)):
        raise SettingError(f"settings: build them with reduced_settings(...) or full_settings(...), got "
                           f"{type(settings).__name__}")
    roles = settings.roles
    if not isinstance(inputs, Mapping) or set(inputs) != set(roles):
        got = sorted(inputs) if isinstance(inputs, Mapping) else type(inputs).__name__
        why = " (an upsampled MS ms_exp needs settings built with upsampled='given')" if "ms_exp" in got else ""
        raise SettingError(f"inputs: {settings.resolution}-resolution settings take a dict of the images "
                           f"{', '.join(roles)}; got {got}{why}")
    return {r: inputs[r] for r in roles}


def _tile_wise(tiled: str, images: Mapping[str, object], settings: Settings, *, pinned: bool) -> bool:
    """The explicit dispatch on the input kind (see the module docstring)."""
    lazy = any(is_lazy_input(x) for x in images.values())
    if tiled == "never" and lazy:
        raise SettingError(
            "tiled='never' needs numpy arrays: file paths, rasterio datasets and lazy arrays are read "
            "tile by tile (load them with np.asarray first if they fit in memory)"
        )
    if tiled != "auto" or lazy:
        return tiled == "always" or lazy
    shape = getattr(images["fused"], "shape", ())
    if pinned or len(shape) != 3:
        return False
    return choose_path("auto", resolution=settings.resolution, shape=tuple(int(n) for n in shape),
                       available=available_memory()).path == "tile-wise"


def _in_memory(images: Mapping[str, object], settings: Settings, *,
               shared: dict[str, Any] | None = None, sink: MapSink | None = None) -> dict[str, Any]:
    """One in-memory image of either resolution (its maps written to ``sink``)."""
    if isinstance(settings, ReducedSettings):
        return _reduced_in_memory(images["fused"], images["reference"], settings, sink=sink)
    assert isinstance(settings, FullSettings)
    return _full_in_memory(images["fused"], images["ms"], images["pan"], settings, ms_exp=images.get("ms_exp"),
                           shared=shared, sink=sink)


def write_maps(sink: MapSink, infos: Mapping[str, MapInfo], maps: Mapping[str, Any]) -> dict[str, Any]:
    """Open each map of ``infos`` in ``sink`` and write its whole array; the card entry of the maps."""
    for name, info in infos.items():
        sink.open(info)
        sink.write(name, (0, info.shape[0]), (0, info.shape[1]), maps[name])
    return {name: info.to_card() for name, info in infos.items()}


def _torch_available() -> bool:
    """Whether PyTorch can be imported."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _backend_of(backend: str, images: Mapping[str, object]) -> str:
    """``"host"`` or ``"torch"``: ``"auto"`` takes the device for tensors PyTorch can take on an accelerator."""
    if backend == "host":
        return "host"
    if backend == "auto":
        on_device = any(device_of(v) != "cpu" for v in images.values())
        torchable = all(framework_of(v) in ("torch", "cupy", "dlpack", "numpy") for v in images.values())
        return "torch" if on_device and torchable and _torch_available() else "host"
    if not _torch_available():
        raise SettingError("backend='torch' needs PyTorch: pip install 'pansharp_iqa[torch]' (torch==2.13.0 "
                           "for a CPU build), or use backend='host'")
    return "torch"


def _host_split(name: str, x: object, layout: Layout | None, *, pan_bands: int = 1) -> list[Any]:
    """The host images of one input: the batch's images, or the one (converted) image (a PAN of several bands:
    images)."""
    if layout is None:
        return [np.asarray(to_numpy(name, x)) if is_tensor_like(x) else x]
    return (host_pans if name == "pan" and pan_bands == 1 else host_images)(name, x, layout)


def _batch(images: Mapping[str, object], settings: Settings, *, layout: object,
           backend: str) -> dict[str, Any]:
    """Each image of a batch (or one tensor image), on the host core or on the device."""
    lay = check_layout(layout)
    device = check_same_device(images)
    if _backend_of(backend, images) == "torch":
        from .torch_backend import evaluate_torch, torch_computes

        if torch_computes(settings) or backend == "torch":
            return evaluate_torch(settings, images, layout=lay, pans=("pan",) if "pan" in images else ())
    split = {k: _host_split(k, v, lay, pan_bands=getattr(settings, "pan_bands", 1)) for k, v in images.items()}
    sizes = {k: len(v) for k, v in split.items()}
    if len(set(sizes.values())) > 1:
        raise ShapeError(f"batches of different sizes: {sizes}")
    results = []
    for i in range(sizes["fused"]):
        with image_of_batch(i) if lay is not None else contextlib.nullcontext():
            results.append(_in_memory({k: v[i] for k, v in split.items()}, settings))
    card = {**results[0]["protocol"], "batch": {"images": len(results), "layout": lay or "HWB", "backend": "host",
                                                 "device": device}}
    if lay is None:
        return {**results[0], "protocol": card}
    return {**_stacked(results), "protocol": card}


def _stacked(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The indexes of a batch's per-image results as (N,) arrays (per-band values as (N, B) arrays)."""
    names = [k for k in results[0] if k not in ("protocol", "per_band")]
    out: dict[str, Any] = {k: np.array([r[k] for r in results], dtype=np.float64) for k in names}
    if "per_band" in results[0]:
        out["per_band"] = {k: np.array([r["per_band"][k] for r in results]) for k in results[0]["per_band"]}
    return out


def evaluate_reduced(
    fused: np.ndarray,
    reference: np.ndarray,
    *,
    ratio: int,
    bits: int,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
    tiled: str = "auto",
    indexes: Sequence[str] | str | None = None,
    layout: str | None = None,
    backend: str = "auto",
    scale_mismatch: str = "raise",
    sam_zero_norm: str | None = None,
    per_band: bool = False,
    maps: bool | None = None,
    maps_to: Any = None,
) -> dict[str, Any]:
    """Reduced-resolution (Wald protocol) indexes of a fused image against its reference.

    As the toolbox demos do: both images lose 20 leading and 21 trailing rows/columns
    (``I(21:end-21, ...)`` in MATLAB), optionally the fused image is clipped to [0, 2^bits]
    (``threshold``, off by default as in the demos), then Q2n (32x32 blocks, uint16 cast), Q_avg
    (32x32 sliding window), SAM (degrees), ERGAS and SCC are computed.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B), or a file path / rasterio dataset / lazy array-like
        Fused image at reference scale, in DN (or multiplied to DN by ``scale``). Numpy arrays are
        evaluated in memory (one strip pass, no whole-image copies); file paths (GeoTIFF, .npy),
        rasterio datasets and lazy array-likes are evaluated tile by tile in bounded memory with
        the same numbers (:mod:`pansharp_iqa.tiled`).
    reference : same kinds, shape (H, W, B)
        Ground truth (the original MS of the Wald protocol), in DN.
    ratio : int
        Resolution ratio (used by ERGAS); required, an integer >= 2.
    bits : int
        Radiometric resolution (for the threshold and the range check); required.
    protocol : str or Protocol, default "toolbox2020"
        See :func:`pansharp_iqa.list_protocols`.
    scale : float, default 1.0
        Multiplier applied to both images first (e.g. ``2**bits - 1`` for [0, 1] data). With the
        default, float data within [0, 1] are refused (Q2n casts to integer DN).
    threshold : bool, default False
        Clip the fused image to [0, 2^bits] first (toolbox ``thvalues``).
    tiled : {"auto", "always", "never"}
        ``"auto"``: lazy inputs tile-wise, numpy arrays where the one rule of :func:`evaluate` says
        (in memory unless large: :func:`pansharp_iqa.tiled.plan.choose_path`); ``"always"``:
        tile-wise (arrays too); ``"never"``: in memory (numpy arrays only).
    indexes : sequence of str or str, optional
        The indexes to compute, in the order given: names of the protocol's table and the extras
        of the catalogue (``"PSNR"``, ``"CC"``; :func:`pansharp_iqa.index_names`); ``"default"``
        stands for the protocol's table (``indexes=["default", "PSNR", "CC"]``). None: the table.
        Extras are recorded in the card with their definitions.
    layout : {"NCHW", "NHWC"}, optional
        The inputs are batches (numpy arrays, PyTorch / MindSpore / CuPy tensors, DLPack arrays)
        in this declared layout: every image is evaluated and each index is returned as a (N,)
        float64 array (PAN batches: (N, 1, H, W) / (N, H, W, 1) or (N, H, W)). Without it, a
        tensor is one (H, W, B) image.
    backend : {"auto", "host", "torch"}
        Where batches and tensors are computed: ``"host"`` the numpy core (the reference),
        ``"torch"`` the PyTorch backend on the tensor's device in float64 (the same statistics
        and finalize steps; equal to the host within 1e-12 relative), ``"auto"`` the device for
        tensors on an accelerator, the host otherwise (see :func:`evaluate`).
    scale_mismatch : {"raise", "warn"}
        A fused image on another scale than the reference (a band, or the whole image, off by a
        bit-depth factor such as 2, or by more than 3 in mean and spread) is refused; ``"warn"``
        scores it anyway with a :class:`~pansharp_iqa.rules.ScaleMismatchWarning`, recorded in
        the card (``"scale_mismatch"``). See ``docs/validation.md``.
    sam_zero_norm : {"exclude", "zero", "right_angle", "nan"}, optional
        SAM's pixels of zero norm: instead of the protocol's convention (``"exclude"`` for the MATLAB
        toolboxes, ``"zero"`` for ``hyperspectral2024`` / ``sentinel2-2025``), left out of the mean,
        counted as 0 or 90 degrees, or a NaN result; recorded in the card.
    per_band : bool, default False
        Also return ``"per_band"``: each index's value per band where it has one (ERGAS's band terms,
        Q, CC; at full resolution R-ERGAS and D_rho), one value per band in band order.
    maps : bool, optional
        Also return ``result["maps"]``: the toolbox's Q2n block map (``q2n``'s, one value per
        32 x 32 block of the evaluated region) and SAM map (``SAM.m``'s: radians, pi/2 where a norm
        is 0), for those of the indexes computed (see :func:`evaluate`; refused when none has one).
        None (default): maps exactly when ``maps_to`` is given.
    maps_to : path-like or MapSink, optional
        Write the maps as GeoTIFFs into this folder (or to this sink) instead, window by window
        (see :func:`evaluate`: a map file already there is refused before any work).

    Returns
    -------
    dict
        ``"Q2n"``, ``"Q"``, ``"SAM"`` (degrees), ``"ERGAS"``, ``"SCC"`` (or the requested
        indexes) as floats and ``"protocol"`` (the card; ``"tiling"`` in it when the tile engine
        ran); ``"maps"`` with ``maps``/``maps_to``.

    Raises
    ------
    InputError
        Any rule of :mod:`pansharp_iqa.validation`: shapes or layout, NaN/Inf, a fused image on
        another scale than the reference, a reference out of ``[0, 2**bits - 1]``, [0, 1] data,
        an invalid ratio, bits or protocol.

    References
    ----------
    Vivone et al., IEEE GRSM 2021, doi:10.1109/MGRS.2020.3019315; Wald et al., PE&RS 63(6), 1997.

    Examples
    --------
    >>> from pansharp_iqa import wald_degrade
    >>> from pansharp_iqa.baselines import gsa
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()  # the original MS becomes the reference of the Wald protocol
    >>> ms_lr, pan_lr = wald_degrade(ms, pan, "none", ratio=4)
    >>> r = evaluate_reduced(gsa(ms_lr, pan_lr, ratio=4), ms, ratio=4, bits=11)
    >>> {k: round(v, 4) for k, v in r.items() if k != "protocol"}
    {'Q2n': 0.8779, 'Q': 0.8576, 'SAM': 9.5308, 'ERGAS': 8.3706, 'SCC': 0.8664}
    """
    settings = reduced_settings(protocol=protocol, ratio=ratio, bits=bits, scale=scale, threshold=threshold,
                                indexes=indexes, scale_mismatch=scale_mismatch, sam_zero_norm=sam_zero_norm,
                                per_band=per_band)
    return evaluate({"fused": fused, "reference": reference}, settings, tiled=tiled, layout=layout, backend=backend,
                    maps=maps, maps_to=maps_to)


def _reduced_in_memory(fused: object, reference: object, settings: ReducedSettings, *,
                       sink: MapSink | None = None) -> dict[str, Any]:
    """One in-memory (H, W, B) pair at reduced resolution: the strip pass."""
    fus = image_array("fused", fused)
    ref = image_array("reference", reference)
    check_same_shape("reference", ref, "fused", fus)
    settings.check({r: image_facts(r, a, scale=settings.scale_of(r)) for r, a in (("fused", fus), ("reference", ref))})
    lead, trail = settings.cut_bounds(ref.shape)
    h, w = ref.shape[:2]
    ref_c = ref[lead : h - trail, lead : w - trail]  # views: strips are converted in the pass
    fus_c = fus[lead : h - trail, lead : w - trail]
    proto = settings.protocol
    names = settings.indexes
    gradient = check_gradient(proto.scc_gradient, ref_c.shape) if "SCC" in names else proto.scc_gradient
    ctx = settings.chunk_context(gradient, grid=ref_c.shape[:2], maps=sink is not None)
    chunk_maps: dict[str, np.ndarray] = {}
    sums = reduced_sums(
        StripImage(ref_c, settings.scale_of("reference")),
        StripImage(fus_c, settings.scale_of("fused"), clip_max=settings.clip_max),
        statistics=settings.statistics(), ctx=ctx, maps=chunk_maps,
    )
    values = settings.results(sums, ref.shape[2])
    card = settings.card(image_shape=list(ref.shape), evaluated_shape=list(ref_c.shape))
    if sink is not None:
        specs = [i for i in map_indexes(names, proto.name) if i.name in names]
        maps = {i.name: i.map.chunk(chunk_maps, ctx) for i in specs}  # type: ignore[union-attr,misc]
        card["maps"] = write_maps(sink, map_infos(specs, ref_c.shape[:2], proto.block_size, (lead, lead)), maps)
    return {**values, "protocol": card}


def evaluate_full(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensor: str | Sensor,
    ratio: int | None = None,
    bits: int | None = None,
    protocol: str | Protocol = "toolbox2020",
    scale: float = 1.0,
    threshold: bool = False,
    nan_policy: NanPolicy = "raise",
    ms_exp: np.ndarray | None = None,
    tiled: str = "auto",
    indexes: Sequence[str] | str | None = None,
    layout: str | None = None,
    backend: str = "auto",
    scale_mismatch: str = "raise",
    sam_zero_norm: str | None = None,
    per_band: bool = False,
    exponents: str = "unitary",
    maps: bool | None = None,
    maps_to: Any = None,
) -> dict[str, Any]:
    """Full-resolution (no reference) indexes of a fused image.

    Parameters
    ----------
    fused : ndarray, shape (H, W, B), or a file path / rasterio dataset / lazy array-like
        Fused image at PAN scale, DN; H and W multiples of 32 (toolbox requirement). Numpy arrays
        are evaluated in memory; if any of the three inputs is a path, rasterio dataset or lazy
        array-like, all are evaluated tile by tile (:mod:`pansharp_iqa.tiled`, same numbers).
    ms : same kinds, shape (H/ratio, W/ratio, B)
        Original low-resolution MS, DN.
    pan : same kinds, shape (H, W)
        PAN, DN.
    sensor : str or Sensor
        Required; its MTF drives D_lambda_K (and D_s under toolbox2015). Band count must match
        (select a subset with ``"WV3[4band]"`` or ``Sensor.select_bands``).
    ratio, bits : int, optional
        Default to the sensor's nominal values (the generic sensor needs ``ratio``; ``bits`` only
        with ``threshold``: no full-resolution index depends on it otherwise).
    protocol : str or Protocol, default "toolbox2020"
        Evaluation protocol (:func:`list_protocols`); its table sets the keys returned.
    scale : float, default 1.0
        Multiplier to DN applied to all three images.
    threshold : bool, default False
        Clip the fused image to [0, 2^bits] first.
    nan_policy : {"raise", "omit", "propagate"}
        Treatment of constant blocks (UIQI 0/0); see :func:`pansharp_iqa.d_lambda`.
    ms_exp : ndarray, optional
        The upsampled MS to use instead of ``interp23tap(ms, ratio)`` (e.g. a PanCollection file's
        ``lms``), in the units of ``ms`` (``scale`` applies to it too); in memory unless ``tiled`` says
        otherwise (then read window by window like the other inputs). Recorded in the card (``upsampled_ms``).
    tiled : {"auto", "always", "never"}
        ``"auto"``: lazy inputs, and numpy arrays that the one rule of :func:`evaluate` sends there
        (:func:`pansharp_iqa.tiled.plan.choose_path`: from 2^23 pixels x bands, or above half the
        available memory), tile-wise in bounded memory (same numbers to 1e-12; the card says so
        under ``"tiling"``); other arrays in memory. ``"always"`` / ``"never"`` force one path
        (``"never"``: numpy arrays only).
    indexes : sequence of str or str, optional
        A subset of the protocol's full-resolution indexes to compute (``"default"``: its table);
        the statistics the others need are not computed.
    layout : {"NCHW", "NHWC"}, optional
        The inputs are batches (numpy arrays, PyTorch / MindSpore / CuPy tensors, DLPack arrays)
        in this declared layout: every image is evaluated and each index is returned as a (N,)
        float64 array (PAN batches: (N, 1, H, W) / (N, H, W, 1) or (N, H, W)). Without it, a
        tensor is one (H, W, B) image.
    backend : {"auto", "host", "torch"}
        Where batches and tensors are computed: ``"host"`` the numpy core (the reference),
        ``"torch"`` the PyTorch backend on the tensor's device in float64 (the same statistics
        and finalize steps; equal to the host within 1e-12 relative), ``"auto"`` the device for
        tensors on an accelerator, the host otherwise (see :func:`evaluate`).
    scale_mismatch : {"raise", "warn"}
        As for :func:`evaluate_reduced` (the fused image against the MS).
    sam_zero_norm : {"exclude", "zero", "right_angle", "nan"}, optional
        R-SAM's zero-norm convention instead of the protocol's (``sentinel2-2025``: ``"zero"``).
    per_band : bool, default False
        Also return ``"per_band"`` (as for :func:`evaluate_reduced`).
    exponents : {"unitary", "sensor-based", "overall"}
        (alpha, beta) of QNR, HQNR and RQNR as the GRSM 2022 code's ``get_alpha_beta``: (1, 1), the
        sensor's row, or the "overall" row (recorded in the card; see ``docs/fullres_maps.md``).
    maps : bool, optional
        Also return ``result["maps"]``: the maps of the GRSM 2022 code for the indexes computed
        (block maps of D_lambda, D_s, D_lambda_K, D_lambda_F; D_s_R, RQNR and HQNR on the PAN
        grid; QNR has none), see :func:`evaluate` (refused when none of the indexes has one). None
        (default): maps exactly when ``maps_to`` is given.
    maps_to : path-like or MapSink, optional
        Write the maps as GeoTIFFs into this folder (or to this sink) instead, window by window
        (see :func:`evaluate`: a map file already there is refused before any work).

    Returns
    -------
    dict
        The protocol's FR indexes as floats (``toolbox2020``: ``D_lambda``, ``D_s``, ``QNR``,
        ``D_lambda_K``, ``HQNR``) and ``"protocol"``: the card, with the sensor and the exact GNyq
        values used; ``"maps"`` with ``maps``/``maps_to``.

    Raises
    ------
    InputError
        Any rule of :mod:`pansharp_iqa.validation` (geometry, layout, NaN/Inf, mixed scales among
        the fused image, MS and PAN, out-of-range MS/PAN, sensor band count, ...).

    References
    ----------
    Vivone et al., IEEE GRSM 2021; Alparone et al., PE&RS 74(2), 2008; Khan et al., IEEE TGRS 2009.

    Examples
    --------
    >>> from pansharp_iqa.baselines import gsa
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()  # 144 x 144 x 4 MS, 576 x 576 PAN, 11-bit DN, sensor unknown
    >>> r = evaluate_full(gsa(ms, pan, ratio=4), ms, pan, sensor="none", ratio=4, bits=11)
    >>> {k: round(v, 4) for k, v in r.items() if k != "protocol"}
    {'D_lambda': 0.0469, 'D_s': 0.0714, 'QNR': 0.8851, 'D_lambda_K': 0.2118, 'HQNR': 0.7319}
    """
    settings = full_settings(sensor=sensor, ratio=ratio, bits=bits, protocol=protocol, scale=scale,
                             threshold=threshold, nan_policy=nan_policy, indexes=indexes,
                             scale_mismatch=scale_mismatch, upsampled="interp23tap" if ms_exp is None else "given",
                             sam_zero_norm=sam_zero_norm, per_band=per_band, exponents=exponents)
    images = {"fused": fused, "ms": ms, "pan": pan, **({} if ms_exp is None else {"ms_exp": ms_exp})}
    return evaluate(images, settings, tiled=tiled, layout=layout, backend=backend, maps=maps, maps_to=maps_to)


def _full_in_memory(fused: object, ms: object, pan: object, settings: FullSettings, *,
                    ms_exp: object = None, shared: dict[str, Any] | None = None,
                    sink: MapSink | None = None) -> dict[str, Any]:
    """One in-memory image at full resolution; ``shared`` keeps the sensor-independent work (checked
    inputs, the images and statistics that read no MTF) between the sensors of :func:`sensor_sensitivity`."""
    shared = {} if shared is None else shared
    if "inputs" in shared:  # checked for an earlier sensor: only the sensor's band count is new
        fus, ms_a, pan_a = shared["inputs"]
        ms_gnyq = settings.ms_gnyq(fus.shape[2])
    else:
        fus = image_array("fused", fused)
        ms_a = image_array("ms", ms)
        pan_a = pan_bands_array("pan", pan, settings.pan_bands)
        check_pan_ratio(fus, ms_a, pan_a, settings.ratio)
        ms_gnyq = settings.ms_gnyq(fus.shape[2])
        sc = {r: settings.scale_of(r) for r in settings.roles}
        settings.check({r: image_facts(r, a, scale=sc[r]) for r, a in (("fused", fus), ("ms", ms_a), ("pan", pan_a))})
        if sc["fused"] != 1.0 or settings.threshold or fus.dtype != np.float64:
            fus = np.multiply(fus, sc["fused"], dtype=np.float64)  # a scaled float64 copy; read-only otherwise
            if settings.threshold:
                np.clip(fus, 0.0, settings.clip_max, out=fus)
        ms_a = np.multiply(ms_a, sc["ms"], dtype=np.float64)
        pan_a = np.multiply(pan_a, sc["pan"], dtype=np.float64)
        if ms_exp is not None and sc.get("ms_exp", 1.0) != 1.0:
            ms_exp = np.multiply(image_array("ms_exp", ms_exp), sc["ms_exp"], dtype=np.float64)
        shared["inputs"] = (fus, ms_a, pan_a)
    engine = _FULL_ENGINES[settings.protocol.full_engine]
    return engine(fus, ms_a, pan_a, settings, ms_gnyq, ms_exp, shared, sink)


def _toolbox_full(fus: np.ndarray, ms: np.ndarray, pan: np.ndarray, settings: FullSettings,
                  ms_gnyq: tuple[float, ...], ms_exp: object, shared: dict[str, Any],
                  sink: MapSink | None = None) -> dict[str, Any]:
    """The toolbox family: the statistics of the requested indexes by the one full-resolution engine
    (``indexes.full_pass``), the whole image as one window (two passes where an index needs a global fit or
    a map the whole block maps), then the catalogue's finalize."""
    planes = {"fused": np.moveaxis(fus, 2, 0), "ms": np.moveaxis(ms, 2, 0),
              "pan": pan[None] if pan.ndim == 2 else np.moveaxis(pan, 2, 0)}
    if ms_exp is not None:
        planes["exp"] = given_planes("ms_exp", ms_exp, fus.shape)
    names = settings.indexes
    scene = Scene.of(planes, settings.chunk_context(ms_gnyq, fus.shape, maps=sink is not None), cache=shared)
    specs = map_indexes(names, settings.protocol.name) if sink is not None else ()
    sums, maps = whole_image(scene, settings.statistics(), specs)
    values = settings.results(sums, fus.shape[2])
    card = settings.card(ms_gnyq, list(fus.shape))
    if sink is not None:
        own = [i for i in specs if i.name in names]
        card["maps"] = write_maps(sink, map_infos(own, fus.shape[:2], settings.protocol.block_size), maps)
    return {**values, "protocol": card}


def _reprojected_full(fus: np.ndarray, ms: np.ndarray, pan: np.ndarray, settings: FullSettings,
                      ms_gnyq: tuple[float, ...], ms_exp: object, shared: dict[str, Any],
                      sink: MapSink | None = None) -> dict[str, Any]:
    """The reprojected protocol (Scarpa & Ciotola 2022), on the inputs :func:`_full_in_memory` checked."""
    from .reprojected.inputs import ResolvedInputs
    from .reprojected.protocol import evaluate_resolved

    inputs = ResolvedInputs(np.ascontiguousarray(fus), np.ascontiguousarray(ms), np.ascontiguousarray(pan),
                            settings.ratio, ms_gnyq, settings.sensor)
    result = evaluate_resolved(inputs)
    details = result.pop("details", {})
    details.pop("timings_s", None)  # run-dependent; not part of a reproducible card
    card = protocol_card(settings.protocol, **settings.common_card(ms_gnyq, list(fus.shape)), reprojection=details)
    if sink is not None:
        card["maps"] = {}  # the reprojected protocol's indexes have no maps
    return {**{k: float(result[k]) for k in settings.indexes}, "protocol": card}


#: In-memory evaluator of each ``Protocol.full_engine``.
_FULL_ENGINES: dict[str, Callable[..., dict[str, Any]]] = {
    "toolbox": _toolbox_full,
    "reprojected": _reprojected_full,
}


def sensor_sensitivity(
    fused: np.ndarray,
    ms: np.ndarray,
    pan: np.ndarray,
    *,
    sensors: Sequence[str | Sensor],
    protocol: str | Protocol = "toolbox2020",
    ratio: int | None = None,
    bits: int | None = None,
    scale: float = 1.0,
    nan_policy: NanPolicy = "raise",
) -> dict[str, dict[str, Any]]:
    """Full-resolution indexes of one fused image under each sensor's MTF.

    Shows how much a wrong sensor choice moves the numbers: under ``toolbox2020`` D_lambda and D_s
    do not depend on the sensor while D_lambda_K and HQNR do; under ``toolbox2015`` D_s does.
    A sensor that does not apply to the image (another band count, no MTF values for this
    protocol) gets a reason instead of numbers; the others are still evaluated.

    Parameters
    ----------
    fused, ms, pan : ndarray
        As for :func:`evaluate_full`.
    sensors : sequence of str or Sensor
        Sensors to try (e.g. ``"WV3[4band]"`` for 4 bands; the generic ``"none"`` fits any).
    protocol : str or Protocol
        Evaluation protocol (:func:`list_protocols`).
    ratio, bits : int, optional
        Applied to every sensor; when omitted, the sensors' nominal values (which must agree; no
        ``bits`` is needed where none is known).
    scale : float
        Multiplier to DN applied to all three images.
    nan_policy : {"raise", "omit", "propagate"}
        Treatment of constant blocks (see :func:`d_lambda`).

    Returns
    -------
    dict
        ``{sensor name: evaluate_full result}`` in the order given; for a sensor that does not
        apply, ``{"reason": "..."}`` (no index keys).

    Raises
    ------
    InputError
        Problems of the images themselves (they concern every sensor), an unknown sensor name,
        or no common ratio/bits.

    Examples
    --------
    >>> from pansharp_iqa import interp23tap
    >>> from pansharp_iqa.demo_data import load_demo
    >>> ms, pan = load_demo()
    >>> out = sensor_sensitivity(interp23tap(ms, 4), ms, pan, sensors=["QB", "WV2", "none"], ratio=4, bits=11)
    >>> round(out["QB"]["HQNR"], 4), round(out["none"]["HQNR"], 4), out["WV2"]["reason"][:35]
    (0.8676, 0.8683, 'WV2 does not apply: ms has 4 bands,')
    """
    resolved = [resolve_sensor(s) for s in sensors]
    if not resolved:
        raise SettingError("sensors: give at least one sensor name")
    nominal = {attr: {getattr(s, attr) for s in resolved} - {None} for attr in ("ratio", "bits")}
    for attr, given in (("ratio", ratio), ("bits", bits)):
        if given is None and (len(nominal[attr]) > 1 or (attr == "ratio" and not nominal[attr])):
            raise SettingError(
                f"{attr} is required: the sensors' nominal values differ or are unknown ({sorted(nominal[attr])})"
            )
    ratio = ratio if ratio is not None else next(iter(nominal["ratio"]))
    bits = bits if bits is not None else next(iter(nominal["bits"]), None)
    images = {"fused": fused, "ms": ms, "pan": pan}
    shared: dict[str, Any] = {}  # sensor-independent work (checked inputs, EXP, block statistics), done once
    out: dict[str, dict[str, Any]] = {}
    tile_wise = None
    for s in resolved:
        settings = full_settings(sensor=s, ratio=ratio, bits=bits, protocol=protocol, scale=scale,
                                 nan_policy=nan_policy)
        if tile_wise is None:  # the one rule: big or lazy inputs tile-wise, each sensor in bounded memory
            tile_wise = _tile_wise("auto", images, settings, pinned=False)
        try:
            if tile_wise:
                out[s.name] = evaluate(images, settings)
            else:  # in memory, sharing the sensor-independent work between sensors
                out[s.name] = _full_in_memory(fused, ms, pan, settings, shared=shared)
        except SensorMismatchError as exc:
            out[s.name] = {"reason": f"{s.name} does not apply: {exc}"}
    return out

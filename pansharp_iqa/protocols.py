"""Named evaluation protocols: which index definitions and settings produce a table's numbers.

A protocol fixes everything that changes the numbers (definitions, border cut, block size, MTF
sigma form, D_s's low-pass PAN, ...). It is an object that carries its behaviour as named
fields, so that no module compares protocol names: the reduced-resolution pass reads
``protocol.scc_gradient``, D_s reads ``protocol.d_s_low_pass``, the full-resolution entry points
dispatch on ``protocol.full_engine``. Results always carry a card naming the protocol and its
settings (``pansharp_iqa.settings``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np

from .hypercomplex import BlockPrecision
from .indexes.catalog import indexes_of
from .indexes.q2n import Cast, Padding
from .indexes.sam import ZERO_NORM_CONVENTIONS, ZeroNorm
from .mtf import HS_KERNEL, S2_KERNEL, TOOLBOX_KERNEL, MtfKernelSettings, SigmaForm
from .validation import SettingError, check_choice

__all__ = [
    "Protocol", "get_protocol", "list_protocols", "DEFAULT_PROTOCOL",
    "LowPassPan", "LowResTerms", "FullEngine", "SccGradient", "PanBands", "PanDegradation", "LowResCast",
    "EPS_STD_FLOOR",
]

DEFAULT_PROTOCOL = "toolbox2020"

_TOOLBOX2020 = "Vivone et al., IEEE GRSM 9(1), 2021, doi:10.1109/MGRS.2020.3019315 (Pansharpening Toolbox 2020)"
_TOOLBOX2015 = "Vivone et al., IEEE TGRS 53(5), 2015, doi:10.1109/TGRS.2014.2361734 (Pansharpening Toolbox 2015)"
_QNR2008 = "Alparone et al., PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193 (QNR)"
_KHAN2009 = "Khan, Alparone, Chanussot, IEEE TGRS 47(11), 2009 (MTF-based spectral distortion)"
_REPRO2022 = "Scarpa & Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808"
_HS2024 = ("Ciotola, Guarino, Vivone, Poggi, Chanussot, Plaza, Scarpa, 'Hyperspectral Pansharpening: Critical "
           "Review, Tools and Future Perspectives', arXiv 2407.01355, 2024 (code matciotola/"
           "hyperspectral_pansharpening_toolbox 1b2ea9b: Metrics/evaluation.py, metrics_rr.py, metrics_fr.py, "
           "Utils/spectral_tools.py, Utils/interpolator_tools.py, elaborate_PRISMA_images.py)")
_S22025 = ("Ciotola, Guarino, Mazza, Poggi, Scarpa, 'A Comprehensive Benchmarking Framework for Sentinel-2 "
           "Sharpening: Methods, Dataset, and Evaluation Metrics', Remote Sensing 17(12):1983, 2025, "
           "doi:10.3390/rs17121983 (code matciotola/Sentinel2-SR-Toolbox d43e106: Metrics/evaluation.py, "
           "metrics_rr.py, metrics_fr.py, cross_correlation.py, coregistration.py, Utils/spectral_tools.py)")
_GRSM2022 = ("Arienzo, Vivone, Garzelli, Alparone, Chanussot, IEEE GRSM 10(3), 2022, doi:10.1109/MGRS.2022.3170092 "
             "(full-resolution review; the authors' MATLAB code: RQNR, D_s_R, LSR, D_lambda_F, HQNR with maps)")
_PANCOLLECTION = (
    "Efficient-MIF Pansharpening_Hyper_SR_Matlab_Test_Package (github.com/294coder/Efficient-MIF, commit daa5afa): "
    "analysis_ref_batched_images.m, analysis_unref_batched_images.m, quality_assess.m",
    "DLPan-Toolbox 02-Test-toolbox-for-traditional-and-DL(Matlab) (github.com/liangjiandeng/DLPan-Toolbox, "
    "commit a34f884): Tools/indexes_evaluation*.m, Quality_Indices/ (every .m), Tools/genMTF.m",
    "Deng et al., IEEE GRSM 10(3), 2022, doi:10.1109/MGRS.2022.3187652 (PanCollection benchmark)",
)

#: How the full-resolution indexes are computed: the toolbox family (block UIQIs at PAN scale,
#: Khan's D_lambda_K) or the reprojection protocol (:mod:`pansharp_iqa.reprojected`).
FullEngine = Literal["toolbox", "reprojected"]
#: What D_lambda and D_s compare the fused image's block UIQIs with: the EXP-upsampled MS on the
#: same blocks (``"exp"``, toolbox) or the low-resolution MS itself on ``block/ratio`` blocks
#: (``"ms"``, the QNR paper).
LowResTerms = Literal["exp", "ms"]
#: The low-pass PAN of D_s: ``interp23tap(imresize(PAN, 1/ratio))`` (``"exp-imresize"``, toolbox
#: 2020), the PAN filtered with the sensor's PAN MTF (``"pan-mtf"``, toolbox 2015,
#: sensor-dependent) or ``imresize(PAN, 1/ratio)`` at MS scale (``"imresize"``, QNR paper).
LowPassPan = Literal["exp-imresize", "pan-mtf", "imresize"]
#: SCC's gradients: Sobel magnitude of the frame-cropped image (``"magnitude"``, toolbox 2020) or
#: the vertical Sobel response of the whole image (``"vertical"``, toolbox 2015).
SccGradient = Literal["magnitude", "vertical"]
#: What the PAN role holds at full resolution: one band (``"one"``), or the bands of the sensor's
#: ``pan_sensor`` (``"sensor"``: Sentinel-2's four 10 m bands for the 20 m and 60 m groups; one band
#: for a sensor without a ``pan_sensor``).
PanBands = Literal["one", "sensor"]
#: How the Wald degradation shrinks the PAN (:func:`pansharp_iqa.wald_degrade`).
PanDegradation = Literal["imresize", "mtf-decimate"]
#: Integer cast of the degraded images (:func:`pansharp_iqa.wald_degrade`).
LowResCast = Literal["none", "uint16-truncate"]
#: The toolbox's replacement of a zero block standard deviation in Q2n (machine epsilon).
EPS_STD_FLOOR = float(np.finfo(np.float64).eps)


@dataclasses.dataclass(frozen=True)
class Protocol:
    """Definition of a named protocol, with the behaviour the evaluation code reads from it.

    Parameters
    ----------
    name : str
        Registry name (``"toolbox2020"``, ...), recorded in every card.
    description : str
        What it computes and how it differs from the default.
    sources : tuple of str
        The publications and code it follows.
    reduced_indexes : tuple of str
        Keys returned by ``evaluate_reduced`` (empty: no reduced-resolution part). Left out, the
        indexes the catalogue (:mod:`pansharp_iqa.indexes.catalog`) declares for this protocol's
        name.
    full_indexes : tuple of str
        Keys returned by ``evaluate_full`` (from the catalogue when left out).
    full_engine : {"toolbox", "reprojected"}
        Which full-resolution evaluator computes ``full_indexes``.
    low_res_terms : {"exp", "ms"}
        Reference terms of D_lambda and D_s (see :data:`LowResTerms`).
    d_s_low_pass : {"exp-imresize", "pan-mtf", "imresize"}
        D_s's low-pass PAN (see :data:`LowPassPan`).
    scc_gradient : {"magnitude", "vertical"}
        SCC's gradients (see :data:`SccGradient`).
    mtf : MtfKernelSettings
        How the MTF kernels are designed (:class:`~pansharp_iqa.mtf.MtfKernelSettings`: size, Gaussian
        width form, clip and renormalisation with its ratio exceptions, tap precision): the fused
        image's filter at full resolution, the PAN MTF of ``d_s_low_pass="pan-mtf"`` and the Wald
        degradation of :func:`pansharp_iqa.wald_degrade` under this protocol. Its ``sigma_form``
        (``"2020"``: N-1; ``"2015"``: N) is :attr:`sigma_form`.
    dim_cut : tuple of int or None
        Rows/columns cut (leading, trailing) before the reduced-resolution indexes.
    block_size : int
        Block side of Q2n/Q/QNR (pixels).
    rr_fused_clip : float or None
        The fused image is clipped to ``[0, rr_fused_clip]`` before the reduced-resolution indexes
        (the HS/S2 code's ``clip(F, 0, 2**16)``; the reference is not clipped); None: no clip (the
        toolbox's optional ``threshold`` is a run setting).
    q2n_cast : {"uint16", "int16-truncated", "round-half-even", "none"}
        Q2n's integer cast of both images (:func:`pansharp_iqa.q2n`'s ``cast``).
    q2n_padding : {"symmetric", "reflect", "symmetric-swapped"}
        Q2n's extension of an image that is not whole blocks (``padding``).
    q2n_std_floor : float
        Replacement for a zero block standard deviation in Q2n (``std_floor``).
    q2n_precision : {"float64", "float32"}
        Precision of Q2n's block values (``block_precision``): the HS/S2 code stores them in float32.
    sam_zero_norm : {"exclude", "zero", "right_angle", "nan"}
        SAM's pixels where a spectrum has zero norm (:func:`pansharp_iqa.sam`'s ``zero_norm``): left
        out of the mean (MATLAB toolbox), counted as 0 degrees (HS/S2 code, R-SAM), as 90 degrees,
        or a NaN result.
    fr_decimation_start : int or None
        Full resolution, HS/S2 protocols: the first row/column of the MTF-filtered fused image kept
        by the decimation to MS scale (``x[start::ratio]``); None: the protocol has no such image.
    fr_half_shift : bool
        The filtered fused image is shifted by half a fine pixel along both axes before that
        decimation (S2: ``fineshift(x, 1, 1)``, zero outside the image).
    d_rho_half_width_rule : {"ceil-half", "floor-half-min4"}
        D_rho's window half width from the ratio: ``ceil(ratio / 2)`` (the reprojected protocol's code) or
        ``max(4, ratio) // 2`` (Sentinel-2 code: 2 at ratio 2, 3 at ratio 6).
    pan_bands : {"one", "sensor"}
        What the PAN role holds (:data:`PanBands`): Sentinel-2's 10 m bands under ``"sensor"``.
    degradation_pan : {"imresize", "mtf-decimate"}
        How :func:`pansharp_iqa.wald_degrade` shrinks the PAN under this protocol.
    degradation_start : int or None
        Its decimation start (None: ``ratio // 2``, the toolbox's offset and PyTorch's
        ``nearest-exact``).
    degradation_cast : {"none", "uint16-truncate"}
        Its integer cast of the degraded images.
    overrides : tuple of str
        The settings changed from the registered protocol of this name (:meth:`with_settings`),
        recorded in the card.
    """

    name: str
    description: str
    sources: tuple[str, ...]
    reduced_indexes: tuple[str, ...] = None  # type: ignore[assignment]  # filled in __post_init__
    full_indexes: tuple[str, ...] = None  # type: ignore[assignment]
    full_engine: FullEngine = "toolbox"
    low_res_terms: LowResTerms = "exp"
    d_s_low_pass: LowPassPan = "exp-imresize"
    scc_gradient: SccGradient = "magnitude"
    mtf: MtfKernelSettings = TOOLBOX_KERNEL
    dim_cut: tuple[int, int] | None = (20, 21)
    block_size: int = 32
    rr_fused_clip: float | None = None
    q2n_cast: Cast = "uint16"
    q2n_padding: Padding = "symmetric"
    q2n_std_floor: float = EPS_STD_FLOOR
    q2n_precision: BlockPrecision = "float64"
    sam_zero_norm: ZeroNorm = "exclude"
    fr_decimation_start: int | None = None
    fr_half_shift: bool = False
    d_rho_half_width_rule: str = "ceil-half"
    pan_bands: PanBands = "one"
    degradation_pan: PanDegradation = "imresize"
    degradation_start: int | None = None
    degradation_cast: LowResCast = "none"
    overrides: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for res in ("reduced", "full"):
            if getattr(self, f"{res}_indexes") is None:
                object.__setattr__(self, f"{res}_indexes", tuple(i.name for i in indexes_of(self.name, res)))
        for field, choices in _CHOICES.items():
            check_choice(field, getattr(self, field), choices)
        if not isinstance(self.mtf, MtfKernelSettings):
            raise SettingError(f"mtf must be an MtfKernelSettings (pansharp_iqa.mtf), got {self.mtf!r}")
        if self.sam_zero_norm == "count":  # the older name of "zero"
            object.__setattr__(self, "sam_zero_norm", "zero")

    @property
    def sigma_form(self) -> SigmaForm:
        """The MTF Gaussian width form of its ``mtf`` kernel settings (``"2020"``: N-1; ``"2015"``: N)."""
        return self.mtf.sigma_form

    def with_settings(self, **changes: Any) -> Protocol:
        """This protocol with some settings changed (validated), the changed names recorded in its ``overrides``.

        Parameters
        ----------
        **changes
            Field names of :class:`Protocol` and their values (``name``, ``description``, ``sources``
            and the tables are fixed).

        Returns
        -------
        Protocol

        Raises
        ------
        SettingError
            An unknown or fixed field, or a value out of its choices.

        Examples
        --------
        >>> p = get_protocol("hyperspectral2024").with_settings(q2n_cast="uint16", sam_zero_norm="exclude")
        >>> p.q2n_cast, p.overrides
        ('uint16', ('q2n_cast', 'sam_zero_norm'))
        """
        fixed = {"name", "description", "sources", "reduced_indexes", "full_indexes", "full_engine", "overrides"}
        known = {f.name for f in dataclasses.fields(self)} - fixed
        bad = sorted(set(changes) - known)
        if bad:
            raise SettingError(f"protocol settings: unknown or fixed {', '.join(map(repr, bad))}; the settings a "
                               f"protocol may change: {', '.join(sorted(known))}")
        changed = tuple(k for k, v in changes.items() if getattr(self, k) != v)
        if not changed:
            return self
        return dataclasses.replace(self, **changes, overrides=tuple(dict.fromkeys((*self.overrides, *changed))))

    @property
    def khan(self) -> bool:
        """Whether the full-resolution table has Khan's D_lambda_K (and HQNR)."""
        return "D_lambda_K" in self.full_indexes

    @property
    def uses_exp(self) -> bool:
        """Whether its full-resolution indexes use the 23-tap EXP (then the ratio is a power of two)."""
        return self.full_engine == "toolbox"

    @property
    def d_s_uses_sensor(self) -> bool:
        """Whether D_s depends on the sensor (its low-pass PAN uses the sensor's PAN MTF)."""
        return self.d_s_low_pass == "pan-mtf"

    @property
    def low_res_block(self) -> str:
        """How the low-resolution block side relates to ``block_size`` (for messages)."""
        return "block_size / ratio" if self.low_res_terms == "ms" else "block_size"

    def indexes(self, resolution: str) -> tuple[str, ...]:
        """The protocol's index keys at ``"reduced"`` or ``"full"`` resolution.

        Parameters
        ----------
        resolution : {"reduced", "full"}
            Which table.

        Returns
        -------
        tuple of str

        Examples
        --------
        >>> get_protocol("toolbox2015").indexes("full")
        ('D_lambda', 'D_s', 'QNR')
        """
        return self.reduced_indexes if resolution == "reduced" else self.full_indexes

    def settings(self) -> dict:
        """JSON-serialisable settings for the provenance card.

        ``fr_variant`` and ``scc_variant`` are the names earlier releases wrote (kept so that
        readers of older cards keep working); the named behaviour fields say what they mean.
        """
        return {
            "fr_variant": self.name,
            "scc_variant": "2020" if self.scc_gradient == "magnitude" else "2015",
            "full_engine": self.full_engine,
            "low_res_terms": self.low_res_terms,
            "d_s_low_pass": self.d_s_low_pass,
            "scc_gradient": self.scc_gradient,
            "mtf_sigma_form": self.sigma_form,
            "dim_cut": list(self.dim_cut) if self.dim_cut else None,
            "block_size": self.block_size,
            "sources": list(self.sources),
            **self.named_settings(),
        }

    def named_settings(self) -> dict[str, Any]:
        """The settings of the HS/S2 generation (MTF kernel design, Q2n, SAM, full-resolution decimation, D_rho,
        degradation) as card entries; the changed ones under ``"overrides"``."""
        out: dict[str, Any] = {
            "mtf_kernel": self.mtf.to_dict(),
            "rr_fused_clip": self.rr_fused_clip,
            "q2n_cast": self.q2n_cast,
            "q2n_padding": self.q2n_padding,
            "q2n_std_floor": self.q2n_std_floor,
            "q2n_precision": self.q2n_precision,
            "sam_zero_norm": self.sam_zero_norm,
            "fr_decimation_start": self.fr_decimation_start,
            "fr_half_shift": self.fr_half_shift,
            "d_rho_half_width_rule": self.d_rho_half_width_rule,
            "pan_bands": self.pan_bands,
            "degradation": {"pan": self.degradation_pan, "start": self.degradation_start,
                            "cast": self.degradation_cast},
        }
        if self.overrides:
            out["overrides"] = {k: out.get(k, getattr(self, k)) if k != "mtf" else out["mtf_kernel"]
                                for k in self.overrides}
        return out


#: The choices of the protocol fields that take one of a few values.
_CHOICES: dict[str, tuple[Any, ...]] = {
    "q2n_cast": ("uint16", "int16-truncated", "round-half-even", "none"),
    "q2n_padding": ("symmetric", "reflect", "symmetric-swapped"),
    "q2n_precision": ("float64", "float32"),
    "sam_zero_norm": ZERO_NORM_CONVENTIONS,
    "d_rho_half_width_rule": ("ceil-half", "floor-half-min4"),
    "pan_bands": ("one", "sensor"),
    "degradation_pan": ("imresize", "mtf-decimate"),
    "degradation_cast": ("none", "uint16-truncate"),
}

_PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol(
            name="toolbox2020",
            description=(
                "Exact definitions of the 2020 Pansharpening Toolbox: RR indexes after a 20/21-pixel "
                "border cut (Q2n with uint16 cast, Q_avg on a 32x32 sliding window, SAM, ERGAS, SCC "
                "on Sobel magnitudes); FR: D_lambda and D_s against the EXP-upsampled MS, D_s's "
                "low-pass PAN = interp23tap(imresize(PAN, 1/ratio)), Khan's D_lambda_K at PAN scale, "
                "QNR and HQNR."
            ),
            sources=(_TOOLBOX2020, _QNR2008, _KHAN2009),
        ),
        Protocol(
            name="toolbox2015",
            description=(
                "The 2015 toolbox (TGRS 2015 critical comparison): MTF sigma with N instead of N-1; "
                "D_s's low-pass PAN is the PAN filtered with the sensor's PAN MTF (sensor-dependent); "
                "SCC on vertical Sobel responses of the whole image; the FR table is D_lambda, D_s, "
                "QNR (no HQNR); the generic sensor uses GNyq 0.15 per band."
            ),
            sources=(_TOOLBOX2015, _QNR2008),
            d_s_low_pass="pan-mtf",
            scc_gradient="vertical",
            mtf=MtfKernelSettings(sigma_form="2015"),
        ),
        Protocol(
            name="qnr-paper",
            description=(
                "The original QNR of Alparone et al. 2008 (toolbox flag_orig_paper = 1): D_lambda "
                "compares fused band pairs (32x32 blocks) with low-resolution MS band pairs on "
                "(32/ratio)-pixel blocks; D_s compares Q(F_b, PAN) with Q(MS_b, imresize(PAN, 1/ratio)) "
                "on (32/ratio)-pixel blocks; everything else as toolbox2020 (HQNR uses this D_s)."
            ),
            sources=(_QNR2008, _TOOLBOX2020),
            low_res_terms="ms",
            d_s_low_pass="imresize",
        ),
        Protocol(
            name="reprojected2022",
            description=(
                "Reprojection protocol of Scarpa & Ciotola 2022: the fused image is filtered with the "
                "sensor's MTF (their kernel: column Kaiser window, clipped, sum 1), co-registered per "
                "band by an integer phase search and decimated to MS scale, then compared with the MS "
                "(R-Q2n, R-Q, R-SAM, R-ERGAS); D_rho is a local-correlation spatial index against the "
                "PAN. Computed in float64. Full resolution only."
            ),
            sources=(_REPRO2022,),
            full_engine="reprojected",
            dim_cut=None,
        ),
        Protocol(
            name="pancollection",
            description=(
                "PanCollection / DLPan-Toolbox MATLAB evaluation (the pancollection-<sensor> presets): toolbox 2020 "
                "definitions with no border cut (flag_cut_bounds = 0); RR: Q2n, Q_avg, SAM, ERGAS, SCC, MPSNR "
                "and SSIM (band means, peak 2^bits - 1); FR: D_s, D_lambda_K and HQNR (flagQNR = 0), 32-pixel "
                "blocks, the file's lms as the upsampled MS."
            ),
            sources=_PANCOLLECTION,
            dim_cut=None,
        ),
        Protocol(
            name="hyperspectral2024",
            description=(
                "Hyperspectral pansharpening benchmark (Ciotola et al. 2024; PRISMA, ratio 6): RR: ERGAS, SAM and Q2n "
                "after a 10/11-pixel border cut with the fused image clipped to [0, 2^16]; Q2n with round-half-even "
                "integers (no clip), bands zero-padded to a power of two, symmetric block padding (its amounts "
                "swapped between the axes) and float32 block values; SAM counts zero-norm pixels as 0 degrees. FR: "
                "D_lambda = 1 - Q2n(HS, MTF(fused)[3::6, 3::6]) at the HS scale (raw ratio-6 kernels, float32 "
                "taps), D_sR = 1 - R^2 of the PAN regressed on the fused bands without intercept, QNR = "
                "(1 - D_lambda)(1 - D_sR). Wald degradation: HS and PAN MTF-filtered, decimated from pixel "
                "ratio//2, truncated to uint16."
            ),
            sources=(_HS2024,),
            mtf=HS_KERNEL,
            dim_cut=(10, 11),
            rr_fused_clip=65536.0,
            q2n_cast="round-half-even",
            q2n_padding="symmetric-swapped",
            q2n_std_floor=1e-10,
            q2n_precision="float32",
            sam_zero_norm="zero",
            fr_decimation_start=3,
            degradation_pan="mtf-decimate",
            degradation_cast="uint16-truncate",
        ),
        Protocol(
            name="sentinel2-2025",
            description=(
                "Sentinel-2 sharpening benchmark (Ciotola et al. 2025; 20 m -> 10 m at ratio 2, 60 m -> 10 m at ratio "
                "6; the four 10 m bands in the PAN's place): RR as hyperspectral2024 (ERGAS, SAM, Q2n; 10/11 cut, "
                "clip to [0, 2^16]). FR: the fused image MTF-filtered (per-band S2 kernels: clipped and "
                "renormalised except at ratio 6), shifted by half a pixel (fineshift, zero borders) and decimated "
                "[1::ratio]; D_lambda = 1 - Q2n against the low-resolution bands, R-ERGAS and R-SAM against them; "
                "D_rho = mean 1 - max over the 10 m bands of the local correlation (half width max(4, ratio)//2)."
            ),
            sources=(_S22025,),
            mtf=S2_KERNEL,
            dim_cut=(10, 11),
            rr_fused_clip=65536.0,
            q2n_cast="round-half-even",
            q2n_padding="symmetric-swapped",
            q2n_std_floor=1e-10,
            q2n_precision="float32",
            sam_zero_norm="zero",
            fr_decimation_start=1,
            fr_half_shift=True,
            d_rho_half_width_rule="floor-half-min4",
            pan_bands="sensor",
            degradation_pan="mtf-decimate",
        ),
        Protocol(
            name="grsm2022",
            description=(
                "Full-resolution indexes of the GRSM 2022 review's code (Arienzo et al.): HQNR, Khan's D_lambda_F "
                "(= D_lambda_K), the regression-based D_s_R (PAN regressed on the fused bands, residual variance "
                "over PAN variance) and RQNR = (1 - D_lambda_F)^alpha (1 - D_s_R)^beta, each with its quality map; "
                "toolbox 2020 definitions otherwise (32-pixel blocks, EXP, 2020 MTF sigma form); exponents as the "
                "code's get_alpha_beta (the exponents setting; unitary (1, 1) by default). Full resolution only."
            ),
            sources=(_GRSM2022, _TOOLBOX2020, _KHAN2009),
            dim_cut=None,
        ),
    )
}


def list_protocols() -> list[str]:
    """Names of the available protocols (``"toolbox2020"`` is the default).

    Returns
    -------
    list of str

    Examples
    --------
    >>> list_protocols()  # doctest: +NORMALIZE_WHITESPACE
    ['toolbox2020', 'toolbox2015', 'qnr-paper', 'reprojected2022', 'pancollection',
     'hyperspectral2024', 'sentinel2-2025', 'grsm2022']
    """
    return list(_PROTOCOLS)


def get_protocol(name: str | Protocol) -> Protocol:
    """Look a protocol up by name (case-insensitive), or pass a :class:`Protocol` through.

    Parameters
    ----------
    name : str or Protocol
        A registered name (:func:`list_protocols`), or a protocol object (returned as is).

    Returns
    -------
    Protocol

    Raises
    ------
    SettingError
        Unknown name; the message lists the known ones.

    Examples
    --------
    >>> get_protocol("TOOLBOX2015").scc_gradient
    'vertical'
    """
    if isinstance(name, Protocol):
        return name
    key = str(name).strip().lower() if name is not None else ""
    if key not in _PROTOCOLS:
        raise SettingError(f"unknown protocol {name!r}; known protocols: {', '.join(_PROTOCOLS)}")
    return _PROTOCOLS[key]

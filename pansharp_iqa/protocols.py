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
from typing import Literal

from .indexes.catalog import indexes_of
from .mtf import SigmaForm
from .validation import SettingError

__all__ = [
    "Protocol", "get_protocol", "list_protocols", "DEFAULT_PROTOCOL",
    "LowPassPan", "LowResTerms", "FullEngine", "SccGradient",
]

DEFAULT_PROTOCOL = "toolbox2020"

_TOOLBOX2020 = "Vivone et al., IEEE GRSM 9(1), 2021, doi:10.1109/MGRS.2020.3019315 (Pansharpening Toolbox 2020)"
_TOOLBOX2015 = "Vivone et al., IEEE TGRS 53(5), 2015, doi:10.1109/TGRS.2014.2361734 (Pansharpening Toolbox 2015)"
_QNR2008 = "Alparone et al., PE&RS 74(2), 2008, doi:10.14358/PERS.74.2.193 (QNR)"
_KHAN2009 = "Khan, Alparone, Chanussot, IEEE TGRS 47(11), 2009 (MTF-based spectral distortion)"
_REPRO2022 = "Scarpa & Ciotola, Remote Sensing 14(8):1808, 2022, doi:10.3390/rs14081808"
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
    sigma_form : {"2020", "2015"}
        MTF Gaussian width form (``"2020"``: N-1; ``"2015"``: N).
    dim_cut : tuple of int or None
        Rows/columns cut (leading, trailing) before the reduced-resolution indexes.
    block_size : int
        Block side of Q2n/Q/QNR (pixels).
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
    sigma_form: SigmaForm = "2020"
    dim_cut: tuple[int, int] | None = (20, 21)
    block_size: int = 32

    def __post_init__(self) -> None:
        for res in ("reduced", "full"):
            if getattr(self, f"{res}_indexes") is None:
                object.__setattr__(self, f"{res}_indexes", tuple(i.name for i in indexes_of(self.name, res)))

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
            sigma_form="2015",
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
    >>> list_protocols()
    ['toolbox2020', 'toolbox2015', 'qnr-paper', 'reprojected2022', 'pancollection', 'grsm2022']
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

"""Reprojected full-resolution quality protocol (``"reprojected2022"``).

G. Scarpa, M. Ciotola, "Full-Resolution Quality Assessment for Pansharpening", Remote Sensing
14(8):1808, 2022, doi:10.3390/rs14081808. Reimplemented in float64 from a written description of the
reference code's behaviour (no code copied); see ``docs/reprojected.md``.

Public API
----------
- :func:`evaluate_reprojected` -- all indexes in one pass (R-Q2n, R-Q, R-SAM, R-ERGAS, D_rho).
- :func:`r_q2n`, :func:`r_q`, :func:`r_sam`, :func:`r_ergas`, :func:`d_rho`, :func:`d_lambda_k_ms`.
- :func:`coregister` (per-band shifts), :func:`reproject`, :func:`reprojection_kernel`, :func:`reprojection_kernels`,
  :func:`local_cross_correlation`, :func:`reprojected_values` (the R-indexes of a reprojected image:
  the package's Q2n, Q, SAM and ERGAS with the protocol's conventions). The former MS-scale twins
  ``q2n_index``, ``uiqi_index``, ``sam_index``, ``ergas_index`` are deprecated aliases of
  ``q2n(cast="int16-truncated", padding="reflect")``, ``q_index(windows="edge-extended")``,
  ``sam(zero_norm="zero")`` and ``ergas``.
"""

from __future__ import annotations

from .coregistration import coregister, phase_correlations, search_window_for
from .correlation import box_sum, local_cross_correlation
from .filtering import filter_replicate, reproject
from .indexes import (
    d_lambda_k_ms,
    d_rho,
    ergas_index,
    q2n_index,
    r_ergas,
    r_q,
    r_q2n,
    r_sam,
    reprojected_image,
    reprojected_values,
    sam_index,
    uiqi_index,
)
from .kernels import kaiser_window, reprojection_kernel, reprojection_kernels
from .protocol import INDEX_NAMES, PROTOCOL_NAME, SETTINGS, evaluate_reprojected

__all__ = [
    "INDEX_NAMES",
    "PROTOCOL_NAME",
    "SETTINGS",
    "box_sum",
    "coregister",
    "d_lambda_k_ms",
    "d_rho",
    "ergas_index",
    "evaluate_reprojected",
    "filter_replicate",
    "kaiser_window",
    "local_cross_correlation",
    "phase_correlations",
    "q2n_index",
    "r_ergas",
    "r_q",
    "r_q2n",
    "r_sam",
    "reproject",
    "reprojected_image",
    "reprojected_values",
    "reprojection_kernel",
    "reprojection_kernels",
    "sam_index",
    "search_window_for",
    "uiqi_index",
]

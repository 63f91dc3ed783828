"""pansharp_iqa: correct, sensor-aware and reproducible pansharpening quality indexes.

The definitions are those of the reference MATLAB Pansharpening Toolbox (Vivone et al., IEEE GRSM
2021, doi:10.1109/MGRS.2020.3019315) unless a named protocol says otherwise; every result carries a
provenance card. MindSpore (NLRNet) lives in the optional ``pansharp_iqa.nlrnet`` subpackage and is
never imported here.
"""

from typing import Any

from ._version import __version__
from .degradation import decimate, wald_degrade
from .evaluation import evaluate, evaluate_full, evaluate_reduced, protocol_card, sensor_sensitivity
from .indexes import ConstantBlockError, cc, ergas, psnr, q2n, q_index, sam, scc
from .indexes.catalog import Index, get_index, index_names
from .misregistration import misregistration_sensitivity, shift_ms
from .mtf import mtf_filter, mtf_filter_sensor, mtf_kernel
from .no_reference import d_lambda, d_lambda_k, d_s, hqnr, qnr
from .protocols import Protocol, get_protocol, list_protocols
from .resample import imresize, interp23tap
from .rules import Declarations, rule_table
from .sensors import Sensor, UnknownSensorError, get_sensor, list_sensors, resolve_sensor
from .settings import full_settings, reduced_settings
from .validation import InputError


def __getattr__(name: str) -> Any:
    # reprojection-protocol functions, imported on first use (keeps `import pansharp_iqa` light)
    if name in _REPROJECTED:
        from . import reprojected

        return getattr(reprojected, name)
    if name in _TENSOR:
        from .tensor import metrics

        return getattr(metrics, name)
    if name in _PRESETS:
        from . import presets

        return getattr(presets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_TENSOR = ("ReducedMetrics", "FullMetrics")
_PRESETS = ("list_presets", "get_preset", "Preset")
_REPROJECTED = ("r_q2n", "r_q", "r_sam", "r_ergas", "d_rho", "d_lambda_k_ms", "coregister", "evaluate_reprojected")

__all__ = [
    "__version__",
    "Sensor", "UnknownSensorError", "get_sensor", "list_sensors", "resolve_sensor",
    "mtf_kernel", "mtf_filter", "mtf_filter_sensor",
    "interp23tap", "imresize", "wald_degrade", "decimate",
    "q2n", "q_index", "sam", "ergas", "scc", "psnr", "cc",
    "d_lambda", "d_s", "qnr", "d_lambda_k", "hqnr",
    "evaluate", "evaluate_reduced", "evaluate_full", "sensor_sensitivity", "misregistration_sensitivity", "shift_ms",
    "protocol_card", "reduced_settings",
    "full_settings", "Declarations", "rule_table",
    "Protocol", "get_protocol", "list_protocols", "Index", "get_index", "index_names",
    "InputError", "ConstantBlockError",
    *_REPROJECTED, *_TENSOR, *_PRESETS,
]

"""Process-level MindSpore setup: CPU ISA work-around, device and execution mode.

Everything that must happen *before* ``import mindspore`` lives here (Lei et al., IEEE TGRS 60,
2022, doi:10.1109/TGRS.2021.3067097 is the model; this module is plumbing).
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["ensure_cpu_isa", "configure", "require_device", "device_available",
           "silence_deprecations", "DEVICES", "MODES"]

log = logging.getLogger("pansharp_iqa.nlrnet")

DEVICES = ("CPU", "GPU", "Ascend")
MODES = ("graph", "pynative")

_ISA_VAR = "ONEDNN_MAX_CPU_ISA"


def ensure_cpu_isa(value: str = "AVX2") -> str | None:
    """Cap oneDNN's CPU instruction set unless the user chose one."""
    if _ISA_VAR in os.environ:
        return None
    os.environ[_ISA_VAR] = value
    if "mindspore" in sys.modules:
        log.warning(
            "%s set to %s after mindspore was imported: it may not take effect", _ISA_VAR, value
        )
    return value


class _DropLines(logging.Filter):
    """Drop MindSpore log records whose message contains one of ``needles``."""

    def __init__(self, needles: tuple[str, ...]) -> None:
        super().__init__()
        self.needles = needles

    def filter(self, record: logging.LogRecord) -> bool:  # noqa: A003
        text = record.getMessage()
        return not any(n in text for n in self.needles)


#: MindSpore log lines that are noise for NLRNet users: ``nn.Adam`` builds the deprecated
#: ``FusedSparseAdam`` primitive (never used for dense gradients) and logs it on every build
_NOISE = ("'FusedSparseAdam' is deprecated",)


def _mindspore_logger() -> logging.Logger:
    # MindSpore 2.10 logs through its own logger "ME.mindspore.log.<pid>" (propagate=False), not
    # through Python warnings; getLogger returns (or pre-creates) that same object.
    return logging.getLogger(f"ME.mindspore.log.{os.getpid()}")


def silence_deprecations() -> None:
    """Drop the ``FusedSparseAdam`` deprecation line MindSpore logs whenever ``nn.Adam`` is built."""
    logger = _mindspore_logger()
    if not any(isinstance(f, _DropLines) for f in logger.filters):
        logger.addFilter(_DropLines(_NOISE))


def device_available(device: str) -> bool:
    """Whether this MindSpore installation can run on ``device`` (no device is initialised)."""
    if device == "CPU":
        return True
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    import mindspore as ms

    logger = _mindspore_logger()
    quiet = logging.Filter("nothing")  # a filter that passes no record
    logger.addFilter(quiet)
    try:
        return bool(ms.hal.is_available(device))
    finally:
        logger.removeFilter(quiet)


def require_device(device: str) -> None:
    """Raise a one-line ``ValueError`` unless MindSpore can run on ``device``."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    if not device_available(device):
        import mindspore as ms

        raise ValueError(
            f"--device {device}: this MindSpore {ms.__version__} installation cannot use {device} "
            f"(no working {device} plugin/driver found); install MindSpore's {device} build with its "
            "drivers (see docs/nlrnet.md) or use --device CPU")


def configure(device: str = "CPU", mode: str = "graph", *, seed: int | None = None,
              device_checked: bool = False) -> None:
    """Select the MindSpore device target and execution mode for this process."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if not device_checked:
        require_device(device)
    if device == "CPU":
        set_now = ensure_cpu_isa()
        if set_now:
            log.info("CPU: set %s=%s (oneDNN reference-kernel work-around, ~100x faster convs)",
                     _ISA_VAR, set_now)
    import mindspore as ms

    silence_deprecations()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        ms.set_device(device)
    except RuntimeError:
        # the runtime already started (a second configure() in one process): fine if unchanged
        if ms.get_context("device_target") != device:
            raise
    if seed is not None:
        ms.set_seed(int(seed))

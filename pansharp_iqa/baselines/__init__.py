"""Classical pansharpening baselines, to put a network's numbers in context.

Each is ``method(ms, pan, *, sensor, ratio, out=None, strip_rows=None) -> fused`` with ``ms`` the
low-resolution MS ``(h, w, B)`` and ``pan`` the PAN ``(ratio*h, ratio*w)``, both in digital
numbers; the result is ``(ratio*h, ratio*w, B)`` float64 in DN. Each equals the code of the 2020
Pansharpening Toolbox (Vivone et al., IEEE GRSM 9(1), 2021, doi:10.1109/MGRS.2020.3019315) to
rounding, checked against that code run under GNU Octave (``tests/baselines``; the deliberate
differences are listed in ``docs/cli.md``), and runs strip by strip in bounded memory
(``strips``), from in-memory arrays or lazy images, into any row-sliceable ``out``:

* ``EXP`` -- 23-tap upsampling, :func:`.exp.exp`;
* ``BT-H`` -- Brovey with haze correction, :func:`.bt_h.bt_h`;
* ``GSA`` -- adaptive Gram-Schmidt, :func:`.gsa.gsa`;
* ``MTF-GLP-HPM`` -- MTF-matched GLP with high-pass modulation, :func:`.mtf_glp_hpm.mtf_glp_hpm`.

``npy_output.write_baseline`` writes one straight into a ``.npy`` file, atomically.

Example, on the bundled real scene (144 x 144 x 4 MS, 576 x 576 PAN, 11-bit DN):

>>> from pansharp_iqa.demo_data import load_demo
>>> ms, pan = load_demo()
>>> {name: fuse(ms, pan, sensor="none", ratio=4).shape for name, fuse in BASELINES.items()}
{'EXP': (576, 576, 4), 'BT-H': (576, 576, 4), 'GSA': (576, 576, 4), 'MTF-GLP-HPM': (576, 576, 4)}
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .bt_h import bt_h
from .exp import exp
from .gsa import gsa
from .mtf_glp_hpm import mtf_glp_hpm

__all__ = ["BASELINES", "bt_h", "exp", "gsa", "list_baselines", "mtf_glp_hpm"]

Baseline = Callable[..., np.ndarray]

#: Name (as used for result folders) -> fusion function.
BASELINES: dict[str, Baseline] = {
    "EXP": exp,
    "BT-H": bt_h,
    "GSA": gsa,
    "MTF-GLP-HPM": mtf_glp_hpm,
}


def list_baselines() -> list[str]:
    """Names of the available baselines, in report order."""
    return list(BASELINES)

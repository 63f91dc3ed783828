"""``import pansharp_iqa`` stays light: heavy modules are loaded where they are used (issue 28)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _loaded_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_and_cli_start_do_not_load_scipy_sparse():
    # scipy.sparse (about 0.2 s) serves only imresize's weight matrices
    assert _loaded_after("import pansharp_iqa", ("scipy.sparse",)) == []
    assert _loaded_after("import pansharp_iqa.cli.main", ("scipy.sparse",)) == []
    # its legitimate neighbour: the first imresize loads it and works
    first_use = "import numpy as np, pansharp_iqa as pi; assert pi.imresize(np.ones((8, 8)), 0.5).shape == (4, 4)"
    assert _loaded_after(first_use, ("scipy.sparse",)) == ["scipy.sparse"]

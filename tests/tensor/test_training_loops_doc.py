"""The examples of docs/training_loops.md run: each section's ``python`` blocks, in order, in one
namespace, where the section's framework is installed."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "training_loops.md"

#: section heading -> the packages its examples need
SECTIONS = {
    "In MindSpore `Model.train` / `Model.eval`": ("mindspore",),
}


def _blocks(heading: str) -> list[str]:
    """The ``python`` code blocks under ``## heading`` (up to the next ``## ``)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else len(text)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


@pytest.mark.parametrize("heading", list(SECTIONS))
def test_section_examples_run(heading, capsys):
    missing = [n for n in SECTIONS[heading] if importlib.util.find_spec(n) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    if "mindspore" in SECTIONS[heading]:
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore is imported
    blocks = _blocks(heading)
    assert blocks, f"no python example under '## {heading}'"
    namespace: dict = {"__name__": "training_loops_example"}
    for code in blocks:
        exec(compile(code, f"{DOC.name} ({heading})", "exec"), namespace)  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    assert printed.strip(), "the example prints its results"

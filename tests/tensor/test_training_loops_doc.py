"""The examples of docs/training_loops.md run: each section's ``python`` blocks, in order, as one
module, where the section's framework is installed."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "training_loops.md"

#: section heading -> the packages its examples need
SECTIONS = {
    "In a PyTorch training loop": ("torch", "torchmetrics"),
    "In MindSpore `Model.train` / `Model.eval`": ("mindspore",),
    "Evaluating a PanCollection test set": ("h5py",),
    "Full-resolution losses for unsupervised training": ("torch",),
}


def _blocks(heading: str) -> list[str]:
    """The ``python`` code blocks under ``## heading`` (up to the next ``## ``)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else len(text)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


@contextlib.contextmanager
def _default_framework_state(needs: tuple[str, ...]) -> Iterator[None]:
    """Run as a reader's script would: MindSpore in its default (PyNative) mode, whatever mode
    earlier tests left set; restored afterwards. PyTorch on one thread: its OpenMP threads
    spin-wait on a machine whose cores are all busy (the results do not depend on it)."""
    if "torch" in needs:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(threads)
        return
    if "mindspore" not in needs:
        yield
        return
    os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore is imported
    import mindspore as ms

    before = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=before)


@pytest.mark.parametrize("heading", list(SECTIONS))
def test_section_examples_run(heading, tmp_path, monkeypatch, capsys):
    missing = [n for n in SECTIONS[heading] if importlib.util.find_spec(n) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    blocks = _blocks(heading)
    assert blocks, f"no python example under '## {heading}'"
    # a real module, as the reader's script is (MindSpore's graph compiler imports the module of a
    # cell's construct)
    name = "training_loops_" + re.sub(r"\W+", "_", heading).strip("_").lower()
    (tmp_path / f"{name}.py").write_text("\n".join(blocks), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)  # files an example writes stay in the test's folder
    with _default_framework_state(SECTIONS[heading]):
        try:
            importlib.import_module(name)
        finally:
            sys.modules.pop(name, None)
    printed = capsys.readouterr().out
    assert printed.strip(), "the example prints its results"

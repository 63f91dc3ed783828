"""Every docstring example of the package runs and prints what it shows (doctest).

The examples are part of the documentation of each public function; running them here keeps them
true. Modules of the optional NLRNet subpackage are skipped where MindSpore is not installed, and
the framework adapters where their framework is not.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import pansharp_iqa


def _module_names() -> list[str]:
    names = ["pansharp_iqa"]
    for info in pkgutil.walk_packages(pansharp_iqa.__path__, prefix="pansharp_iqa."):
        names.append(info.name)
    return sorted(names)


#: module prefix -> the optional packages its examples need
_NEEDS = {
    "pansharp_iqa.nlrnet": ("mindspore",),
    "pansharp_iqa.tensor.mindspore_adapter": ("mindspore",),
    "pansharp_iqa.torch_": ("torch",),
    "pansharp_iqa.tensor.torchmetrics_adapter": ("torch", "torchmetrics"),
    "pansharp_iqa.tensor.losses": ("torch",),
}


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples(name):
    for prefix, needs in _NEEDS.items():
        missing = [n for n in needs if importlib.util.find_spec(n) is None]
        if name.startswith(prefix) and missing:
            pytest.skip(f"{name} needs {', '.join(missing)}, which is not installed")
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples failed"

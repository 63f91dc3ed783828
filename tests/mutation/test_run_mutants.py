"""The mutation script's own rules (issue 34), on small lists in a temporary folder: a mutant whose
original text is no longer found exactly once stops the script loudly, naming it; a valid list
loads. The real list (``mutants.toml``) is checked by ``run_mutants.py --check`` before a release,
not here: a refactor that moves a mutated line is expected to need a list update."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("run_mutants", HERE / "run_mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_mutants"] = module  # its dataclass needs its module registered
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("run_mutants", None)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1.05\ny = x * 2\nz = x * 2\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    return tmp_path


def entry(original: str, replacement: str = "x = 1.02", test: str = "tests/test_a.py", mid: str = "m") -> str:
    return (f'[[mutant]]\nid = "{mid}"\nfile = "pkg/a.py"\noriginal = "{original}"\nreplacement = "{replacement}"\n'
            f'tests = ["{test}"]\n')


def test_a_valid_list_loads(script, repo):
    (repo / "m.toml").write_text(entry("x = 1.05"))
    [m] = script.load(repo / "m.toml", repo)
    assert (m.id, m.file, m.original, m.replacement, m.tests) == ("m", "pkg/a.py", "x = 1.05", "x = 1.02",
                                                                  ("tests/test_a.py",))


@pytest.mark.parametrize("original, times", [("x = 1.5", 0), ("x * 2", 2)])
def test_an_original_not_found_exactly_once_stops_the_script(script, repo, original, times):
    (repo / "m.toml").write_text(entry("x = 1.05", mid="ok") + entry(original, "x * 3", mid="stale"))
    with pytest.raises(script.ListError, match=rf"\(stale\): pkg/a.py holds the original text .* {times} times"):
        script.load(repo / "m.toml", repo)


def test_a_missing_file_or_test_and_a_no_op_mutant_are_named(script, repo):
    (repo / "m.toml").write_text(entry("x = 1.05", test="tests/test_gone.py", mid="gone")
                                 + entry("x = 1.05", "x = 1.05", mid="noop"))
    with pytest.raises(script.ListError) as exc:
        script.load(repo / "m.toml", repo)
    assert "(gone): test tests/test_gone.py no longer exists" in str(exc.value)
    assert "(noop): original and replacement must be different" in str(exc.value)


def test_the_command_line_exits_2_on_a_stale_list(script, repo, capsys):
    (repo / "m.toml").write_text(entry("x = 9"))
    script.REPO = repo  # the list is read against this folder
    try:
        assert script.main(["--check", "--list", str(repo / "m.toml")]) == 2
    finally:
        script.REPO = HERE.parents[1]
    assert "does not match the code" in capsys.readouterr().err

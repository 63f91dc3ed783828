"""README.md is a first contact (issue 28): its first Python block runs as it stands and prints
what the README shows, it gives the two set-up commands, and its local links lead somewhere."""

from __future__ import annotations

import contextlib
import doctest
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README, re.MULTILINE | re.DOTALL)


def test_first_python_block_runs_as_it_stands_and_prints_what_the_readme_shows():
    code = _blocks("python")[0]
    assert "load_demo()" in code and len(code.strip().splitlines()) <= 15  # the bundled scene, about 10 lines
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})  # noqa: S102 - the README's own code
    shown = _blocks("text")[0]  # the block after "prints"
    checker = doctest.OutputChecker()
    assert checker.check_output(shown, printed.getvalue(), doctest.NORMALIZE_WHITESPACE), printed.getvalue()


def test_the_two_set_up_commands():
    bash = _blocks("bash")
    assert bash[0].strip() == "python3 -m venv .venv && . .venv/bin/activate && pip install . && pansharp-eval demo"
    assert bash[1].strip() == ("python3 -m venv .venv-test && . .venv-test/bin/activate && pip install torch==2.13.0"
                               " && pip install '.[dev,torch]' && pytest")


def test_local_links_lead_to_files():
    targets = {t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", README) if "://" not in t}
    missing = sorted(t for t in targets if not (ROOT / t).exists())
    assert not missing, f"README links to missing files: {missing}"

"""Release files (issue 21): licence, notices, one version source, citation, changelog, and the
documentation site's generators and self-contained check."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

import pansharp_iqa as pi

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _declared_version() -> str:
    text = (ROOT / "pansharp_iqa" / "_version.py").read_text(encoding="utf-8")
    return re.search(r'^__version__\s*=\s*"([^"]+)"$', text, re.MULTILINE).group(1)


def test_licence_is_the_apache_2_text_the_metadata_declares():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text and len(text.splitlines()) > 180
    project = _pyproject()["project"]
    assert project["license"] == "Apache-2.0"
    assert set(project["license-files"]) == {"LICENSE", "NOTICE"}


def test_notice_carries_the_demo_scene_attribution():
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    demo = (ROOT / "pansharp_iqa" / "demo_data" / "NOTICE").read_text(encoding="utf-8")
    for fact in ("CosmiQ", "solaris", "Apache License, Version 2.0", "CC BY-SA 4.0", "SpaceNet 6"):
        assert fact in notice and fact in demo, fact


def test_one_version_source():
    project = _pyproject()
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pansharp_iqa._version.__version__"}
    assert pi.__version__ == _declared_version()


def test_cli_version_and_provenance_card_show_the_version(capsys):
    module, func = _pyproject()["project"]["scripts"]["pansharp-eval"].split(":")
    main = getattr(importlib.import_module(module), func)
    try:
        code = main(["--version"])
    except SystemExit as stop:  # argparse's version action exits; main() may turn that into a code
        code = stop.code
    assert code in (0, None)
    assert capsys.readouterr().out.split() == ["pansharp-eval", pi.__version__]
    assert pi.protocol_card(pi.get_protocol("toolbox2020"))["version"] == pi.__version__


def test_citation_and_changelog_follow_the_version():
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", cff, re.MULTILINE)
    assert re.search(r"^version: (\S+)$", cff, re.MULTILINE).group(1) == pi.__version__
    dois = re.findall(r"^\s+doi: (\S+)$", cff, re.MULTILINE)
    # the papers whose definitions the package implements (toolbox 2020 and 2015, QNR, Khan,
    # reprojected, Q2n, Q4, Q, NLRNet)
    assert len(dois) == len(set(dois)) == 9 and all(re.fullmatch(r"10\.\d{4,5}/\S+", d) for d in dois)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog
    assert re.search(rf"^## \[{re.escape(pi.__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.MULTILINE)


# -- the documentation site ------------------------------------------------------------------

@pytest.fixture(scope="module")
def docs_ext():
    return _load(ROOT / "docs" / "_ext" / "pansharp_docs.py", "pansharp_docs_under_test")


def test_api_pages_list_every_public_name(docs_ext):
    import pansharp_iqa.baselines as baselines
    import pansharp_iqa.reprojected as reprojected

    for module in (pi, baselines, reprojected):
        page = docs_ext.module_page(module.__name__, "title")
        listed = re.findall(r"^   (\w+)$", page, re.MULTILINE)  # autosummary entries
        listed += re.findall(r":obj:`pansharp_iqa\.(\w+)`", page)  # documented under the top-level name
        assert sorted(listed) == sorted(n for n in module.__all__ if not n.startswith("__")), module.__name__
    assert "pansharp_iqa" in dict(docs_ext.api_modules())


def test_registry_tables_have_every_protocol_and_sensor(docs_ext):
    protocols = docs_ext.protocols_table()
    for name in pi.list_protocols():
        assert f"* - ``{name}``" in protocols
    sensors = docs_ext.sensors_table()
    for name in pi.list_sensors():
        assert f"* - ``{name}``" in sensors
    wv3 = pi.get_sensor("WV3")
    assert " ".join(f"{g:g}" for g in wv3.ms_gnyq) in sensors


@pytest.fixture(scope="module")
def checker():
    return _load(ROOT / "docs" / "check_self_contained.py", "check_self_contained_under_test")


def test_self_contained_check_finds_external_assets(checker, tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "index.html").write_text(
        '<html><head><script src="_static/local.js"></script><link rel="stylesheet" href="_static/a.css">'
        '</head><body><a href="https://doi.org/10.3390/rs14081808">a DOI link is fine</a></body></html>')
    (tmp_path / "_static" / "a.css").write_text('@font-face { src: url("fonts/x.woff2"); }')
    assert checker.check(tmp_path) == []
    assert checker.main([str(tmp_path)]) == 0

    (tmp_path / "math.html").write_text('<script async src="https://cdn.example.org/mathjax/tex-chtml.js"></script>'
                                        '<link href="//fonts.example.com/css?family=X" rel="stylesheet">'
                                        '<style>@import url(http://example.com/x.css);</style>')
    (tmp_path / "_static" / "b.css").write_text("body { background: url('https://example.com/font.woff') }")
    problems = checker.check(tmp_path)
    assert len(problems) == 4, problems
    assert any("mathjax" in p for p in problems) and any("b.css" in p for p in problems)
    assert checker.main([str(tmp_path)]) == 1

"""Fail if a built HTML page loads a script, style sheet or font from another host.

Usage: ``python docs/check_self_contained.py docs/_build/html``

Checked: ``<script src=...>``, ``<link href=...>`` (style sheets, preloads, icons), ``<img src=...>``
and ``<iframe src=...>`` in every ``.html`` file, and ``url(...)`` / ``@import`` in every ``.css``
file and inline ``<style>``; any absolute (``http:``, ``https:``, ``//host``) address is a failure.
Plain hyperlinks (``<a href="https://...">``, e.g. a DOI) are not loaded by the page and are
allowed. Exit status 0 when the site is self-contained, 1 with one line per finding otherwise.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

EXTERNAL = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""", re.IGNORECASE)
LOADING = {"script": ("src",), "link": ("href",), "img": ("src", "srcset"), "iframe": ("src",),
           "source": ("src", "srcset"), "video": ("src", "poster"), "audio": ("src",), "embed": ("src",),
           "object": ("data",)}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loads: list[str] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for attr in LOADING.get(tag, ()):
            value = values.get(attr)
            if value:
                self.loads += [f"<{tag} {attr}={part.split()[0]!r}>" for part in value.split(",") if part.strip()
                               and EXTERNAL.match(part)]
        if values.get("style"):
            self.styles.append(values["style"] or "")
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def css_findings(text: str) -> list[str]:
    found = []
    for match in CSS_URL.finditer(text):
        url = match.group(1) or match.group(2)
        if url and EXTERNAL.match(url):
            found.append(f"url({url})")
    return found


def check(site: Path) -> list[str]:
    problems = []
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site)
        if path.suffix == ".html":
            page = _Page()
            page.feed(path.read_text(encoding="utf-8", errors="replace"))
            problems += [f"{rel}: loads {item}" for item in page.loads]
            problems += [f"{rel}: inline style {item}" for s in page.styles for item in css_findings(s)]
        elif path.suffix == ".css":
            problems += [f"{rel}: {item}" for item in css_findings(path.read_text(encoding="utf-8", errors="replace"))]
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python docs/check_self_contained.py BUILT_HTML_DIR", file=sys.stderr)
        return 2
    site = Path(argv[0])
    pages = sum(1 for _ in site.rglob("*.html"))
    if pages == 0:
        print(f"{site}: no HTML pages (build the site first)", file=sys.stderr)
        return 2
    problems = check(site)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} external asset(s) in {site}: the site is not self-contained", file=sys.stderr)
        return 1
    print(f"{site}: {pages} pages, no script, style sheet, font or image from another host")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

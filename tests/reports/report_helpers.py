"""Helpers of the report tests: an in-memory image access, and an HTML page checker (tags, images,
external references)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from html.parser import HTMLParser

import numpy as np

from pansharp_iqa.reports.display import downsample, residual_map


class Arrays:
    """Minimal ``ImageAccess`` over whole arrays (roles fused, gt, ms, pan)."""

    notes = ("test access",)

    def __init__(self, **arrays: np.ndarray) -> None:
        self.a = arrays

    def shape(self, role: str) -> tuple[int, int]:
        return self.a[role].shape[:2]

    def display(self, role: str, bands: Sequence[int], shape: Sequence[int]) -> np.ndarray:
        arr = self.a[role]
        return downsample(arr[:, :, list(bands)] if bands else arr, shape)

    def window(self, role, rows, cols, bands):
        part = self.a[role][rows[0]:rows[1], cols[0]:cols[1]]
        return part[:, :, list(bands)] if bands else part

    def residual(self, shape):
        return downsample(residual_map(self.a["fused"], self.a["gt"]), shape)

#: Attributes through which a page can load or link something.
URL_ATTRS = {"src", "href", "srcset", "action", "formaction", "poster", "data", "background", "xlink:href", "manifest"}


class Page(HTMLParser):
    """Collects tags, image alts/sources and URL-bearing attributes; fails on unbalanced tags."""

    VOID = {"meta", "img", "br", "hr", "input", "link", "source", "col", "area", "base", "wbr"}

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.images: list[tuple[str, str]] = []
        self.urls: list[str] = []
        self.styles: list[str] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in: str | None = None
        self.feed(text)
        self.close()
        if self.stack:
            self.errors.append(f"unclosed tags {self.stack}")

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        for k, v in attrs:
            if k in URL_ATTRS and v is not None:
                self.urls.append(v)
            if k == "style" and v:
                self.styles.append(v)
        if tag == "img":
            self.images.append((d.get("alt", ""), d.get("src", "")))
        if tag in ("style", "script"):
            self._in = tag
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
            return
        self.stack.pop()
        self._in = None

    def handle_data(self, data):
        if self._in == "style":
            self.styles.append(data)
        elif self._in == "script":
            self.scripts.append(data)
        else:
            self.text.append(data)


def external_references(page: Page) -> list[str]:
    """Everything in the page that would make a browser go to the network."""
    bad = [u for u in page.urls if not (u.startswith("data:") or u.startswith("#"))]
    for css in page.styles:
        bad += [u for u in re.findall(r"url\(\s*['\"]?([^'\")]+)", css) if not u.startswith("data:")]
        bad += re.findall(r"@import[^;]*", css)
    for js in page.scripts:
        bad += re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}", js)
        bad += re.findall(r"\b(?:fetch|XMLHttpRequest|import\s*\()", js)
    return bad

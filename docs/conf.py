"""Sphinx configuration of the pansharp_iqa documentation site.

Build (offline; the package must be importable, e.g. ``pip install '.[docs]'``)::

    sphinx-build -W --keep-going docs docs/_build/html

then open ``docs/_build/html/index.html``. ``python docs/check_self_contained.py
docs/_build/html`` checks that no page loads a script, style sheet or font from another host.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pansharp_iqa

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
print(f"pansharp_iqa {pansharp_iqa.__version__} from {Path(pansharp_iqa.__file__).parent}")

project = "pansharp_iqa"
author = "The pansharp_iqa developers"
copyright = "2026, The pansharp_iqa developers"  # noqa: A001 (Sphinx's name)
release = pansharp_iqa.__version__  # the one version source (pansharp_iqa/_version.py)
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "pansharp_docs",  # docs/_ext: API pages from __all__, protocol and sensor tables from the registries
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build", "_generated", "Thumbs.db", ".DS_Store",
    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
    "sg_execution_times.rst",
]
templates_path = ["_templates"]

# -- warnings: `-W` turns every one into an error --------------------------------------------
# STRICT: broken cross-references warn (nitpicky) and numpydoc validates the docstrings
# (undocumented or unknown parameters, missing docstrings).
# CI (.ci/run) builds with PANSHARP_DOCS_STRICT=1; without it, a quick local build skips both.
STRICT = os.environ.get("PANSHARP_DOCS_STRICT") == "1"
nitpicky = STRICT
# Names of other libraries are not resolved offline (no intersphinx: the build must not need the
# network), so their roles are accepted as text (``sparse``: scipy.sparse, as resize_matrix's signature names it).
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|sparse|dask|distributed|rasterio|matplotlib|tifffile|h5py|cv2|PIL|os|pathlib|math|"
               r"collections|typing|concurrent|argparse|dataclasses|types|enum|io|threading)(\..*)?"),
    (r"py:.*", r"(ndarray|array_like|array-like|ArrayLike|NDArray|DTypeLike|Path|PathLike|Callable|Sequence|"
               r"Mapping|Iterable|Iterator|Any|Literal|optional|default|shape|dtype|float64|uint16|"
               r"callable|sequence|mapping|iterable|scalar|DataArray|Future|Client|DatasetReader)"),
    # matplotlib's Figure, torch's Tensor and device, torchmetrics' Metric, MindSpore's classes
    (r"py:.*", r"(Figure|torch|torchmetrics|mindspore|Tensor)(\..*)?"),
    # Private names (a leading underscore) have no page by design; they show up only in signatures.
    (r"py:.*", r"(.*\.)?_[A-Za-z]\w*"),
]
# Types of our own that appear only in signatures (annotations of public functions) and are not
# part of the public API, so they have no page: the tile plan's records, the windowed readers'
# protocol, the report's display and statistics records.
nitpick_ignore = [
    ("py:class", "pansharp_iqa.tiled.plan.Tile"),
    ("py:class", "pansharp_iqa.settings.ReducedSettings"),  # the settings value: built by reduced_settings
    ("py:class", "pansharp_iqa.settings.FullSettings"),  # ... and full_settings, which are documented
    ("py:class", "pansharp_iqa.tiled.accumulate.Partial"),
    ("py:class", "pansharp_iqa.io.windows.Source"),
    ("py:class", "SceneView"),
    ("py:class", "pansharp_iqa.reports.pair_display.SceneView"),
    ("py:class", "pansharp_iqa.reports.stats.IndexStatistics"),
]

# -- autodoc / autosummary / numpydoc ----------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
# no "members": False here: a non-string default overrides the class template's `:members:` (then
# class pages lose their methods and properties); module pages say `:no-members:` themselves
autodoc_default_options: dict[str, object] = {}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
numpydoc_show_class_members = False   # class pages list their members through autodoc instead
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc validation (STRICT, see above): PR01 parameter not documented, PR02 unknown parameter
# documented, PR07 parameter without description, GL08 object without docstring.
numpydoc_validation_checks = {"PR01", "PR02", "PR07", "GL08"} if STRICT else set()
numpydoc_validation_exclude = {r"\.__init__$", r"\.__call__$", r"\.__post_init__$"}

# -- MyST: the Markdown pages of docs/ ---------------------------------------------------------
myst_heading_anchors = 3          # cli.md#running and friends
myst_enable_extensions = ["deflist"]

# -- gallery: examples/plot_*.py, run at build time on the bundled demo scene (offline) -------
sphinx_gallery_conf = {
    "examples_dirs": str(DOCS.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "matplotlib_animations": False,
    "show_memory": False,
    "show_signature": False,
    "doc_module": ("pansharp_iqa",),
    "reference_url": {"pansharp_iqa": None},
    "backreferences_dir": None,
    "write_computation_times": False,
}

# -- HTML: a theme that bundles its assets (nothing may load from another host) ---------------
html_theme = "furo"
html_title = f"pansharp_iqa {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
# MathJax (Sphinx's default math renderer) loads from a CDN, but only on a page with math: no page
# has any today, and check_self_contained.py fails the build if one ever does (then bundle it,
# e.g. with sphinx-mathjax-offline).

"""Report writers for ``pansharp-eval``: terminal table, CSV, JSON, Markdown, LaTeX, PNG plots,
and the visual reports (:func:`comparison_figure`: a scene's grid as a matplotlib figure).

All writers take the same inputs: the per-(scene, method) records (dicts with ``scene``,
``method``, ``status`` (``"ok"``/``"failed"``), ``metrics`` and ``reason``) and the summary made by
:func:`.summary.summarise`.

Modules imported on demand (they need scipy.stats, scikit-image or matplotlib):
``stats`` (statistics across scenes), ``display`` (display images from arrays),
``image_codec`` (JPEG, ``data:`` URIs), ``pair_display`` (one pair's images, one
scene's grid), ``html`` (``report.html``), ``figures`` (publication figures),
``plots`` (box plots and index maps). :func:`paper_table` merges several runs' ``results.json``
into one paper table (``pansharp-eval table``).
"""

from .csv_report import PER_BAND_FILE, write_csv, write_per_band_csv
from .figures import comparison_figure
from .json_report import write_json
from .latex import render_latex
from .markdown import render_markdown
from .pair_display import scene_view
from .paper_table import PaperTable, paper_table
from .summary import METRIC_DIRECTIONS, Summary, summarise
from .table import render_table

__all__ = [
    "METRIC_DIRECTIONS",
    "PaperTable",
    "Summary",
    "comparison_figure",
    "paper_table",
    "render_latex",
    "render_markdown",
    "render_table",
    "scene_view",
    "summarise",
    "write_csv",
    "write_per_band_csv",
    "PER_BAND_FILE",
    "write_json",
]

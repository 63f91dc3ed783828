"""``pansharp-eval table RUN... --out DIR``: one paper table from the ``results.json`` of several
runs (:func:`pansharp_iqa.reports.paper_table`), written as ``table.md/.tex/.csv/.html`` with the
output-folder rules of every command (:mod:`.output_dir`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pansharp_iqa.validation import InputError

from .errors import EXIT_OK, UsageError
from .output_dir import OutputFolder, atomic_file

__all__ = ["TABLE_MANIFEST", "run_table"]

#: The manifest of the folders ``table`` writes.
TABLE_MANIFEST = ".pansharp-eval-table.json"


def run_table(ns: argparse.Namespace, argv: list[str]) -> int:
    """Merge the runs, then write the tables (nothing is written when the runs cannot be merged)."""
    from pansharp_iqa.reports import paper_table

    try:
        table = paper_table(ns.runs)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    renders = {"md": table.to_markdown, "tex": table.to_latex, "csv": table.to_csv, "html": table.to_html}
    files = [f"table.{f}" for f in ns.format]
    protected = [Path(r) if Path(r).is_dir() else Path(r).parent for r in ns.runs]
    with OutputFolder(Path(ns.out), manifest=TABLE_MANIFEST, protected=protected, argv=argv) as out:
        earlier = out.earlier()
        if earlier and not ns.force:
            raise UsageError(f"{ns.out} already holds tables ({', '.join(earlier)}); pass --force to replace them")
        out.check(files)
        for fmt in ns.format:
            with atomic_file(out.staging() / f"table.{fmt}", "w") as handle:
                handle.write(renders[fmt]())
        out.commit(keep=[])
    print(table.to_markdown(), end="")
    print(f"pansharp-eval: wrote {', '.join(files)} in {ns.out}")
    return EXIT_OK

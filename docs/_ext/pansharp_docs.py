"""Sphinx extension of the pansharp_iqa docs: pages generated from the package at build time.

* ``api/generated/<module>.rst``: one page per public module, listing every name of its
  ``__all__`` (functions, classes, exceptions, constants) in autosummary tables; autosummary then
  writes one stub page per name. Nothing is hand-listed: a name added to ``__all__`` appears,
  a name removed disappears.
* ``_generated/protocols_table.rst``, ``_generated/protocol_settings_table.rst`` and
  ``_generated/sensors_table.rst``: the protocol, protocol settings and sensor tables, read from the
  registries (``list_protocols``/``get_protocol``, ``list_sensors``/``get_sensor``), included by
  ``protocols.rst`` and ``sensors.rst``.

Files are rewritten only when their text changes (Sphinx then rebuilds only what changed).

A cross-reference to an object's home module (``pansharp_iqa.evaluation.evaluate_full``,
``pansharp_iqa.io.errors.DataError``, or relative to the docstring's module, ``exp.exp`` in
:mod:`pansharp_iqa.baselines`, or relative to the module the docstring was written in,
``Statistic`` in the docstring of ``pansharp_iqa.Index``) resolves to the page of the public name
the same object is documented under (``pansharp_iqa.evaluate_full``); a reference to an optional
module that is not built (its framework is not installed) is shown as text; a reference to an
object that has no public name stays broken, and the nitpicky build reports it.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

#: Public modules documented in the API reference, in page order.
API_MODULES = (
    ("pansharp_iqa", "Top level: indexes, filters, protocols, sensors and the evaluation entry points"),
    ("pansharp_iqa.evaluation", "The one evaluation path: evaluate(inputs, settings)"),
    ("pansharp_iqa.indexes", "The quality indexes, one formula each"),
    ("pansharp_iqa.indexes.catalog", "The index catalogue: every index and statistic declared once"),
    ("pansharp_iqa.no_reference", "The full-resolution (no-reference) indexes"),
    ("pansharp_iqa.protocols", "The protocol registry and its named conventions"),
    ("pansharp_iqa.presets", "Benchmark presets: the PanCollection test sets' settings"),
    ("pansharp_iqa.sensors", "The sensor MTF registry"),
    ("pansharp_iqa.mtf", "MTF-matched Gaussian filters and the kernel settings of each protocol"),
    ("pansharp_iqa.resample", "Interpolation and resizing: the 23-tap EXP, MATLAB's imresize, half-pixel shifts"),
    ("pansharp_iqa.validation", "Input rules and the InputError family"),
    ("pansharp_iqa.rules", "The plausibility rules: declarations, the rule table and its warnings"),
    ("pansharp_iqa.reprojected", "The reprojected full-resolution protocol (Scarpa & Ciotola 2022)"),
    ("pansharp_iqa.misregistration", "Sensitivity of the full-resolution indexes to an MS/PAN misregistration"),
    ("pansharp_iqa.baselines", "Classical pansharpening baselines"),
    ("pansharp_iqa.tiled", "Tile-wise evaluation of whole scenes in bounded memory"),
    ("pansharp_iqa.quality_maps", "Quality maps: where each map lies, and where its values go (arrays, GeoTIFFs)"),
    ("pansharp_iqa.io", "Readers of datasets and results"),
    ("pansharp_iqa.reports", "Report tables, figures and summaries"),
    ("pansharp_iqa.demo_data", "The bundled demo scene"),
)
#: Modules documented only where they import, i.e. where their framework is installed (PyTorch,
#: torchmetrics, MindSpore); skipped otherwise, so the site builds with the docs extra alone.
OPTIONAL_MODULES = (
    ("pansharp_iqa.tensor", "Tensors and batches on their device: streaming metrics for training loops"),
    ("pansharp_iqa.tensor.torchmetrics_adapter", "torchmetrics metrics (needs torchmetrics)"),
    ("pansharp_iqa.tensor.losses", "Differentiable full-resolution indexes for training (needs PyTorch)"),
    ("pansharp_iqa.tensor.mindspore_adapter", "MindSpore metrics (needs MindSpore)"),
)

_KINDS = (("Functions", "function"), ("Classes", "class"), ("Exceptions", "exception"),
          ("Type aliases", "alias"), ("Constants", "data"))


def _kind(obj: object) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if type(obj).__module__ == "typing":
        return "alias"  # Literal[...] and friends: callable objects, but documented as data
    if callable(obj):
        return "function"
    return "data"


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        raise RuntimeError(f"{module.__name__} has no __all__: the API reference lists __all__ only")
    return [n for n in names if not (n.startswith("__") and n.endswith("__"))]


def module_page(modname: str, title: str) -> str:
    """The page of one module: its docstring and every name of its ``__all__``. A name that the
    top level exports too (the same object: ``pansharp_iqa.r_q2n`` is
    ``pansharp_iqa.reprojected.r_q2n``) is documented once, under its top-level name, and linked
    from here."""
    import pansharp_iqa

    module = importlib.import_module(modname)
    heading = f"``{modname}``"
    lines = [heading, "=" * len(heading), "", title + ".", "",
             f".. automodule:: {modname}", "   :no-members:", "", f".. currentmodule:: {modname}", ""]
    groups: dict[str, list[str]] = {kind: [] for _, kind in _KINDS}
    at_top: list[str] = []
    top_names = set(_public_names(pansharp_iqa)) if modname != "pansharp_iqa" else set()
    for name in _public_names(module):
        obj = getattr(module, name)
        if name in top_names and getattr(pansharp_iqa, name) is obj and _kind(obj) not in ("data", "alias"):
            at_top.append(name)
        else:
            groups[_kind(obj)].append(name)
    for section, kind in _KINDS:
        if not groups[kind]:
            continue
        lines += [section, "-" * len(section), "", ".. autosummary::", "   :toctree: .", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in groups[kind]]
        lines.append("")
    if at_top:
        section = "Also at the top level"
        refs = ", ".join(f":obj:`pansharp_iqa.{name}`" for name in at_top)
        lines += [section, "-" * len(section), "",
                  f"The same objects as ``pansharp_iqa.<name>``, documented there: {refs}.", ""]
    return "\n".join(lines)


def _cell(text: object) -> str:
    text = "" if text is None else str(text)
    return " ".join(text.split()) or "--"


def _list_table(header: list[str], rows: list[list[str]], widths: str) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {c}" for c in row[1:]]
    return lines + [""]


def protocols_table() -> str:
    import pansharp_iqa as pi

    rows = []
    for name in pi.list_protocols():
        p = pi.get_protocol(name)
        rows.append([
            f"``{p.name}``",
            _cell(", ".join(p.reduced_indexes) or "--"),
            _cell(", ".join(p.full_indexes) or "--"),
            _cell(p.description),
            _cell("; ".join(p.sources)),
        ])
    return "\n".join(_list_table(["protocol", "reduced resolution", "full resolution", "what it is", "sources"],
                                 rows, "12 12 14 40 22"))


def _setting(value: object) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k} {_setting(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "--"
    return "--" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def protocol_settings_table() -> str:
    """Every named setting of every protocol (``Protocol.settings()``), one row per setting."""
    import pansharp_iqa as pi

    names = pi.list_protocols()
    cards = {n: pi.get_protocol(n).settings() for n in names}
    skip = {"fr_variant", "scc_variant", "sources", "mtf_sigma_form"}
    keys = [k for k in cards[names[0]] if k not in skip]
    rows = [[f"``{k}``", *(_cell(_setting(cards[n].get(k))) for n in names)] for k in keys]
    widths = " ".join(["16"] + [str(84 // len(names))] * len(names))
    return "\n".join(_list_table(["setting", *(f"``{n}``" for n in names)], rows, widths))


def _gnyq(sensor) -> str:
    if sensor.ms_gnyq:
        return " ".join(f"{g:g}" for g in sensor.ms_gnyq)
    if sensor.ms_gnyq_all_bands is not None:
        return f"{sensor.ms_gnyq_all_bands:g} per band"
    return "--"


def sensors_table() -> str:
    import pansharp_iqa as pi

    rows = []
    for name in pi.list_sensors():
        s = pi.get_sensor(name)
        bands = ", ".join(s.band_names) if s.band_names else "any"
        subsets = "; ".join(f"``{name}[{k}]`` = {', '.join(v)}" for k, v in s.subsets.items())
        rows.append([
            f"``{s.name}``",
            _cell(s.full_name + (f" (aliases: {', '.join(s.aliases)})" if s.aliases else "")),
            _cell(bands + (f"; subsets {subsets}" if subsets else "")),
            _cell(_gnyq(s)),
            _cell(f"{s.pan_gnyq:g}" if s.pan_gnyq is not None
                  else f"the bands of ``{s.pan_sensor}``" if s.pan_sensor else "--"),
            _cell(s.ratio if s.ratio is not None else "given"),
            _cell(s.bits if s.bits is not None else "given"),
            _cell("; ".join(s.sources) + (f". Notes: {s.notes}" if s.notes else "")),
        ])
    header = ["sensor", "name", "bands", "MS GNyq", "PAN GNyq", "ratio", "bits", "sources and notes"]
    return "\n".join(_list_table(header, rows, "8 14 16 14 6 5 5 32"))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def api_modules() -> list[tuple[str, str]]:
    mods = list(API_MODULES)
    for modname, title in OPTIONAL_MODULES:
        try:
            importlib.import_module(modname)
        except ImportError:
            continue  # its framework is not installed
        mods.append((modname, title))
    return mods


def generate(app, config=None) -> None:
    src = Path(app.srcdir)
    modules = api_modules()
    for modname, title in modules:
        _write(src / "api" / "generated" / f"{modname}.rst", module_page(modname, title))
    toc = [".. toctree::", "   :maxdepth: 1", ""] + [f"   /api/generated/{m}" for m, _ in modules]
    _write(src / "_generated" / "api_toc.rst", "\n".join(toc) + "\n")
    _write(src / "_generated" / "protocols_table.rst", protocols_table())
    _write(src / "_generated" / "protocol_settings_table.rst", protocol_settings_table())
    _write(src / "_generated" / "sensors_table.rst", sensors_table())


def _public_aliases() -> dict[int, tuple[str, str]]:
    """id(object) -> (public dotted name, py role) for the documented functions, classes, modules."""
    aliases: dict[int, tuple[str, str]] = {}
    for modname, _ in api_modules():
        module = importlib.import_module(modname)
        aliases.setdefault(id(module), (modname, "mod"))
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj):
                aliases.setdefault(id(obj), (f"{modname}.{name}", "mod" if inspect.ismodule(obj) else "obj"))
    return aliases


def _lookup(dotted: str) -> object | None:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _home_module(docname: str) -> str | None:
    """The module a documented object was written in, from its page's name
    (``api/generated/pansharp_iqa.Index`` -> ``pansharp_iqa.indexes.catalog``): a docstring's
    relative reference (``:class:`Statistic``` in ``Index``) means a name of that module."""
    prefix = "api/generated/"
    if not docname.startswith(prefix):
        return None
    obj = _lookup(docname[len(prefix):])
    if obj is None or inspect.ismodule(obj):
        return None
    return getattr(obj, "__module__", None)


def resolve_home_reference(app, env, node, contnode):
    if node.get("refdomain") != "py" or not node.get("reftarget", "").strip():
        return None
    target = node["reftarget"].lstrip(".~")
    context = node.get("py:module") or ""
    candidates = [target] + ([f"{context}.{target}"] if context else [])
    home = _home_module(node.get("refdoc", ""))
    if home and home != context:
        candidates.append(f"{home}.{target}")
        # documented under that very name (a type alias, a constant of the home module)
        found = env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"],
                                                   f"{home}.{target}", node, contnode)
        if found is not None:
            return found
    if not hasattr(app, "_pansharp_aliases"):
        app._pansharp_aliases = _public_aliases()
        app._pansharp_built = {m for m, _ in api_modules()}
    for dotted in candidates:
        owners = [m for m, _ in OPTIONAL_MODULES if dotted == m or dotted.startswith(m + ".")]
        if owners and max(owners, key=len) not in app._pansharp_built:
            return contnode  # an optional module whose framework is not installed here: text, no link
    for dotted in candidates:
        if not dotted.startswith("pansharp_iqa"):
            continue
        obj = _lookup(dotted)
        if obj is None or id(obj) not in app._pansharp_aliases:
            continue
        public, role = app._pansharp_aliases[id(obj)]
        if public == dotted and role != "mod":
            continue  # documented under this very name and still not found: a real miss
        domain = env.get_domain("py")
        return domain.resolve_xref(env, node["refdoc"], app.builder, role, public, node, contnode)
    return None


def readable_signature(app, what, name, obj, options, signature, return_annotation):
    """Dataclass fields with a default factory show ``= <factory>``, which Sphinx cannot parse
    (the signature then falls apart at every comma): show ``= ...`` instead."""
    if signature and "<factory>" in signature:
        return signature.replace("<factory>", "..."), return_annotation
    return None


def public_bases(app, name, obj, options, bases) -> None:
    """A private base class (``_Quality``) has no page: show the public classes it derives from
    instead, so that "Bases:" links to documented classes."""
    i = 0
    while i < len(bases):
        base = bases[i]
        if getattr(base, "__name__", "").startswith("_") and base is not object:
            bases[i:i + 1] = [b for b in base.__bases__ if b not in bases]
        else:
            i += 1


def _defining_module(obj: object) -> str:
    for candidate in (obj, getattr(obj, "fget", None), getattr(obj, "__func__", None)):
        module = getattr(candidate, "__module__", None)
        if isinstance(module, str):
            return module
    return ""


def own_members_only(app, what, name, obj, skip, options):
    """Class pages list inherited members (``:inherited-members:`` in the class template), so that
    methods a public class gets from a private base (``ReducedQuality.compute`` from ``_Quality``)
    are documented; members defined outside the package (torchmetrics' ``Metric``, ``Exception``,
    ``tuple``) are left out."""
    if what == "class":
        if inspect.isroutine(obj) and getattr(obj, "__name__", name).startswith("_") and not name.startswith("_"):
            return True  # a private function stored as a field default (``Statistic.merge``): a field
        module = _defining_module(obj)
        if module and not module.startswith("pansharp_iqa"):
            return True
    return None


def exclude_type_aliases(app, config) -> None:
    """numpydoc validates ``__doc__``, which a type alias (``Literal[...]``) does not have: its
    documentation is the ``#:`` comment autodoc reads. Leave the aliases out of the validation."""
    names = {f"{modname}.{name}" for modname, _ in api_modules()
             for name in _public_names(importlib.import_module(modname))
             if _kind(getattr(importlib.import_module(modname), name)) == "alias"}
    config.numpydoc_validation_exclude = set(config.numpydoc_validation_exclude) | {
        "^" + re.escape(n) + "$" for n in names}


def setup(app):
    app.connect("autodoc-process-signature", readable_signature)
    app.connect("autodoc-process-bases", public_bases)
    app.connect("autodoc-skip-member", own_members_only)
    app.connect("missing-reference", resolve_home_reference)
    # before Sphinx lists the source files and autosummary scans them for its tables
    app.connect("config-inited", generate)
    app.connect("config-inited", exclude_type_aliases, priority=100)  # before numpydoc compiles it (500)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

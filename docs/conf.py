"""Sphinx configuration for dualad's documentation site.

Build (warnings are errors) and run the doctests of every page and docstring:

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python -m sphinx -W --keep-going -b doctest docs docs/_build/doctest

The build needs no network: no intersphinx, and the theme's assets are in its wheel
(MathJax is loaded from its CDN only when a page is viewed).
"""
import doctest as _doctest
import importlib
import inspect
import pathlib
import re
import sys

import numpy as _np

import dualad

project = "dualad"
author = "the dualad authors"
copyright = "the dualad authors"
version = dualad.__version__
release = dualad.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "Thumbs.db", ".DS_Store", "**/.ipynb_checkpoints"]

# --- Markdown pages (MyST) ----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3          # [text](page.md#a-heading) links resolve
myst_dmath_double_inline = True

# --- API reference --------------------------------------------------------------------------
# docs/api/index.md lists the public modules (tests/test_docs.py checks that list against
# tests/test_public_api.py's PUBLIC). Each module's page and its members' stub pages are
# generated at build time (docs/api/generated/, not committed) from the templates in
# docs/_templates/autosummary/; a module page lists exactly the names in the module's
# __all__, so the reference cannot drift from the code.
autosummary_generate = True
autosummary_generate_overwrite = True
autosummary_ignore_module_all = False
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"          # numpydoc's Parameters sections carry the types
add_module_names = False

# numpydoc: the classes' methods are documented by autodoc (:members: in the class template),
# so numpydoc's own member tables (which would repeat them and reference ndarray mirrors)
# stay off.
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()   # tests/test_public_api.py runs numpydoc's validator

# --- Doctests -------------------------------------------------------------------------------
# The doctest builder runs the >>> lines of the docstrings (autodoc) and of the pages'
# ```{doctest} blocks (a ```pycon block is only highlighted, not run), with the globals
# tests/test_public_api.py gives the docstring examples. tests/test_docs.py runs the
# pages' ```python and ```{doctest} blocks in the normal test suite as well.
doctest_global_setup = """
import numpy as np
import dualad
"""
doctest_default_flags = _doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE

# --- HTML -----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"dualad {version}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"changelog": []}


# --- The API reference's module pages ---------------------------------------------------
# docs/api/index.md lists the public modules in its toctree (tests/test_docs.py checks that
# list against tests/test_public_api.py's PUBLIC). For each, the page
# docs/api/generated/<module>.rst is written here, listing exactly the names in the module's
# __all__ in autosummary tables; autosummary then writes one stub page per name into
# docs/api/generated/members/. Both are regenerated at every build and not committed, so the
# reference cannot drift from the code.

_DOCS = pathlib.Path(__file__).resolve().parent
_GENERATED = _DOCS / "api" / "generated"
_KINDS = [("functions", "Functions"), ("classes", "Classes"),
          ("exceptions", "Exceptions and warnings"), ("data", "Data")]


def _kind(obj):
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return "exceptions"
    if inspect.isclass(obj):
        return "classes"
    if inspect.isroutine(obj):
        return "functions"
    return "data"   # including callable instances (a Primitive): autosummary's "data" too


def public_names(modname):
    """The names a module's reference page documents: its ``__all__``, grouped by kind.

    Every module declares ``__all__`` (tests/test_public_api.py); a module without one
    falls back to its public, non-module attributes.
    """
    module = importlib.import_module(modname)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    groups = {kind: [] for kind, _ in _KINDS}
    for name in names:
        obj = getattr(module, name)
        if inspect.ismodule(obj) and getattr(module, "__all__", None) is not None:
            raise ValueError(
                f"docs/conf.py: {modname}.__all__ names the module {name!r}; the API reference "
                f"documents functions, classes and data: list the module in docs/api/index.md")
        if not inspect.ismodule(obj):
            groups[_kind(obj)].append(name)
    return groups


def api_modules():
    """The module pages listed in docs/api/index.md's toctree, in order."""
    text = (_DOCS / "api" / "index.md").read_text()
    return re.findall(r"^generated/([\w.]+)\s*$", text, flags=re.M)


def _module_page(modname, member_names):
    """The page of ``modname``; ``member_names``: every documented name, fully qualified."""
    groups = public_names(modname)
    title = f"``{modname}``"
    lines = [title, "=" * len(title), "", f".. automodule:: {modname}", "   :no-members:"]
    if modname in member_names:
        # e.g. dualad.jit is both this module and the function dualad.jit: the function
        # keeps the index entry (and the links), the module page is reached by the toctree.
        lines.append("   :no-index:")
    lines += ["", f".. currentmodule:: {modname}", ""]
    for kind, heading in _KINDS:
        if groups[kind]:
            lines += [heading, "-" * len(heading), "", ".. autosummary::",
                      "   :toctree: members", "   :nosignatures:", ""]
            lines += [f"   {name}" for name in groups[kind]] + [""]
    return "\n".join(lines)


def _write_module_pages():
    modules = api_modules()
    names = {f"{m}.{n}" for m in modules for g in public_names(m).values() for n in g}
    _GENERATED.mkdir(parents=True, exist_ok=True)
    for modname in modules:
        page = _GENERATED / f"{modname}.rst"
        text = _module_page(modname, names)
        if not page.exists() or page.read_text() != text:
            page.write_text(text)
    # A stub of a name no longer in any __all__ (renamed or removed since the last local
    # build) would be built as an orphan page and fail -W: remove it.
    for stub in (_GENERATED / "members").glob("*.rst"):
        if stub.stem not in names:
            stub.unlink()
    for page in _GENERATED.glob("*.rst"):
        if page.stem not in modules:
            page.unlink()


_write_module_pages()


def _secondary_classes():
    """Full names of the classes a later module page re-exports (``dualad.autograd.Var`` is
    ``dualad.Var``). autodoc registers a class under its defining module's name too, so a
    second description would be a duplicate: the re-exports are written ``:no-index:``."""
    first, secondary = {}, []
    for modname in api_modules():
        module = importlib.import_module(modname)
        for kind in ("classes", "exceptions"):
            for name in public_names(modname)[kind]:
                obj = getattr(module, name)
                if id(obj) in first:
                    secondary.append(f"{modname}.{name}")
                else:
                    first[id(obj)] = f"{modname}.{name}"
    return secondary


# For data whose assignment has no comment above it.
_DATA_FALLBACK = {
    "REGISTRY": "Every registered primitive, by name: ``REGISTRY[\"sin\"]`` is the "
                ":class:`~dualad.extend.Primitive` that ``np.sin`` reaches on traced values.",
}


def _data_info():
    """For every data name of a module page: its type and the comment above its assignment
    in the module that defines it. autodoc would show the docstring of the value's type
    (a dict's, a frozenset's) instead: module attributes cannot carry docstrings."""
    info = {}
    for modname in api_modules():
        module = importlib.import_module(modname)
        for name in public_names(modname)["data"]:
            obj = getattr(module, name)
            text = ""
            for other in sorted(m for m in sys.modules if m == "dualad" or m.startswith("dualad.")):
                source = getattr(sys.modules[other], "__file__", None)
                if getattr(sys.modules[other], name, None) is not obj or not source:
                    continue
                lines = pathlib.Path(source).read_text().splitlines()
                for i, line in enumerate(lines):
                    if re.match(rf"{name}\s*(:[^=]*)?=", line):
                        j, comment = i - 1, []
                        while j >= 0 and lines[j].startswith("#"):
                            comment.insert(0, lines[j].lstrip("#").strip())
                            j -= 1
                        text = " ".join(comment)
                        break
                if text:
                    break
            size = f", {len(obj)} entries when this page was built" if hasattr(obj, "__len__") else ""
            info[f"{modname}.{name}"] = {"type": type(obj).__name__ + size,
                                         "text": text or _DATA_FALLBACK.get(name, "")}
    return info


autosummary_context = {"secondary": _secondary_classes(), "data_info": _data_info()}


def _skip_mirrors(app, what, name, obj, skip, options):
    """Leave out a traced value's mirrors of ndarray methods and ufuncs (documented as
    NumPy's: the same rule tests/test_public_api.py applies to the docstrings)."""
    if what == "class" and not name.startswith("_") and (hasattr(_np.ndarray, name)
                                                         or hasattr(_np, name)):
        return True
    return None


def _write_teaching_demo(app, exception):
    """The live teaching page of docs/teaching.md, teaching_demo.html in the HTML output:
    what the command the page shows writes, ``dualad trace "log(x1) + x1*x2 - sin(x2)"
    --at x1=2 x2=5 --html teaching_demo.html`` (self-contained: it needs nothing else)."""
    if exception is not None or app.builder.format != "html":
        return
    import contextlib
    import io

    from dualad.teaching.cli import main

    out = pathlib.Path(app.outdir) / "teaching_demo.html"
    with contextlib.redirect_stdout(io.StringIO()) as printed:    # the trace's text
        status = main(["trace", "log(x1) + x1*x2 - sin(x2)", "--at", "x1=2", "x2=5",
                       "--html", str(out)])
    if status != 0:
        raise RuntimeError(f"docs/conf.py: dualad trace --html failed ({status}):\n"
                           f"{printed.getvalue()}")


def setup(app):
    app.connect("autodoc-skip-member", _skip_mirrors)
    app.connect("build-finished", _write_teaching_demo)

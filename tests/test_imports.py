"""No import cycles anywhere in dualad (and its subpackages dualad.jacobians and
dualad.verification), read statically from the sources (see ``import_graph.py``).

A cycle is a design fault even when a late import inside a function lets it load: the
modules cannot be understood, tested or reused one without the other, and which half
runs first depends on who imported whom. So imports inside functions count.
"""

import import_graph

TREES = {k: v for k, v in import_graph.TREES.items() if k != "papers"}

def _graph():
    return import_graph.graph(import_graph.modules(TREES))

def _report(edges, found):
    return "import cycles (shortest first):\n" + "\n".join(
        f"  {len(ring)}: {import_graph.show(ring, edges)}" for ring in found)

def test_no_import_cycles():
    edges = _graph()
    found = import_graph.cycles(edges)
    assert not found, _report(edges, found)

def test_the_graph_reader_sees_late_and_relative_imports(tmp_path, monkeypatch):
    """The reader itself: a relative import inside a function closes a cycle; ``from
    pkg import mod`` is an edge to the module; a package's __init__ imports nothing
    implicitly."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub.c import g\n")
    (pkg / "sub" / "__init__.py").write_text("from ..a import x\n")
    (pkg / "sub" / "c.py").write_text("from .. import a\n")
    monkeypatch.setattr(import_graph, "ROOT", tmp_path)
    edges = import_graph.graph(import_graph.modules({"pkg": "pkg"}))
    assert edges["pkg.a"] == {"pkg.b": 1}
    assert edges["pkg.b"] == {"pkg.sub.c": 2}
    assert edges["pkg.sub"] == {"pkg.a": 1}
    assert import_graph.cycles(edges) == [("pkg.a", "pkg.b", "pkg.sub.c")]

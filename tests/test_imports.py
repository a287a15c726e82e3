"""No import cycles anywhere in dualad (and its subpackages dualad.jacobians and
dualad.verification), read statically from the sources (see ``import_graph.py``).

A cycle is a design fault even when a late import inside a function lets it load: the
modules cannot be understood, tested or reused one without the other, and which half
runs first depends on who imported whom. So imports inside functions count.
"""
import pytest

import import_graph

TREES = {k: v for k, v in import_graph.TREES.items() if k != "papers"}

# The core families' rules call one another's primitives: broadcast_to's VJP sums
# (reductions), sum's VJP broadcasts (shape), concatenate's VJP slices (indexing),
# indexing moves axes (shape), abs of a complex number is complex_numbers', the
# derivative of logaddexp is special.log's expit. Each is closed today by a late import
# in a rule body (the edge named here). Untangling them means declaring these
# primitives before their rules (autograd's numpy_wrapper / numpy_vjps split) or
# merging the modules; the batching change edits these same rule bodies, so this is
# left to a follow-up, named edge by edge so that no new cycle can join them.
CORE_EDGES = {
    ("dualad.ops._util", "dualad.ops.core.reductions"),        # unbroadcast -> sum
    ("dualad.ops._util", "dualad.ops.core.shape"),             # lift, unbroadcast, fit
    ("dualad.ops.core.shape", "dualad.ops.core.indexing"),     # concatenate's VJP
    ("dualad.ops.core.elementwise", "dualad.ops.core.complex_numbers"),  # abs of complex
    ("dualad.ops.core.elementwise", "dualad.ops.special.log"),  # logaddexp' = expit
}


def _graph():
    return import_graph.graph(import_graph.modules(TREES))


def _report(edges, found):
    return "import cycles (shortest first):\n" + "\n".join(
        f"  {len(ring)}: {import_graph.show(ring, edges)}" for ring in found)


@pytest.mark.xfail(strict=False, reason="cycles closed by RECORD_EDGES (the record change "
                   "removes them) and by CORE_EDGES (the core families' rules; open)")
def test_no_import_cycles():
    edges = _graph()
    found = import_graph.cycles(edges)
    assert not found, _report(edges, found)


def test_no_import_cycles_beyond_the_known_edges():
    """Strict: without the edges named above, the graph is acyclic, so any new cycle (or
    an old one coming back another way) fails here, naming its modules and lines."""
    edges = _graph()
    for source, target in CORE_EDGES:
        edges[source].pop(target, None)
    found = import_graph.cycles(edges)
    assert not found, _report(edges, found)


def test_the_known_edges_still_exist():
    """A known edge that is gone is struck from the list (the lists only shrink)."""
    edges = _graph()
    gone = sorted(e for e in CORE_EDGES if e[1] not in edges[e[0]])
    assert not gone, f"no longer imported, remove from the known lists: {gone}"


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

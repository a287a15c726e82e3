"""The static import graph of the repository's installed code, read with :mod:`ast`.

Used by ``test_imports.py`` (no cycles) and ``test_layering.py`` (who may import what).
Nothing is imported: every ``.py`` file is parsed, so a module that would fail to import
is still checked, and the graph is the same whatever was imported before.

Rules of the graph:
- a node is a module's dotted name; ``jacobians/`` and ``verification/`` are named as
  installed (``dualad.jacobians...``, ``dualad.verification...``), ``papers/`` as ``papers``;
- every import counts, at module level or inside a function (a late import that dodges a
  cycle at load time is still a cycle in the design);
- ``import a.b.c`` is an edge to ``a.b.c``; ``from a.b import c`` is an edge to ``a.b.c``
  when that is a module, else to ``a.b``; relative imports are resolved against the
  importing module's package;
- loading ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, but those are *not*
  counted as edges: a package's ``__init__`` imports its submodules only where it says so.
"""
import ast
import collections
import functools
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# folder on disk -> dotted name it installs (or runs) as
TREES = {"dualad": "dualad", "jacobians": "dualad.jacobians",
         "verification": "dualad.verification", "papers": "papers"}

Import = collections.namedtuple("Import", "source path line target")


def modules(trees=TREES):
    """``{dotted name: (path, is_package)}`` for every ``.py`` file under ``trees``."""
    found = {}
    for folder, name in trees.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = list(rel.parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join([name, *parts])] = (path, is_package)
    return found


def _resolve_relative(module, is_package, level, target):
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        package = package[:-(level - 1)]
    return ".".join([*package, target] if target else package)


def nodes(path):
    """Every node of ``path``'s syntax tree (``ast.walk`` order), parsed once per session
    and per file content (test_imports and test_layering read the same ~250 files)."""
    return _nodes(str(path), pathlib.Path(path).read_text())


@functools.lru_cache(maxsize=None)
def _nodes(path, text):
    return tuple(ast.walk(ast.parse(text, filename=path)))


def imports(known=None):
    """Every import statement of every module, as :class:`Import` records whose ``target``
    is the imported module's dotted name (resolved as the module docstring says)."""
    known = modules() if known is None else known
    found = []
    for module, (path, is_package) in known.items():
        for node in nodes(path):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found.append(Import(module, path, node.lineno, alias.name))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = _resolve_relative(module, is_package, node.level, node.module)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.append(Import(module, path, node.lineno,
                                        sub if sub in known else base))
    return found


def graph(known=None):
    """``{module: {imported internal module: first line}}`` (edges to outside modules dropped)."""
    known = modules() if known is None else known
    edges = {m: {} for m in known}
    for imp in imports(known):
        if imp.target in known and imp.target != imp.source:
            edges[imp.source].setdefault(imp.target, imp.line)
    return edges


def _shortest_path(edges, start, goal):
    """The shortest chain of edges start -> ... -> goal (breadth first), or None."""
    before = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = []
            while node is not None:
                path.append(node)
                node = before[node]
            return path[::-1]
        for nxt in edges[node]:
            if nxt not in before:
                before[nxt] = node
                queue.append(nxt)
    return None


def cycles(edges):
    """The shortest cycle through each edge that lies on one, each as a tuple of modules
    rotated to start at its smallest name, shortest first. Empty iff the graph is acyclic."""
    found = set()
    for source in edges:
        for target in edges[source]:
            back = _shortest_path(edges, target, source)
            if back is not None:
                ring = [source, *back[:-1]]
                i = ring.index(min(ring))
                found.add(tuple(ring[i:] + ring[:i]))
    return sorted(found, key=lambda ring: (len(ring), ring))


def show(ring, edges):
    """``a -> b (line 12 of a) -> ... -> a`` for a failure message."""
    hops = [f"{a} -> {b} (line {edges[a][b]})"
            for a, b in zip(ring, ring[1:] + ring[:1])]
    return ";  ".join(hops)

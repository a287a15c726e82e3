"""The planner (jacobians/), the oracles (verification/) and the paper reproductions
(papers/) use dualad the way a user does: through its public names (``dualad``,
``dualad.numpy``, ``dualad.scipy``) and the extension surface ``dualad.extend``, never
its internal modules, whose layout may change. Checked statically (``ast``), imports
inside functions and attribute chains such as ``dualad.core.tracer.primal_value`` included.
"""
import ast

import import_graph

OUTSIDE = ("jacobians", "verification", "papers")
ALLOWED = {"dualad", "dualad.extend", "dualad.numpy", "dualad.teaching",   # teaching: its public names
           "dualad.vmap", "dualad.jit"}   # public functions that shadow their modules' names
ALLOWED |= {"dualad.revolve"}   # the checkpointing schedule: a public module (docs/revolve.md)
ALLOWED |= {"dualad.tree"}   # pytrees and their registry: a public module (docs/pytrees.md)
ALLOWED_TREES = ("dualad.scipy", "dualad.jacobians", "dualad.verification")


def allowed(target):
    return (not (target == "dualad" or target.startswith("dualad."))
            or target in ALLOWED
            or any(target == t or target.startswith(t + ".") for t in ALLOWED_TREES))


def internal_uses():
    """``(path, line, what)`` for every use of a dualad internal outside dualad/."""
    known = import_graph.modules()
    found = []
    for imp in import_graph.imports(known):
        if imp.path.relative_to(import_graph.ROOT).parts[0] in OUTSIDE \
                and not allowed(imp.target):
            found.append((imp.path, imp.line, f"import of {imp.target}"))
    for folder in OUTSIDE:
        for path in sorted((import_graph.ROOT / folder).rglob("*.py")):
            for node in import_graph.nodes(path):
                # dualad.<internal module>.<name>, reached through a plain ``import dualad``
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id == "dualad":
                    target = f"dualad.{node.attr}"
                    if target in known and not allowed(target):
                        found.append((path, node.lineno, f"attribute {target}"))
    return found


def test_only_public_names_and_dualad_extend_outside_dualad():
    bad = internal_uses()
    assert not bad, "dualad internals used outside dualad/ (use dualad.extend):\n" + "\n".join(
        f"  {path.relative_to(import_graph.ROOT)}:{line}: {what}" for path, line, what in bad)


def test_the_rule_is_enforced():
    """The checker itself flags what it should and passes what it should."""
    assert not allowed("dualad.core.tracer")
    assert not allowed("dualad.ops.core.shape")
    assert not allowed("dualad.teaching.evaltrace")
    assert all(allowed(t) for t in ("dualad", "dualad.extend", "dualad.numpy",
                                    "dualad.scipy.linalg", "dualad.jacobians.dense",
                                    "dualad.verification", "numpy", "papers._compare"))


def test_dualad_extend_exports_what_it_documents():
    """Every name in ``dualad.extend.__all__`` exists and is named in its docstring."""
    import dualad.extend as extend
    for name in extend.__all__:
        assert hasattr(extend, name), name
        assert name in extend.__doc__, f"dualad.extend.{name} is not documented"

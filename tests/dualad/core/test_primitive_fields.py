"""``Primitive`` keeps its declarations in explicit, documented fields (no ad-hoc attributes)."""
import inspect

import numpy as np
import pytest

import dualad
from dualad.core.primitive import REGISTRY, Primitive

FIELDS = ("sympy", "zero_derivative", "linear", "nondiff_argnums", "elementwise", "sparsity",
          "implements", "samples", "domain", "complex_domain", "holomorphic",
          "symbolic_rules", "cores", "rule_guard", "function_class", "wraps", "doc")


def test_every_field_has_a_default_and_a_line_in_the_docstring():
    p = Primitive("fields_for_test", np.sin)
    assert not hasattr(p, "__dict__")
    for name in FIELDS + ("rules", "derivs", "batch_rules"):
        getattr(p, name)   # set in __init__: a plain read never raises
        assert f"``{name}" in Primitive.__doc__, name
    assert set(FIELDS) <= set(inspect.signature(Primitive).parameters)


def test_an_undeclared_attribute_is_refused():
    p = Primitive("typo_for_test", np.sin)
    with pytest.raises(AttributeError):
        p.sampels = []


def test_a_users_primitive_keeps_its_function_doc_and_signature():
    @dualad.primitive
    def scaled(x, factor=2.0):
        """Multiply by a factor."""
        return factor * x
    assert scaled.__doc__ == "Multiply by a factor." and scaled.wraps is scaled.impl
    assert str(inspect.signature(scaled)) == "(x, factor=2.0)"
    assert Primitive.__doc__.startswith("An operation the interpreters know")
    assert REGISTRY["sin"].__doc__ == Primitive.__doc__
    assert not hasattr(REGISTRY["sin"], "__wrapped__")


def test_declarations_are_fields_of_the_registry():
    assert REGISTRY["sin"].elementwise and REGISTRY["sin"].holomorphic
    assert REGISTRY["max"].symbolic_rules is False
    assert REGISTRY["eigh"].cores is not None and REGISTRY["eigh"].sparsity == "matrix"
    assert REGISTRY["sum"].sparsity == "reduction"


def test_rules_live_in_their_interpreters_tables():
    """Each interpreter reads its own table, named and claimed by it; a primitive's rules
    are its entries (``prim.rules``, by table). A new interpreter adds a table, not a field."""
    from dualad.extend import TABLES, rule_table
    owners = {name: t.owner for name, t in TABLES.items()}
    assert owners["jvp"] == owners["jvp_all"] == "dualad.interpreters.forward"
    assert owners["vjp"] == owners["vjp_all"] == "dualad.interpreters.reverse"
    assert owners["batch"] == owners["linear_batched"] == "dualad.interpreters.batching"
    assert all(t.doc for t in TABLES.values())
    sin, solve = REGISTRY["sin"], REGISTRY["solve"]
    assert set(rule_table("jvp", per_argument=True).get(sin)) == {0}
    assert rule_table("jvp_all").get(sin) is None and rule_table("jvp_all").has(solve)
    assert rule_table("vjp_all").has(solve)
    with pytest.raises(ValueError, match="owned by dualad.interpreters.forward"):
        rule_table("jvp", per_argument=True, owner="someone.else")
    with pytest.raises(ValueError, match="per_argument"):
        rule_table("jvp")


def test_a_new_interpreters_table_needs_no_new_field():
    from dualad.extend import rule_table
    table = rule_table("test_only_taylor", owner=__name__, doc="a test's table")
    p = Primitive("table_for_test", np.sin)
    assert table.get(p) is None and not table.has(p)
    table.set(p, len)
    assert table.get(p) is len and table.has(p)

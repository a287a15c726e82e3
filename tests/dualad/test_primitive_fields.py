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
    for name in FIELDS + ("jvps", "vjps", "jvp_all", "vjp_all", "derivs",
                          "batch_rules"):
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

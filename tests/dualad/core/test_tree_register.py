"""dualad.tree: the one registry of pytree nodes (register, register_dataclass, named
tuples) and JAX's spellings (flatten/unflatten/leaves/structure/map), with misuse.

Expected values are hand-derived: for loss(p) = sum(sin(w) * b) + b**2,
d/dw = cos(w) * b and d/db = sum(sin(w)) + 2 b.
"""
import dataclasses
import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np
import pytest

import dualad
from dualad import tree


class Pair:
    """A user class registered with flatten/unflatten; ``tag`` is static (aux)."""
    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag


tree.register(Pair, lambda p: ((p.a, p.b), p.tag), lambda tag, ch: Pair(*ch, tag))


@tree.register_dataclass
@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float
    act: str = dataclasses.field(default="tanh", metadata={"static": True})


class Point(NamedTuple):
    x: float
    y: np.ndarray


def test_jax_spellings_are_the_existing_functions():
    from dualad.core import tree as core_tree
    from dualad import extend
    assert tree.map is core_tree.tree_map is extend.tree_map
    assert tree.flatten is core_tree.flatten is extend.flatten


def test_flatten_unflatten_leaves_structure_of_builtins():
    t = {"a": (1.0, [2.0, 3.0]), "b": Point(4.0, np.array([5.0]))}
    leaves, treedef = tree.flatten(t)
    assert leaves[:4] == [1.0, 2.0, 3.0, 4.0] and leaves[4].tolist() == [5.0]
    assert tree.leaves(t)[:4] == [1.0, 2.0, 3.0, 4.0]
    assert tree.structure(t) == treedef and hash(tree.structure(t)) == hash(treedef)
    back = tree.unflatten(treedef, [10, 20, 30, 40, 50])
    assert back == {"a": (10, [20, 30]), "b": Point(40, 50)}
    assert type(back["b"]) is Point
    assert treedef([10, 20, 30, 40, 50]) == back        # the treedef rebuilds when called
    assert repr(treedef) == "TreeDef({'a': (*, [*, *]), 'b': Point(*, *)})"


def test_map_over_several_trees_and_registered_nodes():
    got = tree.map(lambda x, y: x + y, Pair(1.0, [2.0]), Pair(10.0, [20.0]))
    assert type(got) is Pair and got.a == 11.0 and got.b == [22.0] and got.tag == "t"


def test_registered_class_flattens_with_its_aux_in_the_structure():
    leaves, td = tree.flatten(Pair(1.0, (2.0, 3.0), tag="x"))
    assert leaves == [1.0, 2.0, 3.0]
    assert td != tree.structure(Pair(1.0, (2.0, 3.0), tag="y"))   # aux differs
    assert td == tree.structure(Pair(9.0, (8.0, 7.0), tag="x"))
    back = td([4.0, 5.0, 6.0])
    assert (back.a, back.b, back.tag) == (4.0, (5.0, 6.0), "x")


def test_dataclass_static_fields_are_aux_and_data_fields_children():
    layer = Layer(np.array([1.0, 2.0]), 0.5, act="relu")
    leaves, td = tree.flatten(layer)
    assert len(leaves) == 2 and leaves[1] == 0.5
    assert td != tree.structure(Layer(np.ones(2), 0.5))            # act differs
    back = td([np.zeros(2), 1.5])
    assert type(back) is Layer and back.act == "relu" and back.b == 1.5


def test_register_dataclass_with_explicit_fields_and_drop_fields():
    @dataclasses.dataclass
    class Scaled:
        x: np.ndarray
        scale: float
        n: int = dataclasses.field(init=False, default=0)
    tree.register_dataclass(Scaled, data_fields=["x"], meta_fields=["scale"],
                            drop_fields=[])
    leaves, td = tree.flatten(Scaled(np.ones(2), 3.0))
    assert len(leaves) == 1 and td([np.zeros(2)]).scale == 3.0


def test_leaves_with_path_names_fields():
    t = {"layers": [Layer(np.ones(1), 2.0), Point(1.0, np.zeros(1))], "p": Pair(3.0, 4.0)}
    paths = [p for p, _ in tree.leaves_with_path(t)]
    assert paths == ["['layers'][0].w", "['layers'][0].b", "['layers'][1].x",
                     "['layers'][1].y", "['p'][0]", "['p'][1]"]


def test_grad_through_each_kind_of_node_matches_hand_derivation():
    w = np.array([0.5, -1.0])
    for p in (Pair(w, 0.3), Layer(w, 0.3), Point(0.3, w)):
        wv, bv = (p.a, p.b) if isinstance(p, Pair) else \
            ((p.w, p.b) if isinstance(p, Layer) else (p.y, p.x))

        def loss(q):
            qw, qb = (q.a, q.b) if isinstance(q, Pair) else \
                ((q.w, q.b) if isinstance(q, Layer) else (q.y, q.x))
            return np.sum(np.sin(qw) * qb) + qb ** 2
        g = dualad.grad(loss)(p)
        assert type(g) is type(p)
        gw, gb = (g.a, g.b) if isinstance(g, Pair) else \
            ((g.w, g.b) if isinstance(g, Layer) else (g.y, g.x))
        np.testing.assert_allclose(gw, np.cos(wv) * bv, rtol=1e-14)
        np.testing.assert_allclose(gb, np.sum(np.sin(wv)) + 2 * bv, rtol=1e-14)


# --- misuse ---------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [dict, list, tuple, np.ndarray, float, int, type(None)])
def test_registering_a_builtin_is_refused(cls):
    with pytest.raises(TypeError, match=rf"dualad.tree.register: {cls.__name__} is built in"):
        tree.register(cls, lambda x: ((), None), lambda aux, ch: None)


def test_registering_an_ndarray_subclass_or_a_named_tuple_is_refused():
    class Sub(np.ndarray):
        pass
    with pytest.raises(TypeError, match="Sub is built in"):
        tree.register(Sub, lambda x: ((), None), lambda aux, ch: None)
    with pytest.raises(TypeError, match="Point is a named tuple, a pytree node already"):
        tree.register(Point, lambda x: ((), None), lambda aux, ch: None)


def test_registering_twice_is_refused_and_keeps_the_first():
    with pytest.raises(ValueError, match="Pair is registered already"):
        tree.register(Pair, lambda p: ((p.a,), None), lambda aux, ch: Pair(ch[0], 0.0))
    assert tree.leaves(Pair(1.0, 2.0)) == [1.0, 2.0]
    with pytest.raises(ValueError, match="Layer is registered already"):
        tree.register_dataclass(Layer)


def test_register_wants_a_class_and_callables():
    with pytest.raises(TypeError, match="register: nodetype must be a class, got Pair"):
        tree.register(Pair(1, 2), lambda p: ((), None), lambda a, c: None)

    class Fresh:
        pass
    with pytest.raises(TypeError, match="flatten must be callable, got NoneType"):
        tree.register(Fresh, None, lambda a, c: None)
    assert tree.is_leaf(Fresh())         # a refused registration registers nothing


def test_register_dataclass_misuse():
    class NotDC:
        pass
    with pytest.raises(TypeError, match="NotDC is not a dataclass"):
        tree.register_dataclass(NotDC)

    @dataclasses.dataclass
    class D:
        x: float
        y: float
    with pytest.raises(TypeError, match="give both data_fields and meta_fields"):
        tree.register_dataclass(D, data_fields=["x"])
    with pytest.raises(ValueError, match=r"missing \['y'\], unknown or repeated \['z'\]"):
        tree.register_dataclass(D, data_fields=["x"], meta_fields=["z"])
    assert tree.is_leaf(D(1.0, 2.0))


def test_a_flatten_returning_the_wrong_shape_is_named():
    class Bad:
        pass
    tree.register(Bad, lambda b: [1.0, 2.0, 3.0], lambda aux, ch: Bad())
    with pytest.raises(TypeError, match=r"flatten function registered for Bad returned list, "
                                        r"not \(children, aux_data\)"):
        tree.flatten(Bad())


def test_unflatten_misuse():
    td = tree.structure((1.0, 2.0))
    with pytest.raises(ValueError, match=r"has 2 leaf\(s\) but 3 were given"):
        tree.unflatten(td, [1, 2, 3])
    with pytest.raises(TypeError, match="treedef must be the structure"):
        tree.unflatten(lambda leaves: leaves, [1])


def test_a_mismatched_tangent_names_the_field_path():
    p = Layer((np.ones(2), np.ones(2)), 1.0)
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\].w is an array of shape \(2,\) "
                                         r"but its primal is a tuple of 2 item\(s\)"):
        dualad.jvp(lambda q: q.w[0] * q.b, (p,), (Layer(np.ones(2), 1.0),))
    with pytest.raises(ValueError, match=r"tangents\[0\] is a dict .* but its primal is a "
                                         r"Layer \(registered pytree node\)"):
        dualad.jvp(lambda q: q.w * q.b, (p,), ({"w": np.ones(2), "b": 1.0},))


def test_a_dict_subclass_may_be_registered_and_then_keeps_its_type():
    class Config(OrderedDict):
        pass
    tree.register(Config, lambda c: (tuple(c.values()), tuple(c)),
                  lambda keys, ch: Config(zip(keys, ch)))
    got = tree.map(lambda x: 2 * x, Config(a=1.0, b=2.0))
    assert type(got) is Config and dict(got) == {"a": 2.0, "b": 4.0}


def test_registration_from_threads_is_exactly_once():
    class Shared:
        def __init__(self, v):
            self.v = v
    wins, errors = [], []

    def go():
        try:
            tree.register(Shared, lambda s: ((s.v,), None), lambda aux, ch: Shared(*ch))
            wins.append(1)
        except ValueError:
            errors.append(1)
    threads = [threading.Thread(target=go) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(errors) == 7


def test_structures_compare_by_kind_not_by_shape_of_containers():
    assert tree.structure(Point(1.0, 2.0)) != tree.structure((1.0, 2.0))   # a named tuple
    assert tree.structure(Point(1.0, 2.0)) == tree.structure(Point(3.0, np.ones(4)))
    assert tree.structure([1.0]) != tree.structure((1.0,))
    assert tree.structure({"a": 1.0, "b": 2.0}) != tree.structure({"b": 2.0, "a": 1.0})
    assert tree.is_leaf(None) and tree.is_leaf(np.ones(2)) and not tree.is_leaf(())
    assert tree.leaves(Pair((), [])) == []


def test_stop_gradient_names_the_field_of_a_refused_leaf():
    with pytest.raises(TypeError, match=r"stop_gradient: x\.b is a str \('text'\)"):
        dualad.stop_gradient(Layer(np.ones(2), "text"))
    got = dualad.stop_gradient(Layer(np.ones(2), 2.0, act="relu"))
    assert type(got) is Layer and got.act == "relu"


def test_vmap_out_axes_of_another_kind_than_the_output_is_named():
    with pytest.raises(ValueError, match=r"vmap\(<lambda>\): out_axes is a tuple of 2 item\(s\) "
                                         r"but the value there is a Layer \(registered pytree "
                                         r"node\)"):
        dualad.vmap(lambda x: Layer(x, x), out_axes=(0, 0))(np.ones((2, 3)))


def test_unflatten_through_a_user_function_that_fails_is_not_hidden():
    class Strict:
        def __init__(self, x):
            self.x = x

    def unflatten(aux, children):
        raise RuntimeError("Strict cannot be rebuilt")
    tree.register(Strict, lambda s: ((s.x,), None), unflatten)
    leaves, td = tree.flatten(Strict(1.0))
    with pytest.raises(RuntimeError, match="Strict cannot be rebuilt"):
        td([2.0])


def test_an_unflatten_returning_none_is_named():
    class Forgetful:
        def __init__(self, x):
            self.x = x
    tree.register(Forgetful, lambda f: ((f.x,), None), lambda aux, ch: None)
    with pytest.raises(TypeError, match=r"unflatten function registered for Forgetful "
                                        r"returned None"):
        dualad.grad(lambda f: f.x ** 2)(Forgetful(3.0))


def test_is_leaf_keeps_chosen_nodes_whole():
    t = {"a": (1.0, 2.0), "b": [3.0, (4.0, 5.0)]}
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2      # noqa: E731
    assert tree.leaves(t, is_leaf=is_pair) == [(1.0, 2.0), 3.0, (4.0, 5.0)]
    got = tree.map(lambda p: p[0] + p[1] if isinstance(p, tuple) else p, t, is_leaf=is_pair)
    assert got == {"a": 3.0, "b": [3.0, 9.0]}
    leaves, td = tree.flatten(Pair((1.0, 2.0), 3.0), is_leaf=is_pair)
    assert leaves == [(1.0, 2.0), 3.0] and td.num_leaves == 2
    assert tree.structure(t, is_leaf=is_pair) != tree.structure(t)


def test_map_over_trees_of_different_leaf_counts_is_refused():
    with pytest.raises(ValueError, match=r"tree_map: tree 1 of rest has 1 leaf\(s\) but the "
                                         r"first tree has 2"):
        tree.map(lambda x, y: x + y, (1.0, 2.0), (1.0,))

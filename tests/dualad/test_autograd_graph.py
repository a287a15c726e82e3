"""grad_fn / next_functions, requires_grad_, materialize_grads and graph_of on
dualad.autograd, against PyTorch's documented semantics (expected values by hand)."""
import numpy as np
import pytest

from dualad.autograd import Variable, grad, graph_of
from dualad._autograd_graph import AccumulateGrad, BackwardNode, backward_name


def _leaf(v, dtype=float):
    return Variable(np.array(v, dtype=dtype), requires_grad=True)


# ---------------------------------------------------------------- grad_fn

def test_leaves_and_constants_have_no_grad_fn():
    x = _leaf([1.0, 2.0])
    c = Variable(np.ones(2))
    assert x.grad_fn is None and c.grad_fn is None
    assert (c * 2.0).grad_fn is None           # computed from constants only: no graph


def test_a_product_with_a_number_shows_an_accumulate_grad_and_a_none():
    x = _leaf([1.0, 2.0])
    y = x * 2.0
    fn = y.grad_fn
    assert isinstance(fn, BackwardNode) and fn.name() == "MulBackward"
    assert fn.primitive == "multiply"
    (acc, i), (none, j) = fn.next_functions
    assert isinstance(acc, AccumulateGrad) and acc.variable is x and i == 0
    assert acc.name() == "AccumulateGrad" and acc.next_functions == ()
    assert none is None and j == 0
    assert "MulBackward" in repr(fn) and "(2,)" in repr(fn)


def test_a_constant_variable_operand_is_none_and_an_index_is_no_operand():
    x = _leaf([1.0, 2.0])
    c = Variable(np.array([3.0, 4.0]))
    assert (c * x).grad_fn.next_functions[0] == (None, 0)
    y = x[1]
    assert y.grad_fn.name() == "IndexBackward"
    assert y.grad_fn.next_functions == ((AccumulateGrad(x), 0),)


def test_walking_grad_fn_shows_the_recorded_graph():
    x = _leaf([0.5, 1.5])
    w = _leaf([2.0, -1.0])
    loss = np.sum(np.exp(x) * w + x)
    seen, order, stack = set(), [], [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    assert sorted(order) == sorted(["SumBackward", "AddBackward", "MulBackward",
                                    "ExpBackward", "AccumulateGrad", "AccumulateGrad"])
    add = loss.grad_fn.next_functions[0][0]
    mul, acc_x = (n for n, _ in add.next_functions)
    assert mul.name() == "MulBackward" and acc_x.variable is x
    exp, acc_w = (n for n, _ in mul.next_functions)
    assert exp.name() == "ExpBackward" and acc_w.variable is w
    assert exp.next_functions[0][0] == acc_x   # x's node, reached by two paths, is one node


def test_grad_fn_nodes_of_one_variable_compare_equal():
    x = _leaf(1.0)
    y = np.sin(x)
    assert y.grad_fn == y.grad_fn and hash(y.grad_fn) == hash(y.grad_fn)
    assert y.grad_fn != np.sin(x).grad_fn


def test_next_functions_after_a_sweep_that_freed_the_graph_says_retain_graph():
    x = _leaf(1.0)
    y = np.sin(x) * 2.0
    y.backward(retain_graph=True)
    assert y.grad_fn.next_functions[0][0].name() == "SinBackward"
    y.backward()
    with pytest.raises(RuntimeError, match="MulBackward.next_functions.*retain_graph=True"):
        y.grad_fn.next_functions


@pytest.mark.parametrize("prim, name", [("multiply", "MulBackward"), ("add", "AddBackward"),
                                        ("subtract", "SubBackward"), ("sin", "SinBackward"),
                                        ("log1p", "Log1pBackward"), ("sum", "SumBackward"),
                                        ("sort_permute", "SortPermuteBackward")])
def test_backward_names_follow_pytorch(prim, name):
    assert backward_name(prim) == name


# ---------------------------------------------------------------- requires_grad_

def test_requires_grad_on_a_leaf_in_place_returns_it():
    x = Variable(np.array([1.0, 2.0]))
    assert not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    np.sum(x * x).backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])
    x.requires_grad_(False)
    y = x * x
    assert not y.requires_grad and y.grad_fn is None


def test_the_requires_grad_setter_is_requires_grad_():
    x = Variable(np.array([1.0]))
    x.requires_grad = True
    assert x.requires_grad and (x * 3.0).grad_fn.name() == "MulBackward"


def test_requires_grad_refuses_an_integer_leaf_and_a_non_bool():
    with pytest.raises(TypeError, match="requires_grad_.*int64.*astype"):
        Variable(np.array([1, 2])).requires_grad_()
    with pytest.raises(TypeError, match="must be a bool, got str"):
        Variable(np.array([1.0])).requires_grad_("yes")


def test_requires_grad_false_on_a_computed_variable_says_detach():
    x = _leaf([1.0, 2.0])
    y = x * 2.0
    assert y.requires_grad_(True) is y          # already on the graph: nothing to do
    with pytest.raises(RuntimeError, match=r"leaf.*'multiply'.*detach\(\)"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad = False
    assert y.requires_grad


# ---------------------------------------------------------------- materialize_grads

def test_grad_refuses_an_unused_input_by_default_and_names_both_ways_out():
    x, w = _leaf(1.0), _leaf(2.0)
    with pytest.raises(RuntimeError, match="inputs\\[1\\].*allow_unused=True.*"
                                           "materialize_grads=True"):
        grad(x * 3.0, [x, w])


def test_allow_unused_gives_none_and_materialize_grads_gives_zeros():
    x = _leaf([1.0, 2.0])
    w = _leaf([[1.0, 2.0, 3.0]], dtype=np.float32)
    gx, gw = grad(np.sum(x * 3.0), [x, w], allow_unused=True)
    assert gw is None
    gx, gw = grad(np.sum(x * 3.0), [x, w], materialize_grads=True)
    np.testing.assert_array_equal(gx, [3.0, 3.0])
    assert gw.shape == (1, 3) and gw.dtype == np.float32 and not gw.any()


def test_materialize_grads_with_allow_unused_false_raises_as_pytorch():
    x, w = _leaf(1.0), _leaf(2.0)
    with pytest.raises(ValueError, match="materialize_grads=True.*allow_unused=False"):
        grad(x * 3.0, [x, w], allow_unused=False, materialize_grads=True)
    (gx, gw) = grad(x * 3.0, [x, w], allow_unused=True, materialize_grads=True)
    assert float(gx) == 3.0 and float(gw) == 0.0


def test_materialized_zeros_carry_the_batch_axis_and_survive_create_graph():
    x, w = _leaf([1.0, 2.0]), _leaf([5.0, 6.0, 7.0])
    gx, gw = grad(x * x, [x, w], grad_outputs=np.eye(2), is_grads_batched=True,
                  materialize_grads=True)
    np.testing.assert_array_equal(gx, [[2.0, 0.0], [0.0, 4.0]])
    assert gw.shape == (2, 3) and not gw.any()
    gx, gw = grad(np.sum(x ** 3), [x, w], create_graph=True, materialize_grads=True)
    np.testing.assert_array_equal(gx.numpy(), [3.0, 12.0])
    assert not np.asarray(gw).any() and np.shape(gw) == (3,)


# ---------------------------------------------------------------- graph_of (teaching)

def test_graph_of_lays_out_the_recorded_graph_with_its_adjoints():
    x = _leaf(2.0)
    c = Variable(3.0)
    y = x * np.sin(x) + c
    et = graph_of(y)
    want = np.sin(2.0) + 2.0 * np.cos(2.0)           # d/dx (x sin x + c)
    assert et.mode == "reverse"
    assert float(et.derivative[0]) == pytest.approx(want, rel=1e-14)
    assert float(et.derivative[1]) == 1.0            # the constant's adjoint, shown too
    dot = et.to_dot()
    assert dot.startswith("digraph") and dot.count("->") == 5
    text = et.to_text()
    assert "x_1" in text and "c_1" in text and "sin" in text
    assert x.grad is None                            # nothing accumulated
    y.backward()                                     # the graph is still there
    assert float(x.grad) == pytest.approx(want, rel=1e-14)


def test_graph_of_refuses_a_leaf_and_a_freed_graph():
    x = _leaf(2.0)
    with pytest.raises(ValueError, match="graph_of.*leaf"):
        graph_of(x)
    y = np.exp(x)
    y.backward()
    with pytest.raises(RuntimeError, match="graph_of.*retain_graph=True"):
        graph_of(y)


def test_a_custom_function_node_is_named_after_its_class_as_in_pytorch():
    from dualad.autograd import Function

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = _leaf([1.0, 2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"      # PyTorch: CubeBackward
    assert y.grad_fn.next_functions == ((AccumulateGrad(x), 0),)
    np.sum(y).backward()
    np.testing.assert_array_equal(x.grad, [3.0, 12.0])

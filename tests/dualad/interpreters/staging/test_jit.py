"""dualad.jit from the user's side: guards and re-tracing, signatures, outputs, inspection.

Every expected value is a closed form or plain NumPy on plain arrays, never dualad's own
un-jitted result. Misuse: test_jit_misuse.py; composition with the transformations:
test_jit_compose.py.
"""
import ast
import warnings

import numpy as np
import pytest

import dualad
from dualad import JitRetraceWarning, jit


def traces(jitted):
    """Total traces over every signature (jitted.cache_info() values)."""
    return sum(jitted.cache_info().values())


# -- guards: Python control flow on traced values ------------------------------------------

def piecewise(x):
    if x > 0:
        return x * 2.0
    return -x * 3.0


def test_if_guard_replays_each_branch_and_keeps_both_programs():
    f = jit(piecewise)
    assert f(1.0) == 2.0
    assert f(5.0) == 10.0                   # replay of the x > 0 program
    assert traces(f) == 1
    assert f(-2.0) == 6.0                   # the guard fails: traced again, right value
    assert traces(f) == 2
    assert f(-4.0) == 12.0 and f(3.0) == 6.0   # both programs kept: no third trace
    assert traces(f) == 2
    assert len(f.cache_info()) == 1          # one signature, two programs


def babylonian(a, tol=1e-12):
    y = a
    err = 1.0
    while err > tol:
        y_new = 0.5 * (y + a / y)
        err = abs(y_new - y)
        y = y_new
    return y


def test_while_guard_counts_iterations():
    f = jit(babylonian)
    for a in (2.0, 2.0, 9.0, 1e4, 2.0, 0.25):
        assert f(a) == pytest.approx(np.sqrt(a), rel=1e-12)
    # 2.0 is traced once and replayed; each other value needs another iteration count
    assert traces(f) <= 4


def test_int_of_traced_value_as_index():
    f = jit(lambda x, i: x[int(i)] * 2.0)
    x = np.arange(5.0) + 10.0
    assert f(x, np.float64(2.0)) == 24.0
    assert f(x, np.float64(3.0)) == 26.0     # int guard fails: re-traced, right element
    assert f(x, np.float64(3.0)) == 26.0
    assert traces(f) == 2


def test_range_of_int_of_traced_value():
    def power_sum(x, n):
        s = 0.0
        for k in range(int(n)):
            s = s + x ** (k + 1)
        return s
    f = jit(power_sum)
    assert f(2.0, np.float64(3)) == 2.0 + 4.0 + 8.0
    assert f(3.0, np.float64(3)) == 3.0 + 9.0 + 27.0       # same count: a replay
    assert traces(f) == 1
    assert f(2.0, np.float64(4)) == 30.0
    assert traces(f) == 2


@pytest.mark.parametrize("read", [float, lambda x: x.item()], ids=["float", "item"])
def test_reading_the_value_guards_the_whole_value(read):
    f = jit(lambda x: x * read(x))
    x = np.array(2.0)
    assert f(x) == 4.0
    assert f(np.array(3.0)) == 9.0           # float(x) was baked as 2.0: the guard re-traces
    assert f(np.array(3.0)) == 9.0
    assert traces(f) == 2
    g = f.program(np.array(3.0)).guards
    assert [gd.kind for gd in g] == ["equal"]


def test_guard_on_array_reduction():
    f = jit(lambda x: np.sum(x ** 2) if np.all(x > 0) else np.sum(x))
    assert f(np.array([1.0, 2.0])) == 5.0
    assert f(np.array([1.0, -2.0])) == -1.0
    assert f(np.array([3.0, 1.0])) == 10.0
    assert traces(f) == 2


def test_index_array_and_mask_arguments():
    x = np.arange(6.0) * 1.5
    take = jit(lambda x, i: x[i])
    np.testing.assert_array_equal(take(x, np.array([1, 4])), x[[1, 4]])
    np.testing.assert_array_equal(take(x, np.array([0, 5])), x[[0, 5]])   # new index: re-trace
    masked = jit(lambda x: np.sum(x[x > 4.0] ** 2))
    assert masked(x) == pytest.approx(np.sum(x[x > 4.0] ** 2))
    y = x[::-1] - 3.0
    assert masked(y) == pytest.approx(np.sum(y[y > 4.0] ** 2))      # another mask: re-trace


def test_thrashing_warns_once_names_guard_and_line_then_runs_eagerly():
    def scaled(x):
        return x * float(x)        # reads the value: every new x fails the guard
    f = jit(scaled, max_traces=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [f(float(k)) for k in range(10)]
    assert results == [float(k * k) for k in range(10)]
    retrace = [w for w in caught if issubclass(w.category, JitRetraceWarning)]
    assert len(retrace) == 1
    msg = str(retrace[0].message)
    assert "dualad.jit(scaled)" in msg and "traced 3 times" in msg
    assert "equal to its traced value" in msg
    assert "test_jit.py" in msg and "in scaled" in msg          # the user's line
    assert retrace[0].filename == __file__                       # points at the call
    assert traces(f) == 4           # 3 programs, then the 4th trace was refused
    assert f(11.0) == 121.0         # stays correct (eager), no more warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(12.0) == 144.0


def test_thrash_of_one_signature_leaves_others_jitted():
    f = jit(lambda x: x * float(np.sum(x)), max_traces=2)
    with pytest.warns(JitRetraceWarning):
        for k in range(4):
            f(np.full(2, float(k)))
    g = np.ones(3)
    np.testing.assert_allclose(f(g), g * 3.0)
    before = traces(f)
    np.testing.assert_allclose(f(g), g * 3.0)
    assert traces(f) == before      # the (3,) signature replays


# -- signatures ---------------------------------------------------------------------------

@pytest.mark.parametrize("x", [
    np.float32(1.5), np.arange(3, dtype=np.float32), np.array([1 + 2j, 3j]),
    np.arange(3), np.array([True, False]), 1.5, 1 + 1j, np.float64(2.0), np.int64(3),
    np.complex64(1 + 1j), np.array(2.0), np.zeros(0), np.zeros((2, 0)),
], ids=lambda x: f"{type(x).__name__}-{getattr(x, 'dtype', '')}-{np.shape(x)}")
def test_values_types_and_dtypes_match_numpy(x):
    f = jit(lambda x: x * 2 + 1)
    for _ in range(2):      # trace, then replay
        got = f(x)
        want = x * 2 + 1
        assert type(got) is type(want)
        assert np.shape(got) == np.shape(want)
        assert np.result_type(got) == np.result_type(want)
        np.testing.assert_array_equal(got, want)


def test_new_shape_dtype_or_structure_traces_again():
    f = jit(lambda x: np.sum(x * x))
    f(np.ones(3))
    f(np.ones(3) * 2)
    assert traces(f) == 1
    assert f(np.ones(4)) == 4.0                         # shape
    assert f(np.ones(3, np.float32)) == np.float32(3.0)   # dtype
    assert type(f(np.ones(3, np.float32))) is np.float32
    assert f(2.0) == 4.0                                # Python float
    assert len(f.cache_info()) == 4
    g = jit(lambda t: sum(np.sum(a) for a in t))
    assert g((np.ones(2), np.ones(3))) == 5.0
    assert g([np.ones(2), np.ones(3)]) == 5.0           # list vs tuple: another signature
    assert g((np.ones(2),)) == 2.0
    assert len(g.cache_info()) == 3


def test_pytrees_kwargs_and_none_leaves():
    def f(params, x, *, scale=1.0, bias=None):
        y = params["w"] * x + params["b"][0]
        if bias is not None:
            y = y + bias
        return {"y": y * scale, "parts": (params["b"][1], None)}
    j = jit(f)
    p = {"w": np.array([1.0, 2.0]), "b": [0.5, np.array(3.0)]}
    for _ in range(2):
        out = j(p, np.array([3.0, 4.0]), scale=2.0)
        np.testing.assert_array_equal(out["y"], [7.0, 17.0])
        assert out["parts"][0] == 3.0 and out["parts"][1] is None
    out = j(p, np.array([3.0, 4.0]), scale=2.0, bias=np.ones(2))   # None -> array: new key
    np.testing.assert_array_equal(out["y"], [9.0, 19.0])
    assert len(j.cache_info()) == 2


def test_python_ints_bools_strings_are_static():
    f = jit(lambda x, n, flag, mode: (x ** n if flag else -x) * (2.0 if mode == "a" else 3.0))
    assert f(2.0, 3, True, "a") == 16.0
    assert f(2.0, 2, True, "a") == 8.0
    assert f(2.0, 2, False, "b") == -6.0
    assert len(f.cache_info()) == 3
    assert not f.program(2.0, 3, True, "a").guards     # static: in the key, not guarded


def test_static_argnums_and_argnames():
    f = jit(lambda x, axis, *, keep=False: np.sum(x, axis=axis, keepdims=keep),
            static_argnums=1, static_argnames="keep")
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(f(x, 0), [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(f(x, (0, 1), keep=True), [[15.0]])
    g = jit(lambda x, k: x * k, static_argnums=(1,))
    assert g(2.0, 3.0) == 6.0 and g(2.0, 4.0) == 8.0        # a static float: in the key
    assert len(g.cache_info()) == 2 and not g.program(2.0, 4.0).guards


def test_unhashable_static_argument_is_a_clear_error():
    f = jit(lambda x, shape: np.reshape(x, shape), static_argnums=1)
    with pytest.raises(TypeError, match=r"static argument 1 of <lambda> must be hashable.*list"):
        f(np.ones(4), [2, 2])
    g = jit(lambda x, opts=None: x, static_argnames="opts")
    with pytest.raises(TypeError, match=r"static argument 'opts'.*hashable.*dict"):
        g(1.0, opts={"a": 1})
    h = jit(lambda x, s: x)
    with pytest.raises(TypeError, match=r"<lambda>: argument 1 is 'set'.*neither trace"):
        h(1.0, {1, 2})
    with pytest.raises(TypeError, match=r"object array"):
        h(np.array([1.0, None]), 1)


@pytest.mark.parametrize("fun, want", [
    (lambda x: (x, x * 2.0, 5), (2.0, 4.0, 5)),
    (lambda x: {"a": x + 1.0, "b": [x, "tag"]}, {"a": 3.0, "b": [2.0, "tag"]}),
    (lambda x: 3.0, 3.0),
    (lambda x: None, None),
    (lambda x: x, 2.0),
    (lambda x: (), ()),
], ids=["tuple", "dict", "constant", "None", "identity", "empty"])
def test_outputs_of_every_kind(fun, want):
    f = jit(fun)
    for x in (2.0, 2.0):     # trace, then replay
        assert f(x) == want


def test_constant_array_output_is_the_same_values():
    f = jit(lambda x: (np.ones(2), np.sum(x)))
    a, s = f(np.ones(3))
    b, t = f(np.ones(3) * 2)
    np.testing.assert_array_equal(a, [1.0, 1.0])
    np.testing.assert_array_equal(b, [1.0, 1.0])
    assert s == 3.0 and t == 6.0


# -- inspection -----------------------------------------------------------------------------

def test_source_is_valid_python_with_guards_and_program_lists_equations():
    def f(x):
        if np.sum(x) > 0:
            return np.sin(x) * 2.0
        return np.cos(x)
    j = jit(f)
    src = j.source(np.ones(3))
    ast.parse(src)
    assert "RETRACE" in src and "guard" in src and "np.sin" in src
    prog = j.program(np.ones(3))
    text = str(prog)
    assert "sin(" in text and "guard bool(" in text and len(prog.eqns) >= 3
    neg = j.program(-np.ones(3))
    assert "cos(" in str(neg)
    assert traces(j) == 2


def test_source_of_gradient_is_the_adjoint_program():
    j = jit(dualad.grad(lambda x: np.sum(np.tanh(x) * x)))
    src = j.source(np.ones(2))
    ast.parse(src)
    assert "tanh" in src and src.startswith("def ")


def test_program_of_traced_value_is_refused():
    j = jit(lambda x: x * 2.0)
    with pytest.raises(TypeError, match="plain arrays"):
        dualad.grad(lambda x: j.source(x))(1.0)

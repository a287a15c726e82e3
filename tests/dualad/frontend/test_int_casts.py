"""Integer casts of traced values, as code uses them for indexing: a plain integer (array)
with zero derivative (an integer-valued function is constant almost everywhere, as JAX's
astype(int)), logged as a decision; float()/complex()/item()/tolist() keep raising."""
import operator

import numpy as np
import pytest

import dualad
from dualad.interpreters.reverse.tape import VJPTrace
from dualad.verification import check_grads

W = np.random.default_rng(0).standard_normal((5, 4))


class _Log:
    def __init__(self):
        self.notes = []

    def note(self, name, value):
        self.notes.append((name, value))


@pytest.mark.parametrize("cast", [
    lambda v: v.astype(int), lambda v: v.astype(np.intp), lambda v: v.astype(np.int32),
    lambda v: np.int64(v), lambda v: np.asarray(v, dtype=np.int64),
    lambda v: np.floor(v).astype(int), lambda v: (v * 0).astype(int) + 1,
])
def test_integer_cast_gives_plain_integers_with_zero_derivative(cast):
    inds = np.array([0.0, 2.0, 1.0, 2.0, 0.0])

    def f(w):
        glued = np.concatenate((w, inds[:, None]), axis=1)     # the index column is traced
        idx = cast(glued[:, -1])
        assert isinstance(idx, np.ndarray) and idx.dtype.kind == "i"
        return np.sum(w[idx] ** 2)
    idx = cast(inds)
    closed = np.zeros_like(W)
    np.add.at(closed, idx, 2 * W[idx])
    np.testing.assert_allclose(dualad.grad(f)(W), closed)
    check_grads(f, (W,), order=2)


def test_autograd_cast_to_int():
    # autograd's test_numpy.py::test_cast_to_int, on plain NumPy
    inds = np.ones(5)[:, None]

    def fun(w):
        np.concatenate((w, inds), axis=1)
        new_w = w[:, :-1]
        new_inds = np.int64(w[:, -1])
        assert new_inds.dtype == np.int64
        return new_w[new_inds].sum()
    w = np.random.default_rng(1).standard_normal((5, 10))
    w[:, -1] = np.arange(5) % 3
    check_grads(fun, (w,), order=2)


def test_int_round_and_bool_of_a_scalar():
    for cast, expect in [(int, 2), (round, 3), (lambda v: v.astype(bool), True)]:
        def f(x):
            k = cast(x)
            assert type(k) in (int, np.ndarray) and k == expect
            return x * k
        np.testing.assert_allclose(dualad.grad(f)(2.6), float(expect))
        np.testing.assert_allclose(dualad.jvp(f, (2.6,), (1.0,))[1], float(expect))
    x = np.array([1.2, 2.7])
    out = dualad.grad(lambda v: np.sum(v * round(v[1])))(x)   # round of a 0-d entry
    np.testing.assert_allclose(out, [3.0, 3.0])
    np.testing.assert_allclose(dualad.grad(lambda v: np.sum(round(v, 1) * v))(x), [1.2, 2.7])


def test_int_in_a_range_bound_and_second_order():
    def f(x):
        total = 0.0
        for k in range(int(x)):
            total = total + x ** k
        return total
    # f(x) = 1 + x + x² for 3 <= x < 4
    np.testing.assert_allclose(dualad.grad(f)(3.5), 1 + 2 * 3.5)
    np.testing.assert_allclose(dualad.grad(dualad.grad(f))(3.5), 2.0)
    check_grads(f, (np.float64(3.5),), order=2)


def test_integer_casts_are_logged_as_decisions():
    trace = VJPTrace(tape=True)
    trace.decisions = log = _Log()
    x = trace.new_leaf(np.array([1.5, 2.5]))
    x.astype(int)
    int(x[0])
    np.int64(x)
    round(x[1])
    trace.stop()
    names = [n for n, _ in log.notes]
    assert "astype" in names and "int" in names and "np.asarray" in names and "round" in names


@pytest.mark.parametrize("convert, fragment", [
    (float, "float()"), (complex, "complex()"), (lambda v: v.item(), "cannot convert"),
    (lambda v: v.tolist(), "cannot convert"), (operator.index, "operator.index()"),
    (lambda v: np.float64(v), "cannot convert"),
    (lambda v: v.astype(str), "floating and complex"),
])
def test_conversions_that_would_lose_a_derivative_raise(convert, fragment):
    with pytest.raises(TypeError) as info:
        dualad.grad(lambda x: convert(x) * x)(1.5)
    assert fragment in str(info.value)
    with pytest.raises(TypeError):
        dualad.jvp(lambda x: convert(x) * x, (1.5,), (1.0,))


def test_operator_index_says_how_to_cast():
    with pytest.raises(TypeError, match=r"operator.index\(\).*int\(x\), x.astype\(int\)"):
        dualad.grad(lambda x: [1.0, 2.0, 3.0][x] * x)(1.0)

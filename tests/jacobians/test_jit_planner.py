"""The planner under ``dualad.jit``: jit outside (``jit(lambda x: jacobian(F, x))``) and
inside (``jacobian(jit(F), x)``), against SymPy's derivative tensors.

Each jitted planner function is traced ONCE for several points when ``F`` has no
value-dependent branch (the planner's census, cost model and pattern detection read the
primal values without a guard), and its results equal SymPy's and the un-jitted
planner's. A function whose sparsity pattern changes with a branch fails the branch's
guard at a point on the other side, traces again and detects that side's pattern.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sps
import sympy as sp

import dualad
from dualad import jacobians as J
from dualad.jacobians import TracedOutput

N = 5
POINTS = [np.array([0.3, -0.7, 1.1, 0.4, -0.2]), np.array([-0.5, 0.2, 0.9, -1.3, 0.6]),
          np.array([1.2, 0.8, -0.4, 0.1, 0.7])]
_W = np.array([[0.5, -0.2, 0.1, 0.0, 0.3], [0.1, 0.4, -0.3, 0.2, 0.0],
               [0.0, 0.2, 0.6, -0.1, 0.1], [-0.3, 0.0, 0.1, 0.5, 0.2]])


# --- the functions, in NumPy and in SymPy ------------------------------------------------------
def vec(x):
    """R^5 -> R^4 with a bidiagonal Jacobian."""
    return np.sin(x[:-1]) * x[1:] + np.exp(0.3 * x[1:]) * x[:-1] ** 2


def dense_vec(x):
    """R^5 -> R^4, every output depends on every input."""
    return np.tanh(_W @ x) * np.sin(x[:4])


def scal(x):
    """R^5 -> R with a tridiagonal Hessian."""
    return np.sum(np.log(np.cosh(x[:-1] * x[1:]))) + np.sum(x ** 4) / 4 + np.sum(np.sin(x))


S = sp.symbols(f"x0:{N}")
_VEC = [sp.sin(S[i]) * S[i + 1] + sp.exp(sp.Rational(3, 10) * S[i + 1]) * S[i] ** 2
        for i in range(N - 1)]
_DENSE = [sp.tanh(sum(sp.nsimplify(_W[i, j]) * S[j] for j in range(N))) * sp.sin(S[i])
          for i in range(4)]
_SCAL = sum(sp.log(sp.cosh(S[i] * S[i + 1])) for i in range(N - 1)) + \
    sum(v ** 4 for v in S) / 4 + sum(sp.sin(v) for v in S)
_JAC = {"vec": sp.lambdify(S, sp.Matrix(_VEC).jacobian(S), "numpy"),
        "dense_vec": sp.lambdify(S, sp.Matrix(_DENSE).jacobian(S), "numpy")}
_HESS = sp.lambdify(S, sp.hessian(_SCAL, S), "numpy")


def exact_jacobian(name, x):
    return np.array(_JAC[name](*x), dtype=float)


def exact_hessian(x):
    return np.array(_HESS(*x), dtype=float)


V = np.array([0.4, -1.0, 0.3, 0.8, -0.6])
FUNS = {"vec": vec, "dense_vec": dense_vec}


def _dense(a):
    return a.toarray() if sps.issparse(a) else np.asarray(a)


# What each planner function is checked against: (call(F_or_g, x), oracle(x)).
CASES = {
    "jacobian": (lambda f, x: J.jacobian(f, x), lambda x: exact_jacobian("dense_vec", x),
                 dense_vec),
    "jacobian-reverse": (lambda f, x: J.jacobian(f, x, mode="reverse"),
                         lambda x: exact_jacobian("dense_vec", x), dense_vec),
    "jacfwd": (lambda f, x: J.jacfwd(f, x), lambda x: exact_jacobian("vec", x), vec),
    "jacrev": (lambda f, x: J.jacrev(f, x), lambda x: exact_jacobian("vec", x), vec),
    "hessian": (lambda f, x: J.hessian(f, x), exact_hessian, scal),
    "hvp": (lambda f, x: J.hvp(f, x, V), lambda x: exact_hessian(x) @ V, scal),
    "sparse_jacobian": (lambda f, x: J.sparse_jacobian(f, x), lambda x: exact_jacobian("vec", x),
                        vec),
    "sparse_jacobian-reverse": (lambda f, x: J.sparse_jacobian(f, x, mode="reverse"),
                                lambda x: exact_jacobian("vec", x), vec),
    "sparse_hessian": (lambda f, x: J.sparse_hessian(f, x), exact_hessian, scal),
}
HESSIAN_MODES = ["forward-over-reverse", "reverse-over-reverse", "reverse-over-forward",
                 "forward-over-forward"]


def _one_trace(jitted):
    assert list(jitted.cache_info().values()) == [1], jitted.cache_info()


# --- jit outside: jit(lambda x: planner(F, x)) ---------------------------------------------------
@pytest.mark.parametrize("case", sorted(CASES))
def test_jit_outside_traces_once_and_matches_sympy(case):
    call, oracle, fun = CASES[case]
    jitted = dualad.jit(lambda x: call(fun, x))
    for x in POINTS:
        got = jitted(x)
        if case.startswith("sparse"):
            assert isinstance(got, sps.csr_matrix), type(got)   # SciPy's own, as without jit
        np.testing.assert_allclose(_dense(got), oracle(x), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(_dense(got), _dense(call(fun, x)), rtol=1e-13, atol=1e-14)
    _one_trace(jitted)
    assert jitted.program(POINTS[0]).guards == []     # nothing read from the values
    _one_trace(jitted)


@pytest.mark.parametrize("mode", HESSIAN_MODES)
def test_jit_hessian_every_mode(mode):
    jitted = dualad.jit(lambda x: J.hessian(scal, x, mode=mode))
    for x in POINTS:
        h = jitted(x)
        np.testing.assert_allclose(h, exact_hessian(x), rtol=1e-12, atol=1e-13)
        np.testing.assert_array_equal(h, h.T)              # exactly symmetric
    _one_trace(jitted)


def test_jit_hessian_auto_is_forward_over_reverse():
    """The traced path's mode="auto" is forward-over-reverse: no (n, n, n) intermediate
    (it fell through to forward-over-forward, n times the work)."""
    prog = dualad.jit(lambda x: J.hessian(scal, x)).program(POINTS[0])
    assert all(len(prog.avals[e.out][1]) <= 2 for e in prog.eqns), str(prog)


def test_jit_dense_jacobian_program_has_no_result_assembly():
    """One input, one output: the flat Jacobian is the result, no slice or reshape of it."""
    prog = dualad.jit(lambda x: J.jacfwd(dense_vec, x)).program(POINTS[0])
    names = [e.prim.name for e in prog.eqns]
    assert "getitem" not in names[-2:] and "reshape" not in names[-2:], str(prog)


# --- jit inside: planner(jit(F), x) ------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(CASES))
def test_jit_inside_matches_sympy(case):
    call, oracle, fun = CASES[case]
    jitted_f = dualad.jit(fun)
    for x in POINTS:
        got = call(jitted_f, x)
        np.testing.assert_allclose(_dense(got), oracle(x), rtol=1e-12, atol=1e-13)
    _one_trace(jitted_f)


@pytest.mark.parametrize("case", ["jacobian", "hessian", "sparse_jacobian", "sparse_hessian"])
def test_jit_outside_and_inside(case):
    call, oracle, fun = CASES[case]
    jitted_f = dualad.jit(fun)
    jitted = dualad.jit(lambda x: call(jitted_f, x))
    for x in POINTS:
        np.testing.assert_allclose(_dense(jitted(x)), oracle(x), rtol=1e-12, atol=1e-13)
    _one_trace(jitted)


def test_grad_of_a_jitted_hessian_trace():
    """jit of the planner composes with an outer grad: d/dx trace(H(x)) = ∇(Σ_i ∂²f/∂x_i²),
    against SymPy."""
    jitted = dualad.jit(lambda x: J.hessian(scal, x))
    g = dualad.grad(lambda x: np.trace(jitted(x)))
    lap = sum(sp.diff(_SCAL, v, 2) for v in S)
    want = sp.lambdify(S, [sp.diff(lap, v) for v in S], "numpy")
    for x in POINTS[:2]:
        np.testing.assert_allclose(g(x), np.array(want(*x), float), rtol=1e-11)


# --- patterns that change with a branch ----------------------------------------------------------
def branchy(x):
    """x * x[1] (column 1 full, and the diagonal) where x[0] > 0, else x**2 (diagonal)."""
    if x[0] > 0:
        return x * x[1]
    return x ** 2


def branchy_jacobian(x):
    if x[0] > 0:
        j = np.diag(np.full(N, x[1]))
        j[:, 1] += x
        return j
    return np.diag(2 * x)


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_sparse_jacobian_pattern_follows_the_branch(mode):
    """The pattern is detected for the branch the trace took, and the branch's guard is in
    the program: a point on the other side traces again (its own pattern), a point on
    the first side replays the first program."""
    jitted = dualad.jit(lambda x: J.sparse_jacobian(branchy, x, mode=mode))
    pos, neg, pos2 = POINTS[0], -POINTS[0], POINTS[2]
    got = jitted(pos)
    np.testing.assert_allclose(got.toarray(), branchy_jacobian(pos), rtol=1e-14)
    assert got.nnz == 2 * N - 1
    assert [g.kind for g in jitted.program(pos).guards] == ["bool"]
    got = jitted(neg)                                    # guard fails: traced again
    np.testing.assert_allclose(got.toarray(), branchy_jacobian(neg), rtol=1e-14)
    assert got.nnz == N
    assert list(jitted.cache_info().values()) == [2]
    got = jitted(pos2)                                   # the first program, replayed
    np.testing.assert_allclose(got.toarray(), branchy_jacobian(pos2), rtol=1e-14)
    assert got.nnz == 2 * N - 1
    assert list(jitted.cache_info().values()) == [2]


def test_sparse_hessian_pattern_follows_the_branch():
    def g(x):      # x0 x1 Σx (couples 0 and 1 to all) where x[2] > 0, else Σ x⁴ (diagonal)
        if x[2] > 0:
            return x[0] * x[1] * np.sum(x)
        return np.sum(x ** 4)

    def hess(x):
        if x[2] > 0:
            h = np.zeros((N, N))
            s = x.sum()
            h[0, :] += x[1]
            h[:, 0] += x[1]
            h[1, :] += x[0]
            h[:, 1] += x[0]
            h[0, 1] += s
            h[1, 0] += s
            return h
        return np.diag(12 * x ** 2)

    jitted = dualad.jit(lambda x: J.sparse_hessian(g, x))
    for x in [POINTS[0], -POINTS[0], POINTS[0] * 2]:
        np.testing.assert_allclose(jitted(x).toarray(), hess(x), rtol=1e-13, atol=1e-14)
    assert list(jitted.cache_info().values()) == [2]


def test_value_dependent_branch_in_a_dense_jacobian_retraces():
    jitted = dualad.jit(lambda x: J.jacobian(branchy, x))
    for x in [POINTS[0], -POINTS[0], POINTS[2]]:
        np.testing.assert_allclose(jitted(x), branchy_jacobian(x), rtol=1e-14)
    assert list(jitted.cache_info().values()) == [2]


# --- plans ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(mode="forward"), dict(mode="reverse"),
                                    dict(mode="sparse-forward"), dict(mode="sparse-reverse"),
                                    dict(mode="sparse-forward", output="dense"),
                                    dict(mode="sparse-reverse", sparsity=np.eye(4, 5) +
                                         np.eye(4, 5, 1))])
def test_a_prepared_plan_under_jit(kwargs):
    p = J.plan(vec, POINTS[0], calibrate=False, **kwargs)
    jitted = dualad.jit(p)
    for x in POINTS:
        got = jitted(x)
        if p.sparse and kwargs.get("output") != "dense":
            assert isinstance(got, sps.csr_matrix)
        else:
            assert isinstance(got, np.ndarray) and got.shape == (4, N)
        np.testing.assert_allclose(_dense(got), exact_jacobian("vec", x), rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(_dense(got), _dense(p(x)), rtol=1e-13, atol=1e-14)
    _one_trace(jitted)


def test_a_plan_of_a_jitted_function():
    jitted_f = dualad.jit(vec)
    p = J.plan(jitted_f, POINTS[0], calibrate=False)
    for x in POINTS:
        np.testing.assert_allclose(_dense(p(x)), exact_jacobian("vec", x), rtol=1e-12,
                                   atol=1e-13)


def test_plan_refuses_what_it_cannot_do_under_jit():
    with pytest.raises(TracedOutput, match=r"jacobians\.plan: .*traced value.*jit.*make it "
                                           r"outside, p = plan\(f, x0\), and call p\(x\)"):
        dualad.jit(lambda x: J.plan(vec, x)(x))(POINTS[0])
    p = J.plan(vec, POINTS[0], mode="forward", output="sparse", calibrate=False)
    with pytest.raises(TypeError, match=r"output='sparse'\) in mode 'forward' on traced values"):
        dualad.jit(p)(POINTS[0])
    q = J.plan(vec, POINTS[0], mode="forward", calibrate=False)
    with pytest.raises(ValueError, match=r"planned for inputs of shapes \[\(5,\)\], got "
                                         r"\[\(6,\)\]"):
        dualad.jit(q)(np.ones(6))


# --- misuse --------------------------------------------------------------------------------------
def test_jit_planner_float32_and_closures():
    """float32 points trace their own program (another signature) and keep float32; a
    function closing over a traced value of the jit trace is differentiated through it."""
    jitted = dualad.jit(lambda x: J.jacobian(vec, x))
    x32 = POINTS[0].astype(np.float32)
    got = jitted(x32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, exact_jacobian("vec", POINTS[0]), rtol=2e-5, atol=1e-6)
    closing = dualad.jit(lambda x: J.jacobian(lambda y: y * x[0], x))
    for x in POINTS:
        np.testing.assert_allclose(closing(x), np.eye(N) * x[0], rtol=1e-15)
    _one_trace(closing)


def test_jit_planner_wrong_shapes_name_the_function():
    jitted = dualad.jit(lambda x: J.hessian(vec, x))
    with pytest.raises(TypeError, match=r"hessian: vec must return a scalar"):
        jitted(POINTS[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no retrace warning for one signature
        jitted2 = dualad.jit(lambda x: J.jacobian(dense_vec, x))
        for x in POINTS * 3:
            jitted2(x)
    _one_trace(jitted2)


def test_jit_planner_with_containers():
    """Container inputs and outputs: the blocks of the flat SymPy tensors, one trace."""
    def scal_d(p):
        return scal(np.concatenate([p["a"], p["b"]]))

    def vec_t(a, b):
        y = vec(np.concatenate([a, b]))
        return y[:1], y[1:].reshape(3, 1)

    hess = dualad.jit(lambda p: J.hessian(scal_d, p))
    jac = dualad.jit(lambda a, b: J.jacobian(vec_t, a, b, argnums=(0, 1)))
    for x in POINTS:
        h, want = hess({"a": x[:2], "b": x[2:]}), exact_hessian(x)
        np.testing.assert_allclose(h["a"]["b"], want[:2, 2:], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(h["b"]["b"], want[2:, 2:], rtol=1e-12, atol=1e-13)
        (j0a, j0b), (j1a, j1b) = jac(x[:2], x[2:])
        want = exact_jacobian("vec", x)
        np.testing.assert_allclose(j0b, want[:1, 2:], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(j1a, want[1:, :2].reshape(3, 1, 2), rtol=1e-12, atol=1e-13)
    _one_trace(hess)
    _one_trace(jac)


def test_vmap_of_a_jitted_planner_function():
    jitted = dualad.jit(lambda x: J.jacfwd(vec, x))
    got = dualad.vmap(jitted)(np.stack(POINTS))
    np.testing.assert_allclose(got, np.stack([exact_jacobian("vec", x) for x in POINTS]),
                               rtol=1e-12, atol=1e-13)

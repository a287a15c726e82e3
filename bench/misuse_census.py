"""The misuse census: what a user gets for the mistakes users make.

Each case is a call a real user writes by mistake (or an edge they hit), with
what it should give: either a reference value (the exact derivative) or an
error whose message names what is wrong. Every case ends one of four ways:

    right        no exception, and the result equals the reference
    clear        an exception whose message contains every required fragment
    unclear      an exception whose message misses a required fragment
    silent       no exception, and a wrong (or un-checkable) result: the worst

    python bench/misuse_census.py            # counts, and every case not right/clear
    python bench/misuse_census.py --all      # every case with its outcome

(from a checkout without an install: ``PYTHONPATH=. python bench/misuse_census.py``)

The census measures; it asserts nothing (tests/dualad/test_misuse*.py do).
"""
from __future__ import annotations

import copy
import gc
import sys
import threading
import warnings

import importlib.util

import numpy as np

import dualad
from dualad import jacobians

X3 = np.array([0.5, 1.0, 1.5])
CASES = []


def case(name, *, ref=None, error=None, close=1e-9):
    """Register ``fn`` as a case: ``ref`` (value, or callable returning it) and/or
    ``error`` (a tuple of lower-case fragments the message must all contain). With
    both, either the right value or that clear error is a good outcome."""
    def deco(fn):
        CASES.append((name, fn, ref, error, close))
        return fn
    return deco


def _same(a, b, tol):
    if isinstance(b, str):
        return a == b
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and \
            all(_same(x, y, tol) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object or b.dtype == object or a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=tol, atol=tol, equal_nan=False))


def run(fn, ref, error, tol):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except Exception as e:  # noqa: BLE001 - classifying is the point
        # the traceback shows the chained cause too (NumPy re-raises some of our errors)
        chain = [e] + ([e.__cause__] if e.__cause__ is not None else [])
        msg = " ".join(f"{type(x).__name__}: {x}" for x in chain).lower()
        if error is None:
            return "unclear", f"raised {type(e).__name__}: {str(e)[:160]}"
        missing = [f for f in error if f not in msg]
        return ("clear", "") if not missing else \
            ("unclear", f"message lacks {missing}: {str(e)[:160]}")
    if ref is None:
        return "silent", f"no error; returned {np.asarray(out, dtype=object).ravel()[:4]}"
    expected = ref() if callable(ref) else ref
    try:
        same = _same(out, expected, tol)
    except Exception as e:  # noqa: BLE001 - e.g. a dead tracer handed back
        return "silent", f"returned something not comparable ({type(e).__name__}: {e!s:.80})"
    if same:
        return "right", ""
    return "silent", f"got {out!r:.120} expected {expected!r:.120}"


# --- copies ------------------------------------------------------------------------------
@case("grad: deepcopy of a traced value", ref=2 * X3)
def _():
    return dualad.grad(lambda v: np.sum(copy.deepcopy(v) ** 2))(X3)


@case("grad: deepcopy of a params dict holding a traced value", ref=2 * X3)
def _():
    return dualad.grad(lambda v: np.sum(copy.deepcopy({"w": v})["w"] ** 2))(X3)


@case("grad: copy.copy of a traced value", ref=2 * X3)
def _():
    return dualad.grad(lambda v: np.sum(copy.copy(v) ** 2))(X3)


@case("jvp: deepcopy of a traced value", ref=(np.sum(X3 ** 2), 2 * X3[0]))
def _():
    return dualad.jvp(lambda v: np.sum(copy.deepcopy(v) ** 2), (X3,), (np.eye(3)[0],))


# --- forgot to return ------------------------------------------------------------------------
def _no_return(v):
    np.sum(v ** 2)


@case("grad: f returns None", error=("none", "return"))
def _():
    return dualad.grad(_no_return)(X3)


@case("jvp: f returns None", error=("none", "return"))
def _():
    return dualad.jvp(_no_return, (X3,), (X3,))


@case("vjp: f returns None", error=("none", "return"))
def _():
    return dualad.vjp(_no_return, X3)[1](None)


@case("derivative: f returns None", error=("none", "return"))
def _():
    return dualad.derivative(lambda v: None)(1.0)


@case("jacobians.hessian: f returns None", error=("none", "return"))
def _():
    return jacobians.hessian(_no_return, X3)


@case("jacobians.jacobian: f returns None", error=("none", "return"))
def _():
    return jacobians.jacobian(_no_return, X3)


@case("grad: f returns a generator", error=("generator",))
def _():
    return dualad.grad(lambda v: (t for t in v))(X3)


@case("grad: f returns a string", error=("str",))
def _():
    return dualad.grad(lambda v: "loss")(X3)


# --- custom rules ----------------------------------------------------------------------------
def _prim_with_vjp(rule, name):
    p = dualad.primitive(lambda x: x * 2.0, name=name)
    p.defvjp(rule)
    return p


@case("primitive: VJP returns shape (7,) for a (3,) input", error=("(7,)", "(3,)"))
def _():
    p = _prim_with_vjp(lambda g, ans, x: np.ones(7), "census_bad7")
    return dualad.grad(lambda v: np.sum(p(v)))(X3)


@case("primitive: VJP returns a scalar for a (3,) input", error=("(3,)",))
def _():
    p = _prim_with_vjp(lambda g, ans, x: 1.0, "census_scalar")
    return dualad.grad(lambda v: np.sum(p(v)))(X3)


@case("primitive: JVP returns shape (7,) for a (3,) output", error=("(7,)", "(3,)"))
def _():
    p = dualad.primitive(lambda x: x * 2.0, name="census_badjvp")
    p.defjvp(lambda t, ans, x: np.ones(7))
    return dualad.jvp(p, (X3,), (X3,))[1]


def _defderiv_then_defvjp():
    p = dualad.primitive(np.sin, name=f"census_sin_{len(CASES)}_{id(object())}")
    p.defderiv(lambda ans, x: np.cos(x))
    p.defvjp(lambda g, ans, x: g * 100.0)
    return p


@case("primitive: defderiv then defvjp, plain vs anomaly path agree", ref=(100.0, 100.0))
def _():
    p = _defderiv_then_defvjp()
    a = dualad.grad(p)(0.3)
    with dualad.detect_anomaly():
        b = dualad.grad(p)(0.3)
    return (a, b)


# --- mutation between forward pass and pullback ---------------------------------------------
@case("vjp: input mutated before the pullback", error=("modified",), ref=np.cos([1.0, 2.0]))
def _():
    xi = np.array([1.0, 2.0])
    _, pb = dualad.vjp(np.sin, xi)
    xi[0] = 3.0
    return pb(np.ones(2))[0]


@case("vjp: output mutated before the pullback", error=("modified",), ref=np.exp([1.0, 2.0]))
def _():
    y, pb = dualad.vjp(np.exp, np.array([1.0, 2.0]))
    y *= 2
    return pb(np.ones(2))[0]


@case("vjp: closed-over constant mutated before the pullback", error=("modified",), ref=np.array([1.0, 2.0]))
def _():
    c = np.array([1.0, 2.0])
    _, pb = dualad.vjp(lambda v: v * c, np.ones(2))
    c[0] = 7.0
    return pb(np.ones(2))[0]


@case("Variable: storage mutated before backward", error=("modified",), ref=np.cos([1.0, 2.0]))
def _():
    from dualad.autograd import Variable
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    y = np.sum(np.sin(x))
    np.asarray(x.value)[0] = 3.0
    y.backward()
    return x.grad


# --- sparse patterns reused at another point -------------------------------------------------
def _dense_j(f, x):
    return jacobians.jacobian(f, x, mode="fwd")


def _sparse_at_other_point(f):
    from dualad.jacobians.optimize import sparse_jacobian_fn
    jac = sparse_jacobian_fn(f, np.array([3.0, 1.0, 2.0]))
    x1 = np.array([1.0, 3.0, 2.0])
    return jac(x1).toarray()


@case("sparse_jacobian_fn: index from argmax", ref=lambda: _dense_j(
    lambda v: v * v[np.argmax(v)], np.array([1.0, 3.0, 2.0])))
def _():
    return _sparse_at_other_point(lambda v: v * v[np.argmax(v)])


@case("sparse_jacobian_fn: boolean mask", ref=lambda: _dense_j(
    lambda v: v * np.sum(v[v > 1.5]), np.array([1.0, 3.0, 2.0])))
def _():
    return _sparse_at_other_point(lambda v: v * np.sum(v[v > 1.5]))


@case("sparse_jacobian_fn: Python if", ref=lambda: _dense_j(
    lambda v: v * (v[0] if v[0] > v[1] else v[1]), np.array([1.0, 3.0, 2.0])))
def _():
    return _sparse_at_other_point(lambda v: v * (v[0] if v[0] > v[1] else v[1]))


@case("plan(output=sparse): index from argmax", ref=lambda: _dense_j(
    lambda v: v * v[np.argmax(v)], np.array([1.0, 3.0, 2.0])))
def _():
    p = jacobians.plan(lambda v: v * v[np.argmax(v)], np.array([3.0, 1.0, 2.0]),
                       sparse=True)
    out = p(np.array([1.0, 3.0, 2.0]))
    return out.toarray() if hasattr(out, "toarray") else out


# --- complex, float32 ------------------------------------------------------------------------
@case("autograd.backward: complex seed for a real output", error=("complex",))
def _():
    from dualad.autograd import Variable
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    y = np.sin(x)
    y.backward(np.array([1.0 + 1j, 1.0]))
    return x.grad


def _f32_grad(fn):
    g = dualad.grad(lambda v: np.sum(fn(v)))(np.array([-0.5, 0.25, 2.0], np.float32))
    return str(g.dtype)


for _name, _fn in [("maximum", lambda v: np.maximum(v, 0.0)),
                   ("minimum", lambda v: np.minimum(v, 0.0)),
                   ("clip", lambda v: np.clip(v, -1.0, 1.0)),
                   ("fmax", lambda v: np.fmax(v, 0.0)), ("fmin", lambda v: np.fmin(v, 0.0)),
                   ("exp2", np.exp2), ("log2", lambda v: np.log2(np.abs(v))),
                   ("log10", lambda v: np.log10(np.abs(v))), ("max", np.max), ("min", np.min),
                   ("tanh", np.tanh), ("logaddexp", lambda v: np.logaddexp(v, 1.0))]:
    case(f"grad: float32 stays float32 through {_name}", ref="float32")(
        lambda _fn=_fn: _f32_grad(_fn))


# --- numerics --------------------------------------------------------------------------------
@case("grad: np.std of one element", ref=0.0)
def _():
    return dualad.grad(np.std)(3.5)


@case("grad: np.std over a size-1 axis", ref=np.zeros((1, 3)))
def _():
    return dualad.grad(lambda v: np.sum(np.std(v, axis=0)))(np.ones((1, 3)))


@case("grad: sqrt(maximum(x, 0)) at x=-1 (0*nan from the unselected branch)", ref=0.0)
def _():
    return dualad.grad(lambda v: np.sqrt(np.maximum(v, 0.0)))(-1.0)


@case("grad: sqrt(clip(x, 0, 1)) at x=-1", ref=0.0)
def _():
    return dualad.grad(lambda v: np.sqrt(np.clip(v, 0.0, 1.0)))(-1.0)


@case("grad: logaddexp at 1e15 (float64)", ref=(0.5, 0.5))
def _():
    return dualad.grad(lambda a, b: np.logaddexp(a, b), argnums=(0, 1))(1e15, 1e15)


@case("grad: logaddexp at 1e7 (float32)", ref=(0.5, 0.5), close=1e-6)
def _():
    a = np.float32(1e7)
    return dualad.grad(lambda a, b: np.logaddexp(a, b), argnums=(0, 1))(a, a)


@case("grad: det at a singular matrix (the cofactor matrix)",
      ref=np.array([[2.0, -2.0], [-1.0, 1.0]]))
def _():
    return dualad.grad(np.linalg.det)(np.array([[1.0, 1.0], [2.0, 2.0]]))


# --- unclear errors the issue lists ----------------------------------------------------------
@case("grad(has_aux=True): the aux comes back as a plain value", ref=(2 * X3, np.sum(X3)))
def _():
    g, aux = dualad.grad(lambda v: (np.sum(v ** 2), np.sum(v)), has_aux=True)(X3)
    return (g, np.asarray(aux, dtype=float))


@case("grad: out = np.zeros(n); out[i] = traced", error=("traced", "dualad"))
def _():
    def f(v):
        out = np.zeros(3)
        out[0] = v[0]
        return np.sum(out)
    return dualad.grad(f)(X3)


@case("grad: int(traced) indexes, zero derivative (docs/sharp_bits.md)", ref=np.array([1.0, 0.0, 0.0]))
def _():
    return dualad.grad(lambda v: v[int(v[0])])(X3)


@case("jvp: tangent given as a list", ref=(np.sin(X3), np.cos(X3)))
def _():
    return dualad.jvp(np.sin, (X3,), ([1.0, 1.0, 1.0],))


@case("grad: np.mean(x, where=mask)", ref=np.array([0.5, 0.5, 0.0]))
def _():
    return dualad.grad(lambda v: np.mean(v, where=np.array([True, True, False])))(X3)


@case("grad: jacobians.jacobian inside grad (nesting)", error=("jacobian", "nest"),
      ref=-np.sin(X3))
def _():
    return dualad.grad(lambda v: np.sum(jacobians.jacobian(np.sin, v)))(X3)


@case("grad: output of shape (1,)", ref=np.array([2.0]))
def _():
    return dualad.grad(lambda v: v ** 2)(np.array([1.0]))


@case("grad: output of shape (1, 1)", ref=np.array([[2.0]]))
def _():
    return dualad.grad(lambda v: v ** 2)(np.array([[1.0]]))


@case("dualad.numpy.array([])", ref=np.array([]))
def _():
    import dualad.numpy as dnp
    return dnp.array([])


@case("dualad.numpy.where(cond) with a plain condition", ref=(np.array([0, 2]),))
def _():
    import dualad.numpy as dnp
    return dnp.where(np.array([True, False, True]))


@case("grad: output with 3 elements", error=("grad", "scalar", "(3,)"))
def _():
    return dualad.grad(np.sin)(X3)


# --- the standard list for every API: None, wrong shape, float32, complex, empty, thread ------
@case("grad: None input", error=("grad", "none"))
def _():
    return dualad.grad(np.sin)(None)


@case("jvp: tangent of the wrong shape", error=("jvp", "(2,)", "(3,)"))
def _():
    return dualad.jvp(np.sin, (X3,), (np.ones(2),))


@case("vjp: cotangent of the wrong shape", error=("vjp", "(2,)", "(3,)"))
def _():
    return dualad.vjp(np.sin, X3)[1](np.ones(2))


@case("grad: empty input", ref=np.zeros(0))
def _():
    return dualad.grad(lambda v: np.sum(v ** 2))(np.zeros(0))


@case("jvp: empty input", ref=(np.zeros(0), np.zeros(0)))
def _():
    return dualad.jvp(np.sin, (np.zeros(0),), (np.zeros(0),))


@case("grad: integer input", error=("grad", "int"))
def _():
    return dualad.grad(lambda v: np.sum(v ** 2))(np.arange(3))


@case("grad: complex input, real loss", ref=2 * np.conj(np.array([1 + 1j, 2.0])))
def _():
    return dualad.grad(lambda z: np.sum(np.abs(z) ** 2))(np.array([1 + 1j, 2.0]))


@case("grad: complex output without holomorphic", error=("grad", "complex", "holomorphic"))
def _():
    return dualad.grad(lambda z: np.sum(z ** 2))(np.array([1 + 1j, 2.0]))


@case("grad: argnums out of range", error=("argnums", "range"))
def _():
    return dualad.grad(lambda a, b: a * b, argnums=2)(1.0, 2.0)


@case("hvp: wrong-shaped direction", error=("(2,)", "(3,)"))
def _():
    return dualad.hvp(lambda v: np.sum(v ** 3), X3, np.ones(2))


@case("grad: called from 4 threads at once", ref=[2 * X3] * 4)
def _():
    out = [None] * 4

    def work(k):
        for _ in range(50):
            out[k] = dualad.grad(lambda v: np.sum(v ** 2))(X3)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


@case("detect_anomaly in one thread, a legitimate inf in another", ref=True)
def _():
    ok = []
    stop = threading.Event()

    def other():
        while not stop.is_set():
            try:
                dualad.grad(lambda v: np.sum(np.log(v)))(np.array([0.0, 1.0]))
                ok.append(True)
            except Exception:  # noqa: BLE001
                ok.append(False)
    t = threading.Thread(target=other)
    with dualad.detect_anomaly():
        t.start()
        for _ in range(200):
            dualad.grad(lambda v: np.sum(v ** 2))(X3)
    stop.set()
    t.join()
    return all(ok)


@case("grad in another thread leaves a user's gc.disable() alone", ref=False)
def _():
    was = gc.isenabled()
    gc.disable()
    try:
        t = threading.Thread(target=lambda: [dualad.grad(lambda v: np.sum(v ** 2))(X3)
                                             for _ in range(200)])
        t.start()
        seen = []
        while t.is_alive():
            seen.append(gc.isenabled())
        t.join()
        seen.append(gc.isenabled())
        return any(seen)
    finally:
        if was:
            gc.enable()


@case("import dualad leaves the allocator alone", ref=False)
def _():
    from dualad.interpreters.reverse import heap
    return bool(heap.applied)


# --- checkers -------------------------------------------------------------------------------
@case("check_grads: np.sort near a tie (right derivative)", ref=True)
def _():
    from dualad.verification import check_grads
    check_grads(np.sort, (np.array([-0.2342, -0.2341, 1.5792]),), order=1)
    return True


@case("check_grads: an empty array argument", ref=True)
def _():
    from dualad.verification import check_grads
    check_grads(np.sin, (np.zeros(0),), order=1)
    return True


@case("check_grads(modes=rev): a wrong VJP without a JVP rule is reported",
      error=("gradcheckerror",))
def _():
    from dualad.verification import check_grads
    p = _prim_with_vjp(lambda g, ans, x: g * 2.1, "census_wrongvjp")
    check_grads(p, (X3,), order=1, modes=("rev",))
    return True


@case("check_grads: both modes asked of a rule with no JVP", error=("jvp", "census_nojvp"))
def _():
    from dualad.verification import check_grads
    p = _prim_with_vjp(lambda g, ans, x: g * 2.0, "census_nojvp")
    check_grads(p, (X3,), order=1)
    return True


@case("trace CLI: --digits -5 (one line, exit 2)", ref=2)
def _():
    from dualad.teaching.cli import main
    import contextlib
    import io
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            return main(["trace", "x1*x2", "--at", "x1=1", "x2=2", "--digits", "-5"])
        except SystemExit as e:   # argparse's own exit
            return e.code



# --- issue 30: custom_linear_solve symmetric, trace CLI, dualad check, jacobians.optimize ---
@case("custom_linear_solve(A, b, symmetric=True) with a non-symmetric dense A",
      error=("custom_linear_solve", "symmetric=true", "(2, 2)", "max |a − aᵀ|",
             "drop symmetric=true"))
def _():
    A = np.array([[4.0, 1.0], [0.0, 3.0]])
    return dualad.grad(lambda b: np.sum(dualad.custom_linear_solve(A, b, symmetric=True)))(
        np.array([1.0, 2.0]))


@case("custom_linear_solve(matvec, b, symmetric=True) with a non-symmetric matvec",
      error=("custom_linear_solve", "symmetric=true", "matvec", "not symmetric"))
def _():
    A = np.array([[4.0, 1.0], [0.0, 3.0]])
    return dualad.grad(lambda b: np.sum(dualad.custom_linear_solve(
        lambda v: A @ v, b, symmetric=True)))(np.array([1.0, 2.0]))


def _trace_cli(*argv):
    """``dualad trace``: its stdout's last line, or its one-line stderr as an error."""
    import contextlib
    import io
    from dualad.teaching.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["trace", *argv])
    if rc:
        raise RuntimeError(err.getvalue().strip())
    return out.getvalue().strip().splitlines()[-1]


@case("trace CLI: x + 9**9**9 (a constant that overflows)",
      error=("9 ** 9 ** 9", "overflows", "largest float", "smaller constant"))
def _():
    return _trace_cli("x + 9**9**9", "--at", "x=1")


@case("trace CLI: x + 10**10**10 (no runaway integer power)", error=("overflows",))
def _():
    return _trace_cli("x + 10**10**10", "--at", "x=1")


@case("trace CLI: 1/0 + x", error=("1 / 0", "division by 0"))
def _():
    return _trace_cli("1/0 + x", "--at", "x=1")


@case("trace CLI: (-8)**(1/3) + x (a complex constant)", error=("not a real number",))
def _():
    return _trace_cli("(-8)**(1/3) + x", "--at", "x=1")


@case("trace CLI: x/0 at x=1 follows NumPy (inf)",
      ref="y = inf;  derivative (forward) = inf;  operation counts: primal operations: 1, "
          "tangent operations: 1 (multiply 1)")
def _():
    return _trace_cli("x/0", "--at", "x=1")


_MATRIX_RULES = """
import numpy as np
import dualad

@dualad.primitive
def logabsdet(a):
    return np.linalg.slogdet(a)[1]
logabsdet.defvjp(lambda g, ans, a: g * np.linalg.inv(a).T)

@dualad.primitive
def needs_4d(a):
    if np.ndim(a) != 4:
        raise ValueError("a must be 4-d")
    return np.sum(a)
needs_4d.defvjp(lambda g, ans, a: g * np.ones_like(a))
"""


def _check_cli(name):
    import contextlib
    import io
    import pathlib
    import tempfile
    from dualad.teaching.cli import main
    path = pathlib.Path(tempfile.mkdtemp()) / "census_matrix_rules.py"
    path.write_text(_MATRIX_RULES)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(["check", f"{path}:{name}"])


@case("dualad check: a correct logabsdet (square-matrix argument) passes, exit 0", ref=0)
def _():
    return _check_cli("logabsdet")


@case("dualad check: no sample can be drawn is 'could not check', exit 2 (not 1)", ref=2)
def _():
    return _check_cli("needs_4d")


@case("jacobians.optimize.jacobian_fn(f, y0): the point after the function",
      ref=[[2.0, 0.0], [1.0, 1.0]])
def _():
    from dualad.jacobians.optimize import jacobian_fn
    y0 = np.array([1.0, 1.0])
    return jacobian_fn(lambda y: np.array([y[0] ** 2 - 4.0, y[0] * y[1] - 1.0]), y0)(y0)


@case("jacobians.optimize.jacobian_fn(f, c): the old extra-argument spelling",
      error=("jacobian_fn", "point x0", "x0, a"))
def _():
    from dualad.jacobians.optimize import jacobian_fn
    return jacobian_fn(lambda y, c: y * c, 2.0)


@case("jacobians.optimize.ode_jacobian_fn in solve_ivp(method='BDF')",
      ref=[0.7158271, 9.185535e-06, 0.2841637], close=1e-4)
def _():
    from scipy.integrate import solve_ivp
    from dualad.jacobians.optimize import ode_jacobian_fn

    def robertson(t, y):
        return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                         0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                         3e7 * y[1] ** 2])
    y0 = np.array([1.0, 0.0, 0.0])
    sol = solve_ivp(robertson, (0.0, 40.0), y0, method="BDF", rtol=1e-8, atol=1e-12,
                    jac=ode_jacobian_fn(robertson, y0))
    return sol.y[:, -1]

# --- issue 30: stale replays of dualad.jit (a change inside what f read from outside) ------
@case("jit: closed-over list appended to after the trace", ref=39.0)
def _():
    lst = [1.0, 2.0]
    jf = dualad.jit(lambda x: x * sum(lst))
    jf(3.0)
    lst.append(10.0)
    return jf(3.0)


@case("jit: closed-over dict item changed after the trace", ref=15.0)
def _():
    cfg = {"scale": 2}
    jf = dualad.jit(lambda x: x * cfg["scale"])
    jf(3.0)
    cfg["scale"] = 5
    return jf(3.0)


@case("jit(grad): attribute of a closed-over object changed", ref=5.0 * np.cos(0.5))
def _():
    class Model:
        w = None
    m = Model()
    m.w = 2.0
    jg = dualad.jit(dualad.grad(lambda x: np.sin(x) * m.w))
    jg(0.5)
    m.w = 5.0
    return jg(0.5)


@case("grad(jit): SimpleNamespace attribute changed", ref=5.0 * np.cos(0.5))
def _():
    import types
    ns = types.SimpleNamespace(w=2.0)
    jf = dualad.jit(lambda x: np.sin(x) * ns.w)
    dualad.grad(jf)(0.5)
    ns.w = 5.0
    return dualad.grad(jf)(0.5)


@case("jit: f.__defaults__ replaced after the trace", ref=15.0)
def _():
    def f(x, a=2.0):
        return x * a
    jf = dualad.jit(f)
    jf(3.0)
    f.__defaults__ = (5.0,)
    return jf(3.0)
# --- issue 30: front end, dtypes and error messages -----------------------------------------
_M = np.array([[1.0, 2.0], [3.0, 4.0]])


@case("grad of np.sum(x * x) at an np.matrix (x * x is a matrix product there)",
      error=("grad", "argument 0", "numpy.matrix", "(2, 2)", "np.asarray(x)", "@"))
def _():
    return dualad.grad(lambda x: np.sum(x * x))(np.matrix(_M))


@case("grad at a masked array (np.sum skips masked entries)",
      error=("grad", "numpy.ma.maskedarray", "1 masked entry", "np.ma.getdata", "mask"))
def _():
    return dualad.grad(lambda x: np.sum(x * x))(np.ma.array(X3, mask=[0, 1, 0]))


@case("Variable(np.matrix, requires_grad=True)", error=("variable", "numpy.matrix",
                                                        "np.asarray"))
def _():
    from dualad.autograd import Variable
    return Variable(np.matrix(_M), requires_grad=True)


@case("an np.matrix constant times a traced value", error=("numpy.matrix", "np.asarray(m)",
                                                           "x @ m"))
def _():
    M = np.matrix(_M)
    return dualad.grad(lambda x: np.sum(x * M))(np.ones((2, 2)))


@case("a traced value times a masked-array constant",
      error=("numpy.ma.maskedarray", "np.ma.getdata", "getmaskarray"))
def _():
    m = np.ma.array(X3, mask=[0, 1, 0])
    return dualad.grad(lambda x: np.sum(x * m))(np.ones(3))


@case("a masked-array constant on the left: NumPy's masked sum followed",
      ref=np.array([0.5, 0.0, 1.5]))
def _():
    m = np.ma.array(X3, mask=[0, 1, 0])
    return dualad.grad(lambda x: np.sum(m * x))(np.ones(3))


@case("grad dtype: float16 parameter with float32 data", ref="float16")
def _():
    w = np.ones(3, np.float16)
    return str(dualad.grad(lambda w: np.sum(w * np.ones(3, np.float32)))(w).dtype)


@case("grad dtype: float32 parameter with float64 data", ref="float32")
def _():
    return str(dualad.grad(lambda w: np.sum(w * X3))(np.ones(3, np.float32)).dtype)


@case("vjp dtype: float32 primal, float64 constant", ref="float32")
def _():
    _, pullback = dualad.vjp(lambda w: w * X3, np.ones(3, np.float32))
    return str(pullback(np.ones(3))[0].dtype)


@case("jvp dtype: the output tangent has the output's dtype", ref=("float64", "float64"))
def _():
    y, t = dualad.jvp(lambda w: w * X3, (np.ones(3, np.float32),), (np.ones(3, np.float32),))
    return str(y.dtype), str(t.dtype)


@case("Variable.grad dtype: float32 leaf, float64 data", ref="float32")
def _():
    from dualad.autograd import Variable
    w = Variable(np.ones(3, np.float32), requires_grad=True)
    np.sum(w * X3).backward()
    return str(w.grad.dtype)


@case("grad dtype: float32 real parameter with complex128 data", ref="float32")
def _():
    return str(dualad.grad(lambda w: np.real(np.sum(w * (X3 + 1j))))(
        np.ones(3, np.float32)).dtype)


@case("grad at a bfloat16 input (ml_dtypes)", ref="no ml_dtypes",
      error=("bfloat16", "not supported", "float32"))
def _():
    try:
        import ml_dtypes
    except ImportError:
        return "no ml_dtypes"
    return dualad.grad(lambda x: np.sum(x * x))(np.ones(3, ml_dtypes.bfloat16))


@case("scipy.optimize.minimize on traced values inside grad",
      error=("grad", "scipy.optimize.minimize", "dualad.scipy.optimize.minimize"))
def _():
    import scipy.optimize
    return dualad.grad(lambda a: scipy.optimize.minimize(
        lambda z: np.sum((z - a) ** 2), np.zeros(3)).fun)(X3)


@case("a SciPy ufunc with no rule (scipy.special.wrightomega)",
      error=("no derivative rule for scipy.special.wrightomega", "dualad.extend.implements"))
def _():
    import scipy.special
    return dualad.grad(lambda x: np.sum(scipy.special.wrightomega(x)))(X3)


@case("dualad.autograd: OneFlow's x.exp().sum(dim=1)",
      ref=lambda: np.exp(np.arange(6.0).reshape(2, 3) / 6))
def _():
    from dualad.autograd import Variable, grad
    x = Variable(np.arange(6.0).reshape(2, 3) / 6, requires_grad=True)
    return grad(np.sum(x.exp().sum(dim=1)), x)[0]


@case("dualad.autograd: x.mean(dim=0, keepdim=True)", ref=(1, 3))
def _():
    from dualad.autograd import Variable
    return Variable(np.ones((2, 3)), requires_grad=True).mean(dim=0, keepdim=True).shape


@case("dualad.autograd: both axis= and dim=", error=("axis=1", "dim=0", "pass one"))
def _():
    from dualad.autograd import Variable
    return Variable(np.ones((2, 3)), requires_grad=True).sum(axis=1, dim=0)
# --- issue 30: reverse mode (mutated constants, structural zeros) ---------------------------
@case("grad: a closed-over constant mutated after its use inside f (c[0] = 50)",
      ref=lambda: np.cos([0.1, 0.2]) * [1.0, 2.0],
      error=("modified an array in place", "shape (2,)", "float64", "c = c.copy()"))
def _():
    c = np.array([1.0, 2.0])

    def f(x):
        y = np.sin(x) * c
        c[0] = 50.0
        return np.sum(y)
    return dualad.grad(f)(np.array([0.1, 0.2]))


@case("vjp: a constant mutated with np.copyto inside f", ref=lambda: (np.cos([0.1, 0.2]),),
      error=("modified an array in place", "c = c.copy()"))
def _():
    c = np.ones(2)

    def f(x):
        y = np.sin(x) * c
        np.copyto(c, 7.0)
        return np.sum(y)
    return dualad.vjp(f, np.array([0.1, 0.2]))[1](1.0)


@case("grad: np.sqrt(x)[1] at x = [-1, 4] (entry 0 unused: 0, not nan)", ref=[0.0, 0.25])
def _():
    return dualad.grad(lambda x: np.sqrt(x)[1])(np.array([-1.0, 4.0]))


@case("grad: x.at[0].set(np.sqrt(x)[1]) at x = [-1, 4]", ref=[0.0, 1.25])
def _():
    return dualad.grad(lambda x: np.sum(x.at[0].set(np.sqrt(x)[1])))(np.array([-1.0, 4.0]))


@case("hessian forward-over-reverse of np.where(x > 0, sqrt(x), 0)**3 equals fwd-fwd",
      ref=lambda: np.diag([0.0, 0.375, 0.0]))
def _():
    f = lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0) ** 3)  # noqa: E731
    return jacobians.hessian(f, np.array([-1.0, 4.0, 0.0]), mode="forward-over-reverse")
# --- issue 30: jit code generation (user text never becomes source; replay errors) ----------
def _census_kw_prim():
    p = dualad.primitive(lambda x, **kw: x * 2.0, name="census_kw_prim")
    p.defderiv(lambda ans, x, **kw: 2.0 * np.ones_like(x))
    return p


def _census_untouched(marker, value):
    """``value`` when the payload did not run, else something no reference equals."""
    import os
    return value if not os.path.exists(marker) else "the payload ran"


@case("jit: a keyword name holding code (a=1, b=__import__('os')...) runs nothing",
      ref=(6.0, 0.0))
def _():
    import os
    import tempfile
    marker = os.path.join(tempfile.mkdtemp(), "pwned")
    prim = _census_kw_prim()
    key = f"a=1, b=__import__('os').mkdir({marker!r}), c"
    g = dualad.jit(lambda x: np.sum(prim(x, **{key: 1})))
    return _census_untouched(marker, (g(np.ones(3)), g(np.zeros(3))))


@case("jit: a newline in co_name breaks out of the guard comment: runs nothing",
      ref=(6.0, 6.0, -3.0))
def _():
    import os
    import tempfile
    marker = os.path.join(tempfile.mkdtemp(), "pwned")

    def h(x):
        if np.sum(x) > 0:
            return np.sum(x * 2.0)
        return np.sum(x)
    h.__code__ = h.__code__.replace(co_name=f"h\n        __import__('os').mkdir({marker!r})\n#")
    g = dualad.jit(h)
    return _census_untouched(marker, (g(np.ones(3)), g(np.ones(3)), g(-np.ones(3))))


@case("jit: a function named f\u00b2 (not an identifier, passes isalnum)",
      ref=lambda: np.sin(X3))
def _():
    def f(x):
        return np.sin(x)
    f.__name__ = "f\u00b2"
    g = dualad.jit(f)
    g(X3)
    return g(X3)


@case("jit: two user primitives of one name (<lambda>) are not one subexpression", ref=12.0)
def _():
    p1 = dualad.primitive(lambda x: x + 1.0)
    p1.defderiv(lambda ans, x: np.ones_like(x))
    p2 = dualad.primitive(lambda x: x * 3.0)
    p2.defderiv(lambda ans, x: 3.0 * np.ones_like(x))
    g = dualad.jit(lambda x: np.sum(p1(x) * p2(x)))
    g(np.ones(2))
    return g(np.ones(2))


@case("jit: a user primitive named 'sin' is not replayed as math.sin", ref=202.0)
def _():
    p = dualad.primitive(lambda x: x + 100.0, name="sin")
    p.defderiv(lambda ans, x: np.ones_like(x))
    g = dualad.jit(lambda x: p(x) * 2.0)
    g(1.0)
    return g(1.0)

def _census_ratio(a, b):
    return a / b


@case("jit: a replay raising ZeroDivisionError (a / b of floats) names the user's line",
      ref="_census_ratio line 2")
def _():
    import traceback
    g = dualad.jit(_census_ratio)
    g(1.0, 2.0)
    try:
        g(1.0, 0.0)
    except ZeroDivisionError as e:
        last = traceback.extract_tb(e.__traceback__)[-1]
        return f"{last.name} line {last.lineno - _census_ratio.__code__.co_firstlineno + 1}"
    return "no error"



# --- issue 31: prepared derivatives replay through dualad.jit by default -----------------------
_CENSUS_A = np.arange(6.0).reshape(2, 3)


@case("jacobian_fn (jit by default): writing into a returned Jacobian of a linear residual "
      "does not change the next call's", ref=_CENSUS_A)
def _():
    from dualad.jacobians.optimize import jacobian_fn
    jac = jacobian_fn(lambda x: _CENSUS_A @ x, np.ones(3))
    for _ in range(3):
        J = jac(np.ones(3))
        J[0, 0] = 99.0      # SciPy or the user scaling the Jacobian in place
    return jac(np.ones(3))


@case("gradient (jit by default): f reads a closed-over list changed between calls",
      ref=[6.0, 6.0])
def _():
    from dualad.jacobians.optimize import gradient
    coef = [1.0]
    jac = gradient(lambda x: coef[0] * np.sum(x ** 2), np.ones(2))
    jac(np.ones(2))
    coef[0] = 3.0            # the replay must not use the traced 1.0
    return jac(np.ones(2))


@case("gradient (jit by default): a counter f increments counts traces, not calls "
      "(documented: 1 trace + 0 per replay; jit=False: 5)", ref=(1, 5))
def _():
    from dualad.jacobians.optimize import gradient
    counts = []
    for jit in (True, False):
        calls = [0]

        def f(x):
            calls[0] += 1
            return np.sum(np.sin(x))
        jac = gradient(f, np.ones(2), jit=jit)
        for k in range(5):
            jac(np.full(2, float(k)))
        counts.append(calls[0])
    return tuple(counts)


@case("hessp_fn (jit by default): f the trace cannot follow falls back to eager, right "
      "value, one JitFallbackWarning", ref=(12.0, 1))
def _():
    from dualad.jacobians.optimize import hessp_fn
    from dualad.interpreters.staging.default import JitFallbackWarning

    import types

    def f(x, params):        # an argument jit can neither trace nor hash (a namespace)
        return params.c * x[0] ** 3
    hp = hessp_fn(f, np.ones(1), types.SimpleNamespace(c=1.0))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = [hp(np.ones(1), np.ones(1), types.SimpleNamespace(c=2.0)) for _ in range(3)]
    n = sum(issubclass(w.category, JitFallbackWarning) for w in seen)
    return float(out[-1][0]), n
# --- issue 31: import time (what loads lazily must be there when first used)
def _fresh(code):
    """Run ``code`` after a plain ``import dualad`` in a fresh interpreter; its last printed
    line, or its error re-raised here (the lazily loaded state is per process)."""
    import subprocess
    done = subprocess.run([sys.executable, "-c", "import dualad\n" + code],
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return done.stdout.strip().splitlines()[-1]


@case("import: traced scipy.special.gammaln right after a plain import dualad",
      ref=lambda: 0.7031566406452432)
def _():
    return float(_fresh("import scipy.special as ss\nprint(dualad.grad(ss.gammaln)(2.5))"))


@case("import: traced np.linalg.solve right after a plain import dualad",
      ref=lambda: -np.outer(np.linalg.solve(np.array([[3.0, 1.0], [1.0, 2.0]]).T, np.ones(2)),
                            np.linalg.solve(np.array([[3.0, 1.0], [1.0, 2.0]]),
                                            np.array([1.0, -1.0]))))
def _():
    out = _fresh("import numpy as np\na = np.array([[3.0, 1.0], [1.0, 2.0]])\n"
                 "g = dualad.grad(lambda a: np.linalg.solve(a, np.array([1.0, -1.0])).sum())(a)\n"
                 "print(g.ravel().tolist())")
    import json
    return np.array(json.loads(out)).reshape(2, 2)


@case("import: dualad.scipy.special reachable after a plain import dualad",
      ref="dualad.scipy.special")
def _():
    return _fresh("print(dualad.scipy.special.__name__)")


@case("import: registering a primitive named like a lazily loaded one (gammaln)",
      error=("gammaln", "already registered"))
def _():
    return _fresh("from dualad.extend import Primitive, register\nimport numpy as np\n"
                  "register(Primitive('gammaln', np.sin))\nprint('accepted')")
# --- issue 31: ODE sensitivities and implicit roots, traced once and replayed -------------------
@case("solve_ivp(jit='yes') is refused by name", error=("solve_ivp", "jit=", "true or false"))
def _():
    from dualad.scipy.integrate import solve_ivp
    return solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0], jit="yes")


@case("custom_root(jit=1) is refused by name", error=("custom_root", "jit=", "true or false"))
def _():
    return dualad.custom_root(lambda a: a, lambda x, a: x - a, jit=1)


@case("solve_ivp gradient of a fun that branches on t (replay retraces, then eager) is right",
      ref=lambda: -3.0 * np.exp(-3.0 * 0.7), close=1e-6)
def _():
    from dualad.scipy.integrate import solve_ivp

    def rhs(t, y, k):
        return -k * y if t < 1.0 else -2.0 * k * y
    return dualad.grad(lambda k: solve_ivp(rhs, (0.0, 2.0), np.array([1.0]), args=(k,),
                                           rtol=1e-10, atol=1e-12, max_step=0.01).y[0, -1])(0.7)


@case("solve_ivp gradient through BDF (dualad's ∂f/∂y for the Newton matrix) is right",
      ref=lambda: -np.exp(-0.7), close=1e-6)
def _():
    from dualad.scipy.integrate import solve_ivp
    return dualad.grad(lambda k: solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), np.array([1.0]),
                                           method="BDF", args=(k,), rtol=1e-10,
                                           atol=1e-12).y[0, -1])(0.7)


@case("solve_ivp sweeps at the default (primal) tolerance: gradient within rtol",
      ref=lambda: -np.exp(-0.7), close=1e-5)
def _():
    from dualad.scipy.integrate import solve_ivp
    return dualad.grad(lambda k: solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), np.array([1.0]),
                                           args=(k,), rtol=1e-7, atol=1e-10).y[0, -1])(0.7)
# --- issue 31: the eager path (slice cotangents, contractions on BLAS, tapes freed by refcount)
@case("grad: overlapping basic slices x[1:] * x[:-1] add their cotangents",
      ref=np.array([1.5, 2.0, 3.0, 2.0, 2.0, 1.0]))   # x_{i-1} + x_{i+1}
def _():
    x = np.array([1.0, 1.5, 1.0, 1.5, 1.0, 0.5])
    return dualad.grad(lambda v: np.sum(v[1:] * v[:-1]))(x)


@case("grad: a reversed strided slice x[::-2] scatters to every other entry",
      ref=np.array([0.0, 1.0, 0.0, 2.0, 0.0, 3.0]))
def _():
    w = np.array([3.0, 2.0, 1.0])
    return dualad.grad(lambda v: np.sum(w * v[::-2]))(np.ones(6))


@case("grad: GradBench gmm's batched einsum 'ijk,mik->mij' (the BLAS route) and its VJPs",
      ref=lambda: (np.einsum("mij,mik->ijk", np.ones((300, 4, 3)), _GMM_XC),
                   np.einsum("mij,ijk->mik", np.ones((300, 4, 3)), _GMM_LS)))
def _():
    return dualad.grad(lambda a, b: np.sum(np.einsum("ijk,mik->mij", a, b)),
                       argnums=(0, 1))(_GMM_LS, _GMM_XC)


@case("grad: an einsum of float32 operands keeps float32 on the BLAS route",
      ref="float32 float32")
def _():
    a = np.ones((40, 30), np.float32)
    b = np.ones((30, 20), np.float32)
    y, g = dualad.value_and_grad(lambda u: np.sum(np.einsum("ij,jk->ik", u, b)))(a)
    return f"{np.result_type(y)} {g.dtype}"


@case("vjp: a pullback dropped after use frees its tape without the collector", ref=True)
def _():
    import weakref
    refs = []

    def f(x):
        y = np.sin(x)
        s = y[0] * y[1]
        refs.append(weakref.ref(y))
        return s
    was = gc.isenabled()
    gc.disable()
    try:
        out, pb = dualad.vjp(f, X3)
        pb(1.0)
        del out, pb
        return refs[0]() is None
    finally:
        if was:
            gc.enable()



# --- issue 32: nested derivatives under jit (GradBench particle and saddle)
def _nested_loop(w):
    """An inner gradient per trip of a loop whose trip count depends on w."""
    def potential(x):
        return 0.2 / np.sqrt(np.sum((x - np.array([2.0, 1.0 + w])) ** 2)) + x[1]
    x, v = np.array([0.0, 3.0]), np.array([0.5, 0.0])
    while x[1] > 0:
        v = v - 0.1 * dualad.grad(potential)(x)
        x = x + 0.1 * v
    return x[0] * x[0]


@case("jit(grad(f)), f a loop of inner gradients whose trip count changes with w: each "
      "trip count its own program, revisits replay the right one",
      ref=lambda: [dualad.grad(_nested_loop)(w) for w in (0.0, 2.0, 0.0, 2.0)])
def _c_nested_trip_counts():
    g = dualad.jit(dualad.grad(_nested_loop))
    return [g(w) for w in (0.0, 2.0, 0.0, 2.0)]


@case("jvp over jit(grad(f)) with an inner gradient (forward over reverse over reverse)",
      ref=lambda: dualad.jvp(dualad.grad(_nested_loop), (0.5,), (1.0,)))
def _c_nested_jvp_of_jit():
    return dualad.jvp(dualad.jit(dualad.grad(_nested_loop)), (0.5,), (1.0,))
# --- issue 32: loops in a jit trace rolled into one compiled loop (dualad.interpreters.staging.loops)
def _rolled_step(x, back):
    y = np.sin(back) * 0.5 + np.cos(x) * 0.25
    y = np.tanh(y * y + 0.1) - np.exp(-y) * 0.125
    return y / (1.0 + y * y)


def _rolled_guarded(x):
    for _ in range(60):
        x = _rolled_step(x, x) if np.sum(x) > -1.0 else _rolled_step(x, -x)
    return x


@case("jit: a guard inside a rolled loop failing at one step of a replay retraces",
      ref=lambda: _rolled_guarded(np.array([-0.9, -0.9])))
def _():
    j = dualad.jit(_rolled_guarded)
    j(np.array([0.3, 0.4]))
    return j(np.array([-0.9, -0.9]))


def _rolled_almost(x):
    prev = prev2 = x
    for t in range(60):   # step 30 reads the value of two steps back: not one loop
        prev2, prev = prev, _rolled_step(prev, prev2 if t == 30 else prev)
    return prev


@case("jit: a loop whose step 30 is wired differently is not rolled as one loop",
      ref=lambda: _rolled_almost(np.array([0.2, 0.7])))
def _():
    return dualad.jit(_rolled_almost)(np.array([0.2, 0.7]))
# --- issue 32: a jitted function under a transformation is one primitive with compiled rules
def _branchy32(x):
    if np.sum(x) > 0:
        return np.sum(x ** 3)
    return np.sum(np.sin(x)) * 2.0


_J32 = dualad.jit(_branchy32)


@case("grad(jit(f)) with a branch: each branch's own program, never the stale one",
      ref=lambda: [3 * (X3 + 1) ** 2, 2 * np.cos(-X3 - 1), 3 * (X3 + 2) ** 2])
def _():
    g = dualad.grad(_J32)
    return [g(X3 + 1), g(-X3 - 1), g(X3 + 2)]


@case("grad(grad(jit(f))): the jitted pullback differentiated again",
      ref=lambda: -np.sin(0.4) * 0.4 ** 2 + 4 * 0.4 * np.cos(0.4) + 2 * np.sin(0.4))
def _():
    j = dualad.jit(lambda t: np.sin(t) * t ** 2)
    return dualad.grad(dualad.grad(j))(0.4)


@case("vjp(jit(f)) of a tuple-and-dict output (packed into one primitive's value)",
      ref=lambda: (np.cos(X3) + 2 * X3 * 2.0,))
def _():
    j = dualad.jit(lambda x: (np.sin(x), {"s": np.sum(x ** 2)}))
    return dualad.vjp(j, X3)[1]((np.ones(3), {"s": 2.0}))


@case("grad(jit(f)) where f reads float(x): raises as grad(f) does, not a lost derivative",
      error=("float",))
def _():
    j = dualad.jit(lambda x: x * float(np.sum(x)))
    j(X3)
    return dualad.grad(lambda x: np.sum(j(x)))(X3)


@case("vmap(grad(jit(f))) against per-example gradients",
      ref=lambda: np.stack([np.cos(r) * r + np.sin(r) for r in (X3, 2 * X3)]))
def _():
    j = dualad.jit(lambda x: np.sum(np.sin(x) * x))
    return dualad.vmap(dualad.grad(j))(np.stack([X3, 2 * X3]))
# --- issue 32: compile time (a repeated computation is recorded once under jit) -----------------
@case("jit(grad): a value computed twice, one of them then written in place", ref=np.array([10.0, 8.0, 12.0]))
def _():
    def f(x):
        y = x * 2.0
        z = x * 2.0          # the same computation: shared while tracing, until the write
        y[0] = 5.0
        return np.sum(y * z)
    g = dualad.jit(dualad.grad(f))
    g(X3)
    return g(X3)


@case("jit: two outputs computed alike are two arrays", ref=(True, 1.0))
def _():
    g = dualad.jit(lambda x: (x * 2.0, x * 2.0))
    g(X3)
    a, b = g(X3)
    a[0] = 7.0
    return (not np.shares_memory(a, b), float(b[0]))


@case("jit: x * 0.0 and x * -0.0 are not one computation", ref=(1.0, -1.0))
def _():
    a, b = dualad.jit(lambda x: (x * 0.0, x * -0.0))(np.ones(2))
    return (float(np.copysign(1.0, a[0])), float(np.copysign(1.0, b[0])))


@case("jit(grad): det by minors (each minor reached along many paths) equals grad", ref=lambda: dualad.grad(_det_minors)(_DET_A), close=1e-13)
def _():
    return dualad.jit(dualad.grad(_det_minors))(_DET_A)


def _det_minors(A, rows=None, cols=None):
    rows = list(range(A.shape[0])) if rows is None else rows
    cols = list(range(A.shape[0])) if cols is None else cols
    if len(rows) == 1:
        return A[rows[0], cols[0]]
    total = None
    for j, c in enumerate(cols):
        t = A[rows[0], c] * _det_minors(A, rows[1:], cols[:j] + cols[j + 1:])
        total = t if total is None else (total + t if j % 2 == 0 else total - t)
    return total


_DET_A = np.random.default_rng(32).random((5, 5))
# --- issue 32: fewer NumPy calls in jit programs (masks, reductions, buffers) --------------
@case("jit(grad): a slice of sqrt at 0 keeps the untouched entry 0 (its mask is not dropped)",
      ref=np.array([0.0, 0.5, 0.25]))
def _():
    g = dualad.jit(dualad.grad(lambda v: np.sum(np.sqrt(v)[1:])))
    x = np.array([0.0, 1.0, 4.0])
    g(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return g(x)


@case("jit(grad): logsumexp (max taken once, buffers reused) equals eager bitwise", ref=True)
def _():
    x = np.random.default_rng(5).random(20_000)

    def f(v):
        m = np.max(v)
        return np.log(np.sum(np.exp(v - m))) + m
    g = dualad.jit(dualad.grad(f))
    x0 = x.copy()
    g(x)
    return bool(np.array_equal(g(x), dualad.grad(f)(x)) and np.array_equal(x, x0))


_GMM_LS = np.random.default_rng(3).normal(size=(4, 3, 3))
_GMM_XC = np.random.default_rng(4).normal(size=(300, 4, 3))


# --- issue 32: the optional Numba backend (dualad.jit(f, backend="numba")) ----------------
def _numba_absent(fn):
    """``fn()`` with ``import numba`` failing, as where it is not installed."""
    import sys as _sys
    saved = _sys.modules.get("numba", False)
    _sys.modules["numba"] = None
    try:
        return fn()
    finally:
        if saved is False:
            del _sys.modules["numba"]
        else:
            _sys.modules["numba"] = saved


@case("jit: backend='numba' without numba installed",
      error=("energy", "backend='numba'", 'pip install "dualad[numba]"'))
def _():
    def energy(x):
        return np.sum(x * x)
    return _numba_absent(lambda: dualad.jit(energy, backend="numba"))(X3)


@case("jit: an unknown backend", error=("potential", "backend='jax'", "'numpy'", "'numba'"))
def _():
    def potential(x):
        return np.sum(x * x)
    return dualad.jit(potential, backend="jax")(X3)


_NB_X = np.array([0.0, -1.0, np.inf, np.nan, 2.0, -0.0])
_NB_Y = np.array([0.0, 0.0, 1.0, 1.0, np.inf, 3.0])


def _nb_f(x, y):
    return (x / y + np.log(x) * y) - np.sqrt(x) * np.exp(-y) + np.where(x > y, x, y)


@case("jit(backend='numba'): nan, inf and 0/0 in a fused chain as NumPy's",
      ref=lambda: str(_nb_f(_NB_X, _NB_Y).tolist()))
def _():
    try:
        import numba  # noqa: F401
    except ImportError:
        return str(_nb_f(_NB_X, _NB_Y).tolist())   # not installed: nothing to check here
    j = dualad.jit(_nb_f, backend="numba")
    j(_NB_X, _NB_Y)
    return str(j(_NB_X, _NB_Y).tolist())


# --- issue 32: the Numba backend's whole-program mode --------------------------------------
def _nb_whole(f, *args):
    """``f(*args)`` under jit(backend="numba") (the second call: the compiled replay), or
    under the default backend where numba is not installed (nothing to check there)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return dualad.jit(f)(*args)
    j = dualad.jit(f, backend="numba")
    j(*args)
    j.wait_compiled()     # (compiled in the background: the replay after it)
    return j(*args)


def _nb_ode(x):
    y = x * 0.0
    for _ in range(12):
        y = y + 0.1 * np.concatenate([x[:1], x[1:] * y[:-1]])
    return y[-1]


@case("jit(grad, backend='numba'): a rolled ODE loop compiled whole equals the NumPy backend",
      ref=lambda: dualad.jit(dualad.grad(_nb_ode))(np.linspace(0.1, 1.0, 30)), close=1e-14)
def _():
    return _nb_whole(dualad.grad(_nb_ode), np.linspace(0.1, 1.0, 30))


@case("jit(backend='numba'): a program numba does not write (cumsum) falls back, right value",
      ref=lambda: np.cumsum(np.sin(X3) * X3) * 2.0, close=1e-14)
def _():
    return _nb_whole(lambda x: np.cumsum(np.sin(x) * x) * 2.0, X3)


# --- issue 32: nested evals' replay (small reductions, 0-d reshapes, x * 1.0) ----------------
_CX = np.array([[0j, complex(np.inf, 0.0)], [1j, complex(2.0, np.inf)]])


def _cx_times_one(x):
    return np.sum(x * 1.0, axis=0), x / 1.0


@case("jit: a complex array times 1.0 replayed is the complex product ((inf+0j) * 1.0 is "
      "inf+nanj), not the array", ref=lambda: repr([a.tolist() for a in _cx_times_one(_CX)]))
def _():
    j = dualad.jit(_cx_times_one)
    with np.errstate(all="ignore"):
        j(_CX)
        return repr([a.tolist() for a in j(_CX)])


def _small_reductions(x):
    s = np.sum(x * x, axis=0)                  # np.float64: reshaped by its own method
    return np.concatenate([np.reshape(s, (1,)), np.max(x, axis=(0,), keepdims=True)]), \
        np.sum(x > 0.0, axis=0)


@case("jit: small reductions and 0-d reshapes replayed: values and dtypes as NumPy's",
      ref=lambda: repr([(a.tolist(), a.dtype.str) for a in _small_reductions(
          np.array([-0.0, 2.5]))]))
def _():
    j = dualad.jit(_small_reductions)
    j(np.array([1.0, 3.0]))
    return repr([(a.tolist(), a.dtype.str) for a in j(np.array([-0.0, 2.5]))])


# --- issue 32: tiered compilation of the Numba backend (compile="background" / "now") ----------
@case("jit: compile= not 'background' or 'now'",
      error=("energy", "compile='soon'", "'background'", "'now'"))
def _():
    def energy(x):
        return np.sum(x * x)
    return dualad.jit(energy, compile="soon")(X3)


@case("jit: compile=True (a bool where 'now' was meant)",
      error=("potential", "compile=true", "'background'", "'now'"))
def _():
    def potential(x):
        return np.sum(x * x)
    return dualad.jit(potential, compile=True)(X3)


def _nb_tiered(compile, first_only=False):
    """``(value, tiers)`` of a jitted function under backend="numba" with ``compile``: the
    first call's value, or the value after wait_compiled(); the default backend where numba
    is not installed (tiers then ["numpy"], as the reference says for that case)."""
    def h(x):
        return np.sum(np.exp(x) * x - 2.0 * np.sin(x))
    try:
        import numba  # noqa: F401
    except ImportError:
        return dualad.jit(dualad.grad(h))(X3), "numba" if compile == "now" or not first_only \
            else "pending"
    j = dualad.jit(dualad.grad(h), backend="numba", compile=compile)
    y = j(X3)
    if first_only:
        return y, list(j.cache_info(tiers=True).values())[0][0].split(":")[0]
    j.wait_compiled()
    return j(X3), list(j.cache_info(tiers=True).values())[0][0]


def _h_grad():
    return np.exp(X3) * (1.0 + X3) - 2.0 * np.cos(X3)


@case("jit(backend='numba', compile='now'): compiled at the first call, right value",
      ref=lambda: [_h_grad(), "numba"], close=1e-13)
def _():
    return list(_nb_tiered("now"))


@case("jit(backend='numba'): the first call is the NumPy program's value, Numba pending",
      ref=lambda: [_h_grad(), "pending"], close=1e-13)
def _():
    return list(_nb_tiered("background", first_only=True))


@case("jit(backend='numba'): after wait_compiled() the Numba replay, same value",
      ref=lambda: [_h_grad(), "numba"], close=1e-13)
def _():
    return list(_nb_tiered("background"))


@case("jit: compile='now' with the default backend is accepted (NumPy compiles at once anyway)",
      ref=lambda: _h_grad(), close=1e-13)
def _():
    j = dualad.jit(dualad.grad(lambda x: np.sum(np.exp(x) * x - 2.0 * np.sin(x))),
                   compile="now")
    return j(X3)

# --- issue 32: the Numba whole-program mode as one function of loops ---------------------
def _views_and_gathers(x):
    idx = np.array([2, 0, 2])
    return np.sum(x[:0:-1, 1:] * x[:2, ::-1][:, 1:]) + np.sum(x.T[idx] ** 2) + x[1, 2]


@case("jit(grad, backend='numba'): views of a Fortran-ordered argument, a gather and its "
      "scatter-add, written as one function of loops, equal the NumPy backend",
      ref=lambda: dualad.jit(dualad.grad(_views_and_gathers))(
          np.asfortranarray(np.arange(9.0).reshape(3, 3) / 7.0)).tolist())
def _():
    pytest_numba = importlib.util.find_spec("numba")
    if pytest_numba is None:
        return dualad.jit(dualad.grad(_views_and_gathers))(
            np.asfortranarray(np.arange(9.0).reshape(3, 3) / 7.0)).tolist()
    j = dualad.jit(dualad.grad(_views_and_gathers), backend="numba")
    x = np.asfortranarray(np.arange(9.0).reshape(3, 3) / 7.0)
    j(x)
    return j(x).tolist()

# --- issue 32: dualad.scan under jit is one loop equation (dualad/transforms/scan/staged.py) -----------
def _scan32_branchy(x):
    def step(c, _):
        if np.sum(c) > 3.0:   # Python control flow on the carry: the Python loop, step by step
            return c * 0.5, None
        return c + 1.0, None
    return np.sum(dualad.scan(step, x, None, length=8)[0])


@case("jit: grad of a scan whose step branches on the carry (the loop runs in Python)",
      ref=lambda: dualad.grad(_scan32_branchy)(np.array([0.5, 0.25])))
def _():
    g = dualad.jit(dualad.grad(_scan32_branchy))
    g(np.array([2.0, 2.0]))
    return g(np.array([0.5, 0.25]))


def _scan32_counter(x, n0):
    def step(c, _):
        n, v = c
        return (n * 3, v * 0.5 + x), None
    return dualad.scan(step, (n0, x), None, length=3)[0]


@case("jit: scan carrying an integer beyond 2**53 at the trace (the Python loop carries it)",
      ref=lambda: repr([int(v) for v in _scan32_counter(np.ones(2), np.int64(3 ** 34))[0:1]]))
def _():
    out = dualad.jit(_scan32_counter)(np.ones(2), np.int64(3 ** 34))
    return repr([int(v) for v in out[0:1]])


@case("jit: a replay of a scan whose integer carry grows beyond 2**53",
      ref=lambda: repr(int(_scan32_counter(np.ones(2), np.int64(3 ** 34))[0])),
      error=("integer", "too large", "exactly"))
def _():
    j = dualad.jit(_scan32_counter)
    j(np.ones(2), np.int64(3))
    return repr(int(j(np.ones(2), np.int64(3 ** 34))[0]))


@case("jit: a scan step's Python side effects happen once, at the trace", ref=1)
def _():
    calls = []

    def f(x):
        def step(c, _):
            calls.append(1)
            return np.tanh(c * x), None
        return dualad.scan(step, x, None, length=100)[0]
    j = dualad.jit(dualad.grad(lambda x: np.sum(f(x))))
    j(np.ones(3))
    j(np.ones(3))
    return len(calls)


@case("jit: grad of a 500-step scan is a few equations, the unrolled loop's value",
      ref=lambda: (True, dualad.grad(lambda x: np.sum(dualad.scan(
          lambda c, _: (np.tanh(c * x + 0.5), None), x, None, length=500)[0]))(
              np.linspace(0, 1, 7))))
def _():
    def f(x):
        return np.sum(dualad.scan(lambda c, _: (np.tanh(c * x + 0.5), None), x, None,
                                  length=500)[0])
    j = dualad.jit(dualad.grad(f))
    x = np.linspace(0, 1, 7)
    return len(j.program(x).body) < 60, j(x)


def main(argv):
    show_all = "--all" in argv
    counts = {"right": 0, "clear": 0, "unclear": 0, "silent": 0}
    rows = []
    for name, fn, ref, error, tol in CASES:
        outcome, why = run(fn, ref, error, tol)
        counts[outcome] += 1
        rows.append((outcome, name, why))
    for outcome, name, why in rows:
        if show_all or outcome in ("unclear", "silent"):
            print(f"{outcome:8s} {name}" + (f"\n         {why}" if why else ""))
    total = sum(counts.values())
    print(f"\n{total} misuse cases: {counts['right']} right, {counts['clear']} clear error, "
          f"{counts['unclear']} unclear error, {counts['silent']} silent wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

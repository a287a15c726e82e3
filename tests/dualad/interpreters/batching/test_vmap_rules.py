"""vmap against Python loops, for every primitive family: the batching rules beside the
primitives (dualad/ops/**, dualad/scipy), checked through the rule checker over the
registry, then the forms users write (indexing, einsum, solve with vector right-hand
sides, reductions over negative and tuple axes, sort and fft axes, joining batched with
unbatched operands), and vmap(grad) on each family.

The oracle is always the loop ``np.stack([f(x) for x in X])`` (for derivatives: the loop
of dualad's per-example derivative, itself checked against finite differences by the
registry's rule checker): never vmap itself.
"""
import numpy as np
import pytest

import dualad
import dualad.scipy  # noqa: F401  (registers quad, odeint, solve_ivp, sparse primitives)
import dualad.scipy.signal  # noqa: F401  (registers iir_filter)
from dualad import vmap
from dualad.extend import REGISTRY, Primitive, sample
from dualad.frontend.inplace import at
from dualad.verification.batching import vmap_kind
from dualad.verification.rules import RegistryReport, check_rule

pytestmark = pytest.mark.slow   # per-primitive rule checks: in the full suite, not the quick subset

RNG = np.random.default_rng(18)
NON_ELEMENTWISE = sorted(n for n, p in REGISTRY.items()
                         if not (p.elementwise or p.derivs is not None))
# Primitives whose every call is slow (SciPy's Schur–Padé logarithm and powers, adaptive ODE
# and quadrature solves): here their batching is checked on values; the registry's full
# check (tests/dualad/core/test_registry.py's check_registry) adds the JVP/VJP compositions.
SLOW = {"fractional_matrix_power", "logm", "solve_ivp", "solve_ivp_event", "odeint", "quad"}


def _loop(f, *xs):
    outs = [f(*args) for args in zip(*xs)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs)


def _close(got, want, rtol=1e-12):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, rtol)
        return
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


# --- the registry, through the checker --------------------------------------------------

@pytest.mark.parametrize("name", NON_ELEMENTWISE)
def test_batching_rule_matches_a_loop(name):
    """Every sample of the primitive, each array argument batched (alone and all
    together, batch axis at 0 and elsewhere), against the loop; the rule's JVP and VJP
    (vmap of jvp/vjp, jvp/vjp of vmap) against the loop of the derivative."""
    prim = REGISTRY[name]
    slow = name in SLOW
    report = check_rule(prim, samples=prim.samples[:1] if slow else None, only_vmap=True,
                        vmap_derivatives=not slow)
    assert report.rows, f"{name}: no batching check ran"
    assert report.ok, str(report)


def test_every_non_elementwise_primitive_has_a_rule_unless_it_must_loop():
    kinds = {n: vmap_kind(REGISTRY[n]) for n in NON_ELEMENTWISE}
    looped = sorted(n for n, k in kinds.items() if k == "loop")
    # the integrators call the user's function inside SciPy's adaptive solvers, and
    # custom_root the user's own solver, example by example (docs/vmap.md)
    assert looped == ["custom_root", "odeint", "quad", "solve_ivp", "solve_ivp_event"]
    assert kinds["reshape"] == kinds["sum"] == "derived"      # def_linear's batched=
    partial = {n: k for n, k in kinds.items() if k.startswith("rule (")}
    # custom_linear_solve: a batch of right-hand sides is one call, a batch of operators loops
    assert set(partial) == {"custom_linear_solve", "fractional_matrix_power", "iir_filter",
                            "sparse_solve"}


def _cumsum_impl(x, axis):
    return np.cumsum(x, axis=axis)


def _bad_cumsum():
    """A cumsum whose batching rule forgets to shift the axis past the batch axis."""
    p = Primitive("bad_cumsum", _cumsum_impl, linear=True)
    p.defjvp(lambda t, ans, x, axis: p(t, axis=axis + np.ndim(t) - np.ndim(x)))
    p.defvjp(lambda ct, ans, x, axis: np.flip(p(np.flip(ct, axis + np.ndim(ct) - np.ndim(ans)),
                                                axis=axis + np.ndim(ct) - np.ndim(ans)),
                                              axis + np.ndim(ct) - np.ndim(ans)))
    p.samples = [sample((3, 4), axis=1)]
    return p


def test_the_checker_catches_a_wrong_batching_rule():
    p = _bad_cumsum()
    p.defbatch(lambda args, batched, axis: p(args[0], axis=axis))     # axis not shifted
    report = check_rule(p, only_vmap=True)
    assert not report.ok
    assert any("vs a loop" in r.check for r in report.failures)
    p.defbatch(lambda args, batched, axis: p(args[0], axis=axis + 1))
    assert check_rule(p, only_vmap=True).ok


def test_looped_primitives_are_their_own_category():
    p = Primitive("looped_cumsum", _cumsum_impl)
    p.defjvp(lambda t, ans, x, axis: np.cumsum(t, axis=axis + np.ndim(t) - np.ndim(x)))
    p.samples = [sample((3,), axis=0)]
    report = RegistryReport([check_rule(p, only_vmap=True)])
    assert report.ok and report.looped == ["looped_cumsum"]
    assert "1 looped (looped_cumsum)" in report.table()


# --- indexing ---------------------------------------------------------------------------

X3 = RNG.standard_normal((4, 3, 4, 5))      # a batch of 4 examples of shape (3, 4, 5)
INDICES = [
    1, -1, (slice(1, 3),), (Ellipsis, 0), (None, Ellipsis), (0, None, slice(None, None, -1)),
    np.array([[0, 2], [1, 1]]), [2, 0, 2],
    RNG.random((3, 4)) < 0.5,                                   # a boolean mask
    (np.array([0, 2]), slice(None), np.array([1, 4])),         # advanced, split by a slice
    (slice(None), np.array([0, 3]), np.array([1, 2])),         # advanced, adjacent
    (np.array([0, 1]), None, np.array([2, 3])),                # advanced, split by None
    (1, slice(None), np.array([0, 4, 2])),                     # int and array, split
    (Ellipsis, np.array([1, 3])),
]


@pytest.mark.parametrize("idx", INDICES, ids=lambda i: repr(i)[:40])
def test_indexing_forms(idx):
    f = lambda x: x[idx]                                                        # noqa: E731
    want = _loop(f, X3)
    _close(vmap(f)(X3), want)
    _close(vmap(f, in_axes=2)(np.moveaxis(X3, 0, 2)), want)
    g = dualad.grad(lambda x: np.sum(np.sin(x[idx])))                 # untake's rule
    _close(vmap(g)(X3), _loop(g, X3))


@pytest.mark.parametrize("idx", [(1,), (slice(0, 2), 3), (np.array([0, 2]), slice(None), 1),
                                 (np.array([2, 0]), np.array([1, 1]))], ids=repr)
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_functional_updates(idx, in_axes):
    """at(x)[idx].set(v) with x and v each batched or shared (scatter_set's rule), and the
    gradient through it."""
    xs = RNG.standard_normal((3, 3, 4, 5))
    vs = RNG.standard_normal((3,) + np.zeros((3, 4, 5))[idx].shape)
    x = xs if in_axes[0] == 0 else xs[0]
    v = vs if in_axes[1] == 0 else vs[0]
    want = np.stack([_set(xs[k] if in_axes[0] == 0 else xs[0], idx,
                          vs[k] if in_axes[1] == 0 else vs[0]) for k in range(3)])
    f = lambda a, b: at(a)[idx].set(b)                                        # noqa: E731
    _close(vmap(f, in_axes=in_axes)(x, v), want)
    g = dualad.grad(lambda a, b: np.sum(np.sin(at(a)[idx].set(b * b))), argnums=(0, 1))
    got = vmap(g, in_axes=in_axes)(x, v)
    loop = [g(xs[k] if in_axes[0] == 0 else xs[0], vs[k] if in_axes[1] == 0 else vs[0])
            for k in range(3)]
    for j in range(2):      # a shared argument too gets one gradient per example
        _close(got[j], np.stack([o[j] for o in loop]))


def _set(x, idx, v):
    y = np.array(x, copy=True)
    y[idx] = v
    return y


# --- products ---------------------------------------------------------------------------

EINSUMS = [("ij,jk->ik", (3, 4), (4, 2)), ("ii->i", (3, 3)), ("ij->", (2, 3)),
           ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 2)), ("i,i->", (4,), (4,)),
           ("ij,j->ij", (2, 3), (3,)), ("bij,bjk->bik", (2, 2, 3), (2, 3, 2))]


@pytest.mark.parametrize("spec", EINSUMS, ids=lambda s: s[0])
def test_einsum(spec):
    sub, *shapes = spec
    ops = [RNG.standard_normal((3,) + s) for s in shapes]
    for mapped in range(len(ops)) if len(ops) > 1 else [0]:
        in_axes = tuple(0 if k == mapped else None for k in range(len(ops)))
        args = [o if k == mapped else o[0] for k, o in enumerate(ops)]
        want = np.stack([np.einsum(sub, *[o[b] if k == mapped else o[0]
                                          for k, o in enumerate(ops)]) for b in range(3)])
        _close(vmap(lambda *xs: np.einsum(sub, *xs), in_axes=in_axes)(*args), want)
    _close(vmap(lambda *xs: np.einsum(sub, *xs))(*ops), _loop(lambda *xs: np.einsum(sub, *xs),
                                                                *ops))


@pytest.mark.parametrize("shapes", [((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                                    ((4,), (2, 4, 3))], ids=str)
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_matmul_shapes(shapes, in_axes):
    a = RNG.standard_normal((3,) + shapes[0])
    b = RNG.standard_normal((3,) + shapes[1])
    args = [a if in_axes[0] == 0 else a[0], b if in_axes[1] == 0 else b[0]]
    want = np.stack([np.matmul(a[k] if in_axes[0] == 0 else a[0],
                               b[k] if in_axes[1] == 0 else b[0]) for k in range(3)])
    _close(vmap(lambda x, y: x @ y, in_axes=in_axes)(*args), want)


# --- linear algebra ---------------------------------------------------------------------

def _spd(*lead, n=3):
    m = RNG.standard_normal(lead + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("b_shape", [(3,), (3, 2), (2, 3, 1)], ids=str)
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_solve_with_vector_and_matrix_right_hand_sides(b_shape, in_axes):
    """NumPy 2: a 1-D b is one vector (per example), otherwise a stack of matrices."""
    A = _spd(4)
    B = RNG.standard_normal((4,) + b_shape)
    args = [A if in_axes[0] == 0 else A[0], B if in_axes[1] == 0 else B[0]]
    want = np.stack([np.linalg.solve(A[k] if in_axes[0] == 0 else A[0],
                                     B[k] if in_axes[1] == 0 else B[0]) for k in range(4)])
    _close(vmap(np.linalg.solve, in_axes=in_axes)(*args), want, rtol=1e-10)


def test_solve_of_a_stack_against_one_vector_each():
    A = _spd(3, 2)                          # each example: a stack of two matrices
    b = RNG.standard_normal((3, 3))         # and one vector
    _close(vmap(np.linalg.solve)(A, b), _loop(np.linalg.solve, A, b), rtol=1e-10)


# --- reductions, scans, sort, fft, joining ----------------------------------------------

X2 = RNG.standard_normal((3, 2, 3, 4))


@pytest.mark.parametrize("fn", [np.sum, np.max, np.min, np.prod, np.mean, np.std])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, -1), (-2,)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_with_negative_and_tuple_axes(fn, axis, keepdims):
    f = lambda x: fn(x, axis=axis, keepdims=keepdims)                          # noqa: E731
    _close(vmap(f)(X2), _loop(f, X2))


@pytest.mark.parametrize("fn", [np.cumsum, np.cumprod, np.sort, np.fft.fft, np.fft.rfft])
@pytest.mark.parametrize("axis", [0, -1, 1])
def test_axis_functions(fn, axis):
    f = lambda x: fn(x, axis=axis)                                             # noqa: E731
    _close(vmap(f)(X2), _loop(f, X2))
    _close(vmap(f, in_axes=-1)(np.moveaxis(X2, 0, -1)), _loop(f, X2))


@pytest.mark.parametrize("f", [
    lambda x: np.fft.fftn(x, axes=(-2, -1)), lambda x: np.fft.ifft2(x, norm="ortho"),
    lambda x: np.fft.irfft(np.fft.rfft(x), n=4), lambda x: np.fft.rfftn(x, axes=(0, 2)),
    lambda x: np.fft.fftshift(x, axes=-1), lambda x: np.sort(x, axis=None),
    lambda x: np.median(x, axis=-1), lambda x: np.quantile(x, 0.3, axis=0)],
    ids=["fftn", "ifft2", "irfft", "rfftn", "fftshift", "sort None", "median", "quantile"])
def test_axes_forms(f):
    _close(vmap(f)(X2), _loop(f, X2))


@pytest.mark.parametrize("axis", [0, -1])
def test_concatenate_batched_with_shared_operands(axis):
    c = RNG.standard_normal((3, 4))
    f = lambda x: np.concatenate([x, c, x * 2], axis=axis)                     # noqa: E731
    xs = RNG.standard_normal((5, 3, 4))
    _close(vmap(f)(xs), _loop(f, xs))
    g = lambda x, y: np.stack([x, y], axis=axis)                               # noqa: E731
    _close(vmap(g, in_axes=(0, None))(xs, c), np.stack([g(x, c) for x in xs]))
    _close(vmap(lambda x: np.hstack([x, c]))(xs), np.stack([np.hstack([x, c]) for x in xs]))


def test_prod_and_max_with_zeros_and_ties_under_vmap_of_grad():
    """The rules' per-example masks (zeros of prod, ties of max): each example its own."""
    X = np.array([[[1.0, 0.0, 2.0], [3.0, 3.0, 0.5]], [[0.0, 0.0, 1.0], [2.0, 1.0, 2.0]],
                  [[1.0, 2.0, 3.0], [4.0, 4.0, 4.0]]])
    for f in (lambda x: np.sum(np.prod(x, axis=-1)), lambda x: np.sum(np.max(x, axis=-1)),
              lambda x: np.sum(np.sort(x, axis=-1) * np.arange(3.0))):
        _close(vmap(dualad.grad(f))(X), _loop(dualad.grad(f), X))


# --- vmap(grad) on each family ----------------------------------------------------------

def _conv(x):
    return np.sum(np.convolve(x[0], np.array([0.5, -1.0, 2.0])) ** 2)


FAMILIES = {
    "shape": lambda x: np.sum(np.transpose(np.reshape(x, (3, 2)))[::-1] ** 2 * np.arange(3.0)),
    "reductions": lambda x: np.sum(np.max(x, axis=0) * np.std(x, axis=-1).sum()),
    "scans": lambda x: np.sum(np.cumsum(x, axis=1) * np.cumprod(x + 2.0, axis=0)),
    "indexing": lambda x: np.sum(x[np.array([1, 0, 1]), ::-1] ** 3),
    "products": lambda x: np.sum(np.einsum("ij,kj->ik", x, x) @ np.ones(2)) + x[0] @ x[1],
    "linalg": lambda x: np.linalg.det(x[:, :2] + 3 * np.eye(2)) + np.sum(
        np.linalg.solve(x[:, :2] + 3 * np.eye(2), x[:, 2])),
    "decompositions": lambda x: np.sum(np.linalg.svd(x, compute_uv=False) ** 2) + np.sum(
        np.linalg.eigvalsh(x[:, :2] @ x[:, :2].T + np.eye(2))),
    "fft": lambda x: np.sum(np.abs(np.fft.rfft(x, axis=-1)) ** 2),
    "sort": lambda x: np.sum(np.sort(x, axis=-1) * np.arange(3.0)) + np.median(x),
    "convolve": _conv,
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_vmap_of_grad_per_family(family):
    f = FAMILIES[family]
    X = RNG.standard_normal((4, 2, 3))
    g = dualad.grad(f)
    _close(vmap(g)(X), _loop(g, X), rtol=1e-10)
    # and the other order: the gradient of the batched sum
    _close(dualad.grad(lambda Xs: np.sum(vmap(f)(Xs)))(X), _loop(g, X), rtol=1e-10)


def test_vmap_of_grad_through_scipy_primitives():
    from dualad.scipy.signal import lfilter
    from dualad.scipy.integrate import quad
    X = RNG.uniform(0.5, 1.5, (3, 4))

    def f(x):
        y = lfilter(np.array([1.0, 0.5]), np.array([1.0, -0.3]), x)
        area, _ = quad(lambda t, k: np.exp(-k * t), 0.0, 1.0, args=(x[0],))
        return np.sum(y ** 2) + area
    g = dualad.grad(f)
    _close(vmap(g)(X), _loop(g, X), rtol=1e-10)


def test_vmap_of_grad_through_an_ode_solution():
    """A looped primitive (odeint) under vmap(grad): its derivative rules batch; the
    batched sensitivity solve shares its steps, so it agrees to the solver's tolerance."""
    from dualad.scipy.integrate import odeint
    K = np.array([0.5, 1.0, 1.5])

    def f(k):
        y = odeint(lambda y, t, k: -k * y, np.array([1.0, 2.0]), np.array([0.0, 0.5, 1.0]),
                   args=(k,), rtol=1e-11, atol=1e-12)
        return np.sum(y[-1])
    g = dualad.grad(f)
    want = np.array([-3.0 * np.exp(-k) for k in K])       # d/dk (1 + 2) e^{-k}
    _close(vmap(g)(K), want, rtol=1e-8)
    _close(_loop(g, K), want, rtol=1e-8)


# --- non-differentiable arguments and results under vmap --------------------------------

@pytest.mark.parametrize("f", [np.argmax, np.argsort, lambda x: np.argmin(x, axis=0),
                               lambda x: np.searchsorted(np.sort(x), 0.1),
                               np.count_nonzero, lambda x: (x > 0).any(), lambda x: x.argmax(),
                               lambda x: np.isclose(x, x[0])],
                         ids=["argmax", "argsort", "argmin", "searchsorted", "count_nonzero",
                              "any", "argmax method", "isclose"])
def test_functions_of_values_run_per_example(f):
    """A function of values (no derivative) sees one example at a time, not the whole
    batch as one example."""
    X = RNG.standard_normal((4, 5))
    np.testing.assert_array_equal(vmap(f)(X), np.stack([f(x) for x in X]))


def test_argmax_selection_under_vmap_of_grad():
    X = RNG.standard_normal((4, 5))
    f = lambda x: np.sum(np.where(np.arange(5) == np.argmax(x), x, 0.0) ** 2)  # noqa: E731
    _close(vmap(dualad.grad(f))(X), _loop(dualad.grad(f), X))


def test_value_dependent_shapes_and_batched_indices_raise_clearly():
    X = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    with pytest.raises(ValueError, match="nonzero.*shape depends on each example"):
        vmap(np.nonzero)(X)
    for f in (lambda x, m: np.compress(m, x), lambda x, m: np.extract(m, x)):
        with pytest.raises(NotImplementedError, match="batched by vmap"):
            vmap(f)(X, X > 0.5)

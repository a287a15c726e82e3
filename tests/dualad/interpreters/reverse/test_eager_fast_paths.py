"""Issue 31, the eager path: a basic slice's cotangent is a slice assignment (no
``np.add.at``), contractions reach BLAS, and the numbers stay those of the plain rules."""
import types

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad.interpreters.reverse import cotangents


def _spy_numpy(calls):
    """Stands in for the ``np`` module inside dualad.interpreters.reverse.cotangents, noting ``np.add.at``'s
    indices."""
    add = types.SimpleNamespace(at=lambda *a: (calls.append(a[1]), np.add.at(*a))[1],
                                reduce=np.add.reduce)

    class Spy:
        def __getattr__(self, name):
            return add if name == "add" else getattr(np, name)
    return Spy()


def _ode_like(x):
    y = np.zeros_like(x)
    for _ in range(3):
        y = y + 0.1 * np.concatenate([x[:1], x[1:] * y[:-1]])
    return y[-1] + np.sum(x[::2, None] * x[1::2][:, None])


def test_basic_slices_scatter_without_add_at(monkeypatch):
    calls = []
    x = np.linspace(0.5, 1.5, 8)
    want = dualad.grad(_ode_like)(x)
    monkeypatch.setattr(cotangents, "np", _spy_numpy(calls))
    got = dualad.grad(_ode_like)(x)
    assert calls == [], f"np.add.at ran for basic indices {calls}"
    np.testing.assert_array_equal(got, want)


def test_advanced_index_still_adds_repeats():
    x = np.arange(1.0, 5.0)
    g = dualad.grad(lambda v: np.sum(v[np.array([0, 2, 2, 2])]))(x)
    np.testing.assert_array_equal(g, [1.0, 0.0, 3.0, 0.0])
    g = dualad.grad(lambda v: np.sum(v[1:] * 2.0) + np.sum(v[np.array([1, 1])]) +
                    np.sum(v[:, None][np.array([3, 3]), 0]))(x)
    np.testing.assert_array_equal(g, [0.0, 4.0, 2.0, 4.0])


_BASIC = st.sampled_from([np.s_[1:], np.s_[:-1], np.s_[::2], np.s_[1::3], np.s_[2],
                          np.s_[-1], np.s_[:, 1], np.s_[1:, ::-1], np.s_[None, 2:],
                          np.s_[..., 0], np.s_[::-2, 1:2]])


@settings(derandomize=True, max_examples=40, deadline=None)
@given(_BASIC, _BASIC, st.booleans())
def test_slice_cotangents_match_dense_sum(a, b, two_d):
    """Σ w_a·x[a] + Σ w_b·x[b] has gradient scatter(w_a, a) + scatter(w_b, b), the
    overlapping entries added, whatever slices a and b are (1-D or 2-D x)."""
    x = np.arange(1.0, 13.0).reshape(3, 4) if two_d else np.arange(1.0, 13.0)
    try:
        xa, xb = x[a], x[b]
    except IndexError:
        return
    wa, wb = np.cos(np.arange(xa.size)).reshape(xa.shape), np.sin(
        np.arange(xb.size) + 1.0).reshape(xb.shape)
    want = np.zeros_like(x)
    np.add.at(want, a, wa)
    np.add.at(want, b, wb)
    got = dualad.grad(lambda v: np.sum(wa * v[a]) + np.sum(wb * v[b]))(x)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


# --- contractions: a two-operand einsum is a batched matmul (BLAS) where it pays -------
from dualad.ops.core import contract  # noqa: E402
from dualad.verification import check_registry  # noqa: E402

_GMM_SPECS = ["ijk,mik->mij", "mij,mik->ijk", "mij,ijk->mik"]


def test_gmm_contractions_and_their_vjps_do_not_run_numpy_einsum(monkeypatch):
    # GradBench gmm: NumPy's einsum loops (no BLAS) were half of f and of both VJPs.
    rng = np.random.default_rng(0)
    ls, xc = rng.normal(size=(5, 3, 3)), rng.normal(size=(400, 5, 3))
    want = [np.einsum("ijk,mik->mij", ls, xc)]
    f = lambda a, b: np.sum(np.sin(np.einsum("ijk,mik->mij", a, b)))   # noqa: E731
    want += list(dualad.grad(f, argnums=(0, 1))(ls, xc))
    seen = []
    real = np.einsum

    def spy(spec, *ops, **kw):   # the user's call sees traced operands; dualad's, plain ones
        if all(type(o) is np.ndarray for o in ops):
            seen.append(spec)
        return real(spec, *ops, **kw)
    monkeypatch.setattr(np, "einsum", spy)
    got = [dualad.grad(lambda a: np.sum(np.einsum("ijk,mik->mij", a, xc)))(ls)]
    got += list(dualad.grad(f, argnums=(0, 1))(ls, xc))
    assert not [s for s in seen if s in _GMM_SPECS], seen
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)


_LETTERS = "abcdef"


@st.composite
def _two_operand_specs(draw):
    """A two-operand einsum with distinct letters per operand: batch, contracted, free
    and summed-alone letters in random orders, sizes 1-4, float64/float32/complex."""
    la = draw(st.lists(st.sampled_from(_LETTERS), min_size=0, max_size=4, unique=True))
    lb = draw(st.lists(st.sampled_from(_LETTERS), min_size=0, max_size=4, unique=True))
    both = sorted(set(la) | set(lb))
    out = draw(st.lists(st.sampled_from(both), unique=True, max_size=len(both))
               if both else st.just([]))
    sizes = {c: draw(st.integers(1, 4)) for c in both}
    dtype = draw(st.sampled_from([np.float64, np.float32, np.complex128]))
    return "".join(la), "".join(lb), "".join(out), sizes, dtype


@settings(derandomize=True, max_examples=150, deadline=None)
@given(_two_operand_specs())
def test_contract2_matches_numpy_einsum(case):
    sa, sb, out, sizes, dtype = case
    rng = np.random.default_rng(len(sa) * 7 + len(sb))
    a = np.asarray(rng.normal(size=[sizes[c] for c in sa])).astype(dtype)
    b = np.asarray(rng.normal(size=[sizes[c] for c in sb])).astype(dtype)
    if dtype is np.complex128:
        a = np.asarray(a + 1j * rng.normal(size=a.shape))
    saved = contract.MIN_WORK
    contract.MIN_WORK = 0
    try:
        got = contract.contract2(sa, sb, out, a, b)
    finally:
        contract.MIN_WORK = saved
    want = np.einsum(f"{sa},{sb}->{out}", a, b)
    assert got is not None
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_contract2_declines_what_it_cannot_do():
    a, b = np.ones((60, 60)), np.ones((60, 60))
    assert contract.contract2("ii", "ij", "j", a, b) is None         # a diagonal
    assert contract.contract2("ij", "jk", "ik", a.astype(int), b) is None   # integers
    assert contract.contract2("ij", "jk", "ik", np.ones((60, 1)), np.ones((2, 60))) is None
    assert contract.contract2("ij", "jk", "ik", np.ones((2, 2)), np.ones((2, 2))) is None
    np.testing.assert_allclose(contract.contract2("ij", "jk", "ik", a, b), a @ b)


def test_einsum_rules_pass_the_checker_on_the_matmul_route(monkeypatch):
    monkeypatch.setattr(contract, "MIN_WORK", 0)
    report = check_registry(names=["einsum"], jit=False)
    assert report.ok, str(report)


# --- the collector: a tape is freed by reference counting alone ----------------------
import contextlib  # noqa: E402
import gc  # noqa: E402
import weakref  # noqa: E402


@contextlib.contextmanager
def _collector_off():
    """The test's own measurement: the collector paused, its previous state restored."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _indexed_loss(refs, fail=False):
    def f(x):
        y = np.sin(x) * 2.0
        s = 0.0
        for i in range(3):       # x[i] in a loop: y.items caches the nodes
            s = s + y[i] * y[i]
        refs.extend([weakref.ref(y), weakref.ref(s)])
        if fail:
            raise ValueError("boom")
        return s
    return f


def test_vjp_tape_freed_without_the_collector():
    refs = []
    with _collector_off():
        out, pullback = dualad.vjp(_indexed_loss(refs), np.linspace(0.1, 1.0, 4))
        pullback(1.0)
        del out, pullback
        alive = [r() is not None for r in refs]
    assert alive == [False, False], "x.items -> x[i] -> x kept the tape in a cycle"


def test_tape_of_a_raising_function_freed_without_the_collector():
    refs = []
    with _collector_off():
        with pytest.raises(ValueError):
            dualad.grad(_indexed_loss(refs, fail=True))(np.linspace(0.1, 1.0, 4))
        alive = [r() is not None for r in refs]
    assert alive == [False, False]


def test_process_records_tuples():
    # lists on every node were objects the collector walks for the tape's whole life
    seen = []

    def f(x):
        y = np.exp(x)
        seen.append(y)
        return np.sum(y)
    with _collector_off():
        dualad.grad(f)(np.ones(3))
    node = seen[0]
    assert type(node.parents) is tuple and type(node.vals) in (tuple, type(None))

"""Every keyword NumPy documents for a dispatched function: NumPy's meaning, or an error that
names the function, the keyword and the traced argument's shape (issue 17).

The systematic part runs every NumPy/SciPy row of the coverage table with each documented
keyword it does not pass (verification/coverage_keywords.py: the traced value against
NumPy's with that keyword, forward and reverse Jacobians against central differences);
the rest checks the issue's keyword forms at second order in both modes
(``check_grads``, finite differences), the methods, and the errors.
"""
import dataclasses

import numpy as np
import pytest
import scipy.special as sc

import dualad
from dualad.ops.core.keyword_args import KeywordError
from dualad.verification import check_grads, coverage, coverage_keywords
from dualad.verification.coverage_table import ENTRIES

X = np.array([[0.3, -1.2, 0.8], [0.5, 0.9, -0.4]])
M = np.array([[True, False, True], [True, True, False]])

# (numpy.name, keyword) pairs allowed to give a raw error or a failure: none.
KNOWN = set()


@pytest.fixture(scope="module")
def probes():
    """Each row's keyword probe (coverage_keywords.probe), as the coverage table's
    measurement ran it: measure_all probes the same rows and caches them per process, so
    this module and tests/verification/test_coverage.py pay for the ~400 probes once."""
    return [(r.entry, r.keywords) for r in coverage.measure_all()
            if r.entry.group in coverage_keywords.GROUPS]


@pytest.mark.slow   # the ~400 rows probed (coverage.measure_all)
def test_every_documented_keyword_works_or_raises_clearly(probes):
    bad = [(e.name, kw, verdict, call) for e, p in probes for kw, (verdict, call) in p.items()
           if verdict in ("RAW", "FAILS") and (e.name, kw) not in KNOWN]
    assert not bad, "\n".join(map(str, bad))
    counts = coverage_keywords.counts(p for _, p in probes)
    # the probe itself ran: most keywords work (a broken probe would say "untried")
    assert counts["ok"] > 1000 and counts["untried"] < 40, counts


@pytest.mark.slow   # the ~400 rows probed (coverage.measure_all)
def test_the_issue_s_keyword_forms_are_all_tried(probes):
    tried = {}   # a function's keyword works if it works on one of its rows
    for e, p in probes:
        for kw, (verdict, _) in p.items():
            if tried.get((e.name, kw)) != "ok":
                tried[(e.name, kw)] = verdict
    for name, kw in [("numpy.sum", "where"), ("numpy.mean", "dtype"), ("numpy.std", "correction"),
                     ("numpy.max", "initial"), ("numpy.cumsum", "dtype"), ("numpy.exp", "dtype"), ("numpy.var", "mean"),
                     ("numpy.prod", "where"), ("numpy.nanmax", "initial")]:
        assert tried.get((name, kw)) == "ok", (name, kw, tried.get((name, kw)))


def test_the_probe_catches_a_keyword_that_is_silently_ignored(monkeypatch):
    """The checker itself: cumsum that drops dtype= (computes in float64 where NumPy
    returns complex) is reported, not passed."""
    from dualad.core.primitive import NUMPY_FUNCTIONS
    real = NUMPY_FUNCTIONS[np.cumsum]
    monkeypatch.setitem(NUMPY_FUNCTIONS, np.cumsum,
                        lambda a, axis=None, dtype=None, out=None: real(a, axis))
    monkeypatch.setattr("dualad.frontend.keywords._in_dtype", lambda fname, out, dtype, x: out)
    ns = coverage.namespace()
    entry = next(e for e in ENTRIES if e.name == "numpy.cumsum")
    got = coverage_keywords.probe(entry, ns, lambda en: coverage.measure(en, ns, whole=False))
    assert got["dtype"][0] in ("FAILS", "RAW"), got["dtype"]


# --- second order, both modes --------------------------------------------------------------
FORMS = {
    "sum(where=)": lambda x: np.sum(x, where=M, axis=1),
    "sum(initial=, keepdims=)": lambda x: np.sum(x, axis=0, keepdims=True, initial=0.25),
    "mean(dtype=)": lambda x: np.mean(x, dtype=np.float64, axis=0),
    "mean(where=)": lambda x: np.mean(x, where=M),
    "var(ddof=, where=)": lambda x: np.var(x, ddof=1, where=M, axis=1),
    "var(mean=)": lambda x: np.var(x, axis=1, mean=np.mean(x, axis=1, keepdims=True)),
    "std(correction=)": lambda x: np.std(x, correction=1, axis=0),
    "max(initial=)": lambda x: np.max(x, initial=0.6, axis=0),
    "max(where=, initial=)": lambda x: np.max(x, where=M, initial=-5.0, axis=1),
    "min(where=, initial=)": lambda x: np.min(x, where=M, initial=5.0),
    "amax(keepdims=)": lambda x: np.amax(x, axis=1, keepdims=True),
    "prod(where=, initial=)": lambda x: np.prod(x, where=M, axis=1, initial=2.0),
    "cumsum(dtype=)": lambda x: np.cumsum(x, dtype=np.float64),
    "cumprod(dtype=)": lambda x: np.cumprod(x, axis=1, dtype=np.float64),
    "nansum(where=)": lambda x: np.nansum(x, where=M),
    "nanmax(initial=)": lambda x: np.nanmax(x, axis=0, initial=0.6),
    "nanvar(where=)": lambda x: np.nanvar(x, where=M, axis=1),
    "clip(min=, max=)": lambda x: np.clip(x, min=-0.5, max=0.6),
    "clip(signature=, casting=)": lambda x: np.clip(x, -0.5, 0.6, signature="ddd->d",
                                                     casting="same_kind"),
    "exp(dtype=)": lambda x: np.exp(x, dtype=np.float64),
    "add(signature=)": lambda x: np.add(x, x * x, signature="dd->d"),
    "sin(casting=, order=)": lambda x: np.sin(x, casting="same_kind", order="K"),
    "vecdot(axis=)": lambda x: np.vecdot(x, x * x, axis=0),
    "vecdot(axis=, keepdims=)": lambda x: np.vecdot(x, x, axis=1, keepdims=True),
    "matmul(axes=)": lambda x: np.matmul(x, x.T, axes=[(0, 1), (0, 1), (1, 0)]),
    "erf(dtype=)": lambda x: sc.erf(x, dtype=np.float64),
    "sum(a=)": lambda x: np.sum(a=x, axis=0),
    "reshape(copy=)": lambda x: np.reshape(x, (3, 2), copy=True),
}


@pytest.mark.parametrize("name", FORMS)
def test_keyword_form_matches_numpy_and_differences_at_second_order(name):
    f = FORMS[name]
    assert np.allclose(dualad.jvp(f, (X,), (np.zeros_like(X),))[0], f(X), atol=0, rtol=1e-13)
    check_grads(f, (X,), order=2)


# --- the traced value's methods ----------------------------------------------------------------
METHODS = {   # (method call on a traced value, NumPy's function form of the same)
    "x.sum(where=)": (lambda x: x.sum(where=M, axis=1), lambda x: np.sum(x, where=M, axis=1)),
    "x.max(initial=)": (lambda x: x.max(initial=0.0), lambda x: np.max(x, initial=0.0)),
    "x.min(axis=, keepdims=)": (lambda x: x.min(0, keepdims=True),
                                lambda x: np.min(x, 0, keepdims=True)),
    "x.std(correction=)": (lambda x: x.std(correction=1), lambda x: np.std(x, correction=1)),
    "x.var(0, None, None, 1)": (lambda x: x.var(0, None, None, 1), lambda x: np.var(x, 0, ddof=1)),
    "x.mean(dtype=)": (lambda x: x.mean(dtype=np.float64), lambda x: np.mean(x)),
    "x.prod(where=, initial=)": (lambda x: x.prod(where=M, initial=3.0),
                                 lambda x: np.prod(x, where=M, initial=3.0)),
    "x.cumsum(dtype=)": (lambda x: x.cumsum(1, dtype=np.float64), lambda x: np.cumsum(x, 1)),
    "x.clip(min=, max=)": (lambda x: x.clip(min=-0.5, max=0.6), lambda x: np.clip(x, -0.5, 0.6)),
    "x.reshape(shape=, copy=)": (lambda x: x.reshape(shape=(3, 2), copy=False),
                                 lambda x: np.reshape(x, (3, 2))),
    "x.trace(offset=)": (lambda x: x.trace(offset=1), lambda x: np.trace(x, offset=1)),
    "x.ravel(order=)": (lambda x: x.ravel(order="C"), lambda x: np.ravel(x)),
}


def _differences(f, x, h=1e-6):
    """Central differences of f at x: the Jacobian, (output size, input size)."""
    cols = []
    for e in np.eye(x.size):
        e = e.reshape(x.shape)
        cols.append((np.ravel(f(x + h * e)) - np.ravel(f(x - h * e))) / (2 * h))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("name", METHODS)
def test_methods_take_numpy_s_keywords(name):
    """The method on a traced value against NumPy's function form (plain ndarrays of
    NumPy 2.2 lack some of these method keywords, e.g. ndarray.std(correction=)): the
    value, and both modes' Jacobians against central differences of the function."""
    method, function = METHODS[name]
    value = dualad.jvp(method, (X,), (np.zeros_like(X),))[0]
    assert np.allclose(value, function(X), rtol=1e-13, atol=0)
    fd = _differences(function, X)
    forward = np.stack([np.ravel(dualad.jvp(method, (X,), (e.reshape(X.shape),))[1])
                        for e in np.eye(X.size)], axis=1)
    value, pullback = dualad.vjp(method, X)
    reverse = np.stack([np.ravel(pullback(e.reshape(np.shape(value)))[0])
                        for e in np.eye(np.size(value))])
    for J in (forward, reverse):
        assert np.allclose(J, fd, rtol=1e-6, atol=1e-8), (J, fd)


# --- what raises, and how --------------------------------------------------------------------
def _grad(f):
    return dualad.grad(lambda x: np.sum(f(x)))(X)


@pytest.mark.parametrize("f, kw", [
    (lambda x: np.sum(x, dtype=np.int64), "dtype"),
    (lambda x: np.mean(x, dtype=bool), "dtype"),
    (lambda x: np.cumsum(x, dtype=np.int32), "dtype"),
    (lambda x: np.trace(x, dtype=np.int32), "dtype"),
    (lambda x: np.dot(x, x.T, out=np.zeros((2, 2))), "out"),
    (lambda x: x.sum(dtype=int), "dtype"),
    (lambda x: np.exp(x, where=M), "where"),
    (lambda x: sc.erf(x, where=M), "where"),
    (lambda x: np.clip(x, where=M, min=0.0), "where"),
    (lambda x: np.clip(x, 0.0, 1.0, min=0.0), "min"),
    (lambda x: np.std(x, ddof=1, correction=1), "correction"),
    (lambda x: np.max(x, where=M), "initial"),
    (lambda x: np.sum(x, where=np.ones(2, bool)), "where"),
    (lambda x: np.sum(x, where=np.ones_like(x)), "where"),
    (lambda x: np.sort(x, kind="stable") * 0 + np.sum(x, out=np.zeros(())), "out"),
    (lambda x: np.zeros_like(x, device="cuda") + x, "device"),
])
def test_keywords_without_a_differentiable_meaning_raise_clearly(f, kw):
    with pytest.raises((TypeError, ValueError)) as info:
        _grad(f)
    text = str(info.value)
    assert kw in text and "unexpected keyword" not in text, text
    assert "(2, 3)" in text or kw == "initial", text   # the traced argument's shape


def test_keyword_error_says_what_to_write_instead():
    with pytest.raises(KeywordError, match=r"numpy\.exp\(\.\.\., where=\.\.\.\) on a traced "
                                           r"value of shape \(2, 3\).*np\.where"):
        _grad(lambda x: np.exp(x, where=M))


def test_where_selecting_everything_is_the_plain_call():
    f = lambda x: np.exp(x, where=True) + np.log1p(x * x, where=np.ones((2, 3), bool))  # noqa
    check_grads(f, (X,), order=2)


def test_an_integer_output_loop_has_zero_derivative_and_numpy_s_value():
    f = lambda x: np.add(x, x, dtype=np.int64, casting="unsafe")  # noqa: E731
    value, tangent = dualad.jvp(f, (X,), (np.ones_like(X),))
    assert np.array_equal(value, f(X)) and value.dtype == np.int64
    assert not np.any(tangent)


def test_float32_dtype_gives_numpy_s_dtype():
    for f in (lambda x: np.sum(x, dtype=np.float32), lambda x: np.exp(x, dtype=np.float32),
              lambda x: np.cumsum(x, dtype=np.float32), lambda x: x.mean(dtype=np.float32),
              lambda x: np.trace(x, dtype=np.float32), lambda x: np.nanvar(x, dtype=np.float32),
              lambda x: np.cumulative_prod(x, axis=1, dtype=np.float32)):
        value = dualad.jvp(f, (X,), (np.ones_like(X),))[0]
        assert value.dtype == f(X).dtype == np.float32
        assert np.allclose(value, f(X), rtol=1e-6)


def test_like_builds_numpy_s_plain_array():
    def f(x):
        z = np.zeros(3, like=x)
        o = np.full(3, 2.0, like=x)
        assert type(z) is np.ndarray and type(o) is np.ndarray
        return np.sum(x) + z + o
    check_grads(f, (X,), order=1)


def test_device_cpu_is_accepted():
    check_grads(lambda x: np.zeros_like(x, device="cpu") + x, (X,), order=1)


def test_keyword_error_is_both_type_and_value_error():
    assert issubclass(KeywordError, TypeError) and issubclass(KeywordError, ValueError)
    assert dataclasses.is_dataclass(coverage.Result)


@pytest.mark.parametrize("x, f", [
    (np.zeros((0,)), lambda x: np.max(x, initial=1.0)),
    (np.zeros((2, 0)), lambda x: np.min(x, axis=1, initial=1.0, keepdims=True)),
    (np.zeros((0,)), lambda x: np.sum(x, initial=1.0)),
    (X, lambda x: np.max(x, axis=1, where=np.array([[False] * 3, [True, True, False]]),
                         initial=-2.0)),
    (X, lambda x: np.mean(x, axis=1, where=np.array([[False] * 3, [True, True, False]]))),
    (X, lambda x: np.var(x, axis=1, ddof=2, where=np.array([[False] * 3, [True, True, False]]))),
    (X.astype(np.float32), lambda x: np.var(x, where=M)),
    (X.astype(np.float32), lambda x: np.nansum(x, where=M, axis=0)),
])
def test_edge_cases_give_numpy_s_value_and_dtype(x, f):
    """Empty reductions with initial=, selections with nothing selected (NaN as NumPy),
    n − ddof ≤ 0 (inf/nan as NumPy), float32 staying float32."""
    import warnings
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        value = dualad.jvp(f, (x,), (np.ones_like(x),))[0]
        expected = f(x)
    assert np.result_type(value) == np.result_type(expected)
    assert np.allclose(value, expected, equal_nan=True, rtol=1e-6)


def test_where_with_the_values_of_out_is_numpy_s_select_and_safe_at_poles():
    """``call_ufunc(..., fill=out)``, for the ``out=`` front end: where(mask, f(x), out),
    NumPy's ``np.divide(a, b, out=o, where=b != 0)``; the pole b = 0 that the mask leaves
    out gives no NaN derivative (its inputs are replaced by a selected point)."""
    from dualad.frontend import keywords
    from dualad.core.primitive import NUMPY_UFUNCS
    b = np.array([0.0, 2.0, 0.5])

    def f(a, b):
        return keywords.call_ufunc(np.divide, NUMPY_UFUNCS[np.divide], (a, b),
                                   {"where": b != 0}, fill=a * 0 + 7.0)
    a = np.array([0.3, 0.5, 0.8])
    value = dualad.jvp(f, (a, b), (np.ones(3), np.ones(3)))[0]
    assert np.array_equal(value, np.divide(a, b, out=np.full(3, 7.0), where=b != 0))
    check_grads(f, (a, b), order=2)
    log = lambda x: keywords.call_ufunc(np.log, NUMPY_UFUNCS[np.log], (x,),  # noqa: E731
                                        {"where": x > 0}, fill=x)
    check_grads(log, (np.array([-1.0, 0.5, 2.0]),), order=2)


def test_the_signature_snapshot_is_what_numpy_documents():
    """verification/coverage_signatures.py (the keyword column's parameter lists, the same
    on every NumPy) holds only keywords the installed NumPy/SciPy documents, wherever it
    can introspect the function (NumPy ≥ 2.4 can for its C functions too)."""
    import inspect
    from dualad.verification.coverage_signatures import SIGNATURES
    ns = coverage.namespace()
    checked = 0
    for e in ENTRIES:
        found = coverage_keywords.callee(e, ns) if e.group in coverage_keywords.GROUPS else None
        if found is None or isinstance(found[0], np.ufunc):
            continue
        fn = found[0]
        try:
            installed = set(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        snapshot = {n for n, _ in coverage_keywords.params(fn)}
        assert snapshot <= installed, (e.name, snapshot - installed)
        checked += 1
    assert checked > 100 and len(SIGNATURES) > 200

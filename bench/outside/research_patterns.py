"""45 patterns of research code, written as researchers write them, differentiated as written.

    python bench/outside/research_patterns.py [--peer jax] [--scipy dualad] [-v]

Each pattern is a scalar function of a parameter vector written against a NumPy-like
module ``np`` and a SciPy-like module ``sp``: plain NumPy and SciPy for dualad (nothing
of dualad's in the code), ``jax.numpy`` and ``jax.scipy`` for JAX (``--peer jax``, run
with a Python that has JAX: the JAX row is the code as a JAX user would write it).
``--scipy dualad`` gives dualad's patterns ``dualad.scipy`` for ``sp`` (SciPy where it has no
such module): the analogue of JAX's ``jax.scipy``; NumPy stays plain. Run with
SCIPY_ARRAY_API=1 in the environment to measure SciPy's own array-API dispatch.
A pattern passes when its gradient (dualad.grad / jax.grad) matches a central finite
difference of the same code on plain NumPy (rtol 1e-5); it fails with an error, or with
a wrong number, which is reported as WRONG (the one outcome that must never happen).
20 patterns are code shapes (in-place updates, lists of traced values, SciPy calls,
sparse matrices, integer casts); 25 are NumPy keyword forms.
"""
from __future__ import annotations

import argparse
import sys
import traceback

import numpy

PATTERNS = []


def pattern(n, kind="code"):
    def register(fn):
        PATTERNS.append((fn.__name__, kind, n, fn))
        return fn
    return register


# ---- code shapes ------------------------------------------------------------------------
@pattern(2)
def ode_rhs_inplace(np, sp, p):
    """Lotka–Volterra right-hand side filled in place, four explicit Euler steps."""
    def rhs(y):
        dy = np.zeros_like(y)
        dy[0] = p[0] * y[0] - 0.1 * y[0] * y[1]
        dy[1] = -p[1] * y[1] + 0.05 * y[0] * y[1]
        return dy
    y = np.ones(2) * 2.0 + 0 * p
    for _ in range(4):
        y = y + 0.1 * rhs(y)
    return np.sum(y)


@pattern(6)
def finite_volume_residual(np, sp, u):
    """A 1-D finite-volume residual assembled into a preallocated array."""
    n = u.shape[0]
    r = np.zeros_like(u)
    flux = 0.5 * (u[1:] ** 2 + u[:-1] ** 2)
    r[1:] += flux
    r[:-1] -= flux
    r[0] += u[0]
    return np.sum(r ** 2) + np.sum(u) / n


@pattern(5)
def scatter_add_at(np, sp, x):
    """Assemble element contributions with np.add.at (a finite-element pattern)."""
    out = np.zeros_like(x)
    idx = numpy.array([0, 1, 1, 3, 4, 4])
    np.add.at(out, idx, x[numpy.array([0, 1, 2, 2, 3, 4])] ** 2)
    return np.sum(out * np.arange(5))


@pattern(3)
def list_to_array(np, sp, x):
    """Build a vector from traced scalars with np.array([...])."""
    v = np.array([x[0] ** 2, x[0] * x[1], np.sin(x[2])])
    return np.dot(v, v)


@pattern(3)
def mean_of_list(np, sp, x):
    """np.mean of a list of traced scalars (losses of several terms)."""
    return np.mean([np.sum(x ** 2), np.sum(np.cos(x)), x[0] * x[2]])


@pattern(3)
def r_concatenation(np, sp, x):
    """np.r_ to append to a traced vector."""
    return np.sum(np.r_[x, x ** 2, 1.0] ** 2)


@pattern(3)
def append_value(np, sp, x):
    """np.append of a traced vector and a traced scalar."""
    return np.sum(np.append(x, x[0] * x[1]) ** 3)


@pattern(2)
def norm_of_list(np, sp, x):
    """np.linalg.norm([a, b]) of two traced scalars."""
    return np.linalg.norm([x[0] * 2.0, x[1] ** 2])


@pattern(3)
def polyval_coefficients(np, sp, c):
    """A polynomial with traced coefficients, evaluated on a grid."""
    t = numpy.linspace(-1, 1, 7)
    return np.sum(np.polyval([c[0], c[1], c[2]], t) ** 2)


@pattern(4)
def integer_bin_index(np, sp, x):
    """Integer casts for indexing: a histogram-like lookup."""
    w = numpy.array([1.0, 2.0, 3.0, 4.0])
    idx = np.floor(np.abs(x) * 2).astype(int) % 4
    return np.sum(w[idx] * x ** 2)


@pattern(4)
def einsum_sublist(np, sp, x):
    """np.einsum in its sublist form."""
    A = np.reshape(x, (2, 2))
    return np.einsum(A, [0, 1], A, [1, 2], [0, 2]).sum()


@pattern(6)
def softmax_cross_entropy(np, sp, w):
    """Multinomial logistic loss with scipy.special.logsumexp."""
    X = numpy.arange(12.0).reshape(4, 3) / 10
    W = np.reshape(w, (3, 2))
    logits = X @ W
    return np.sum(sp.special.logsumexp(logits, axis=1) - logits[:, 0])


@pattern(2)
def gaussian_likelihood(np, sp, theta):
    """A Gaussian log-likelihood with scipy.stats.norm.logpdf."""
    data = numpy.array([0.3, -1.2, 0.8, 2.1])
    return -np.sum(sp.stats.norm.logpdf(data, theta[0], np.exp(theta[1])))


@pattern(4)
def matrix_exponential(np, sp, a):
    """A linear ODE's propagator with scipy.linalg.expm."""
    A = np.reshape(a, (2, 2))
    return np.sum(sp.linalg.expm(A * 0.5))


@pattern(3)
def gp_marginal_likelihood(np, sp, theta):
    """A Gaussian-process log marginal likelihood: cdist, cho_factor, cho_solve."""
    X = numpy.linspace(0, 1, 5)[:, None]
    y = numpy.sin(3 * X[:, 0])
    d2 = sp.spatial.distance.cdist(X, X, "sqeuclidean")
    K = np.exp(theta[0]) * np.exp(-d2 / np.exp(theta[1])) + (1e-2 + theta[2] ** 2) * np.eye(5)
    c = sp.linalg.cho_factor(K)
    alpha = sp.linalg.cho_solve(c, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(c[0])))


@pattern(3)
def triangular_solve(np, sp, b):
    """Whitening with scipy.linalg.solve_triangular."""
    L = numpy.array([[2.0, 0, 0], [0.5, 1.5, 0], [0.1, -0.3, 1.0]])
    z = sp.linalg.solve_triangular(L, b, lower=True)
    return np.sum(z ** 2)


@pattern(5)
def spline_in_data(np, sp, y):
    """A cubic spline through traced data values, evaluated between the knots."""
    t = numpy.linspace(0, 1, 5)
    cs = sp.interpolate.CubicSpline(t, y)
    return np.sum(cs(numpy.array([0.1, 0.45, 0.8])) ** 2)


@pattern(6)
def sparse_laplacian_residual(np, sp, u):
    """A PDE residual with a constant scipy.sparse matrix: A @ u + u**3."""
    import scipy.sparse
    A = scipy.sparse.diags([numpy.ones(5), -2 * numpy.ones(6), numpy.ones(5)], [-1, 0, 1],
                           format="csr")
    r = A @ u + u ** 3 - 1.0
    return np.sum(r ** 2)


@pattern(1)
def odeint_closure(np, sp, k):
    """scipy.integrate.odeint with a right-hand side closing over the parameter."""
    t = numpy.linspace(0, 1, 5)
    ys = sp.integrate.odeint(lambda y, t: -k[0] * y, numpy.array([1.0]), t)
    return np.sum(ys)


@pattern(8)
def power_spectrum(np, sp, x):
    """A power spectrum |FFT|², complex intermediate, real loss."""
    return np.sum(np.abs(np.fft.fft(x)) ** 2 * numpy.arange(8))


# ---- keyword forms ----------------------------------------------------------------------
MASK = numpy.array([True, False, True, True])


@pattern(4, "keyword")
def kw_sum_where(np, sp, x):
    return np.sum(x ** 2, where=MASK)


@pattern(4, "keyword")
def kw_mean_dtype(np, sp, x):
    return np.mean(x ** 2, dtype=numpy.float64)


@pattern(4, "keyword")
def kw_std_correction(np, sp, x):
    return np.std(x, correction=1)


@pattern(4, "keyword")
def kw_max_initial(np, sp, x):
    return np.max(x ** 2, initial=-1.0)


@pattern(4, "keyword")
def kw_cumsum_dtype(np, sp, x):
    return np.sum(np.cumsum(x, dtype=numpy.float64) ** 2)


@pattern(4, "keyword")
def kw_clip_min_max(np, sp, x):
    return np.sum(np.clip(x, min=-0.5, max=0.5) ** 2)


@pattern(4, "keyword")
def kw_exp_dtype(np, sp, x):
    return np.sum(np.exp(x, dtype=numpy.float64))


@pattern(4, "keyword")
def kw_sum_keepdims(np, sp, x):
    A = np.reshape(x, (2, 2))
    return np.sum(A / np.sum(A, axis=1, keepdims=True) * numpy.array([[1.0, 2.0], [3.0, 4.0]]))


@pattern(8, "keyword")
def kw_mean_axis_tuple(np, sp, x):
    return np.sum(np.mean(np.reshape(x, (2, 2, 2)), axis=(0, 2)) ** 2)


@pattern(4, "keyword")
def kw_var_ddof(np, sp, x):
    return np.var(x, ddof=1)


@pattern(4, "keyword")
def kw_prod_where(np, sp, x):
    return np.prod(x, where=MASK)


@pattern(4, "keyword")
def kw_min_where_initial(np, sp, x):
    return np.min(x, where=MASK, initial=10.0)


@pattern(4, "keyword")
def kw_mean_where(np, sp, x):
    return np.mean(x ** 2, where=MASK)


@pattern(4, "keyword")
def kw_norm_axis_keepdims(np, sp, x):
    A = np.reshape(x, (2, 2))
    return np.sum(A / np.linalg.norm(A, axis=1, keepdims=True))


@pattern(4, "keyword")
def kw_einsum_optimize(np, sp, x):
    A = np.reshape(x, (2, 2))
    return np.einsum("ij,jk,ki->", A, A, A, optimize=True)


@pattern(4, "keyword")
def kw_concatenate_axis_none(np, sp, x):
    A = np.reshape(x, (2, 2))
    return np.sum(np.concatenate([A, A ** 2], axis=None) ** 2)


@pattern(4, "keyword")
def kw_stack_axis_last(np, sp, x):
    return np.sum(np.stack([x, x ** 2], axis=-1) @ numpy.array([1.0, 2.0]))


@pattern(4, "keyword")
def kw_diff_prepend(np, sp, x):
    return np.sum(np.diff(x, n=1, prepend=0.0) ** 2)


@pattern(4, "keyword")
def kw_cumprod_axis(np, sp, x):
    return np.sum(np.cumprod(np.reshape(x, (2, 2)), axis=1))


@pattern(4, "keyword")
def kw_trace_offset(np, sp, x):
    return np.trace(np.outer(x, x), offset=1)


@pattern(4, "keyword")
def kw_power_dtype(np, sp, x):
    return np.sum(np.power(x, 3, dtype=numpy.float64))


@pattern(4, "keyword")
def kw_nansum_keepdims(np, sp, x):
    return np.sum(np.nansum(np.reshape(x, (2, 2)) ** 2, axis=0, keepdims=True))


@pattern(4, "keyword")
def kw_tensordot_axes(np, sp, x):
    A = np.reshape(x, (2, 2))
    return np.tensordot(A, A, axes=2)


@pattern(4, "keyword")
def kw_logsumexp_b(np, sp, x):
    return sp.special.logsumexp(x, b=numpy.array([1.0, 2.0, 0.5, 1.0]))


@pattern(4, "keyword")
def kw_linspace_traced_end(np, sp, x):
    return np.sum(np.linspace(0.0, x[0], 5) ** 2) + np.sum(x)


INPUTS = numpy.random.default_rng(7)


def _point(n):
    return INPUTS.uniform(0.3, 1.2, n) * numpy.where(numpy.arange(n) % 3 == 1, -1, 1)


def finite_difference(fn, x, h=1e-6):
    g = numpy.zeros_like(x)
    for i in range(x.size):
        e = numpy.zeros_like(x)
        e[i] = h
        g[i] = (fn(x + e) - fn(x - e)) / (2 * h)
    return g


class DualadScipy:
    """``sp.<module>``: dualad.scipy.<module> where dualad has it, else SciPy's."""

    def __getattr__(self, name):
        import importlib
        try:
            return importlib.import_module(f"dualad.scipy.{name}")
        except ImportError:
            return importlib.import_module(f"scipy.{name}")


SCIPY_MODE = ["plain"]


def run_dualad(fn, x):
    import scipy
    import scipy.integrate, scipy.interpolate, scipy.linalg, scipy.spatial.distance  # noqa
    import scipy.special, scipy.stats  # noqa
    import dualad
    sp = DualadScipy() if SCIPY_MODE[0] == "dualad" else scipy
    return numpy.asarray(dualad.grad(lambda p: fn(numpy, sp, p))(x), dtype=float)


def run_jax(fn, x):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy as jsp
    import jax.scipy.special, jax.scipy.stats, jax.scipy.linalg  # noqa
    return numpy.asarray(jax.grad(lambda p: fn(jnp, jsp, p))(jnp.asarray(x)), dtype=float)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", choices=("dualad", "jax"), default="dualad")
    ap.add_argument("--scipy", choices=("plain", "dualad"), default="plain")
    ap.add_argument("-v", action="store_true", help="print each failure's error")
    args = ap.parse_args(argv)
    SCIPY_MODE[0] = args.scipy
    import scipy
    import scipy.integrate, scipy.interpolate, scipy.linalg, scipy.spatial.distance  # noqa
    import scipy.special, scipy.stats  # noqa
    runner = run_jax if args.peer == "jax" else run_dualad
    counts = {"code": [0, 0], "keyword": [0, 0]}
    wrong = 0
    for name, kind, n, fn in PATTERNS:
        x = _point(n)
        try:
            expected = finite_difference(lambda p: float(fn(numpy, scipy, p)), x)
        except Exception as exc:   # the pattern needs a newer NumPy than this one
            print(f"  skip   {name}: plain NumPy cannot run it ({type(exc).__name__}: {exc})")
            continue
        counts[kind][1] += 1
        try:
            got = runner(fn, x)
        except Exception as exc:
            msg = str(exc).splitlines()[0][:150] if str(exc) else ""
            print(f"  fail   {name}: {type(exc).__name__}: {msg}")
            if args.v:
                traceback.print_exc(limit=3)
            continue
        if numpy.allclose(got, expected, rtol=1e-5, atol=1e-7):
            counts[kind][0] += 1
            print(f"  ok     {name}")
        else:
            wrong += 1
            print(f"  WRONG  {name}: {got} vs finite differences {expected}")
    passed = counts["code"][0] + counts["keyword"][0]
    total = counts["code"][1] + counts["keyword"][1]
    import os
    label = args.peer if args.peer == "jax" else (
        "dualad, NumPy + " + ("dualad.scipy" if args.scipy == "dualad" else "SciPy")
        + (" (SCIPY_ARRAY_API=1)" if os.environ.get("SCIPY_ARRAY_API") == "1" else ""))
    print(f"{label}: {passed} of {total} patterns differentiate as written "
          f"(code shapes {counts['code'][0]}/{counts['code'][1]}, keyword forms "
          f"{counts['keyword'][0]}/{counts['keyword'][1]}); wrong numbers: {wrong}")
    print(f"(Python {sys.version.split()[0]}, NumPy {numpy.__version__}, SciPy {scipy.__version__})")


if __name__ == "__main__":
    main()

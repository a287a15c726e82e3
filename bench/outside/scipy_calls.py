"""Common SciPy calls that are not ufuncs, differentiated as called.

    python bench/outside/scipy_calls.py [-v]          (SCIPY_ARRAY_API=1 in the environment
                                                      to measure SciPy's array-API dispatch)

Each call is a scalar function of a parameter vector written against a SciPy-like module
``sp``. It runs twice: with plain SciPy (the code as written) and with ``dualad.scipy``
(SciPy where dualad has no such module). Each run's gradient is compared with a central
finite difference of the plain-SciPy code. Outcomes: ok; a clear error (one that names
the SciPy function called and what to write instead: a ``dualad.scipy`` replacement, or
SCIPY_ARRAY_API); an unclear error; WRONG (a wrong number: must never happen).
"""
from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import sys

import numpy

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from research_patterns import DualadScipy, finite_difference  # noqa: E402

CALLS = []


def call(n):
    def register(fn):
        CALLS.append((fn.__name__, n, fn, fn.__doc__.strip()))
        return fn
    return register


M3 = numpy.array([[3.0, 0.4, 0.1], [0.4, 2.0, 0.3], [0.1, 0.3, 1.5]])


def spd(np, x):
    A = np.reshape(x, (3, 3)) * 0.1
    return A @ A.T + numpy.eye(3)


# scipy.linalg
@call(9)
def linalg_expm(np, sp, x):
    "scipy.linalg.expm"
    return np.sum(sp.linalg.expm(np.reshape(x, (3, 3)) * 0.3))


@call(3)
def linalg_solve_triangular(np, sp, x):
    "scipy.linalg.solve_triangular"
    return np.sum(sp.linalg.solve_triangular(numpy.tril(M3), x, lower=True) ** 2)


@call(3)
def linalg_cho_solve(np, sp, x):
    "scipy.linalg.cho_solve"
    return np.sum(sp.linalg.cho_solve(sp.linalg.cho_factor(M3), x) ** 2)


@call(9)
def linalg_cholesky(np, sp, x):
    "scipy.linalg.cholesky"
    return np.sum(sp.linalg.cholesky(spd(np, x), lower=True))


@call(9)
def linalg_solve(np, sp, x):
    "scipy.linalg.solve"
    return np.sum(sp.linalg.solve(spd(np, x), numpy.ones(3)))


@call(9)
def linalg_lu_solve(np, sp, x):
    "scipy.linalg.lu_factor/lu_solve"
    return np.sum(sp.linalg.lu_solve(sp.linalg.lu_factor(spd(np, x)), numpy.ones(3)))


@call(9)
def linalg_inv(np, sp, x):
    "scipy.linalg.inv"
    return np.sum(sp.linalg.inv(spd(np, x)))


@call(9)
def linalg_det(np, sp, x):
    "scipy.linalg.det"
    return sp.linalg.det(spd(np, x))


@call(9)
def linalg_eigh(np, sp, x):
    "scipy.linalg.eigh"
    return np.sum(sp.linalg.eigh(spd(np, x), eigvals_only=True) ** 2)


@call(9)
def linalg_svd(np, sp, x):
    "scipy.linalg.svd"
    return np.sum(sp.linalg.svd(np.reshape(x, (3, 3)), compute_uv=False))


@call(9)
def linalg_sqrtm(np, sp, x):
    "scipy.linalg.sqrtm"
    return np.sum(sp.linalg.sqrtm(spd(np, x)))


@call(9)
def linalg_logm(np, sp, x):
    "scipy.linalg.logm"
    return np.sum(sp.linalg.logm(spd(np, x)))


@call(9)
def linalg_norm(np, sp, x):
    "scipy.linalg.norm"
    return sp.linalg.norm(np.reshape(x, (3, 3)))


@call(3)
def linalg_toeplitz(np, sp, x):
    "scipy.linalg.toeplitz"
    return np.sum(sp.linalg.toeplitz(x) @ numpy.arange(3.0))


# scipy.special
@call(4)
def special_logsumexp(np, sp, x):
    "scipy.special.logsumexp"
    return sp.special.logsumexp(x)


@call(4)
def special_softmax(np, sp, x):
    "scipy.special.softmax"
    return np.sum(sp.special.softmax(x) * numpy.arange(4.0))


@call(4)
def special_log_softmax(np, sp, x):
    "scipy.special.log_softmax"
    return np.sum(sp.special.log_softmax(x) * numpy.arange(4.0))


@call(4)
def special_expit(np, sp, x):
    "scipy.special.expit"
    return np.sum(sp.special.expit(x))


@call(4)
def special_gammaln(np, sp, x):
    "scipy.special.gammaln"
    return np.sum(sp.special.gammaln(np.abs(x) + 1))


@call(4)
def special_xlogy(np, sp, x):
    "scipy.special.xlogy"
    return np.sum(sp.special.xlogy(x, np.abs(x) + 1))


# scipy.stats
@call(4)
def stats_norm_logpdf(np, sp, x):
    "scipy.stats.norm.logpdf"
    return np.sum(sp.stats.norm.logpdf(x, 0.2, 1.5))


@call(4)
def stats_norm_cdf(np, sp, x):
    "scipy.stats.norm.cdf"
    return np.sum(sp.stats.norm.cdf(x))


@call(4)
def stats_t_logpdf(np, sp, x):
    "scipy.stats.t.logpdf"
    return np.sum(sp.stats.t.logpdf(x, 3.0))


@call(4)
def stats_gamma_logpdf(np, sp, x):
    "scipy.stats.gamma.logpdf"
    return np.sum(sp.stats.gamma.logpdf(np.abs(x) + 0.5, 2.0))


@call(3)
def stats_mvn_logpdf(np, sp, x):
    "scipy.stats.multivariate_normal.logpdf"
    return sp.stats.multivariate_normal.logpdf(x, numpy.zeros(3), M3)


@call(4)
def stats_frozen_norm(np, sp, x):
    "scipy.stats.norm(loc, scale).logpdf"
    return np.sum(sp.stats.norm(0.5, 2.0).logpdf(x))


# scipy.integrate
@call(1)
def integrate_odeint(np, sp, x):
    "scipy.integrate.odeint"
    return np.sum(sp.integrate.odeint(lambda y, t: -0.5 * y, x, numpy.linspace(0, 1, 4)))


@call(1)
def integrate_solve_ivp(np, sp, x):
    "scipy.integrate.solve_ivp"
    sol = sp.integrate.solve_ivp(lambda t, y: -0.5 * y, (0.0, 1.0), x, rtol=1e-10, atol=1e-12)
    return np.sum(sol.y[:, -1])


@call(1)
def integrate_quad_closure(np, sp, x):
    "scipy.integrate.quad"
    return sp.integrate.quad(lambda t: np.sin(x[0] * t), 0.0, 1.0)[0]


@call(5)
def integrate_trapezoid(np, sp, x):
    "scipy.integrate.trapezoid"
    return sp.integrate.trapezoid(x ** 2, dx=0.1)


@call(5)
def integrate_simpson(np, sp, x):
    "scipy.integrate.simpson"
    return sp.integrate.simpson(x ** 2, dx=0.1)


# scipy.optimize, spatial, interpolate, ndimage, signal, fft
@call(4)
def optimize_rosen(np, sp, x):
    "scipy.optimize.rosen"
    return sp.optimize.rosen(x)


@call(6)
def spatial_cdist(np, sp, x):
    "scipy.spatial.distance.cdist"
    return np.sum(sp.spatial.distance.cdist(np.reshape(x, (3, 2)), numpy.eye(2)))


@call(6)
def spatial_pdist(np, sp, x):
    "scipy.spatial.distance.pdist"
    return np.sum(sp.spatial.distance.pdist(np.reshape(x, (3, 2)), "sqeuclidean"))


@call(5)
def interpolate_cubic_spline(np, sp, x):
    "scipy.interpolate.CubicSpline"
    return np.sum(sp.interpolate.CubicSpline(numpy.linspace(0, 1, 5), x)(numpy.array([0.3, 0.7])))


@call(5)
def interpolate_interp1d(np, sp, x):
    "scipy.interpolate.interp1d"
    return np.sum(sp.interpolate.interp1d(numpy.linspace(0, 1, 5), x)(numpy.array([0.3, 0.7])))


@call(9)
def interpolate_regular_grid(np, sp, x):
    "scipy.interpolate.RegularGridInterpolator"
    g = numpy.linspace(0, 1, 3)
    f = sp.interpolate.RegularGridInterpolator((g, g), np.reshape(x, (3, 3)))
    return np.sum(f(numpy.array([[0.2, 0.7], [0.5, 0.5]])))


@call(5)
def interpolate_make_interp_spline(np, sp, x):
    "scipy.interpolate.make_interp_spline"
    return np.sum(sp.interpolate.make_interp_spline(numpy.linspace(0, 1, 5), x, k=3)(0.4))


@call(16)
def ndimage_gaussian_filter(np, sp, x):
    "scipy.ndimage.gaussian_filter"
    return np.sum(sp.ndimage.gaussian_filter(np.reshape(x, (4, 4)), 1.0) ** 2)


@call(16)
def ndimage_convolve(np, sp, x):
    "scipy.ndimage.convolve"
    k = numpy.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
    return np.sum(sp.ndimage.convolve(np.reshape(x, (4, 4)), k) ** 2)


@call(16)
def ndimage_uniform_filter(np, sp, x):
    "scipy.ndimage.uniform_filter"
    return np.sum(sp.ndimage.uniform_filter(np.reshape(x, (4, 4)), 3) ** 2)


@call(16)
def ndimage_map_coordinates(np, sp, x):
    "scipy.ndimage.map_coordinates"
    return np.sum(sp.ndimage.map_coordinates(np.reshape(x, (4, 4)),
                                             numpy.array([[0.5, 1.5], [2.2, 0.7]]), order=1))


@call(8)
def signal_lfilter(np, sp, x):
    "scipy.signal.lfilter"
    return np.sum(sp.signal.lfilter([0.5, 0.3], [1.0, -0.4], x) ** 2)


@call(8)
def signal_convolve(np, sp, x):
    "scipy.signal.convolve"
    return np.sum(sp.signal.convolve(x, numpy.array([1.0, -2.0, 1.0])) ** 2)


@call(8)
def signal_fftconvolve(np, sp, x):
    "scipy.signal.fftconvolve"
    return np.sum(sp.signal.fftconvolve(x, numpy.array([1.0, -2.0, 1.0])) ** 2)


@call(8)
def fft_rfft(np, sp, x):
    "scipy.fft.rfft"
    return np.sum(np.abs(sp.fft.rfft(x)) ** 2)


@call(8)
def fft_dct(np, sp, x):
    "scipy.fft.dct"
    return np.sum(sp.fft.dct(x) ** 2 * numpy.arange(8.0))


def _point(n):
    return numpy.random.default_rng(3).uniform(0.3, 1.0, n)


def outcome(sp, fn, doc, x, expected):
    import dualad
    try:
        got = numpy.asarray(dualad.grad(lambda p: fn(numpy, sp, p))(x), dtype=float)
    except Exception as exc:
        text = str(exc)
        names = doc.split("(")[0].split(".")[-1].split("/")
        clear = any(n in text for n in names) and (
            "dualad.scipy" in text or "SCIPY_ARRAY_API" in text)
        return ("clear" if clear else "unclear"), f"{type(exc).__name__}: {text[:140]}"
    if numpy.allclose(got, expected, rtol=1e-5, atol=1e-7):
        return "ok", ""
    return "WRONG", f"{got} vs {expected}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args(argv)
    import scipy
    for m in ("fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
              "spatial.distance", "special", "stats"):
        importlib.import_module(f"scipy.{m}")
    flag = os.environ.get("SCIPY_ARRAY_API") == "1"
    tally = {"plain": {}, "dualad": {}}
    print(f"{'call':44s} {'plain SciPy':12s} dualad.scipy")
    for name, n, fn, doc in CALLS:
        x = _point(n)
        expected = finite_difference(lambda p: float(fn(numpy, scipy, p)), x)
        row = []
        for label, sp in (("plain", scipy), ("dualad", DualadScipy())):
            kind, why = outcome(sp, fn, doc, x, expected)
            tally[label][kind] = tally[label].get(kind, 0) + 1
            row.append((kind, why))
        print(f"{doc:44s} {row[0][0]:12s} {row[1][0]}")
        if args.v:
            for kind, why in row:
                if why:
                    print(f"    {kind}: {why}")
    for label in ("plain", "dualad"):
        t = tally[label]
        print(f"{'plain SciPy' if label == 'plain' else 'dualad.scipy'}"
              f"{' (SCIPY_ARRAY_API=1)' if flag and label == 'plain' else ''}: "
              f"{t.get('ok', 0)} of {len(CALLS)} differentiate; clear errors {t.get('clear', 0)}, "
              f"unclear errors {t.get('unclear', 0)}, wrong numbers {t.get('WRONG', 0)}")


if __name__ == "__main__":
    main()

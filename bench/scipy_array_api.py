"""SciPy's own array-API dispatch on traced values: which calls differentiate.

With ``SCIPY_ARRAY_API=1`` in the environment *before SciPy is imported*, SciPy
asks its inputs for their namespace (``x.__array_namespace__()``) and computes
with it. A traced dualad value answers :mod:`dualad.array_api`, so the call is
computed with dualad's primitives and differentiates. This script runs a list of
SciPy calls that SciPy itself dispatches through the array API (from SciPy's
"Support for the array API standard" table), each inside a scalar function of a
traced input, and checks

- dualad: ``dualad.verification.check_grads`` (forward and reverse mode against
  central differences), order 1;
- JAX (if importable, with x64 enabled): ``jax.grad`` against central differences
  of the same function on ``jax.numpy`` arrays.

It prints one line per call (pass, or the first line of the error: why it fails)
and the totals. Usage::

    python bench/scipy_array_api.py            # dualad, and JAX when installed
    python bench/scipy_array_api.py --only dualad

The script re-runs itself in a child process with ``SCIPY_ARRAY_API=1`` when the
variable is unset: dualad never sets it, and neither does this process.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np

RNG = np.random.default_rng(0)
POS = RNG.uniform(0.5, 2.0, 6)          # positive data (means, entropies, logs)
ANY = RNG.normal(size=6)                # any real data
MAT = RNG.normal(size=(3, 3))


def _calls():
    """(name, f(x, xp) -> scalar, input): the SciPy call under test inside a scalar
    function; ``xp`` is the input's namespace."""
    import scipy.cluster.vq as vq
    import scipy.fft as sfft
    import scipy.integrate as si
    import scipy.linalg as sl
    import scipy.ndimage as nd
    import scipy.optimize as so
    import scipy.signal as sg
    import scipy.special as sp
    import scipy.stats as st

    def s(y, xp):
        return xp.sum(y * y)

    def c(y, xp):   # complex output: a real scalar of it
        return xp.sum(xp.real(y) ** 2 + xp.imag(y) ** 2)

    ker = np.array([0.25, 0.5, 0.25])
    return [
        ("special.logsumexp", lambda x, xp: s(sp.logsumexp(xp.reshape(x, (2, 3)), axis=1), xp), ANY),
        ("special.softmax", lambda x, xp: s(sp.softmax(x), xp), ANY),
        ("special.log_softmax", lambda x, xp: s(sp.log_softmax(x), xp), ANY),
        ("special.erf", lambda x, xp: s(sp.erf(x), xp), ANY),
        ("special.gammaln", lambda x, xp: s(sp.gammaln(x), xp), POS),
        ("special.xlogy", lambda x, xp: s(sp.xlogy(x, x + 1.0), xp), POS),
        ("special.expit", lambda x, xp: s(sp.expit(x), xp), ANY),
        ("special.log_ndtr", lambda x, xp: s(sp.log_ndtr(x), xp), ANY),
        ("special.entr", lambda x, xp: s(sp.entr(x), xp), POS),
        ("special.rel_entr", lambda x, xp: s(sp.rel_entr(x, x[::-1]), xp), POS),
        ("stats.zscore", lambda x, xp: s(st.zscore(x), xp), ANY),
        ("stats.moment", lambda x, xp: st.moment(x, order=3), ANY),
        ("stats.skew", lambda x, xp: st.skew(x), ANY),
        ("stats.kurtosis", lambda x, xp: st.kurtosis(x), ANY),
        ("stats.variation", lambda x, xp: st.variation(x), POS),
        ("stats.entropy", lambda x, xp: st.entropy(x), POS),
        ("stats.pmean", lambda x, xp: st.pmean(x, 2.5), POS),
        ("stats.gmean", lambda x, xp: st.gmean(x), POS),
        ("stats.hmean", lambda x, xp: st.hmean(x), POS),
        ("stats.sem", lambda x, xp: st.sem(x), ANY),
        ("fft.fft", lambda x, xp: c(sfft.fft(x) * xp.arange(6.0), xp), ANY),
        ("fft.rfft", lambda x, xp: c(sfft.rfft(x) * xp.arange(4.0), xp), ANY),
        ("fft.dct", lambda x, xp: s(sfft.dct(x) * xp.arange(6.0), xp), ANY),
        ("integrate.trapezoid", lambda x, xp: si.trapezoid(x * x), ANY),
        ("integrate.simpson", lambda x, xp: si.simpson(x * x), ANY),
        ("integrate.cumulative_trapezoid", lambda x, xp: s(si.cumulative_trapezoid(x), xp), ANY),
        ("signal.fftconvolve", lambda x, xp: s(sg.fftconvolve(x, xp.asarray(ker)), xp), ANY),
        ("signal.convolve", lambda x, xp: s(sg.convolve(x, xp.asarray(ker)), xp), ANY),
        ("signal.correlate", lambda x, xp: s(sg.correlate(x, xp.asarray(ker)), xp), ANY),
        ("ndimage.gaussian_filter", lambda x, xp: s(nd.gaussian_filter(x, 1.0), xp), ANY),
        ("ndimage.map_coordinates", lambda x, xp: s(nd.map_coordinates(
            x, xp.asarray([[0.5, 1.5, 3.2]]), order=1), xp), ANY),
        ("linalg.block_diag", lambda x, xp: s(sl.block_diag(x, x[:2]), xp), ANY),
        ("cluster.vq.whiten", lambda x, xp: s(vq.whiten(xp.reshape(x, (3, 2))), xp), ANY),
        ("optimize.rosen", lambda x, xp: so.rosen(x), ANY),
        ("optimize.rosen_der", lambda x, xp: s(so.rosen_der(x), xp), ANY),
    ]


def _why(err):
    line = (str(err).strip().splitlines() or [""])[0]
    return f"{type(err).__name__}: {line[:150]}"


def run_dualad():
    import dualad
    from dualad.verification import check_grads

    results = []
    for name, f, x0 in _calls():
        def g(x, f=f):
            return f(x, x.__array_namespace__())
        try:
            check_grads(g, (np.array(x0),), order=1, modes=("fwd", "rev"))
            dualad.grad(g)(np.array(x0))
            results.append((name, None))
        except Exception as err:  # the reason is the report
            results.append((name, _why(err)))
    return results


def run_jax():
    import jax
    jax.config.update("jax_enable_x64", True)   # this bench's process only
    import jax.numpy as jnp

    results = []
    for name, f, x0 in _calls():
        def g(x, f=f):
            return f(x, jnp)
        try:
            x = jnp.asarray(x0)
            got = np.asarray(jax.grad(g)(x))
            h = 1e-6
            fd = np.array([(float(g(x.at[i].add(h))) - float(g(x.at[i].add(-h)))) / (2 * h)
                           for i in range(x.size)])
            if not np.allclose(got, fd, rtol=1e-4, atol=1e-6):
                raise AssertionError(f"grad {got} != finite differences {fd}")
            results.append((name, None))
        except Exception as err:
            results.append((name, _why(err)))
    return results


def _report(label, results):
    ok = sum(why is None for _, why in results)
    print(f"\n== {label}: {ok} of {len(results)} SciPy calls differentiate ==")
    for name, why in results:
        print(f"  {'pass' if why is None else 'FAIL'}  {name:32s} {'' if why is None else why}")
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("dualad", "jax"))
    args = parser.parse_args(argv)
    if not os.environ.get("SCIPY_ARRAY_API"):
        env = dict(os.environ, SCIPY_ARRAY_API="1")   # the child's environment only
        return subprocess.call([sys.executable, __file__, *sys.argv[1:]], env=env)
    import scipy
    print(f"SCIPY_ARRAY_API=1, SciPy {scipy.__version__}, NumPy {np.__version__}")
    if args.only in (None, "dualad"):
        try:
            import dualad  # noqa: F401
        except ImportError:
            print("dualad is not importable in this environment: skipped")
        else:
            _report("dualad (check_grads: fwd and rev vs central differences)", run_dualad())
    if args.only in (None, "jax"):
        try:
            import jax  # noqa: F401
        except ImportError:
            print("\nJAX is not installed in this environment: skipped")
        else:
            _report("JAX (jax.grad vs central differences)", run_jax())
    return 0


if __name__ == "__main__":
    sys.exit(main())

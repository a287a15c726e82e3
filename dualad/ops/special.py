"""scipy.special: derivative rules in both modes, to any order, registered with the front end.

The primitives live by family, each module stating its formulas, domains and
conventions (poles, branch cuts, kinks) in its docstring:

- :mod:`.special_gamma`: gammaln, loggamma, digamma (psi), polygamma, gamma,
  rgamma, gammasgn, beta, betaln, gammainc, gammaincc, gammaincinv,
  gammainccinv, betainc, betaincc, betaincinv;
- :mod:`.special_zeta`: Hurwitz zeta (in x and q), Riemann zeta, zeta_deriv;
- :mod:`.special_student`: stdtr, stdtrit (in df too), stdtr_ddf;
- :mod:`.special_erf`: erf, erfc, erfcx, erfi, dawsn, erfinv, erfcinv, ndtr,
  log_ndtr, ndtri, ndtri_exp;
- :mod:`.special_log`: expit, logit, log_expit, xlogy, xlog1py, entr,
  rel_entr, kl_div;
- :mod:`.special_bessel`: jv (jn), j0, j1, yv, yn, y0, y1, iv, i0, i1, ive,
  i0e, i1e, kv, k0, k1, kve, k0e, k1e;
- :mod:`.special_boxcox`: boxcox, boxcox1p, inv_boxcox, inv_boxcox1p;
- :mod:`.special_extra`: owens_t, spence, lambertw (complex).

scipy.special's functions are NumPy ufuncs, so ``scipy.special.gammaln(x)`` on
a traced ``x`` reaches the registry through ``__array_ufunc__``: the table
``NUMPY_UFUNCS`` below maps each ufunc to its primitive. Orders and shape
parameters (``n``, ``v``, ``a``, ...) keep SciPy's positions and are not
differentiable. SciPy's Python functions (logsumexp, softmax, log_softmax,
polygamma, zeta, multigammaln) do not dispatch: :mod:`dualad.scipy.special`
has them, composed from these primitives. ``docs/special.md`` is the guide.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from .elementwise import cbrt, exp2, expm1, log1p, power
from . import (special_bessel, special_boxcox, special_erf, special_extra, special_gamma,
               special_log, special_student, special_zeta)


def _exp10(x):
    return power(10.0, x)


NUMPY_UFUNCS = {
    **special_gamma.NUMPY_UFUNCS, **special_erf.NUMPY_UFUNCS, **special_log.NUMPY_UFUNCS,
    **special_bessel.NUMPY_UFUNCS, **special_student.NUMPY_UFUNCS,
    **special_boxcox.NUMPY_UFUNCS, **special_extra.NUMPY_UFUNCS, **special_zeta.NUMPY_UFUNCS,
    # scipy.special's own copies of NumPy's functions
    sc.expm1: expm1, sc.log1p: log1p, sc.exp2: exp2, sc.cbrt: cbrt,
    sc.exp10: _exp10,
}
NUMPY_FUNCTIONS = {np.i0: special_bessel.i0}   # numpy's own modified Bessel function I₀

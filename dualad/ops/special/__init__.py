"""scipy.special: derivative rules in both modes, to any order, registered with the front end.

The primitives live by family, each module stating its formulas, domains and
conventions (poles, branch cuts, kinks) in its docstring:

- :mod:`.gamma`: gammaln, loggamma, digamma (psi), polygamma, gamma,
  rgamma, gammasgn, beta, betaln, gammainc, gammaincc, gammaincinv,
  gammainccinv, betainc, betaincc, betaincinv;
- :mod:`.zeta`: Hurwitz zeta (in x and q), Riemann zeta, zeta_deriv;
- :mod:`.student`: stdtr, stdtrit (in df too), stdtr_ddf;
- :mod:`.erf`: erf, erfc, erfcx, erfi, dawsn, erfinv, erfcinv, ndtr,
  log_ndtr, ndtri, ndtri_exp;
- :mod:`.log`: expit, logit, log_expit, xlogy, xlog1py, entr,
  rel_entr, kl_div;
- :mod:`.bessel`: jv (jn), j0, j1, yv, yn, y0, y1, iv, i0, i1, ive,
  i0e, i1e, kv, k0, k1, kve, k0e, k1e;
- :mod:`.boxcox`: boxcox, boxcox1p, inv_boxcox, inv_boxcox1p;
- :mod:`.extra`: owens_t, spence, lambertw (complex).

scipy.special's functions are NumPy ufuncs, so ``scipy.special.gammaln(x)`` on
a traced ``x`` reaches the registry through ``__array_ufunc__``: each module declares
the ufuncs its primitives compute (``dualad.core.primitive.implements``). Orders and shape
parameters (``n``, ``v``, ``a``, ...) keep SciPy's positions and are not
differentiable. SciPy's Python functions (logsumexp, softmax, log_softmax,
polygamma, zeta, multigammaln) do not dispatch: :mod:`dualad.scipy.special`
has them, composed from these primitives. ``docs/special.md`` is the guide.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.primitive import implements
from ..core.elementwise import cbrt, exp2, expm1, log1p, power
from . import bessel, boxcox, erf, extra, gamma, log, student, zeta  # noqa: F401  (declare)

__all__ = []   # importing it registers the family; its names live in its modules


def _exp10(x):
    return power(10.0, x)


# scipy.special's own copies of NumPy's functions
implements(sc.expm1)(expm1)
implements(sc.log1p)(log1p)
implements(sc.exp2)(exp2)
implements(sc.cbrt)(cbrt)
implements(sc.exp10)(_exp10)
implements(np.i0)(bessel.i0)   # numpy's own modified Bessel function I₀

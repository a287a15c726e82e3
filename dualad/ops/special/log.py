"""Logistic and entropy functions of scipy.special, both modes, any order.

    expit(x)      = 1/(1+e⁻ˣ)            expit'     = expit·(1-expit)
    logit(p)      = log(p/(1-p))         logit'     = 1/(p(1-p))           (0 < p < 1)
    log_expit(x)  = -log(1+e⁻ˣ)          log_expit' = expit(-x)
    xlogy(x, y)   = x·log y              ∂x = log y,      ∂y = x/y
    xlog1py(x, y) = x·log(1+y)           ∂x = log(1+y),   ∂y = x/(1+y)
    entr(x)       = -x·log x             entr'      = -(log x + 1)
    rel_entr(x, y) = x·log(x/y)          ∂x = log(x/y) + 1,  ∂y = -x/y
    kl_div(x, y)  = x·log(x/y) - x + y   ∂x = log(x/y),      ∂y = 1 - x/y
    logaddexp(x, y) = log(eˣ + eʸ)       ∂x = expit(x - y),  ∂y = expit(y - x)
    logaddexp2(x, y) = log₂(2ˣ + 2ʸ)     ∂x = expit((x - y)·ln 2)

(``np.logaddexp`` and ``np.logaddexp2`` are NumPy ufuncs; they are declared here, beside
expit, which is their partial derivative.)

Conventions, as SciPy's values: ``xlogy(0, y) = 0`` for every y (also y = 0),
so along x = 0 the function is constant in y: ∂y = 0 there, including at
(0, 0) where x/y would be 0/0; ∂x = log y is -inf at y = 0. The same holds
for ``xlog1py`` at y = -1 and for ``rel_entr``/``kl_div`` at (0, 0).
``entr'(0) = +inf`` and ``rel_entr``'s ∂x at x = 0 is -inf (the one-sided
derivative of x·log x). Outside the domain (x < 0 for entr; negative
arguments of rel_entr and kl_div) SciPy's value is -inf or inf and the
derivative is nan, never a finite number. ``logit`` at 0 and 1 has infinite
value and derivative.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.values import is_batched, is_staged, nondiff_value, staged_value
from ...core.tracer import primal_value
from ...core.primitive import implements
from ..core.elementwise import elementwise, equal, isinf, log, log1p, logical_and, where
from . import _logaddexp
from .common import declare

__all__ = [
    "expit", "logit", "log_expit", "logaddexp", "logaddexp2", "xlogy", "xlog1py", "entr",
    "rel_entr", "kl_div"
]

_LN2 = float(np.log(2.0))


def _guard(x, y, at):
    """``y`` with 1 substituted where (x, y) = (0, at): the point where ∂y = x/(y-at)
    would be 0/0 although the function is constant (= 0) along x = 0. Under vmap x and y
    may be batched apart (one batched, the other shared): the test is made on each one's
    values first, and the mask per example (``nondiff_value`` keeps the batch axes)."""
    if is_staged((x, y)):   # dualad.jit records the mask, right for every value
        return where(logical_and(equal(staged_value(x), 0.0), equal(staged_value(y), at)),
                     1.0 + at, y)
    if not (np.any(np.asarray(primal_value(x)) == 0)
            and np.any(np.asarray(primal_value(y)) == at)):
        return y
    if not is_batched(x) and not is_batched(y):
        hit = (np.asarray(primal_value(x)) == 0) & (np.asarray(primal_value(y)) == at)
    else:
        hit = logical_and(equal(nondiff_value(x), 0.0), equal(nondiff_value(y), at))
    return where(hit, 1.0 + at, y)


expit = declare("expit", sc.expit, lambda a, x: a * (1.0 - a),
                sympy=lambda sp, x: 1 / (1 + sp.exp(-x)), domain=[(-4.0, 4.0)])
logit = declare("logit", sc.logit, lambda a, p: 1.0 / (p * (1.0 - p)),
                sympy=lambda sp, p: sp.log(p / (1 - p)), domain=[(0.05, 0.95)])
log_expit = declare("log_expit", sc.log_expit, lambda a, x: expit(-x),
                    sympy=lambda sp, x: -sp.log(1 + sp.exp(-x)), domain=[(-4.0, 4.0)])

# log(eˣ + eʸ) and log₂(2ˣ + 2ʸ): NumPy ufuncs, here because their partials are expit
def _dlogaddexp(x, y, scale=1.0):
    """∂/∂x log(eˣ + eʸ) = 1/(1 + e^(y−x)) = expit(x − y), and for base 2
    ∂/∂x log₂(2ˣ + 2ʸ) = expit((x − y)·ln 2). Computed from the difference x − y,
    exact (Sterbenz) where x and y are close, not as exp(x − ans): at large magnitude
    x − ans rounds to a multiple of x's ulp (float32 at 1e7: exp(−1) = 0.368 for ½).
    Equal infinities give ½ each (their difference is nan)."""
    g = expit(x - y) if scale == 1.0 else expit((x - y) * scale)
    if _equal_infinities(x, y):
        g = where(logical_and(isinf(x), x == y), 0.5, g)
    return g


def _equal_infinities(x, y):
    if is_staged((x, y)):   # dualad.jit records the test, right for every value
        return True
    xv = primal_value(x)
    try:
        inf = np.isinf(xv)
    except TypeError:        # symbolic values (the SymPy oracle)
        return False
    return bool(inf.any()) and bool(np.any(inf & (xv == primal_value(y))))


logaddexp = elementwise("logaddexp", _logaddexp.logaddexp,
                        lambda a, x, y: _dlogaddexp(x, y), lambda a, x, y: _dlogaddexp(y, x),
                        sympy=lambda sp, x, y: sp.log(sp.exp(x) + sp.exp(y)))
logaddexp2 = elementwise("logaddexp2", _logaddexp.logaddexp2,
                         lambda a, x, y: _dlogaddexp(x, y, _LN2),
                         lambda a, x, y: _dlogaddexp(y, x, _LN2),
                         sympy=lambda sp, x, y: sp.log(2 ** x + 2 ** y, 2))


xlogy = declare("xlogy", sc.xlogy, lambda a, x, y: log(y),
                lambda a, x, y: x / _guard(x, y, 0.0),
                sympy=lambda sp, x, y: x * sp.log(y), domain=[(-2.0, 2.0), (0.1, 4.0)])
xlog1py = declare("xlog1py", sc.xlog1py, lambda a, x, y: log1p(y),
                  lambda a, x, y: x / (1.0 + _guard(x, y, -1.0)),
                  sympy=lambda sp, x, y: x * sp.log(1 + y), domain=[(-2.0, 2.0), (-0.9, 3.0)])
entr = declare("entr", sc.entr, lambda a, x: -(log(x) + 1.0),
               sympy=lambda sp, x: -x * sp.log(x), domain=[(0.1, 4.0)])
rel_entr = declare("rel_entr", sc.rel_entr, lambda a, x, y: log(x) - log(y) + 1.0,
                   lambda a, x, y: -x / _guard(x, y, 0.0),
                   sympy=lambda sp, x, y: x * sp.log(x / y), domain=[(0.1, 4.0), (0.1, 4.0)])
kl_div = declare("kl_div", sc.kl_div, lambda a, x, y: log(x) - log(y),
                 lambda a, x, y: 1.0 - x / _guard(x, y, 0.0),
                 sympy=lambda sp, x, y: x * sp.log(x / y) - x + y,
                 domain=[(0.1, 4.0), (0.1, 4.0)])

implements(np.logaddexp)(logaddexp)
implements(np.logaddexp2)(logaddexp2)
implements(sc.expit)(expit)
implements(sc.logit)(logit)
implements(sc.log_expit)(log_expit)
implements(sc.xlogy)(xlogy)
implements(sc.xlog1py)(xlog1py)
implements(sc.entr)(entr)
implements(sc.rel_entr)(rel_entr)
implements(sc.kl_div)(kl_div)

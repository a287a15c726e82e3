"""The problems of bench/fast_by_default.py: a mass-action kinetics network, Robertson's
stiff chemistry, a regularised logistic-regression loss and a Lotka-Volterra fit, each
with its hand-written derivative and over a namespace ``xp`` (numpy, jax.numpy, torch)
where a peer traces it. Only public dualad APIs are used (by the driver)."""
from __future__ import annotations

import numpy as np


def _cat(xp, parts):
    return xp.cat(parts) if xp.__name__ == "torch" else xp.concatenate(parts)


def _stack(xp, parts):
    return xp.stack(parts)


# --- mass-action kinetics: n species, about 1.8 n reactions ---------------------------------
class Kinetics:
    """n species; 0.8 n first-order reactions A -> B and n second-order A + B -> C (+ D),
    rate constants log-uniform in [1e-2, 1e2] (seed 0). dy/dt = sum over stoichiometric
    entries (species i, reaction r, coefficient c) of c * rate_r(y)."""

    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.n = n
        n1, n2 = (4 * n) // 5, n
        self.a1 = rng.integers(0, n, n1)
        self.k1 = 10.0 ** rng.uniform(-2, 2, n1)
        self.a2 = rng.integers(0, n, n2)
        self.b2 = rng.integers(0, n, n2)
        self.k2 = 10.0 ** rng.uniform(-2, 2, n2)
        rows, cols, coef = [], [], []
        for r in range(n1):                      # A -> B
            rows += [self.a1[r], rng.integers(0, n)]
            cols += [r, r]
            coef += [-1.0, 1.0]
        for r in range(n2):                      # A + B -> C (+ D half of the time)
            prods = rng.integers(0, n, 1 + (r % 2))
            rows += [self.a2[r], self.b2[r], *prods]
            cols += [n1 + r] * (2 + len(prods))
            coef += [-1.0, -1.0] + [1.0] * len(prods)
        self.rows, self.cols = np.array(rows), np.array(cols)
        self.coef = np.array(coef)
        self.y0 = rng.uniform(0.1, 1.0, n)

    def rhs(self, xp=np):
        """``f(y)`` in namespace ``xp`` (the scatter-add: np.bincount, jax segment_sum,
        torch index_add)."""
        if xp is np:
            a1, k1, a2, b2, k2, rows, cols, coef = (self.a1, self.k1, self.a2, self.b2,
                                                    self.k2, self.rows, self.cols, self.coef)
        else:
            conv = _converter(xp)
            a1, k1, a2, b2, k2, rows, cols, coef = map(conv, (
                self.a1, self.k1, self.a2, self.b2, self.k2, self.rows, self.cols, self.coef))
        n = self.n

        def f(y):
            rate = _cat(xp, [k1 * y[a1], k2 * y[a2] * y[b2]])
            flux = coef * rate[cols]
            if xp is np:
                return np.bincount(rows, weights=flux, minlength=n)
            if xp.__name__ == "torch":
                return xp.zeros(n, dtype=flux.dtype).index_add(0, rows, flux)
            import jax
            return jax.ops.segment_sum(flux, rows, n)
        return f

    def rhs_per_species(self, xp=np):
        """The same ``f(y)`` as a researcher often types it: one scalar rate expression per
        reaction and one sum per species, stacked (a few hundred scalar operations at
        n = 20, where :meth:`rhs` is a dozen array operations)."""
        n, n1 = self.n, len(self.a1)
        terms = [[] for _ in range(n)]
        for i, r, c in zip(self.rows, self.cols, self.coef):
            terms[i].append((float(c), int(r)))
        a1, k1 = [int(v) for v in self.a1], [float(v) for v in self.k1]
        a2, b2 = [int(v) for v in self.a2], [int(v) for v in self.b2]
        k2 = [float(v) for v in self.k2]

        def f(y):
            rate = [k1[r] * y[a1[r]] for r in range(n1)]
            rate += [k2[q] * y[a2[q]] * y[b2[q]] for q in range(len(a2))]
            out = []
            for i in range(n):
                acc = 0.0 * y[i]
                for c, r in terms[i]:
                    acc = acc + rate[r] if c == 1.0 else acc - rate[r]
                out.append(acc)
            return _stack(xp, out)
        return f

    def analytic_jac(self):
        """The hand-written Jacobian, its index work done once for the fixed network
        (what a careful researcher writes): per call, one np.bincount into n x n."""
        n, n1, n2 = self.n, len(self.a1), len(self.a2)
        order = np.argsort(self.cols, kind="stable")
        starts = np.searchsorted(self.cols[order], np.arange(n1 + n2 + 1))
        ii, jj, kind, which, cc = [], [], [], [], []
        for r in range(n1 + n2):
            e = order[starts[r]:starts[r + 1]]
            if r < n1:
                srcs = [(self.a1[r], 0, r)]
            else:
                q = r - n1
                srcs = [(self.a2[q], 1, q), (self.b2[q], 2, q)]
            for s, kd, q in srcs:
                ii.append(self.rows[e])
                jj.append(np.full(len(e), s))
                kind.append(np.full(len(e), kd))
                which.append(np.full(len(e), q))
                cc.append(self.coef[e])
        ii, jj, kind, which, cc = map(np.concatenate, (ii, jj, kind, which, cc))
        m0, m1, m2 = kind == 0, kind == 1, kind == 2
        flat = ii * n + jj

        def jac(y):
            v = np.empty(len(cc))
            v[m0] = self.k1[which[m0]]
            v[m1] = self.k2[which[m1]] * y[self.b2[which[m1]]]
            v[m2] = self.k2[which[m2]] * y[self.a2[which[m2]]]
            return np.bincount(flat, weights=cc * v, minlength=n * n).reshape(n, n)
        return jac


def _converter(xp):
    if xp.__name__ == "torch":
        return lambda a: xp.from_numpy(np.asarray(a))
    return xp.asarray


# --- Robertson --------------------------------------------------------------------------------
ROBERTSON_Y0 = np.array([1.0, 0.0, 0.0])


def robertson(xp=np):
    def f(y):
        r1, r2, r3 = 0.04 * y[0], 1e4 * y[1] * y[2], 3e7 * y[1] ** 2
        return _stack(xp, [-r1 + r2, r1 - r2 - r3, r3])
    return f


def robertson_jac(y):
    return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                     [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                     [0.0, 6e7 * y[1], 0.0]])


# --- logistic regression (with a small ridge so trust-exact has a minimum) --------------------
LAMBDA = 1e-2


def logistic_data(n, d):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ rng.standard_normal(d)))).astype(float)
    return X, y, np.zeros(d)


def logistic_loss(xp, X, y):
    if xp.__name__ == "torch":
        import torch.nn.functional as F
        softplus = F.softplus
    else:
        def softplus(z):
            return xp.logaddexp(0.0, z)

    def loss(w):
        z = X @ w
        return xp.sum(softplus(z) - y * z) / X.shape[0] + 0.5 * LAMBDA * xp.sum(w * w)
    return loss


def logistic_grad(X, y):
    def grad(w):
        s = 1 / (1 + np.exp(-(X @ w)))
        return X.T @ (s - y) / X.shape[0] + LAMBDA * w
    return grad


def logistic_hess(X, y):
    def hess(w):
        s = 1 / (1 + np.exp(-(X @ w)))
        return (X.T @ ((s * (1 - s))[:, None] * X)) / X.shape[0] + LAMBDA * np.eye(X.shape[1])
    return hess


# --- Lotka-Volterra fit -------------------------------------------------------------------------
LV_TRUE = np.array([1.5, 1.0, 3.0, 1.0])     # alpha, beta, gamma, delta
LV_Y0 = np.array([1.0, 1.0])


def lv_rhs(t, y, p):
    return _stack(np, [p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def lv_problem(quick):
    """(t_eval, data, p0, tolerances): data = the true solution plus 5% noise (seed 0)."""
    import scipy.integrate as si
    t_eval = np.linspace(0.0, 1.0 if quick else 10.0, 4 if quick else 50)
    sol = si.solve_ivp(lv_rhs, (0.0, t_eval[-1]), LV_Y0, t_eval=t_eval, args=(LV_TRUE,),
                       rtol=1e-10, atol=1e-12)
    data = sol.y * (1 + 0.05 * np.random.default_rng(0).standard_normal(sol.y.shape))
    tol = dict(rtol=1e-4, atol=1e-6) if quick else dict(rtol=1e-6, atol=1e-8)
    return t_eval, data, LV_TRUE * np.array([0.8, 1.2, 0.9, 1.1]), tol


def lv_loss(solve_ivp, t_eval, data, tol, **kw):
    """The least-squares loss through ``solve_ivp`` (SciPy's or dualad's, same code)."""
    def loss(p):
        r = solve_ivp(lv_rhs, (0.0, t_eval[-1]), LV_Y0, t_eval=t_eval, args=(p,), **tol, **kw)
        return np.sum((r.y - data) ** 2)
    return loss

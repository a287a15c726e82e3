"""The rows of bench/fast_by_default.py: each group builds its Tasks (participant name ->
a build() that returns a zero-argument call). dualad is spelled the way a new user
writes it (the project's default public path); every alternative in its best spelling.
Only public APIs: the script runs against old and new trees alike."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np

import fast_by_default_rows as P
import gradbench_numpy as GB


@dataclass
class Task:
    """One row group timed together. ``ref``: the participant ratios are taken to;
    ``truth``: the participants (the first that ran) the others' results are compared with
    (relative max-norm error); ``rounds`` None = the run's, 0 = the first call only;
    ``manual``: a row with no measurement, filled by hand (the text is its note)."""
    group: str
    name: str
    participants: dict
    ref: str = ""
    truth: tuple = ()
    rounds: int | None = None
    describe: object = None
    result: object = None
    notes: dict = field(default_factory=dict)
    manual: str = ""


# --- [jac] prepared Jacobians ---------------------------------------------------------------
def _jac_task(name, f_of, y, analytic, peers):
    def dualad_jac():
        from dualad.jacobians.optimize import jacobian_fn
        J = jacobian_fn(f_of(np), y)
        return lambda: J(y)

    def fd():
        from scipy.optimize._numdiff import approx_derivative
        f = f_of(np)
        return lambda: approx_derivative(f, y)

    parts = {"dualad optimize.jacobian_fn": dualad_jac,
             "SciPy approx_derivative (2-point)": fd,
             "hand-written analytic": lambda: (lambda: analytic(y))}
    jax, torch = peers.get("jax"), peers.get("torch")
    if jax is not None:
        def jx():
            jnp = jax.numpy
            J = jax.jit(jax.jacfwd(f_of(jnp)))
            yj = jnp.asarray(y)
            return lambda: J(yj).block_until_ready()
        parts["jax.jit(jax.jacfwd)"] = jx
    if torch is not None:
        def tc():
            J = torch.func.jacfwd(f_of(torch))
            yt = torch.from_numpy(y.copy())
            return lambda: J(yt)
        parts["torch.func.jacfwd"] = tc
    return Task("jac", name, parts, ref="SciPy approx_derivative (2-point)",
                truth=("hand-written analytic",))


def jac_tasks(quick, peers):
    out = []
    for n in ([20] if quick else [20, 200, 2000]):
        k = P.Kinetics(n)
        y = k.y0 * 1.1
        out.append(_jac_task(f"Jacobian, {n}-species mass-action kinetics ({len(k.coef)} "
                             f"stoichiometric entries), per call", k.rhs, y,
                             k.analytic_jac(), peers))
    k = P.Kinetics(20)
    out.append(_jac_task("Jacobian, the 20-species network written per species (scalar "
                         "expressions, as typed by hand), per call", k.rhs_per_species,
                         k.y0 * 1.1, k.analytic_jac(), peers))
    y = np.array([0.9, 2e-5, 0.1])
    out.append(_jac_task("Jacobian, Robertson (n = 3), per call", P.robertson, y,
                         P.robertson_jac, peers))
    return out


# --- [hess] logistic-regression Hessian and trust-exact ----------------------------------------
def hess_tasks(quick, peers):
    n, d = (200, 5) if quick else (2000, 50)
    X, yv, w0 = P.logistic_data(n, d)
    w = 0.1 * np.random.default_rng(1).standard_normal(d)
    loss = P.logistic_loss(np, X, yv)
    grad, hess = P.logistic_grad(X, yv), P.logistic_hess(X, yv)

    def dualad_h():
        from dualad.jacobians.optimize import hessian_fn
        H = hessian_fn(loss, w)
        return lambda: H(w)
    parts = {"dualad optimize.hessian_fn": dualad_h,
             "hand-written X.T @ (s(1-s) X)": lambda: (lambda: hess(w))}
    jax, torch = peers.get("jax"), peers.get("torch")
    if jax is not None:
        def jx():
            jnp = jax.numpy
            H = jax.jit(jax.hessian(P.logistic_loss(jnp, jnp.asarray(X), jnp.asarray(yv))))
            wj = jnp.asarray(w)
            return lambda: H(wj).block_until_ready()
        parts["jax.jit(jax.hessian)"] = jx
    if torch is not None:
        def tc():
            H = torch.func.hessian(P.logistic_loss(torch, torch.from_numpy(X),
                                                   torch.from_numpy(yv)))
            wt = torch.from_numpy(w.copy())
            return lambda: H(wt)
        parts["torch.func.hessian"] = tc
    t1 = Task("hess", f"Hessian, logistic loss n = {n}, d = {d}, per call", parts,
              ref="hand-written X.T @ (s(1-s) X)", truth=("hand-written X.T @ (s(1-s) X)",))

    def solve_dualad():
        from scipy.optimize import minimize
        from dualad.jacobians.optimize import minimize_kwargs
        return lambda: minimize(**minimize_kwargs(loss, w0, method="trust-exact"))

    def solve_hand():
        from scipy.optimize import minimize
        return lambda: minimize(loss, w0, jac=grad, hess=hess, method="trust-exact")

    t2 = Task("hess", f"trust-exact whole solve (minimize), logistic n = {n}, d = {d}",
              {"dualad minimize_kwargs(method='trust-exact')": solve_dualad,
               "hand-written jac= and hess=": solve_hand},
              ref="hand-written jac= and hess=", truth=("hand-written jac= and hess=",),
              rounds=None if quick else 3, result=lambda r: np.asarray(r.x),
              describe=lambda r: f"nit {r.nit}, fun {r.fun:.12g}")
    return [t1, t2]


# --- [lv] Lotka-Volterra gradient and fit -------------------------------------------------------
def lv_tasks(quick, peers):
    import scipy.integrate as si
    from scipy.optimize import approx_fprime, minimize
    t_eval, data, p0, tol = P.lv_problem(quick)
    plain = P.lv_loss(si.solve_ivp, t_eval, data, tol)
    tight = P.lv_loss(si.solve_ivp, t_eval, data, dict(rtol=1e-12, atol=1e-14),
                      method="DOP853")
    h = 1e-4 * np.maximum(np.abs(p0), 1.0)
    ref = np.array([(tight(p0 + e) - tight(p0 - e)) / (2 * hi)
                    for e, hi in zip(np.diag(h), h)])

    def dualad_loss(**kw):
        from dualad.scipy.integrate import solve_ivp
        return P.lv_loss(solve_ivp, t_eval, data, tol, **kw)

    def dualad_grad(**kw):
        def build():
            from dualad.jacobians.optimize import gradient
            g = gradient(dualad_loss(**kw), p0)
            return lambda: g(p0)
        return build
    err = lambda g: f"err vs tight reference {np.max(np.abs(np.asarray(g) - ref)) / np.max(np.abs(ref)):.1e}"  # noqa: E731,E501
    grads = {"one primal solve (SciPy solve_ivp)": lambda: (lambda: plain(p0)),
             "dualad optimize.gradient (default)": dualad_grad(),
             "dualad gradient, sensitivity='forward'": dualad_grad(sensitivity="forward"),
             "dualad gradient, sensitivity='adjoint'": dualad_grad(sensitivity="adjoint"),
             "SciPy approx_fprime of solve_ivp loss": lambda: (lambda: approx_fprime(p0, plain))}
    label = (f"Lotka-Volterra, 4 parameters, {len(t_eval)} output times, RK45 rtol "
             f"{tol['rtol']:g} atol {tol['atol']:g}")
    if quick:   # smoke test: the default path only, no fits
        for k in ("dualad gradient, sensitivity='forward'", "dualad gradient, sensitivity='adjoint'"):
            del grads[k]
    t1 = Task("lv", f"gradient of the fit's loss, {label}", grads,
              ref="one primal solve (SciPy solve_ivp)", rounds=None if quick else 3,
              describe=lambda g: err(g) if np.shape(g) == (4,) else "")
    opts = {"maxiter": 2} if quick else {}

    def fit_dualad(**kw):
        def build():
            from dualad.jacobians.optimize import minimize_kwargs
            return lambda: minimize(**minimize_kwargs(dualad_loss(**kw), p0, method="BFGS"),
                                    options=opts)
        return build
    fits = {"dualad minimize_kwargs(method='BFGS')": fit_dualad(),
            "dualad, sensitivity='forward'": fit_dualad(sensitivity="forward"),
            "dualad, sensitivity='adjoint'": fit_dualad(sensitivity="adjoint"),
            "SciPy BFGS, finite differences": lambda: (
                lambda: minimize(plain, p0, method="BFGS", options=opts))}
    t2 = Task("lv", f"whole BFGS fit, {label}", fits, ref="SciPy BFGS, finite differences",
              rounds=0, result=lambda r: np.asarray(r.x),
              describe=lambda r: f"nit {r.nit}, nfev {r.nfev}, njev {r.njev}, fun {r.fun:.10g}")
    return [t1] if quick else [t1, t2]


# --- [bdf] whole stiff solves ------------------------------------------------------------------
def _bdf_task(name, f, y0, t_end, analytic, quick):
    import scipy.integrate as si
    fun = lambda t, y: f(y)  # noqa: E731
    tol = dict(rtol=1e-6, atol=1e-10)

    def solve(jac):
        return si.solve_ivp(fun, (0.0, t_end), y0, method="BDF", jac=jac, **tol)

    def dualad_jac():
        from dualad.jacobians.optimize import ode_jacobian_fn
        return lambda: solve(ode_jacobian_fn(fun, y0))
    parts = {"jac=None (SciPy finite differences)": lambda: (lambda: solve(None)),
             "jac=ode_jacobian_fn(fun, y0)": dualad_jac,
             "jac= hand-written": lambda: (lambda: solve(lambda t, y: analytic(y)))}
    return Task("bdf", name, parts, ref="jac=None (SciPy finite differences)",
                truth=("jac= hand-written",), rounds=None if quick else 3,
                result=lambda r: r.y[:, -1],
                describe=lambda r: f"nfev {r.nfev}, njev {r.njev}, nlu {r.nlu}")


def bdf_tasks(quick, peers):
    k = P.Kinetics(20)
    t_rob, t_kin = (1.0, 0.1) if quick else (1e5, 100.0)
    return [_bdf_task(f"solve_ivp BDF whole solve, Robertson, t in [0, {t_rob:g}], rtol 1e-6",
                      P.robertson(np), P.ROBERTSON_Y0, t_rob, P.robertson_jac, quick),
            _bdf_task(f"solve_ivp BDF whole solve, 20-species kinetics, t in [0, {t_kin:g}]",
                      k.rhs(np), k.y0, t_kin, k.analytic_jac(), quick)]


# --- [gradbench] -------------------------------------------------------------------------------
def gradbench_tasks(quick, peers):
    import dualad
    jax, torch = peers.get("jax"), peers.get("torch")
    out = []
    for label, objective, static, x in GB.programs(quick):
        f = objective(np, *static)
        parts = {"plain NumPy f": lambda f=f, x=x: (lambda: f(x)),
                 "dualad.grad": lambda f=f, x=x: (lambda g=dualad.grad(f): g(x)),
                 "dualad.jit(dualad.grad)": lambda f=f, x=x: (
                     lambda g=dualad.jit(dualad.grad(f)): g(x))}
        if jax is not None:
            def jx(objective=objective, static=static, x=x):
                jnp = jax.numpy
                g = jax.jit(jax.grad(objective(jnp, *[jnp.asarray(s) for s in static])))
                xj = jnp.asarray(x)
                return lambda: g(xj).block_until_ready()
            parts["jax.jit(jax.grad)"] = jx
        if torch is not None:
            def tc(objective=objective, static=static, x=x):
                ft = objective(torch, *[torch.from_numpy(s) for s in static])

                def run():
                    xt = torch.from_numpy(x).requires_grad_(True)
                    return torch.autograd.grad(ft(xt), xt)[0]
                return run
            parts["torch eager"] = tc
        out.append(Task("gradbench", f"GradBench {label}, gradient (vs = x f)", parts,
                        ref="plain NumPy f",
                        truth=("dualad.grad", "jax.jit(jax.grad)", "torch eager"),
                        rounds=None,
                        result=lambda r: None if np.ndim(_np(r)) == 0 else _np(r)))
    return out


def _np(r):
    if hasattr(r, "detach"):
        return r.detach().numpy()
    return np.asarray(r, dtype=float)


# --- [import] ---------------------------------------------------------------------------------
def import_tasks(quick, peers):
    def launch(code):
        def build():
            def run():
                r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, env=os.environ.copy())
                if r.returncode:
                    last = (r.stderr.strip().splitlines() or ["?"])[-1]
                    raise RuntimeError(f"python -c {code!r} exited {r.returncode}: {last}")
            return run
        return build
    return [Task("import", "import time, fresh interpreter (wall, includes Python start-up)",
                 {"python -c pass": launch("pass"),
                  "import numpy, scipy": launch("import numpy, scipy"),
                  "import dualad": launch("import dualad"),
                  "import dualad; dualad.scipy.special": launch(
                      "import dualad; dualad.scipy.special.gammaln")},
                 ref="import numpy, scipy", rounds=2 if quick else 7)]


def tests_tasks(quick, peers):
    return [Task("tests", "the README's test command (wall)", {"README test command": None},
                 manual="measured by the tests helper; the lead fills this row by hand")]


GROUPS = {"jac": jac_tasks, "hess": hess_tasks, "lv": lv_tasks, "bdf": bdf_tasks,
          "gradbench": gradbench_tasks, "import": import_tasks, "tests": tests_tasks}

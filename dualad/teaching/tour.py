"""``dualad tour``: a two-minute guided demo for a newcomer.

Six short sections, one idea each: what forward mode computes (a Jacobian times a
direction), what reverse mode computes (a row vector times the Jacobian: a whole
gradient), the planner's choice between them for a Jacobian, a Hessian, a sparse
Jacobian's coloring, and the rule checker catching a wrong hand-written derivative.
Each shows a small example with its result, computed as the tour runs (nothing is
typed in), and ends with where to read more. Every line fits in 79 columns.

Needs only the core dependencies (NumPy, SciPy, SymPy): no plotting, no test tools.
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["tour"]

WIDTH = 79   # the widest line the tour prints (tests/teaching/test_tour.py checks it)


def _survey(x):
    """Baydin et al.'s example (JMLR 2018, Tables 2 and 3): ln x1 + x1 x2 - sin x2."""
    return np.log(x[0]) + x[0] * x[1] - np.sin(x[1])


def _rosen(x):
    """Rosenbrock's function; its minimum is at (1, ..., 1)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _bratu(u):
    """The 1-D Bratu residual, u_{i-1} - 2 u_i + u_{i+1} + h^2 e^{u_i}, u = 0 outside."""
    h2 = 1.0 / (u.size + 1) ** 2
    left = np.concatenate([np.zeros(1), u[:-1]])
    right = np.concatenate([u[1:], np.zeros(1)])
    return left - 2.0 * u + right + h2 * np.exp(u)


def _forward_and_reverse(say):
    import dualad
    x = np.array([2.0, 5.0])
    value, tangent = dualad.jvp(_survey, (x,), (np.array([1.0, 0.0]),))
    say("1. Forward mode: push a direction v through f, get J v")
    say("   f(x) = log(x1) + x1*x2 - sin(x2) at x = (2, 5), direction v = (1, 0):")
    say(f"     dualad.jvp(f, (x,), (v,))  ->  f(x) = {value:.3f},  J v = {tangent:.3f}")
    say("   One forward sweep: one directional derivative, here df/dx1.")
    say("   More: the sweep step by step, one row per elementary operation:")
    say('     dualad trace "log(x1) + x1*x2 - sin(x2)" --at x1=2 x2=5')
    say("")
    g = dualad.grad(_survey)(x)
    say("2. Reverse mode: pull a weight u back through f, get u J")
    say("   With u = 1, u J is the gradient: every input's derivative at once.")
    say(f"     dualad.grad(f)(x)  ->  [{g[0]:.3f}, {g[1]:.3f}]")
    say("   One reverse sweep costs a small multiple of one evaluation of f,")
    say("   however many inputs f has.")
    say("   More: the same trace with --mode reverse; dualad.vjp for any u.")
    say("")


def _planner(say):
    from dualad import jacobians
    W = np.cos(np.arange(3 * 200.0)).reshape(3, 200) / 10.0
    U = np.cos(0.7 * np.arange(200 * 200.0)).reshape(200, 200) / 14.0

    def F(x):   # two hidden layers: forward's 200 directions each meet U twice
        return np.tanh(W @ np.tanh(U @ np.tanh(U @ x)))
    x = np.linspace(-1.0, 1.0, 200)
    plan = jacobians.plan(F, x)
    J = plan(x)
    other = "forward" if plan.mode == "reverse" else "reverse"
    ratio = plan.estimates[other][0] / plan.estimates[plan.mode][0]
    tall = jacobians.plan(lambda v: np.tanh(U @ np.tanh(W.T @ v)), np.ones(3))
    say("3. Jacobians: the planner picks the cheaper mode")
    say(f"   F(x) = tanh(W tanh(U tanh(U x))): {plan.n} inputs, {plan.m} outputs.")
    say(f"     jacobians.jacobian(F, x)  ->  shape {J.shape}")
    say(f"   Planner: {plan.mode}. Reverse needs one direction per output "
        f"({plan.m}),")
    say(f"   forward one per input ({plan.n}): {plan.mode}'s cost estimate is "
        f"{ratio:.1f}x lower.")
    say(f"   A tall F, 3 inputs and 200 outputs, gets {tall.mode} for the same reason.")
    say("   More: print(jacobians.plan(F, x).explain()); docs/planner.md")
    say("")


def _hessian(say):
    import dualad
    from dualad import jacobians
    x = np.ones(3)
    H = jacobians.hessian(_rosen, x)
    v = np.array([1.0, -1.0, 0.5])
    say("4. Hessians: forward mode over reverse mode")
    say("   The gradient (reverse mode), differentiated again (forward mode).")
    say("   Rosenbrock's function of 3 variables at its minimum x = (1, 1, 1):")
    say("     jacobians.hessian(rosen, x)  ->")
    for row in np.array2string(H, precision=1, suppress_small=True).splitlines():
        say("       " + row)
    say(f"   Exactly symmetric: {bool(np.array_equal(H, H.T))}. "
        f"dualad.hvp(rosen, x, v) gives H v")
    say(f"   without forming H (equal here: "
        f"{bool(np.allclose(dualad.hvp(_rosen, x, v), H @ v))}).")
    say("   More: help(jacobians.hessian) for its four modes; docs/planner.md")
    say("")


def _sparse(say):
    from dualad import jacobians
    u = np.zeros(100)
    pattern = jacobians.jacobian_sparsity(_bratu, u)
    coloring = jacobians.column_coloring(pattern)
    Js = jacobians.sparse_jacobian(_bratu, u)
    exact = bool(np.array_equal(Js.toarray(), jacobians.jacfwd(_bratu, u)))
    say("5. Sparse Jacobians: color the columns, one sweep per color")
    say(f"   r(u) = u[i-1] - 2 u[i] + u[i+1] + h^2 exp(u[i]), {u.size} unknowns.")
    say(f"   Detected pattern: {pattern.nnz} nonzeros of {pattern.shape[0]} x "
        f"{pattern.shape[1]} (tridiagonal).")
    say(f"   Columns that share no row share a color: {coloring.ncolors} colors;")
    say(f"     colors of columns 0..8: {np.array2string(coloring.colors[:9])}")
    say(f"   so {coloring.ncolors} forward sweeps give all {pattern.nnz} entries, "
        f"not {u.size} (equal to")
    say(f"   the dense Jacobian: {exact}).")
    say("   More: jacobians.sparse_jacobian, docs/planner.md")
    say("")


def _rule_checker(say):
    import dualad
    from dualad.verification import check_rule

    @dualad.primitive(name="softplus")
    def softplus(x):
        return np.logaddexp(0.0, x)
    softplus.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-x)))              # right

    @dualad.primitive(name="softplus_typo")
    def softplus_typo(x):
        return np.logaddexp(0.0, x)
    softplus_typo.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-1.001 * x)))  # a typo

    right, wrong = check_rule(softplus), check_rule(softplus_typo)
    first = wrong.failures[0]
    say("6. Catching a wrong hand-written derivative")
    say("   softplus(x) = log(1 + e^x) has derivative 1 / (1 + e^-x);")
    say("   a typo writes e^(-1.001 x), off by about 0.01%.")
    say(f"     check_rule(softplus)       ->  {str(right).splitlines()[0]}")
    say(f"     check_rule(softplus_typo)  ->  {len(wrong.failures)} of {len(wrong.rows)} "
        f"checks FAILED, first:")
    say(f"       {first.check.split(': ', 1)[-1]}: relative error {first.rel_err:.1e}")
    say("   More: dualad check my_rules.py:softplus (exit status 1: use it in CI)")
    say("")


def tour(file=None) -> int:
    """Print the guided demo, section by section, as each is computed.

    Parameters
    ----------
    file : file-like, optional
        Where to print (default: ``sys.stdout``).

    Returns
    -------
    int
        0, the command's exit status.
    """
    out = sys.stdout if file is None else file

    def say(line):
        print(line, file=out, flush=True)

    try:
        say("dualad tour: exact derivatives of plain NumPy code, in six steps.")
        say("Each step: one idea, a small example and its result, where to read more.")
        say("")
        for section in SECTIONS:
            section(say)
        say("Next: README.md (a runnable example of each feature) and docs/.")
    except BrokenPipeError:   # `dualad tour | head`: the reader stopped reading
        return 0
    return 0


SECTIONS = (_forward_and_reverse, _planner, _hessian, _sparse, _rule_checker)

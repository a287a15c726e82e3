"""The ``dualad`` command line: ``dualad tour`` (a guided demo), ``dualad trace`` (evaluation
traces of an expression), ``dualad check`` (verify custom rules)."""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .about import VersionAction


def _section(title):
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def _indent(text, by="  "):
    return by + str(text).replace("\n", "\n" + by)


def _survey(x1, x2):
    """Baydin et al. (JMLR 2018), Tables 2 and 3: ln x1 + x1 x2 - sin x2."""
    return np.log(x1) + x1 * x2 - np.sin(x2)


def _bratu(u):
    """The 5-point residual of -Δu = λ e^u (λ = 6) on an N x N grid, u = 0 outside."""
    N = u.shape[0]
    zr, zc = np.zeros((1, N)), np.zeros((N, 1))
    lap = (4.0 * u - np.concatenate([zr, u[:-1]], axis=0) - np.concatenate([u[1:], zr], axis=0)
           - np.concatenate([zc, u[:, :-1]], axis=1) - np.concatenate([u[:, 1:], zc], axis=1))
    return (lap - 6.0 / (N + 1) ** 2 * np.exp(u)).ravel()


def tour() -> int:
    """The guided demo: traces, gradients, the planner, Hessians, sparsity, rule checks.
    Needs only the core dependencies (NumPy, SciPy, SymPy)."""
    import dualad
    from dualad import jacobians
    from dualad import autograd
    from dualad.verification import check_rule

    print("dualad: exact derivatives of plain NumPy code, forward and reverse mode.")

    _section("1. The survey's example, swept forward (Baydin et al. 2018, Table 2)")
    print("f(x1, x2) = ln x1 + x1 x2 - sin x2 at (2, 5); forward mode carries a tangent v̇ "
          "along\nwith each value, here for the direction ẋ = (1, 0):\n")
    print(_indent(dualad.trace(_survey, 2.0, 5.0, mode="forward", seed=(1.0, 0.0)).to_text()))

    _section("2. The same function, swept in reverse (Table 3)")
    print("Reverse mode records the values, then propagates adjoints v̄ backwards; v̄_0 and "
          "v̄_-1\naccumulate one contribution per use. One sweep gives the whole gradient:\n")
    print(_indent(dualad.trace(_survey, 2.0, 5.0, mode="reverse").to_text()))
    print("  (dualad trace \"log(x1) + x1*x2 - sin(x2)\" --at x1=2 x2=5 --mode reverse "
          "--format md|latex|text)")

    _section("3. The functional API: gradients, JVPs, batched VJPs")
    def f(x):
        return np.log(x[0]) + x[0] * x[1] - np.sin(x[1])
    x = np.array([2.0, 5.0])
    value, g = dualad.value_and_grad(f)(x)
    print(f"  value_and_grad: f = {value:.4f}, grad f = {np.array2string(g, precision=4)}")
    _, tangents = dualad.jvp(f, (x,), (np.eye(2),))
    print(f"  jvp with both basis directions in ONE vector-mode sweep: "
          f"{np.array2string(tangents, precision=4)}")
    A = np.arange(6.0).reshape(3, 2) / 10.0
    _, pullback = dualad.vjp(lambda x: np.tanh(A @ x), x)
    (rows,) = pullback(np.eye(3))
    print("  pullback(eye(3)) of tanh(A x): the 3 x 2 Jacobian in one backward sweep:")
    print(_indent(np.array2string(rows, precision=4), "    "))

    _section("4. A Jacobian, and the planner's choice of mode")
    W = np.cos(np.arange(3 * 200.0)).reshape(3, 200) / 10.0
    U = np.cos(0.7 * np.arange(200 * 200.0)).reshape(200, 200) / 14.0
    V = np.sin(np.arange(200 * 200.0)).reshape(200, 200) / 14.0

    def scores(w):   # three layers: 200 -> 200 -> 200 -> 3
        return np.tanh(W @ np.tanh(V @ np.sin(U @ w))) + np.sum(w * w) / 200.0
    w = np.linspace(-1.0, 1.0, 200)
    plan = jacobians.plan(scores, w)
    J = plan(w)
    print(f"  F: R^200 -> R^3, three layers. jacobians.plan(F, x).explain():\n")
    print(_indent(plan.explain(), "    "))
    err = np.max(np.abs(J - jacobians.jacfwd(scores, w)))
    tall = jacobians.plan(lambda v: np.sin(V @ np.tanh(U @ np.tanh(W.T @ v))), np.ones(3))
    print(f"\n  J has shape {J.shape}; |J - jacfwd| = {err:.1e}. A tall F: R^3 -> R^200 gets "
          f"'{tall.mode}'. (Each mode's first linear map\n  meets rows of the identity and "
          f"is a gather, not a product: with one layer the two modes cost about the same.)")

    _section("5. A Hessian (forward-over-reverse), exactly symmetric")
    def rosen(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    x4 = np.array([1.2, 1.0, 0.8, 1.1])
    H = jacobians.hessian(rosen, x4)
    print("  Rosenbrock in 4 variables at (1.2, 1, 0.8, 1.1), jacobians.hessian:")
    print(_indent(np.array2string(H, precision=1, suppress_small=True), "    "))
    v = np.array([1.0, -1.0, 0.5, 0.0])
    print(f"  symmetric: {np.array_equal(H, H.T)};  hvp(f, x, v) = H v: "
          f"{np.allclose(dualad.hvp(rosen, x4, v), H @ v)}  (Pearlmutter's trick, one sweep)")

    _section("6. A sparse Jacobian: detected pattern, coloring, compressed sweeps")
    N = 6
    u = np.linspace(0.0, 0.5, N * N).reshape(N, N)
    pattern = jacobians.jacobian_sparsity(_bratu, u)
    coloring = jacobians.column_coloring(pattern)
    Js = jacobians.sparse_jacobian(_bratu, u)
    err = np.max(np.abs(Js.toarray() - jacobians.jacfwd(_bratu, u).reshape(N * N, N * N)))
    print(f"  The Bratu residual on a {N} x {N} grid (5-point stencil), plain NumPy. Detected "
          f"pattern:\n  {pattern.shape[0]} x {pattern.shape[1]}, {pattern.nnz} nonzeros "
          f"(at most {np.diff(pattern.indptr).max()} per row).")
    print(f"  Columns that share no row get one color: {coloring.ncolors} colors (by "
          f"{coloring.method};\n  lower bound {coloring.lower_bound}). The color of each "
          f"grid point:")
    print(_indent(np.array2string(coloring.colors.reshape(N, N)), "    "))
    print(f"  => {coloring.ncolors} JVPs instead of {N * N}; |J_sparse - J_dense| = {err:.1e}. "
          f"(5 is optimal here:\n  see python -m papers.curtis_powell_reid1974.)")

    _section("7. A hand-written rule, and the checker catching a subtle error")
    @dualad.primitive(name="softplus")
    def softplus(x):
        return np.logaddexp(0.0, x)
    softplus.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-x)))              # right

    @dualad.primitive(name="softplus_typo")
    def softplus_typo(x):
        return np.logaddexp(0.0, x)
    softplus_typo.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-1.001 * x)))  # off by 0.1%

    print("  softplus'(x) = 1/(1 + e^-x); the typo writes e^(-1.001 x).")
    print(_indent(check_rule(softplus)))
    report = check_rule(softplus_typo)
    lines = str(report).splitlines()
    print(_indent("\n".join(lines[:3] + [f"  ... {len(report.failures)} failed checks in all"])))
    print("  (dualad check path/to/rules.py:softplus exits 1 on a wrong rule: use it in CI.)")

    _section("8. Higher order, custom Functions, the imperative API")
    print(f"  d^3/dx^3 sin at 1 = {dualad.derivative(np.sin, 3)(1.0):.6f} "
          f"(-cos 1 = {-np.cos(1.0):.6f})")

    class Exp(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            y = np.exp(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    print(f"  PyTorch-style Function Exp: d/dx at 1 = {dualad.grad(Exp.apply)(1.0):.6f}, "
          f"second derivative = {dualad.grad(dualad.grad(Exp.apply))(1.0):.6f} (e)")
    var = autograd.Variable(np.ones((2, 2)), requires_grad=True)
    (jac,) = autograd.grad(np.exp(var).sum(axis=1), var, grad_outputs=np.eye(2),
                           is_grads_batched=True)
    print(f"  autograd.grad(..., is_grads_batched=True) of exp(w).sum(axis=1): shape {jac.shape}")
    print("\nMore: README.md; reproductions of published results: papers/README.md.")
    return 0


def trace_command(args) -> int:
    """``dualad trace EXPR --at x1=2 x2=5 --mode reverse``: print the evaluation trace.

    The inputs keep the user's names and their --at order (``v_-1 = x2`` for
    ``--at x2=5 x1=2``). Every --at variable must appear in the expression: an
    unused one is an error naming it (listing it would add an input row that
    shifts every v_i index for nothing). Bad input ends in one line on stderr and
    exit status 2."""
    from .evaltrace import trace
    from .expr import ExpressionError, compile_expression, parse_assignments
    try:
        at = parse_assignments(args.at or [])
        f = compile_expression(args.expression, list(at))
        if not at:
            raise ExpressionError("give the point with --at, e.g. --at x1=2 x2=5")
        unused = [name for name in at if name not in f.names]
        if unused:
            raise ExpressionError(
                f"--at {unused[0]}={at[unused[0]]:g}: the expression {_short(args.expression)} "
                f"does not depend on {', '.join(unused)}; give --at only the variables it uses")
        seed = None
        if args.seed:
            seed = tuple(_number("--seed", s) for s in args.seed.split(","))
            want = len(at) if args.mode == "forward" else 1
            if len(seed) != want:
                raise ExpressionError(f"--seed needs {want} comma-separated number(s) for "
                                      f"{args.mode} mode, got {len(seed)}")
            seed = seed if args.mode == "forward" else seed[0]
        with np.errstate(all="ignore"):
            et = trace(f, *at.values(), mode=args.mode, seed=seed, names=list(at))
        render = {"text": et.to_text, "md": et.to_markdown, "latex": et.to_latex,
                  "dot": et.to_dot}[args.format]
        text = render(args.digits)
    except (ExpressionError, ValueError, TypeError, ArithmeticError) as e:
        return _fail(e)
    except (RecursionError, MemoryError):
        return _fail(f"the expression ({len(args.expression)} characters) is too deep or too "
                     f"large to trace; split it into parts")
    print(text)
    if args.graph:
        try:
            et.plot(args.graph, args.digits)
        except (ImportError, OSError) as e:
            return _fail(e)
        print(f"graph written to {args.graph}")
    return 0


def _fail(message) -> int:
    print(f"dualad trace: error: {message}", file=sys.stderr)
    return 2


def _short(text, limit=60):
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


def _number(option, text):
    from .expr import ExpressionError
    try:
        return float(text)
    except ValueError:
        raise ExpressionError(f"{option}: {text.strip()!r} is not a number") from None


MAX_DIGITS = 17   # a float64 carries at most 17 significant decimal digits


def _digits(text):
    try:
        d = int(text)
    except ValueError:
        d = None
    if d is None or not 0 <= d <= MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to {MAX_DIGITS}, "
                                         f"got {text!r}")
    return d


class _Parser(argparse.ArgumentParser):
    """Usage errors as ONE line on stderr and exit status 2 (``--help`` shows usage)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


_EXPRESSION_HELP = ('e.g. "log(x1) + x1*x2 - sin(x2)". One that starts with "-" may be given '
                    'as it is ("-x") or after "--" at the end: dualad trace --at x=1 -- "-x"')


def main(argv=None) -> int:
    parser = _Parser(prog="dualad", description=__doc__)
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("tour", help="a guided demo of the toolkit")
    p_trace = sub.add_parser("trace", help="the evaluation trace (Wengert list) of an expression")
    p_trace.add_argument("expression", nargs="?", help=_EXPRESSION_HELP)
    p_trace.add_argument("--at", nargs="+", metavar="NAME=VALUE",
                         help="the point: each variable of the expression, once (inputs are "
                              "numbered in this order)")
    p_trace.add_argument("--mode", choices=["forward", "reverse"], default="forward")
    p_trace.add_argument("--seed", help="forward: the direction, e.g. 1,0; reverse: ybar")
    p_trace.add_argument("--format", choices=["text", "md", "latex", "dot"], default="text")
    p_trace.add_argument("--digits", type=_digits, default=3,
                         help=f"decimals shown, 0 to {MAX_DIGITS} (default 3)")
    p_trace.add_argument("--graph", metavar="OUT.png", help="also draw the graph (matplotlib)")
    p_check = sub.add_parser(
        "check", help="verify custom derivative rules in a module (imports it: runs its code)",
        description="Verify the custom rules (@dualad.primitive, dualad.Function) a module "
                    "defines against finite differences. The target file is imported, so its "
                    "top-level code runs: check only files you would run. Exit status 0 all "
                    "rules pass, 1 a rule is wrong, 2 the target could not be loaded.")
    p_check.add_argument("target", help="path/to/module.py[:name] or package.module[:name]")
    p_check.add_argument("--order", type=int, default=2)
    args, extra = parser.parse_known_args(argv)
    if args.command == "trace":
        # argparse reads an expression starting with '-' ("-x", "-2*x") as an unknown
        # option: take it as the expression when that is missing.
        if args.expression is None and len(extra) == 1 and extra[0].startswith("-"):
            args.expression, extra = extra[0], []
        if args.expression is None and not extra:
            p_trace.error("the expression is required, e.g. dualad trace \"x1*x2\" "
                          "--at x1=2 x2=5")
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command in (None, "tour"):
        return tour()
    if args.command == "trace":
        return trace_command(args)
    if args.command == "check":
        from dualad.verification.cli import check_command
        return check_command(args.target, args.order)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())

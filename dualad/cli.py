"""The ``dualad`` command line: ``dualad tour`` walks through the toolkit."""
from __future__ import annotations

import argparse
import sys

import numpy as np


def _section(title):
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def tour() -> int:
    import dualad
    from dualad import autograd

    print("dualad: exact derivatives of plain NumPy code, forward and reverse mode.")

    _section("1. A gradient (reverse mode, one backward sweep)")
    def f(x):
        return np.log(x[0]) + x[0] * x[1] - np.sin(x[1])
    x = np.array([2.0, 5.0])
    print("f(x1, x2) = log(x1) + x1*x2 - sin(x2) at (2, 5)")
    value, g = dualad.value_and_grad(f)(x)
    print(f"  f = {value:.4f}   grad f = {np.array2string(g, precision=4)}"
          f"   (survey: 11.652, [5.5, 1.716])")

    _section("2. A directional derivative (forward mode, dual numbers)")
    v = np.array([1.0, 0.0])
    _, t = dualad.jvp(f, (x,), (v,))
    print(f"  J v for v = e1: {t:.4f}  (= df/dx1 = 1/x1 + x2 = 5.5)")
    basis = np.eye(2)
    _, tangents = dualad.jvp(f, (x,), (basis,))
    print(f"  vector mode, both basis directions in ONE sweep: {np.array2string(tangents)}")

    _section("3. A batched VJP (many cotangents, one backward sweep)")
    A = np.arange(6.0).reshape(3, 2) / 10.0
    out, pullback = dualad.vjp(lambda x: np.tanh(A @ x), x)
    (rows,) = pullback(np.eye(3))
    print("  pullback(eye(3)) gives the whole 3x2 Jacobian of tanh(A x):")
    print("  " + np.array2string(rows, precision=4).replace("\n", "\n  "))

    _section("4. Higher order")
    print(f"  d^3/dx^3 sin at 1.0 = {dualad.derivative(np.sin, 3)(1.0):.6f}"
          f"  (-cos 1 = {-np.cos(1.0):.6f})")
    hv = dualad.hvp(lambda x: np.sum(x ** 4), x, np.array([1.0, 1.0]))
    print(f"  Hessian-vector product of sum(x^4) at (2, 5), v = (1, 1): {hv}")

    _section("5. A custom rule (PyTorch-style Function)")
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

    print(f"  d/dx Exp(x) at 1 = {dualad.grad(Exp.apply)(1.0):.6f},"
          f" second derivative = {dualad.grad(dualad.grad(Exp.apply))(1.0):.6f} (e = {np.e:.6f})")

    _section("6. The imperative API (PyTorch / OneFlow style)")
    w = autograd.Variable(np.ones((2, 2)), requires_grad=True)
    y = np.exp(w).sum(axis=1)
    (jac,) = autograd.grad(y, w, grad_outputs=np.eye(2), is_grads_batched=True)
    print(f"  is_grads_batched Jacobian of exp(w).sum(axis=1): shape {jac.shape}")
    print("\nMore: README.md. Run the tests with the README's second command.")
    return 0


def trace_command(args) -> int:
    """``dualad trace EXPR --at x1=2 x2=5 --mode reverse``: print the evaluation trace."""
    from .evaltrace import trace
    from .expr import ExpressionError, compile_expression, parse_assignments
    try:
        at = parse_assignments(args.at or [])
        f = compile_expression(args.expression, list(at))
        if not at:
            raise ExpressionError("give the point with --at, e.g. --at x1=2 x2=5")
        seed = None
        if args.seed:
            seed = tuple(float(s) for s in args.seed.split(","))
            want = len(at) if args.mode == "forward" else 1
            if len(seed) != want:
                raise ExpressionError(f"--seed needs {want} comma-separated number(s) for "
                                      f"{args.mode} mode, got {len(seed)}")
            seed = seed if args.mode == "forward" else seed[0]
        with np.errstate(all="ignore"):
            et = trace(f, *at.values(), mode=args.mode, seed=seed)
    except (ExpressionError, ValueError, TypeError, ZeroDivisionError) as e:
        print(f"dualad trace: error: {e}", file=sys.stderr)
        return 2
    render = {"text": et.to_text, "md": et.to_markdown, "latex": et.to_latex,
              "dot": et.to_dot}[args.format]
    print(render(args.digits))
    if args.graph:
        try:
            et.plot(args.graph, args.digits)
        except ImportError as e:
            print(f"dualad trace: error: {e}", file=sys.stderr)
            return 2
        print(f"graph written to {args.graph}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="dualad", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("tour", help="a guided demo of the toolkit")
    p_trace = sub.add_parser("trace", help="the evaluation trace (Wengert list) of an expression")
    p_trace.add_argument("expression", help='e.g. "log(x1) + x1*x2 - sin(x2)"')
    p_trace.add_argument("--at", nargs="+", metavar="NAME=VALUE", help="the point")
    p_trace.add_argument("--mode", choices=["forward", "reverse"], default="forward")
    p_trace.add_argument("--seed", help="forward: the direction, e.g. 1,0; reverse: ybar")
    p_trace.add_argument("--format", choices=["text", "md", "latex", "dot"], default="text")
    p_trace.add_argument("--digits", type=int, default=3)
    p_trace.add_argument("--graph", metavar="OUT.png", help="also draw the graph (matplotlib)")
    p_check = sub.add_parser("check", help="verify custom derivative rules in a module")
    p_check.add_argument("target", help="path/to/module.py[:name] or package.module[:name]")
    p_check.add_argument("--order", type=int, default=2)
    args = parser.parse_args(argv)
    if args.command in (None, "tour"):
        return tour()
    if args.command == "trace":
        return trace_command(args)
    if args.command == "check":
        from verification.cli import check_command
        return check_command(args.target, args.order)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())

"""The ``dualad`` command line: ``dualad tour`` (a guided demo), ``dualad trace`` (evaluation
traces of an expression), ``dualad check`` (verify custom rules)."""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .about import VersionAction
from .tour import tour   # the guided demo: dualad/teaching/tour.py

__all__ = ["main", "tour", "trace_command"]


def trace_command(args) -> int:
    """``dualad trace EXPR --at x1=2 x2=5 --mode reverse``: print the evaluation trace.

    ``--mode taylor --order d`` prints the Taylor table instead: each intermediate's
    coefficients ``v_i,0 .. v_i,d`` along ``x + t·seed`` (the seed as in forward mode).

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
            want = 1 if args.mode == "reverse" else len(at)
            if len(seed) != want:
                raise ExpressionError(f"--seed needs {want} comma-separated number(s) for "
                                      f"{args.mode} mode, got {len(seed)}")
            seed = seed[0] if args.mode == "reverse" else seed
        order = _order_option(args)
        with np.errstate(all="ignore"):
            et = trace(f, *at.values(), mode=args.mode, seed=seed, names=list(at),
                       order=order)
            if args.html:   # both sweeps; the seed given applies to its own mode's sweep
                other = "reverse" if args.mode == "forward" else "forward"
                both = {args.mode: et, other: trace(f, *at.values(), mode=other,
                                                    names=list(at))}
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
    if args.html:
        return _write_page(args, at, both)
    return 0


def _order_option(args):
    """``--order`` is taylor mode's (default 3); --html steps through the other two."""
    from .expr import ExpressionError
    if args.mode != "taylor":
        if args.order is not None:
            raise ExpressionError(f"--order applies to --mode taylor, not --mode {args.mode}")
        return None
    if args.html:
        raise ExpressionError("--html steps through the forward and the reverse sweep; "
                              "--mode taylor prints its table (--format text, md or latex)")
    return 3 if args.order is None else args.order


def _write_page(args, at, traces):
    """``--html FILE``: the teaching page, the forward sweep's tab first."""
    from .evalhtml import html_page
    page = html_page(traces["forward"], traces["reverse"], digits=args.digits,
                     title=f"f({', '.join(at)}) = {_pretty(args.expression)}")
    try:
        with open(args.html, "w", encoding="utf-8") as out:
            out.write(page)
    except OSError as e:
        return _fail(f"--html {args.html}: cannot write the page: {e.strerror or e}")
    print(f"page written to {args.html}")
    return 0


def _pretty(expression):
    """The expression as a heading: ``x1*x2 - x2**2`` -> ``x1·x2 − x2^2``."""
    return expression.strip().replace("**", "^").replace("*", "·").replace("-", "−")


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


def _order(text):
    try:
        d = int(text)
    except ValueError:
        d = None
    if d is None or not 0 <= d <= 30:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 30, got {text!r}")
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
    p_trace.add_argument("--mode", choices=["forward", "reverse", "taylor"], default="forward",
                         help="taylor: the Taylor table, coefficients v_i,0 .. v_i,d of each "
                              "intermediate along x + t*seed")
    p_trace.add_argument("--seed", help="forward and taylor: the direction, e.g. 1,0; "
                                        "reverse: ybar")
    p_trace.add_argument("--order", type=_order, default=None,
                         help="taylor mode's truncation order d, 0 to 30 (default 3)")
    p_trace.add_argument("--format", choices=["text", "md", "latex", "dot"], default="text")
    p_trace.add_argument("--digits", type=_digits, default=3,
                         help=f"decimals shown, 0 to {MAX_DIGITS} (default 3)")
    p_trace.add_argument("--graph", metavar="OUT.png", help="also draw the graph (matplotlib)")
    p_trace.add_argument("--html", metavar="OUT.html",
                         help="also write the teaching page: the graph and the table, stepping "
                              "through the forward and the reverse sweep (self-contained)")
    p_check = sub.add_parser(
        "check", help="verify custom derivative rules in a module (imports it: runs its code)",
        description="Verify the custom rules (@dualad.primitive, dualad.Function) a module "
                    "defines against finite differences. The target file is imported, so its "
                    "top-level code runs: check only files you would run. Exit status 0 all "
                    "rules pass, 1 a rule is wrong, 2 the target could not be loaded or a rule "
                    "could not be checked (no sample could be drawn).")
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

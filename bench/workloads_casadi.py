"""CasADi as a peer for the dense, tall, wide and sparse Jacobians and the Hessian.

Registered into the rows of :mod:`workloads_jacobians` on import (column ``casadi``),
skipped by ``run.py`` when CasADi is not installed (``pip install casadi``).

What is timed: calling a prebuilt ``casadi.Function`` on the NumPy input and turning
its result into what dualad returns. Building the symbolic graph, differentiating it
and constructing the Function (CasADi's setup) happen once, outside the timed call,
and are printed once under the row; so is the evaluation alone through
``Function.buffer()`` (into preallocated NumPy memory, no conversions), to show how much
of a call is CasADi's Python/DM conversion rather than its virtual machine.

SX or MX: optimization users reach for SX (a graph of scalar operations, evaluated by a
flat virtual machine) on small dense problems, and MX (a graph of matrix operations)
when matrices are large. On these rows MX is the better of the two on this machine
(CasADi 3.8.2, one run of each): dense n = m = 200 Jacobian 3.1 ms MX vs 4.1 ms SX (SX
setup 3.2 s), tall 1.2 vs 2.1 ms, wide 1.5 vs 2.0 ms, Bratu 0.77 vs 0.84 ms evaluation.
The n = 300 Hessian in SX expands ``A.T @ diag(s) @ A`` into n^3 = 2.7e7 scalar nodes:
38 s and 3 GB to build, 62 ms a call, against MX's 1.8 s, 60 MB and 26 ms. So every row
uses MX, the mode a CasADi user would pick for these sizes; ``--casadi-sx`` (run.py)
switches every row to SX except the full-size Hessian, which stays MX for memory.
"""
from __future__ import annotations

import time

import numpy as np

import workloads
import workloads_jacobians as wj

MODE = ["MX"]   # run.py's --casadi-sx sets "SX"


def _row(name):
    return next(w for w in workloads.ALL if w.name == name)


def _sym(n, big=False):
    import casadi as ca
    kind = "MX" if big else MODE[0]
    return getattr(ca, kind).sym("x", n), kind


def _function(wl, build):
    """Build the Function (timed once, printed under the row) from ``build() ->
    (symbol, derivative expression, mode)``; returns the Function and its sparsity."""
    import casadi as ca
    t0 = time.perf_counter()
    x, expr, kind = build()
    fn = ca.Function("D", [x], [expr])
    setup = time.perf_counter() - t0
    wl.notes["casadi"] = (f"casadi {ca.__version__} {kind}: graph + derivative + Function "
                          f"built in {setup:.2f} s (not timed)")
    return fn


def _buffer_note(wl, fn, x0):
    """Time the evaluation alone through ``Function.buffer()`` (no DM conversion) and
    append it to the row's note."""
    from _timing import fmt, median_time
    if not hasattr(fn, "buffer"):
        return
    buf, evaluate = fn.buffer()
    arg = np.ascontiguousarray(x0, dtype=float)
    res = np.empty(fn.sparsity_out(0).nnz())
    buf.set_arg(0, memoryview(arg))
    buf.set_res(0, memoryview(res))
    wl.notes["casadi"] += (f"; evaluation alone (Function.buffer) "
                           f"{fmt(median_time(evaluate, repeat=3, min_time=0.02))}")


def _dense(name, data, expression):
    """Register CasADi on a dense row: ``data(quick) -> (matrix, x0)``, ``expression(ca,
    matrix, x) -> derivative`` in CasADi symbols; timed: ``D(x0).full()``."""
    wl = _row(name)

    @wl.register("casadi")
    def _(quick):
        import casadi as ca
        M, x0 = data(quick)

        def build():
            x, kind = _sym(x0.size, big=(name == "hessian" and not quick))
            return x, expression(ca, ca.DM(M), x), kind
        fn = _function(wl, build)
        _buffer_note(wl, fn, x0)
        return lambda: fn(x0).full()


_dense("jacobian", wj._jac_data,
       lambda ca, W, x: ca.jacobian(ca.tanh(ca.mtimes(W, x)) * ca.sin(x), x))
_dense("hessian", wj._hess_data,
       lambda ca, A, x: ca.hessian(ca.sum1(ca.log(ca.cosh(ca.mtimes(A, x))))
                                   + 0.5 * ca.sum1(x ** 4), x)[0])
for _name, (_n, _m) in (("jacobian-tall", (10, 2000)), ("jacobian-wide", (2000, 10))):
    _dense(_name, lambda quick, n=_n, m=_m: wj._shape_data(n, m),
           lambda ca, B, x: ca.jacobian(ca.tanh(ca.mtimes(B, ca.sin(x))) * 2.0
                                        + ca.cos(ca.mtimes(B, x)), x))


# --- sparse: the Bratu residual -----------------------------------------------------------
def _bratu(ca, n, u, lam=1.0):
    """:func:`workloads_jacobians.bratu` in CasADi symbols (zero boundary values)."""
    h2 = 1.0 / (n + 1) ** 2
    up = ca.vertcat(u[1:], 0)
    um = ca.vertcat(0, u[:-1])
    return (um - 2.0 * u + up) / h2 + lam * ca.exp(u)


SPARSE = _row("sparse-jacobian")


@SPARSE.register("casadi")
def _(quick):
    """The result is a ``scipy.sparse.csc_matrix`` built from the DM's nonzeros on the
    Function's output sparsity (read once): ``DM.sparse()`` does the same conversion but
    spends ~11 ms per call on it at n = 20000, ten times the evaluation. Unlike dualad's
    row (a fresh function per call: detection and coloring every time), CasADi's
    sparsity and coloring are part of its untimed setup."""
    import casadi as ca
    import scipy.sparse as sp
    n, u0 = wj._bratu_data(quick)

    def build():
        u, kind = _sym(n)
        return u, ca.jacobian(_bratu(ca, n, u), u), kind
    fn = _function(SPARSE, build)
    pattern = fn.sparsity_out(0)
    row, colind = np.array(pattern.row()), np.array(pattern.colind())
    shape = (pattern.size1(), pattern.size2())
    _buffer_note(SPARSE, fn, u0)

    def run():
        values = np.array(fn(u0).nonzeros())
        return sp.csc_matrix((values, row, colind), shape=shape)
    return run

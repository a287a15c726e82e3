"""The rule checker's jit check: does a primitive trace once and replay under ``dualad.jit``?

At each sample call of a primitive, with its differentiable arguments as the jitted
function's inputs (the others held as constants), the function is traced at the sample
(point 1) and then called at fresh random values (point 2, drawn again inside the sample's
domain, or a structure-keeping perturbation of a concrete matrix). At point 2:

- value: ``jit(f)`` against ``f``, to ``rtol`` (a replay runs the same implementations);
- derivatives, where the primitive has the rules: ``jit(vjp(f))`` against ``vjp(f)``,
  ``jit(jvp(f))`` against ``jvp(f)`` (the rules' own primitives recorded and replayed),
  and ``vjp(jit(f))``, ``jvp(jit(f))`` (the recorded program replayed through the
  primitives under a tape or dual numbers) against the same;
- replay: each jitted function was traced ONCE over both points (``cache_info``). A
  second trace means the trace recorded a guard that failed at point 2: a read of a traced
  value that decided nothing (its dtype or shape taken with ``tracer.primal_value``: a
  spurious guard, a defect) or one that decides the result. The primitives whose
  implementation or rules legitimately decide on values are listed in :data:`RETRACES`,
  with the reason; for them a second trace is correct (and the values are still compared).

A replay is never stale, so a missed guard shows as a wrong value at point 2. Some
guards are legitimate and narrow, and hold at the checker's second point: LU's derivatives
guard LAPACK's pivot order (the ``lu_pivots`` primitive's output), so a matrix that
pivots differently traces again.
"""
from __future__ import annotations

__all__ = ["RTOL", "jit_kind", "check_jit"]

import numpy as np

import dualad

from .batching import _compare, _like, _solver_rtol, _variation
from .sampling import fill_arguments

RTOL = 1e-12

# Primitives whose jitted derivative traces again at a new point, and why: a guard on a
# value that decides the result (the program recorded at one point is not the program at
# the other). Their values are checked all the same; jit of the primitive itself replays.
RETRACES: dict = {}
# (solve_ivp and solve_ivp_event were listed until issue 31: their adjoint ordered the
# output times from their values; the first-order adjoint is now one primitive that reads
# them at its call.)


def jit_kind(prim) -> str:
    """``replays`` (traced once per signature) or ``re-traces`` (a value decides: see
    :data:`RETRACES`)."""
    return "re-traces" if prim.name in RETRACES else "replays"


def _second_point(smp, vals, diff, call, kw, rng):
    """Fresh values of the differentiable arguments at which the plain call is finite (a
    variation, else the sample scaled), and how they were drawn."""
    dom = smp.get("domain") or [None] * len(vals)
    specs = smp.get("args", ())
    for attempt in range(4):
        if attempt < 3:
            xs = [_variation(specs[i] if i < len(specs) else None, vals[i], 1 + attempt,
                             dom[i] if i < len(dom) else None, rng) for i in diff]
            how = "vary"
        else:
            xs = [vals[i] * 1.02 for i in diff]
            how = "scale"
        xs = [_like_type(x, vals[i]) for x, i in zip(xs, diff)]
        try:
            with np.errstate(all="ignore"):
                out = call(*fill_arguments(vals, diff, xs), **kw)
            leaves = out if isinstance(out, (tuple, list)) else (out,)
            if all(np.all(np.isfinite(np.asarray(o, dtype=complex))) for o in leaves):
                return xs, how
        except Exception:  # noqa: BLE001 - a variation outside the domain: try the next
            pass
    return None, "none"


def _like_type(x, v):
    """``x`` with the type and dtype of ``v`` (the jit signature keys on both)."""
    if isinstance(v, np.ndarray):
        return np.asarray(x, dtype=v.dtype).reshape(v.shape)
    return type(v)(np.asarray(x).reshape(()).item() if isinstance(v, (float, complex))
                   else np.asarray(x).reshape(()))



def _traces(jitted):
    """The most traces any one signature took (a 0-d array argument is a NumPy scalar
    under jvp/vjp: another signature, traced once too)."""
    return max(jitted.cache_info().values(), default=0)


def _guards(jitted, args):
    try:
        return "; ".join(g.describe() for g in jitted.program(*args).guards) or "none"
    except Exception as e:  # noqa: BLE001 - only for the message
        return f"(program unavailable: {type(e).__name__})"


def check_jit(report, prim, call, vals, diff, kw, tag, smp, rng, rtol=RTOL,
              modes=("fwd", "rev")):
    """Add the jit checks of one sample call to ``report`` (see the module docstring).
    Returns the number of jitted functions that traced more than once."""
    name = f"{tag}: jit"
    if not diff:
        return 0
    x2, how = _second_point(smp, vals, diff, call, kw, rng)
    if x2 is None:
        report.notes.append("jit: no second point with finite values; checked at the "
                            "sample only")
        x2 = [vals[i] for i in diff]
    elif how != "vary":
        report.notes.append("jit: second point is the sample scaled (its variations left "
                            "the domain)")
    x1 = [vals[i] for i in diff]
    # an adaptive solver's derivative traced under jit may take another (equally accurate)
    # algorithm than the plain sweep (the ODE adjoint with the states joined): solver tolerance
    rtol = max(rtol, 10 * _solver_rtol(kw))
    try:
        return _check(report, prim, call, vals, diff, kw, name, x1, x2, rng, rtol,
                      () if prim.zero_derivative or getattr(prim, "stops_gradient", False)
                      else tuple(modes or ()))
    except Exception as e:  # noqa: BLE001 - any crash is a failed check, reported
        report.add(f"{name}: ran without error", False, detail=f"{type(e).__name__}: {e}")
        return 0


def _check(report, prim, call, vals, diff, kw, name, x1, x2, rng, rtol, modes):
    def f(*xs):
        return call(*fill_arguments(vals, diff, xs), **kw)

    f.__name__ = prim.name
    n = len(diff)
    retraced = []
    checks = [("jit(f)", f, x1, x2)]
    out1 = f(*x1)
    outs = out1 if isinstance(out1, tuple) else (out1,)
    tangents = [[_like(x, rng) for x in x1] for _ in range(2)]
    cts = [tuple(_like(o, rng) for o in outs) for _ in range(2)]
    cts = [c if isinstance(out1, tuple) else c[0] for c in cts]

    def g_jvp(*xs_ts):
        return dualad.jvp(f, tuple(xs_ts[:n]), tuple(xs_ts[n:]))[1]

    def g_vjp(*xs_u):
        _, pullback = dualad.vjp(f, *xs_u[:n])
        return tuple(pullback(xs_u[n]))

    if "fwd" in modes:
        checks.append(("jit(jvp(f))", g_jvp, x1 + tangents[0], x2 + tangents[1]))
    if "rev" in modes:
        checks.append(("jit(vjp(f))", g_vjp, x1 + [cts[0]], x2 + [cts[1]]))
    jf = None
    for what, fn, p1, p2 in checks:
        jitted = dualad.jit(fn)
        _compare(report, f"{name}: {what} at the trace point", jitted(*p1), fn(*p1), rtol)
        _compare(report, f"{name}: {what} replayed at a second point", jitted(*p2),
                 fn(*p2), rtol)
        if _traces(jitted) != 1:
            retraced.append((what, jitted, p1))
        if jf is None:
            jf = jitted
    # the program replayed through the primitives under an outer transformation
    if "fwd" in modes:
        got = dualad.jvp(jf, tuple(x2), tuple(tangents[1]))[1]
        _compare(report, f"{name}: jvp(jit(f)) at the second point", got,
                 g_jvp(*x2, *tangents[1]), rtol)
    if "rev" in modes:
        _, pullback = dualad.vjp(jf, *x2)
        _compare(report, f"{name}: vjp(jit(f)) at the second point", tuple(pullback(cts[1])),
                 g_vjp(*x2, cts[1]), rtol)
    if modes and _traces(jf) != 1 and not any(w == "jit(f)" for w, _, _ in retraced):
        retraced.append(("jit(f) under jvp/vjp", jf, x1))
    for what, jitted, p1 in retraced:
        # a listed primitive's derivatives may trace again; the primitive itself replays
        legit = prim.name in RETRACES and what != "jit(f)"
        report.add(f"{name}: {what} traced once over two points", legit,
                   detail=f"traces again: {RETRACES[prim.name]}" if legit else
                   f"{_traces(jitted)} traces; guards at the first point: "
                   f"{_guards(jitted, p1)}")
    if not retraced:
        report.add(f"{name}: traced once over two points", True)
    return len(retraced)

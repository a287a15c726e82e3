"""The rule checker's batching check: is a primitive's batching rule (``vmap``) right?

At each sample call of a primitive, every array argument is batched in turn, and all
of them together: B = 3 examples (the sample itself and two variations of it, drawn
again inside the sample's domain, or a structure-keeping perturbation of a concrete
matrix), stacked along axis 0 and along a random other axis given by ``in_axes``. Then

- value: ``vmap(f)`` against the Python loop ``[f(example_b) for b]``, to ``rtol``;
- the rule's own derivatives, against the loop of the per-example derivative:
  ``vmap(jvp(f))`` and ``jvp(vmap(f))`` (tangents batched with the primals),
  ``vmap(vjp(f))`` and ``vjp(vmap(f))`` (a cotangent per example). They exercise the
  batching rules of the primitives the JVP/VJP rules are written with (vmap of a rule)
  and the derivative rules of the primitives the batching rule is written with (a rule
  of vmap).

A primitive with no batching rule is computed by a loop over the batch (correct, B calls
instead of one): :func:`vmap_kind` says ``loop`` and the checker reports it as its own
category, not as a failure. ``rule`` is a declared rule (``prim.defbatch``), ``derived``
one vmap derives (elementwise broadcasting, a linear primitive's ``batched=``).
"""
from __future__ import annotations

__all__ = ["B", "vmap_kind", "check_batching"]

import numpy as np

import dualad
from dualad.extend import rule_table, is_looped

BATCH = rule_table("batch")

B = 3   # examples per batch


def vmap_kind(prim) -> str:
    """How ``dualad.vmap`` batches ``prim``: ``rule`` (declared beside it), ``rule (loops
    over a batched argument k)`` where the declared rule falls back to the loop for one
    argument, ``derived`` or ``loop``."""
    rule = BATCH.get(prim)
    if rule is not None:
        loops = getattr(rule, "loops_on", ())
        if loops:
            return "rule (loops over a batched argument " + ", ".join(map(str, loops)) + ")"
        return "rule"
    return "loop" if is_looped(prim) else "derived"


def _batchable(a):
    return isinstance(a, (np.ndarray, np.generic, float, complex)) and \
        np.asarray(a).dtype.kind in "fcbiu"


def _structured_noise(a, rng):
    """Noise of ``a``'s shape keeping its structure: zero where ``a`` is zero (triangles,
    bands), symmetric or Hermitian where ``a`` is, relative to ``a``'s entries."""
    e = rng.standard_normal(np.shape(a))
    if np.iscomplexobj(a):
        e = e + 1j * rng.standard_normal(np.shape(a))
    e = e * np.abs(a)
    if np.ndim(a) >= 2 and a.shape[-1] == a.shape[-2]:
        aT = np.swapaxes(a, -1, -2)
        if np.array_equal(a, np.conj(aT)):
            e = 0.5 * (e + np.conj(np.swapaxes(e, -1, -2)))
        elif np.array_equal(a, aT):
            e = 0.5 * (e + np.swapaxes(e, -1, -2))
    return e


def _variation(spec, a, k, dom, rng):
    """Example ``k`` of argument ``a`` (example 0 is ``a`` itself)."""
    if k == 0:
        return a
    kind = np.asarray(a).dtype.kind
    if kind == "b":
        return rng.random(np.shape(a)) < 0.5
    if kind in "iu":          # integer arrays (counts, orders): the same for every example
        return a
    if isinstance(spec, tuple) and all(isinstance(s, int) for s in spec) and \
            not np.iscomplexobj(a):
        lo, hi = (-np.inf, np.inf) if dom is None else dom
        lo, hi = max(lo, -2.0), min(hi, max(max(lo, -2.0) + 1.0, 2.0))
        v = rng.uniform(lo, hi, size=np.shape(a))
        return v if np.ndim(a) else np.float64(v)
    out = np.asarray(a) + 0.05 * k * _structured_noise(np.asarray(a), rng)
    return out if np.ndim(a) else out[()]


def _examples(smp, vals, i, call, kw, rng, others):
    """B examples of argument i whose plain calls give finite values (else fewer
    variations: the sample scaled, then the sample repeated)."""
    spec = smp["args"][i] if i < len(smp["args"]) else None
    dom = (smp.get("domain") or [None] * len(vals))
    dom = dom[i] if i < len(dom) else None
    for attempt in ("vary", "scale", "repeat"):
        if attempt == "vary":
            xs = [_variation(spec, vals[i], k, dom, rng) for k in range(B)]
        elif attempt == "scale":
            xs = [vals[i] * (1.0 + 0.02 * k) if np.asarray(vals[i]).dtype.kind in "fc"
                  else vals[i] for k in range(B)]
        else:
            xs = [vals[i]] * B
        try:
            ok = all(np.all(np.isfinite(np.asarray(call(*_with(vals, {i: x}, others, k),
                                                        **kw), dtype=complex)))
                     for k, x in enumerate(xs))
        except Exception:  # noqa: BLE001 - a variation outside the domain: try the next
            ok = False
        if ok:
            return xs, attempt
    return [vals[i]] * B, "repeat"


def _with(vals, repl, others=None, k=0):
    out = list(vals)
    for j, x in repl.items():
        out[j] = x
    for j, xs in (others or {}).items():
        out[j] = xs[k]
    return out


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "b" or b.dtype.kind == "b":    # masks: compared as 0/1
        a, b = a.astype(float), b.astype(float)
    if a.shape != b.shape:
        return np.inf, np.inf
    err = np.abs(a - b)
    scale = np.maximum(np.abs(b), 1.0)
    return float(np.max(err, initial=0.0)), float(np.max(err / scale, initial=0.0))


def _stack(outs):
    if isinstance(outs[0], (tuple, list)):
        return tuple(np.stack([np.asarray(o[j]) for o in outs]) for j in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def _compare(report, check, got, want, rtol):
    if isinstance(want, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            report.add(check, False, detail=f"got {type(got).__name__}, expected a tuple "
                                            f"of {len(want)}")
            return
        errs = [_rel(np.asarray(g), w) for g, w in zip(got, want)]
        a, r = max(e[0] for e in errs), max(e[1] for e in errs)
    else:
        a, r = _rel(np.asarray(got), want)
    detail = "" if r <= rtol else (f"shape {np.shape(np.asarray(got))} vs {np.shape(want)}"
                                   if not isinstance(want, tuple) else "")
    report.add(check, r <= rtol, a, r, detail)


def check_batching(report, prim, call, vals, diff, kw, tag, smp, rng, rtol=1e-12,
                   modes=("fwd", "rev")):
    """Add the batching checks of one sample call to ``report`` (see the module
    docstring). ``diff``: the differentiable arguments (the derivative checks batch and
    differentiate those among the batched ones); ``modes``: the derivative rules the
    primitive has ("fwd": JVP, "rev": VJP)."""
    arrays = [i for i, a in enumerate(vals) if _batchable(a)]
    subsets = [(i,) for i in arrays] + ([tuple(arrays)] if len(arrays) > 1 else [])
    for subset in subsets:
        examples = {}
        for i in subset:
            examples[i], how = _examples(smp, vals, i, call, kw, rng, examples)
            if how != "vary":
                report.notes.append(f"vmap: argument {i} batched as the sample "
                                    f"{'scaled' if how == 'scale' else 'repeated'} (its "
                                    f"variations left the domain)")
        name = f"{tag}: vmap over argument{'s' if len(subset) > 1 else ''} " \
               f"{', '.join(map(str, subset))}"
        try:
            _check_subset(report, call, vals, diff, kw, name, subset, examples, rng, rtol,
                          () if prim.zero_derivative else tuple(modes or ()))
        except Exception as e:  # noqa: BLE001 - any crash is a failed check, reported
            report.add(f"{name}: ran without error", False, detail=f"{type(e).__name__}: {e}")


def _check_subset(report, call, vals, diff, kw, name, subset, examples, rng, rtol, modes):
    stacked = [np.stack([np.asarray(x) for x in examples[i]]) for i in subset]
    loop = _stack([call(*_with(vals, {}, examples, k), **kw) for k in range(B)])

    def f(*xs):
        return call(*_with(vals, dict(zip(subset, xs))), **kw)

    for where in ("0", "moved"):
        axes = [0 if where == "0" or s.ndim < 2 else int(rng.integers(1, s.ndim))
                for s in stacked]
        if where == "moved" and not any(axes):
            continue
        args = [np.moveaxis(s, 0, p) for s, p in zip(stacked, axes)]
        got = dualad.vmap(f, in_axes=tuple(axes))(*args)
        _compare(report, f"{name} (in_axes={tuple(axes)}) vs a loop", got, loop, rtol)
    d = [j for j, i in enumerate(subset) if i in diff]
    if not modes or not d:
        return
    # tangents and cotangents per example; the non-differentiated batched arguments ride
    # along as batched inputs of the mapped function
    tangents = [np.stack([_like(stacked[j][k], rng) for k in range(B)]) for j in d]
    outs = [np.asarray(o) for o in (loop if isinstance(loop, tuple) else (loop,))]
    cts = [np.stack([_like(o[k], rng) for k in range(B)]) for o in outs]
    ct = tuple(cts) if isinstance(loop, tuple) else cts[0]

    def g_jvp(*xs_ts):
        xs, ts = xs_ts[:len(subset)], xs_ts[len(subset):]
        return dualad.jvp(lambda *ds: f(*_put(xs, d, ds)), tuple(xs[j] for j in d),
                          tuple(ts))[1]

    def g_vjp(*xs_u):
        xs, u = xs_u[:len(subset)], xs_u[len(subset)]
        _, pullback = dualad.vjp(lambda *ds: f(*_put(xs, d, ds)), *[xs[j] for j in d])
        return tuple(pullback(u))

    def at(k):
        return [s[k] for s in stacked], [t[k] for t in tangents], \
            (tuple(c[k] for c in cts) if isinstance(loop, tuple) else cts[0][k])

    def batched_f(*ds, _xs=stacked):
        return dualad.vmap(f)(*_put(_xs, d, ds))

    def vjp_of_vmap():
        _, pullback = dualad.vjp(batched_f, *[stacked[j] for j in d])
        return tuple(pullback(ct))

    checks = []
    if "fwd" in modes:
        jvp_loop = lambda: _stack([g_jvp(*at(k)[0], *at(k)[1]) for k in range(B)])  # noqa: E731
        checks += [("vmap(jvp)", lambda: dualad.vmap(g_jvp)(*stacked, *tangents), jvp_loop),
                   ("jvp(vmap)", lambda: dualad.jvp(batched_f, tuple(stacked[j] for j in d),
                                                    tuple(tangents))[1], jvp_loop)]
    if "rev" in modes:
        vjp_loop = lambda: _stack([g_vjp(*at(k)[0], at(k)[2]) for k in range(B)])  # noqa: E731
        checks += [("vmap(vjp)", lambda: dualad.vmap(g_vjp)(*stacked, ct), vjp_loop),
                   ("vjp(vmap)", vjp_of_vmap, vjp_loop)]
    # An adaptive solver's derivative (an ODE's sensitivities or adjoint) solves the whole
    # batch on one sequence of steps, the loop each example on its own: they agree to the
    # solver's tolerance, not to rounding
    tol = max(rtol, 10 * _solver_rtol(kw))
    for what, got, want in checks:
        check = f"{name}: {what} vs a loop of {'jvp' if 'jvp' in what else 'vjp'}"
        try:
            _compare(report, check, got(), want(), tol)
        except Exception as e:  # noqa: BLE001 - a crash is a failed check, reported
            report.add(check, False, detail=f"{type(e).__name__}: {str(e).splitlines()[0]}")


def _solver_rtol(kw):
    """The relative tolerance of the adaptive solver a primitive's parameters configure (its
    ``settings``: the derivative sweeps' ``sweep_rtol``), or 0."""
    settings = kw.get("settings")
    return float(getattr(settings, "sweep_rtol", 0.0) or 0.0)


def _put(xs, positions, values):
    out = list(xs)
    for j, v in zip(positions, values):
        out[j] = v
    return out


def _like(x, rng):
    """A random tangent or cotangent of ``x``'s shape and kind (real or complex)."""
    x = np.asarray(x)
    v = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(x.shape)
    return v

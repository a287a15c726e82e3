"""What the rule checker can check on a user's rule, and where: its modes and samples.

Users' rules come in one direction more often than two (a PyTorch-style
``Function`` with only ``backward``, a primitive with only ``defvjp``) and with
no samples declared. :func:`directions` says which modes a rule has, and
:func:`signature_sample` draws example arguments from the forward's signature:
standard normals at broadcasting shapes, redrawn inside the forward's domain
when it returns nan/inf, a shape skipped when the forward refuses it.
"""
from __future__ import annotations

__all__ = ["directions", "fill_arguments", "matrix_samples", "signature_arity",
           "signature_sample"]

import numpy as np

import dualad
from dualad.extend import rule_table, primal_value

JVP = rule_table("jvp", per_argument=True)
VJP = rule_table("vjp", per_argument=True)
JVP_ALL = rule_table("jvp_all")
VJP_ALL = rule_table("vjp_all")


def fill_arguments(vals, diff, xs):
    """``vals`` with the differentiated positions ``diff`` replaced by ``xs``."""
    out = list(vals)
    for i, x in zip(diff, xs):
        out[i] = x
    return out


def directions(prim, target, diff):
    """The modes ``prim`` has rules for, on the differentiable arguments ``diff``:
    a subset of ("fwd", "rev"). A Function has reverse mode when it overrides
    ``backward`` and forward mode when it defines ``jvp``; a primitive has a mode
    when it has that mode's rule for every argument in ``diff`` (or a ``*_all`` rule)."""
    cls = prim.function_class
    if cls is not None:
        modes = []
        if getattr(cls, "jvp", None) is not None:
            modes.append("fwd")
        if cls.backward is not dualad.Function.backward:
            modes.append("rev")
        return tuple(modes)
    fwd = JVP_ALL.get(prim) is not None or all(i in JVP.get(prim) for i in diff)
    rev = VJP_ALL.get(prim) is not None or all(i in VJP.get(prim) for i in diff)
    return tuple(m for m, has in (("fwd", fwd), ("rev", rev)) if has)


def signature_arity(prim, target):
    """How many positional arguments the forward computation takes (``ctx`` aside)."""
    import inspect
    cls = prim.function_class
    # a custom_jvp/custom_vjp function: its own signature (its primitive takes leaves)
    fn = cls.forward if cls is not None else getattr(target, "fun", None) or prim.impl
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 1
    if cls is not None:
        params = params[1:]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 1
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
               for p in params) or 1


# Draws for samples taken from the signature, tried in turn until the forward gives a
# finite value: standard normals first, then the usual domains of log/sqrt (positive),
# arcsin/arctanh (inside (-1, 1)), and a point away from 0.
_DRAWS = (lambda rng, s: rng.standard_normal(s),
          lambda rng, s: np.abs(rng.standard_normal(s)) + 0.5,
          lambda rng, s: rng.uniform(-0.9, 0.9, s),
          lambda rng, s: rng.uniform(1.2, 2.0, s))


def _spd(rng, s):
    """A symmetric positive definite matrix (X Xᵀ/m + I: eigenvalues ≥ 1, well
    conditioned) for a square shape (m, m); standard normals for any other shape."""
    if len(s) != 2 or s[0] != s[1]:
        return rng.standard_normal(s)
    x = rng.standard_normal(s)
    return x @ x.T / s[0] + np.eye(s[0])


# For matrix arguments: a general square matrix first (logdet, inv, solve), then a
# symmetric positive definite one (cholesky, a log-determinant by Cholesky).
_MATRIX_DRAWS = (lambda rng, s: rng.standard_normal(s), _spd)


def matrix_samples(arity):
    """Samples of ``arity`` square (3, 3) matrices, drawn general then symmetric positive
    definite: the fallback when every broadcasting shape is refused by the forward."""
    return [{"args": ((3, 3),) * arity, "params": {}, "domain": None, "signature": True,
             "draws": _MATRIX_DRAWS}]


def signature_sample(smp, call, rng):
    """Values for a sample drawn from the signature, inside the forward's domain: the
    first draw at which the forward returns finite values, or (None, why). A draw the
    forward refuses (raises) is followed by the next: the shape may be right and only
    the values outside the domain (a Cholesky factorization of a matrix that is not
    positive definite)."""
    why = None
    for draw in smp.get("draws", _DRAWS):
        vals = [draw(rng, shape) for shape in smp["args"]]
        vals = [np.float64(v) if np.shape(v) == () else v for v in vals]
        try:
            with np.errstate(all="ignore"):
                out = call(*vals, **smp.get("params", {}))
        except Exception as e:  # noqa: BLE001 - the forward does not take these shapes
            why = why or f"the forward raised {type(e).__name__}: {str(e).splitlines()[0]}"
            continue
        leaves = out if isinstance(out, (tuple, list)) else (out,)
        try:
            finite = all(np.all(np.isfinite(np.asarray(primal_value(o))))
                         for o in leaves)
        except TypeError:
            finite = True
        if finite:
            return vals, None
    return None, why or "the forward returned nan/inf at every draw"

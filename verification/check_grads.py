"""``check_grads``: derivatives of a function against numeric oracles, to any order.

For each argument i, with fixed-seed random directions v (tangent) and u
(cotangent):

- JVP:  the AD tangent J_i v against a Richardson-extrapolated central
  difference of f along v;
- VJP:  the dot-product test ⟨u, J_i v⟩ = ⟨J_iᵀ u, v⟩, the left side from the
  numeric directional derivative, the right from the AD cotangent.

``order=2`` repeats both checks on the functions x ↦ J(x) v ("JVP") and
x ↦ J(x)ᵀ u ("VJP"), so the checks are named "JVP of JVP", "VJP of JVP", …
A failure raises :class:`GradCheckError` naming the exact check and, for small
inputs, showing the numerical and analytical Jacobians side by side.

Complex arguments and outputs are R²: their directions v and u are complex,
the difference along v is the R-linear derivative, and the dot-product test
uses the pairing cotangents have (JAX's): ⟨u, J v⟩ = Re Σ u·(J v), no
conjugation. So non-holomorphic functions (abs, real, conj) are checked too.
"""
from __future__ import annotations

import numpy as np

import dualad
from dualad.ops import concatenate, ravel

from .numeric import real_directions, real_jacobian, richardson, realify

# (rtol, atol) by dtype of the inputs; numeric oracles always run in float64.
TOLERANCES = {
    np.dtype(np.float64): (1e-5, 1e-6),
    np.dtype(np.float32): (2e-3, 2e-3),
    np.dtype(np.complex128): (1e-5, 1e-6),
    np.dtype(np.complex64): (2e-3, 2e-3),
}


class GradCheckError(AssertionError):
    """A derivative disagreed with its oracle."""


def _flat(out):
    leaves = out if isinstance(out, (tuple, list)) else [out]
    leaves = [ravel(o) for o in leaves]
    return leaves[0] if len(leaves) == 1 else concatenate(leaves)


def _flat_fn(f):
    return lambda *xs: _flat(f(*xs))


def _with(args, i, xi):
    return args[:i] + (xi,) + args[i + 1:]


def _close(a, b, rtol, atol):
    a, b = np.asarray(a, dtype=complex), np.asarray(b, dtype=complex)
    err = np.abs(a - b)
    return bool(np.all(err <= atol + rtol * np.abs(b))), float(np.max(err, initial=0.0))


def _side_by_side(f, args, i):
    x = np.asarray(args[i])
    fi = lambda xi: np.asarray(dualad.tracer.primal_value(f(*_with(args, i, xi))))  # noqa: E731
    num = real_jacobian(fi, x)
    dirs = real_directions(x)
    _, ana = dualad.jvp(lambda xi: f(*_with(args, i, xi)), (x,), (dirs,))
    ana = np.stack([realify(t) for t in np.asarray(ana)], axis=1)
    note = " (complex as R²: [Re, Im] coordinates)" if np.iscomplexobj(x) or \
        np.iscomplexobj(ana) else ""
    with np.printoptions(precision=6, suppress=True, linewidth=120):
        return (f"\nnumerical Jacobian (central differences){note}:\n{num}"
                f"\nanalytical Jacobian (forward mode):\n{ana}")


def _direction(shape, like, rng):
    """A fixed-seed random direction of ``like``'s kind (complex directions for complex)."""
    v = rng.standard_normal(shape)
    dtype = np.result_type(like)
    if dtype.kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def check_grads(f, args, order=2, modes=("fwd", "rev"), atol=None, rtol=None, seed=0):
    """Check ``f``'s derivatives at ``args`` in the given modes up to ``order``.

    ``args`` is one array or a tuple of arrays; ``f`` returns an array or a
    tuple of arrays. Returns the number of checks run; raises
    :class:`GradCheckError` on the first failure.
    """
    args = tuple(np.asarray(a) for a in (args if isinstance(args, tuple) else (args,)))
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got {m!r}")
    dtype = np.result_type(*args)
    d_rtol, d_atol = TOLERANCES.get(np.dtype(dtype), TOLERANCES[np.dtype(np.float64)])
    tol = (d_rtol if rtol is None else rtol, d_atol if atol is None else atol)
    rng = np.random.default_rng(seed)
    return _check(_flat_fn(f), args, order, modes, "", tol, rng)


def _check(f, args, order, modes, label, tol, rng):
    count = 0
    out = np.asarray(dualad.tracer.primal_value(f(*args)))
    tangents = tuple(_direction(np.shape(a), a, rng) for a in args)
    u = _direction(out.shape, np.result_type(out, float).type(0), rng)
    for i, x in enumerate(args):
        v = tangents[i]
        fi = lambda xi, i=i: f(*_with(args, i, xi))  # noqa: E731
        f64 = lambda xi, i=i: np.asarray(f(*_with(tuple(  # noqa: E731
            np.asarray(a, dtype=np.result_type(a, np.float64)) for a in args), i, xi)))
        numeric, err_est = richardson(f64, np.asarray(x, dtype=np.result_type(x, np.float64)), v)
        rtol, atol = tol
        atol = max(atol, 10 * err_est)
        if "fwd" in modes:
            _, t = dualad.jvp(fi, (x,), (v,))
            ok, err = _close(t, numeric, rtol, atol)
            count += 1
            if not ok:
                raise GradCheckError(f"{_name('JVP', label)}, argument {i}: max error {err:.3e} "
                                     f"(rtol {rtol}, atol {atol:.1e})" +
                                     (_side_by_side(f, args, i) if np.size(x) <= 12 else ""))
        if "rev" in modes:
            _, pullback = dualad.vjp(fi, x)
            (ct,) = pullback(u)
            # ⟨a, b⟩ = Re Σ a·b: cotangents are transposes, not conjugate transposes.
            lhs, rhs = np.real(np.sum(u * numeric)), np.real(np.sum(np.asarray(ct) * v))
            ok, err = _close(rhs, lhs, rtol, atol * max(1.0, np.sqrt(u.size)))
            count += 1
            if not ok:
                raise GradCheckError(f"{_name('VJP', label)}, argument {i}: dot-product test "
                                     f"<u, J v> = {lhs:.10g} but <J^T u, v> = {rhs:.10g}" +
                                     (_side_by_side(f, args, i) if np.size(x) <= 12 else ""))
    if order > 1:
        if "fwd" in modes:
            g = lambda *xs: dualad.jvp(f, xs, tangents)[1]  # noqa: E731
            count += _check(g, args, order - 1, modes, _name("JVP", label), tol, rng)
        if "rev" in modes:
            g = lambda *xs: _flat(dualad.vjp(f, *xs)[1](u))  # noqa: E731
            count += _check(g, args, order - 1, modes, _name("VJP", label), tol, rng)
    return count


def _name(check, label):
    return f"{check} of {label}" if label else check

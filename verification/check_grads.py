"""``check_grads``: derivatives of a function against numeric oracles, to any order.

For each argument i, with fixed-seed random directions v (tangent) and u
(cotangent):

- JVP:  the AD tangent J_i v against a Richardson-extrapolated central
  difference of f along v;
- VJP:  the dot-product test ⟨u, J_i v⟩ = ⟨J_iᵀ u, v⟩, the left side from the
  numeric directional derivative, the right from the AD cotangent.

``order=2`` repeats both checks on the functions (x, v) ↦ J(x) v ("JVP") and
(x, u) ↦ J(x)ᵀ u ("VJP"), so the checks are named "JVP of JVP", "VJP of JVP", …
(as autograd's checker does: differentiating the VJP with respect to its cotangent
is what exercises the rules of the helpers a VJP rule calls).

The numeric side is a Richardson table of central differences; where it disagrees
it is retried from smaller steps (:data:`STEPS`) before a failure is declared, so a
step that straddles a kink or a tie is not reported as a wrong derivative. Empty
arguments and outputs have empty Jacobians: only the shapes are checked.
A failure raises :class:`GradCheckError` naming the exact check and, for small
inputs, showing the numerical and analytical Jacobians side by side.

Complex arguments and outputs are R²: their directions v and u are complex,
the difference along v is the R-linear derivative, and the dot-product test
uses the pairing cotangents have (JAX's): ⟨u, J v⟩ = Re Σ u·(J v), no
conjugation. So non-holomorphic functions (abs, real, conj) are checked too.
"""
from __future__ import annotations

__all__ = ["TOLERANCES", "GradCheckError", "check_grads", "STEPS"]

from typing import TYPE_CHECKING, Any

import numpy as np

import dualad
from dualad.extend import check_input, flatten, primal_value
from dualad.numpy import concatenate, ravel

from .numeric import real_directions, real_jacobian, richardson, realify

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# (rtol, atol) by dtype of the inputs; numeric oracles always run in float64.
TOLERANCES = {
    np.dtype(np.float64): (1e-5, 1e-6),
    np.dtype(np.float32): (2e-3, 2e-3),
    np.dtype(np.complex128): (1e-5, 1e-6),
    np.dtype(np.complex64): (2e-3, 2e-3),
}


class GradCheckError(AssertionError):
    """A derivative disagreed with its oracle.

    Raised by :func:`check_grads` and :meth:`RuleReport.raise_if_failed`. The message names
    the exact check ("VJP of JVP, argument 1"), the error against the tolerance and, for
    inputs of at most 12 elements, prints the numerical and analytical Jacobians side by
    side. A subclass of ``AssertionError``, so a failed check fails a test. ``abs_err``
    and ``rel_err`` are the failing comparison's own figures (``None`` when the check
    compares shapes, not numbers).
    """

    abs_err: float | None
    rel_err: float | None

    def __init__(self, message: str, abs_err: float | None = None,
                 rel_err: float | None = None) -> None:
        super().__init__(message)
        self.abs_err, self.rel_err = abs_err, rel_err


def _flat(out):
    leaves = [ravel(o) for o in dualad.tree.leaves(out)]
    return leaves[0] if len(leaves) == 1 else concatenate(leaves)


class CheckGradsTypeError(TypeError):
    """check_grads' refusal of a function that returned None (the message names
    check_grads and the function)."""


def _flat_fn(f, api):
    def flat(*xs):
        out = f(*xs)
        if out is None:
            raise CheckGradsTypeError(f"{api}: the function returned None; it must return an "
                                      f"array or a container of arrays (did it forget to "
                                      f"`return`?)")
        return _flat(out)
    return flat


def _leaf_paths(tree):
    """The index path of each leaf of ``flatten(tree)``, in its order: ``[0][1]``,
    ``[1]['w']``, ``.layers[1].w`` (fields of named tuples and registered dataclasses)."""
    return [p for p, _ in dualad.tree.leaves_with_path(tree)]


def _with(args, i, xi):
    return args[:i] + (xi,) + args[i + 1:]


def _close(a, b, rtol, atol):
    a, b = np.asarray(a, dtype=complex), np.asarray(b, dtype=complex)
    err = np.abs(a - b)
    return bool(np.all(err <= atol + rtol * np.abs(b))), float(np.max(err, initial=0.0))


def _side_by_side(f, args, i, mode):
    """The numerical Jacobian next to the analytical one of the failing ``mode`` (the
    forward one from a batch of basis tangents, the reverse one from a batch of basis
    cotangents): each part printed if it can be computed, so a rule missing in the other
    mode never hides the report."""
    x = np.asarray(args[i])
    fi = lambda xi: f(*_with(args, i, xi))  # noqa: E731
    parts = []
    with np.printoptions(precision=6, suppress=True, linewidth=120):
        try:
            num = real_jacobian(lambda xi: np.asarray(primal_value(fi(xi))), x)
            parts.append(f"numerical Jacobian (central differences){_note(x, num)}:\n{num}")
        except Exception as e:  # noqa: BLE001 - the report prints what it can
            parts.append(f"numerical Jacobian: could not be computed ({type(e).__name__}: {e})")
        try:
            ana = _forward_jacobian(fi, x) if mode == "fwd" else _reverse_jacobian(fi, x)
            how = "forward mode" if mode == "fwd" else "reverse mode"
            parts.append(f"analytical Jacobian ({how}){_note(x, ana)}:\n{ana}")
        except Exception as e:  # noqa: BLE001
            parts.append(f"analytical Jacobian: could not be computed ({type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''})")
    return "\n" + "\n".join(parts)


def _note(x, jac):
    return " (complex as R²: [Re, Im] coordinates)" if np.iscomplexobj(x) or \
        np.iscomplexobj(jac) else ""


def _forward_jacobian(fi, x):
    _, ana = dualad.jvp(fi, (x,), (real_directions(x),))
    return np.stack([realify(t) for t in np.asarray(ana)], axis=1)


def _reverse_jacobian(fi, x):
    """Rows of the realified Jacobian from cotangents e_k (and −i·e_k for the imaginary
    parts of a complex output), read through the pairing v ↦ Re Σ g·v."""
    out, pullback = dualad.vjp(fi, x)
    m = int(np.size(out))
    eye = np.eye(m).reshape((m,) + np.shape(out))
    cts = np.concatenate([eye, -1j * eye]) if np.iscomplexobj(out) else eye
    (rows,) = pullback(cts)
    rows = np.asarray(rows).reshape(len(cts), -1)
    return np.concatenate([rows.real, -rows.imag], axis=1) if np.iscomplexobj(x) else rows.real


def _direction(shape, like, rng):
    """A fixed-seed random direction of ``like``'s kind (complex directions for complex)."""
    v = rng.standard_normal(shape)
    dtype = np.result_type(like)
    if dtype.kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def check_grads(f: Callable[..., Any], args: Any, order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, seed: int = 0) -> int:
    r"""Check ``f``'s JVPs and VJPs at ``args`` against numeric oracles, to any order.

    For each argument ``i``, with fixed-seed random directions ``v`` (a tangent) and ``u``
    (a cotangent): the JVP :math:`J_i v` is compared with a Richardson-extrapolated central
    difference of ``f`` along ``v``; the VJP by the dot-product test
    :math:`\langle u, J_i v\rangle = \langle J_i^\top u, v\rangle`, the left side numeric,
    the right from the AD cotangent. ``order=2`` repeats both checks on the derivative maps
    themselves, :math:`(x, v) \mapsto J(x) v` and :math:`(x, u) \mapsto J(x)^\top u`
    ("JVP of JVP", "VJP of JVP", "JVP of VJP", "VJP of VJP"), which exercises the rules'
    own derivatives; higher orders recurse. A numeric estimate that disagrees is retried
    from smaller steps (``1e-2``, ``1e-4``, ``1e-6`` times ``max(1, |x|)``) before a
    failure is declared, so a step across a kink is not reported as a wrong derivative.
    Complex arguments and outputs are treated as :math:`\mathbb{R}^2`, with the pairing
    :math:`\langle u, w\rangle = \mathrm{Re}\sum u \cdot w` (no conjugation), so
    non-holomorphic functions are checked too.

    Parameters
    ----------
    f : callable
        The function, ``f(*args)``, returning an array or a tuple of arrays.
    args : array_like or tuple
        One argument, or a tuple of them; every one is differentiated. An argument may
        be a list, tuple or dict of arrays (a pytree, as ``dualad.grad`` takes it):
        each leaf is checked as an argument of its own, and a failure names it
        (``args[1]['w']``). A list is a container, not an array: write
        ``np.array([...])`` for an array.
    order : int, optional
        The highest order checked (default 2).
    modes : sequence of {"fwd", "rev"}, optional
        Which modes to check (default both).
    atol, rtol : float, optional
        Tolerances. Default by the inputs' dtype: ``(rtol, atol) = (1e-5, 1e-6)`` for
        float64 and complex128, ``(2e-3, 2e-3)`` for float32 and complex64; the numeric
        estimate's own error estimate (times 10) widens ``atol`` where it is larger.
    seed : int, optional
        Seed of the random directions (default 0).

    Returns
    -------
    int
        The number of checks run.

    Raises
    ------
    GradCheckError
        At the first check that fails, naming it.
    TypeError
        An argument is ``None``, or not floating-point or complex (the check ``grad``
        makes, :func:`dualad.extend.check_input`), or ``f`` returned ``None``.
    ValueError
        ``modes`` holds something other than ``"fwd"`` and ``"rev"``.

    See Also
    --------
    check_rule : The rule checker for one primitive (value, JVP, VJP, order 2, SymPy,
        vmap, jit).
    richardson, taylor_test : The numeric oracles.

    Notes
    -----
    The dot-product test is the standard check of an adjoint [1]_; the recursion to higher
    orders follows autograd's checker.

    References
    ----------
    .. [1] A. Griewank and A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM, 2008,
       section 3.3.

    Examples
    --------
    >>> from dualad.verification import check_grads
    >>> check_grads(lambda x: np.sin(x) * x, np.array([0.3, -1.2]))
    10
    >>> check_grads(lambda x, y: x * y, (np.array([1.0, 2.0]), np.array([3.0, 4.0])), order=1)
    4

    A wrong rule is caught and named:

    >>> @dualad.primitive
    ... def sine(x):
    ...     return np.sin(x)
    >>> _ = sine.defjvp(lambda g, ans, x: g * np.cos(x) * 1.001)     # 0.1% off
    >>> _ = sine.defvjp(lambda g, ans, x: g * np.cos(x))
    >>> check_grads(sine, np.array([0.3, 1.0]), order=1)
    Traceback (most recent call last):
        ...
    dualad.verification.check_grads.GradCheckError: JVP, argument 0: max error ...
    """
    args = args if isinstance(args, tuple) else (args,)
    api = f"check_grads({getattr(f, '__name__', type(f).__name__)}, ...)"
    if all(dualad.tree.is_leaf(a) for a in args):
        for i, a in enumerate(args):     # grad's check: None, integers, text are refused
            check_input(api, i, a)
        return _check_arrays(f, api, tuple(np.asarray(a) for a in args), order, modes, atol,
                             rtol, seed)
    # containers: check f as a function of its leaves, and name them on failure
    leaves, rebuild = flatten(args)
    if not leaves:
        raise ValueError("check_grads: the arguments hold no arrays (empty containers); "
                         "give at least one array to differentiate")
    paths = [(i, p) for i, a in enumerate(args) for p in _leaf_paths(a)]   # flatten's order
    for leaf, (i, p) in zip(leaves, paths):
        check_input(api, i, leaf, p)
    try:
        return _check_arrays(lambda *xs: f(*rebuild(xs)), api,
                             tuple(np.asarray(x) for x in leaves), order, modes, atol, rtol,
                             seed)
    except GradCheckError as e:
        names = ", ".join(f"argument {k} is args[{i}]{p}" for k, (i, p) in enumerate(paths))
        raise GradCheckError(f"{e}\n(the arguments are the leaves of the containers "
                             f"given: {names})", e.abs_err, e.rel_err) from None
    except CheckGradsTypeError:
        raise
    except TypeError as e:   # e.g. list * 2 in an f that expected an array
        kinds = ", ".join(f"args[{i}] is a {type(a).__name__}" for i, a in enumerate(args)
                          if not dualad.tree.is_leaf(a))
        e.add_note(f"check_grads passed its containers to f as containers, as grad takes "
                   f"them ({kinds}); if f expects an array, pass np.array(...)")
        raise


def _check_arrays(f, api, args, order, modes, atol, rtol, seed):
    """check_grads of ``f`` at ``args``, a tuple of floating or complex arrays."""
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got {m!r}")
    dtype = np.result_type(*args)
    d_rtol, d_atol = TOLERANCES.get(np.dtype(dtype), TOLERANCES[np.dtype(np.float64)])
    tol = (d_rtol if rtol is None else rtol, d_atol if atol is None else atol)
    rng = np.random.default_rng(seed)
    return _check(_flat_fn(f, api), args, order, modes, "", tol, rng)


# Starting steps of the Richardson tables, relative to max(1, |x|): the first (accurate
# for smooth functions, the table cancelling its h², h⁴, ... terms) is tried first; the
# smaller ones only when the comparison fails, since a step that straddles a kink or a
# tie (np.sort of two values 1e-4 apart, abs near 0) measures a derivative x does not
# have. A check fails only if no step agrees: a false alarm misleads as much as a miss.
STEPS = (1e-2, 1e-4, 1e-6)


class _Numeric:
    """Richardson-extrapolated ``J v`` of ``f`` at ``x``, from each of :data:`STEPS`, made
    on demand. An estimate whose own error estimate is large against its size (a table
    across a kink) is not used to pass a check."""

    def __init__(self, f, x, v):
        self.f, self.x, self.v = f, x, v
        self.cache = {}

    def __iter__(self):
        for k, h in enumerate(STEPS):
            if k not in self.cache:
                scale = max(1.0, float(np.max(np.abs(self.x))))
                self.cache[k] = richardson(self.f, self.x, self.v, h=h * scale,
                                           levels=4 if k == 0 else 2)
            num, err = self.cache[k]
            if k < len(STEPS) - 1 and err > 1e-3 * max(1.0, float(np.max(np.abs(num)))):
                continue
            yield num, err


def _check(f, args, order, modes, label, tol, rng):
    count = 0
    out = np.asarray(primal_value(f(*args)))
    tangents = tuple(_direction(np.shape(a), a, rng) for a in args)
    u = _direction(out.shape, np.result_type(out, float).type(0), rng)
    rtol, atol0 = tol
    for i, x in enumerate(args):
        v = tangents[i]
        fi = lambda xi, i=i: f(*_with(args, i, xi))  # noqa: E731
        if np.size(x) == 0 or out.size == 0:
            count += _check_empty(fi, x, out, u, modes, label, i)
            continue
        f64 = lambda xi, i=i: np.asarray(f(*_with(tuple(  # noqa: E731
            np.asarray(a, dtype=np.result_type(a, np.float64)) for a in args), i, xi)))
        numeric = _Numeric(f64, np.asarray(x, dtype=np.result_type(x, np.float64)), v)
        if "fwd" in modes:
            _, t = dualad.jvp(fi, (x,), (v,))
            ok, err, atol = _against(numeric, lambda num, a: _close(t, num, rtol, a), atol0)
            count += 1
            if not ok:
                raise GradCheckError(f"{_name('JVP', label)}, argument {i}: max error {err:.3e} "
                                     f"(rtol {rtol}, atol {atol:.1e})" +
                                     (_side_by_side(f, args, i, "fwd") if np.size(x) <= 12
                                      else ""),
                                     err, err / max(1.0, float(np.max(np.abs(t), initial=0))))
        if "rev" in modes:
            _, pullback = dualad.vjp(fi, x)
            (ct,) = pullback(u)
            # ⟨a, b⟩ = Re Σ a·b: cotangents are transposes, not conjugate transposes.
            rhs = np.real(np.sum(np.asarray(ct) * v))
            lhs = None

            def dot_test(num, a):
                nonlocal lhs
                lhs = np.real(np.sum(u * num))
                return _close(rhs, lhs, rtol, a * max(1.0, np.sqrt(u.size)))
            ok, err, atol = _against(numeric, dot_test, atol0)
            count += 1
            if not ok:
                raise GradCheckError(f"{_name('VJP', label)}, argument {i}: dot-product test "
                                     f"<u, J v> = {lhs:.10g} but <J^T u, v> = {rhs:.10g}" +
                                     (_side_by_side(f, args, i, "rev") if np.size(x) <= 12
                                      else ""),
                                     abs(lhs - rhs), abs(lhs - rhs) / max(1.0, abs(lhs)))
    if order > 1:
        # The derivative maps are checked as functions of everything they take: the JVP
        # of (x, v) and the VJP of (x, u). A rule's own rules (the helpers a VJP calls,
        # differentiated with respect to the cotangent) are exercised only so.
        n = len(args)
        if "fwd" in modes:
            g = lambda *xv: dualad.jvp(f, xv[:n], xv[n:])[1]  # noqa: E731
            count += _check(g, args + tangents, order - 1, modes, _name("JVP", label), tol, rng)
        if "rev" in modes:
            g = lambda *xu: _flat(dualad.vjp(f, *xu[:n])[1](xu[n]))  # noqa: E731
            count += _check(g, args + (u,), order - 1, modes, _name("VJP", label), tol, rng)
    return count


def _against(numeric, compare, atol):
    """Compare with each numeric estimate in turn until one agrees: (ok, error, atol) of
    the agreeing one, or of the first if none does."""
    first = None
    for num, err_est in numeric:
        a = max(atol, 10 * err_est)
        ok, err = compare(num, a)
        if ok:
            return True, err, a
        if first is None:
            first = (False, err, a)
    return first if first is not None else (False, float("nan"), atol)


def _check_empty(fi, x, out, u, modes, label, i):
    """An empty argument or output: the Jacobian has no entries, so only the shapes of the
    tangent and the cotangent can be wrong."""
    count = 0
    if "fwd" in modes:
        _, t = dualad.jvp(fi, (x,), (np.zeros_like(x),))
        count += 1
        if np.shape(t) != out.shape:
            raise GradCheckError(f"{_name('JVP', label)}, argument {i}: tangent of shape "
                                 f"{np.shape(t)} for an output of shape {out.shape}")
    if "rev" in modes:
        _, pullback = dualad.vjp(fi, x)
        (ct,) = pullback(u)
        count += 1
        if np.shape(ct) != np.shape(x):
            raise GradCheckError(f"{_name('VJP', label)}, argument {i}: cotangent of shape "
                                 f"{np.shape(ct)} for an argument of shape {np.shape(x)}")
    return count


def _name(check, label):
    return f"{check} of {label}" if label else check

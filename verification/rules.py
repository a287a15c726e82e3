"""The rule checker: is a hand-written derivative rule right?

``check_rule(target)`` takes a registered primitive, a user's ``@primitive``
with ``defjvp``/``defvjp``, an ``autograd.Function`` subclass, or a
``dualad.custom_jvp``/``custom_vjp`` function, and checks at each sample call (the primitive's ``samples``, or broadcasting shape sweeps
inside its ``domain`` for elementwise ones, or the ``args`` you pass):

- value: the traced call gives the same primal as the plain call;
- tangents: each input's JVP (vector mode, every basis direction in one
  sweep, and a single direction) against central differences;
- cotangents: each input's VJP (a batch of basis cotangents in one sweep,
  and a single cotangent) against central differences;
- consistency: the JVP and VJP Jacobians agree with each other;
- order 2: ``check_grads`` on the call to second order (JVP of JVP, VJP of
  JVP, JVP of VJP, VJP of VJP), which exercises the rules' own derivatives;
- SymPy: where the primitive has a SymPy translation, the derivative built by
  the rules on symbolic values against ``sympy.diff``;
- vmap: the batching rule against a Python loop over examples, and its JVP and VJP
  (``verification.batching``); a primitive vmap computes by a loop is listed as
  looped (``RegistryReport.looped``), not failed;
- jit: ``jit(f)``, ``jit(jvp(f))``, ``jit(vjp(f))``, ``jvp(jit(f))``, ``vjp(jit(f))`` at a
  second point against the un-jitted calls, each traced once over both points
  (``verification.jit``; the primitives that legitimately trace again are listed there).

Complex arguments and outputs are checked as R² (``verification.numeric``'s
``real_jacobian``): the Jacobians compared are those of the realified map, the
VJP's rows read through the pairing ⟨u, v⟩ = Re Σ u·v (JAX's convention), and
tangents of real outputs and cotangents of real inputs must be real. An
elementwise primitive with a ``complex_domain`` is also swept over complex
arguments there; a primitive marked ``holomorphic`` must have a complex-linear
JVP that matches the complex difference (D_{iv}f = i·D_v f, Cauchy–Riemann),
and on real arguments its JVP must match the complex step Im f(x + ihv)/h.

Zero-derivative primitives are checked to pass traced values through with a
zero derivative. ``check_registry()`` runs all of it over every registered
primitive and returns a table.
"""
from __future__ import annotations

__all__ = ["ELEMENTWISE_SHAPES", "COMPLEX_SHAPES", "Row", "RuleReport", "default_samples",
           "check_rule", "RegistryReport", "check_registry"]

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

import dualad
from dualad.extend import REGISTRY, Primitive, flatten, primal_value

from .batching import check_batching, vmap_kind
from .jit import check_jit, jit_kind
from .check_grads import GradCheckError, check_grads
from .sampling import (directions, fill_arguments, matrix_samples, signature_arity,
                       signature_sample)
from .stopped import check_stopped
from .taylor_checks import check_constant_series, check_taylor_sample
from .numeric import central_difference, complex_step, real_directions, real_jacobian, realify

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

ELEMENTWISE_SHAPES = {
    1: [((),), ((3,),), ((2, 3),), ((1, 3),)],
    2: [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((1, 3), (2, 3)), ((3,), ())],
    3: [((), (), ()), ((3,), (3,), (3,)), ((2, 3), (3,), (1, 3))],
}
# Complex sweeps of holomorphic elementwise primitives: fewer shapes (the real sweep
# already covers broadcasting), a scalar and a broadcast pair.
COMPLEX_SHAPES = {
    1: [((),), ((2, 3),)],
    2: [((), ()), ((2, 3), (3,))],
    3: [((3,), (3,), (3,))],
}


@dataclass
class Row:
    check: str
    ok: bool
    abs_err: float = 0.0
    rel_err: float = 0.0
    detail: str = ""


@dataclass
class RuleReport:
    """The checks run on one primitive or Function, and their verdicts.

    Returned by :func:`check_rule`: one :class:`~dualad.verification.rules.Row` per check
    (its name, whether it passed, the absolute and relative errors, a detail), notes on
    what was not checked and why, and how ``vmap`` and ``jit`` handle the primitive.
    ``str(report)`` lists the failures; :meth:`raise_if_failed` turns them into a
    :class:`GradCheckError`.

    Parameters
    ----------
    name : str
        The primitive's (or Function's) name.
    rows : list of Row, optional
        The checks and their verdicts.
    notes : list of str, optional
        What was (not) checked, and why.
    vmap : str, optional
        How ``dualad.vmap`` batches it: ``"rule"``, ``"derived"`` or ``"loop"``.
    jit : str, optional
        Whether ``dualad.jit`` replays it at a new point or traces it again.
    unchecked : str, optional
        Why no check could run (no sample could be drawn); such a report is not ``ok``
        but has no failure either: the command line's exit status 2, not 1.

    See Also
    --------
    check_rule : Makes the report.
    RegistryReport : The reports of every registered primitive.

    Examples
    --------
    >>> from dualad.verification import check_rule
    >>> report = check_rule(dualad.extend.REGISTRY["sin"], order=1, sympy=False, vmap=False,
    ...                     jit=False)
    >>> report.ok, len(report.failures)
    (True, 0)
    >>> print(report)
    sin: ok (... checks)
    """
    name: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # what was (not) checked, and why
    vmap: str = ""   # how vmap batches it: rule / derived / loop (verification.batching)
    jit: str = ""    # replays / re-traces (verification.jit)
    unchecked: str = ""   # why nothing could be checked (no sample drawn): not a failure


    @property
    def ok(self) -> bool:
        """Whether at least one check ran and every check passed.

        """
        return bool(self.rows) and all(r.ok for r in self.rows)

    @property
    def failures(self) -> list[Row]:
        """The rows of the checks that failed.

        """
        return [r for r in self.rows if not r.ok]

    def add(self, check: str, ok: bool, abs_err: float = 0.0, rel_err: float = 0.0,
            detail: str = "") -> None:
        """Record one check's outcome as a row of the report.

        Parameters
        ----------
        check : str
            What was checked, e.g. ``"jvp vs finite differences, shape (3,)"``.
        ok : bool
            Whether it passed.
        abs_err, rel_err : float, optional
            The absolute and relative error measured.
        detail : str, optional
            Shown beside a failure: the inputs, the two values compared.

        Returns
        -------
        bool
            ``ok``, so that a checker can write ``if not report.add(...): ...``.
        """
        self.rows.append(Row(check, bool(ok), float(abs_err), float(rel_err), detail))
        return ok

    def max_errors(self) -> tuple[float, float]:
        """The largest absolute and relative errors over all checks.

        Returns
        -------
        tuple of float
            ``(max absolute error, max relative error)``; ``(0.0, 0.0)`` without checks.
        """
        return (max((r.abs_err for r in self.rows), default=0.0),
                max((r.rel_err for r in self.rows), default=0.0))

    def __str__(self) -> str:
        if self.unchecked and not self.rows:
            return "\n".join([f"{self.name}: COULD NOT CHECK"] + [
                f"  note: {n}" for n in dict.fromkeys(self.notes)] + [f"  {self.unchecked}"])
        lines = [f"{self.name}: {'ok' if self.ok else 'FAILED'} ({len(self.rows)} checks)"]
        lines += [f"  note: {n}" for n in dict.fromkeys(self.notes)]
        for r in self.rows:
            if not r.ok:
                # the failing comparison's own figures; a check with none (a shape, a
                # crash) shows its detail only, never a 0 that belongs to no comparison
                figures = (f": abs {r.abs_err:.2e}, rel {r.rel_err:.2e}"
                           if r.abs_err or r.rel_err else "")
                lines.append(f"  FAILED {r.check}{figures}"
                             + (f"\n    {r.detail}" if r.detail else ""))
        if not self.rows:
            lines.append("  no checks could be run (no samples or domain declared)")
        return "\n".join(lines)

    def raise_if_failed(self) -> RuleReport:
        """Raise :class:`GradCheckError` if a check failed; else return the report.

        Returns
        -------
        RuleReport
            This report, when every check passed (so calls chain).

        Raises
        ------
        GradCheckError
            With ``str(self)``, listing every failed check.
        """
        if not self.ok:
            raise GradCheckError(str(self))
        return self


def _resolve(target):
    """(primitive, callable, name) for a Primitive, a Function subclass or a
    ``dualad.custom_jvp``/``custom_vjp`` function (checked through its call: the
    primitive it is made of takes the flattened leaves)."""
    if isinstance(target, Primitive):
        return target, target, target.name
    if isinstance(target, (dualad.custom_jvp, dualad.custom_vjp)):
        return target._prim, target, target.name
    if isinstance(target, type) and issubclass(target, dualad.Function):
        prim = target._primitive()
        return prim, target.apply, target.__name__
    raise TypeError(f"check_rule: expected a dualad primitive, an autograd.Function "
                    f"subclass or a custom_jvp/custom_vjp function, got "
                    f"{type(target).__name__} {target!r}")


def _custom_nondiff(target, nargs):
    """The nondiff argument positions of a custom_jvp/custom_vjp ``target``, for a call
    with ``nargs`` positional arguments."""
    return {i % nargs for i in target.nondiff_argnums} if nargs else set()


def _check_custom_primal(report, target, vals, kw, tag):
    """The primal output of a custom function's rule (the JVP rule's ``primal_out`` at
    zero tangents, ``fwd``'s first result) against the function's own value."""
    if isinstance(target, dualad.custom_jvp) and target.jvp is not None:
        nd = _custom_nondiff(target, len(vals))
        primals = tuple(v for i, v in enumerate(vals) if i not in nd)
        zeros = tuple(np.zeros_like(v, dtype=float) if _is_diff_value(v) else v
                      for v in primals)
        got = target.jvp(*(vals[i] for i in sorted(nd)), primals, zeros)[0]
        what = "the JVP rule's primal output"
    elif isinstance(target, dualad.custom_vjp) and target.fwd is not None:
        got = target.fwd(*vals, **kw)[0]
        what = "fwd's primal output"
    else:
        return
    want = target.fun(*vals, **kw)
    a, r = _rel(np.concatenate([np.ravel(v) for v in flatten(got)[0]]),
                np.concatenate([np.ravel(v) for v in flatten(want)[0]]))
    report.add(f"{tag}: {what} equals the function's value", r <= 1e-12, a, r)


def _interval(dom):
    lo, hi = (-np.inf, np.inf) if dom is None else dom
    a = max(lo, -2.0)
    b = min(hi, max(a + 1.0, 2.0))
    return a, b


def _draw(shape, dom, rng):
    a, b = _interval(dom)
    return rng.uniform(a, b, size=shape) if shape != () else np.float64(rng.uniform(a, b))


def _draw_complex(shape, rect, rng):
    """Uniform in the rectangle ``((re_lo, re_hi), (im_lo, im_hi))``."""
    (a, b), (c, d) = rect if rect is not None else ((-1.5, 1.5), (-1.5, 1.5))
    z = rng.uniform(a, b, size=shape) + 1j * rng.uniform(c, d, size=shape)
    return z if shape != () else np.complex128(z)


def _is_diff_value(a):
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def default_samples(prim, target=None):
    """Samples for ``prim``: its own (or its Function class's), or broadcasting sweeps
    for elementwise ones."""
    samples = prim.samples or getattr(target, "samples", None)
    if samples:
        return list(samples)
    derivs = prim.derivs
    n = len(derivs) if derivs is not None else None
    if n in ELEMENTWISE_SHAPES:
        dom = prim.domain
        out = [{"args": shapes, "params": {}, "domain": dom} for shapes in ELEMENTWISE_SHAPES[n]]
        cdom = prim.complex_domain
        if cdom is not None:
            out += [{"args": shapes, "params": {}, "domain": None, "complex_domain": cdom}
                    for shapes in COMPLEX_SHAPES[n]]
        return out
    # Nothing declared: standard normals at broadcasting shapes, as many arguments as the
    # forward takes (check_rule skips the shapes the forward refuses, and redraws inside
    # the forward's domain where it gives nan/inf).
    n = signature_arity(prim, target)
    shapes = ELEMENTWISE_SHAPES.get(n, [((3,),) * n, ((2, 3),) * n])
    return [{"args": sh, "params": {}, "domain": None, "signature": True} for sh in shapes]


def _materialize(sample, rng, nondiff):
    args, diff = [], []
    dom = sample.get("domain") or [None] * len(sample["args"])
    cdom = sample.get("complex_domain")
    for i, a in enumerate(sample["args"]):
        if isinstance(a, tuple) and all(isinstance(s, int) for s in a):
            if cdom is not None and i not in nondiff:
                args.append(_draw_complex(a, cdom[i] if i < len(cdom) else None, rng))
            else:
                args.append(_draw(a, dom[i] if i < len(dom) else None, rng))
            if i not in nondiff:
                diff.append(i)
        else:
            args.append(a)
            # A concrete floating array (e.g. a well-conditioned matrix) is differentiable too.
            if _is_diff_value(a) and i not in nondiff:
                diff.append(i)
    return args, diff


def _rel(a, b):
    err = np.abs(np.asarray(a) - np.asarray(b))
    scale = np.maximum(np.abs(np.asarray(b)), 1.0)
    return float(np.max(err, initial=0.0)), float(np.max(err / scale, initial=0.0))


def check_rule(target: Primitive | type | dualad.custom_jvp[Any, Any] |
               dualad.custom_vjp[Any, Any], samples: list[dict[str, Any]] | None = None, *,
               args: tuple[Any, ...] | None = None, params: dict[str, Any] | None = None,
               order: int = 2, sympy: bool = True, seed: int = 0, rtol: float = 1e-6,
               reference: Callable[..., Any] | None = None, vmap: bool = True,
               only_vmap: bool = False, vmap_derivatives: bool = True, jit: bool = True,
               only_jit: bool = False, taylor: bool = True, only_taylor: bool = False,
               taylor_order: int | None = None) -> RuleReport:
    r"""Check a primitive's (or a ``Function``'s) derivative rules; return a :class:`RuleReport`.

    At each sample call (the primitive's ``samples``; for elementwise primitives,
    broadcasting shape sweeps ``()``, ``(3,)``, ``(2, 3)``, ``(1, 3)`` and mixed shapes
    inside its ``domain``; or the ``args`` given) it checks:

    - the value: the traced call's primal equals the plain call's (and ``reference``'s);
    - tangents: each input's JVP, in vector mode over every basis direction in one sweep
      and for one direction, against central differences;
    - cotangents: each input's VJP, a batch of basis cotangents in one sweep and a single
      cotangent, against central differences;
    - consistency: the JVP and VJP Jacobians agree;
    - order 2: :func:`check_grads` on the call to second order (JVP of JVP, VJP of JVP,
      JVP of VJP, VJP of VJP), which exercises the rules' own derivatives;
    - SymPy: where the primitive has a SymPy translation, the derivative the rules build on
      symbols against ``sympy.diff``;
    - vmap: the batching rule against a loop over examples, with its JVP and VJP;
    - jit: ``jit(f)``, ``jit(jvp(f))``, ``jit(vjp(f))``, ``jvp(jit(f))``, ``vjp(jit(f))``
      at a second point against the un-jitted calls.

    Complex arguments and outputs are checked as :math:`\mathbb{R}^2`; a ``holomorphic``
    primitive must also satisfy :math:`D_{iv} f = i D_v f` and match the complex step.
    A primitive with a JVP rule only (or a VJP rule only) is checked in that mode, and the
    report notes it.

    Parameters
    ----------
    target : Primitive or type or dualad.custom_jvp or dualad.custom_vjp
        A registered primitive (``dualad.extend.REGISTRY[name]``), a ``@dualad.primitive``
        with ``defjvp``/``defvjp``/``defderiv`` rules, a ``dualad.autograd.Function``
        subclass, or a ``dualad.custom_jvp``/``custom_vjp`` function (checked through its
        calls, its differentiable arguments arrays; ``args=`` gives a sample, the
        ``nondiff_argnums`` ones in place). For these the rule's primal output (the JVP
        rule's at zero tangents, ``fwd``'s) is also checked against the function's value,
        and a ``custom_vjp`` is checked in reverse mode only.
    samples : list of dict, optional
        :func:`dualad.extend.sample` dicts to check at, instead of the primitive's own.
    args : tuple, optional
        One sample given directly: example arguments (arrays for the differentiable
        ones).
    params : dict, optional
        Keyword parameters for the ``args`` sample.
    order : int, optional
        The highest order checked (default 2).
    sympy : bool, optional
        Run the SymPy oracle where the primitive has a translation (default True).
    seed : int, optional
        Seed of the random samples and directions (default 0).
    rtol : float, optional
        Relative tolerance of the comparisons with central differences (default 1e-6).
    reference : callable, optional
        An independent implementation, ``reference(*args, **params)``, the primal value
        must match.
    vmap : bool, optional
        Also check the batching rule (default True).
    only_vmap : bool, optional
        Only the batching check (the derivative rules' checks skipped).
    vmap_derivatives : bool, optional
        Check the JVP and VJP of the batched call too (default True).
    jit : bool, optional
        Also check the primitive under ``dualad.jit`` (default True).
    only_jit : bool, optional
        Only the jit check.
    taylor : bool, optional
        Also check Taylor mode (default True, for a primitive with a JVP rule): its
        coefficients along a random line against nested forward mode and SymPy
        (:mod:`dualad.verification.taylor`).
    only_taylor : bool, optional
        Only the Taylor check (:func:`~dualad.verification.taylor.check_taylor`).
    taylor_order : int, optional
        The order the Taylor check compares with SymPy (default 6 elementwise, 3 otherwise).

    Returns
    -------
    RuleReport
        Every check and its verdict; ``report.ok`` is the overall verdict.

    See Also
    --------
    check_registry : Every registered primitive.
    check_grads : The function-level check.
    dualad.verification.symbolic : The SymPy oracle.

    Notes
    -----
    The checker does not raise on a failed check (a crash in a rule is a failed check,
    too): call ``report.raise_if_failed()`` in a test. Central differences use the step
    that balances truncation and rounding, so ``rtol`` bounds their disagreement with an
    exact rule with room to spare; a rule that is off by 0.1% fails.

    Examples
    --------
    >>> from dualad.verification import check_rule
    >>> @dualad.primitive
    ... def softplus(x):
    ...     return np.logaddexp(0.0, x)
    >>> _ = softplus.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-x)))
    >>> print(check_rule(softplus))
    softplus: ok (... checks)

    A derivative that is 0.1% off fails, naming the checks:

    >>> @dualad.primitive
    ... def softplus_typo(x):
    ...     return np.logaddexp(0.0, x)
    >>> _ = softplus_typo.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-1.001 * x)))
    >>> report = check_rule(softplus_typo, args=(np.array([0.5, -1.0]),))
    >>> report.ok
    False
    >>> print(report.failures[0].check)
    sample 0 [(2,)]: tangent (JVP) of argument 0
    """
    prim, call, name = _resolve(target)
    report = RuleReport(name, vmap=vmap_kind(prim), jit=jit_kind(prim))
    if report.vmap == "loop":
        report.notes.append("vmap: no batching rule; vmap computes it by a loop over the "
                            "examples (checked against the loop all the same)")
    if args is not None:
        samples = [{"args": tuple(np.shape(a) if _is_diff_value(a) else a for a in args),
                    "params": params or {}, "domain": None, "values": args}]
    samples = default_samples(prim, target) if samples is None else samples
    nondiff = set(prim.nondiff_argnums)
    if isinstance(target, (dualad.custom_jvp, dualad.custom_vjp)):
        nondiff |= _custom_nondiff(target, len(args) if args is not None
                                   else signature_arity(prim, target))
    checks = _SampleChecks(report, prim, call, name, target, nondiff, seed, dict(
        order=order, sympy=sympy, rtol=rtol, reference=reference, vmap=vmap,
        only_vmap=only_vmap, vmap_derivatives=vmap_derivatives, jit=jit, only_jit=only_jit,
        taylor=taylor, only_taylor=only_taylor, taylor_order=taylor_order))
    for k, smp in enumerate(samples):
        if not checks.run(k, smp):
            break
    _signature_fallback(checks, samples, name)
    return report


class _SampleChecks:
    """The checks of :func:`check_rule` at one sample after another, sharing the report,
    the random generator, the SymPy budget (three elementwise samples, one otherwise) and
    the list of signature shapes skipped. ``opts``: check_rule's keyword options."""

    def __init__(self, report, prim, call, name, target, nondiff, seed, opts):
        self.report, self.prim, self.call, self.name = report, prim, call, name
        self.target, self.nondiff, self.seed, self.opts = target, nondiff, seed, opts
        self.rng = np.random.default_rng(seed)
        self.sympy_runs = 0
        self.taylor_sympy_runs = 0
        self.skipped = []

    def run(self, k, smp):
        """Check sample ``k``: its values, the derivative rules (unless only vmap or jit),
        the batching rule, jit, then the SymPy oracle. False stops the checks (the
        primitive has no rule to check); True goes on to the next sample."""
        drawn = self._values(smp)
        if drawn is None:
            return True
        vals, diff = drawn
        kw = dict(smp.get("params", {}))
        modes = self._modes(diff)
        if modes is None:
            return False
        shapes = ", ".join(str(np.shape(vals[i])) + (" complex" if np.iscomplexobj(vals[i])
                                                      else "") for i in diff)
        tag = f"sample {k} [{shapes}]"
        o = self.opts
        only = o["only_vmap"] or o["only_jit"] or o["only_taylor"]   # one check alone
        if not only:
            self._derivatives(vals, diff, kw, tag, modes)
        if o["only_taylor"] or (o["taylor"] and not only):
            self._taylor(k, vals, diff, kw, tag, modes)
        if o["only_vmap"] or (o["vmap"] and not only):
            check_batching(self.report, self.prim, self.call, vals, diff, kw, tag, smp,
                           self.rng, modes=modes if o["vmap_derivatives"] else ())
        if o["only_jit"] or (o["jit"] and not only):
            # its own random numbers: the other checks draw the same values with or without it
            check_jit(self.report, self.prim, self.call, vals, diff, kw, tag, smp,
                      np.random.default_rng([self.seed, k, 19]), modes=modes)
        if not only:
            self._sympy(vals, diff, kw, tag, smp, modes)
        return True

    def _values(self, smp):
        """``(vals, diff)``: the sample's argument values and the indices of the
        differentiable ones; None when a signature sample cannot be drawn (noted in
        ``skipped``)."""
        nondiff = self.nondiff
        if "values" in smp:
            vals = list(smp["values"])
            return vals, [i for i, a in enumerate(vals) if _is_diff_value(a) and i not in nondiff]
        if smp.get("signature"):
            vals, why = signature_sample(smp, self.call, self.rng)
            if vals is None:
                self.skipped.append(f"{', '.join(map(str, smp['args']))}: {why}")
                return None
            return vals, [i for i in range(len(vals)) if i not in nondiff]
        return _materialize(smp, self.rng, nondiff)

    def _modes(self, diff):
        """The modes the rules can be checked in (("fwd", "rev"), one of them, or none for
        a zero derivative), noted in the report; None (a failed check) when arguments
        are differentiable and no mode has a rule."""
        prim, target, report = self.prim, self.target, self.report
        modes = directions(prim, target, diff)
        if isinstance(target, dualad.custom_vjp):
            modes = ("rev",)          # forward mode refuses a custom_vjp, as in JAX
        if not prim.zero_derivative and diff and not modes:
            report.add(f"no checks could be run: {self.name} has no JVP or VJP rule for "
                       f"arguments {diff} (define defjvp/defvjp/defderiv, or a Function's "
                       f"backward)", False)
            return None
        if modes == ("rev",):
            report.notes.append("reverse mode only (no JVP rule): VJPs checked against finite "
                                "differences, to order 2 as VJP of VJP; forward mode not checked")
        elif modes == ("fwd",):
            report.notes.append("forward mode only (no VJP rule): JVPs checked against finite "
                                "differences, to order 2 as JVP of JVP; reverse mode not checked")
        return modes

    def _derivatives(self, vals, diff, kw, tag, modes):
        """The value, JVP, VJP and order-2 checks at one sample (:func:`_check_sample`);
        a crash is a failed check."""
        o = self.opts
        try:
            _check_custom_primal(self.report, self.target, vals, kw, tag)
            _check_sample(self.report, self.prim, self.call, vals, diff, kw, tag, o["order"],
                          o["rtol"], self.rng, o["reference"], modes)
        except Exception as e:  # noqa: BLE001 - any crash is a failed check, reported
            self.report.add(f"{tag}: ran without error", False,
                            detail=f"{type(e).__name__}: {e}")

    def _taylor(self, k, vals, diff, kw, tag, modes):
        """Taylor mode against nested forward mode and SymPy (SymPy on two samples of an elementwise primitive, one otherwise),
        for a primitive with a JVP rule and a derivative (:mod:`.taylor`)."""
        prim = self.prim
        if not diff:
            return
        rng = np.random.default_rng([self.seed, k, 23])
        if prim.zero_derivative or getattr(prim, "stops_gradient", False):
            return check_constant_series(self.report, self.call, vals, diff, kw, tag, rng)
        if "fwd" not in modes:
            return self.report.notes.append("Taylor mode not checked: no JVP rule")
        o = self.opts
        ran = check_taylor_sample(self.report, prim, self.call, vals, diff, kw, tag,
                                  rng, order=o["taylor_order"],
                                  sympy=o["sympy"] and self.taylor_sympy_runs < (
                                      2 if prim.derivs is not None else 1))
        self.taylor_sympy_runs += ran

    def _sympy(self, vals, diff, kw, tag, smp, modes):
        """The SymPy oracle, within its budget, where the primitive has a translation and a
        derivative that is not zero by declaration. It works on real symbols: complex
        samples are left to the other checks."""
        prim = self.prim
        elementwise = prim.derivs is not None
        if self.opts["sympy"] and prim.sympy is not None and not prim.zero_derivative and \
                not getattr(prim, "stops_gradient", False) and (
                self.sympy_runs < (3 if elementwise else 1)) and not any(
                np.iscomplexobj(vals[i]) for i in diff):
            self.sympy_runs += _check_sympy(self.report, prim, self.call, vals, diff, kw, tag,
                                            smp, modes)


def _signature_fallback(checks, samples, name):
    """After the samples: when every broadcasting shape of a signature was refused, retry
    at square matrices (then symmetric positive definite ones), as a rule of logdet, inv
    or cholesky needs; note the shapes skipped, and that nothing was checked if so."""
    report, skipped = checks.report, checks.skipped
    signature = skipped and any(smp.get("signature") for smp in samples)
    if signature and not report.rows:
        square = matrix_samples(len(samples[0]["args"]))
        for k, smp in enumerate(square, start=len(samples)):
            checks.run(k, smp)
        if report.rows:
            report.notes.append("the broadcasting shapes were refused (below), so square "
                                "(and if needed symmetric positive definite) matrices were "
                                "drawn")
    if signature:
        report.notes.append("samples drawn from the signature (standard normals at "
                            "broadcasting shapes); shapes skipped: " + "; ".join(skipped))
        if not report.rows:
            report.unchecked = ("no sample could be drawn: give check_rule(args=...) or set "
                                f"{name}.samples = [dualad.sample(shape, ...)]")


def _check_sample(report, prim, call, vals, diff, kw, tag, order, rtol, rng, reference,
                  modes=("fwd", "rev")):
    plain = call(*vals, **kw)
    if reference is not None:
        a, r = _rel(primal_value(call(*vals, **kw)), reference(*vals, **kw))
        report.add(f"{tag}: value vs reference", r <= 1e-12, a, r)
    if getattr(prim, "stops_gradient", False):   # zero by declaration: verification/stopped.py
        return check_stopped(report, prim, call, vals, diff, kw, tag)
    if prim.zero_derivative:
        for i in diff:
            f = _partial(call, vals, i, kw)
            # The traced call must pass through, its result carrying no derivative.
            g = dualad.grad(lambda x: np.sum(x) * 0.0 + np.sum(np.asarray(
                primal_value(f(x)), dtype=float)))(vals[i])
            report.add(f"{tag}: zero derivative of argument {i}", np.all(g == 0))
        return
    for i in diff:
        _check_argument(report, prim, _partial(call, vals, i, kw), vals[i], i, plain, tag,
                        rtol, rng, modes)
    if order >= 2 and diff:
        _check_order(report, call, vals, diff, kw, tag, order, modes)


def _check_argument(report, prim, f, x, i, plain, tag, rtol, rng, modes):
    """The first-order checks of argument ``i`` (``f``: the call as a function of it
    alone, at ``x``): the traced value; the Jacobian J by vector-mode JVP and by a batched
    VJP against central differences (complex numbers as R², Jacobians of the realified
    map, rows output coordinates, columns input coordinates); J_fwd = J_rev; one random
    direction v (J v) and one random cotangent u (uᵀ J) against those Jacobians; the
    cotangent's shape; complex kinds and holomorphy."""
    fwd, rev = "fwd" in modes, "rev" in modes
    if fwd:
        out, _ = dualad.jvp(f, (x,), (np.zeros_like(x),))
    else:
        out, pullback = dualad.vjp(f, x)
    a, r = _rel(out, plain)
    report.add(f"{tag}: traced value equals plain value", r <= 1e-12, a, r)
    J_num = real_jacobian(f, x)
    t1 = c1 = None
    if fwd:
        _, T = dualad.jvp(f, (x,), (real_directions(x),))             # vector forward mode
        J_fwd = np.stack([_realify_as(t, out) for t in np.asarray(T)], axis=1)
        a, r = _rel(J_fwd, J_num)
        report.add(f"{tag}: tangent (JVP) of argument {i}", r <= rtol * 10 or a <= rtol,
                   a, r)
    if rev:
        _, pullback = dualad.vjp(f, x)
        (C,) = pullback(_real_cotangents(out))                         # batched reverse sweep
        J_rev = np.stack([_cotangent_row(c, x) for c in np.asarray(C)], axis=0)
        a, r = _rel(J_rev, J_num)
        report.add(f"{tag}: cotangent (VJP) of argument {i}", r <= rtol * 10 or a <= rtol,
                   a, r)
    if fwd and rev:
        a, r = _rel(J_fwd, J_rev)
        report.add(f"{tag}: JVP/VJP consistency of argument {i}", r <= 1e-9, a, r)
    if fwd:
        v = _random_like(x, rng)
        _, t1 = dualad.jvp(f, (x,), (v,))
        a, r = _rel(_realify_as(t1, out), J_fwd @ realify(v))
        report.add(f"{tag}: single-direction JVP of argument {i}", r <= 1e-9, a, r)
    if rev:
        u = _random_like(out, rng)
        (c1,) = pullback(u)
        a, r = _rel(_cotangent_row(c1, x), _cotangent_row(u, out) @ J_rev)
        report.add(f"{tag}: single-cotangent VJP of argument {i}", r <= 1e-9, a, r)
        if np.shape(c1) != np.shape(x):
            report.add(f"{tag}: cotangent shape of argument {i}", False,
                       detail=f"{np.shape(c1)} for an input of shape {np.shape(x)}")
    if np.iscomplexobj(x) or np.iscomplexobj(out):
        _check_kinds(report, tag, i, x, out, t1, c1)
    if fwd and prim.holomorphic:
        _check_holomorphic(report, tag, i, f, x, out, t1, v, rtol)


def _check_order(report, call, vals, diff, kw, tag, order, modes):
    """:func:`check_grads` on the call to ``order`` in the modes the rules have (JVP of
    JVP, VJP of JVP, JVP of VJP, VJP of VJP): the rules' own derivatives."""
    g = lambda *xs: call(*fill_arguments(vals, diff, xs), **kw)  # noqa: E731
    names = {"fwd": "JVP", "rev": "VJP"}
    which = "/".join(names[m] for m in modes)
    try:
        n = check_grads(g, tuple(vals[i] for i in diff), order=order, seed=0, modes=modes)
        report.add(f"{tag}: order {order} ({n} checks: {which} of {which})", True)
    except GradCheckError as e:
        report.add(f"{tag}: order {order}", False, e.abs_err or 0.0, e.rel_err or 0.0,
                   detail=str(e).split("\n")[0])


def _random_like(x, rng):
    v = rng.standard_normal(np.shape(x))
    return v + 1j * rng.standard_normal(np.shape(x)) if np.iscomplexobj(x) else v


def _real_cotangents(out):
    """Cotangents whose pullbacks are the rows of the realified Jacobian: e_k for Re y_k
    and −i·e_k for Im y_k (Re Σ (−i e_k)·ẏ = Im ẏ_k)."""
    m = int(np.size(out))
    eye = np.eye(m).reshape((m,) + np.shape(out))
    return np.concatenate([eye, -1j * eye]) if np.iscomplexobj(out) else eye


def _realify_as(t, like):
    """``realify(t)`` in the coordinates of ``like``'s kind (a real tangent of a complex
    output is a complex tangent with zero imaginary part; a complex tangent of a real
    output is wrong, which the kind check reports, and compared by its real part)."""
    t = np.asarray(t)
    return realify(t.astype(np.result_type(t, like)) if np.iscomplexobj(like) else t.real)


def _cotangent_row(g, like):
    """A cotangent ``g`` of a value like ``like`` as a row acting on realified directions:
    v ↦ Re Σ g·v = Re g · Re v − Im g · Im v."""
    g = np.ravel(np.asarray(g))
    if np.iscomplexobj(like):
        g = g.astype(np.result_type(g, like))
        return np.concatenate([g.real, -g.imag])
    return g.real


def _check_kinds(report, tag, i, x, out, t, c):
    """A real output's tangent and a real input's cotangent must be real (a complex one
    may be real-typed: a zero imaginary part)."""
    ok = not (t is not None and np.iscomplexobj(t) and not np.iscomplexobj(out)) and \
        not (c is not None and np.iscomplexobj(c) and not np.iscomplexobj(x))
    report.add(f"{tag}: real/complex kind of tangent and cotangent of argument {i}", ok,
               detail="" if ok else f"input {np.asarray(x).dtype} got a "
               f"{np.asarray(c).dtype if c is not None else 'no'} cotangent; output "
               f"{np.asarray(out).dtype} got a {np.asarray(t).dtype if t is not None else 'no'}"
               f" tangent")


def _check_holomorphic(report, tag, i, f, x, out, t, v, rtol):
    """Complex arguments: the JVP is complex-linear and is the complex difference along
    i·v divided by i (which equals the one along v only for a holomorphic f). Real
    arguments of a real result: the JVP matches the complex step Im f(x + ihv)/h."""
    if np.iscomplexobj(x):
        _, ti = dualad.jvp(f, (x,), (1j * v,))
        a, r = _rel(ti, 1j * np.asarray(t))
        report.add(f"{tag}: complex-linear JVP of argument {i} (J(iv) = i·Jv)", r <= 1e-9, a, r)
        d = central_difference(f, x, 1j * v) / 1j
        a, r = _rel(t, d)
        report.add(f"{tag}: complex derivative of argument {i} vs difference along i·v",
                   r <= rtol * 10 or a <= rtol, a, r)
    elif not np.iscomplexobj(out):
        a, r = _rel(t, complex_step(f, x, v))
        report.add(f"{tag}: JVP of argument {i} vs complex step", r <= 1e-9 or a <= 1e-12, a, r)



def _partial(call, vals, i, kw):
    return lambda x: call(*fill_arguments(vals, [i], [x]), **kw)


def _check_sympy(report, prim, call, vals, diff, kw, tag, smp, modes=("fwd", "rev")):
    from .symbolic import compare
    limit = 6 if prim.derivs is not None else 4
    if not diff or sum(int(np.size(vals[i])) for i in diff) > limit:
        return 0
    dom = smp.get("domain")
    doms = [dom[i] if dom and i < len(dom) else None for i in diff]
    f = lambda *xs: call(*fill_arguments(vals, diff, xs), **kw)  # noqa: E731
    shapes = [np.shape(vals[i]) for i in diff]
    if not prim.symbolic_rules:
        from .symbolic import compare_at
        try:
            ok = compare_at(f, [vals[i] for i in diff])
        except Exception as e:  # noqa: BLE001
            report.add(f"{tag}: SymPy oracle (numeric)", False, detail=f"{type(e).__name__}: {e}")
            return 1
        report.add(f"{tag}: SymPy oracle (AD Jacobian vs sympy.diff at the point)", ok)
        return 1
    for mode in [m for m, short in (("forward", "fwd"), ("reverse", "rev")) if short in modes]:
        try:
            scalar = all(s == () for s in shapes)
            ok, how = compare(f, shapes, domain=doms, mode=mode, simplify=scalar,
                              at=None if scalar else [vals[i] for i in diff])
        except Exception as e:  # noqa: BLE001
            report.add(f"{tag}: SymPy oracle ({mode})", False, detail=f"{type(e).__name__}: {e}")
            return 1
        report.add(f"{tag}: SymPy oracle ({mode} rules vs sympy.diff, decided {how})", ok)
    return 1


@dataclass
class RegistryReport:
    """The table of :func:`check_registry`: one :class:`RuleReport` per primitive.

    ``str(report)`` is the table followed by the failed primitives' reports.
    ``looped`` lists the primitives ``dualad.vmap`` computes by a loop (no batching rule:
    correct, but one call per example), a category of their own, not failures.

    Parameters
    ----------
    reports : list of RuleReport
        One report per checked primitive.

    See Also
    --------
    check_registry : Makes the report.
    RuleReport : One primitive's checks.

    Examples
    --------
    >>> from dualad.verification import check_registry
    >>> report = check_registry(["exp", "sin"], order=1, sympy=False, vmap=False, jit=False)
    >>> report.ok
    True
    >>> print(report.table())
    primitive  checks  max abs err  max rel err  vmap     verdict
    --------------------------------------------------------
    exp          ...  ok
    sin          ...  ok
    2 of 2 primitives pass
    vmap: 0 batching rules, 2 derived, 0 looped
    jit: 2 replay at a new point, 0 trace again (a value decides)
    """
    reports: list[RuleReport]

    @property
    def ok(self) -> bool:
        """Whether every primitive passed.

        """
        return all(r.ok for r in self.reports)

    @property
    def failures(self) -> list[RuleReport]:
        """The reports of the primitives that failed a check.

        """
        return [r for r in self.reports if not r.ok]

    @property
    def looped(self) -> list[str]:
        """The primitives vmap computes by a loop over the examples (no batching rule):
        correct, B calls instead of one; their own category, not failures."""
        return [r.name for r in self.reports if r.vmap == "loop"]

    def table(self) -> str:
        """The table: one line per primitive with its checks, largest errors, vmap kind and verdict.

        Then the totals: how many pass, how ``vmap`` batches them (rules, derived, looped) and
        how many ``jit`` replays at a new point or traces again.

        Returns
        -------
        str
            The table, one primitive a line.
        """
        w = max(len(r.name) for r in self.reports) if self.reports else 10
        lines = [f"{'primitive'.ljust(w)}  checks  max abs err  max rel err  vmap     verdict",
                 "-" * (w + 53)]
        for r in self.reports:
            a, rel = r.max_errors()
            lines.append(f"{r.name.ljust(w)}  {len(r.rows):6d}  {a:11.2e}  {rel:11.2e}  "
                         f"{r.vmap.split(' ')[0]:7s}  {'ok' if r.ok else 'FAILED'}")
        lines.append(f"{sum(r.ok for r in self.reports)} of {len(self.reports)} primitives pass")
        kinds = [r.vmap.split(" ")[0] for r in self.reports]
        lines.append(f"vmap: {kinds.count('rule')} batching rules, {kinds.count('derived')} "
                     f"derived, {kinds.count('loop')} looped"
                     + (f" ({', '.join(self.looped)})" if self.looped else ""))
        retrace = [r.name for r in self.reports if r.jit == "re-traces"]
        lines.append(f"jit: {len(self.reports) - len(retrace)} replay at a new point, "
                     f"{len(retrace)} trace again (a value decides)"
                     + (f" ({', '.join(retrace)})" if retrace else ""))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table() + "".join("\n\n" + str(r) for r in self.failures)


def check_registry(names: Iterable[str] | None = None, order: int = 2, sympy: bool = True,
                   vmap: bool = True, only_vmap: bool = False, jit: bool = True,
                   only_jit: bool = False) -> RegistryReport:
    """Run :func:`check_rule` over every registered primitive, or the ``names`` given.

    Includes the primitives :mod:`dualad.scipy` registers (``odeint``, ``quad``,
    ``iir_filter``), imported for the purpose. Each primitive is checked in both modes, to
    ``order``, with the SymPy oracle where it has a translation, under ``vmap`` and
    ``jit``: see :func:`check_rule` for the list of checks.

    Parameters
    ----------
    names : iterable of str, optional
        Primitive names (keys of ``dualad.extend.REGISTRY``); default all of them, sorted.
    order : int, optional
        The highest order checked (default 2).
    sympy : bool, optional
        Run the SymPy oracle where available (default True).
    vmap : bool, optional
        Also check the batching rules (default True).
    only_vmap : bool, optional
        Only the batching checks.
    jit : bool, optional
        Also check under ``dualad.jit`` (default True).
    only_jit : bool, optional
        Only the jit checks.

    Returns
    -------
    RegistryReport
        One :class:`RuleReport` per primitive; ``report.ok`` is the verdict and
        ``print(report)`` the table with every failure.

    Raises
    ------
    KeyError
        A name that is not a registered primitive.

    See Also
    --------
    check_rule : One primitive.

    Examples
    --------
    >>> from dualad.verification import check_registry
    >>> report = check_registry(["tanh"], order=1, sympy=False, vmap=False, jit=False)
    >>> report.ok, [r.name for r in report.reports]
    (True, ['tanh'])
    """
    import dualad.scipy  # noqa: F401  (registers its primitives)
    import dualad.scipy.signal  # noqa: F401  (registers iir_filter)
    names = sorted(REGISTRY) if names is None else list(names)
    return RegistryReport([check_rule(REGISTRY[n], order=order, sympy=sympy, vmap=vmap,
                                      only_vmap=only_vmap, jit=jit, only_jit=only_jit)
                           for n in names])


_ = math

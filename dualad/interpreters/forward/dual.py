"""Forward mode: dual numbers ``primal + tangent * eps`` with eps**2 = 0.

A :class:`Dual` carries a primal and its tangent. The tangent has the primal's
shape, or that shape behind leading batch axes: in vector mode many
directions ride through one sweep, and every JVP rule is written to accept
those axes. Each :class:`JVPTrace` has its own level, so nested forward
sweeps keep their perturbations apart.
"""
from __future__ import annotations

import numpy as np

from ..reverse.anomaly import check as check_anomaly
from ..batched_rules import map_batch, map_batch_all
from ...core.boxes import PrimalBox
from ...core.tracer import ANOMALY, Box, Trace, primal_value, shape_of
from ...core.primitive import add_note, missing_rule
from ...core.rules import rule_table

# Forward mode's rule tables (filled by Primitive.defjvp/defderiv/def_linear/def_all).
JVP = rule_table("jvp", per_argument=True, owner=__package__, doc=(
    "rule_i(t_i, ans, *args, **params) = ∂f/∂x_i · t_i: argument i's contribution to the "
    "output's tangent (leading batch axes on t_i when the primitive's batch_rules is set)"))
JVP_ALL = rule_table("jvp_all", owner=__package__, doc=(
    "rule(tangents, ans, *args, **params) = Σ_i ∂f/∂x_i · t_i from every argument's "
    "tangent at once (None where an argument has none)"))

__all__ = ["Dual", "JVPTrace", "LazyJVPTrace"]


class Dual(PrimalBox):
    r"""A forward-mode traced value: a primal and its tangent, of one :class:`JVPTrace`.

    A dual number :math:`x + \dot x\,\varepsilon` with :math:`\varepsilon^2 = 0`:
    every primitive applied to it computes the primal one level down and pushes the
    tangent forward through its JVP rule, so :math:`f(x + \dot x\varepsilon) = f(x) +
    f'(x)\dot x\,\varepsilon`. The tangent has the primal's shape, or that shape
    behind leading batch axes (vector mode: many directions in one sweep).

    Parameters
    ----------
    trace : JVPTrace
        The forward trace (its level tells nested forward sweeps apart).
    primal : object
        The value one level down.
    tangent : object
        Its tangent: the primal's shape, maybe behind leading batch axes.

    Attributes
    ----------
    primal, tangent : object
        As given.

    See Also
    --------
    JVPTrace : The forward interpreter.
    dualad.jvp : Forward mode for users.

    Examples
    --------
    >>> from dualad.extend import Dual, JVPTrace
    >>> trace = JVPTrace()
    >>> x = Dual(trace, 2.0, 1.0)        # the seed: dx/dx = 1
    >>> y = x * x + 1.0
    >>> print(float(y.primal), float(y.tangent))
    5.0 4.0
    >>> trace.stop()
    """

    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    def __repr__(self):
        return f"Dual(primal={self.primal!r}, tangent={self.tangent!r})"


class JVPTrace(Trace):
    r"""The forward interpreter: pushes tangents forward through JVP rules.

    A primitive applied to this trace's :class:`Dual` values computes its primal one
    level down and the output's tangent :math:`\dot y = \sum_i \partial f/\partial x_i
    \cdot \dot x_i` from the JVP rules of its traced arguments. Subclass it (and
    override :meth:`process`) to count or log operations on the way.

    Parameters
    ----------
    level : int, optional
        The trace's level (default: a fresh one, :func:`new_level`).

    See Also
    --------
    Dual : Its traced values.
    VJPTrace : The reverse interpreter.
    """

    __slots__ = ()

    def process(self, prim, args, params):
        """Compute ``prim``'s primal and push the tangents of this trace's Duals forward.

        Parameters
        ----------
        prim : Primitive
            The primitive called.
        args : tuple
            Its positional arguments (Duals of this trace, lower boxes, plain values).
        params : dict
            Its keyword parameters.

        Returns
        -------
        Dual or object
            A :class:`Dual` (or a tuple of them) of this trace; a zero-derivative
            primitive's plain result.

        Raises
        ------
        EscapedTracerError
            If the trace has stopped.
        NotImplementedError
            If a traced argument's JVP rule is not declared (:func:`missing_rule`).
        """
        if not self.alive:
            raise self.escaped(prim, args)
        primals = []
        lower = False
        for a in args:
            if isinstance(a, Dual) and a._trace is self:
                a = a.primal
            if isinstance(a, Box):
                lower = True
            primals.append(a)
        # Only when a lower trace is involved does the call go round dispatch again.
        ans = prim(*primals, **params) if lower else prim.impl(*primals, **params)
        if prim.zero_derivative:
            if self.decisions is not None:   # a value-dependent result: logged
                self.decisions.note(prim.name, ans)
            return ans
        try:
            out = self._process_rules(prim, args, params, primals, ans)
        except Exception as e:  # say which rule failed, keep the original exception
            add_note(e, f"while running the JVP rule of primitive '{prim.name}' (argument shapes "
                     f"{[shape_of(p) for p in primals]})")
            raise
        return _checked(out, prim) if ANOMALY[0] else out

    def _process_rules(self, prim, args, params, primals, ans):
        jvp_all = prim.rules.get(JVP_ALL)
        if jvp_all is not None:
            tangents = [a.tangent if isinstance(a, Dual) and a._trace is self else None
                        for a in args]
            ref = next(i for i, t in enumerate(tangents) if t is not None)
            nb = len(shape_of(tangents[ref])) - len(shape_of(primals[ref]))
            if nb and not prim.batch_rules:
                tangent = map_batch_all(jvp_all, tangents, nb, ans, primals, params)
            else:
                tangent = jvp_all(tangents, ans, *primals, **params)
            return ans if tangent is None else Dual(self, ans, tangent)
        tangent = None
        for i, a in enumerate(args):
            if not (isinstance(a, Dual) and a._trace is self):
                continue
            rule = prim.rules[JVP].get(i)
            if rule is None:
                raise missing_rule(prim, i, "jvp")
            t = a.tangent
            if prim.batch_rules:
                contrib = rule(t, ans, *primals, **params)
            else:
                nb = len(shape_of(t)) - len(shape_of(primals[i]))
                contrib = map_batch(rule, t, nb, ans, *primals, **params) if nb else \
                    rule(t, ans, *primals, **params)
            if contrib is None:
                continue
            tangent = contrib if tangent is None else tangent + contrib
        if tangent is None:
            return ans
        if isinstance(ans, (tuple, list)):
            return type(ans)(Dual(self, a, t) for a, t in zip(ans, tangent))
        return Dual(self, ans, tangent)


class _Pending:
    """A tangent not pushed forward yet: the JVP rule call it waits on."""

    __slots__ = ("prim", "args", "params", "primals", "ans")

    def __init__(self, prim, args, params, primals, ans):
        self.prim, self.args, self.params, self.primals, self.ans = prim, args, params, primals, ans

    def __repr__(self):
        return f"<tangent of '{self.prim.name}', not computed yet>"


class LazyJVPTrace(JVPTrace):
    """Forward mode that pushes a tangent forward only when something asks for it.

    Each primitive's value is computed at once; its output tangent is a
    :class:`_Pending` rule call, run by :meth:`force` when an output of the sweep
    (or a tangent that one needs) is read. The tangents nothing reads are never
    computed: in forward-over-reverse, f's own output tangent ∇f·v and the
    tangents of values only it depends on (the loss's last steps), which for a
    Hessian's n directions are whole n-wide passes. The result is the eager
    sweep's: the same rules run on the same arguments, only fewer of them.
    ``batch`` is the sweep's batch shape (a rule that returns no contribution
    leaves a zero tangent of that many directions).
    """

    __slots__ = ("batch",)

    def __init__(self, batch=(), level=None):
        super().__init__(level)
        self.batch = tuple(batch)

    def _process_rules(self, prim, args, params, primals, ans):
        if ANOMALY[0] or isinstance(ans, (tuple, list)):
            # anomaly mode checks each tangent as it is made; several outputs share one
            # rule call: both run at once, on forced arguments
            for a in args:
                if isinstance(a, Dual) and a._trace is self:
                    self.force(a)
            return JVPTrace._process_rules(self, prim, args, params, primals, ans)
        return Dual(self, ans, _Pending(prim, args, params, primals, ans))

    def force(self, dual):
        """``dual``'s tangent, computing it and the pending tangents it needs first (in
        dependency order, with an explicit stack: no recursion on long chains)."""
        todo = [(dual, False)]
        while todo:
            d, ready = todo.pop()
            p = d.tangent
            if type(p) is not _Pending:
                continue
            if not ready:
                todo.append((d, True))
                todo.extend((a, False) for a in p.args if isinstance(a, Dual)
                            and a._trace is self and type(a.tangent) is _Pending)
                continue
            out = JVPTrace._process_rules(self, p.prim, p.args, p.params, p.primals, p.ans)
            d.tangent = out.tangent if isinstance(out, Dual) else _zero_tangent(self.batch, p.ans)
        return dual.tangent


def _zero_tangent(batch, primal):
    dtype = np.result_type(primal_value(primal))
    return np.zeros(tuple(batch) + shape_of(primal), dtype if dtype.kind in "fc" else np.float64)


def _checked(out, prim):
    if isinstance(out, Dual):
        check_anomaly(prim, "value", out.primal)
        check_anomaly(prim, "tangent", out.tangent)
    else:
        check_anomaly(prim, "value", out)
    return out

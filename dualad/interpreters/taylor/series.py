r"""Taylor mode: truncated Taylor series pushed through the registry, one order at a time.

A traced value is a :class:`Series`: the coefficients :math:`x_0, x_1, \dots, x_d` of a
curve :math:`x(t) = \sum_k x_k t^k` (normalized: :math:`x_k = x^{(k)}(0)/k!`). A
primitive applied to series gives the series of :math:`y(t) = f(x(t))` truncated at the
same order, each coefficient :math:`y_k` from the operands' coefficients of order
:math:`\le k` (Griewank–Walther, *Evaluating Derivatives*, ch. 13): the rules of the
``"taylor"`` table (:mod:`.rules`) are these recurrences, :math:`O(d^2)` work per
primitive where nesting ``d`` forward sweeps costs :math:`O(2^d)`.

A primitive without a recurrence of its own uses its JVP rule (the fallback): since
:math:`y'(t) = \mathrm{JVP}(x(t), y(t); x'(t))`, running that rule on series (the
derivative series :math:`x'_m = (m+1)x_{m+1}` as tangent, :math:`y` itself as the
answer) gives :math:`y'` to order :math:`k-1` from :math:`y` to order :math:`k-1`, and
:math:`y_k = (y')_{k-1}/k`. The rule is run once, on series, and its primitives are kept
(a *sub-tape*, one order behind its owner): each new order of :math:`y` sweeps the
sub-tape once more. A rule that calls a fallback primitive again (``solve``'s JVP solves)
makes a sub-tape two orders behind, and so on, so every coefficient of every value is
computed once: polynomial cost for every primitive with a JVP rule.

Outside a fallback every coefficient is computed when the primitive is called (as forward
mode computes its tangent), so values the function changes afterwards (an array it
writes into) are read as they were at the call.
"""
from __future__ import annotations

from ...core.boxes import PrimalBox
from ...core.primitive import add_note
from ...core.tracer import Box, Trace, shape_of

__all__ = ["Series", "TaylorTrace", "Node"]


class Series(PrimalBox):
    r"""A Taylor-traced value: the primal and its higher Taylor coefficients.

    ``coefs[0]`` is the primal (the value one level down); ``coefs[k]`` the
    coefficient of :math:`t^k` (the :math:`k`-th derivative along the curve over
    :math:`k!`), each of the primal's shape. Under a fallback rule fewer than ``order
    + 1`` coefficients may exist yet: the sub-tape computes them one order at a time.
    """

    __slots__ = ("coefs",)

    def __init__(self, trace, coefs):
        self._trace = trace
        self.primal = coefs[0]
        self.coefs = coefs

    def __repr__(self):
        return f"Series(coefs={self.coefs!r})"

    def _replays_programs(self):
        # a jitted program is replayed primitive by primitive: as one primitive its JVP
        # rule (a jitted JVP program) would be nested once per order by the fallback
        return True


class Node:
    """One primitive call on series: its operands' and its outputs' coefficient lists.

    ``x[i]`` is argument ``i``'s coefficient list (a constant's is ``[value]``: its
    higher coefficients are zero), ``y`` the output's (a list of lists for a primitive
    with several outputs), ``state`` the rule's scratch (the companion series of a
    recurrence: ``cos`` beside ``sin``).
    """

    __slots__ = ("trace", "prim", "params", "x", "traced", "y", "multi", "state", "rule")

    def __init__(self, trace, prim, params, x, traced, y, multi, rule):
        self.trace = trace
        self.prim, self.params, self.x, self.traced = prim, params, x, traced
        self.y, self.multi, self.rule = y, multi, rule
        self.state = {}

    @property
    def primals(self):
        """The arguments' primal values (coefficient 0)."""
        return [c[0] for c in self.x]

    @property
    def ans(self):
        """The primal output (coefficient 0 of each output)."""
        return tuple(c[0] for c in self.y) if self.multi else self.y[0]

    def step(self, k):
        """Compute coefficient ``k`` of the outputs (those below it exist)."""
        try:
            out = self.rule(self, k)
        except Exception as e:   # name the primitive and the order, keep the error
            add_note(e, f"while computing Taylor coefficient {k} of primitive "
                     f"'{self.prim.name}' (argument shapes {[shape_of(c[0]) for c in self.x]})")
            raise
        if self.multi:
            for lst, c in zip(self.y, out):
                lst.append(c)
        else:
            self.y.append(out)


class TaylorTrace(Trace):
    r"""The Taylor interpreter: series of truncation order ``order`` through every primitive.

    A primitive applied to this trace's :class:`Series` computes its primal one level
    down, then each higher coefficient from its rule in the ``"taylor"`` table
    (:func:`.rules.taylor_rule`): at once, or, inside a fallback rule, when the owner's
    sub-tape sweeps (``tape`` is then that sub-tape).

    Parameters
    ----------
    order : int
        The truncation order :math:`d`: coefficients :math:`0, \dots, d` are kept.
    rule_of : callable
        ``rule_of(prim)``: the primitive's rule (:func:`.rules.taylor_rule`).
    """

    __slots__ = ("order", "tape", "rule_of")

    def __init__(self, order, rule_of, level=None):
        super().__init__(level)
        self.order = int(order)
        self.rule_of = rule_of
        self.tape = None   # the sub-tape being recorded (a fallback rule running), or None

    def own(self, a):
        return isinstance(a, Series) and a._trace is self

    def process(self, prim, args, params):
        if not self.alive:
            raise self.escaped(prim, args)
        xs, traced, primals, lower = [], [], [], False
        for a in args:
            if self.own(a):
                xs.append(a.coefs)
                traced.append(True)
                a = a.primal
            else:
                xs.append([a])
                traced.append(False)
            if isinstance(a, Box):
                lower = True
            primals.append(a)
        ans = prim(*primals, **params) if lower else prim.impl(*primals, **params)
        if prim.zero_derivative:
            return ans
        multi = isinstance(ans, (tuple, list))
        y = [[a] for a in ans] if multi else [ans]
        node = Node(self, prim, params, xs, traced, y, multi, self.rule_of(prim))
        if self.tape is not None:        # inside a fallback: its sub-tape sweeps it later
            self.tape.append(node)
        else:
            for k in range(1, self.order + 1):
                node.step(k)
        if multi:
            return type(ans)(Series(self, c) for c in y)
        return Series(self, y)

    def recording(self, tape):
        """Context: primitives called inside go on ``tape`` (a fallback's sub-tape)."""
        return _Recording(self, tape)


class _Recording:
    __slots__ = ("trace", "tape", "saved")

    def __init__(self, trace, tape):
        self.trace, self.tape = trace, tape

    def __enter__(self):
        self.saved = self.trace.tape
        self.trace.tape = self.tape

    def __exit__(self, *exc):
        self.trace.tape = self.saved

"""The staging interpreter: :class:`JitTrace` records every primitive it sees into a
:class:`~dualad.interpreters.staging.program.Program`, computing values as it goes.

The trace runs the function on concrete values (its :class:`JitBox` boxes hold them), so
Python control flow works as it does without jit. What the function *learns* from a
value is recorded as a guard (:class:`~dualad.interpreters.staging.program.Guard`):

- ``bool(x)`` (``if x > 0``, ``while err > tol``): the truth it had;
- ``int(x)``, ``operator.index(x)``, ``round(x)``: the integer it had;
- any other read of the value itself (``float(x)``, ``x.item()``, code that takes the
  primal with ``dualad.extend.primal_value``: a NumPy function with no rule for traced
  values, a SciPy solver): the whole value, compared when the program replays.

So a replay either runs the same program the function would have run, or a guard fails
and the caller traces again: never a stale program. A read that does not decide
anything (a planner choosing a mode from a census) takes :func:`peek` instead.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from .sharing import frozen
from ...core.tracer import Box, EscapedTracerError, Trace, shape_of
from .program import Const, Eqn, Guard

__all__ = ["JitTrace", "JitBox", "ClosesOverTraced", "peek", "user_line"]


class ClosesOverTraced(Exception):
    """Raised inside a jit trace when the function uses a traced value of an enclosing
    transformation that it did not receive as an argument (``grad(lambda y: jit(lambda x:
    x * y)(x0))``): the program cannot hold it, so the call runs without jit."""


_PACKAGE = os.path.dirname(os.path.abspath(sys.modules["dualad"].__file__))  # the package root


def user_line():
    """``file:line`` of the innermost frame outside dualad (the user's code that asked)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f = f.f_back
    if f is None:
        return ""
    return f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno} in {f.f_code.co_name}"


_F64 = np.float64
_IMMUTABLE = frozenset({int, bool, complex})


def _aval(value):
    kind = value.__class__
    if kind is np.ndarray or isinstance(value, np.generic):
        return kind, value.shape, value.dtype
    if kind is float or kind is int or kind is bool or kind is complex:
        return kind, (), np.result_type(value)
    return kind, shape_of(value), getattr(value, "dtype", None)


class JitTrace(Trace):
    """Records primitives applied to its :class:`JitBox` values (see the module doc).

    ``body`` collects Eqns and Guards in order; ``avals`` the type, shape and dtype of
    every variable's traced value."""

    __slots__ = ("body", "avals", "nvars", "seen", "scalars", "params", "shares")

    def __init__(self, shares=False):
        super().__init__()
        self.body = []
        self.avals = {}
        self.nvars = 0
        # Hash-consing (see :func:`cse_key`): ``(primitive, inputs, params) -> var`` of the
        # equations recorded, so a repeated computation is recorded once; ``scalars``:
        # ``var -> value`` for a scalar value (immutable), which a repeat takes. A repeat
        # of an array computes it again (same bits: the primitives are pure), which costs
        # what the function without jit costs, and the trace keeps no array alive (a loop
        # over big arrays would keep every step's) and no object per equation that the
        # collector walks (keys of ints and strings, numbers: it stops tracking them).
        self.seen = {}
        self.scalars = {}
        # The parameters of the equations, one dict per distinct value (see
        # :func:`frozen_params`): a slice in an index is an object the collector walks, and
        # the loop finder (dualad.interpreters.staging.loops) keys a dict it met once by its identity.
        self.params = {}
        # Whether a reverse-mode tape over this trace's values may share its nodes too
        # (dualad.interpreters.reverse.tape.record): off for the retrace of a function that writes into a
        # traced array in place (dualad.interpreters.reverse.tape.SharedNodeWritten).
        self.shares = shares

    def new_var(self, value):
        v = self.nvars
        self.nvars = v + 1
        self.avals[v] = _aval(value)
        return v

    def input(self, value):
        """A box for one traced input (a leaf of the arguments)."""
        return JitBox(self, value, self.new_var(value))

    def process(self, prim, args, params):
        if not self.alive:
            raise self.escaped(prim, args)
        vals = []
        ins = []
        for a in args:
            if a.__class__ is JitBox and a._trace is self:
                vals.append(a.val)
                ins.append(a.var)
            else:
                if isinstance(a, Box):
                    a = self.lift(a, prim)   # raises here; dualad.scan's trace lifts it
                    vals.append(a.val)
                    ins.append(a.var)
                    continue
                vals.append(a)
                ins.append(Const(a))
        ins = tuple(ins)
        if params:
            pkey = frozen_params(params)
            if pkey is not None:   # equal parameters (``idx=(slice(0, 7),)``): one dict
                params = self.params.setdefault(pkey, params)
        else:
            pkey = ()
        key = _key(prim, ins, pkey)
        if key is not None:
            var = self.seen.get(key)
            if var is not None:   # the same computation again: its variable, a new box
                ans = self.scalars.get(var)
                if ans is None:   # an array: computed again, same bits
                    ans = prim.impl(*vals, **params)
                return JitBox(self, ans, var)
        ans = prim.impl(*vals, **params)
        out = self.new_var(ans)
        self.body.append(Eqn(prim, ins, params, out))
        if key is not None:
            self.seen[key] = out
            c = ans.__class__
            if c is float or c is _F64 or c in _IMMUTABLE or isinstance(ans, np.generic):
                self.scalars[out] = ans
        return JitBox(self, ans, out)

    def recompute(self, var):
        """A new variable computed by the equation that made ``var`` (None for an input):
        for an output that the function computed twice as two arrays, which sharing
        (:func:`cse_key`) made one variable, so the caller still gets two arrays."""
        for e in reversed(self.body):
            if e.__class__ is Eqn and e.out == var:
                out = self.nvars
                self.nvars = out + 1
                self.avals[out] = self.avals[var]
                self.body.append(Eqn(e.prim, e.ins, e.params, out))
                return out
        return None

    def lift(self, box, prim):
        """The box standing for ``box``, a value of an enclosing transformation met by
        ``prim``: a jitted function cannot hold it (:class:`ClosesOverTraced`). A subclass
        may make it an input of the program instead (closure conversion, dualad.scan)."""
        raise ClosesOverTraced(prim.name)

    def guard(self, box, kind, expected):
        """Record that the program relies on ``box``'s value (see :class:`Guard`)."""
        if not self.alive:
            raise self.escaped_guard(box)
        if kind == "equal":
            if os.environ.get("DUALAD_JIT_DEBUG"):
                import traceback
                traceback.print_stack(limit=8)
            v = box.val
            expected = v.copy() if isinstance(v, np.ndarray) else v
        self.body.append(Guard(kind, box.var, expected, user_line()))

    def escaped(self, prim, args):
        shapes = ", ".join(str(shape_of(a)) for a in args if isinstance(a, Box))
        return _escaped(shapes, f"in primitive '{prim.name}'")

    def escaped_guard(self, box):
        return _escaped(shape_of(box.val), "in Python (bool, int, float or an index of it)")


def _escaped(shapes, where):
    return EscapedTracerError(
        f"a value traced by dualad.jit (shape {shapes}) was used {where} after the jitted "
        f"function returned: it was stored during the trace (in a list, a global, an "
        f"attribute, a returned closure such as a pullback), and holds the values of that "
        f"one trace only. Return arrays from the jitted function instead (call a pullback "
        f"inside it and return its result)")


def cse_key(prim, ins, params):
    """The key under which ``prim(*ins, **params)`` is recorded once per trace, or None
    when it is not shared: an input that is an array constant (kept by reference, see
    :class:`~dualad.interpreters.staging.program.Const`) or a parameter that is not a number, string,
    dtype, slice or tuple of them.

    Exact: the primitives are pure functions of their inputs and parameters (the
    program's own common-subexpression pass, dualad.interpreters.staging.passes, relies on the same),
    so the same primitive applied to the same variables and equal constants and
    parameters computes the same value, bit for bit."""
    return _key(prim, ins, frozen_params(params) if params else ())


def frozen_params(params):
    """``params`` as a hashable key, equal only for equal values of the same types
    (:func:`~dualad.interpreters.staging.sharing.frozen`), or None when a value is not comparable so."""
    key = []
    for k, v in params.items():
        f = frozen(v)
        if f is None:
            return None
        key.append(k)
        key.append(f)
    return tuple(key)


def _key(prim, ins, pkey):
    if pkey is None:
        return None
    key = [id(prim)]   # (the Eqn recorded keeps the primitive alive: its id is not reused)
    for a in ins:
        if a.__class__ is int:
            key.append(a)
        else:
            f = frozen(a.value)
            if f is None:
                return None
            key.append(f)
    if pkey:
        key.append(pkey)
    return tuple(key)


class JitBox(Box):
    """A value of a :class:`JitTrace`: the concrete ``val`` and its program variable."""

    __slots__ = ("val", "var", "__weakref__")   # weak: dualad.frontend.inplace tracks views
    hash_consed = True   # a tape over these values may share its nodes (dualad.interpreters.staging.sharing)

    def __init__(self, trace, val, var):
        self._trace = trace
        self.val = val
        self.var = var

    @property
    def _inner(self):
        # Reading the value itself: whatever is computed from it is a constant of the
        # program, so the program holds only while the value is the same.
        self._trace.guard(self, "equal", None)
        return self.val

    @property
    def shape(self):
        return shape_of(self.val)

    @property
    def dtype(self):
        v = self.val
        d = getattr(v, "dtype", None)
        return d if d is not None else np.result_type(v)

    # The interpreter query (dualad.core.values): this box is recorded, and it is the
    # lowest box of its value (nothing batched under it; its _inner reads with a guard).
    def _staged(self):
        return True

    def _batch_trace(self):
        return None

    def _staged_value(self):
        return self

    def concrete(self, kind):
        """The value for ``bool()`` / ``int()`` (``kind``), the fact recorded as a guard."""
        v = self.val
        out = bool(v) if kind == "bool" else int(v)
        self._trace.guard(self, kind, out)
        return out

    def __bool__(self):
        return self.concrete("bool")

    def __int__(self):
        return self.concrete("int")

    def __index__(self):
        if self.dtype.kind not in "iub":
            from ...frontend.casts import to_index
            return to_index(self)   # NumPy's rule: raises for a floating value
        return self.concrete("int")

    def __float__(self):
        self._trace.guard(self, "equal", None)
        return float(self.val)

    def __complex__(self):
        self._trace.guard(self, "equal", None)
        return complex(self.val)

    def item(self, *args):
        self._trace.guard(self, "equal", None)
        return np.asarray(self.val).item(*args)

    def tolist(self):
        self._trace.guard(self, "equal", None)
        return np.asarray(self.val).tolist()

    def __repr__(self):
        return f"JitBox(v{self.var}, shape={self.shape}, dtype={self.dtype})"


def peek(x):
    """The plain value under every box of ``x`` WITHOUT a guard: for reads that decide
    nothing about the result (a census, a cost model, an example value to trace with).
    None when a box's value has another shape than the box (a vmap tracer's holds the
    whole batch)."""
    while isinstance(x, Box):
        inner = x.val if x.__class__ is JitBox else x._inner
        if shape_of(inner) != x.shape:
            return None
        x = inner
    return x

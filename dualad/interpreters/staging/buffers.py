"""Buffer reuse in generated programs: an elementwise operation writes its result into an
operand's array when that array dies there (``v9 = np.multiply(v7, v8, out=v7)``).

For large arrays a new result is memory the allocator must map and the kernel fault in
and zero, page by page, at every call; writing into the array that dies saves that (a
1.28·10⁶-entry multiply: 3.4 ms with a new array, 2.5 ms into a dead one). Small arrays
come from the allocator's free lists and gain nothing, so only arrays of at least
``min_bytes`` (the code generator's ``BIG``) are reused.

An operand's array is reused only when the program owns it and nothing can see the write:

- it was made by an equation that always returns a new array (:data:`FRESH`: the NumPy
  ufuncs and operators, ``untake``), never an input of the program, a constant, or a
  value of a primitive that may return a view or its own argument;
- it and every variable that may be a view of it (any equation not in :data:`FRESH` is
  taken to return a view of its arguments) are read for the last time by this equation,
  and none of them is an output (an output's last use is the return);
- it takes no part in a scatter-add chain (:mod:`dualad.interpreters.staging.specialize`, which adds into
  arrays in place and reads its leaves later than their equations stand);
- it has the result's type, shape and dtype, so ``out=`` neither casts nor broadcasts:
  the values are the ones ``x * y`` would give, bit for bit (a ufunc computes each entry
  from the same entries whether or not the output is an input).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .passes import known
from .program import Eqn, Guard
from .selected import MASKED_ADD

# Equations whose array result is always a new array (see the module docstring).
FRESH = frozenset(["add", "subtract", "multiply", "divide", "negative", "square", "sqrt",
                   "exp", "log", "sin", "cos", "tanh", "sinh", "cosh", "reciprocal",
                   "absolute", "untake", "expm1", "log1p", "maximum", "minimum"])

# operator implementations -> the ufunc the generated call names
_UFUNC_OF = {operator.add: "np.add", operator.sub: "np.subtract", operator.mul: "np.multiply",
             operator.truediv: "np.true_divide", operator.neg: "np.negative"}


def ufunc_source(prim):
    """``np.<ufunc>`` for a registry primitive computed by a NumPy ufunc with one output,
    or None."""
    if known(prim) is None:
        return None
    impl = prim.impl
    if impl in _UFUNC_OF:
        return _UFUNC_OF[impl]
    if isinstance(impl, np.ufunc) and impl.nout == 1 and getattr(np, impl.__name__, None) is impl:
        return f"np.{impl.__name__}"
    return None


def large(shape, dtype, min_bytes):
    """The bytes of an array of ``shape`` and ``dtype`` when at least ``min_bytes``, else
    0 (also when either is unknown)."""
    if shape is None or dtype is None:
        return 0
    n = math.prod(shape) * np.dtype(dtype).itemsize
    return n if n >= min_bytes else 0


def plan(prog, chains, elided, pyfloat, min_bytes):
    """``{output variable: operand variable}``: the equations of ``prog`` (the optimized
    program, emitted in its order) that write into an operand's array (see the module
    docstring). ``chains``/``elided``: the scatter chains of
    :func:`dualad.interpreters.staging.specialize.find_chains`; ``pyfloat``: the Python float variables."""
    avals = prog.avals
    body = prog.body
    last = {}
    owners = {}
    excluded = set(pyfloat) | set(elided)
    for ch in {id(c): c for c in chains.values()}.values():   # one Chain per add: once each
        excluded.add(ch.root)
        excluded.update(a for a in ch.step)
        for kind, leaf in ch.leaves:
            excluded.update(leaf.ins if kind == "untake" else (leaf,))
    for i, e in enumerate(body):
        if e.__class__ is Guard:
            last[e.var] = i
            continue
        for a in e.ins:
            if a.__class__ is int:
                last[a] = i
                if e.out in elided:
                    excluded.add(a)
        if known(e.prim) in FRESH or e.prim is MASKED_ADD:   # (a copy, or its dead y)
            owners[e.out] = frozenset((e.out,))
        else:
            owners[e.out] = frozenset().union(*[owners.get(a, ()) for a in e.ins
                                                 if a.__class__ is int])
    end = len(body)
    for a in prog.outvars:
        if a.__class__ is int:
            last[a] = end
    dies = {}     # fresh array -> the last position any variable that may view it is read
    for v, own in owners.items():
        at = last.get(v, -1)
        for b in own:
            if dies.get(b, -1) < at:
                dies[b] = at
    out = {}
    for i, e in enumerate(body):
        if e.__class__ is not Eqn or e.out in excluded:
            continue
        masked = e.prim is MASKED_ADD      # writes into its first operand only
        if not masked and (e.params or ufunc_source(e.prim) is None):
            continue
        kind, shape, dtype = avals[e.out]
        if kind is not np.ndarray or not large(shape, dtype, min_bytes):
            continue
        for a in e.ins[:1] if masked else e.ins:
            if a.__class__ is not int or a in excluded or owners.get(a) != frozenset((a,)) or \
                    dies.get(a) != i or avals[a] != avals[e.out]:
                continue
            out[e.out] = a
            break
    return out


__all__ = ["plan", "large", "ufunc_source", "FRESH"]

"""Type specialization for the code generator: which values are Python floats, and
scatter-adds accumulated in one buffer.

**Scalars.** A variable whose traced value was a float64 scalar (``float`` or
``np.float64``: the avals say so) and that is computed by an arithmetic or elementary
primitive from such scalars and real constants is held as a Python ``float``: the
generated line is ``v5 = v4 * v4`` or ``v6 = sin(v5)`` (``math.sin``), several times cheaper than
the same operation on NumPy scalars. Where such a value meets NumPy code (an array
operation) or leaves the program, it gets back the exact type it had when traced
(``np.float64(v5)`` or the float itself). A scalar read of an array inside the program
(``x[3]``, the loop ``for i in range(n): x[i]``) takes ``x.tolist()`` once and indexes
the list.

Exactness: ``+ - * /``, ``sqrt``, ``abs``, ``square`` (``x * x``), ``reciprocal``
(``1.0 / x``) and ``power`` (``math.pow``, which is C's ``pow`` as NumPy's scalar power)
round exactly as NumPy does. The elementary functions (``math.exp``, ``math.log``,
``math.tanh``, ...) are the C library's, while NumPy's loops use their own (SIMD)
implementations for several of them: results may differ in the last bit (within 1 ulp;
``sin``, ``cos`` and ``sqrt`` agree on the machines we tried). Where Python's float
arithmetic raises and NumPy's returns ``inf``/``nan`` with a warning (division by zero,
``math.log(0.0)``, ``math.exp(1000.0)``, ``math.sqrt(-1.0)``, ``math.pow`` of a negative
base), the replay runs the unspecialized program instead (see
:mod:`dualad.interpreters.staging.codegen`), which gives NumPy's values and warnings.

**Scatter accumulation.** The reverse sweep of ``x[i]`` read in a loop records, per
index, ``untake(ct, idx=(i,), shape=x.shape)`` (a whole array of zeros with ``ct`` at
``i``) and adds them up: ``acc = acc + untake(...)``. A chain of such additions becomes
one buffer: a Python list ``[0.0] * n`` with ``vR_l[i] += ct`` for float scalars into a
float64 vector, else one array with ``vR[idx] += ct``. The per-element sums are taken in
the same order as the recorded chain, so the values are the same (a ``-0.0`` added to
nothing else may come out ``+0.0``, as it does when a zero is added to it).
"""
from __future__ import annotations

import math

import numpy as np

from .passes import known, typed_uses
from .program import Eqn

F64 = np.dtype(np.float64)

# name -> (number of arguments, template of the Python float expression, exact)
SCALAR_OPS = {
    "add": (2, "{0} + {1}", True), "subtract": (2, "{0} - {1}", True),
    "multiply": (2, "{0} * {1}", True), "divide": (2, "{0} / {1}", True),
    "negative": (1, "-{0}", True), "positive": (1, "+{0}", True),
    "square": (1, "{0} * {0}", True), "reciprocal": (1, "1.0 / {0}", True),
    "absolute": (1, "abs({0})", True), "sqrt": (1, "sqrt({0})", True),
    "std_sqrt": (1, "sqrt({0})", True), "power": (2, "pow({0}, {1})", True),
    "exp": (1, "exp({0})", False), "expm1": (1, "expm1({0})", False),
    "log": (1, "log({0})", False), "log1p": (1, "log1p({0})", False),
    "log2": (1, "log2({0})", False), "log10": (1, "log10({0})", False),
    "sin": (1, "sin({0})", False), "cos": (1, "cos({0})", False),
    "tan": (1, "tan({0})", False), "arcsin": (1, "asin({0})", False),
    "arccos": (1, "acos({0})", False), "arctan": (1, "atan({0})", False),
    "sinh": (1, "sinh({0})", False), "cosh": (1, "cosh({0})", False),
    "tanh": (1, "tanh({0})", False), "arcsinh": (1, "asinh({0})", False),
    "arccosh": (1, "acosh({0})", False), "arctanh": (1, "atanh({0})", False),
    "arctan2": (2, "atan2({0}, {1})", False),
}

# Comparisons give a Python bool instead of np.bool_: only where no use sees the type
# (a guard: ``if x > 0``), see Scalars.
COMPARISONS = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<=",
               "equal": "==", "not_equal": "!="}

# The functions the templates name (bound in the generated function's globals: a plain
# global is a shorter lookup than ``math.sin``, and long programs are bound by code size).
SCALAR_FUNCS = {name: getattr(math, name) for name in (
    "sqrt", "pow", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "atan2")}

# The exceptions Python float arithmetic raises where NumPy returns inf/nan and warns.
FLOAT_ERRORS = (ZeroDivisionError, OverflowError, ValueError)


def is_f64_scalar(aval):
    """A float64 scalar: ``float`` or ``np.float64`` (not a 0-d array)."""
    kind, shape, dtype = aval
    return (kind is float or kind is np.float64) and shape == () and dtype == F64


def scalar_const(v):
    """``v`` as the Python float it stands for in float64 arithmetic, or None when it is
    not a real number that converts exactly (a bool, a huge int, a complex, ...)."""
    if v.__class__ is bool or isinstance(v, np.bool_):
        return None
    if v.__class__ is int or isinstance(v, np.integer):
        v = int(v)
        return float(v) if abs(v) <= 2 ** 53 else None
    if v.__class__ is float or isinstance(v, np.floating) and v.dtype.itemsize <= 8:
        return float(v)
    return None


def _scalar_index(idx, shape):
    """``idx`` as non-negative ints when it picks one element of an array of ``shape``."""
    if idx.__class__ is not tuple or len(idx) != len(shape):
        return None
    out = []
    for i, n in zip(idx, shape):
        if i.__class__ is not int:
            return None
        out.append(i + n if i < 0 else i)
    return tuple(out)


class Scalars:
    """The scalar specialization of one program (see the module docstring).

    ``pyfloat``: variables held as Python floats; ``eqns``: the outputs of equations
    emitted as Python float code; ``reads``: ``{array variable: number of scalar reads}``;
    ``index``: ``{getitem output: the element's index}``; ``convert``: inputs of type
    ``np.float64`` turned into floats on entry."""

    def __init__(self, prog):
        avals = prog.avals
        pyfloat = {v for v in prog.invars if is_f64_scalar(avals[v])}
        eqns, reads, index, compares = set(), {}, {}, set()
        for e in prog.body:
            if e.__class__ is not Eqn:
                continue
            name = known(e.prim)   # a user's primitive named "sin" is not math.sin
            if name is None or not is_f64_scalar(avals[e.out]) and name not in COMPARISONS:
                continue
            if name == "getitem":
                x = e.ins[0]
                if len(e.ins) != 1 or x.__class__ is not int:
                    continue
                kind, shape, dtype = avals[x]
                at = _scalar_index(e.params.get("idx"), shape)
                if kind is np.ndarray and dtype == F64 and at is not None:
                    eqns.add(e.out)
                    pyfloat.add(e.out)
                    index[e.out] = at
                    reads[x] = reads.get(x, 0) + 1
                continue
            if name in COMPARISONS and not e.params and len(e.ins) == 2 and all(
                    a in pyfloat if a.__class__ is int else scalar_const(a.value) is not None
                    for a in e.ins) and avals[e.out][0] is np.bool_:
                compares.add(e.out)
                continue
            op = SCALAR_OPS.get(name)
            if op is None or e.params or len(e.ins) != op[0]:
                continue
            if all(a in pyfloat if a.__class__ is int else scalar_const(a.value) is not None
                   for a in e.ins):
                eqns.add(e.out)
                pyfloat.add(e.out)
        if compares:   # a comparison whose bool meets NumPy or leaves stays np.bool_
            typed = typed_uses(prog, eqns | compares)
            eqns |= {v for v in compares if v not in typed}
        self.compares = compares & eqns
        used = {a for e in prog.body if e.__class__ is Eqn and e.out in eqns
                for a in e.ins if a.__class__ is int}
        self.convert = [v for v in prog.invars if v in pyfloat and avals[v][0] is np.float64
                        and v in used]
        pyfloat -= {v for v in prog.invars if v in pyfloat and avals[v][0] is np.float64
                    and v not in used}
        self.pyfloat, self.eqns, self.reads, self.index = pyfloat, eqns, reads, index


class Chain:
    """One scatter accumulation: the ``add`` equations of the chain (in order), its
    leaves (``("untake", eqn)`` for an elided untake, ``("fresh", var)`` for an array only
    the chain holds, ``("dense", var)`` otherwise), the root variable and the mode
    (``"list"``: a Python list of floats; ``"array"``: one NumPy buffer)."""

    __slots__ = ("adds", "step", "leaves", "root", "mode")

    def __init__(self, first):
        self.adds = []
        self.step = {}    # add output -> its position in adds
        self.leaves = [first]
        self.root = None
        self.mode = "array"


def _basic(idx):
    return idx.__class__ is tuple and all(i.__class__ is int or i.__class__ is slice
                                          for i in idx)


# Primitives whose array result is always a new array (NumPy ufuncs and the operators on
# arrays): a chain may add into it in place when nothing else reads it.
FRESH = frozenset(["add", "subtract", "multiply", "divide", "negative", "square", "sqrt",
                   "exp", "log", "sin", "cos", "tanh", "sinh", "cosh", "power", "reciprocal",
                   "absolute", "untake"])


def find_chains(prog, uses, pyfloat):
    """``(chains by add output, elided untake outputs)`` (see :class:`Chain`).

    The steps: link the ``add`` equations into chains (:func:`_link_adds`: an add whose
    accumulator is an untake or an open chain read only there extends it); keep the chains
    that scatter (an untake leaf), finishing each (:func:`_finish_chain`: which leaf to add
    into, list or array mode); their untakes are elided."""
    untakes = {e.out: e for e in prog.body if e.__class__ is Eqn and known(e.prim) == "untake"
               and len(e.ins) == 1 and e.ins[0].__class__ is int}
    fresh = _fresh_test(prog, uses)
    chains, elided = {}, set()
    for ch in _link_adds(prog, uses, untakes):
        if not any(kind == "untake" for kind, _ in ch.leaves):
            continue
        _finish_chain(ch, prog.avals, fresh)
        for a in ch.adds:
            chains[a] = ch
        elided.update(l.out for k, l in ch.leaves if k == "untake")
    return chains, elided


def _fresh_test(prog, uses):
    """``fresh(v)``: whether ``v`` is an array a :data:`FRESH` primitive made and only one
    equation reads (a chain may add into it in place)."""
    avals = prog.avals
    def_of = {e.out: e for e in prog.body if e.__class__ is Eqn}

    def fresh(v):
        e = def_of.get(v)
        return (e is not None and known(e.prim) in FRESH and uses.get(v, 0) == 1
                and avals[v][0] is np.ndarray)
    return fresh


def _chain_add(e, avals):
    """Whether ``e`` is an ``add`` of two array variables of its output's aval (no
    broadcasting, no constants): a link a chain may take."""
    if e.__class__ is not Eqn or known(e.prim) != "add" or e.params or len(e.ins) != 2:
        return False
    av = avals[e.out]
    return av[0] is np.ndarray and all(a.__class__ is int and avals[a] == av for a in e.ins)


def _link_adds(prog, uses, untakes):
    """The chains, each once, in program order: an add ``acc + term`` (either order)
    whose ``acc`` is read only there and is an open chain's root (the chain goes on) or
    an untake (a chain starts) adds ``term`` as a leaf; its output is the chain's new
    root."""
    avals = prog.avals
    open_chains = {}
    done = []

    def linkable(a):
        return uses.get(a, 0) == 1 and (a in open_chains or a in untakes)
    for e in prog.body:
        if not _chain_add(e, avals):
            continue
        x, y = e.ins
        acc = x if linkable(x) else y if linkable(y) else None
        if acc is None:
            continue
        term = y if acc is x else x
        if acc in open_chains:
            ch = open_chains.pop(acc)
        else:
            u = untakes[acc]
            ch = Chain(("untake", u) if _basic(u.params["idx"]) else ("fresh", acc))
        if term in untakes and uses.get(term, 0) == 1 and _basic(untakes[term].params["idx"]) \
                and term not in open_chains:
            ch.leaves.append(("untake", untakes[term]))
        else:
            ch.leaves.append(("dense", term))
        ch.step[e.out] = len(ch.adds)
        ch.adds.append(e.out)
        ch.root = e.out
        open_chains[e.out] = ch
        done.append(ch)
    return {id(c): c for c in done}.values()


def _finish_chain(ch, avals, fresh):
    """A scattering chain made ready to emit: an untake first and a fresh dense array
    second swap (a + b is b + a: add into the new array b in place, not into zeros); a
    1-D float64 root whose leaves are all single-element untakes of float scalars
    accumulates in a Python list."""
    first, second = ch.leaves[0], ch.leaves[1]
    if first[0] == "untake" and second[0] == "dense" and fresh(second[1]):
        ch.leaves[0], ch.leaves[1] = ("fresh", second[1]), first
    kind, shape, dtype = avals[ch.root]
    if len(shape) == 1 and dtype == F64 and all(
            k == "untake" and len(l.params["idx"]) == 1 and
            l.params["idx"][0].__class__ is int and is_f64_scalar(avals[l.ins[0]])
            for k, l in ch.leaves):
        ch.mode = "list"


__all__ = ["Scalars", "find_chains", "is_f64_scalar", "scalar_const", "SCALAR_OPS", "SCALAR_FUNCS",
           "FLOAT_ERRORS"]

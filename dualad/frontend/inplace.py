"""In-place updates of traced arrays, with NumPy's semantics: ``y[i] = v``, ``y += v``,
ufuncs' ``out=``, ``np.add.at``, and the functional ``y.at[i].set(v)``.

Values on a tape are never changed: an update computes the new value functionally
(:func:`dualad.ops.core.scatter.update`, written with registry primitives, so every
mode and order differentiates it) and then makes the Python object the user holds
*stand for* the new value (:func:`write`):

- forward mode (:class:`~dualad.interpreters.forward.dual.Dual`) and the other eager interpreters
  (sparsity patterns, SymPy values, the planner's census): their consumers keep no reference to
  their arguments, so the object's slots (primal, tangent, ...) are replaced;
- reverse mode: the object is a node of the tape, which its consumers hold in their
  ``args`` and the sweep keys cotangents by. Its slots move to a fresh node that takes
  its place on the tape, and the consumers recorded since are re-pointed to it (a walk
  of the tape back to the node: the nodes recorded since its last update); the object
  then takes the new node's slots and place. A value captured before the update (an
  earlier consumer, ``a = y[0]``) keeps the old value. The imperative API's long-lived
  trace keeps no tape list to walk, and an input of the differentiated function is a
  leaf the sweep must find again: both raise, saying what to write instead.

Views (NumPy's ``z = y[1:]``) are kept: a basic index (integers, slices, None,
Ellipsis) giving a result of one or more dimensions records the result as a view of
its base; writing into the base re-derives its live views, writing into a view writes
the base (and so every other view of it). Scalars (0-d traced values) stand for NumPy
scalars, which are immutable: ``s += v`` rebinds ``s``, as it does in NumPy.
Not detected (docs/inplace.md): an inner transformation that already used an outer
array sees a write into that array made inside it.
"""
from __future__ import annotations

import operator
import weakref
from functools import partial

import numpy as np

from .. import ops
from . import scipy_errors
from ..interpreters.forward.dual import LazyJVPTrace
from ..ops.core.scatter import at, copy, copy_p, update  # noqa: F401  (at: public here)
from ..interpreters.staging.sharing import SharedNodeWritten
from ..interpreters.reverse.tape import Var
from ..core.tracer import Box, shape_of

__all__ = [
    "at", "copy", "copy_p", "update", "note_view", "write", "setitem", "copy_method",
    "fill", "sort_method", "partition_method", "put_method", "assignment_hint",
    "raise_assignment_error",
    "ufunc_update", "constant_like", "install"
]

# Keyed by id(), checked through a weak reference (a WeakKeyDictionary would compare boxes
# with ==, which is elementwise on traced arrays): id(view) -> (ref(view), base, index);
# id(base) -> {id(view): ref(view)}, its live views. A view nobody holds is forgotten.
_VIEW_OF = {}
_VIEWS = {}


def _is_basic(idx):
    for e in idx:
        if not (e is None or e is Ellipsis or type(e) is int or type(e) is slice
                or isinstance(e, np.integer)):
            return False
    return True


def _forget(key, base_key, ref, _VIEW_OF=_VIEW_OF, _VIEWS=_VIEWS):   # bound: also at exit
    _VIEW_OF.pop(key, None)
    views = _VIEWS.get(base_key)
    if views is not None:
        views.pop(key, None)
        if not views:
            del _VIEWS[base_key]


def note_view(base, idx, view):
    """Record ``view = base[idx]`` as a NumPy view of ``base`` when ``idx`` is basic and the
    result has at least one axis (Box.__getitem__ calls it)."""
    if type(idx) is not tuple:
        idx = (idx,)
    if not isinstance(view, Box) or not shape_of(view) or not _is_basic(idx):
        return
    key, base_key = id(view), id(base)
    ref = weakref.ref(view, partial(_forget, key, base_key))
    _VIEW_OF[key] = (ref, base, idx)
    _VIEWS.setdefault(base_key, {})[key] = ref


def _base_of(box):
    entry = _VIEW_OF.get(id(box))
    return entry[1:] if entry is not None and entry[0]() is box else None


def _views_of(base):
    views = _VIEWS.get(id(base))
    if not views:
        return []
    return [v for v in (r() for r in list(views.values())) if v is not None]


# --- making an object stand for a new value -------------------------------------------------

_SLOTS = {}


def _slots(cls):
    names = _SLOTS.get(cls)
    if names is None:
        names = []
        for c in cls.__mro__:
            s = c.__dict__.get("__slots__", ())
            for n in ((s,) if isinstance(s, str) else s):
                if n not in ("__weakref__", "__dict__") and n not in names:
                    names.append(n)
        names = _SLOTS[cls] = tuple(names)
    return names


def _move(dst, src, skip=("items",)):
    """Copy ``src``'s slots into ``dst`` (unset where ``src`` has none); ``items``, Var's
    cache of ``x[i]``, is dropped: it belongs to the old value."""
    for n in _slots(type(src)):
        if n in skip:
            if hasattr(dst, n):
                delattr(dst, n)
            continue
        if hasattr(src, n):
            setattr(dst, n, getattr(src, n))
        elif hasattr(dst, n):
            delattr(dst, n)


def write(box, new, fname="x[...] = v"):
    """Make ``box`` stand for ``new`` (a value of ``box``'s shape), with NumPy's view
    semantics: a view writes its base, a base re-derives its views."""
    if new is box:        # the value it already holds
        return box
    entry = _base_of(box)
    if entry is not None:
        base, idx = entry
        write(base, update(base, idx, new, "set", fname), fname)   # re-derives ``box`` too
        return box
    _assign(box, new, fname)
    _refresh_views(box, fname)
    return box


def _refresh_views(base, fname):
    for view in _views_of(base):
        entry = _base_of(view)
        if entry is None or entry[0] is not base:
            continue
        _assign(view, ops.index(base, entry[1]), fname)
        _refresh_views(view, fname)


def _assign(box, new, fname):
    trace = box._trace
    if not isinstance(new, Box) or new._trace is not trace:
        raise TypeError(
            f"{fname}: the value written into a traced array of shape {shape_of(box)} carries "
            f"derivatives of a different (inner) transformation than the array's, which an "
            f"in-place write cannot record on the array. Write it functionally, "
            f"y = y.at[idx].set(v) (or build the array from its pieces, dualad.numpy.stack)")
    if isinstance(box, Var):
        if getattr(trace, "shared", None) is not None:   # a node others may share
            raise SharedNodeWritten(fname)
        _rebind_node(box, new, fname)
    elif type(trace) is LazyJVPTrace:
        raise TypeError(f"{fname}: in-place writes into traced arrays are not supported under "
                        f"jvp(..., lazy=True), whose pending tangents refer to the array "
                        f"object; write it functionally, y = y.at[idx].set(v), or use lazy=False")
    else:    # eager interpreters: nothing refers to the object once an operation returned
        _move(box, new)


def _rebind_node(box, new, fname):
    """Reverse mode: see the module docstring. O(nodes recorded since ``box``)."""
    tape = box._trace.tape
    if box.prim is None:
        raise TypeError(
            f"{fname}: the traced array of shape {shape_of(box)} is an input of the function "
            f"being differentiated, which an in-place write cannot replace (the sweep needs it). "
            f"Write into a copy "
            f"(y = x.copy(); y[idx] = v) or functionally (y = x.at[idx].set(v))")
    if tape is None:
        raise TypeError(
            f"{fname}: in-place writes into a traced array (shape {shape_of(box)}) are "
            f"supported inside dualad.grad/vjp/jvp and dualad.jacobians, not on a tape that "
            f"keeps no list of its nodes (the imperative API's, dualad.autograd.Variable, or "
            f"a counting trace); write it functionally: y = y.at[idx].set(v)")
    old = object.__new__(type(box))
    _move(old, box)
    k = len(tape) - 1
    at_new = None
    while k >= 0:
        node = tape[k]
        if node is box:
            break
        if node is new:
            at_new = k
        args = node.args
        if args is not None:
            for i in node.parents:
                if args[i] is box:
                    node.args = type(args)(old if a is box else a for a in args)
                    break
        k -= 1
    else:   # pragma: no cover - a node the user holds stays on its tape
        raise RuntimeError(f"{fname}: the traced array is not on its tape")
    tape[k] = old
    if at_new != len(tape) - 1:    # not the node just recorded (one a caller may hold):
        new = copy_p(new)           # the object takes a fresh copy of it
        at_new = len(tape) - 1
    _move(box, new)
    tape[at_new] = box


# --- the entry points ------------------------------------------------------------------------

def setitem(self, idx, value):
    """``y[idx] = value`` on a traced array ``y`` (Box.__setitem__)."""
    write(self, update(self, idx, value, "set", "y[idx] = v"), "y[idx] = v")


def _inplace_operator(symbol, name, binary):
    """``y += v`` (``binary`` is ``operator.add``: the class's own operator, so a scalar
    Var keeps the tape's fast entry)."""
    def method(self, other):
        new = binary(self, other)
        if not shape_of(self):     # a scalar: immutable in NumPy too, ``+=`` rebinds
            return new
        return write(self, _fit(new, self, f"y {symbol} v"), f"y {symbol} v")
    method.__name__ = f"__i{name}__"
    return method


def _fit(new, target, fname):
    """``new`` as a value of ``target``'s shape and dtype (NumPy's in-place casting); a
    plain ``new`` (a value-only result) is written as a constant."""
    if tuple(shape_of(new)) != tuple(shape_of(target)):
        raise ValueError(f"{fname}: non-broadcastable output operand with shape "
                         f"{tuple(shape_of(target))} doesn't match the broadcast shape "
                         f"{tuple(shape_of(new))}")
    if not isinstance(new, Box) or new.dtype != target.dtype:
        return update(target, (Ellipsis,), new, "set", fname)    # casts as NumPy does
    return new


def copy_method(self, order="C"):
    return copy(self)


def fill(self, value):
    """``y.fill(v)``: every entry of ``y`` set to the scalar ``v``."""
    write(self, update(self, (Ellipsis,), value, "set", "y.fill(v)"), "y.fill(v)")


def sort_method(self, axis=-1, kind=None, order=None):
    """``y.sort()``: ``y`` replaced by ``np.sort(y)``."""
    write(self, np.sort(self, axis=axis, kind=kind, order=order), "y.sort()")


def partition_method(self, kth, axis=-1, kind="introselect", order=None):
    """``y.partition(kth)``: ``y`` replaced by ``np.partition(y, kth)``."""
    write(self, np.partition(self, kth, axis=axis, kind=kind, order=order), "y.partition()")


def put_method(self, indices, values, mode="raise"):
    """``y.put(indices, values)``: ``y.flat[indices] = values`` (values repeated as needed,
    as NumPy does); only ``mode="raise"``."""
    if mode != "raise":
        raise NotImplementedError(f"y.put(..., mode={mode!r}): only mode='raise' is supported")
    flat_idx = np.asarray(indices, dtype=np.intp).ravel()
    if isinstance(values, Box):
        values = ops.ravel(values)
    else:
        values = np.ravel(values)
    n = shape_of(values)[0] if shape_of(values) else 1
    if flat_idx.size and n and n != flat_idx.size:      # NumPy cycles through values
        reps = np.arange(flat_idx.size) % n
        values = ops.index(values, reps) if isinstance(values, Box) else values[reps]
    flat = update(ops.ravel(self), (flat_idx,), values, "set", "y.put()")
    write(self, ops.reshape(flat, shape_of(self)), "y.put()")


# --- ufuncs: out= and ufunc.at ---------------------------------------------------------------

_AT_OPS = {np.add: "add", np.subtract: "subtract", np.multiply: "multiply",
           np.divide: "divide", np.power: "power", np.minimum: "min", np.maximum: "max"}
_SYMBOLS = {np.add: "+=", np.subtract: "-=", np.multiply: "*=", np.divide: "/=",
            np.power: "**=", np.matmul: "@="}


def assignment_hint(value=None, target="out", index="i", lost="its derivative"):
    """The two ways to write a traced value into an array that is a plain NumPy array:
    the message of every error raised for it (also for NumPy's own ``out[i] = x``, which
    converts ``x`` with ``__float__``/``__array__``). ``lost``: what the plain array would
    lose (under vmap, the examples' own values; no derivative is involved)."""
    shape = "" if value is None else f" (here a traced value of shape {shape_of(value)})"
    return (f"A plain NumPy array cannot hold a traced value{shape}: {lost} would be "
            f"lost. Write it one of two ways: (1) make the array traced before writing into "
            f"it, e.g. {target} = np.zeros_like(x) with x a traced input (or "
            f"{target} = x.copy()), then {target}[{index}] = v, {target}[{index}] += v and "
            f"np.add.at({target}, idx, v) are recorded; or (2) write it functionally: "
            f"{target} = dualad.lax.at({target})[{index}].set(v) (also .add, .multiply, "
            f".min, .max, ...), or build the array from its pieces with "
            f"dualad.numpy.stack([...])")


def raise_assignment_error(api, fname, error):
    """Raise the error a transformation gives for NumPy's wrapped conversion of a traced value.

    ``out[i] = x`` into a plain float array (or ``.astype(float)`` of an object array of
    traced values) makes NumPy call ``float(x)``. That raises dualad's TypeError, which
    names the conversion and the ways to write it; NumPy then replaces it with its own
    ``ValueError: setting an array element with a sequence.`` (a traced value has
    ``__getitem__``), and only the traceback's chained cause tells what happened. SciPy
    does the same to the error that names a SciPy function and its ``dualad.scipy``
    replacement (``scipy.optimize.minimize`` reports "must return a scalar value"): that
    error is found in the chain and raised again (:func:`dualad.frontend.scipy_errors.masked_by_scipy`).

    Parameters
    ----------
    api : str
        The transformation that called the function, e.g. ``"grad"``.
    fname : str
        The function's name.
    error : BaseException
        What calling the function raised.

    Raises
    ------
    TypeError
        Naming ``api`` and ``fname`` and carrying dualad's message, raised from ``error``
        when ``error`` is NumPy's (or SciPy's) wrapping of a dualad conversion error. Otherwise the
        function returns, and the caller re-raises ``error``.
    """
    scipy = scipy_errors.masked_by_scipy(error)
    if scipy is not None:   # SciPy caught dualad's error and raised its own instead
        raise TypeError(f"{api}: {fname}: {scipy} (SciPy reported it as "
                        f"{type(error).__name__}: {error})") from error
    cause = error.__cause__
    if not (isinstance(error, ValueError) and getattr(cause, "_dualad_conversion", False)
            and "setting an array element" in str(error)):
        return
    text = str(cause)
    if api.startswith("vmap"):
        # the likely cause first, in vmap's terms: a batched value has no derivative to
        # lose, and vmap's control-flow advice (an `if`) fits float() called by the user
        text = ("if it came from out[i] = x into a plain NumPy array: "
                + assignment_hint(lost="each example's own value")
                + ". If it came from float() of a batched value: " + text)
    elif "out[i] = x" not in text:
        text += ". If it came from out[i] = x into a plain NumPy array: " + assignment_hint()
    raise TypeError(f"{api}: {fname} made NumPy convert a traced value to a plain number "
                    f"(NumPy reports it as 'setting an array element with a sequence'): "
                    + text) from error


def ufunc_update(ufunc, method, inputs, kwargs, compute):
    """``ufunc(..., out=y)`` and ``ufunc.at(y, idx, v)`` where a traced value is involved
    (Box.__array_ufunc__): a traced ``y`` is written in place (and returned, as NumPy
    does); a plain ``y`` with a traced value raises (:func:`assignment_hint`).
    ``compute(ufunc, method, *inputs, **kwargs)`` is the dispatch without ``out=``."""
    name = f"numpy.{ufunc.__name__}"
    if method == "at":
        op = _AT_OPS.get(ufunc)
        if op is None or len(inputs) != 3:
            raise NotImplementedError(
                f"{name}.at on traced values: only np.add/subtract/multiply/divide/power/"
                f"minimum/maximum.at(a, indices, b) are differentiable; write it with "
                f"y = y.at[idx].set(...)")
        a, idx, v = inputs
        fname = f"{name}.at"
        if not isinstance(a, Box):
            raise TypeError(f"{fname}(a, indices, b): a is a plain array of shape "
                            f"{shape_of(a)} and b is traced. " + assignment_hint(v, "a", "idx"))
        write(a, update(a, idx, v, op, fname), fname)
        return None
    out = kwargs.pop("out")
    if type(out) is not tuple:
        out = (out,)
    fname = f"{name}(..., out=...)"
    if len(out) != 1 or out[0] is None:
        raise TypeError(f"{fname}: out= of a ufunc with several outputs is not supported on "
                        f"traced values; use the returned values")
    target = out[0]
    where = kwargs.get("where", True)
    if method == "__call__" and not (where is True or isinstance(where, Box)
                                     or bool(np.all(where))):
        # NumPy's where= with out=: where(mask, f(x), out), keywords.call_ufunc's ``fill``
        from .keywords import call_ufunc
        from ..core.primitive import NUMPY_UFUNCS
        op = NUMPY_UFUNCS.get(ufunc)
        if op is None:
            raise NotImplementedError(f"{fname}: no derivative rule for numpy.{ufunc.__name__}")
        result = call_ufunc(ufunc, op, inputs, kwargs, fill=target)
    else:
        result = compute(ufunc, method, *inputs, **kwargs)
    if any(result is a for a in inputs):    # an operation that returned its argument
        result = copy(result)
    if not isinstance(target, Box):
        if isinstance(result, Box):
            how = _SYMBOLS.get(ufunc)
            via = f" (as a {how} x runs it)" if how and method == "__call__" else ""
            raise TypeError(f"{fname}{via}: out is a plain array of shape {shape_of(target)} "
                            f"and the result is traced. " + assignment_hint(result, "a"))
        target[...] = result      # a value-only result (a comparison, say): NumPy's own write
        return target
    return write(target, _fit(result, target, fname), fname)


def constant_like(a, fill, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """``np.zeros_like(a)`` / ``np.ones_like(a)`` (``fill`` is np.zeros / np.ones): for a
    traced floating ``a``, a traced constant of ``a``'s trace (``a`` with every entry set:
    zero derivative, no dependence in the sparsity pattern), so that ``out[i] = v`` into it
    is recorded; otherwise NumPy's plain array."""
    dt = np.dtype(dtype) if dtype is not None else np.dtype(a.dtype if isinstance(a, Box)
                                                          else np.result_type(a))
    value = fill(shape_of(a) if shape is None else shape, dtype=dt)
    if isinstance(a, Box) and shape is None and dt.kind in "fc" and not kwargs:
        return update(a, (Ellipsis,), value, "set", f"numpy.{fill.__name__}_like")
    return value


def install(B):
    """Attach the in-place protocol to the box class ``B`` (called by dualad.frontend.dispatch)."""
    B.__setitem__ = setitem
    B.at = property(at, doc="JAX's functional updates of this value: ``x.at[idx].set(v)`` (also "
                    "``.add``, ``.multiply``, ``.min``, ``.max``, ``.get``), each a new value.")
    B.__copy__ = lambda self: copy(self)
    B.__deepcopy__ = lambda self, memo: copy(self)
    B.copy = copy_method
    B.fill = fill
    B.sort = sort_method
    B.partition = partition_method
    B.put = put_method
    for sym, name in [("+=", "add"), ("-=", "sub"), ("*=", "mul"), ("/=", "truediv"),
                      ("**=", "pow"), ("@=", "matmul"), ("//=", "floordiv"), ("%=", "mod")]:
        setattr(B, f"__i{name}__", _inplace_operator(sym, name, getattr(operator, name)))

"""Lists of traced values given to plain NumPy: object arrays of traced scalars.

``np.array([x, x**2])``, ``np.r_[x, 1.0]``, ``np.mean([a, b])`` and ``np.append([a, b], c)``
run NumPy's C code on a list: ``__array_function__`` never sees the list's contents, so
dispatch cannot reach them. NumPy asks each element for ``__array__``; a traced value
answers with an **object array of traced scalars** of its own shape (a 0-d value: itself;
an array of shape S: its entries ``x[i]``, one recorded ``index`` each). NumPy builds the
result out of those objects, so the result has the shape NumPy gives plain numbers
(``np.array([x_vec, y_vec])`` has shape ``(2, n)``), and NumPy's object loops compute with
the traced scalars' own operators (``+``, ``*``, ``@``, comparisons): every entry keeps its
derivative, to any order, in both modes.

Wherever such an object array meets dualad again it becomes one traced array
(:func:`to_traced`: the entries stacked, ``concatenate`` of their ``(1,)`` reshapes,
reshaped to the object array's shape):

- an argument of any primitive (``Primitive.__call__`` calls :func:`packed_arguments`,
  set as its hook below), hence every dispatched NumPy function and operator with a
  traced operand (``np.sin(x) * A``, ``np.concatenate([A, x])``);
- ``Var``'s operator fast path (``x * A``): it sends object arrays to the primitive;
- the outputs of ``grad``/``value_and_grad``/``jvp``/``vjp`` (and so of ``jacobian``,
  ``hessian``, ``check_grads``): :func:`traced_outputs`.

Costs and limits (docs/sharp_bits.md): each entry of an n-element traced array turned
into an object array is one recorded ``index`` node, each object-loop operation one node
per entry, restacking one ``reshape`` per traced entry plus one ``concatenate``: O(n)
Python-level operations in the forward pass (about 11 µs per entry at n = 100; the node
counts are tested in tests/dualad/frontend/test_lists.py), and the reverse sweep of the entries
costs O(n²) as ``x[i]`` in a loop does, hence :data:`MAX_ENTRIES`. Where dispatch sees a traced
value it is used instead (``np.concatenate([x, plain])`` never builds an object array).
Compiled code given an object array fails loudly: it converts the entries with
``float()``, which raises (never a silently dropped derivative). NumPy's object reductions
pick one of tied entries (``np.max(np.array([x, y]))`` at ``x == y`` gives ``(1, 0)``, a
valid subgradient, where ``dualad.numpy.max`` splits ties evenly).
"""
from __future__ import annotations

import sys

import numpy as np

from .. import ops
from ..core import primitive
from ..core.tracer import Box, shape_of

__all__ = [
    "OBJECT", "MAX_ENTRIES", "object_array", "holds_boxes", "to_traced", "pack",
    "packed_arguments", "traced_outputs", "OBJECT_LOOP_METHODS", "install"
]

OBJECT = np.dtype(object)


# Above this many entries a traced array is not turned into an object array: its entries'
# reverse sweep costs O(n) each (a cotangent of the whole array per entry, as x[i] in a
# loop), O(n²) in all: 10^4 entries already take minutes. The error says what to write.
MAX_ENTRIES = 10_000


def object_array(box):
    """``box`` as an object array of its own shape holding traced scalars (see module)."""
    shape = box.shape
    size = box.size
    if size > MAX_ENTRIES:
        raise TypeError(
            f"NumPy asked a traced array of shape {shape} for a plain array (np.asarray, "
            f"np.array, or a list holding it: np.array([x, y]), np.r_[x, ...]); as an object "
            f"array of {size} traced scalars its derivative would cost O(n^2) (the limit is "
            f"dualad.frontend.objects.MAX_ENTRIES = {MAX_ENTRIES}). Write it so dispatch sees the "
            f"traced array: np.concatenate([x, ...]), np.stack([x, y]), "
            f"dualad.numpy.array([x, y]), or keep x itself instead of np.asarray(x)")
    out = np.empty(shape, dtype=object)
    if not shape:
        out[()] = box              # a full integer index stores the object as it is
        return out
    flat = out.reshape(-1)         # a view: filling it fills ``out``
    entries = ops.ravel(box) if len(shape) > 1 else box
    for i in range(flat.shape[0]):
        flat[i] = entries[i]
    return out


def holds_boxes(a):
    """Whether the object array ``a`` holds a traced value."""
    for e in a.flat:
        if isinstance(e, Box):
            return True
    return False


def to_traced(a):
    """An object array holding traced scalars as ONE traced array of the same shape and the
    dtype NumPy gives the entries' values; an object array without traced values is
    returned as it is.

    Raises (never guesses) when an entry is a traced value that is not 0-d (an object
    array holding traced *arrays*, which no plain array can be) or a value that is not a
    number."""
    if not holds_boxes(a):
        return a
    entries = list(a.flat)
    for k, e in enumerate(entries):
        if isinstance(e, Box):
            if shape_of(e) != ():
                raise ValueError(
                    f"an object array of shape {a.shape} holds a traced value of shape "
                    f"{shape_of(e)} at flat position {k}; an array can only hold scalars. "
                    f"Build it with dualad.numpy.stack([...]) or dualad.numpy.array([...])")
        elif np.asarray(e).dtype.kind not in "biufc":
            raise TypeError(
                f"an object array of shape {a.shape} holding traced values also holds "
                f"{type(e).__name__} {e!r} at flat position {k}, which is not a number")
    if a.ndim == 0:
        return entries[0]
    parts, plain = [], []
    for e in entries:                      # runs of plain numbers: one constant part each
        if isinstance(e, Box):
            if plain:
                parts.append(np.array(plain))
                plain = []
            parts.append(ops.reshape(e, (1,)))
        else:
            plain.append(e)
    if plain:
        parts.append(np.array(plain))
    flat = parts[0] if len(parts) == 1 else ops.concatenate(parts)
    return flat if a.ndim == 1 else ops.reshape(flat, a.shape)


def _holds_boxes(obj):
    if isinstance(obj, Box):
        return True
    if type(obj) is list or type(obj) is tuple:
        return any(_holds_boxes(o) for o in obj)
    if isinstance(obj, np.ndarray) and obj.dtype.hasobject:
        return holds_boxes(obj)
    return False


def pack(obj):
    """A (nested) list or tuple holding traced values, or an object array holding traced
    scalars, as one traced array: what ``np.array(obj)`` would give, with derivatives
    (entries of equal shapes, stacked; NumPy's dtype promotion); anything else as it is."""
    if isinstance(obj, np.ndarray):
        return to_traced(obj) if obj.dtype.hasobject else obj
    if (type(obj) is list or type(obj) is tuple) and _holds_boxes(obj):
        parts = [pack(o) if _holds_boxes(o) else np.asarray(o) for o in obj]
        shapes = {shape_of(p) for p in parts}
        if len(shapes) != 1:
            raise ValueError(f"a list of traced values with entries of shapes "
                             f"{sorted(shapes)} is inhomogeneous; NumPy cannot make an array "
                             f"of it either")
        return ops.stack(parts)
    return obj


def packed_arguments(args):
    """``args`` with each list, tuple or object array that holds traced values stacked
    (:func:`pack`), or None when none does (a list of plain numbers stays as it is).
    :meth:`Primitive.__call__` calls this when an argument is one of those, then calls
    the primitive again on the result: the one route (top trace, ``process``)."""
    out = [pack(a) for a in args]
    if all(o is a for o, a in zip(out, args)):
        return None
    return out


def traced_outputs(out):
    """Restack a function's object arrays of traced scalars into traced arrays.

    A function that builds its output with ``np.array([x, y])`` from traced scalars
    returns an object array NumPy made without asking its elements, which a
    transformation cannot read a tangent or a seed from. ``grad``, ``jvp`` and ``vjp``
    call this on the output before the trace stops; a transformation of one's own
    should too.

    Parameters
    ----------
    out : object
        The output: an array, a traced value, or lists, tuples and dicts of them.

    Returns
    -------
    object
        ``out`` with every object array holding traced values replaced by one traced
        array (stacked with registry operations), in lists, tuples and dicts too;
        everything else unchanged.
    """
    if isinstance(out, np.ndarray):
        return to_traced(out) if out.dtype.hasobject else out
    if type(out) in (list, tuple):
        return type(out)(traced_outputs(o) for o in out)
    if type(out) is dict:
        return {k: traced_outputs(v) for k, v in out.items()}
    return out


# --- np.mean / np.var / np.std of a list ------------------------------------------------
# NumPy's _methods._mean ends with ``elif hasattr(ret, 'dtype'): ret = ret.dtype.type(ret /
# rcount)``: the object reduction's result (a traced scalar) would be cast back to
# np.float64, which cannot hold a derivative. Hidden from those three functions (only), a
# traced value has no ``dtype`` and NumPy keeps ``ret / rcount``, still traced.
def _hidden_from():
    from numpy._core import _methods
    return frozenset(getattr(_methods, n).__code__ for n in ("_mean", "_var", "_std")
                     if hasattr(getattr(_methods, n, None), "__code__"))


_HIDE_DTYPE = _hidden_from()


def _box_dtype(self):
    if sys._getframe(1).f_code in _HIDE_DTYPE:
        raise AttributeError("dtype")
    inner = self._inner
    return inner.dtype if isinstance(inner, Box) else np.result_type(inner)


# --- NumPy's object loops call methods --------------------------------------------------
# ``np.sin(A)`` of an object array calls ``A[i].sin()`` for each entry (NumPy's object loop
# of every math ufunc without a Python operator; the list below is what NumPy 2's loops
# call, found by probing them). A traced scalar answers by calling the ufunc on itself,
# which dispatch sends to the registry.
OBJECT_LOOP_METHODS = (
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
    "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "deg2rad", "radians", "rad2deg", "degrees", "rint",
    "fabs", "fmod", "logical_xor")


def _loop_method(ufunc):
    def method(self, *others):
        return ufunc(self, *others)
    method.__name__ = ufunc.__name__
    method.__doc__ = (f"``numpy.{ufunc.__name__}`` of this traced value: what NumPy's object "
                      f"loop calls for an object array holding it (dualad.frontend.objects).")
    return method


def install(box_class):
    """Hook this module in: ``Box.dtype`` (hidden from NumPy's mean/var/std bodies) and
    the methods NumPy's object loops call. (:meth:`Primitive.__call__`'s object-array
    hook, :func:`packed_arguments`, is installed with the other builders by
    ``dualad/__init__.py``.)"""
    box_class.dtype = property(_box_dtype, doc=box_class.dtype.__doc__)
    for name in OBJECT_LOOP_METHODS:
        if not hasattr(box_class, name):
            setattr(box_class, name, _loop_method(getattr(np, name)))

"""The batching interpreter's value: :class:`BatchTracer`, and what code below the
interpreter needs to know about it (no import of the registry here, so the casts and the
NumPy front end can use it without an import cycle).

A BatchTracer of a :class:`~dualad.interpreters.batching.vmap.BatchTrace` of batch size B holds ``val``, a value
one level down (a plain array, or a box of a lower trace) whose axis 0 is the batch axis,
ALWAYS: ``vmap`` moves each ``in_axes`` to 0 on entry and the batch axis to ``out_axes``
on exit. Its ``shape``, ``ndim``, ``size`` and ``len`` are the PER-EXAMPLE ones (as JAX's
tracers): the function being mapped sees one example. The batch size is the trace's
``size``.

Python control flow on a batched value (``if x > 0``, ``float(x)``, ``int(x)``) would
need one answer for the whole batch: it raises, naming vmap and suggesting ``np.where``.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import CONCRETE, Box, note_decision, shape_of

__all__ = [
    "BatchTracer", "batch_tracer_in", "only_batched", "map_value", "nondiff_value",
    "note_value"
]


def _control_flow_error(x, what):
    return TypeError(
        f"vmap: {what} of a batched value (per-example shape {x.shape}, batch size "
        f"{x._trace.size}) would need one answer for the whole batch, but each example has "
        f"its own. Write the branch as a selection, which is batched: np.where(cond, a, b) "
        f"instead of `a if cond else b`; np.maximum/np.minimum/np.clip for bounds. A "
        f"per-example Python value cannot be had inside vmap")


def _box_array(x, dtype, copy):
    """Box's own ``__array__`` (object arrays of traced scalars, dualad.frontend.dispatch)."""
    return Box.__array__(x, dtype) if copy is None else Box.__array__(x, dtype, copy)


def _logical(name, *args):
    """A boolean operator on batched masks, by the registry's zero-derivative primitive
    (looked up by name: this module sits below the registry's families)."""
    from ...core.primitive import REGISTRY
    for a in args:
        if getattr(a, "dtype", np.dtype(bool)).kind != "b" and not isinstance(a, bool):
            raise TypeError(f"vmap: the operators ~ & | ^ are supported on boolean batched "
                            f"values (masks), got dtype {a.dtype}; use np.bitwise_* on plain "
                            f"integer arrays")
    return REGISTRY[name](*args)


class BatchTracer(Box):
    """A value of a batching trace: ``val`` one level down carries the batch axis at 0.

    ``dualad.vmap`` maps a function over a leading axis by tracing it once on
    BatchTracers: each primitive call on them runs the primitive's batching rule on the
    values one level down, which carry the batch axis at position 0. The tracer's
    ``shape`` is the per-example one, so the function sees one example; ``bool()`` and
    ``len()`` of a per-example scalar raise an error saying what to write instead.

    Parameters
    ----------
    trace : BatchTrace
        The batching trace (its ``size`` is the batch size).
    val : object
        The value one level down, batch axis first.

    Attributes
    ----------
    val : object
        As given (also ``_inner``).

    See Also
    --------
    BatchTrace : The batching interpreter.
    nondiff_value : A plain value that keeps the batch axis.
    """

    __slots__ = ("val", "__weakref__")   # weak: dualad.frontend.inplace tracks views

    def __init__(self, trace, val):
        self._trace = trace
        self.val = val

    @property
    def _inner(self):
        return self.val

    @property
    def shape(self):
        return shape_of(self.val)[1:]

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError(f"vmap: len() of a batched value whose examples are 0-d "
                            f"(batch size {self._trace.size})")
        return shape[0]

    def __bool__(self):
        raise _control_flow_error(self, "bool() (an `if`, `while`, `and`/`or` on it)")

    def __float__(self):
        error = _control_flow_error(self, "float()")
        error._dualad_conversion = True      # out[i] = x: read by inplace.raise_assignment_error
        raise error

    def __int__(self):
        raise _control_flow_error(self, "int()")

    def __complex__(self):
        raise _control_flow_error(self, "complex()")

    def __index__(self):
        raise _control_flow_error(self, "operator.index() (an index, a range bound)")

    def __array__(self, dtype=None, copy=None):
        if self.dtype.kind in "iub":   # NumPy's own indexing: plain_array[batched_index]
            raise TypeError(
                f"vmap: a batched {self.dtype} value (per-example shape {self.shape}) cannot "
                f"become a plain NumPy array; if it indexes a plain NumPy array x (x[i]), "
                f"write dualad.numpy.take(x, i, axis=...) (NumPy's own x[i] and np.take "
                f"convert i; a traced x, x[i], is fine)")
        return _box_array(self, dtype, copy)

    def item(self, *args):
        raise _control_flow_error(self, "item()")

    def tolist(self):
        raise _control_flow_error(self, "tolist()")

    # Boolean masks (comparisons are batched): ~, &, |, ^ as NumPy gives them on bools.
    def __invert__(self):
        return _logical("logical_not", self)

    def __and__(self, other):
        return _logical("logical_and", self, other)

    def __rand__(self, other):
        return _logical("logical_and", other, self)

    def __or__(self, other):
        return _logical("logical_or", self, other)

    def __ror__(self, other):
        return _logical("logical_or", other, self)

    def __xor__(self, other):
        return _logical("not_equal", self, other)

    def __rxor__(self, other):
        return _logical("not_equal", other, self)

    def __repr__(self):
        return f"BatchTracer(per-example shape {self.shape}, batch {self._trace.size}, " \
               f"val={self.val!r})"


def batch_tracer_in(x):
    """The first BatchTracer in ``x``'s chain of boxes (``x`` itself, or a box under a
    Var/Dual), or None."""
    while isinstance(x, Box):
        if isinstance(x, BatchTracer):
            return x
        if x.__class__ in CONCRETE:   # a jit trace's box: the lowest (its _inner guards)
            return None
        x = x._inner
    return None


def only_batched(x):
    """Whether ``x`` is a box whose chain holds BatchTracers only: a batched value with no
    derivative (a mask, a count), which any NumPy cast may change freely."""
    if not isinstance(x, BatchTracer):
        return False
    while isinstance(x, Box):
        if not isinstance(x, BatchTracer):
            return False
        x = x._inner
    return True


def map_value(x, fn):
    """``fn`` of ``x``'s value with no derivative, keeping its batch axes: every box of a
    differentiating trace is stripped (the result has zero derivative), every BatchTracer
    is kept around the result. ``fn`` sees the plain value with all batch axes in front,
    so it must act on each example alone (elementwise: ``astype(int)``, comparisons).
    Used where code takes a value-dependent plain result (an integer cast) from a traced
    value: under vmap that result is still one per example."""
    if isinstance(x, BatchTracer):
        return BatchTracer(x._trace, map_value(x.val, fn))
    if isinstance(x, Box):
        return map_value(x._inner, fn)
    return fn(x)


def nondiff_value(x):
    """Strip the differentiating boxes of ``x`` and keep its vmap batch boxes.

    For a value used without derivative (a mask, a condition, an integer cast): the
    :func:`primal_value` of code that must stay correct under vmap, where
    ``primal_value`` would hand on the whole batch as one example.

    Parameters
    ----------
    x : object
        A traced or plain value.

    Returns
    -------
    object
        The plain value when no vmap batch is under ``x``; else ``x``'s batched value
        with no derivative boxes (a ``BatchTracer`` over plain values).

    See Also
    --------
    primal_value : Strips every box.
    per_example : Calls a function of plain values per example.

    Examples
    --------
    >>> from dualad.extend import nondiff_value
    >>> f = lambda x: nondiff_value(x) > 1.0       # a mask, one row per example
    >>> print(dualad.vmap(f)(np.array([[1.0, 3.0], [0.0, 2.0]])))
    [[False  True]
     [False  True]]
    """
    if batch_tracer_in(x) is None:
        while isinstance(x, Box):
            x = x._inner
        return x
    return map_value(x, lambda v: v)


def note_value(x, name, out):
    """:func:`note_decision` of a batched result too (the log takes the plain value)."""
    note_decision(x, name, out.val if isinstance(out, BatchTracer) else out)

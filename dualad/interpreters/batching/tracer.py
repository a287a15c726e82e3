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
from ...core.values import nondiff_value, per_example

__all__ = [
    "BatchTracer", "batch_tracer_in", "only_batched", "per_example_at", "note_value"
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

    # The interpreter query (dualad.core.values): this box carries the batch.
    def _batch_trace(self):
        return self._trace

    def _map_value(self, fn):
        val = self.val
        return BatchTracer(self._trace, val._map_value(fn) if isinstance(val, Box) else fn(val))

    def _staged_value(self):
        # under vmap each example has its own value: the batch is kept, not the jit box
        return nondiff_value(self)

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


def _example(tree, trace, k):
    """Example ``k`` of ``tree`` along ``trace``'s batch axis (derivatives stripped: the
    values are used without them)."""
    if type(tree) is list or type(tree) is tuple:
        return type(tree)(_example(v, trace, k) for v in tree)
    if type(tree) is dict:
        return {key: _example(v, trace, k) for key, v in tree.items()}
    v = nondiff_value(tree)
    return v.val[k] if isinstance(v, BatchTracer) and v._trace is trace else v


def per_example_at(trace, fn, name, args, kwargs):
    """``fn(*args, **kwargs)`` of a function of values (no derivative) under the batching
    ``trace``: called on each example (through :func:`dualad.core.values.per_example`,
    which asks the examples' own traces: a batch of a lower vmap is still batched) and
    the results stacked along the batch axis, as a value of ``trace``. Results whose shape differs between examples
    (np.nonzero of different masks) cannot form one batch: that raises, naming ``name``."""
    if trace.size == 0:
        raise ValueError(f"vmap of {name}: a batch of size 0 has no example to call it on")
    outs = [per_example(fn, _example(args, trace, k), _example(kwargs, trace, k), name)
            for k in range(trace.size)]

    def stacked(parts):
        shapes = {shape_of(p) for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"vmap of {name}: its result's shape depends on each example's "
                             f"values ({', '.join(map(str, sorted(shapes)))}), so the "
                             f"examples' results do not form one batch; compute it outside "
                             f"vmap, or use a fixed-size form (np.where(mask, x, 0) for a "
                             f"mask, say)")
        return BatchTracer(trace, np.stack(parts))
    if isinstance(outs[0], tuple):
        return type(outs[0])(*[stacked([o[j] for o in outs]) for j in range(len(outs[0]))]) \
            if hasattr(outs[0], "_fields") else tuple(stacked([o[j] for o in outs])
                                                      for j in range(len(outs[0])))
    return stacked(outs)


def note_value(x, name, out):
    """:func:`note_decision` of a batched result too (the log takes the plain value)."""
    note_decision(x, name, out.val if isinstance(out, BatchTracer) else out)

"""Integer casts of traced values, as code uses them for indexing and counts.

``x.astype(int)``, ``np.int64(x)``, ``int(x)``, ``round(x)``: a plain integer (array) of
the primal with **zero derivative** (an integer-valued function of ``x`` is constant almost
everywhere; JAX's ``astype(int)`` does the same), each logged as a decision on the value
(:func:`dualad.core.tracer.note_decision`; the sparse Jacobians' pattern check reads the log).
``operator.index(x)`` follows NumPy: only integer values are indices. ``float()``,
``complex()``, ``item()``, ``tolist()`` keep raising (dualad.frontend.dispatch): they would lose a
nonzero derivative.
"""
from __future__ import annotations

import numpy as np

from ..core.tracer import concrete, note_decision, primal_value
from ..core.values import is_batched, map_value
from ..interpreters.batching.tracer import note_value

__all__ = ["integers", "to_int", "to_index", "to_round"]


def integers(x, dtype, how):
    """``x`` cast to an integer (or boolean) dtype: a plain array with zero derivative (an
    integer-valued function of ``x`` is constant almost everywhere, as in JAX), logged as a
    decision on the value (the sparse pattern check reads it)."""
    if is_batched(x):   # under vmap: one integer array per example
        out = map_value(x, lambda v: np.asarray(v).astype(dtype))
        note_value(x, how, out)
        return out
    out = np.asarray(primal_value(x)).astype(dtype)
    note_decision(x, how, out)
    return out


def to_int(x):
    """``int(x)``: the integer of the primal, zero derivative (logged), as NumPy converts a
    one-element array; used for indexing and counts."""
    out = concrete(x, "int")
    note_decision(x, "int", out)
    return out


def to_index(x):
    """``operator.index(x)`` (``range(x)``, ``a[x]``): NumPy's rule, only integer values are
    indices; a traced value is floating, so this raises and says how to cast."""
    if x.dtype.kind in "iub":
        return to_int(x)
    raise TypeError(
        f"cannot use a traced value of shape {x.shape} and dtype {x.dtype} with "
        f"operator.index() (an index, a range bound): only integer values are indices, as in "
        f"NumPy. Cast it, which has zero derivative: int(x), x.astype(int), np.floor(x)."
        f"astype(int), or take a number from the primal value: int(dualad.extend.primal_value"
        f"(x)).")


def to_round(x, ndigits=None):
    """``round(x)``: a plain int for a 0-d value (zero derivative, logged), as Python and
    NumPy's float64 give; with ``ndigits``, or for an array, ``np.round`` (dispatched)."""
    if ndigits is None and not x.shape:
        out = round(primal_value(x)[()] if isinstance(primal_value(x), np.ndarray)
                    else primal_value(x))
        note_decision(x, "round", out)
        return out
    return np.round(x, 0 if ndigits is None else ndigits)

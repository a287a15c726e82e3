"""NumPy's keyword arguments of reductions and scans, given their differentiable meaning.

    where=mask   reduce only the selected entries: Σ_{i: mask_i} a_i = Σ_i where(mask, a, e)_i
                 with e the reduction's identity (0 for sum, 1 for prod, −∞ for max);
                 linear in ``a`` with cotangent ū·mask, so the masked entries get zero.
    initial=c    one more operand of the reduction: sum + c, prod · c, maximum(max, c).
    dtype=d      a floating (or complex) d: the operand is cast to d first, as NumPy
                 accumulates in d; an integer or boolean d would round the result and
                 truncate its derivative, so it raises (cast the primal value instead).
    out=         writes in place: not traceable, raises (the returned value is the result).

Every error names the function, the keyword and the traced argument's shape, and says
what to write instead (:class:`KeywordError`), never Python's bare "unexpected keyword".
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, primal_value, shape_of
from ...core.values import is_batched, nondiff_value

__all__ = ["KeywordError", "keyword_error", "no_out", "is_all", "mask_of", "cast_for", "pick_ddof"]


class KeywordError(TypeError, ValueError):
    """A NumPy keyword argument that has no differentiable meaning on a traced value (or a
    value NumPy rejects). Both a TypeError and a ValueError: NumPy raises either, for an
    unsupported type or a value of the wrong shape, and code catching NumPy's keeps working."""


def keyword_error(fname, kw, a, reason, instead):
    shape = f" of shape {shape_of(a)}" if a is not None else ""
    return KeywordError(f"{fname}(..., {kw}=...) on a traced value{shape}: {reason}; "
                        f"{instead}")


def no_out(fname, out, a=None):
    """``out=`` (writes in place into an array) is not traceable."""
    if out is not None:
        raise keyword_error(fname, "out", a, "out= writes the result in place into an "
                            "array, which cannot be traced",
                            "use the returned value instead (y = f(x))")


def is_all(where):
    """Whether ``where`` selects everything (None, True, or an all-True mask)."""
    return where is None or where is True or (
        not isinstance(where, Box) and np.asarray(where).dtype == bool
        and bool(np.all(where)))


def mask_of(fname, a, where):
    """The ``where=`` mask as a plain boolean array of ``a``'s shape, or None when it
    selects every entry (so the plain reduction runs)."""
    if where is None or where is True:
        return None
    if is_batched(where):   # under vmap: a mask per example
        mask = nondiff_value(where)
    else:
        mask = np.asarray(primal_value(where))
    if mask.dtype != bool:
        raise keyword_error(fname, "where", a, f"where= must be a boolean mask, got dtype "
                            f"{mask.dtype} and shape {mask.shape}",
                            "pass a boolean array, e.g. where=x > 0")
    try:
        return np.broadcast_to(mask, shape_of(a))
    except ValueError:
        raise keyword_error(fname, "where", a, f"the mask of shape {mask.shape} does not "
                            f"broadcast to the array's shape",
                            "pass a mask of a broadcastable shape") from None


def cast_for(fname, a, dtype):
    """``a`` cast to the accumulation ``dtype`` of a reduction (None: unchanged)."""
    if dtype is None:
        return a
    dtype = np.dtype(dtype)
    src = np.result_type(primal_value(a))
    if dtype.kind not in "fc":
        raise keyword_error(fname, "dtype", a, f"dtype={dtype} would round the result to "
                            f"{dtype.kind == 'b' and 'booleans' or 'integers'} and truncate "
                            f"its derivative",
                            f"reduce in floating point and cast the primal value: "
                            f"dualad.extend.primal_value(result).astype({dtype.name})")
    if dtype == src:
        return a
    if src.kind == "c" and dtype.kind == "f":
        raise keyword_error(fname, "dtype", a, f"dtype={dtype} would discard the imaginary "
                            f"part of a complex value", "take np.real(x) (or np.abs(x)) first")
    from .shape import cast
    return cast(a, dtype, fname)


def pick_ddof(fname, a, ddof, correction):
    """``correction=`` (the array API's name) as an alias of ``ddof=``."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise keyword_error(fname, "correction", a, "ddof= and correction= were both given",
                            "pass one of them (correction= is the array API's name for ddof=)")
    return correction

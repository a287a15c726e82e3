"""NumPy code that writes a traced value into a plain array: errors that name the call.

``np.full(shape, v)`` and ``np.full_like(a, v)`` are not dispatched on the fill value
``v`` (NumPy's dispatchers look at ``like``/``a`` only), so with a traced ``v`` NumPy
runs its own body: it allocates a plain array and fills it in place with
``np.copyto`` (or first converts ``v`` with ``np.asarray``). The derivative would be
lost, so the call must fail; these helpers make the error name the function the
user called, its argument, and what to call instead (``dualad.numpy.full``,
``dualad.numpy.full_like``, which broadcast the traced value).

``np.copyto`` itself is dispatched (its source is a relevant argument): a traced
source or destination raises here; a traced ``where`` mask is a value (zero derivative).
"""
from __future__ import annotations

import sys

import numpy as np

from ...core.tracer import Box, shape_of
from ...core.primitive import implements
from ...core.tracer import primal_tree

__all__ = ["numpy_caller", "conversion_hint", "copyto"]

_ALTERNATIVES = {
    "full": "dualad.numpy.full(shape, fill_value)",
    "full_like": "dualad.numpy.full_like(a, fill_value) (or dualad.numpy.full(shape, "
                 "fill_value))",
}


def numpy_caller(depth=1):
    """The name of the NumPy function whose Python body is running the current call (the
    first frame outside dualad, if it is NumPy's), or None."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("dualad"):
        frame = frame.f_back
    if frame is None or not frame.f_globals.get("__name__", "").startswith("numpy"):
        return None
    return frame.f_code.co_name


def _fill_message(fname, value, dst_shape=None):
    if fname == "full_like":
        shape = "" if dst_shape is None else f" (shape {dst_shape})"
        why = f" and argument a a plain array{shape}: NumPy dispatches full_like on a only"
    else:
        why = ": NumPy's full is not dispatched on its fill value"
    return (f"numpy.{fname}: argument fill_value is a traced value of shape {shape_of(value)}"
            f"{why}, so it fills a plain array and the derivative would be lost. Use "
            f"{_ALTERNATIVES[fname]}, which keeps it")


def conversion_hint(box):
    """The message for ``np.asarray(box)`` run by NumPy's own ``full`` (its fill value, with
    no dtype given), or None for any other conversion. Call it from the ``__array__``
    method itself: the frame above that method is the one that asked for the array."""
    fname = numpy_caller(3)
    return _fill_message(fname, box) if fname in _ALTERNATIVES else None


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    """``np.copyto``: in place, so only plain arrays (a traced mask is a value)."""
    if not isinstance(dst, Box) and not isinstance(src, Box):
        return np.copyto(dst, primal_tree(src), casting=casting, where=primal_tree(where))
    fname = numpy_caller(2)
    if isinstance(src, Box) and fname in _ALTERNATIVES:
        raise TypeError(_fill_message(fname, src, shape_of(dst)))
    if isinstance(dst, Box):
        raise TypeError(f"numpy.copyto: argument dst is a traced value of shape {shape_of(dst)}:"
                        f" writing into it in place is not differentiable; build the result "
                        f"functionally, e.g. with dualad.numpy.where(mask, src, dst)")
    via = f" (called by numpy.{fname})" if fname else ""
    raise TypeError(f"numpy.copyto{via}: argument src is a traced value of shape "
                    f"{shape_of(src)}; writing it into a plain array (shape {shape_of(dst)}) in "
                    f"place would lose its derivative; build the result functionally, e.g. with "
                    f"dualad.numpy.where(mask, src, dst) or dualad.numpy.full")



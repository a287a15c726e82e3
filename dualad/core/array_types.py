"""ndarray subclasses whose arithmetic dualad does not follow: ``np.matrix``, masked arrays.

dualad's rules are written for plain arrays. Two NumPy subclasses change what the same
code means: for an ``np.matrix``, ``*`` and ``**`` are matrix products and every result
stays 2-d; for a masked array (``np.ma``), reductions skip the masked entries. Treated as
plain arrays they would give a gradient of another function (``np.sum(x * x)`` of a
matrix), so they are refused, as differentiable inputs (:func:`dualad.transforms.api.check_input`)
and as constants that meet a traced value inside a primitive
(:meth:`dualad.core.primitive.Primitive.__call__`), with a message that says what to write.

Only the error path costs anything: callers test ``type(x) is not np.ndarray`` (or that
``x`` is not one of the plain types) before :func:`refused_kind`. ``numpy.ma`` is not
imported here: without it loaded no masked array exists.
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["refused_kind", "input_error", "constant_error"]


def refused_kind(x):
    """``"matrix"``, ``"masked"`` or None: whether ``x`` is an array dualad refuses."""
    if isinstance(x, np.matrix):
        return "matrix"
    ma = sys.modules.get("numpy.ma")
    if ma is not None and isinstance(x, ma.MaskedArray):
        return "masked"
    return None


def _masked_count(x):
    n = int(np.count_nonzero(np.ma.getmaskarray(x)))
    return f"{n} masked {'entry' if n == 1 else 'entries'}"


def input_error(kind, api, argnum, x, where="", fname=None):
    """The TypeError for a differentiable input ``x`` of refused ``kind``."""
    of = f" of {fname}" if fname else ""
    head = f"{api}: argument {argnum}{where}{of} is "
    if kind == "matrix":
        return TypeError(
            head + f"a numpy.matrix of shape {np.shape(x)}; dualad differentiates plain "
            f"arrays only, and a matrix changes what the code means (x * x and x ** 2 are "
            f"matrix products, results stay 2-d), which dualad's rules do not follow: the "
            f"gradient would be that of another function. Pass np.asarray(x), and write "
            f"each matrix product the function means with @ (x @ x where x * x was meant "
            f"as one)")
    return TypeError(
        head + f"a numpy.ma.MaskedArray of shape {np.shape(x)} with {_masked_count(x)}; "
        f"dualad differentiates plain arrays only, and NumPy's masked reductions skip "
        f"entries that dualad's rules would differentiate. Pass the data "
        f"and the mask separately: np.ma.getdata(x) (or x.filled(value)) as the argument, "
        f"and mask = np.ma.getmaskarray(x) applied inside the function, e.g. "
        f"np.sum(np.where(mask, 0.0, x))")


def constant_error(kind, name, x):
    """The TypeError for a constant ``x`` of refused ``kind`` that met a traced value in
    the primitive (or NumPy function) ``name``."""
    head = f"{name}: a traced value met a constant "
    if kind == "matrix":
        return TypeError(
            head + f"numpy.matrix of shape {np.shape(x)}; NumPy gives a matrix its own "
            f"arithmetic (* is a matrix product, results stay 2-d), which dualad's rules "
            f"do not follow. Convert it where it is made, M = np.asarray(M), and write "
            f"x @ M where x * M was meant as a matrix product")
    return TypeError(
        head + f"numpy.ma.MaskedArray of shape {np.shape(x)} with {_masked_count(x)}; "
        f"NumPy's masked arithmetic and reductions skip masked entries, which "
        f"dualad's rules do not follow. Use its data, np.ma.getdata(m) (or m.filled(value)), "
        f"and apply the mask explicitly, e.g. np.where(np.ma.getmaskarray(m), 0.0, x * d) "
        f"with d = np.ma.getdata(m)")

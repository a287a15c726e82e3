"""NumPy's keyword arguments at the front end: each one keeps NumPy's meaning, or raises an
error that names the function, the keyword and the traced argument's shape, and says what
to write instead (:class:`~dualad.ops.core.keyword_args.KeywordError`, a ``TypeError``).

- :func:`call_function`: a dispatched NumPy function called with keywords. The dualad
  function takes NumPy's names; the data argument may be passed by name (``np.sum(a=x)``);
  keywords that only choose a memory layout or an array subclass (``order=``, ``subok=``,
  ``copy=``, ``device='cpu'``) change no value of an immutable traced value and are dropped
  where the dualad function does not take them; ``out=None`` is NumPy's default.
- :func:`call_ufunc`: a ufunc's ``__call__`` keywords. ``dtype=``/``signature=`` choose the
  loop: NumPy itself evaluates the call on the primal values (so its casting rules and
  errors apply), floating operands are cast to the loop's type before the traced call and
  the result to NumPy's output type; an integer or boolean output has derivative 0 (the
  value of a step function). ``casting=``, ``order=``, ``subok=`` change no value.
  ``where=mask`` without ``out=`` leaves the masked entries *uninitialized* in NumPy, so
  any value there would be arbitrary: it raises (unless the mask selects everything) and
  says to write ``np.where(mask, f(x), fill)``. The gufuncs' ``axes=``/``axis=``/
  ``keepdims=`` move the core axes to the end and back (checked against NumPy's shape).
- :func:`method`: the traced value's methods (``x.sum(where=...)``, ``x.std(correction=1)``)
  are the NumPy functions, so they take the same keywords.
- :func:`like_call`: ``np.zeros(3, like=x)`` (``like=`` only chooses the dispatch) builds
  the plain array NumPy would, a constant.
"""
from __future__ import annotations

import inspect
import re

import numpy as np

from ..ops.core.keyword_args import KeywordError, cast_for, is_all, keyword_error
from ..core.primitive import NUMPY_FUNCTIONS
from ..core.tracer import Box, primal_value, shape_of
from ..core.values import is_batched

__all__ = ["KeywordError", "call_function", "call_ufunc", "method", "like_call"]

# Keywords that choose a memory layout or an array subclass: a traced value is immutable
# (value semantics), so none of them changes a value.
_LAYOUT = ("order", "subok", "copy")
_ACCEPTS: dict = {}


def _accepts(fn):
    """(names of fn's keyword-passable parameters, whether it takes **kwargs)."""
    got = _ACCEPTS.get(fn)
    if got is None:
        try:
            params = inspect.signature(fn).parameters.values()
            got = ({p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                          p.KEYWORD_ONLY)},
                   any(p.kind == p.VAR_KEYWORD for p in params))
        except (TypeError, ValueError):   # no signature: let it take what it takes
            got = (set(), True)
        _ACCEPTS[fn] = got
    return got


def _numpy_first(func):
    """The name of NumPy's data argument (``a``, ``m``, ``x``, ...), or None."""
    try:
        first = next(iter(inspect.signature(func).parameters.values()))
    except (TypeError, ValueError, StopIteration):
        return None
    return first.name if first.kind == first.POSITIONAL_OR_KEYWORD else None


def traced_in(tree):
    """The first traced value in ``tree`` (nested lists, tuples, dicts), or None."""
    if isinstance(tree, Box):
        return tree
    if isinstance(tree, (list, tuple)):
        items = tree
    elif isinstance(tree, dict):
        items = tree.values()
    else:
        return None
    for t in items:
        found = traced_in(t)
        if found is not None:
            return found
    return None


def fname_of(func):
    mod = getattr(func, "__module__", None) or "numpy"
    if isinstance(func, np.ufunc):
        mod = "numpy" if getattr(np, func.__name__, None) is func else "scipy.special"
    elif mod.startswith("numpy") and not mod.startswith(("numpy.fft", "numpy.linalg")):
        mod = "numpy"
    return f"{mod}.{getattr(func, '__name__', repr(func))}"


def call_function(func, op, args, kwargs, name=None):
    """``op(*args, **kwargs)``, ``op`` the dualad implementation of the NumPy function
    ``func``, with each keyword given NumPy's meaning or a clear error."""
    names, varkw = _accepts(op)
    kwargs = dict(kwargs)
    dtype = kwargs.get("dtype")
    fname = name or fname_of(func)
    if kwargs.get("device") not in (None, "cpu"):
        raise keyword_error(fname, "device", traced_in((args, kwargs)), _reason("device"),
                            "leave device= out (or pass device='cpu')")
    if func is np.clip:   # np.clip passes the ufunc keywords on to its ufunc
        args, kwargs = _elementwise_keywords(fname, args, kwargs)
    for k in list(kwargs):
        if k in names:
            continue
        v = kwargs[k]
        if k == "out" and v is None or k == "like":   # NumPy's default; like= chose dispatch
            del kwargs[k]
        elif varkw:
            continue
        elif not args and k == _numpy_first(func):    # np.sum(a=x): the data by its name
            args = (kwargs.pop(k),)
        elif k in _LAYOUT or k == "device" and v in (None, "cpu"):
            del kwargs[k]
        elif k == "dtype":   # computed in the operands' type, then cast (_in_dtype)
            del kwargs[k]
        else:
            x = traced_in((args, kwargs))
            raise keyword_error(fname, k, x, _reason(k), _instead(fname, k))
    out = op(*args, **kwargs)
    if dtype is not None and ("dtype" in names or not varkw):
        out = _in_dtype(fname, out, dtype, traced_in((args, kwargs)))
    return out


def _in_dtype(fname, out, dtype, x):
    """The result of ``func(..., dtype=d)`` in dtype d, as NumPy's (a function that
    computes in its operands' type is cast at the end; an integer d raises, naming the
    traced argument ``x``)."""
    if isinstance(out, tuple):
        return tuple(_in_dtype(fname, o, dtype, x) for o in out)
    if not isinstance(out, Box) or np.result_type(primal_value(out)) == np.dtype(dtype):
        return out
    if np.dtype(dtype).kind not in "fc" and x is not None:
        cast_for(fname, x, dtype)   # raises: an integer result truncates the derivative
    return cast_for(fname, out, dtype)


def _reason(k):
    if k == "out":
        return "out= writes the result in place into an array, which cannot be traced"
    if k == "device":
        return "a traced value lives on the CPU (device='cpu' or None)"
    return f"{k}= is not implemented for traced values"


def _instead(fname, k):
    if k == "out":
        return "use the returned value instead (y = f(x))"
    return (f"call {fname} without {k}=, or compute what needs no derivative from the "
            f"primal value (dualad.extend.primal_value(x))")


def method(name, func):
    """The traced value's method ``x.name(...)``: NumPy's ``func(x, ...)`` (the ndarray
    method takes the function's arguments after the array, in the same order)."""
    def call(self, *args, **kwargs):
        op = NUMPY_FUNCTIONS[func]
        if not kwargs:
            return op(self, *args)
        return call_function(func, op, (self, *args), kwargs, name=f"ndarray.{name}")
    call.__name__ = name
    call.__doc__ = f"``x.{name}(...)`` = ``np.{func.__name__}(x, ...)``, NumPy's keywords included."
    return call


def reshape_method(self, *shape, order="C", copy=None, **kwargs):
    """``x.reshape(*shape, order=, copy=)`` (``shape=`` by name too). ``copy=`` chooses
    between a view and a copy, which have the same value."""
    if "shape" in kwargs:
        if shape:
            raise TypeError("ndarray.reshape: the shape was given twice (positionally and "
                            "as shape=)")
        shape = (kwargs.pop("shape"),)
    if kwargs:
        k = next(iter(kwargs))
        raise keyword_error("ndarray.reshape", k, self, f"{k}= is not a keyword of reshape",
                            "pass the shape, order= or copy=")
    from .. import ops
    return ops.reshape(self, shape[0] if len(shape) == 1 else shape, order)


def like_call(func, args, kwargs):
    """``func(..., like=x)`` of a function with no dualad rule: NumPy strips ``like=`` and
    dispatches here; when no traced value is among the arguments, the result is the plain
    array NumPy builds (a constant). Returns NotImplemented otherwise."""
    if traced_in((args, kwargs)) is not None:
        return NotImplemented
    return func(*args, **kwargs)


def _elementwise_keywords(fname, args, kwargs):
    """The ufunc keywords of a function that passes them to a ufunc (np.clip):
    ``dtype=`` casts the operand, ``where=`` as in :func:`call_ufunc`, the rest choose
    no value."""
    x = traced_in((args, kwargs))
    if not is_all(kwargs.pop("where", True)):
        raise _where_error(fname, x)
    for k in ("casting", "order", "subok"):
        kwargs.pop(k, None)
    dtype = kwargs.pop("dtype", None)
    signature = kwargs.pop("signature", None)
    if signature is not None:   # the loop's output type, as dtype= ('ddd->d': float64)
        out_type = (signature.split("->")[-1].strip() if isinstance(signature, str)
                    else signature[-1])
        try:
            dtype = dtype if out_type is None else np.dtype(out_type)
        except TypeError:
            raise keyword_error(fname, "signature", x, f"signature={signature!r} is not "
                                "understood", "pass dtype= instead") from None
    if dtype is not None:
        if np.dtype(dtype).kind == "c":
            raise keyword_error(fname, "dtype", x, "complex numbers are not ordered, so "
                                "clipping them (NumPy's lexicographic order) is not "
                                "differentiable", "clip the real parts or the magnitudes")
        args = list(args) or [kwargs.pop("a")]
        args[0] = cast_for(fname, args[0], dtype)
    return tuple(args), kwargs


def _where_error(fname, x):
    return keyword_error(
        fname, "where", x, "without out=, NumPy leaves the entries where the mask is "
        "False uninitialized (arbitrary values), so no derivative is defined there",
        f"write dualad.numpy.where(mask, {fname}(x), fill) (np.where works too) with the "
        f"value you mean in the other entries")


# --- ufuncs -------------------------------------------------------------------------------
_LOOP = ("dtype", "signature")
_GUFUNC = ("axes", "axis", "keepdims")


def call_ufunc(ufunc, op, inputs, kwargs, fill=None):
    """``ufunc(*inputs, **kwargs)`` on traced inputs (``out=`` already handled).

    ``fill``: for a caller that handles ``out=``, the values ``out`` holds (a tuple for
    several outputs). Then ``where=mask`` has NumPy's meaning, where(mask, f(x), fill):
    the derivative is f's where the mask is True and fill's elsewhere (the unselected
    entries of f are computed but selected away, so their infs do not reach a
    derivative). Without ``fill`` a mask raises (NumPy leaves those entries
    uninitialized)."""
    fname = fname_of(ufunc)
    x = traced_in(inputs)
    kwargs = dict(kwargs)
    where = kwargs.pop("where", True)
    mask = None
    if not is_all(where):
        if fill is None:
            raise _where_error(fname, x)
        if is_batched(where):
            raise keyword_error(fname, "where", x, "where= is a batched mask (under vmap), "
                                "which this keyword path does not batch",
                                f"write np.where(mask, {fname}(...), fill) instead")
        mask = np.asarray(primal_value(where))
        if mask.dtype != bool:
            raise keyword_error(fname, "where", x, f"where= must be a boolean mask, got "
                                f"dtype {mask.dtype}", "pass a boolean array, e.g. where=y != 0")
    core = {k: kwargs.pop(k) for k in _GUFUNC if k in kwargs}
    primals = [primal_value(i) for i in inputs]
    # NumPy decides the loop, the output types and every casting error on the values.
    with np.errstate(all="ignore" if mask is not None else None):
        ref = ufunc(*primals, **kwargs, **core)
    post = None
    if core:
        if not ufunc.signature:
            raise keyword_error(fname, next(iter(core)), x, "only generalized ufuncs take "
                                "axes=, axis=, keepdims=", "drop it")
        inputs, post = _core_axes(fname, ufunc, inputs, core, x)
    refs = ref if isinstance(ref, tuple) else (ref,)
    target = np.result_type(refs[0])
    if any(kwargs.get(k) is not None for k in _LOOP) and target.kind in "fc":
        inputs = [_to_loop(i, target) for i in inputs]
    loop = next((k for k in _LOOP if kwargs.get(k) is not None), None)
    if mask is not None:
        inputs = _selected_only(inputs, np.broadcast_to(mask, np.shape(refs[0])))
    try:
        with np.errstate(all="ignore" if mask is not None else None):
            res = op(*inputs)   # the unselected entries may divide by 0: selected away
    except (TypeError, NotImplementedError) as e:
        if loop is None:
            raise
        raise keyword_error(fname, loop, x, f"the {target} loop it selects is not "
                            f"differentiable here ({e})",
                            f"call {fname} without {loop}= (its real float64 loop)") from e
    if post is not None:
        res = post(res)
    outs = res if isinstance(res, tuple) else (res,)
    fixed = tuple(_to_output(fname, r, want, x) for r, want in zip(outs, refs))
    for r, want in zip(fixed, refs):
        if shape_of(r) != np.shape(want):
            raise keyword_error(fname, ", ".join(core) or "dtype", x,
                                f"the result's shape {shape_of(r)} differs from NumPy's "
                                f"{np.shape(want)}", "move the axes with np.moveaxis first")
    if mask is not None:
        from .. import ops
        fills = fill if isinstance(res, tuple) else (fill,)
        fixed = tuple(ops.where(mask, r, f) for r, f in zip(fixed, fills))
    return fixed if isinstance(res, tuple) else fixed[0]


def _selected_only(inputs, mask):
    """The inputs with their unselected entries replaced by a selected one (a point of the
    function's domain): f there is selected away by ``where``, and so is its derivative,
    but an inf derivative at a pole (1/b at b = 0) times the zero cotangent would be NaN.
    An input broadcast along the output keeps its values."""
    if not mask.any():
        return inputs
    first = np.unravel_index(np.argmax(mask), mask.shape)
    from .. import ops
    out = []
    for v in inputs:
        if np.shape(primal_value(v)) == mask.shape:
            v = ops.where(mask, v, np.asarray(primal_value(v))[first])
        out.append(v)
    return out


def _to_loop(v, target):
    """A floating operand in the loop's floating type (integers stay as NumPy reads them)."""
    src = np.result_type(primal_value(v))
    if src == target or src.kind not in "fc" or (src.kind == "c" and target.kind == "f"):
        return v
    from ..ops.core.shape import cast
    return cast(v, target)


def _to_output(fname, r, want, x):
    dt, want_dt = np.result_type(primal_value(r)), np.result_type(want)
    if dt == want_dt:
        return r
    if want_dt.kind in "biu" or not isinstance(r, Box):   # a step function's value: ∂ = 0
        return want
    if want_dt.kind in "fc" and not (dt.kind == "c" and want_dt.kind == "f"):
        from ..ops.core.shape import cast
        return cast(r, want_dt, fname)
    raise keyword_error(fname, "dtype", x, f"the result would be cast from {dt} to {want_dt}",
                        "take np.real(z) or np.abs(z) explicitly")


def _core_axes(fname, ufunc, inputs, core, x):
    """Move each operand's core axes (``axes=``/``axis=``) to the end, where the dualad
    function expects them; ``post`` moves the output's back (and keeps the reduced axis
    for ``keepdims=True``)."""
    from .. import ops
    nin = ufunc.nin
    out_core = len(re.findall(r"\w", ufunc.signature.split("->")[1].replace("?", "")))
    axes, axis, keepdims = core.get("axes"), core.get("axis"), bool(core.get("keepdims"))
    if axis is not None:
        axes = [(axis,)] * nin + ([(axis,)] if out_core else [])
    axes = [tuple(a) if isinstance(a, (tuple, list)) else (a,) for a in (axes or [])]
    inputs = list(inputs)
    for i in range(min(nin, len(axes))):
        k = len(axes[i])
        inputs[i] = ops.moveaxis(inputs[i], axes[i], tuple(range(-k, 0)))

    def post(r):
        if len(axes) > nin and axes[nin]:
            k = len(axes[nin])
            r = ops.moveaxis(r, tuple(range(-k, 0)), axes[nin])
        if keepdims and not out_core:
            r = ops.expand_dims(r, axes[0][0] if axes else -1)
        return r
    return inputs, post

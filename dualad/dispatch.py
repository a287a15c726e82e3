"""The NumPy front end: plain ``numpy`` calls on traced values reach the registry.

Boxes implement ``__array_ufunc__`` (``np.sin(x)``, ``x + y``) and
``__array_function__`` (``np.sum(x, axis=0)``, ``np.concatenate``) by looking
the NumPy callable up in the tables that the declarations fill
(:func:`dualad.primitive.implements`, a primitive's ``implements=``). A callable
with no entry raises an error that names it: a derivative is never dropped
silently.
"""
from __future__ import annotations

import math

import numpy as np

from . import casts, objects, ops, scipy_errors
from .tape import Var, VJPTrace, operator_method, power_method, record
from .tracer import PLAIN_TYPES, Box, note_decision, primal_value, shape_of, truth
from .primitive import NUMPY_FUNCTIONS, NUMPY_UFUNCS, Primitive, implements

# The dispatch tables, filled by the declarations (``implements``) beside each function.
UFUNCS = NUMPY_UFUNCS
FUNCTIONS = NUMPY_FUNCTIONS


@implements(np.where)
def _where(condition, x=None, y=None):
    """``np.where``: three arguments select (differentiable in x and y, the condition is a
    value); one argument gives the indices of the true entries, as NumPy does."""
    if x is None and y is None:
        return np.where(primal_value(condition))
    if x is None or y is None:
        raise TypeError("where: pass both x and y (np.where(cond, x, y)) or neither "
                        "(np.where(cond) returns the indices of the true entries)")
    return ops.where(primal_value(condition), x, y)


def _no_out(fn, out):
    if out is not None:
        raise TypeError(f"numpy.{fn}(..., out=...) writes in place into an array, which cannot "
                        f"be traced; use the returned value instead")


def _mask(fn, a, where):
    """The ``where=`` mask of a reduction as a plain boolean array of ``a``'s shape."""
    mask = np.asarray(primal_value(where))
    if mask.dtype != bool:
        raise TypeError(f"numpy.{fn}: where= must be a boolean mask, got dtype {mask.dtype} "
                        f"and shape {mask.shape}")
    try:
        return np.broadcast_to(mask, shape_of(a))
    except ValueError:
        raise ValueError(f"numpy.{fn}: the where= mask of shape {mask.shape} does not broadcast "
                         f"to the array's shape {shape_of(a)}") from None


@implements(np.sum)
def np_sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``np.sum`` with NumPy's signature. ``where=mask`` sums the selected entries only:
    Σ_{i: mask_i} a_i = Σ_i where(mask, a, 0)_i, linear in ``a`` (cotangent ū·mask)."""
    _no_out("sum", out)
    if where is not None:
        a = ops.where(_mask("sum", a, where), a, 0.0)
    s = ops.sum(a, axis, keepdims, dtype)
    return s if initial is None else s + primal_value(initial)


@implements(np.mean)
def np_mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """``np.mean`` with NumPy's signature. ``where=mask`` averages the selected entries:
    Σ_i where(mask, a, 0)_i / Σ_i mask_i (NaN where nothing is selected, as NumPy)."""
    _no_out("mean", out)
    if dtype is not None and not np.issubdtype(dtype, np.inexact):
        raise TypeError(f"numpy.mean: dtype={dtype} would make the result not differentiable")
    if where is None:
        m = ops.mean(a, axis, keepdims)
    else:
        mask = _mask("mean", a, where)
        count = np.sum(mask, axis=axis, keepdims=keepdims, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = ops.sum(ops.where(mask, a, 0.0), axis, keepdims) / count
    return m if dtype is None else _astype(m, dtype)


@implements(np.zeros_like)
def _zeros_like(a, dtype=None, *args, **kwargs):
    return np.zeros(shape_of(a), dtype=dtype or primal_value(a).dtype)


@implements(np.ones_like)
def _ones_like(a, dtype=None, *args, **kwargs):
    return np.ones(shape_of(a), dtype=dtype or primal_value(a).dtype)


def _passthrough(fn):
    """Functions of the value alone (shapes, arg-indices): zero derivative (their results
    are decisions on the values: logged, see tracer.note_decision)."""
    def call(*args, **kwargs):
        out = fn(*[primal_value(a) for a in args],
                 **{k: primal_value(v) for k, v in kwargs.items()})
        note_decision(args, fn.__name__, out)
        return out
    return call


implements(np.shape)(shape_of)
implements(np.ndim)(lambda a: len(shape_of(a)))
implements(np.size)(lambda a, axis=None: math.prod(shape_of(a)) if axis is None
                    else shape_of(a)[axis])
for _fn in (np.argmax, np.argmin, np.argsort, np.nonzero, np.isclose, np.allclose,
            np.result_type):
    implements(_fn)(_passthrough(_fn))


def _name(fn):
    mod = getattr(fn, "__module__", None) or "numpy"
    if mod.startswith("numpy") and not mod.startswith(("numpy.fft", "numpy.linalg")):
        mod = "numpy"
    return f"{mod}.{getattr(fn, '__name__', repr(fn))}"


def _shapes(args):
    return ", ".join(str(shape_of(a)) for a in args if isinstance(a, Box))


def no_rule(fn, args):
    return NotImplementedError(
        f"no derivative rule for {_name(fn)} (called on traced values of shape "
        f"{_shapes(args)}); dualad never drops a derivative silently. Express it with "
        f"supported operations or declare it with @dualad.primitive")


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if kwargs.get("out") is not None:
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=...) writes in place into an "
                        f"array, which cannot be traced; use the returned value instead")
    kwargs.pop("out", None)
    if method == "__call__":
        op = UFUNCS.get(ufunc)
        if op is not None:
            if kwargs:
                raise TypeError(f"numpy.{ufunc.__name__}: keyword arguments "
                                f"{sorted(kwargs)} are not supported on traced values")
            return op(*inputs)
    elif method == "reduce" and ufunc in (np.add, np.maximum, np.minimum, np.multiply):
        red = {np.add: ops.sum, np.maximum: ops.max, np.minimum: ops.min,
               np.multiply: ops.prod}[ufunc]
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        if kwargs.get("dtype") is None:
            kwargs.pop("dtype", None)
        if ufunc is np.add and set(kwargs) <= {"where", "initial"}:
            return np_sum(inputs[0], axis, None, None, keepdims, **kwargs)
        if kwargs:   # where=, initial=, a dtype: dropping them would change the value
            raise TypeError(f"numpy.{ufunc.__name__}.reduce: keyword arguments "
                            f"{sorted(kwargs)} are not supported on traced values (shape "
                            f"{shape_of(inputs[0])}); np.add.reduce takes where= and initial=, "
                            f"or select the entries first (dualad.numpy.where)")
        return red(inputs[0], axis=axis, keepdims=keepdims)
    raise no_rule(ufunc if method == "__call__" else getattr(ufunc, method), inputs)


def array_function(self, func, types, args, kwargs):
    op = FUNCTIONS.get(func)
    if op is None:
        raise no_rule(func, args)
    return op(*args, **kwargs)


def _to_array_error(self, *args, **kwargs):
    """``x.item()``, ``x.tolist()``, ``np.asarray(x, dtype=float)``: a plain number or array
    would lose the derivative, so these raise (naming the SciPy function that asked, if
    one did: dualad.scipy_errors)."""
    hint = ops.numpy.inplace.conversion_hint(self)   # np.full(shape, traced): name np.full
    if hint:
        raise TypeError(hint)
    err = scipy_errors.scipy_error(self, "np.asarray", depth=2)
    if err is not None:
        raise err
    raise TypeError(
        f"cannot convert a traced value of shape {self.shape} to a plain NumPy array: its "
        f"derivative would be lost. Use dualad.numpy functions (e.g. dualad.numpy.array "
        f"or dualad.numpy.stack to build an array from traced values) instead of "
        f"np.asarray(x, dtype=float)/float()/x.item()/x.tolist(). {_assign_hint()}")


def _array(self, dtype=None, copy=None):
    """``__array__``: what NumPy's C code gets when it converts a traced value.

    - no dtype (``np.array([x, y])``, ``np.r_[x, 1.0]``, ``np.mean([a, b])``): an object
      array of traced scalars of ``x``'s shape (dualad.objects), restacked into one traced
      array wherever it meets dualad again;
    - an integer or boolean dtype (``np.int64(x)``, ``np.asarray(x, dtype=int)``): the
      plain integers of the primal, zero derivative (a logged decision, as ``astype(int)``);
    - asked by scipy.sparse (``A @ x``): a 0-d object array holding ``x`` itself, so that
      the sparse operator returns NotImplemented and Python calls ``x.__rmatmul__``;
    - asked by other SciPy code, or with a floating dtype (``out[i] = x`` into a float
      array): an error that names the SciPy function and its dualad.scipy replacement, or
      says what to write instead.
    """
    hint = ops.numpy.inplace.conversion_hint(self)   # np.full(shape, traced): name np.full
    if hint:
        raise TypeError(hint)
    caller = scipy_errors.caller_module(2)
    if caller.startswith("scipy.sparse"):
        out = np.empty((), dtype=object)
        out[()] = self
        return out
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind in "iub":
            return casts.integers(self, dtype, "np.asarray")
    if dtype is not None and dtype != objects.OBJECT or caller == "scipy" or \
            caller.startswith("scipy."):
        _to_array_error(self)
    return objects.object_array(self)


# NumPy's ``out[i] = x`` (out a plain array) converts x with float() (0-d x) or __array__ and,
# for a 0-d box, reports "setting an array element with a sequence" caused by this message.
_ASSIGN_HINT = ("If it came from assigning a traced value into a plain NumPy array "
                "(out[i] = x), build the array from its pieces instead: "
                "dualad.numpy.stack([...]) or dualad.numpy.array([...]) of the traced entries, "
                "or dualad.numpy.where(mask, x, out) (functional index updates are planned in "
                "issue 17)")


def _assign_hint():
    # ASSIGN-HINT: the lead switches this to the "updates" helper's assignment_hint() once
    # their branch lands; until then today's text.
    return _ASSIGN_HINT


def _conversion_error(kind):
    """``float(x)``, ``complex(x)`` of a traced value: they would lose a nonzero derivative,
    so they raise (naming the SciPy function that asked, if one did)."""
    def convert(self):
        hint = ops.numpy.inplace.conversion_hint(self)
        if hint:
            raise TypeError(hint)
        err = scipy_errors.scipy_error(self, f"{kind}()", depth=2)
        if err is not None:
            raise err
        raise TypeError(
            f"cannot convert a traced value of shape {self.shape} with {kind}(): the result "
            f"would be a plain number and its derivative would be lost. Keep computing with "
            f"the traced value "
            f"(NumPy functions on it stay differentiable). For a number that needs no "
            f"derivative (a printout, a tolerance test) take it from the primal value: "
            f"{kind}(dualad.tracer.primal_value(x)). {_assign_hint()}")
    convert.__name__ = f"__{kind}__"
    return convert


def _setitem(self, idx, value):
    raise TypeError(
        f"in-place assignment x[...] = value into a traced array of shape {self.shape} is not "
        f"differentiable; build the result functionally, e.g. with dualad.numpy.where(mask, "
        f"value, x) or dualad.numpy.concatenate")


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a traced 0-d value")
    return (ops.index(self, i) for i in range(self.shape[0]))


def _getitem(self, idx):
    if type(idx) is int:  # x[i] in a Python loop
        if type(self) is Var and self._trace.alive:
            # Reading x[i] again gives the node recorded the first time (values on a tape
            # never change): a loop that reads each x[i] several times records it once.
            try:
                items = self.items
            except AttributeError:   # the first x[i] of this Var (the slot starts unset)
                items = self.items = {}
            y = items.get(idx)
            if y is None or y.args is None:     # not read yet, or freed by a sweep
                xv = self.value
                if self._trace.__class__ is VJPTrace and xv.__class__ is np.ndarray:
                    # an entry into the one recording function, as Var's operators have:
                    # x[i] of a plain array, without Primitive.__call__ and process's
                    # unboxing loop (3% of bench/instructions.py's Rosenbrock)
                    y = record(self._trace, ops.getitem, (self,), {"idx": (idx,)}, (xv,),
                               (0,), xv[idx])
                else:
                    y = ops.getitem(self, idx=(idx,))
                items[idx] = y
            return y
        return ops.getitem(self, idx=(idx,))
    return ops.index(self, idx)


def _power(self, other):
    """``x ** y`` of a box: ``square(x)`` for a scalar exponent 2, as NumPy's
    ``ndarray.__pow__`` computes it (its fast scalar power), else ``power``."""
    if (other.__class__ is int or other.__class__ is float) and other == 2:
        return ops.square(self)
    return ops.power(self, other)


def _binary(op, reflected=False):
    """The operator method of ``op``: a call of the primitive (or composition), which
    finds the top trace among the operands."""
    if reflected:
        return lambda self, other: op(other, self)
    return lambda self, other: op(self, other)


def _install():
    B = Box
    B.__array_ufunc__ = array_ufunc
    B.__array_function__ = array_function
    B.__array__ = _array
    B.__float__ = _conversion_error("float")
    B.__int__ = casts.to_int
    B.__complex__ = _conversion_error("complex")
    B.__index__ = casts.to_index
    B.__round__ = casts.to_round
    objects.install(B)   # object arrays of traced scalars (np.array([x, y])): dualad.objects
    # A traced value is immutable (value semantics), so a copy of it is itself: copying a
    # params dict with copy.deepcopy inside grad keeps every derivative.
    B.__copy__ = lambda self: self
    B.__deepcopy__ = lambda self, memo: self
    B.__hash__ = object.__hash__
    B.__bool__ = truth   # a branch on a value: logged for the sparse pattern check
    B.__iter__ = _iter
    B.__setitem__ = _setitem
    B.__getitem__ = _getitem
    for name, op in [("add", ops.add), ("sub", ops.subtract), ("mul", ops.multiply),
                     ("truediv", ops.divide), ("pow", ops.power), ("matmul", ops.matmul)]:
        setattr(B, f"__{name}__", _binary(op))
        setattr(B, f"__r{name}__", _binary(op, reflected=True))
        if isinstance(op, Primitive):  # scalar arithmetic on a tape: see operator_method
            setattr(Var, f"__{name}__", operator_method(op))
            setattr(Var, f"__r{name}__", operator_method(op, reflected=True))
    B.__pow__ = _power                                    # x ** 2 is square(x), as in NumPy
    Var.__pow__ = power_method(ops.power, ops.square)     # the same, on the tape's fast entry
    for name, op in [("lt", ops.less), ("le", ops.less_equal), ("gt", ops.greater),
                     ("ge", ops.greater_equal), ("eq", ops.equal), ("ne", ops.not_equal)]:
        setattr(B, f"__{name}__", _binary(op))
    B.__neg__ = lambda self: ops.negative(self)
    B.__pos__ = lambda self: self
    B.__abs__ = lambda self: ops.absolute(self)
    B.T = property(lambda self: ops.transpose(self))
    B.mT = property(lambda self: ops.swapaxes(self, -1, -2))
    B.sum = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: np_sum(
        self, axis, dtype, out, keepdims, **kw)
    B.mean = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: np_mean(
        self, axis, dtype, out, keepdims, **kw)
    B.var = lambda self, axis=None, ddof=0, keepdims=False: ops.var(self, axis, ddof, keepdims)
    B.std = lambda self, axis=None, ddof=0, keepdims=False: ops.std(self, axis, ddof, keepdims)
    B.max = lambda self, axis=None, keepdims=False: ops.max(self, axis, keepdims)
    B.min = lambda self, axis=None, keepdims=False: ops.min(self, axis, keepdims)
    B.prod = lambda self, axis=None, keepdims=False: ops.prod(self, axis, keepdims)
    B.cumsum = lambda self, axis=None: ops.cumsum(self, axis)
    B.reshape = lambda self, *shape, order="C": ops.reshape(
        self, shape[0] if len(shape) == 1 else shape, order)
    B.ravel = lambda self: ops.ravel(self)
    B.flatten = lambda self: ops.ravel(self)
    B.squeeze = lambda self, axis=None: ops.squeeze(self, axis)
    B.transpose = lambda self, *axes: ops.transpose(
        self, None if not axes else (axes[0] if len(axes) == 1 else axes))
    B.swapaxes = lambda self, a, b: ops.swapaxes(self, a, b)
    B.dot = lambda self, other: ops.dot(self, other)
    B.clip = lambda self, a_min=None, a_max=None: ops.clip(self, a_min, a_max)
    B.diagonal = lambda self, offset=0, axis1=0, axis2=1: ops.diagonal(self, offset, axis1,
                                                                       axis2)
    B.trace = lambda self, offset=0: ops.trace(self, offset)
    B.item = _to_array_error
    B.tolist = _to_array_error
    B.astype = _astype
    for name, method in ops.numpy.BOX_METHODS.items():  # cumprod, round, take, %, //, ...
        setattr(B, name, method)
    B.real = property(lambda self: ops.core.complex_numbers.real(self))
    B.imag = property(lambda self: ops.core.complex_numbers.imag(self))
    B.conj = B.conjugate = lambda self: ops.core.complex_numbers.conj(self)


def _astype(self, dtype, *args, **kwargs):
    """``x.astype(dtype)``: floating and complex dtypes keep the derivative; integer and
    boolean ones (``(x*0).astype(int)`` for indexing) give plain integers, zero derivative
    (logged, see :func:`dualad.casts.integers`); other dtypes raise."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return casts.integers(self, dtype, "astype")
    if not np.issubdtype(dtype, np.floating) and not np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"astype({dtype}) of a traced value of shape {self.shape} would drop "
                        f"its derivative; only floating and complex dtypes are differentiable "
                        f"(integer and boolean casts give plain values with zero derivative)")
    if dtype == self.dtype:
        return self
    if dtype.kind == "c" and self.dtype.kind == "f" and dtype.itemsize >= 2 * self.dtype.itemsize:
        return ops.core.complex_numbers.to_complex(self, dtype)  # real into complex: cotangent Re ū
    if dtype.kind == "f" and self.dtype.kind == "c":
        raise TypeError(f"astype({dtype}) of a complex traced value of shape {self.shape} would "
                        f"discard its imaginary part; take np.real(z) (or np.abs(z)) explicitly")
    from .ops.core.shape import cast   # float <-> float (or complex <-> complex): rounds
    return cast(self, dtype)


_install()

"""The NumPy front end: plain ``numpy`` calls on traced values reach the registry.

Boxes implement ``__array_ufunc__`` (``np.sin(x)``, ``x + y``) and
``__array_function__`` (``np.sum(x, axis=0)``, ``np.concatenate``) by looking
the NumPy callable up in the tables that the declarations fill
(:func:`dualad.core.primitive.implements`, a primitive's ``implements=``). A callable
with no entry raises an error that names it: a derivative is never dropped
silently.
"""
from __future__ import annotations

import math
import sys
from functools import partial

import numpy as np

from . import casts, inplace, objects, scipy_errors
from .. import ops
from ..transforms import stop
from ..interpreters.reverse.tape import Var, VJPTrace, operator_method, power_method, record
from ..interpreters.staging.sharing import frozen
from ..core.tracer import PLAIN_TYPES, Box, note_decision, primal_value, shape_of, truth
from ..interpreters.batching.tracer import note_value, only_batched
from ..core.values import is_batched, map_value, per_example, staged_value
from ..core.primitive import NUMPY_FUNCTIONS, NUMPY_UFUNCS, Primitive, implements
from ..ops.core.keyword_args import cast_for, mask_of, no_out
from . import keywords

__all__ = ["UFUNCS", "FUNCTIONS", "np_sum", "np_mean", "no_rule", "array_ufunc", "array_function"]

# The dispatch tables, filled by the declarations (``implements``) beside each function.
UFUNCS = NUMPY_UFUNCS
FUNCTIONS = NUMPY_FUNCTIONS
# Their lookups at a plain dict's speed; a miss asks the table itself, which first declares
# the lazily loaded families (scipy.special's ufuncs, numpy.linalg: dualad.primitive).
_ufunc_rule = dict.get.__get__(UFUNCS)
_function_rule = dict.get.__get__(FUNCTIONS)


@implements(np.where)
def _where(condition, x=None, y=None):
    """``np.where``: three arguments select (differentiable in x and y, the condition is a
    value); one argument gives the indices of the true entries, as NumPy does."""
    if x is None and y is None:
        return np.where(primal_value(condition)) if not is_batched(condition) \
            else per_example(np.where, (condition,), {}, "np.where(condition)")
    if x is None or y is None:
        raise TypeError("where: pass both x and y (np.where(cond, x, y)) or neither "
                        "(np.where(cond) returns the indices of the true entries)")
    return ops.where(staged_value(condition), x, y)   # batched stays batched, jit recorded


def _no_out(fn, out, a=None):
    no_out(f"numpy.{fn}", out, a)


@implements(np.sum)
def np_sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """``np.sum`` with NumPy's signature. ``where=mask`` sums the selected entries only:
    Σ_{i: mask_i} a_i = Σ_i where(mask, a, 0)_i, linear in ``a`` (cotangent ū·mask);
    ``dtype=`` a floating accumulation type (see ops/core/keyword_args.py)."""
    _no_out("sum", out, a)
    a = cast_for("numpy.sum", a, dtype)
    mask = mask_of("numpy.sum", a, where)
    if mask is not None:
        a = ops.where(mask, a, 0.0)
    s = ops.sum(a, axis, keepdims)
    return s if initial is None else s + initial


@implements(np.mean)
def np_mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """``np.mean`` with NumPy's signature. ``where=mask`` averages the selected entries:
    Σ_i where(mask, a, 0)_i / Σ_i mask_i (NaN where nothing is selected, as NumPy)."""
    _no_out("mean", out, a)
    a = cast_for("numpy.mean", a, dtype)
    mask = mask_of("numpy.mean", a, where)
    if mask is None:
        return ops.mean(a, axis, keepdims)
    dt = np.result_type(primal_value(a), np.float16)
    if isinstance(mask, Box):   # a batched mask (vmap): a count per example
        count = ops.sum(ops.where(mask, dt.type(1), dt.type(0)), axis, keepdims)
    else:
        count = np.sum(mask, axis=axis, keepdims=keepdims, dtype=dt)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ops.sum(ops.where(mask, a, 0.0), axis, keepdims) / count


@implements(np.zeros_like)
def _zeros_like(a, dtype=None, *args, **kwargs):
    return inplace.constant_like(a, np.zeros, dtype, *args, **kwargs)


@implements(np.ones_like)
def _ones_like(a, dtype=None, *args, **kwargs):
    return inplace.constant_like(a, np.ones, dtype, *args, **kwargs)


def _passthrough(fn):
    """Functions of the value alone (shapes, arg-indices): zero derivative (their results
    are decisions on the values: logged, see tracer.note_decision)."""
    def call(*args, **kwargs):
        if any(is_batched(a) for a in (*args, *kwargs.values())):
            out = per_example(fn, args, kwargs)   # under vmap: one result per example
            note_value(args, fn.__name__, out)
            return out
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
    """``fn``'s public name: ``numpy.sin``, ``numpy.linalg.det``, ``scipy.special.erf``.
    A ufunc has no ``__module__``: it is looked up in NumPy, then in the loaded modules
    (scipy.special's ufuncs), so the name is where the user found it."""
    name = getattr(fn, "__name__", repr(fn))
    mod = getattr(fn, "__module__", None)
    if mod is None and isinstance(fn, np.ufunc):
        mod = _ufunc_module(fn, name)
    mod = mod or "numpy"
    if mod.startswith("numpy") and not mod.startswith(("numpy.fft", "numpy.linalg")):
        mod = "numpy"
    return f"{mod}.{name}"


def _ufunc_module(fn, name):
    """The public module holding the ufunc ``fn`` (error path only: a walk of sys.modules)."""
    if getattr(np, name, None) is fn:
        return "numpy"
    for mod_name in ("scipy.special", *sorted(sys.modules)):
        mod = sys.modules.get(mod_name)
        if mod is not None and not any(p.startswith("_") for p in mod_name.split(".")) \
                and getattr(mod, name, None) is fn:
            return mod_name
    return None


def _shapes(args):
    return ", ".join(str(shape_of(a)) for a in args if isinstance(a, Box))


def no_rule(fn, args):
    name = _name(fn)
    return NotImplementedError(
        f"no derivative rule for {name} (called on traced values of shape "
        f"{_shapes(args)}); dualad never drops a derivative silently. Express it with "
        f"supported operations, or give it a rule: declare a primitive that computes it "
        f"(@dualad.primitive on a function calling {name}, with its derivative from "
        f"defvjp/defjvp/defderiv) and register it for {name} with "
        f"@dualad.extend.implements({name}), so that {name}(x) on traced values reaches it "
        f"(docs/guide_core.md)")


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if method == "at" or kwargs.get("out") is not None:   # in place: dualad.frontend.inplace
        return inplace.ufunc_update(ufunc, method, inputs, kwargs, partial(array_ufunc, self))
    kwargs.pop("out", None)
    if method == "__call__":
        op = _ufunc_rule(ufunc)
        if op is None:
            op = UFUNCS.get(ufunc)
        if op is not None:
            if kwargs:   # where=, dtype=, casting=, axes=, ...: NumPy's meaning or an error
                return keywords.call_ufunc(ufunc, op, inputs, kwargs)
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
    fn = ufunc if method == "__call__" else getattr(ufunc, method)
    return _unruled(fn, inputs, kwargs)


def _unruled(fn, args, kwargs):
    """No rule: under dualad.jit alone the values can be used (guarded); else raise."""
    from ..interpreters.staging.unruled import run_on_values
    return run_on_values(fn, args, kwargs, no_rule(fn, args))


def array_function(self, func, types, args, kwargs):
    op = _function_rule(func)
    if op is None:
        op = FUNCTIONS.get(func)
    if op is None:
        built = keywords.like_call(func, args, kwargs)   # np.zeros(3, like=x): a constant
        if built is NotImplemented:
            return _unruled(func, args, kwargs)
        return built
    if kwargs:
        return keywords.call_function(func, op, args, kwargs)
    return op(*args)


def _to_array_error(self, *args, **kwargs):
    """``x.item()``, ``x.tolist()``, ``np.asarray(x, dtype=float)``: a plain number or array
    would lose the derivative, so these raise (naming the SciPy function that asked, if
    one did: dualad.frontend.scipy_errors)."""
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
      array of traced scalars of ``x``'s shape (dualad.frontend.objects), restacked into one traced
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
    if caller.startswith("scipy.sparse") and _sparse_matmul_caller():
        return _object_scalar(self)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind in "iub":
            return casts.integers(self, dtype, "np.asarray")
    if dtype is not None and dtype != objects.OBJECT or caller == "scipy" or \
            caller.startswith("scipy."):
        _to_array_error(self)
    return objects.object_array(self)


def _sparse_matmul_caller():
    """``A @ x`` with a scipy.sparse A asks ``np.asanyarray(x)``: a 0-d object array makes it
    return NotImplemented, so Python calls ``x.__rmatmul__(A)`` (the sparse product).
    spmatrix's ``A * x`` (a matrix product, through ``_matmul_dispatch``) does the same: the
    traced value's ``__rmul__`` sends a sparse operand to dualad.scipy.sparse._operators.
    sparray's ``A * x`` and ``A.multiply(x)`` raise, naming ``dualad.scipy.sparse.multiply``.
    (Called by ``__array__`` when a scipy.sparse module asked: the frame two up.)"""
    caller = sys._getframe(2)
    names, frame = set(), caller
    for _ in range(3):            # the method, its dispatcher, the operator that called it
        if frame is None:
            break
        names.add(frame.f_code.co_name)
        frame = frame.f_back
    if caller.f_code.co_name == "_matmul_dispatch":
        # A @ x, and spmatrix's A * x (its * is the matrix product): the traced value's
        # reflected operator computes the sparse product (dualad.scipy.sparse._operators)
        return True
    if names & {"__mul__", "__rmul__", "multiply", "_multiply_2d_with_broadcasting"}:
        raise TypeError("a scipy.sparse matrix times a traced value with * or multiply: "
                        "write A @ x for the matrix product (spmatrix's *), or "
                        "dualad.scipy.sparse.multiply(A, x) for the elementwise product "
                        "(sparray's *, A.multiply(x))")
    if caller.f_code.co_name == "dot":   # coo's n-D dot raises on what it cannot read
        raise TypeError("coo_array.dot / coo_matrix.dot cannot take a traced value; write "
                        "A @ x (or convert: A.tocsr().dot(x))")
    return False


def _object_scalar(x):
    out = np.empty((), dtype=object)
    out[()] = x
    return out


def _assign_hint():
    """NumPy's ``out[i] = x`` (out a plain array) converts x with float() (0-d x) or
    __array__, which raise: their messages end with the two ways to write it."""
    return ("If it came from assigning a traced value into a plain NumPy array "
            "(out[i] = x): " + inplace.assignment_hint())


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
        error = TypeError(
            f"cannot convert a traced value of shape {self.shape} with {kind}(): the result "
            f"would be a plain number and its derivative would be lost. Keep computing with "
            f"the traced value "
            f"(NumPy functions on it stay differentiable). For a number that needs no "
            f"derivative (a printout, a tolerance test) take it from the primal value: "
            f"{kind}(dualad.extend.primal_value(x)). {_assign_hint()}")
        error._dualad_conversion = True      # read by inplace.raise_assignment_error
        raise error
    convert.__name__ = f"__{kind}__"
    return convert


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
                indexed = getattr(self._trace, "indexed", None)
                if indexed is not None:   # cleared when the trace stops (VJPTrace.stop)
                    indexed.append(self)
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
                if xv.ndim > 1:   # a row of a matrix is a view of it (see dualad.frontend.inplace)
                    inplace.note_view(self, idx, y)
            return y
        y = ops.getitem(self, idx=(idx,))
    elif idx.__class__ is tuple and type(self) is Var and self._trace.shared is not None:
        return _shared_index(self, idx)
    else:
        y = ops.index(self, idx)
    inplace.note_view(self, idx, y)
    return y


def _shared_index(x, idx):
    """``x[idx]`` on a tape that shares its nodes (under dualad.jit, dualad.interpreters.staging.sharing): the
    node recorded the first time for this ``x`` and index (``A[r, c]`` read along every
    path of a recursion), without normalizing the index again."""
    key = frozen(idx)
    if key is None:
        y = ops.index(x, idx)
    else:
        shared = x._trace.shared
        key = ("index", id(x), key)
        y = shared.get(key)
        if y is not None and y.args is not None:
            return y
        y = ops.index(x, idx)
        if y.__class__ is Var:
            shared[key] = y
    inplace.note_view(x, idx, y)
    return y


def _power(self, other):
    """``x ** y`` of a box: ``square(x)`` for a scalar exponent 2, as NumPy's
    ``ndarray.__pow__`` computes it (its fast scalar power), else ``power``."""
    if (other.__class__ is int or other.__class__ is float) and other == 2:
        return ops.square(self)
    return ops.power(self, other)


def _sparse_operand(name, x, other, reflected):
    from ..scipy.sparse._operators import is_sparse, sparse_operand   # imports dualad.scipy
    if not is_sparse(other):
        return None
    return sparse_operand(name, x, other, reflected)


def _binary(op, reflected=False, name=None):
    """The operator method of ``op``: a call of the primitive (or composition), which
    finds the top trace among the operands. A SciPy sparse operand goes to
    :func:`dualad.scipy.sparse._operators.sparse_operand` (its operators are SciPy's)."""
    def method(self, other):
        if name is not None and other.__class__ not in PLAIN_TYPES and \
                not isinstance(other, Box) and hasattr(other.__class__, "tocsr"):
            out = _sparse_operand(name, self, other, reflected)
            if out is not None:
                return out
        return op(other, self) if reflected else op(self, other)
    return method


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
    objects.install(B)   # object arrays of traced scalars (np.array([x, y])): dualad.frontend.objects
    B.__hash__ = object.__hash__
    B.__bool__ = truth   # a branch on a value: logged for the sparse pattern check
    B.__iter__ = _iter
    B.__getitem__ = _getitem
    for name, op in [("add", ops.add), ("sub", ops.subtract), ("mul", ops.multiply),
                     ("truediv", ops.divide), ("pow", ops.power), ("matmul", ops.matmul)]:
        sparse_name = name if name != "matmul" else None   # @ reaches sparse_matmul itself
        setattr(B, f"__{name}__", _binary(op, name=sparse_name))
        setattr(B, f"__r{name}__", _binary(op, reflected=True, name=sparse_name))
        if isinstance(op, Primitive):  # scalar arithmetic on a tape: see operator_method
            setattr(Var, f"__{name}__", operator_method(
                op, fallback=_binary(op, name=sparse_name)))
            setattr(Var, f"__r{name}__", operator_method(
                op, reflected=True, fallback=_binary(op, reflected=True, name=sparse_name)))
    B.__pow__ = _power                                    # x ** 2 is square(x), as in NumPy
    Var.__pow__ = power_method(ops.power, ops.square)     # the same, on the tape's fast entry
    for name, op in [("lt", ops.less), ("le", ops.less_equal), ("gt", ops.greater),
                     ("ge", ops.greater_equal), ("eq", ops.equal), ("ne", ops.not_equal)]:
        setattr(B, f"__{name}__", _binary(op, name=name))
    B.__neg__ = lambda self: ops.negative(self)
    B.__pos__ = lambda self: self
    B.__abs__ = lambda self: ops.absolute(self)
    B.T = property(lambda self: ops.transpose(self))
    B.mT = property(lambda self: ops.swapaxes(self, -1, -2))
    for name, fn in [("sum", np.sum), ("mean", np.mean), ("var", np.var), ("std", np.std),
                     ("max", np.max), ("min", np.min), ("prod", np.prod),
                     ("cumsum", np.cumsum), ("clip", np.clip), ("ravel", np.ravel),
                     ("squeeze", np.squeeze), ("diagonal", np.diagonal), ("trace", np.trace),
                     ("dot", np.dot), ("swapaxes", np.swapaxes)]:
        setattr(B, name, keywords.method(name, fn))   # NumPy's keywords: see keywords.py
    B.reshape = keywords.reshape_method
    B.flatten = lambda self: ops.ravel(self)
    B.transpose = lambda self, *axes: ops.transpose(
        self, None if not axes else (axes[0] if len(axes) == 1 else axes))
    B.item = _to_array_error
    B.tolist = _to_array_error
    B.astype = _astype
    for name, method in ops.numpy.BOX_METHODS.items():  # cumprod, round, take, %, //, ...
        setattr(B, name, method)
    B.real = property(lambda self: ops.core.complex_numbers.real(self))
    B.imag = property(lambda self: ops.core.complex_numbers.imag(self))
    B.conj = B.conjugate = lambda self: ops.core.complex_numbers.conj(self)
    inplace.install(B)   # y[i] = v, y += v, y.at[i].set(v), copies (dualad.frontend.inplace)
    B.detach = stop.detach   # x.detach() is stop_gradient(x) (Variable's own: a constant)


def _astype(self, dtype, *args, **kwargs):
    """``x.astype(dtype)``: floating and complex dtypes keep the derivative; integer and
    boolean ones (``(x*0).astype(int)`` for indexing) give plain integers, zero derivative
    (logged, see :func:`dualad.frontend.casts.integers`); other dtypes raise."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return casts.integers(self, dtype, "astype")
    if only_batched(self):   # a batched count or mask (vmap): no derivative to drop
        return map_value(self, lambda v: np.asarray(v).astype(dtype))
    if not np.issubdtype(dtype, np.floating) and not np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"astype({dtype}) of a traced value of shape {self.shape} would drop "
                        f"its derivative; only floating and complex dtypes are differentiable "
                        f"(integer and boolean casts give plain values with zero derivative)")
    if dtype == self.dtype:       # NumPy copies unless copy=False (in-place writes exist)
        copy = args[3] if len(args) > 3 else kwargs.get("copy", True)   # after order, casting, subok
        return np.copy(self) if copy else self
    if dtype.kind == "c" and self.dtype.kind == "f" and dtype.itemsize >= 2 * self.dtype.itemsize:
        return ops.core.complex_numbers.to_complex(self, dtype)  # real into complex: cotangent Re ū
    if dtype.kind == "f" and self.dtype.kind == "c":
        raise TypeError(f"astype({dtype}) of a complex traced value of shape {self.shape} would "
                        f"discard its imaginary part; take np.real(z) (or np.abs(z)) explicitly")
    from ..ops.core.shape import cast   # float <-> float (or complex <-> complex): rounds
    return cast(self, dtype)


_install()

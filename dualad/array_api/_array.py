"""``Array``: the namespace's own array, a handle on a plain or a traced value.

Array-API consumers (SciPy with ``SCIPY_ARRAY_API=1``, scikit-learn) ask every
argument for its namespace and refuse a mix (``array_namespace(x, c)`` raises
"Multiple namespaces" when ``x`` is traced and ``c`` a NumPy array). So the
constants a consumer makes with ``xp.asarray``/``xp.zeros``/... must belong to this
namespace too: they are ``Array`` handles around plain ndarrays. A namespace
function unwraps its ``Array`` arguments, computes with NumPy (and so with the
registry, for traced values), and wraps a plain result again when an ``Array``
came in; a traced result stays a traced value (derivatives flow as usual).

An ``Array`` only ever holds a plain value: it is a constant of the differentiated
function. Writes (``a[idx] = v``, which consumers use through
``array_api_extra.at``) are copy-on-write, so no earlier reader of the old value
sees a change (value semantics, as JAX's arrays have: a write is not seen through
another ``Array`` that shares memory, ``asarray(a, copy=False)`` included); a handle that NumPy has read as an operand (``traced * a``, where a
tape may keep ``a`` by reference for its reverse sweep) refuses later writes.
Writing a traced value into an ``Array`` raises and says what to write instead
(a handle holding a traced value could meet a traced operator that takes it for a
constant: silently wrong).
"""
from __future__ import annotations

import sys

import numpy as np

from ..core.tracer import Box

__all__ = ["Array", "native", "creation"]


class Array:
    """A constant of :mod:`dualad.array_api`: a handle on a plain ndarray (see the
    module docstring)."""

    __slots__ = ("_value", "_exposed")
    __array_priority__ = 50.0   # below traced values (100): a mix computes as traced

    def __init__(self, value):
        self._value = value
        self._exposed = False

    # -- the standard's attributes -------------------------------------------------
    shape = property(lambda self: tuple(self._value.shape))
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: len(self._value.shape))
    size = property(lambda self: int(np.prod(self._value.shape, dtype=np.int64)))
    device = property(lambda self: "cpu")
    T = property(lambda self: _wrap_result(self._value.T))
    mT = property(lambda self: _wrap_result(np.swapaxes(self._value, -1, -2)))

    def __array_namespace__(self, /, *, api_version=None):
        return sys.modules[__package__]   # the package imports this module: no cycle

    def to_device(self, device, /, *, stream=None):
        if device != "cpu":
            raise ValueError(f"to_device({device!r}): dualad.array_api has the one device "
                             f"'cpu'")
        return self

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._value.__dlpack__(stream=stream, max_version=max_version,
                                      dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()

    def __repr__(self):
        return f"dualad.array_api.Array({self._value!r})"

    def __len__(self):
        return len(self._value)

    def __iter__(self):
        return (_wrap_result(self._value[i]) for i in range(len(self._value)))

    # -- conversions: those of the value (a traced value's own rules apply) ---------
    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        return self._value.__index__()

    # -- NumPy reads the handle: plain results (NumPy's namespace is NumPy's) -------
    def __array__(self, dtype=None, copy=None):
        self._exposed = True
        value = self._value
        return value if dtype is None else value.astype(dtype, copy=bool(copy))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self._exposed = True
        return getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))

    def __array_function__(self, func, types, args, kwargs):
        self._exposed = True
        return func(*_unwrap(args), **_unwrap(kwargs))

    # -- indexing --------------------------------------------------------------------
    def __getitem__(self, idx):
        return _wrap_result(self._value[_unwrap(idx)])

    def __setitem__(self, idx, v):
        idx, v = _unwrap(idx), _unwrap(v)
        if isinstance(v, Box) or isinstance(idx, Box):
            raise TypeError(
                f"writing a traced value into a dualad.array_api constant array of shape "
                f"{self.shape} (a[idx] = v, or array_api_extra.at(a)[idx].set(v)) would "
                f"drop its derivative: build the array from its traced pieces with "
                f"xp.concat/xp.stack, or select with xp.where(mask, v, a)")
        if self._exposed:
            raise ValueError(
                f"dualad.array_api.Array of shape {self.shape}: a write after NumPy read "
                f"this array as an operand (a traced computation may have recorded it by "
                f"reference and need its old value): write into a copy, "
                f"xp.asarray(a, copy=True)")
        new = self._value.copy()        # copy-on-write: readers of the old value see no change
        new[idx] = v
        self._value = new


def _unwrap(obj):
    """``obj`` with every ``Array`` replaced by its value (in lists, tuples, dicts)."""
    cls = obj.__class__
    if cls is Array:
        return obj._value
    if cls is tuple or cls is list:
        return cls(_unwrap(o) for o in obj)
    if cls is dict:
        return {k: _unwrap(o) for k, o in obj.items()}
    return obj


def _ours(obj):
    """Whether ``obj`` holds an ``Array`` or a traced value (in lists, tuples, dicts)."""
    cls = obj.__class__
    if cls is Array or isinstance(obj, Box):
        return True
    if cls is tuple or cls is list:
        return any(_ours(o) for o in obj)
    if cls is dict:
        return any(_ours(o) for o in obj.values())
    return False


def _wrap_result(out):
    """Plain arrays (also inside tuples and named tuples) as ``Array``; traced values,
    Python scalars and other objects unchanged."""
    if isinstance(out, (np.ndarray, np.generic)) and not isinstance(out, Box):
        return Array(np.asarray(out))
    if isinstance(out, tuple):
        items = [_wrap_result(o) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
    if isinstance(out, list):
        return [_wrap_result(o) for o in out]
    return out


def native(fn):
    """``fn`` on ``Array`` arguments: unwrap them, call, and wrap a plain result as an
    ``Array`` when an ``Array`` or a traced value came in (a mask or an index computed
    from a traced value stays in this namespace, so a consumer can pass it on beside
    traced values). Traced results stay traced; a call on plain ndarrays only gives
    plain ndarrays."""
    def call(*args, **kwargs):
        if not (_ours(args) or _ours(kwargs)):
            return fn(*args, **kwargs)
        return _wrap_result(fn(*_unwrap(args), **_unwrap(kwargs)))
    call.__name__ = call.__qualname__ = getattr(fn, "__name__", "function")
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call


def creation(fn):
    """``fn`` returning a new ``Array`` (a constructor of this namespace), unless its
    result is traced."""
    def call(*args, **kwargs):
        return _wrap_result(fn(*_unwrap(args), **_unwrap(kwargs)))
    call.__name__ = call.__qualname__ = fn.__name__
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call


def _operator(op, name):
    def method(self, *other):
        return _wrap_result(op(self._value, *_unwrap(other)))
    method.__name__ = name
    return method


def _reflected(op, name):
    def method(self, other):
        return _wrap_result(op(_unwrap(other), self._value))
    method.__name__ = name
    return method


def _install_operators():
    import operator as o
    binary = {"add": o.add, "sub": o.sub, "mul": o.mul, "truediv": o.truediv,
              "floordiv": o.floordiv, "mod": o.mod, "pow": o.pow, "matmul": o.matmul,
              "and": o.and_, "or": o.or_, "xor": o.xor, "lshift": o.lshift,
              "rshift": o.rshift}
    for name, op in binary.items():
        setattr(Array, f"__{name}__", _operator(op, f"__{name}__"))
        setattr(Array, f"__r{name}__", _reflected(op, f"__r{name}__"))
    for name in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(Array, f"__{name}__", _operator(getattr(o, name), f"__{name}__"))
    for name, op in {"neg": o.neg, "pos": o.pos, "abs": abs, "invert": o.invert}.items():
        setattr(Array, f"__{name}__", _operator(op, f"__{name}__"))


_install_operators()
Array.__hash__ = None

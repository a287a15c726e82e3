"""One-hot batches: seed directions (and what they become) kept sparse.

A whole Jacobian or Hessian seeds its sweeps with rows of the identity: the
tangent of x in a chunk of forward mode (or the cotangent of y in reverse
mode) is ``T = E`` with ``T[k] = e_{j_k}``. Stored densely, the first linear
operation a tangent meets pays for that zero structure in full: ``W @ x``
pushes ``W @ E``, a matrix product of O(B·m·n) for what is a column gather
(``(W E)[k] = W[:, j_k]``) of O(B·m).

A :class:`OneHotBatch` is a batch of B directions with at most one nonzero
entry each, ``T[k].flat[idx[k]] = val[k]`` (a row with ``idx[k] < 0`` is zero),
dense shape ``(B, *shape)``. It stays one-hot through what preserves that:

    T · c  (c without the batch axis, or one value per direction)   val · c[idx]
    T / c, −T, T ± T' (same positions)                              on val
    reshape, transpose, sum over non-batch axes                     on idx
    A @ T  (A a matrix)                      (A T)[k] = val_k · A[:, i_k] ⊗ e_{l_k}ᵀ
    T @ B                                    (T B)[k] = val_k · e_{i_k} ⊗ B[l_k, :]
    T @ B  (T of vectors: a B x n matrix)     (T B)[k] = val_k · B[i_k, :]

and becomes an ordinary array (with the cost of the dense one, never a wrong
value) through anything else: ``T + D`` for dense D scatters val into a copy
of D; other ufuncs and NumPy functions see ``np.asarray(T)``. Entries outside
the one-hot positions are *structural* zeros: ``T · c`` is 0 there even where
c is inf or nan (dense arithmetic would give ``0 · inf = nan``), as a symbolic
zero tangent is in JAX.

The JVP/VJP rules need not know: they call registry primitives, whose NumPy
implementations reach this class through ``__array_ufunc__`` and
``__array_function__``. ``jacobians`` seeds its dense Jacobians and
Hessians with it (``onehot_rows``).
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .tree import flatten
from .tree_nodes import is_registered

__all__ = ["StructuredBatch", "OneHotBatch", "onehot_rows"]


class StructuredBatch:
    """What a structured batch of directions shares with an array: ``dense()`` (the
    ndarray it stands for), NumPy's operators and protocols. A subclass's
    ``_structured_ufunc(ufunc, inputs)`` keeps the structure where it can (or returns
    NotImplemented) and ``_functions`` maps NumPy functions to structured handlers;
    everything else sees ``dense()``: never a wrong value, at worst a dense one's cost."""

    __slots__ = ()
    __array_priority__ = 50.0   # below traced values (100): a Box still dispatches first
    _functions: ClassVar[dict] = {}   # NumPy function -> structured handler

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        return self.dense(dtype)

    def __getattr__(self, name):          # any other ndarray method: on the dense array
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dense(), name)

    def __getitem__(self, key):
        return self.dense()[key]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:
            out = self._structured_ufunc(ufunc, inputs)
            if out is not NotImplemented:
                return out
        # Only this class's operands become dense: another structured operand (or a traced
        # one) then gets its own say when NumPy dispatches the call again.
        cls = type(self)
        inputs = tuple(x.dense() if type(x) is cls else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.dense() if type(x) is cls else x for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        handler = self._functions.get(func)
        if handler is not None:
            out = handler(*args, **kwargs)
            if out is not NotImplemented:
                return out
        return func(*_densify(args), **_densify(kwargs))

    def __add__(self, other):
        return np.add(self, other)

    def __radd__(self, other):
        return np.add(other, self)

    def __sub__(self, other):
        return np.subtract(self, other)

    def __rsub__(self, other):
        return np.subtract(other, self)

    def __mul__(self, other):
        return np.multiply(self, other)

    def __rmul__(self, other):
        return np.multiply(other, self)

    def __truediv__(self, other):
        return np.divide(self, other)

    def __rtruediv__(self, other):
        return np.divide(other, self)

    def __matmul__(self, other):
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        return np.matmul(other, self)

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return self


class OneHotBatch(StructuredBatch):
    """B directions of shape ``shape``, each with at most one nonzero entry."""

    __slots__ = ("idx", "val", "pshape", "dtype", "full")

    def __init__(self, idx, val, pshape, full=None):
        self.idx = idx                    # (B,) int: flat position of the nonzero, or -1
        self.val = val                    # (B,) its value
        self.pshape = tuple(pshape)       # the shape of one direction
        self.dtype = val.dtype
        self.full = bool((idx >= 0).all()) if full is None else full

    # --- array-like surface ---------------------------------------------------------
    @property
    def shape(self):
        return (len(self.idx),) + self.pshape

    def __repr__(self):
        return f"OneHotBatch(shape={self.shape}, dtype={self.dtype})"

    def dense(self, dtype=None):
        b, n = len(self.idx), math.prod(self.pshape)
        out = np.zeros((b, n), dtype or self.dtype)
        if self.full:
            out[np.arange(b), self.idx] = self.val
        else:
            rows = np.flatnonzero(self.idx >= 0)
            out[rows, self.idx[rows]] = self.val[rows]
        return out.reshape(self.shape)

    def _with(self, val, idx=None, pshape=None):
        return OneHotBatch(self.idx if idx is None else idx, val,
                           self.pshape if pshape is None else pshape, self.full)

    def _gather(self, c):
        """``c`` at each direction's nonzero: c without the batch axis (broadcasting into
        ``shape`` without enlarging it) or with it (leading axis B or 1); None when c
        would broadcast the direction beyond its shape."""
        if not isinstance(c, np.ndarray):
            if np.ndim(c) == 0:
                return c                  # a number: NumPy's promotion rules apply to val
            c = np.asarray(c)
        p, b = self.pshape, len(self.idx)
        if c.ndim == len(p) + 1:
            if c.shape[0] == 1:
                c = c[0]
            elif c.shape[0] == b:
                if _broadcasts_into(c.shape[1:], p):
                    flat = np.broadcast_to(c, self.shape).reshape(b, -1)
                    return flat[np.arange(b), self._safe_idx()]
                return None
            else:
                return None
        if c.ndim > len(p) or not _broadcasts_into(c.shape, p):
            return None
        if c.ndim == 0:
            return c
        if c.shape == p:
            return c.reshape(-1)[self._safe_idx()]
        return np.broadcast_to(c, p).reshape(-1)[self._safe_idx()]

    def _safe_idx(self):
        return self.idx if self.full else np.maximum(self.idx, 0)

    def _zero_empty(self, val):
        if not self.full:
            val = np.where(self.idx >= 0, val, 0)
        return val

    def __neg__(self):
        return self._with(-self.val)

    @staticmethod
    def _structured_ufunc(ufunc, inputs):
        return _structured_ufunc(ufunc, inputs)

    # --- structure-preserving shape operations ---------------------------------------
    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return _reshape(self, shape, order)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return _transpose(self, axes or None)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _sum(self, axis, dtype, out, keepdims, **kw)

    def astype(self, dtype, copy=True, **kw):
        return self._with(self.val.astype(dtype, copy=copy))

    def copy(self):
        return self._with(self.val.copy())

    def conj(self):
        return self._with(np.conj(self.val))

    conjugate = conj


def _broadcasts_into(s, p):
    """Whether an array of shape ``s`` broadcasts against ``p`` without enlarging ``p``."""
    if len(s) > len(p):
        return False
    return all(a == 1 or a == b for a, b in zip(s[::-1], p[::-1]))


def _densify(x):
    if isinstance(x, StructuredBatch):
        return x.dense()
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields") and \
            not is_registered(type(x)):
        return type(x)(_densify(v) for v in x)
    if type(x) is dict:
        return {k: _densify(v) for k, v in x.items()}
    leaves, rebuild = flatten(x)   # named tuples, registered classes
    return x if len(leaves) == 1 and leaves[0] is x else rebuild([_densify(v) for v in leaves])


def _plain(x):
    """A plain operand (array or number) that is not itself traced or one-hot."""
    return isinstance(x, (np.ndarray, np.generic, float, int, complex, bool))


def _structured_ufunc(ufunc, inputs):
    if ufunc is np.multiply or ufunc is np.divide:
        a, b = inputs
        if isinstance(a, OneHotBatch) and _plain(b):
            c = a._gather(b)
            if c is not None:
                return a._with(a._zero_empty(ufunc(a.val, c)))
        elif ufunc is np.multiply and isinstance(b, OneHotBatch) and _plain(a):
            c = b._gather(a)
            if c is not None:
                return b._with(b._zero_empty(np.multiply(c, b.val)))
        return NotImplemented
    if ufunc is np.add or ufunc is np.subtract:
        a, b = inputs
        if isinstance(a, OneHotBatch) and isinstance(b, OneHotBatch):
            if a.pshape == b.pshape and (a.idx is b.idx or np.array_equal(a.idx, b.idx)):
                return a._with(ufunc(a.val, b.val))
            return NotImplemented
        if isinstance(a, OneHotBatch):
            t, d, base_sign, t_sign = a, b, (1 if ufunc is np.add else -1), 1
        else:
            t, d, base_sign, t_sign = b, a, 1, (1 if ufunc is np.add else -1)
        if isinstance(d, np.ndarray) and d.shape == t.shape:
            # D ± T: scatter T's entries into a copy of ±D.
            dtype = np.result_type(d, t.val)
            out = d.astype(dtype, copy=True) if base_sign == 1 else np.negative(d, dtype=dtype)
            flat = out.reshape(len(t.idx), -1)
            rows = np.arange(len(t.idx)) if t.full else np.flatnonzero(t.idx >= 0)
            if t_sign == 1:
                flat[rows, t.idx[rows]] += t.val[rows]
            else:
                flat[rows, t.idx[rows]] -= t.val[rows]
            return out
        return NotImplemented
    if ufunc is np.negative:
        return -inputs[0]
    if ufunc is np.positive:
        return inputs[0]
    if ufunc is np.conjugate:
        return inputs[0].conj()
    if ufunc is np.matmul:
        return _matmul(*inputs)
    return NotImplemented


def _matmul(a, b):
    """``A @ T`` or ``T @ B`` for one-hot T of matrices and a plain matrix: a gather."""
    if isinstance(b, OneHotBatch) and isinstance(a, np.ndarray) and a.ndim == 2 \
            and len(b.pshape) == 2 and a.shape[1] == b.pshape[0]:
        q, r = b.pshape
        dtype = np.result_type(a, b.val)
        if r == 1 and b.full:            # (A T)[k] = val_k A[:, idx_k]: columns of A
            out = _scaled_columns(a, b.idx, b.val, dtype)
            return out.reshape(len(b.idx), a.shape[0], 1)
        i, l = np.divmod(b._safe_idx(), r)
        rows = np.arange(len(b.idx)) if b.full else np.flatnonzero(b.idx >= 0)
        out = np.zeros((len(b.idx), a.shape[0], r), dtype)
        out[rows, :, l[rows]] = a[:, i[rows]].T * b.val[rows, None]
        return out
    if isinstance(a, OneHotBatch) and isinstance(b, np.ndarray) and b.ndim == 2 \
            and len(a.pshape) == 1 and a.pshape[0] == b.shape[0]:
        # T (B x n, one-hot rows) @ B: row k is val_k B[idx_k, :] (the JVP of A @ x in x)
        dtype = np.result_type(b, a.val)
        if a.full:
            return _scaled_columns(b.T, a.idx, a.val, dtype)
        rows = np.flatnonzero(a.idx >= 0)
        out = np.zeros((len(a.idx), b.shape[1]), dtype)
        out[rows] = b[a.idx[rows]] * a.val[rows, None]
        return out
    if isinstance(a, OneHotBatch) and isinstance(b, np.ndarray) and b.ndim == 2 \
            and len(a.pshape) == 2 and a.pshape[1] == b.shape[0]:
        q, r = a.pshape
        dtype = np.result_type(b, a.val)
        if q == 1 and a.full:            # (T B)[k] = val_k B[idx_k, :]: rows of B
            out = _scaled_columns(b.T, a.idx, a.val, dtype)
            return out.reshape(len(a.idx), 1, b.shape[1])
        i, l = np.divmod(a._safe_idx(), r)
        rows = np.arange(len(a.idx)) if a.full else np.flatnonzero(a.idx >= 0)
        out = np.zeros((len(a.idx), q, b.shape[1]), dtype)
        out[rows, i[rows], :] = b[l[rows], :] * a.val[rows, None]
        return out
    return NotImplemented


def _scaled_columns(a, idx, val, dtype):
    """``a[:, idx].T * val[:, None]`` (B x rows) as a new C-ordered array of ``dtype``.

    Copied first, then scaled in place: NumPy copies a transposed view in cache-sized
    blocks, where a ufunc reading it with a C-ordered output does not (for a 300 x 300
    matrix 27 + 10 us against 62). A constant ``val``, the usual seed (all 1, or all ½
    for a Hessian), scales by one number, or not at all."""
    if len(idx) and idx[-1] - idx[0] == len(idx) - 1 and \
            (len(idx) < 3 or (idx[1:] - idx[:-1] == 1).all()):   # (np.diff: ~1 us more)
        out = np.array(a[:, idx[0]:idx[-1] + 1].T, dtype=dtype, order="C")  # a run: a view
    else:
        out = a.T[idx].astype(dtype, copy=False)                           # fancy: a copy
    if len(val):
        v0 = val[0]
        if (val == v0).all():
            if v0 != 1:
                out *= v0
        else:
            out *= val[:, None]
    return out


def _reshape(t, shape, order="C"):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    b, n = len(t.idx), math.prod(t.pshape)
    if order == "C" and shape and shape[0] in (b, -1) and -1 not in shape[1:] \
            and math.prod(shape[1:]) == n:
        return t._with(t.val, pshape=shape[1:])
    return t.dense().reshape(shape, order=order)


def _transpose(t, axes):
    nd = t.ndim
    axes = tuple(range(nd))[::-1] if axes is None else tuple(int(a) % nd for a in axes)
    if axes[0] != 0:
        return t.dense().transpose(axes)
    perm = [a - 1 for a in axes[1:]]
    coords = np.unravel_index(t._safe_idx(), t.pshape)
    pshape = tuple(t.pshape[a] for a in perm)
    idx = np.ravel_multi_index(tuple(coords[a] for a in perm), pshape) if pshape else \
        np.zeros_like(t.idx)
    if not t.full:
        idx = np.where(t.idx >= 0, idx, -1)
    return OneHotBatch(idx, t.val, pshape, t.full)


def _sum(t, axis=None, dtype=None, out=None, keepdims=False, **kw):
    nd = t.ndim
    axes = tuple(range(nd)) if axis is None else \
        tuple(sorted(int(a) % nd for a in (axis if isinstance(axis, (tuple, list)) else (axis,))))
    if out is not None or kw or 0 in axes:
        return np.sum(t.dense(), axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)
    val = t.val if dtype is None else t.val.astype(dtype)
    summed = [a - 1 for a in axes]
    if not summed:                   # a sum over no axes (a 0-d primal's): the same seeds
        return t if dtype is None else t._with(val)
    keep = [a for a in range(len(t.pshape)) if a not in summed]
    coords = np.unravel_index(t._safe_idx(), t.pshape)
    if keepdims:
        pshape = tuple(1 if a in summed else s for a, s in enumerate(t.pshape))
        kept = tuple(np.zeros_like(c) if a in summed else c for a, c in enumerate(coords))
    else:
        pshape = tuple(t.pshape[a] for a in keep)
        kept = tuple(coords[a] for a in keep)
    if math.prod(pshape) == 1:             # one number per direction: a plain array
        return t._zero_empty(val).reshape((len(t.idx),) + pshape)
    idx = np.ravel_multi_index(kept, pshape)
    if not t.full:
        idx = np.where(t.idx >= 0, idx, -1)
    return OneHotBatch(idx, val, pshape, t.full)


def _np_reshape(a, *args, **kwargs):
    if not isinstance(a, OneHotBatch):
        return NotImplemented
    shape = args[0] if args else kwargs.get("newshape", kwargs.get("shape"))
    return _reshape(a, shape, kwargs.get("order", "C"))


def _np_transpose(a, axes=None):
    return _transpose(a, axes) if isinstance(a, OneHotBatch) else NotImplemented


def _np_sum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    if not isinstance(a, OneHotBatch) or kw.get("where", True) is not True:
        return NotImplemented
    return _sum(a, axis, dtype, out, keepdims)


def _np_broadcast_to(a, shape, subok=False):
    if isinstance(a, OneHotBatch) and tuple(shape) == a.shape:
        return a
    return NotImplemented


def _np_shape(a):
    return a.shape


def _np_ndim(a):
    return a.ndim


def _np_result_type(*args):
    return np.result_type(*[a.val if isinstance(a, OneHotBatch) else a for a in args])


_FUNCTIONS = {np.reshape: _np_reshape, np.transpose: _np_transpose, np.sum: _np_sum,
              np.broadcast_to: _np_broadcast_to, np.shape: _np_shape, np.ndim: _np_ndim,
              np.result_type: _np_result_type}
OneHotBatch._functions = _FUNCTIONS


def onehot_rows(start, count, offset, pshape, dtype, scale=1.0):
    r"""Return rows of an identity as a structured batch of tangents (one-hot seeds).

    The Jacobian planner seeds forward mode with columns of the identity (and reverse
    mode with its rows), ``count`` at a time. Kept structured, a seed makes the first
    linear map of the sweep a gather instead of a dense product. Over the flat vector
    of all the function's inputs, the rows ``start .. start + count`` are cut to the
    leaf of shape ``pshape`` that starts at ``offset``:
    :math:`T_k = \mathrm{scale} \cdot e_{\mathrm{start} + k - \mathrm{offset}}`, or zero
    where that position lies outside the leaf.

    Parameters
    ----------
    start : int
        The first row, in the flat vector of all inputs.
    count : int
        The number of rows (the batch size).
    offset : int
        Where the leaf starts in the flat vector.
    pshape : tuple of int
        The leaf's (primal's) shape.
    dtype : numpy.dtype
        The tangents' dtype.
    scale : float, optional
        A factor on every one.

    Returns
    -------
    OneHotBatch
        A batch of ``count`` tangents of shape ``pshape`` (``shape`` is ``(count,) +
        pshape``), which registry operations consume structurally and NumPy converts to
        a dense array.

    Examples
    --------
    >>> from dualad.extend import onehot_rows
    >>> print(np.asarray(onehot_rows(0, 2, 0, (3,), np.float64)))
    [[1. 0. 0.]
     [0. 1. 0.]]
    """
    size = math.prod(pshape)
    idx = np.arange(start - offset, start - offset + count)
    if 0 <= start - offset and start - offset + count <= size:   # all inside: the usual case
        return OneHotBatch(idx, np.full(count, scale, dtype), pshape, True)
    inside = (idx >= 0) & (idx < size)
    full = bool(inside.all())
    if not full:
        idx = np.where(inside, idx, -1)
    val = inside.astype(dtype)
    if scale != 1.0:
        val *= scale
    return OneHotBatch(idx, val, pshape, full)

"""How :mod:`dualad.interpreters.staging.numba_whole` writes the primitives other than elementwise ones:
reshaping, indexing and its scatter-add, reductions, products (a mixin of its
function writer: ``self.atom``, ``self.shape``, ``self.avals``, ``self.use_const``, ...)."""
from __future__ import annotations

import math

import numpy as np

from .numba_base import (F64 as _F64, I64 as _I64, n_arg as _n, scalar_aval as _scalar_aval,
                         slice_source as _slice)
from .numba_helpers import einsum_kernel

__all__ = ["PrimitiveWriting"]


class PrimitiveWriting:
    """The right-hand side of one primitive's line (``_name(e, args, lines)``), or None
    when this form of it is not written."""

    def _where(self, e, args, lines):
        if len(args) != 3 or e.params:
            return None
        if all(self.scalar(a) for a in e.ins):
            return f"{args[1]} if {args[0]} else {args[2]}"
        return f"ew_where({', '.join(args)})"

    def _broadcast_to(self, e, args, lines):
        return f"bcast({args[0]}, {tuple(e.params['shape'])!r})"

    def _reshape(self, e, args, lines):
        shape = tuple(e.params["shape"])
        if self.scalar(e.ins[0]):
            return args[0] if shape == () else f"np.full({shape!r}, {args[0]})"
        if shape == ():
            return f"np.ascontiguousarray({args[0]}).ravel()[0]"
        return f"np.ascontiguousarray({args[0]}).reshape({shape!r})"

    def _transpose(self, e, args, lines):
        if self.scalar(e.ins[0]):
            return args[0]
        return f"{args[0]}.transpose({tuple(e.params['axes'])!r})"

    def _concatenate(self, e, args, lines):
        if set(e.params) != {"axis"} or any(self.scalar(a) for a in e.ins):
            return None
        return f"np.concatenate(({', '.join(args)},), axis={int(e.params['axis'])})"

    def _getitem(self, e, args, lines):
        idx = e.params["idx"]
        if idx.__class__ is not tuple:
            idx = (idx,)
        parts = []
        for i in idx:
            if i.__class__ is int:
                parts.append(repr(i))
            elif i is None:
                parts.append("None")
            elif i.__class__ is slice and all(p is None or p.__class__ is int
                                               for p in (i.start, i.stop, i.step)):
                parts.append(_slice(i))
            elif isinstance(i, np.ndarray) and i.dtype.kind == "i" and i.ndim == 1 and \
                    sum(isinstance(j, np.ndarray) for j in idx) == 1:
                parts.append(self.use_const(i.astype(np.int64)))
            else:
                return None
        sub = f"{args[0]}[{', '.join(parts) or '()'}]"
        if _scalar_aval(self.avals[e.out]) and self.avals[e.out][0] is np.ndarray:
            return None     # a 0-d array view: not written
        return sub

    def _untake(self, e, args, lines):
        idx, shape = e.params["idx"], tuple(e.params["shape"])
        dtype = self.avals[e.out][2]
        if np.dtype(dtype) != _F64:
            return None
        if any(isinstance(i, np.ndarray) for i in idx):
            pos = np.arange(math.prod(shape)).reshape(shape)[idx].astype(np.int64)
            k = self.use_const(np.ascontiguousarray(pos))
            return f"scatter({args[0]}, {k}, {_n(math.prod(shape))}).reshape({shape!r})"
        if not all(i.__class__ is int or i is None or i.__class__ is slice and all(
                p is None or p.__class__ is int for p in (i.start, i.stop, i.step)) for i in idx):
            return None
        out = f"v{e.out}"
        zeros = np.zeros(shape, np.bool_)
        if self.shape(e.ins[0]) != zeros[idx].shape:
            return None     # (u broadcast into the place: not written)
        src = args[0]
        if any(i is None for i in idx):   # new unit axes: u's value without them
            idx = tuple(i for i in idx if i is not None)
            view = zeros[idx].shape
            src = f"np.ascontiguousarray({src}).reshape({view!r})" if view else \
                f"np.ascontiguousarray({src}).ravel()[0]"
        view = zeros[idx].shape
        sub = ", ".join(repr(i) if i.__class__ is int else _slice(i) for i in idx)
        lines.append(f"    {out} = np.zeros({shape!r}, np.float64)")
        if view == ():
            lines.append(f"    {out}[{sub}] = {src}")
        elif len(view) <= 3:
            # (a loop: Numba's slice assignment compiles its broadcasting, seconds)
            lines.append(f"    copy{len(view)}({out}[{sub}], {src})")
        else:
            return None
        return out

    def _reduce(self, e, args, op):
        if set(e.params) != {"axis", "keepdims"} or self.scalar(e.ins[0]):
            return None
        shape = self.shape(e.ins[0])
        r = len(shape)
        axis = e.params["axis"]
        axes = tuple(range(r)) if axis is None else tuple(
            sorted(a % r for a in ((axis,) if axis.__class__ is int else axis)))
        out_shape = tuple(self.avals[e.out][1]) if self.avals[e.out][0] is np.ndarray else ()
        x = args[0]
        if not axes:
            return f"{x}.copy()"
        if len(axes) == r:
            s = f"{op}_all({x})"
            return s if out_shape == () else f"np.full({out_shape!r}, {s})"
        k = math.prod(shape[a] for a in axes)
        m = math.prod(shape) // k
        if axes == tuple(range(r - len(axes), r)):
            s = f"{op}_rows({x}, {_n(m)}, {_n(k)})"
        elif axes == tuple(range(len(axes))):
            s = f"{op}_lead({x}, {_n(k)}, {_n(m)})"
        else:
            perm = tuple(a for a in range(r) if a not in axes) + axes
            s = f"{op}_rows({x}.transpose({perm!r}), {_n(m)}, {_n(k)})"
        return f"{s}.reshape({out_shape!r})"

    def _sum(self, e, args, lines):
        out = self.avals[e.out][2]
        if out is None or np.dtype(out) not in (_F64, _I64):
            return None
        if np.dtype(out) == _I64:   # a count: exact in any order
            return self._reduce(e, args, "isum")
        return self._reduce(e, args, "sum") if self.dtype(e.ins[0]) == _F64 else None

    def _max(self, e, args, lines):
        return self._reduce(e, args, "max")

    def _min(self, e, args, lines):
        return self._reduce(e, args, "min")

    def _matmul(self, e, args, lines):
        if e.params or not all(1 <= len(self.shape(a)) <= 2 for a in e.ins):
            return None
        if any(self.scalar(a) for a in e.ins):
            return None
        a, b = (f"np.ascontiguousarray({x})" for x in args)
        return f"{a} @ {b}"

    def _einsum(self, e, args, lines):
        subs, out = tuple(e.params["subs"]), e.params["out"]
        if any(self.scalar(a) for a in e.ins):
            return None
        shapes = tuple(self.shape(a) for a in e.ins)
        fn = einsum_kernel(self.w.numba, subs, out, shapes)
        return f"{self.w.bind(fn, 'einsum')}({', '.join(args)})"

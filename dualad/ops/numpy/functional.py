"""Functions that apply functions, and a few stragglers: piecewise, apply_along_axis,
apply_over_axes, unwrap, diagflat, row_stack, astype, einsum_path.

    piecewise(x, conds, funcs):  each entry gets the function of the last condition
        that holds there, applied to those entries only (as NumPy), and scattered
        back (``untake``); entries no condition covers are 0 with derivative 0.
    unwrap(p) = p + c(p), where the corrections c are multiples of the period that
        jump where consecutive differences cross ``discont``: piecewise constant, so
        ∂unwrap/∂p = 1 (the value is NumPy's, exactly).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ...core.primitive import implements
from .._util import normalize_axes, value_only
from ..core.indexing import getitem, index, untake
from ..core.products import diag
from ..core.shape import broadcast_to, expand_dims, moveaxis, ravel, reshape, stack, vstack
from ...core.values import is_batched, looped_call, map_value, nondiff_value

__all__ = ["piecewise", "apply_along_axis", "apply_over_axes", "unwrap", "diagflat", "astype"]


@implements(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise``: each function on the elements its condition selects. The
    selection is read from the conditions' values; under vmap those hold the whole batch,
    so a batched ``x`` or condition is handled example by example."""
    if is_batched((x, condlist)):
        def example(x_, c_):
            return piecewise(x_, c_, funclist, *args, **kw)
        example.__name__ = "np.piecewise"
        return looped_call(example, x,
                           list(condlist) if isinstance(condlist, (list, tuple)) else condlist)
    xs = shape_of(x)
    n_funcs = len(funclist)
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray, Box))
                                 and len(xs) != 0):
        condlist = [condlist]
    conds = np.asarray([np.asarray(primal_value(c), dtype=bool) for c in condlist])
    if len(conds) == n_funcs - 1:
        conds = np.concatenate([conds, ~np.any(conds, axis=0, keepdims=True)], axis=0)
    elif len(conds) != n_funcs:
        raise ValueError(f"piecewise: with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    if not xs:   # NumPy hands the functions 1-element arrays here too
        return reshape(piecewise(reshape(x, (1,)), [c.reshape(1) for c in conds], funclist,
                                 *args, **kw), ())
    winner = np.full(xs, -1)
    for k, c in enumerate(conds):
        winner[np.broadcast_to(c, xs)] = k
    out = np.zeros(xs, dtype=np.result_type(primal_value(x)))
    for k, func in enumerate(funclist):
        idx = np.nonzero(winner == k)
        if not idx[0].size:
            continue
        vals = func(getitem(x, idx=idx), *args, **kw) if callable(func) else func
        out = out + untake(broadcast_to(vals, idx[0].shape), idx=idx, shape=xs)
    return out


@implements(np.apply_along_axis)
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    nd = ndim_of(arr)
    axis = normalize_axes(axis, nd)[0]
    moved = moveaxis(arr, axis, -1)
    lead = shape_of(moved)[:-1]
    outs = [func1d(index(moved, idx) if idx else moved, *args, **kwargs)
            for idx in np.ndindex(*lead)]
    r = shape_of(outs[0])
    res = reshape(stack(outs), lead + r)
    k = len(r)
    return moveaxis(res, tuple(range(len(lead), len(lead) + k)), tuple(range(axis, axis + k))) \
        if k else res


@implements(np.apply_over_axes)
def apply_over_axes(func, a, axes):
    val = a
    n = ndim_of(a)
    for axis in np.atleast_1d(axes):
        axis = int(axis) + n if axis < 0 else int(axis)
        res = func(val, axis)
        if ndim_of(res) != ndim_of(val):
            res = expand_dims(res, axis)
            if ndim_of(res) != ndim_of(val):
                raise ValueError("apply_over_axes: function is not returning an array of "
                                 "the correct shape")
        val = res
    return val


@implements(np.unwrap)
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    pp = nondiff_value(p)   # keeps a batch axis (vmap): then unwrapped per example
    if isinstance(pp, Box):
        nd = ndim_of(p)
        axis = int(axis) % nd - nd   # counted from the end: the batch axes lead
    # (p − pp) is an exact traced zero: the value is NumPy's, the derivative 1
    return (p - pp) + map_value(pp, lambda v: np.unwrap(v, discont=discont, axis=axis,
                                                        period=period))


@implements(np.diagflat)
def diagflat(v, k=0):
    return diag(ravel(v), k)


@implements(np.astype)
def astype(x, dtype, /, *, copy=True, device=None):
    return x.astype(dtype) if isinstance(x, Box) else np.astype(x, dtype, copy=copy)


implements(np.einsum_path)(value_only(np.einsum_path))
if hasattr(np, "row_stack"):   # deprecated in NumPy 2.0
    implements(np.row_stack)(vstack)

_ = math

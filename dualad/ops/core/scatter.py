"""Scatter updates: ``x`` with the entries at ``idx`` replaced or combined with ``v``.

One primitive, ``scatter_set``, replaces distinct entries:

    scatter_set(x, u; idx) = x with x[idx] := u      (the targets of idx distinct,
                                                      u of x[idx]'s shape)
    ṫ_y = keep·ṫ_x + untake(ṫ_u, idx)                 keep = 0 at the targets, 1 elsewhere
    ū_x = keep·ū                                     ū_u = ū[idx]

It is linear in (x, u) together and structural (each output element is one input
element), so the sparsity detector reads it exactly. Every update is written with
it, ``getitem`` and ``untake`` (:mod:`.indexing`) and elementwise primitives, so
forward and reverse mode, batched tangents and every order come from their rules:

- ``set`` with repeated targets: NumPy's ``x[idx] = v`` keeps the last write, so
  only the last occurrence of each target is written;
- ``add``/``subtract``: ``x ± untake(v, idx)``, which accumulates repeated targets
  (``np.add.at``, JAX's ``.at[].add``);
- ``multiply``, ``divide``, ``power``, ``minimum``, ``maximum``:
  ``x[t] := op(x[t], v_k)`` applied once per occurrence k, in index order, as
  ``np.multiply.at`` does: with repeated targets, in rounds of distinct targets
  (round r holds every target's r-th occurrence), one ``scatter_set`` per round.

The result has ``x``'s shape and dtype (an in-place write casts ``v`` to it).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import Box, shape_of
from ...core.primitive import Primitive, register, sample
from .._batch import batch_size
from ...core.batch_axes import batch_ndim
from .elementwise import add, divide, maximum, minimum, multiply, power, subtract, where
from .indexing import (_advanced_moved, batch_index, getitem, normalize_index, take_batched,
                       untake, untake_batched)
from .linear import broadcast_to_p, lift, transpose_p
from .shape import broadcast_to, cast, reshape

__all__ = ["scatter_set", "OPS", "update", "at", "copy_p", "copy"]


def _is_basic(idx):
    return not any(isinstance(e, np.ndarray) for e in idx)


def _scatter_impl(x, u, idx):
    y = np.array(x, dtype=np.result_type(x), copy=True)
    y[idx] = u
    return y


def _keep_mask(shape, idx):
    """1 where ``x[idx] = ...`` leaves ``x`` unchanged, 0 at the targets (a plain value)."""
    keep = np.ones(shape, dtype=bool)
    keep[idx] = False
    return keep


def _jvp_x(t, ans, x, u, idx):
    return where(_keep_mask(shape_of(x), idx), t, 0.0)


def _jvp_u(t, ans, x, u, idx):
    return untake_batched(t, idx, shape_of(x), batch_ndim(t, u))


def _scatter_sympy(sp, x, u, idx):
    """On SymPy values (object arrays); plain numbers become SymPy numbers, and a 0-d ``u``
    its entry (NumPy would store the 0-d array itself in an object array)."""
    to_sympy = np.vectorize(lambda v: sp.sympify(v, strict=True), otypes=[object])
    y = to_sympy(np.asarray(x, dtype=object))
    u = to_sympy(np.asarray(u, dtype=object))
    y[idx] = u[()] if u.ndim == 0 else u
    return y


scatter_set = register(Primitive("scatter_set", _scatter_impl, linear=True,
                                 sparsity="structural", sympy=_scatter_sympy))
scatter_set.defjvp(_jvp_x, _jvp_u)
scatter_set.defvjp(lambda ct, ans, x, u, idx: _jvp_x(ct, ans, x, u, idx),
                   lambda ct, ans, x, u, idx: take_batched(ct, idx, batch_ndim(ct, ans)))


def _scatter_batch(args, batched, idx):
    """vmap: every example writes its own ``u`` into its own ``x`` at the same ``idx``; an
    unbatched ``x`` or ``u`` is broadcast along the batch axis first. ``u`` is brought to
    the example's x[idx] shape, then laid out as NumPy lays out x[(:,) + idx] (the advanced
    index's axes in front of the batch axis when a slice or None separates them)."""
    x, u = args
    bx, bu = batched
    size = batch_size(args, batched)
    xs = shape_of(x)[1:] if bx else shape_of(x)
    idx = normalize_index(idx, xs)
    target = np.broadcast_to(np.zeros((), bool), xs)[idx].shape
    if not bx:
        x = broadcast_to_p(x, shape=(size,) + tuple(xs))
    if not bu or shape_of(u)[1:] != target:
        u = broadcast_to_p(lift(u, 1, len(target)) if bu else u, shape=(size,) + target)
    k = _advanced_moved(idx)
    if k:
        u = transpose_p(u, axes=tuple(range(1, k + 1)) + (0,)
                        + tuple(range(k + 1, len(target) + 1)))
    return scatter_set(x, u, idx=batch_index(idx, 1))


scatter_set.defbatch(_scatter_batch)
scatter_set.samples = [
    sample((4,), (), idx=(1,)),
    sample((3, 4), (2, 4), idx=(slice(0, 2),)),
    sample((3, 4), (3,), idx=(np.array([2, 0, 1]), np.array([1, 1, 3]))),
    sample((3, 4), (3, 2), idx=(slice(None), np.array([3, 0]))),
    sample((2, 3, 4), (2, 2), idx=(slice(None), np.array([0, 2]), 1)),
]

# --- the updates -----------------------------------------------------------------------------

OPS = ("set", "add", "subtract", "multiply", "divide", "power", "min", "max")


def _dtype(a):
    return a.dtype if isinstance(a, Box) else np.result_type(a)


def _fit_value(fname, x, v, target_shape):
    """``v`` broadcast to ``target_shape`` and cast to ``x``'s dtype, as an in-place write
    casts it; casts that would drop a derivative raise."""
    xd, vd = np.dtype(_dtype(x)), np.dtype(_dtype(v))
    if isinstance(v, Box) and xd.kind not in "fc":
        raise TypeError(f"{fname}: writing a traced value (shape {shape_of(v)}) into an "
                        f"array of dtype {xd} (shape {shape_of(x)}) would drop its "
                        f"derivative; only floating and complex arrays are differentiable: "
                        f"make the array floating first (e.g. np.zeros(n) or x.astype(float))")
    if isinstance(v, Box) and vd.kind == "c" and xd.kind != "c":
        raise TypeError(f"{fname}: writing a complex traced value (shape {shape_of(v)}) into "
                        f"a real array of dtype {xd} (shape {shape_of(x)}) would discard its "
                        f"imaginary part; write np.real(v) explicitly or make the array complex")
    if vd != xd and "O" not in (xd.kind, vd.kind):   # object: SymPy values, kept as they are
        v = cast(v, xd, fname) if isinstance(v, Box) else np.asarray(v).astype(xd)
    vs = shape_of(v)
    if tuple(vs) != tuple(target_shape):
        try:
            np.broadcast_shapes(vs, target_shape)
        except ValueError:
            raise ValueError(f"{fname}: a value of shape {tuple(vs)} cannot be written into "
                             f"x[idx] of shape {tuple(target_shape)} (x of shape "
                             f"{tuple(shape_of(x))})") from None
        if math.prod(vs) == math.prod(target_shape):   # same entries, extra unit axes
            v = reshape(v, target_shape)
        else:
            v = broadcast_to(v, target_shape)
    return v


def _combine(op, a, b):
    return {"add": add, "subtract": subtract, "multiply": multiply, "divide": divide,
            "power": power, "min": minimum, "max": maximum}[op](a, b)


def update(x, idx, v, op="set", fname=None):
    """``x`` with ``op`` applied at ``idx`` (see the module docstring): the functional form
    of ``x[idx] = v`` (``op="set"``), ``np.add.at(x, idx, v)`` (``"add"``), and so on.

    ``x`` and ``v`` may each be traced or plain; ``idx`` is any NumPy index (integers,
    slices, None, Ellipsis, integer or boolean arrays), never traced. Returns a new value;
    ``x`` is not changed."""
    fname = fname or f"at[...].{op}"
    if op not in OPS:
        raise ValueError(f"{fname}: unknown update {op!r}; one of {', '.join(OPS)}")
    xs = tuple(shape_of(x))
    idx = normalize_index(idx, xs)
    if not isinstance(x, Box) and not isinstance(v, Box):     # nothing traced: NumPy's own
        y = np.array(x, copy=True)
        ufunc = {"set": None, "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                 "divide": np.divide, "power": np.power, "min": np.minimum,
                 "max": np.maximum}[op]
        if ufunc is None:
            y[idx] = v
        else:
            ufunc.at(y, idx, v)
        return y
    probe = np.broadcast_to(np.zeros((), bool), xs)[idx]    # x[idx]'s shape, no copy of x
    u = _fit_value(fname, x, v, probe.shape)
    if _is_basic(idx):
        return _distinct(op, x, u, idx)
    targets = np.arange(math.prod(xs)).reshape(xs)[idx].ravel()
    if np.unique(targets).size == targets.size:
        return _distinct(op, x, u, idx)
    uf = reshape(u, (targets.size,)) if isinstance(u, Box) else np.reshape(u, -1)
    if op in ("add", "subtract"):      # accumulates repeated targets, as np.add.at does
        s = untake(uf, idx=(targets,), shape=(math.prod(xs),)) \
            if isinstance(uf, Box) else _plain_untake(uf, targets, math.prod(xs))
        s = reshape(s, xs)
        return _cast_like(_combine(op, x, s), x, fname)
    if op == "set":                    # the last write of each target wins
        _, first_of_reversed = np.unique(targets[::-1], return_index=True)
        last = targets.size - 1 - first_of_reversed
        return scatter_set(x, _take(uf, last), idx=np.unravel_index(targets[last], xs))
    # one round of distinct targets per occurrence: the k-th write to each target in round k
    order = np.argsort(targets, kind="stable")
    sorted_t = targets[order]
    start = np.r_[0, np.flatnonzero(np.diff(sorted_t)) + 1]
    rank = np.empty(targets.size, dtype=np.intp)
    rank[order] = np.arange(targets.size) - np.repeat(start, np.diff(np.r_[start,
                                                                          targets.size]))
    for r in range(int(rank.max()) + 1):
        sel = np.flatnonzero(rank == r)
        ridx = np.unravel_index(targets[sel], xs)
        x = _distinct(op, x, _take(uf, sel), ridx)
    return x


def _cast_like(new, x, fname):
    """``new`` in ``x``'s dtype (an in-place result keeps the array's dtype)."""
    nd, xd = np.dtype(_dtype(new)), np.dtype(_dtype(x))
    if nd == xd or "O" in (nd.kind, xd.kind):
        return new
    return cast(new, xd, fname) if isinstance(new, Box) else np.asarray(new).astype(xd)


def _plain_untake(u, targets, size):
    out = np.zeros(size, dtype=np.result_type(u))
    np.add.at(out, targets, u)
    return out


def _take(u, positions):
    return getitem(u, idx=(positions,)) if isinstance(u, Box) else u[positions]


def _distinct(op, x, u, idx):
    """``op`` at ``idx`` whose targets are distinct: one ``scatter_set``."""
    if op != "set":
        xi = getitem(x, idx=idx) if isinstance(x, Box) else x[idx]
        u = _cast_like(_combine(op, xi, u), x, "at[...]")
    return scatter_set(x, u, idx=idx)


# --- the functional form: y.at[idx].set(v) ---------------------------------------------------

class _Updater:
    """``y.at[idx]``: the updates of ``y`` at ``idx``, each returning a new value (``y`` is
    not changed), as in JAX."""

    __slots__ = ("array", "idx")

    def __init__(self, array, idx):
        self.array, self.idx = array, idx

    def _do(self, op, v, mode, name):
        if mode not in (None, "promise_in_bounds"):
            raise NotImplementedError(f"at[...].{name}(..., mode={mode!r}): only in-bounds "
                                      f"indices (mode=None) are supported; an out-of-bounds "
                                      f"index raises IndexError")
        return update(self.array, self.idx, v, op, f"at[...].{name}")

    def set(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``y`` with ``y[idx] = v`` (repeated indices: the last write wins, as in NumPy)."""
        return self._do("set", v, mode, "set")

    def add(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``y`` with ``v`` added at ``idx``, repeated indices accumulating (np.add.at)."""
        return self._do("add", v, mode, "add")

    def subtract(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._do("subtract", v, mode, "subtract")

    def multiply(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._do("multiply", v, mode, "multiply")

    def divide(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._do("divide", v, mode, "divide")

    def power(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._do("power", v, mode, "power")

    def min(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._do("min", v, mode, "min")

    def max(self, v, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._do("max", v, mode, "max")

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """``y[idx]`` (a new value, never a view)."""
        if mode not in (None, "promise_in_bounds") or fill_value is not None:
            raise NotImplementedError("at[...].get: only in-bounds indices (mode=None, no "
                                      "fill_value) are supported")
        y = self.array
        return getitem(y, idx=normalize_index(self.idx, shape_of(y))) if isinstance(y, Box) \
            else np.array(y[self.idx])


class _At:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _Updater(self.array, idx)


def at(array):
    """The functional updates of an array, JAX's ``y.at[idx].set(v)``.

    ``at(y)[idx].set(v)``, ``.add(v)``, ``.multiply(v)``, ``.min(v)``, ``.max(v)`` and
    ``.get()`` each return a new value and leave ``y`` as it was; ``y`` may be a traced
    value (``y.at`` is the same) or a plain NumPy array, into which traced values may be
    written (``y[idx] = v`` cannot hold them).

    Parameters
    ----------
    array : array_like or traced value
        The array to update.

    Returns
    -------
    object
        Indexable: ``at(y)[idx]`` has the update methods above.

    Examples
    --------
    >>> import numpy as np, dualad
    >>> print(dualad.grad(lambda x: dualad.lax.at(np.zeros(3))[1].set(x * x).sum())(2.0))
    4.0
    """
    return _At(array)


# --- copies ------------------------------------------------------------------------------------

copy_p = register(Primitive("copy", lambda x: np.array(x, copy=True), linear=True,
                            sparsity="structural", sympy=lambda sp, x: x))
copy_p.defjvp(lambda t, ans, x: t)
copy_p.defvjp(lambda ct, ans, x: ct)
copy_p.elementwise = True
copy_p.samples = [sample((3,)), sample((2, 3))]


def copy(x):
    """An independent copy of ``x`` (``np.copy``, ``x.copy()``, ``copy.copy``): for a traced
    value a new value of its trace (a new node on a tape), so that writing into one in
    place (:mod:`dualad.frontend.inplace`) leaves the other as it was. The identity map: ṫ ↦ ṫ,
    ū ↦ ū."""
    return copy_p(x) if isinstance(x, Box) else np.array(x, copy=True)

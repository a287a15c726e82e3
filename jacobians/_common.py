"""What every Jacobian routine shares: the differentiated arguments as one flat vector.

A function ``f(*args)`` differentiated in ``args[argnums]`` (arrays, or
containers of arrays) is seen as ``F: R^n -> R^m`` where ``n`` is the total
size of the differentiated leaves and ``m`` the total size of the output
leaves. Column ``j`` of the flat Jacobian ``J`` (m x n) belongs to input leaf
``k`` with ``offsets[k] <= j < offsets[k] + sizes[k]``; rows likewise. The
user-facing result is cut out of ``J`` in blocks ``out.shape + in.shape``.
"""
from __future__ import annotations

__all__ = ["DEFAULT_MAX_MEMORY", "fname", "counted", "TracedOutput", "refuse_traced",
           "TRACED_PATHS", "holds_traced", "composes", "untraced_kwargs", "normalize_argnums",
           "Problem", "identity_rows", "flat_rows", "chunks", "float_dtype", "FunctionCache"]

import functools
import itertools
import math
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from dualad.extend import (Box, check_input, flatten, onehot_rows, raise_assignment_error,
                           shape_of, traced_outputs, unguarded_value)
from dualad.numpy import concatenate, ravel, reshape

from .jax_keywords import with_jax_keywords

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias, TypeVar

    _F = TypeVar("_F", bound="Callable[..., Any]")
    # One array (or number) in, one out: the dense Jacobian or Hessian is one ndarray.
    # Containers in or out (tuples, lists, dicts) give nested results, typed Any.
    ArrayIn: TypeAlias = "np.ndarray[Any, Any] | np.generic | float"
    ArrayOut: TypeAlias = "np.ndarray[Any, Any] | np.generic | float"
    Container: TypeAlias = "tuple[Any, ...] | list[Any] | dict[Any, Any]"

#: Default budget for the tangents / cotangents of one batched sweep (bytes).
DEFAULT_MAX_MEMORY = 256 * 2 ** 20


def fname(f):
    return getattr(f, "__name__", None) or type(f).__name__


def counted(n, noun):
    """``n`` and ``noun`` for a message, plural unless ``n`` is 1: '1 color', '3 colors'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


class TracedOutput(NotImplementedError):
    """A planning function met a traced value: it was called inside a transformation.

    Inside the package the plain path raises it for :func:`composes` to catch and hand
    the call to the traced path, :mod:`jacobians.nested`. It reaches a user only from a
    function that has no traced path (:func:`jacobians.plan`,
    :func:`jacobians.jacobian_sparsity`, :func:`jacobians.hessian_sparsity`); its message
    names the function, the argument and its shape, and says what to call instead.

    See Also
    --------
    jacobians.plan : Make a plan outside the transformation; the plan takes traced values.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad
    >>> from dualad import jacobians
    >>> try:
    ...     dualad.grad(lambda x: jacobians.plan(np.sin, x)(x).sum())(np.ones(3))
    ... except jacobians.TracedOutput as e:
    ...     print(str(e)[:40])
    jacobians.plan: argument 0 of sin is a t
    """


def refuse_traced(api, f, value, what):
    """Raise :class:`TracedOutput` if ``value`` holds a traced value: the plain path writes
    results into NumPy arrays, which would drop the outer derivative."""
    for leaf in flatten(value)[0]:
        if isinstance(leaf, Box):
            raise TracedOutput(
                f"jacobians.{api}: {what} of {fname(f)} is a traced value (shape "
                f"{shape_of(leaf)}): jacobians.{api} was called inside a transformation "
                f"(dualad.grad/jvp/vjp/vmap/jit) and takes plain values only: call it outside "
                f"the transformation, or use what follows transformations (returns traced "
                f"results): jacobians.jacobian, jacfwd, jacrev, hessian, hvp, "
                f"sparse_jacobian, sparse_hessian, or dualad.grad, jvp (J·v), vjp (vᵀ·J)")


#: api name -> the traced path of that public function (filled by jacobians.nested).
TRACED_PATHS = {}


def holds_traced(tree):
    """Whether a leaf of ``tree`` (a tuple of arguments) is a traced value (a box, or an
    object array of them)."""
    for a in tree:      # the common plain call (arrays, numbers) without flattening
        if not (type(a) in (float, int) or (type(a) is np.ndarray and a.dtype != object)):
            break
    else:
        return False
    for leaf in flatten(tree)[0]:
        if isinstance(leaf, Box) or (isinstance(leaf, np.ndarray) and leaf.dtype == object
                                     and any(isinstance(x, Box) for x in leaf.flat)):
            return True
    return False


# The functions that take JAX's has_aux=, holomorphic= and allow_int=, and those keywords
# (jacobians.jax_keywords)
JAX_KEYWORDS = frozenset(("jacobian", "jacfwd", "jacrev", "hessian", "has_aux", "holomorphic",
                          "allow_int"))


def composes(api: str, curry: bool = False) -> Callable[[_F], _F]:
    """Decorator of the public planner function ``api``: on traced values (an argument, or
    a traced output met by the plain path: :class:`TracedOutput`) the call goes to its
    traced path, ``TRACED_PATHS[api]`` (:mod:`jacobians.nested`). ``curry``: without
    positional arguments after ``f``, return the function of them."""
    def wrap(plain):
        @functools.wraps(plain)
        def public(f, *args, **kwargs):
            if api in JAX_KEYWORDS and not JAX_KEYWORDS.isdisjoint(kwargs):
                return with_jax_keywords(api, fname(f), public, f, args, kwargs)
            if curry and not args:
                def curried(*a):
                    return public(f, *a, **kwargs)
                curried.__name__ = f"{api}({fname(f)})"
                return curried
            if args and holds_traced(args):
                return TRACED_PATHS[api](f, *args, **untraced_kwargs(api, f, kwargs))
            try:
                return plain(f, *args, **kwargs)
            except TracedOutput:      # f closes over a traced value
                return TRACED_PATHS[api](f, *args, **untraced_kwargs(api, f, kwargs))
        return public
    return wrap


def untraced_kwargs(api, f, kwargs):
    """``kwargs`` for the traced path: ``executor=`` refused (traced values cannot be
    shipped to workers: the outer transformation records every operation here), ``retries``
    dropped."""
    if kwargs.get("executor") is not None:
        raise TypeError(
            f"jacobians.{api}({fname(f)}): executor= cannot be used inside a transformation "
            f"(dualad.grad/jvp/vjp/vmap/jit): the arguments (or what {fname(f)} closes over) "
            f"are traced values, which cannot be shipped to workers. Drop executor= here, or "
            f"call jacobians.{api} outside the transformation")
    return {k: v for k, v in kwargs.items() if k not in ("executor", "retries", "progress")}


def normalize_argnums(api, f, argnums, nargs):
    single = argnums.__class__ is int or isinstance(argnums, (int, np.integer))
    nums = (int(argnums),) if single else tuple(int(a) for a in argnums)
    if not nums:
        raise ValueError(f"{api}: argnums is empty; name at least one argument of {fname(f)}")
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{api}: argnums={argnums!r} is out of range: {fname(f)} was "
                             f"called with {nargs} positional argument(s)")
    return single, tuple(a % nargs for a in nums)


class Problem:
    """``f`` with its differentiated arguments flattened into one vector of size ``n``."""

    executor = None     # a jacobians.distributed.Workers: the sweeps' chunks become tasks
    progress = None     # progress=: True or a callable, reported to by each sweep (.progress)

    def __init__(self, api, f, args, argnums=0, traced_ok=False):
        if not callable(f):
            raise TypeError(f"{api}: the function to differentiate must be callable, got "
                            f"{type(f).__name__}")
        if not args:
            raise TypeError(f"{api}: no point given; call {api}({fname(f)}, x) or "
                            f"{api}({fname(f)})(x)")
        self.api, self.f, self.name = api, f, fname(f)
        self.args = list(args)
        self.traced_ok = traced_ok
        for k, a in enumerate(self.args):
            if not traced_ok:   # hvp is jvp over grad, which nests: it takes traced values
                refuse_traced(api, f, a, f"argument {k}")
        self.single, self.nums = normalize_argnums(api, f, argnums, len(args))
        self.rebuilds, self.leaves = [], []
        for i in self.nums:
            leaves, rebuild = flatten(self.args[i])
            where = "" if len(leaves) == 1 else " (a leaf of a container)"
            leaves = [check_input(f"{api}({self.name})", i, x, where) for x in leaves]
            self.args[i] = rebuild(leaves)
            self.rebuilds.append((rebuild, len(leaves)))
            self.leaves.extend(leaves)
        self.in_shapes = [shape_of(x) for x in self.leaves]
        self.in_sizes = [math.prod(s) for s in self.in_shapes]
        self.in_offsets = list(itertools.accumulate(self.in_sizes, initial=0))
        self.n = self.in_offsets[-1]
        self.dtype = np.result_type(*[np.result_type(unguarded_value(x)) for x in self.leaves])
        self.out_shapes = self.out_rebuild = None

    # --- the function of the differentiated arguments only -------------------------
    def primals(self):
        return tuple(self.args[i] for i in self.nums)

    def fun(self, *diff):
        full = list(self.args)
        for i, a in zip(self.nums, diff):
            full[i] = a
        try:
            return traced_outputs(self.f(*full))   # np.array([x, y]) restacked (dualad.frontend.objects)
        except ValueError as e:                  # out[i] = x into a plain array: say so
            raise_assignment_error(f"jacobians.{self.api}", self.name, e)
            raise

    def with_point(self, args):
        """A new Problem of the same function and argnums at other arguments."""
        p = Problem(self.api, self.f, args, self.nums[0] if self.single else self.nums)
        if p.in_shapes != self.in_shapes:
            raise ValueError(f"{self.api}: {self.name} was planned for inputs of shapes "
                             f"{self.in_shapes}, got {p.in_shapes}")
        p.out_shapes, p.out_rebuild, p.m = self.out_shapes, self.out_rebuild, self.m
        p.out_offsets = self.out_offsets
        p.executor, p.progress = self.executor, self.progress
        return p

    def flat_fun(self, z):
        """``F(z)``: the function as R^n -> R^m (used by the planner's fallbacks)."""
        parts = [reshape(z[o:o + s], sh) for o, s, sh in
                 zip(self.in_offsets, self.in_sizes, self.in_shapes)]
        out = self.fun(*self.rebuild_inputs(parts))
        leaves = flatten(out)[0]
        return leaves[0] if len(leaves) == 1 and shape_of(leaves[0]) == (self.m,) else \
            concatenate([ravel(o) for o in leaves])

    def rebuild_inputs(self, leaves):
        """The differentiated arguments (as a tuple) from a list of leaves."""
        out, k = [], 0
        for rebuild, count in self.rebuilds:
            out.append(rebuild(leaves[k:k + count]))
            k += count
        return tuple(out)

    # --- outputs ----------------------------------------------------------------------
    def set_outputs(self, out):
        if out is None:   # else a None leaf reads as a constant scalar: a zero derivative
            raise TypeError(f"{self.api}: {self.name} returned None; did it forget to "
                            f"`return`? Return the arrays to differentiate")
        if not self.traced_ok:
            refuse_traced(self.api, self.f, out, "the output (computed from a traced value it "
                                                 "uses)")
        leaves, rebuild = flatten(out)
        if not leaves:
            raise ValueError(f"{self.api}: {self.name} returned no arrays")
        self.out_shapes = [shape_of(o) for o in leaves]
        self.out_rebuild = rebuild
        sizes = [math.prod(s) for s in self.out_shapes]
        self.out_offsets = list(itertools.accumulate(sizes, initial=0))
        self.m = self.out_offsets[-1]
        return leaves

    # --- seeds --------------------------------------------------------------------------
    def split(self, rows, offsets, shapes):
        """Cut ``rows`` (B, total) into leaves of shape ``(B, *shape)``."""
        b = rows.shape[0]
        return [rows[:, o:o + math.prod(s)].reshape((b,) + tuple(s))
                for o, s in zip(offsets, shapes)]

    def tangent_seeds(self, matrix):
        """Input tangents (as ``jvp`` takes them) whose flat rows are ``matrix`` (B, n)."""
        return self.rebuild_inputs(self.split(matrix, self.in_offsets, self.in_shapes))

    def onehot_tangent_seeds(self, start, count, dtype, scale=1.0):
        """Rows ``start .. start + count`` of the n x n identity (times ``scale``) as input
        tangents, kept one-hot (:mod:`dualad.core.onehot`): the first linear map they meet is a
        gather, not a matrix product."""
        return self.rebuild_inputs([onehot_rows(start, count, o, s, dtype, scale)
                                    for o, s in zip(self.in_offsets, self.in_shapes)])

    def onehot_cotangent_seeds(self, start, count, dtype):
        """Rows ``start .. start + count`` of the m x m identity as output cotangents."""
        return self.out_rebuild([onehot_rows(start, count, o, s, dtype)
                                 for o, s in zip(self.out_offsets, self.out_shapes)])

    def cotangent_seeds(self, matrix):
        """Output cotangents (as a pullback takes them) whose flat rows are ``matrix`` (B, m)."""
        return self.out_rebuild(self.split(matrix, self.out_offsets, self.out_shapes))

    # --- results ------------------------------------------------------------------------
    def structured(self, jac):
        """Blocks ``out.shape + in.shape`` of the flat Jacobian ``jac`` (m, n), nested as
        outputs, then arguments (a tuple when argnums is a tuple), then leaves."""
        per_out = []
        for oo, osh in zip(self.out_offsets, self.out_shapes):
            osz = math.prod(osh)
            blocks = [_block(jac, oo, osz, io, isz, tuple(osh) + tuple(ish), self.m, self.n)
                      for io, isz, ish in zip(self.in_offsets, self.in_sizes, self.in_shapes)]
            args = self.rebuild_inputs(blocks)
            per_out.append(args[0] if self.single else args)
        return self.out_rebuild(per_out)


def _block(jac, oo, osz, io, isz, shape, m, n):
    """``jac[oo:oo + osz, io:io + isz]`` in ``shape``; the whole matrix as it is when it is
    the only block (no slice or reshape recorded by an outer trace such as dualad.jit)."""
    whole = oo == 0 and io == 0 and osz == m and isz == n
    block = jac if whole else jac[oo:oo + osz, io:io + isz]
    return block if shape_of(block) == shape else block.reshape(shape)


def identity_rows(start, count, total, dtype):
    """Rows ``start .. start + count`` of the identity of size ``total``: (count, total)."""
    e = np.zeros((count, total), dtype=dtype)
    e[np.arange(count), start + np.arange(count)] = 1
    return e


def flat_rows(leaves, batch):
    """Leaves ``(B, *shape)`` as one (B, total) matrix."""
    if any(isinstance(x, Box) for x in leaves):   # f closes over a traced value
        raise TracedOutput("a sweep of the plain path returned traced values (the function "
                           "closes over a value traced by an outer transformation)")
    if len(leaves) == 1:
        return np.asarray(leaves[0]).reshape(batch, -1)
    return np.concatenate([np.asarray(x).reshape(batch, -1) for x in leaves], axis=1)


def chunks(total, size):
    """``(start, count)`` of the consecutive chunks covering ``range(total)``."""
    size = max(1, int(size))
    return [(s, min(size, total - s)) for s in range(0, total, size)]


def float_dtype(dtype):
    if isinstance(dtype, np.dtype):   # (np.issubdtype: ~1 us a call, several per Jacobian)
        return dtype if dtype.kind in "fc" else np.dtype(float)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(float)


class FunctionCache:
    """Per-function memo (weakly keyed on the function object) of what a plan learns once:
    operation counts, the chosen mode. Only speed depends on it, never a result."""

    def __init__(self):
        self._by_fun = weakref.WeakKeyDictionary()
        self._fallback = {}

    def get(self, f, key):
        try:
            return self._by_fun.get(f, {}).get(key)
        except TypeError:
            return None

    def put(self, f, key, value):
        try:
            self._by_fun.setdefault(f, {})[key] = value
        except TypeError:
            pass
        return value

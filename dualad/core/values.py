"""What a rule may ask about the values it is given: the one interpreter query.

A rule is written once and runs under every interpreter (forward, reverse, vmap, jit).
Where it must know how its values are run (one value per vmap example, a value a jit
trace records) it asks here, never by importing an interpreter: each question is
answered by the value's own trace (methods of :class:`~dualad.core.tracer.Box` and
:class:`~dualad.core.tracer.Trace`, whose defaults are a plain value's answer, which the
batching and staging interpreters override), as JAX's interpreters answer.

- ``is_batched(x)``: does ``x`` carry a vmap batch (one value per example)?
- ``is_staged(x)``: does a dualad.jit trace record ``x``?
- ``staged_unbatched(x)``: recorded by jit and not batched (computable as it stands);
- ``staged_only(x)``: recorded by jit and by nothing else (no derivative, no batch);
- ``map_value(x, fn)``: ``fn`` of each example's plain value, with no derivative;
- ``nondiff_value(x)``: the value without derivative, per example under vmap;
- ``staged_value(x)``: the value without derivative, still recorded under jit;
- ``per_example(fn, args, kwargs)``: a function of plain values, once per example;
- ``looped_call(fn, *args)``: a differentiable function, once per example;
- ``any_true(mask)``, ``all_true(mask)``: ``bool(np.any(mask))``, ``bool(np.all(mask))``
  with only their truth guarded under jit.

Reading traced values without pinning a dualad.jit program to them.

A rule that looks at a value (``primal_value(x)``) under a :func:`dualad.jit` trace
records an "equal" guard: the program then holds only for that very value, and every
new input traces again. Two ways out, for the two kinds of read:

- the read decides only a dtype, a shape or a type: :func:`dualad.core.tracer.unguarded_value`;
- the read picks a cheaper path that the general path also computes correctly (no nan
  present, so no nan handling; no zero, so a plain division): under a jit trace take the
  general path, written in registry operations, which the program records and replays
  for every value (:func:`is_staged`); or pass the value itself to registry operations
  (:func:`staged_value`), keeping the jit trace's box under the derivative boxes.

Reads whose value decides the result (a pivot order computed by LAPACK, a solver's
choice) stay guarded: a new value is another program.
"""
from __future__ import annotations

import operator

import numpy as np

from .tracer import PLAIN_TRACE, Box, primal_value, staged_only


def _identity(v):
    return v


def is_batched(x) -> bool:
    """Tell whether ``x`` carries a vmap batch (one value per example).

    Under ``dualad.vmap`` a batched value holds one value per example behind the
    per-example shape it shows, so its plain value (:func:`primal_value`) is the whole
    batch, not one example. Answered by the batching trace's box; every other box asks
    the value it wraps (so ``vmap(grad(f))`` answers True under grad's box too).

    Parameters
    ----------
    x : object
        A traced or plain value, or a list, tuple or dict of them (then: any of them).

    Returns
    -------
    bool
        True when a vmap batch is under ``x``.
    """
    if isinstance(x, Box):
        return x._batch_trace() is not None
    t = type(x)
    if t is list or t is tuple:
        return any(is_batched(v) for v in x)
    if t is dict:
        return any(is_batched(v) for v in x.values())
    return False


def is_staged(x) -> bool:
    """Tell whether a ``dualad.jit`` trace records ``x``.

    A shortcut chosen from a recorded value would be baked into the program, so callers
    take the path that is right for every value instead. Answered by the staging
    trace's box; every other box asks the value it wraps.

    Parameters
    ----------
    x : object
        A traced or plain value, or a list or tuple of them (then: any of them).

    Returns
    -------
    bool
        True when a jit trace's box is under ``x``.
    """
    return _any_box(x, _STAGED)


def replays_programs(x) -> bool:
    """Tell whether a ``dualad.jit`` program called on ``x`` replays its primitives.

    A jitted function called on a traced value is usually one primitive whose rules are
    jitted programs of their own (the JVP program for forward mode). An interpreter whose
    rules call the JVP rule again at every order (Taylor mode's fallback) would nest those
    programs once per order, so its values ask for the program's primitives instead.
    Answered by that interpreter's box; every other box asks the value it wraps.

    Parameters
    ----------
    x : object
        A traced or plain value, or a list or tuple of them (then: any of them).

    Returns
    -------
    bool
        True when a box under ``x`` asks for the replay.
    """
    return _any_box(x, _REPLAYS)


_STAGED = operator.methodcaller("_staged")
_REPLAYS = operator.methodcaller("_replays_programs")


def _any_box(x, ask):
    """``ask(box)`` for ``x``, or for any value in a list or tuple ``x``; False for a plain
    value."""
    if isinstance(x, Box):
        return ask(x)
    t = type(x)
    if t is list or t is tuple:
        return any(_any_box(v, ask) for v in x)
    return False


def staged_unbatched(x) -> bool:
    """:func:`is_staged` and not :func:`is_batched`: a computation on ``x`` may be
    recorded in the jit program as it stands (under vmap each example has its own value,
    and the callers' per-example paths apply)."""
    return is_staged(x) and not is_batched(x)


def map_value(x, fn):
    """Apply ``fn`` to each example's plain value of ``x``, with zero derivative.

    Every box of a differentiating trace is dropped; under vmap the batch is kept around
    the result: ``fn`` sees the plain value with the batch axes in front, so it must act
    on each example alone (elementwise: ``astype(int)``, comparisons, ``np.isnan``), and
    ``map_value(x, fn)`` holds ``fn(x_b)`` for each example ``b``. Without vmap it is
    ``fn(primal_value(x))``. For value-dependent plain results taken from a traced value
    (an integer cast, a mask).

    Parameters
    ----------
    x : object
        A traced or plain value.
    fn : callable
        A function of plain arrays that acts on each example alone.

    Returns
    -------
    object
        ``fn``'s result: plain, or batched (one per example) under vmap.
    """
    return x._map_value(fn) if isinstance(x, Box) else fn(x)


def nondiff_value(x):
    """Strip the derivative boxes of ``x`` and keep its vmap batch.

    For a value used without derivative (a mask, a condition, an integer cast): the
    :func:`primal_value` of code that must stay correct under vmap, where
    ``primal_value`` would hand on the whole batch as one example; :func:`map_value` of
    the identity.

    Parameters
    ----------
    x : object
        A traced or plain value.

    Returns
    -------
    object
        The plain value when no vmap batch is under ``x``; else a batched value with no
        derivative boxes.

    Examples
    --------
    >>> from dualad.extend import nondiff_value
    >>> f = lambda x: nondiff_value(x) > 1.0       # a mask, one row per example
    >>> print(dualad.vmap(f)(np.array([[1.0, 3.0], [0.0, 2.0]])))
    [[False  True]
     [False  True]]
    """
    return x._map_value(_identity) if isinstance(x, Box) else x


def staged_value(x):
    """``x`` with its derivative boxes stripped (a value used without derivative: a
    mask, a sort order), keeping a dualad.jit trace's box so that what registry
    operations compute from it is recorded in the program rather than read once; the
    plain value when no jit trace records ``x``. Batched values (vmap) keep their batch
    axes, as :func:`nondiff_value` keeps them."""
    return x._staged_value() if isinstance(x, Box) else x


def _batch_trace(tree):
    """The batching trace of highest level among the values of ``tree`` (lists, tuples,
    dicts), or :data:`PLAIN_TRACE` when none is batched."""
    top = PLAIN_TRACE
    stack = [tree]
    while stack:
        x = stack.pop()
        if isinstance(x, Box):
            t = x._batch_trace()
            if t is not None and t.level > top.level:
                top = t
        elif type(x) is list or type(x) is tuple:
            stack.extend(x)
        elif type(x) is dict:
            stack.extend(x.values())
    return top


def per_example(fn, args, kwargs=None, name=None):
    """Call a function of plain values on traced arguments, once per vmap example.

    For a function with no derivative that reads values (an argmax, ``isclose``, a
    rank): called on the plain values of ``args`` and ``kwargs`` (lists, tuples and
    dicts inside them included); under vmap on each example of the top batch, the
    results stacked, so its result is one per example (``y_b = fn(x_b)``), where
    :func:`primal_value` would hand it the whole batch as one example. The result is
    logged as a decision on the values (:func:`note_decision`). Asked of the top batch's
    trace (``Trace.per_example``).

    Parameters
    ----------
    fn : callable
        A function of plain values.
    args : sequence
        Its positional arguments, traced or plain.
    kwargs : dict, optional
        Its keyword arguments, traced or plain.
    name : str, optional
        The name error messages use (default: ``fn.__name__``).

    Returns
    -------
    object
        ``fn``'s result; under vmap, a batched value with one result per example.

    Raises
    ------
    ValueError
        Under vmap, when the examples' results differ in shape (they form no batch).

    Examples
    --------
    >>> from dualad.extend import per_example
    >>> f = lambda x: per_example(np.argmax, (x,), {})
    >>> print(dualad.vmap(f)(np.array([[1.0, 3.0, 2.0], [5.0, 0.0, 1.0]])))
    [1 0]
    """
    kwargs = {} if kwargs is None else kwargs
    name = name or getattr(fn, "__name__", "function")
    return _batch_trace((args, kwargs)).per_example(fn, name, args, kwargs)


def looped_call(fn, *args, **kwargs):
    """Call a differentiable function once per vmap example and stack the results.

    For front-end code that needs a plain value where it may get a batched one (an
    index array, a count, values it plans its work from): under vmap ``fn`` is called on
    each example of the top batch among the arguments (inside tuples/lists too) and the
    results stacked; the examples are registry slices, so the derivative boxes under the
    batch stay. Without a batched argument, ``fn(*args, **kwargs)``. Asked of the top
    batch's trace (``Trace.looped_call``).

    Parameters
    ----------
    fn : callable
        A function written with registry operations (differentiable).
    *args : object
        Its positional arguments, traced or plain.
    **kwargs : object
        Its keyword arguments, traced or plain.

    Returns
    -------
    object
        ``fn``'s result; under vmap, a batched value with one result per example.

    Raises
    ------
    NotImplementedError
        When the batch sits under another transformation's boxes (``vmap(grad(f))``
        seen from inside grad), where it cannot be sliced from here; names ``fn``.
    """
    return _batch_trace((args, kwargs)).looped_call(fn, args, kwargs)


def any_true(mask) -> bool:
    """``bool(np.any(mask))`` of a mask computed from traced values. Under a dualad.jit
    trace the count of True entries is recorded and only its truth is guarded (a replay
    traces again only when the answer changes), not the whole mask; under vmap, and
    without jit, the answer over the whole batch's plain values."""
    if staged_unbatched(mask):
        return bool(np.any(staged_value(mask)))   # recorded as a count (numpy/reductions.py)
    return bool(np.any(primal_value(mask)))


def all_true(mask) -> bool:
    """``bool(np.all(mask))``, guarded as :func:`any_true` is."""
    if staged_unbatched(mask):
        return bool(np.all(staged_value(mask)))   # recorded as a count (numpy/reductions.py)
    return bool(np.all(primal_value(mask)))


__all__ = ["is_batched", "is_staged", "replays_programs", "staged_unbatched", "map_value", "nondiff_value",
           "staged_value", "staged_only", "per_example", "looped_call", "any_true",
           "all_true", "primal_value"]

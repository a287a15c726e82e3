"""``dualad.while_loop``: a loop whose length is known only when it ends (JAX's
``lax.while_loop``), differentiable in both modes; reverse mode checkpoints online."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...core import tree
from ...core.tracer import Box
from ...frontend.objects import traced_outputs
from ..scan.api import _snapshots, _structure
from .online import DEFAULT_SCHEDULE, SCHEDULES
from .rules import aval_of, while_leaves

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _C = TypeVar("_C")

__all__ = ["while_loop", "DEFAULT_SNAPSHOTS", "DEFAULT_SCHEDULE"]

DEFAULT_SNAPSHOTS = 20
_NUMBERS = (bool, int, float, complex, np.ndarray, np.generic, Box)


def _fname(f):
    return getattr(f, "__name__", type(f).__name__)


def while_loop(cond_fun: Callable[[_C], Any], body_fun: Callable[[_C], _C], init_val: _C,
               snapshots: int | None = None, schedule: str | None = None) -> _C:
    r"""Run ``body_fun`` on the carry while ``cond_fun`` holds (JAX's ``lax.while_loop``).

    With :math:`c_0` = ``init_val``, returns :math:`c_n`, where
    :math:`c_{i+1} = \mathrm{body}(c_i)` and :math:`n` is the first trip count with
    :math:`\mathrm{cond}(c_n)` false; :math:`n` is known only when the loop ends.

    Derivatives: forward mode carries the tangent through the loop,
    :math:`\dot c_{i+1} = \partial\mathrm{body}/\partial c\,(c_i)\,\dot c_i` (plus the
    parameters' part). Reverse mode pulls back

    .. math::

        \bar c_i = \bar c_{i+1}\,\frac{\partial c_{i+1}}{\partial c_i}, \qquad
        \bar\theta = \sum_i \bar c_{i+1}\,\frac{\partial c_{i+1}}{\partial \theta}

    (:math:`\theta`: values ``body_fun`` closes over) with *online checkpointing*: at
    most ``snapshots`` carries are held, placed while the loop runs by ``schedule``,
    the intervals between them then reversed by Griewank's binomial schedule
    (:mod:`dualad.revolve`). With :math:`c` slots and :math:`L_k` the gaps between
    the stored carries, the reversal advances
    :math:`n + \sum_k t(L_k, c - k)` untaped trips, :math:`t` revolve's count. The predicate is boolean and has no derivative. Under
    ``vmap`` a batched predicate runs the loop while any lane holds and freezes the
    finished lanes (``np.where`` on the carry); under :func:`dualad.jit` the loop is
    one equation that counts its trips at every replay.

    Parameters
    ----------
    cond_fun : callable
        ``cond_fun(carry) -> bool`` scalar (a 0-d boolean array or a bool).
    body_fun : callable
        ``body_fun(carry) -> carry``, keeping the carry's structure, shapes and dtypes.
        Both functions are traced once, at ``init_val`` (their Python side effects
        happen then), and replayed at every trip: Python control flow on the carry
        is refused (write ``np.where``).
    init_val : array_like or pytree
        The initial carry: arrays and numbers in tuples, lists and dicts.
    snapshots : int, optional
        Reverse mode's slots for stored carries, :math:`c_0` included (default 20).
    schedule : {"stumm-walther", "wang-moin"}, optional
        How the stored carries are chosen while the loop runs (default
        ``"stumm-walther"``). ``"stumm-walther"``: each carry replaces the stored one
        whose removal leaves the reversal cost at the current length smallest
        (optimal online, like Stumm and Walther's algorithm, while
        :math:`n \le \beta(c, 2) - 1`, i.e. at most two untaped evaluations per trip;
        the same greedy rule beyond).
        ``"wang-moin"``: Wang, Moin and Iaccarino's levels (SIAM J. Sci. Comput.
        2009). docs/while_loop.md compares both with revolve at the length known.

    Returns
    -------
    array_like or pytree
        The final carry :math:`c_n`.

    Raises
    ------
    TypeError
        If a function is not callable, ``cond_fun`` does not return a boolean
        scalar, ``body_fun`` changes the carry's structure, a leaf's shape or dtype,
        or a leaf is not an array or number (the error names the function, the leaf
        and the shapes).
    ValueError
        If ``snapshots`` is below 1, ``schedule`` is not one of the names above, or a
        function branches on a traced value.

    See Also
    --------
    dualad.scan : A loop of known length (binomial checkpointing, offline).

    Examples
    --------
    Newton's iteration for :math:`\sqrt a`, stopped on the residual, and its
    derivative :math:`1 / (2\sqrt a)`:

    >>> def root(a):
    ...     cond = lambda x: np.abs(x * x - a) > 1e-12
    ...     return dualad.while_loop(cond, lambda x: 0.5 * (x + a / x), 1.0 + 0.0 * a)
    >>> print(round(float(root(2.0)), 12), round(float(dualad.grad(root)(2.0)), 12))
    1.414213562373 0.353553390593
    """
    api = f"dualad.while_loop({_fname(cond_fun)}, {_fname(body_fun)})"
    for what, f in (("cond_fun", cond_fun), ("body_fun", body_fun)):
        if not callable(f):
            raise TypeError(f"dualad.while_loop: {what} must be a function of the carry, "
                            f"got {type(f).__name__}")
    snapshots = DEFAULT_SNAPSHOTS if snapshots is None else _snapshots(api, snapshots)
    schedule = _schedule(api, schedule)
    init_val = traced_outputs(init_val)
    leaves, rebuild = tree.flatten(init_val)
    for j, v in enumerate(leaves):
        _numeric_leaf(api, j, v, "init_val")
    structure, described = _structure(init_val), tree.describe(init_val)

    def cond_leaves(c):
        return [cond_fun(rebuild(c))]

    def body_leaves(c):
        out = traced_outputs(body_fun(rebuild(c)))
        if _structure(out) != structure:
            raise TypeError(f"{api}: body_fun returned {tree.describe(out)}, but the carry "
                            f"is {described}; body_fun must return a carry of the same "
                            f"structure (containers, keys, lengths)")
        new = tree.flatten(out)[0]
        for j, v in enumerate(new):
            _numeric_leaf(api, j, v, f"body_fun ({_fname(body_fun)}) returned carry")
        return new

    def check(cond, body):
        _check_cond(api, _fname(cond_fun), cond.out_avals)
        _check_body(api, _fname(body_fun), body.out_avals, [aval_of(v) for v in leaves])
    name = _fname(body_fun)
    return rebuild(while_leaves(cond_leaves, body_leaves, name, leaves, snapshots, check,
                                schedule))


def _schedule(api, schedule):
    if schedule is None:
        return DEFAULT_SCHEDULE
    if not isinstance(schedule, str) or schedule not in SCHEDULES:
        names = ", ".join(repr(k) for k in SCHEDULES)
        raise ValueError(f"{api}: schedule must be one of {names} (how reverse mode "
                         f"places its snapshots while the loop runs), got {schedule!r}")
    return schedule


def _numeric_leaf(api, j, v, what):
    ok = isinstance(v, _NUMBERS) and np.result_type(
        v.dtype if isinstance(v, Box) else v).kind in "biufc"
    if not ok:
        raise TypeError(f"{api}: {what} leaf {j} is {type(v).__name__} {v!r:.40}; the "
                        f"carry holds arrays and numbers only (close over other values "
                        f"in body_fun)")


def _check_cond(api, name, avals):
    shape, dtype = avals[0]
    if shape != () or dtype != np.dtype(bool):
        raise TypeError(f"{api}: cond_fun ({name}) must return a boolean scalar, got shape "
                        f"{shape} and dtype {dtype}; reduce it (np.all(...), np.any(...)) "
                        f"or compare (x > 0) so that it is one bool")


def _check_body(api, name, out_avals, c_avals):
    for j, ((s, d), (shape, dtype)) in enumerate(zip(out_avals, c_avals)):
        if s != shape or d != dtype:
            fix = (f"cast it: .astype({dtype})" if s == shape else
                   "reshape or reduce the new value, or start from a carry of that shape")
            raise TypeError(f"{api}: body_fun ({name}) returned carry leaf {j} with shape "
                            f"{s} and dtype {d}, but init_val's leaf {j} has shape {shape} "
                            f"and dtype {dtype}; the carry keeps its shapes and dtypes "
                            f"from trip to trip ({fix})")

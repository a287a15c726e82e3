"""Gradient checkpointing: trade recomputation for memory.

``checkpoint(f)(*args)`` computes ``f`` without recording its intermediates on
the tape; only the inputs and the output are kept. When the backward sweep
reaches it, ``f``'s forward is recomputed under a fresh tape and swept back:

    memory  O(inputs + output)   instead of O(every intermediate of f)
    time    one extra forward evaluation of f

Forward mode goes straight through (``jvp`` of ``f``), so checkpointed code
still composes with every other transformation, to any order.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from .api import jvp, vjp
from ..core.tracer import shape_of
from ..core.primitive import Primitive
from ..interpreters.batching.vmap import vmap

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _R = TypeVar("_R")

__all__ = ["checkpoint"]


def checkpoint(f: Callable[..., _R]) -> Callable[..., _R]:
    r"""Wrap ``f`` so that reverse mode recomputes its intermediates instead of storing them.

    ``checkpoint(f)(*args)`` has the value ``f(*args)`` and the same derivatives,
    but the tape keeps only the call's inputs and output: none of ``f``'s
    intermediate values. When the backward sweep reaches the call, ``f`` is run
    again under a fresh tape at the stored inputs and that tape is swept back
    (:math:`\bar x = \bar y^T J_f(x)`). For a block with :math:`m` intermediates:

    - stored: the inputs and the output, :math:`O(\text{inputs} + \text{output})`
      instead of :math:`O(m)`;
    - recomputed: one extra forward evaluation of ``f`` per backward sweep.

    Forward mode goes straight through (``jvp`` of ``f``) and ``vmap`` maps ``f``
    itself, so checkpointed code composes with every transformation, to any
    order. For long loops, :func:`dualad.scan` with ``checkpoints="binomial"``
    chooses which states to store optimally.

    Parameters
    ----------
    f : callable
        A function of positional arrays returning one array. It is called again
        during the backward sweep, so it should be pure (no side effects that
        matter, no randomness drawn inside).

    Returns
    -------
    callable
        The checkpointed function, called as ``f``; its ``primitive`` attribute
        is the primitive that stands for the call on the tape.

    See Also
    --------
    dualad.scan : Loops with binomial checkpointing (the revolve schedule).

    Examples
    --------
    >>> calls = []
    >>> def block(x):
    ...     calls.append(1)
    ...     return np.sin(np.cos(x))
    >>> loss = lambda x: np.sum(dualad.checkpoint(block)(x))
    >>> x = np.array([0.5, 1.0])
    >>> print(np.allclose(dualad.grad(loss)(x), -np.cos(np.cos(x)) * np.sin(x)))
    True
    >>> len(calls)   # once forward, once more when the backward sweep reached it
    2
    """
    def impl(*args):
        return f(*args)

    def vjp_all(ct, ans, *args):
        _, pullback = vjp(f, *args)
        return pullback(ct)

    def jvp_all(tangents, ans, *args):
        ref = next(t for t in tangents if t is not None)
        i = tangents.index(ref)
        batch = shape_of(ref)[:len(shape_of(ref)) - len(shape_of(args[i]))]
        full = [t if t is not None else np.zeros(batch + shape_of(a)) for t, a in
                zip(tangents, args)]
        return jvp(f, tuple(args), tuple(full))[1]

    prim = Primitive(f"checkpoint({getattr(f, '__name__', 'f')})", impl)
    prim.def_all(jvp=jvp_all, vjp=vjp_all)
    # under vmap, f itself is mapped (one batched pass), not called once per example
    prim.defbatch(lambda args, batched: vmap(f, in_axes=tuple(0 if b else None
                                                             for b in batched))(*args))

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        return prim(*args)

    wrapped.primitive = prim
    return wrapped

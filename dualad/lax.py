"""JAX-style spellings (``jax.lax``): the same functions as elsewhere in dualad, under the
names JAX users reach for.

``stop_gradient(x)``
    The value of ``x`` with a zero derivative in every transformation, at every level of
    nesting (:func:`dualad.stop_gradient`).
``custom_root(f, initial_guess, solve, tangent_solve, has_aux=False)``
    JAX's ``lax.custom_root``: the root of ``f`` found by ``solve(f, initial_guess)``,
    differentiated by the implicit function theorem (:func:`dualad.custom_root` is the
    same engine with dualad's ``(solve, optimality)`` spelling).
``scan(step, carry, xs=None, length=None, checkpoints=None, snapshots=None, reverse=False)``
    JAX's ``lax.scan`` (:func:`dualad.scan`), with binomial checkpointing on request.
``while_loop(cond_fun, body_fun, init_val, snapshots=None)``
    JAX's ``lax.while_loop`` (:func:`dualad.while_loop`): a loop whose length is known
    only when it ends; reverse mode checkpoints it online (docs/while_loop.md).
``custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False)``
    JAX's ``lax.custom_linear_solve``; it is :func:`dualad.custom_linear_solve` itself,
    whose third positional argument is ``solve``.
``at(y)[idx].set(v)`` (also ``.add``, ``.multiply``, ``.min``, ``.max``, ``.get``)
    JAX's ``y.at[idx]`` updates, functional, for a plain NumPy ``y`` as well (traced
    arrays have the method itself: ``y.at[idx].set(v)``); docs/inplace.md.
"""
from __future__ import annotations

from .core.lazy import attach as _attach
from .transforms.stop import stop_gradient
from .transforms.scan import scan
from .transforms.while_loop import while_loop
from .ops.core.scatter import at

__all__ = ["stop_gradient", "custom_root", "custom_linear_solve", "scan", "while_loop", "at"]

# custom_root and custom_linear_solve load dualad.transforms.implicit (scipy.sparse, scipy.linalg) on
# first use: docs/architecture.md, "What loads lazily".
__getattr__, __dir__ = _attach(__name__, attributes={
    "custom_root": "dualad.transforms.implicit.lax", "custom_linear_solve": "dualad.transforms.implicit.lax"})

"""JAX-style spellings (``jax.lax``): the same functions as elsewhere in dualad, under the
names JAX users reach for.

``stop_gradient(x)``
    The value of ``x`` with a zero derivative in every transformation, at every level of
    nesting (:func:`dualad.stop_gradient`).
"""
from __future__ import annotations

from .stop import stop_gradient

__all__ = ["stop_gradient"]

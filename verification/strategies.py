"""Hypothesis strategies for rule tests: arrays inside a domain, broadcastable shapes.

::

    from hypothesis import given
    from dualad.verification.strategies import arrays_in, broadcastable_shapes

    @given(arrays_in((0.1, 5.0), shape=(3,)))
    def test_my_log_rule(x):
        check_rule(my_log, args=(x,)).raise_if_failed()

Values stay a margin away from the domain's ends (kinks, poles, branch
points): those get explicit tests of the documented convention instead.
:func:`complex_arrays_in` draws complex arrays inside a rectangle of the plane.
"""
from __future__ import annotations

__all__ = ["DEFAULT_SHAPES", "floats_in", "shapes", "arrays_in", "complex_arrays_in",
           "broadcastable_shapes", "argument_tuples"]

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

DEFAULT_SHAPES = [(), (3,), (2, 3), (1, 3)]


def floats_in(domain=None, margin=1e-2, bound=3.0):
    """Finite floats strictly inside the open interval ``domain`` (default: ±bound)."""
    lo, hi = (-np.inf, np.inf) if domain is None else domain
    lo = max(lo, -bound) + margin
    hi = min(hi, max(lo + 1.0, bound)) - margin
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def shapes(max_dims=3, max_side=4):
    return hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=max_side)


def arrays_in(domain=None, shape=None, dtype=np.float64, margin=1e-2):
    """float64 arrays with every entry inside ``domain``; ``shape`` a tuple or strategy."""
    shape = shapes() if shape is None else shape
    return hnp.arrays(dtype, shape, elements=floats_in(domain, margin))


def complex_arrays_in(rect=None, shape=None, margin=1e-2):
    """complex128 arrays with real and imaginary parts inside the rectangle
    ``((re_lo, re_hi), (im_lo, im_hi))`` (e.g. a primitive's ``complex_domain``
    entry: clear of its branch cuts and poles)."""
    re_dom, im_dom = ((-3.0, 3.0), (-3.0, 3.0)) if rect is None else rect
    shape = shapes() if shape is None else shape
    parts = st.tuples(floats_in(re_dom, margin), floats_in(im_dom, margin))
    return hnp.arrays(np.complex128, shape, elements=parts.map(lambda p: complex(*p)))


def broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4):
    """Tuples of shapes that broadcast together (with size-1 and missing axes)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, max_dims=max_dims,
                                             min_side=1, max_side=max_side).map(
        lambda bs: bs.input_shapes)


def argument_tuples(domains, num_shapes=None):
    """Tuples of arrays, one per entry of ``domains``, with broadcastable shapes."""
    n = len(domains) if num_shapes is None else num_shapes
    return broadcastable_shapes(n).flatmap(
        lambda shs: st.tuples(*[arrays_in(d, s) for d, s in zip(domains, shs)]))

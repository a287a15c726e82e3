"""Front-end functions that plan from their arguments' values (np.interp's intervals,
np.piecewise's selections) under vmap: example by example, against a loop; under a
transformation inside vmap, a clear error naming what works instead."""
from __future__ import annotations

import numpy as np
import pytest

import dualad

X = np.random.default_rng(18).random((4, 3))
FUNCTIONS = {
    "interp": lambda x: np.interp(x, [0.0, 0.5, 1.0], [0.0, 2.0, 1.0]),
    "interp_traced_table": lambda x: np.interp([0.3, 0.8], [0.0, 0.5, 1.0], x),
    "piecewise": lambda x: np.piecewise(x, [x < 0.5], [lambda v: v ** 2, lambda v: 2 * v]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_per_example_match_the_loop(name):
    f = FUNCTIONS[name]
    loss = lambda x: np.sum(f(x))   # noqa: E731
    np.testing.assert_array_equal(dualad.vmap(f)(X), np.stack([f(x) for x in X]))
    per_example = np.stack([dualad.grad(loss)(x) for x in X])
    # grad of the batched sum: each example's gradient, the derivative taken outside vmap
    np.testing.assert_allclose(dualad.grad(lambda Z: np.sum(dualad.vmap(f)(Z)))(X),
                               per_example, rtol=1e-14)
    with pytest.raises(NotImplementedError, match=r"reads its arguments' values.*"
                                                  r"grad\(lambda X: np.sum\(vmap\(f\)\(X\)\)\)"):
        dualad.vmap(dualad.grad(loss))(X)


def test_interp_takes_lists_as_numpy_does():
    x = np.array([0.1, 0.6, 0.9])
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(np.interp(x, [0, 1], [0, 2])))(x),
                               [2.0, 2.0, 2.0])

"""The batch-axis convention of the rules (dualad.core.batch_axes: batch axes lead; axis a
of a primal is axis a + nb of its tangent): one place counts them, one place shifts axes."""
import pathlib
import re

import numpy as np

import dualad
from dualad.core.batch_axes import batch_ndim, batch_perm, batch_shape, shift_axes
from dualad.ops.core.linear import lift, unbroadcast

ROOT = pathlib.Path(dualad.__file__).parent


def test_batch_ndim_and_shape():
    x = np.zeros((3, 4))
    assert batch_ndim(np.zeros((5, 2, 3, 4)), x) == 2
    assert batch_shape(np.zeros((5, 2, 3, 4)), x) == (5, 2)
    assert batch_ndim(np.zeros((3, 4)), x) == 0 and batch_shape(np.zeros((3, 4)), x) == ()
    assert batch_ndim(np.zeros(7), 1.5) == 1 and batch_shape(np.zeros(7), 1.5) == (7,)


def test_axes_behind_the_batch():
    assert shift_axes((0, 2), 2) == (2, 4)
    assert batch_perm((1, 0), 2) == (0, 1, 3, 2)
    t = np.arange(24.0).reshape(4, 2, 3)            # batch (4,) + primal (2, 3)
    np.testing.assert_array_equal(np.transpose(t, batch_perm((1, 0), 1)),
                                  np.stack([m.T for m in t]))


def test_lift_and_unbroadcast_keep_the_batch_in_front():
    t = np.arange(6.0).reshape(2, 3)                # batch (2,) + primal (3,)
    assert lift(t, 1, 3).shape == (2, 1, 1, 3)
    g = np.ones((2, 4, 3))                          # batch (2,) + output (4, 3)
    np.testing.assert_array_equal(unbroadcast(g, (3,), 1), np.full((2, 3), 4.0))


def test_no_rule_recounts_batch_axes():
    """Rules ask batch_ndim / batch_shape; none subtracts ranks itself."""
    inline = re.compile(r"ndim_of\([^)]*\) - ndim_of\(|len\(shape_of\([^)]*\)\) - "
                        r"len\(shape_of\(|np\.ndim\([^)]*\) - np\.ndim\(")
    found = [f"{p.relative_to(ROOT)}:{i}" for folder in ("ops", "scipy")
             for p in sorted((ROOT / folder).rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if inline.search(line)]
    assert found == []


def test_no_rule_shifts_an_axis_by_hand():
    """An axis of the primal becomes a tangent's axis through batched_axis (or shift_axes
    for several): no rule adds batch_ndim to an axis itself."""
    by_hand = re.compile(r"\+ ?batch_ndim\(|batch_ndim\([^)]*\) ?\+")
    found = [f"{p.relative_to(ROOT)}:{i}" for folder in ("ops", "scipy")
             for p in sorted((ROOT / folder).rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if by_hand.search(line)]
    assert found == []


def test_batched_tangents_through_rules():
    """A vector-mode JVP (batch of directions) equals one JVP per direction, through
    rules that move the batch axes (transpose, sum, reshape, matmul, fft, solve)."""
    A = np.array([[3.0, 1.0], [0.5, 2.0]])

    def f(x):
        y = np.transpose(x.reshape(2, 3)) @ A
        return np.sum(np.abs(np.fft.fft(y, axis=0)), axis=1) + np.linalg.solve(A, x[:2])[0]

    x = np.linspace(0.3, 1.4, 6)
    seeds = np.random.default_rng(0).standard_normal((4, 6))
    batched = dualad.jvp(f, (x,), (seeds,))[1]
    for k in range(4):
        np.testing.assert_allclose(batched[k], dualad.jvp(f, (x,), (seeds[k],))[1],
                                   rtol=1e-12, atol=1e-12)

"""The op-counting tape (dualad.teaching.opcount) shared by evaltrace and the papers."""
import numpy as np

import dualad
from dualad.teaching.opcount import OpCounter, count_ops


def test_count_ops_counts_primitives():
    assert count_ops(lambda x: np.sin(x) * x, 1.5) == 2
    assert count_ops(lambda x, y: x * y + y, 2.0, 3.0) == 2


def test_counts_by_name_and_the_reverse_sweep():
    counter = OpCounter()
    x = counter.new_leaf(0.7)
    dualad.grad(lambda v: np.sin(v) * v)(x)
    assert counter.counts["sin"] >= 1 and counter.counts["cos"] >= 1  # cos: sin's VJP
    assert counter.total == sum(counter.counts.values())

"""Sparsity detection is exact on the rules issue 35 names and costs O(entries in and out).

Exactness: the detected pattern equals the nonzeros of the dense Jacobian (``jacfwd``) at
random values, for integer-array gathers (a flat index, an index column of a 2-D array as
bundle adjustment's camera and point indices, ``np.take`` along an axis), ``np.add.at``
scatters, reductions over one axis, broadcasting one element to many (``x ** 2 + x[0]``),
concatenation, and GradBench's bundle adjustment. Scaling: no intermediate pattern holds
more entries than a small multiple of what the rule reads and writes (counted on every
primitive of the trace), and the arrowhead at n = 10^5 detects within a generous bound.
The budget: a sparse value of any size passes, a dense one stops with a message that says
what is allowed and what to do instead.
"""
from __future__ import annotations

import contextlib
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualad import jacobians
from dualad.jacobians import sparsity as detection
from dualad.jacobians.cost import Stopwatch
from dualad.jacobians.patterns import Budget, TooDense

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "bench", "gradbench"))
import gb_ba  # noqa: E402


def _dense_pattern(f, x):
    return np.asarray(jacobians.jacfwd(f)(x)) != 0


def _assert_exact(f, x):
    detected = jacobians.jacobian_sparsity(f, x).toarray()
    dense = _dense_pattern(f, x)
    assert detected.shape == dense.shape
    assert np.array_equal(detected, dense), (
        f"{f.__name__}: {int((detected & ~dense).sum())} extra, "
        f"{int((dense & ~detected).sum())} missing entries")


def arrowhead(x):
    y = x ** 2 + x[0]
    return np.concatenate([[np.sum(np.sin(x))], y[1:]])


IDX = np.array([4, 0, 7, 7, 2, 11, 4, 9, 1, 1, 3])


def gather_flat(x):
    return np.sin(x[IDX]) * x[IDX[::-1]]


def gather_rows(x):                # an index column picks rows of a (6, 2) matrix
    rows = x[:12].reshape(6, 2)
    return (rows[IDX % 6] ** 2).sum(axis=1) * x[11 + IDX % 3]


def take_axis(x):
    return np.take(x[:12].reshape(4, 3), IDX % 3, axis=1).ravel() * np.exp(x[12:13])


def add_at(x):
    out = np.zeros_like(x[:5])
    np.add.at(out, IDX % 5, x[IDX] ** 2)
    return out


def sum_axis0(x):
    return np.sum(np.cos(x[:12].reshape(3, 4)), axis=0)


def sum_axis1(x):
    return np.prod(x[:12].reshape(3, 4), axis=1) + np.mean(x[:12].reshape(3, 4) ** 2, axis=1)


def broadcast_outer(x):
    return (x[:4, None] * x[None, 4:9]).ravel() + x[9]


def product_chain(x):              # a chain of unions: every factor adds its own inputs
    a, b, c, d = x[:4], x[4:8], x[8:12], x[2:6]
    return a * b * c * d / (a + c) * np.exp(b - d)


CASES = [arrowhead, gather_flat, gather_rows, take_axis, add_at, sum_axis0, sum_axis1,
         broadcast_outer, product_chain]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_pattern_equals_the_dense_jacobians_nonzeros(f):
    x = np.random.default_rng(3).uniform(0.5, 1.5, 14)
    _assert_exact(f, x)


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=30), st.integers(1, 6))
def test_random_gathers_and_scatters_are_exact(idx, bins):
    idx = np.array(idx)

    def f(x):
        out = np.zeros_like(x[:bins])
        np.add.at(out, idx % bins, x[idx] * x[(idx + 3) % 10])
        return np.concatenate([out, np.sum(x[idx].reshape(1, -1), axis=0)])
    _assert_exact(f, np.random.default_rng(len(idx)).uniform(0.5, 1.5, 10))


def test_a_max_reduction_is_a_superset_of_the_winner():
    def f(x):
        return np.max(x.reshape(3, 4), axis=1)
    x = np.random.default_rng(0).uniform(0.5, 1.5, 12)
    detected = jacobians.jacobian_sparsity(f, x).toarray()
    assert (detected >= _dense_pattern(f, x)).all() and detected.sum() == 12


def test_bundle_adjustment_pattern_is_exact():
    inputs = gb_ba.ba_inputs(3, 5, 7)
    f, v = gb_ba.ba_flat(inputs), gb_ba.ba_point(inputs)
    detected = jacobians.jacobian_sparsity(f, v)
    assert np.array_equal(detected.toarray(), _dense_pattern(f, v))
    assert (detected != gb_ba.ba_sparsity(3, 5, 7)).nnz == 0
    assert detected.nnz == 29 * 7


# --- cost ----------------------------------------------------------------------------------
def _largest_pattern(monkeypatch, f, x):
    """(the most entries of any value's pattern on the trace, its primitive, the detected
    pattern): every value the detection materialises is some primitive's output."""
    largest = [0, None]
    process = detection.PatternTrace.process

    def counting(self, prim, args, params):
        out = process(self, prim, args, params)
        for box in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(box, detection.PatternBox) and box.pattern.nnz > largest[0]:
                largest[:] = [box.pattern.nnz, prim.name]
        return out
    monkeypatch.setattr(detection.PatternTrace, "process", counting)
    pattern = jacobians.jacobian_sparsity(f, x)
    return largest[0], largest[1], pattern


def test_the_arrowhead_materialises_no_dense_block(monkeypatch):
    """Before: concatenating the sum's dense row with the diagonal padded every row to the
    dense row's width (n^2 = 10^8 entries here)."""
    n = 10_000
    most, where, pattern = _largest_pattern(monkeypatch, arrowhead, np.linspace(0.1, 1, n))
    assert pattern.nnz == 3 * n - 2
    assert most <= pattern.nnz, (most, where)


def test_bundle_adjustment_carries_no_duplicates(monkeypatch):
    """Before: unions kept their duplicates until a final pass; the BA residual's rows
    reached 104 stored entries for 14 distinct (26 million entries at GradBench's size 3)."""
    inputs = gb_ba.ba_inputs(4, 30, 200)
    f, v = gb_ba.ba_flat(inputs), gb_ba.ba_point(inputs)
    most, where, pattern = _largest_pattern(monkeypatch, f, v)
    assert pattern.nnz == 29 * 200
    assert most <= 15 * 2 * 200, (most, where)    # no value exceeds 15 per row


@contextlib.contextmanager
def _address_space_cap(extra):
    """At most ``extra`` more bytes of address space inside the block (Linux): a detection
    that regressed to quadratic fails with MemoryError instead of exhausting the machine."""
    try:
        import resource
        with open("/proc/self/status") as fh:
            size = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmSize:"))
    except (ImportError, OSError, StopIteration):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_arrowhead_at_n_1e5_detects_in_linear_time():
    """3n - 2 = 299,998 entries: ~0.03 s here; the bound is 100x that. A quadratic
    detection would materialise 10^10 entries: under the 2 GB cap it fails at once."""
    x = np.linspace(0.1, 1, 100_000)
    with _address_space_cap(2 * 2 ** 30):
        watch = Stopwatch()
        pattern = jacobians.jacobian_sparsity(arrowhead, x)
        seconds = watch.seconds()
    assert seconds < 3.0
    assert pattern.nnz == 3 * 100_000 - 2


# --- the budget ----------------------------------------------------------------------------
def test_a_sparse_value_passes_a_budget_smaller_than_it():
    """The budget bounds entries past ``per_element`` per element: 2 per row over 20,000
    rows is sparse however small ``budget`` is."""
    def banded(x):
        return x[1:] * np.sin(x[:-1])
    pattern = jacobians.jacobian_sparsity(banded, np.linspace(0.1, 1, 20_000), budget=1000)
    assert pattern.nnz == 2 * (20_000 - 1)


def test_a_dense_value_stops_with_what_is_allowed_and_what_to_do():
    def dense(x):
        return x * np.sum(x)
    with pytest.raises(TooDense) as err:
        jacobians.jacobian_sparsity(dense, np.ones(300), budget=10_000)
    text = str(err.value)
    allowed = max(10_000, Budget.per_element * 300)
    assert "90,000 entries" in text and f"budget of {allowed:,}" in text
    assert "budget=" in text and "sparsity=" in text
    assert Budget.limit == 20_000_000   # the default is restored after the detection


def test_the_per_element_allowance_is_the_auto_density_limit():
    from dualad.jacobians.cost import DETECT_ENTRIES
    assert Budget.per_element == DETECT_ENTRIES

"""Nested derivatives under dualad.jit (issue 32, GradBench's particle and saddle): a
solver calls jitted objectives whose loops take a value-dependent number of trips, each
trip taking an inner derivative. What made them slow, each fixed and checked here:

- a repeated solve replayed the newest program first; the one that held was the oldest,
  so every call ran the others nearly to their end before it (the programs are now kept
  most recently used first);
- every inner derivative binds a constant of its own, and naming the n-th constant probed
  n names (quadratic in the program's length): now each name is found in one probe.
"""
from __future__ import annotations

import numpy as np

import dualad
from dualad.interpreters.staging.codegen import _Namespace


def _euler_like(w):
    """An inner gradient in every trip of a loop whose trip count depends on w."""
    def potential(x):     # a weak charge at (2, 1 + w) and gravity: the loop ends
        return 0.2 / np.sqrt(np.sum((x - np.array([2.0, 1.0]) - w * np.array([0.0, 1.0])) ** 2)) \
            + x[1]
    x, v = np.array([0.0, 3.0]), np.array([0.5, 0.0])
    while x[1] > 0:
        v = v - 0.1 * dualad.grad(potential)(x)
        x = x + 0.1 * v
    return x[0] * x[0]


def _counting(jitted, x):
    """Wrap every compiled program of ``jitted`` at ``x``'s signature with a call counter."""
    entry = jitted._cache[next(iter(jitted._cache))]
    counts = {}
    for compiled, _ in entry.programs:
        fn = compiled.fn
        counts[id(compiled)] = 0

        def counted(*a, _fn=fn, _k=id(compiled)):
            counts[_k] += 1
            return _fn(*a)
        compiled.fn = counted
    return counts


def test_the_program_that_held_is_tried_first_next_time():
    g = dualad.jit(dualad.grad(lambda w: _euler_like(w[0])))
    ws = [np.array([0.0]), np.array([2.0])]
    trips = []
    for w in ws:      # two trip counts: two programs, the newest (2.0's) first
        g(w)
        trips.append(len(g.program(w).guards))
    assert trips[0] != trips[1] and list(g.cache_info().values()) == [2]
    counts = _counting(g, ws[0])
    want = [dualad.grad(lambda w: _euler_like(w[0]))(w) for w in ws]
    for _ in range(3):          # an outer solver revisiting w = 0
        np.testing.assert_allclose(g(ws[0]), want[0], rtol=1e-14)
    # the first call ran the newer program to its failing guard, then w = 0's program;
    # the later calls run w = 0's program only (before: both, every time)
    assert sum(counts.values()) == 4, counts
    np.testing.assert_allclose(g(ws[1]), want[1], rtol=1e-14)
    assert list(g.cache_info().values()) == [2]     # no trace again


def test_naming_constants_is_linear():
    ns = _Namespace()
    probes = [0]

    class Counting(dict):
        def __contains__(self, name):
            probes[0] += 1
            return dict.__contains__(self, name)
    ns.ns = Counting(ns.ns)
    consts = [np.full(2, float(k)) for k in range(3000)]
    names = [ns.bind(c, "c") for c in consts]
    assert len(set(names)) == 3000 and all(ns.ns[n] is c for n, c in zip(names, consts))
    assert probes[0] < 3 * 3000, probes[0]       # before: 3000 * 3001 / 2
    assert ns.bind(consts[7], "c") == names[7]   # the same object, the same name
    ns.ns["c_3001"] = 1.0                        # a name taken otherwise is skipped
    assert ns.bind(np.zeros(1), "c") == "c_3000" and ns.bind(np.ones(1), "c") == "c_3002"


def test_nested_solve_under_jit_equals_eager():
    """A gradient-descent solve (the solver in Python) on jitted f and grad f, f holding an
    inner gradient per trip of a value-dependent loop: the eager solve's numbers."""
    def solve(f, g, w, steps=6):
        for _ in range(steps):
            w = w - 0.05 * g(w)
        return w, f(w)
    f = lambda w: _euler_like(w[0])        # noqa: E731
    eager = solve(f, dualad.grad(f), np.array([0.3]))
    jitted = solve(dualad.jit(f), dualad.jit(dualad.grad(f)), np.array([0.3]))
    np.testing.assert_allclose(jitted[0], eager[0], rtol=1e-14)
    np.testing.assert_allclose(jitted[1], eager[1], rtol=1e-14)

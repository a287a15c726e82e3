"""Sparsity detection: a pattern interpreter that runs ``f`` once on index sets.

A :class:`PatternBox` carries a primal value (so control flow, comparisons and
derivative values behave as in a plain call) and, per element of that value,
the set of flat inputs it may depend on (a :class:`~jacobians.patterns.Pattern`).
The :class:`PatternTrace` interprets every primitive through the rules of
:mod:`jacobians.rules`; the output's patterns, stacked, are the Jacobian's
structure: ``J[i, j]`` may be nonzero only where row i lists input j.

The detection is *conservative*: a rule may add entries but never drops
one, and a primitive without a rule makes each of its outputs depend on all
of its inputs' dependencies (named in :attr:`Sparsity.fallbacks`). No rule
reads traced values (``where``, ``maximum``, ``sort``, ``max`` take the union
of what may be selected), so the pattern is valid at every x at which ``f``
takes the same *decisions*: the results of comparisons and other
zero-derivative primitives, of index functions (argmax, nonzero, ...) and of
``bool()`` of a traced value (a Python ``if``). The trace logs them
(:attr:`Sparsity.decisions`); a prepared pattern (``plan``,
``sparse_jacobian_fn``, ``sparse_hessian_fn``) compares each new point's
decisions with the logged ones and detects the pattern again where they
differ (:mod:`jacobians.validity`), so a reused pattern is never wrong at
the new point. A pattern you pass as ``sparsity=`` is used as given.

Hessian structure is the Jacobian structure of the gradient: the reverse
sweep of ``grad(f)`` is itself run on pattern boxes (its rules are registry
primitives too), so ``H[i, j]`` may be nonzero only where ``∂_j (∇f)_i`` is.
"""
from __future__ import annotations

__all__ = ["PatternBox", "PatternTrace", "Sparsity", "detect_jacobian", "detect_hessian",
           "jacobian_sparsity", "hessian_sparsity", "as_pattern"]


from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

import dualad
from dualad.extend import PrimalBox, Trace, flatten, primal_value, tree_map

from ._common import Problem
from .cost import Census, Stopwatch
from .patterns import RUNNING, Pattern, TooDense, vstack
from .rules import dense_rule, rule_for
from .decisions import DecisionLog

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


class PatternBox(PrimalBox):
    """A value on the pattern trace: its primal and the index-set pattern of its Jacobian."""

    __slots__ = ("pattern",)

    def __init__(self, trace, primal, pattern):
        super().__init__(trace, primal)
        self.pattern = pattern

    def __repr__(self):
        return f"PatternBox(shape={self.shape}, entries={self.pattern.nnz})"


class PatternTrace(Trace):
    """Interprets primitives on index-set patterns (see the module docstring)."""

    __slots__ = ("fallbacks", "census")

    def __init__(self):
        super().__init__()
        self.fallbacks = {}   # primitive name -> calls handled by the conservative rule
        self.census = Census()  # operation counts for the cost model, for free

    def process(self, prim, args, params):
        if not self.alive:
            raise self.escaped(prim, args)
        mine = [isinstance(a, PatternBox) and a._trace is self for a in args]
        primals = [a.primal if m else a for a, m in zip(args, mine)]
        ans = prim(*primals, **params)
        if prim.zero_derivative:
            if self.decisions is not None:   # a value-dependent result: logged
                self.decisions.note(prim.name, ans)
            return ans
        pats = [a.pattern if m else None for a, m in zip(args, mine)]
        self.census.count(prim, primals, ans, params)
        rule = rule_for(prim)
        try:
            if rule is None:
                raise LookupError
            out = rule(prim, pats, primals, ans, params)
        except TooDense:
            raise
        except Exception:  # noqa: BLE001 - no rule, or one that does not fit: be safe
            self.fallbacks[prim.name] = self.fallbacks.get(prim.name, 0) + 1
            out = dense_rule(prim, pats, primals, ans, params)
        if isinstance(ans, (tuple, list)):
            return type(ans)(PatternBox(self, a, p) for a, p in zip(ans, out))
        return PatternBox(self, ans, out)


class Sparsity:
    """A detected structure: ``pattern`` (scipy CSR, bool, m x n) and how it was found."""

    def __init__(self, pattern, fallbacks=None, seconds=0.0, source="detected", census=None,
                 decisions=None):
        self.pattern = pattern
        self.decisions = decisions   # the DecisionLog of the detection run (None if given)
        self.census = census
        self.fallbacks = dict(fallbacks or {})
        self.seconds = seconds
        self.source = source

    @property
    def nnz(self):
        return int(self.pattern.nnz)

    @property
    def density(self):
        m, n = self.pattern.shape
        return self.nnz / max(1, m * n)

    def describe(self):
        m, n = self.pattern.shape
        text = (f"{self.source} sparsity: {self.nnz} structural nonzeros of {m} x {n} "
                f"(density {self.density:.3g}, at most {self.max_row()} per row, "
                f"{self.max_col()} per column)")
        if self.seconds:
            text += f" in {self.seconds * 1e3:.2f} ms"
        if self.fallbacks:
            names = ", ".join(f"{k} ({v}x)" for k, v in sorted(self.fallbacks.items()))
            text += (f"; no pattern rule for {names}: each treated conservatively as "
                     f"'every output element depends on every input element'")
        return text

    def max_row(self):
        return int(np.diff(self.pattern.indptr).max(initial=0))

    def max_col(self):
        return int(np.bincount(self.pattern.indices, minlength=1).max(initial=0))


def _seed(problem, trace):
    boxes = [PatternBox(trace, x, Pattern.seed(s, o, problem.n))
             for x, s, o in zip(problem.leaves, problem.in_sizes, problem.in_offsets)]
    return problem.rebuild_inputs(boxes)


def _stack(trace, leaves, n):
    pats = []
    for o in leaves:
        if isinstance(o, PatternBox) and o._trace is trace:
            pats.append(o.pattern)
        else:
            pats.append(Pattern.empty(int(np.size(o)), n))
    return vstack(pats).to_csr()


def _run(problem, body, budget):
    old = RUNNING.limit
    if budget is not None:
        RUNNING.limit = int(budget)
    trace = PatternTrace()
    trace.decisions = DecisionLog()
    watch = Stopwatch()
    try:
        out = body(trace)
    finally:
        trace.alive = False
        RUNNING.limit = old
    leaves = flatten(out)[0]
    return Sparsity(_stack(trace, leaves, problem.n), trace.fallbacks,
                    watch.seconds(), census=trace.census,
                    decisions=trace.decisions), out


def detect_jacobian(problem, budget=None):
    """The :class:`Sparsity` of ``problem``'s Jacobian (m x n); sets its outputs.
    Raises :class:`TooDense` past the entry budget."""
    sparsity, out = _run(problem, lambda tr: problem.fun(*_seed(problem, tr)), budget)
    # The outputs at this point (a cached census may hold another point's, whose shapes
    # differ when a boolean mask selects the output).
    problem.set_outputs(tree_map(primal_value, out))
    return sparsity


def detect_hessian(problem, budget=None):
    """The :class:`Sparsity` of the Hessian of scalar ``problem`` (n x n, symmetrized)."""
    grad = dualad.grad(problem.fun, argnums=tuple(range(len(problem.nums))))
    sparsity, _ = _run(problem, lambda tr: grad(*_seed(problem, tr)), budget)
    p = sparsity.pattern
    sparsity.pattern = ((p + p.T) > 0).tocsr()
    sparsity.pattern.sort_indices()
    return sparsity


def jacobian_sparsity(f: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0,
                      budget: int | None = None) -> sp.csr_matrix:
    """The structure of ``f``'s flat Jacobian at ``args``, as a boolean SciPy CSR matrix.

    ``f`` runs once on index-set patterns: each input element carries the set of inputs it
    depends on (its own index), and every primitive's pattern rule propagates the sets, so
    an output element's set is its row of the pattern. The pattern holds for the
    decisions ``f`` took at ``args`` (comparisons, masks, branches); elsewhere it may
    differ. A primitive without a pattern rule is treated conservatively (every output
    element depends on every input element).

    Parameters
    ----------
    f : callable
        The function, ``f(*args)``.
    *args : array_like or container of array_like
        The point (plain values only).
    argnums : int or tuple of int, optional
        Which positional arguments are the inputs (default 0).
    budget : int, optional
        The most entries one value's pattern may hold during the detection beyond 32 per
        element of the value (``jacobians.patterns.Budget``; default 20,000,000): past
        ``max(budget, 32 * elements)`` ``jacobians.patterns.TooDense`` is raised. Detection
        costs time in proportion to the entries it propagates.

    Returns
    -------
    scipy.sparse.csr_matrix
        ``m x n`` booleans; rows are the output elements in C order, columns the
        differentiated inputs'.

    See Also
    --------
    sparse_jacobian : The values at these entries.
    hessian_sparsity : The Hessian's pattern.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return x[1:] - 2 * x[:-1] ** 2
    >>> P = jacobians.jacobian_sparsity(f, np.ones(4))
    >>> print(P.toarray().astype(int))
    [[1 1 0 0]
     [0 1 1 0]
     [0 0 1 1]]
    """
    return detect_jacobian(Problem("jacobian_sparsity", f, args, argnums), budget).pattern


def hessian_sparsity(f: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0,
                     budget: int | None = None) -> sp.csr_matrix:
    r"""The structure of the Hessian of scalar ``f``, as a symmetric boolean CSR matrix (n x n).

    The gradient's reverse sweep runs on index-set patterns (the nonlinear interactions of
    the inputs), and the result is symmetrized: entry ``(i, j)`` is set when
    :math:`\partial^2 f / \partial x_i \partial x_j` may be nonzero.

    Parameters
    ----------
    f : callable
        The scalar function, ``f(*args)``.
    *args : array_like or container of array_like
        The point (plain values only).
    argnums : int or tuple of int, optional
        Which positional arguments are the inputs (default 0).
    budget : int, optional
        The most entries one value's pattern may hold during the detection beyond 32 per
        element of the value (``jacobians.patterns.Budget``; default 20,000,000): past
        ``max(budget, 32 * elements)`` ``jacobians.patterns.TooDense`` is raised. Detection
        costs time in proportion to the entries it propagates.

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n x n`` booleans, symmetric.

    See Also
    --------
    sparse_hessian : The values at these entries.
    jacobian_sparsity : The Jacobian's pattern.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return np.sum((x[1:] - x[:-1]) ** 2)
    >>> print(jacobians.hessian_sparsity(f, np.arange(4.0)).toarray().astype(int))
    [[1 1 0 0]
     [1 1 1 0]
     [0 1 1 1]
     [0 0 1 1]]
    """
    return detect_hessian(Problem("hessian_sparsity", f, args, argnums), budget).pattern


def as_pattern(api, sparsity, shape):
    """A user-supplied pattern (anything scipy.sparse or numpy accepts) as bool CSR."""
    if isinstance(sparsity, Sparsity):
        sparsity = sparsity.pattern
    m = sp.csr_matrix(sparsity)
    if m.shape != tuple(shape):
        raise ValueError(f"{api}: the sparsity pattern has shape {m.shape}, but the flat "
                         f"Jacobian has shape {tuple(shape)} (outputs x inputs)")
    m = (m != 0).tocsr()
    m.sum_duplicates()
    m.sort_indices()
    return m

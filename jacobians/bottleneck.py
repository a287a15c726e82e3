r"""Mixed-mode (cross-country) Jacobians through a bottleneck of ``f``'s recorded program.

Write ``f = g ∘ h`` with :math:`h: \mathbb{R}^n \to \mathbb{R}^k` and
:math:`g: \mathbb{R}^k \to \mathbb{R}^m`. The chain rule gives

.. math::

    J_f(x) = J_g(h(x))\, J_h(x),

and when the bottleneck ``k`` is narrow (``k ≪ n, m``) each factor is cheap: ``J_h`` has
``k`` rows (``k`` reverse sweeps, or ``n`` forward ones when ``n < k``) and ``J_g`` has
``k`` columns (``k`` forward sweeps, or ``m`` reverse ones): about ``2k`` sweeps where pure
forward mode needs ``n`` and pure reverse mode ``m``. The product is a dense ``k``-wide
matrix product (``2 m k n`` flops), or sparse times sparse when the factors are sparse
(Griewank and Walther, *Evaluating Derivatives*, 2nd ed., ch. 9-10: vertex elimination;
Naumann, *Optimal Jacobian accumulation is NP-complete*, 2008, for the general problem,
of which a single cut is the simplest non-trivial case).

**Finding the cut.** :func:`find_bottleneck` works on the program :func:`dualad.jit` records
of ``f``. Its values form a DAG: a vertex per value (an input or an equation's output),
an edge from each value to every equation output that reads it. A set ``C`` of values is
a *vertex cut* when every path from an input to the output passes through ``C``; then the
output is a function of ``C`` alone, ``g``, and ``C`` is a function of the inputs, ``h``.
Its weight is :math:`\sum_{v \in C} \operatorname{size}(v)` — the rows of ``J_h`` and the
columns of ``J_g``. The minimum weight cut is a maximum flow (Menger): split each vertex
``v`` into ``v_in → v_out`` of capacity ``size(v)``, give every program edge and the
edges from a source to the inputs and from the output to a sink a capacity no cut can
afford (``min(n, m) + 1``), and take the vertices whose ``v_in`` the source reaches in the
residual graph of a maximum flow and whose ``v_out`` it does not
(:func:`scipy.sparse.csgraph.maximum_flow`). Of the minimum cuts this is the one nearest
the inputs. Inputs ``g`` reads directly belong to the cut (they are values too).

The split is a :class:`jacobians.gathers.Cut`: its prefix (every equation on the source
side, and the ones computing constants they read) is ``h``, :meth:`~jacobians.gathers.Cut.select`
runs it, its rest is ``g``, :meth:`~jacobians.gathers.Cut.g` runs it. A program with guards
has no cut: ``f`` branched on a value, and a branch taken in ``h`` is a decision ``g``'s
replay could not check (the program is one branch's).

**Skipping the detection.** The planner looks for the cut before it detects ``J_f``'s
sparsity (when the census saw a product: without one a narrow cut is a selection, whose
sparse Jacobian the colorings take) and, when mixed mode is modelled cheaper than every
dense way, does not detect it: ``J_f`` has rank at most ``k``, so a coloring would need at
least as many directions as ``J_f``'s densest row or column, and could beat the ``2k`` of
mixed mode only where that is under ``2k`` (what this can miss: a sparse ``J_f`` of a
narrow but not small cut). The detection of a dense pattern costs a second at n = 500.

**Chains.** After the narrowest cut, :func:`jacobians.chain.find_chain` weighs further
single-value cuts (``f = s_L ∘ ... ∘ s_1``, ``J_f = J_L ⋯ J_1``) by a shortest path over
their modelled piece costs; the factors are multiplied in the matrix-chain order
(:class:`Chain`). One cut is a chain of two pieces.

**Evaluating.** :class:`Mixed` holds a plan of each piece (``h`` at ``x``, ``g`` at the cut
values for one cut), each made by the planner's own ``prepare`` (each may be sparse), and
multiplies their results. ``plan(f, x, mode="mixed")`` takes it whatever the model says
(:func:`not_mixable` says when it cannot). A call first checks what ``f``'s program assumed about its closure
(:class:`dualad.extend.Assumed`), and finds the cut again when that changed.
"""
from __future__ import annotations

__all__ = ["find_bottleneck", "Chain", "Mixed", "mixed_plan", "worth_mixing", "not_mixable",
           "MIN_SIZE", "ONE_SHOT", "MAX_PIECES"]

import time

import numpy as np

from ._common import Problem, fname
from .chain import MAX_PIECES, Piece, chain_order, chain_product, find_chain, min_cut
from .gathered import CutWay
from .gathers import Cut

#: Below this many inputs or outputs, no bottleneck is looked for (the pure modes are few
#: sweeps anyway, and recording the program costs an evaluation).
MIN_SIZE = 64
#: ``jacobian``'s one-shot auto path looks for a cut only when the dense ways cost this many
#: evaluations of ``f`` (a plan, made to be called again, always looks).
ONE_SHOT = 50
_MULADD = 0.25e-9    # seconds per multiply-add of J_g J_h (dgemm with k narrow: measured)
_DENSE = 0.1         # a factor more than this full is multiplied as a dense array


def find_bottleneck(program, n, m):
    """``(cut, why)``: the minimum weight vertex cut between the inputs and the output of
    ``program`` as a :class:`jacobians.gathers.Cut` (``why`` None), or ``(None, why)``.

    ``n``, ``m``: the input and output sizes; a cut is returned only when it is narrower
    than both (else a pure mode is no more sweeps than the cut's two sides). Its prefix
    (``h``) is every equation on a path from the inputs to the cut and its rest (``g``)
    every one from the cut to the output, each with the constants it reads
    (:class:`jacobians.chain.Piece`); an equation on both is evaluated by both."""
    if program.guards:
        return None, (f"the program has {len(program.guards)} guard(s): f branches on a "
                      f"value, and g's replay could not check a decision taken in h")
    if len(program.outvars) != 1 or program.outvars[0].__class__ is not int:
        return None, "f's output is not one array computed from its inputs"
    program = program.pruned()
    out = program.outvars[0]
    cut_vars = min_cut(Piece(program, program.invars, [out]), min(n, m) + 1)
    k = sum(int(np.prod(program.avals[v][1], dtype=np.int64)) for v in cut_vars)
    if k >= min(n, m):
        return None, (f"the narrowest cut between the inputs and the output has {k:,} "
                      f"values, no fewer than min(n, m) = {min(n, m):,}")
    prefix = Piece(program, program.invars, cut_vars).body
    rest = Piece(program, cut_vars, [out]).body
    return Cut(program, prefix, cut_vars, None, [], rest=rest), None


def worth_mixing(problem, mode, sparsity, dense_ok, one_shot, census, estimates):
    """Whether to look for a bottleneck: mode and sparsity left to the planner, the dense
    result within ``max_memory``, every argument a float64 array differentiated in order,
    at least :data:`MIN_SIZE` inputs and outputs, a product (``matmul``, ``einsum``) among
    the primitives the census counted (without one, a narrow cut is a selection, whose
    sparse Jacobian the colorings take), and not itself a side of a mixed plan.
    ``one_shot`` (``jacobian``'s auto path: one Jacobian, not a prepared plan): only when
    the cheapest dense way in ``estimates`` costs :data:`ONE_SHOT` evaluations of ``f`` or
    more, since finding the cut records ``f`` once more and plans both sides."""
    if mode != "auto" or sparsity is not None or not dense_ok or census.blas_flops <= 0:
        return False
    if problem.executor is not None or problem.nums != tuple(range(len(problem.args))):
        return False
    if problem.__dict__.get("mixed_side") or min(problem.n, problem.m) < MIN_SIZE:
        return False
    best = min((e for e, _ in estimates.values()), default=0.0)
    if one_shot and not (census.t_plain and best >= ONE_SHOT * census.t_plain):
        return False
    return all(a.__class__ is np.ndarray and a.dtype == np.float64 for a in problem.args)


def not_mixable(problem, sparsity):
    """Why ``mode="mixed"`` cannot take ``problem`` (a sentence), or None: it needs every
    argument a float64 array, differentiated in order, no ``executor=`` and no
    ``sparsity=`` (the factors' patterns are their own plans')."""
    if sparsity is not None:
        return ("sparsity= was given: the pattern of J_f is for the sparse modes (each "
                "factor of mixed mode has a plan, sparse where its own pattern is).")
    if problem.executor is not None:
        return "executor= was given: mixed mode runs in the calling process."
    if problem.nums != tuple(range(len(problem.args))):
        return (f"argnums={problem.nums} leaves arguments out: mixed mode differentiates "
                f"every argument, in order.")
    for i, a in enumerate(problem.args):
        if not (a.__class__ is np.ndarray and a.dtype == np.float64):
            dtype = getattr(a, "dtype", None)
            return (f"argument {i} is a {type(a).__name__}"
                    f"{f' of {dtype}' if dtype is not None else ''}: mixed mode takes "
                    f"float64 arrays (pass np.asarray(x, dtype=float)).")
    return None


def _flat(j, plan):
    """An inner plan's result as a 2-D CSR matrix or array (``plan.m x plan.n``); a dense
    mode's replay gives blocks nested as outputs, then arguments (several cut values)."""
    import scipy.sparse as sp
    if sp.issparse(j):
        return j
    if isinstance(j, np.ndarray):
        return j.reshape(plan.m, plan.n)
    p = plan.problem
    outs = j if len(p.out_shapes) > 1 else (j,)
    rows = []
    for out, size in zip(outs, (int(np.prod(s)) for s in p.out_shapes)):
        blocks = out if len(p.in_shapes) > 1 else (out,)
        rows.append([np.asarray(b).reshape(size, s) for b, s in zip(blocks, p.in_sizes)])
    return np.block(rows)


def product(jg, jh):
    """``J_g J_h``: an array when either factor is more than a tenth full (the ``k``-wide
    dense product), else sparse times sparse (CSR)."""
    import scipy.sparse as sp
    full = [(j.nnz if sp.issparse(j) else j.size) > _DENSE * j.shape[0] * j.shape[1]
            for j in (jg, jh)]
    if any(full):
        a = jg.toarray() if sp.issparse(jg) else jg
        b = jh.toarray() if sp.issparse(jh) else jh
        return a @ b
    return (sp.csr_matrix(jg) @ sp.csr_matrix(jh)).tocsr()


class Chain:
    """The pieces ``f = s_L ∘ ... ∘ s_1`` of ``f``'s program (:func:`jacobians.chain.find_chain`),
    the first cut (a :class:`jacobians.gathers.Cut`, whose ``holds`` a call checks), the
    widths ``dims = [n, d_1, ..., m]`` and the cheapest association of the product
    (:func:`jacobians.chain.chain_order`: ``muladds``, ``split``)."""

    def __init__(self, cut, pieces):
        self.cut, self.pieces, self.program = cut, pieces, cut.program
        self.dims = [pieces[0].widths[0]] + [p.widths[1] for p in pieces]
        self.muladds, self.split = chain_order(self.dims)

    def holds(self):
        return self.cut.holds()

    @property
    def cuts(self):
        """The variables of each cut between two pieces, in order."""
        return [p.outs for p in self.pieces[:-1]]


class Mixed(CutWay):
    r"""The Jacobian of ``problem`` as ``J_L ... J_1`` through a chain of cuts (``J_g J_h``
    for one cut; see the module docstring).

    ``state``: ``(chain, plans, assumed)``, replaced as one when the cut is found again
    (what ``f``'s program read outside its arguments changed): the :class:`Chain`, one
    plan per piece, what ``f``'s program read. The plan treats it as its ``through``
    (:meth:`jacobians.plan.Plan.go_mixed`), so it answers as an inner plan too: ``mode``,
    ``directions``, ``n_chunks``, ``_use_jit``... ``measured``: the seconds of the last
    call's parts (one per piece, its values and its factor, then the product)."""

    kind = "mixed"
    mode = "mixed"
    ASSUMED = 2
    LOST = "a bottleneck to plan through"

    def __init__(self, problem, chain, plans, assumed, remake):
        self.problem = problem
        self.state = (chain, plans, assumed)
        self.remake = remake     # problem -> (Mixed or None, why): the cut found again
        self.jit = True
        self.refound = 0
        self.measured = None
        self.wins = False        # modelled cheaper than every dense way (set by the planner)

    chain = property(lambda self: self.state[0])
    cut = property(lambda self: self.state[0].cut)
    plans = property(lambda self: self.state[1])
    h_plan = property(lambda self: self.state[1][0])
    g_plan = property(lambda self: self.state[1][-1])
    inner = property(lambda self: self)

    @property
    def k(self):
        """The width of the narrowest cut (for one cut: the rows of ``J_h``, the columns of
        ``J_g``)."""
        return min(self.chain.dims[1:-1])

    @property
    def summary(self):
        """The cuts in words: ``a cut of k = 10 values`` or ``a chain of 3 cuts (k = 10,
        500, 8)``."""
        widths = self.chain.dims[1:-1]
        if len(widths) == 1:
            return f"a cut of k = {widths[0]:,} values"
        return f"a chain of {len(widths)} cuts (k = {', '.join(f'{w:,}' for w in widths)})"

    @property
    def product_text(self):
        """``J_g J_h`` for one cut, ``J_3 J_2 J_1`` for a chain (in words)."""
        count = len(self.plans)
        if count == 2:
            return "J_g J_h"
        return " ".join(f"J_{i}" for i in range(count, 0, -1))

    @property
    def via(self):
        if len(self.plans) == 2:
            return f" (J_f = J_g J_h through a cut of {self.cut.selected:,} values)"
        return f" (J_f = a product of {len(self.plans)} factors through {self.summary})"

    directions = property(lambda self: sum(p.directions for p in self.plans))
    n_chunks = property(lambda self: sum(p.n_chunks for p in self.plans))
    chunk_size = property(lambda self: max(p.chunk_size for p in self.plans))
    bytes_per_direction = property(lambda self: max(p.bytes_per_direction
                                                    for p in self.plans))
    redetections = property(lambda self: sum(p.redetections for p in self.plans))

    def _use_jit(self, jit):
        self.jit = jit
        for p in self.plans:
            p._use_jit(jit)

    def wait_compiled(self, timeout=None):
        """Whether every piece's replayed programs are ready (see ``Plan.wait_compiled``)."""
        return all(p.wait_compiled(timeout) for p in self.plans)

    def __call__(self, args):
        """``J_f`` (``m x n``: an array, or CSR when every factor is sparse) at plain
        ``args`` of the planned shapes: each piece's factor at its inputs' values, then
        their product in the chain's order."""
        chain, plans, _ = self.current(args)
        values = [np.asarray(a, dtype=np.float64) for a in args]
        factors, parts = [], []
        for i, (piece, plan) in enumerate(zip(chain.pieces, plans)):
            t0 = time.perf_counter()
            factors.append(_flat(plan(*values), plan))
            if i + 1 < len(plans):
                values = piece.run(values)
            parts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = chain_product(factors, chain.split, product)
        self.measured = tuple(parts) + (time.perf_counter() - t0,)
        return out

    def seconds(self):
        """``(per piece..., product, total)``: the modelled (or timed) seconds per
        Jacobian: each piece's plan's estimate, the product's multiply-adds in the
        chain's order at :data:`_MULADD`."""
        pieces = [p.estimates[p.mode][0] for p in self.plans]
        prod = _MULADD * self.chain.muladds
        return (*pieces, prod, sum(pieces) + prod)

    def describe(self):
        """Lines for ``explain()``: the cuts, each piece's plan and cost, the product's
        order, the measured seconds of the last call."""
        if len(self.plans) == 2:
            lines = self._describe_one()
        else:
            lines = self._describe_chain()
        if self.refound:
            lines.append(f"  The cut was found again {self.refound} time(s) (what "
                         f"{self.problem.name} reads outside its arguments changed).")
        return lines

    def _describe_one(self):
        c, h, g, p = self.cut, self.h_plan, self.g_plan, self.problem
        sh, sg, prod, total = self.seconds()
        lines = [f"Mixed mode (cross-country): the narrowest cut between {p.name}'s inputs "
                 f"and its output is k = {self.k:,} values ({where(c.program, c.cut)}); "
                 f"J_f = J_g J_h, J_h ({self.k:,} x {p.n:,}) by {_side(h)}, J_g "
                 f"({g.m:,} x {self.k:,}) by {_side(g)}, then their {p.m:,} x {self.k:,} x "
                 f"{p.n:,} product.",
                 f"  Estimated: J_h {_fmt(sh)} ({h.estimates[h.mode][1]}), J_g {_fmt(sg)} "
                 f"({g.estimates[g.mode][1]}), product {_fmt(prod)} (modelled): "
                 f"{_fmt(total)} per Jacobian."]
        if self.measured is not None:
            mh, mg, mp = self.measured
            lines.append(f"  Measured (last call): J_h {_fmt(mh)}, h and J_g {_fmt(mg)}, "
                         f"product {_fmt(mp)}: {_fmt(mh + mg + mp)}.")
        return lines

    def _describe_chain(self):
        chain, p = self.chain, self.problem
        *each, prod, total = self.seconds()
        d = chain.dims
        lines = [f"Mixed mode (cross-country): {self.summary} between {p.name}'s inputs and "
                 f"its output; J_f = J_{len(d) - 1} ... J_1, widths "
                 f"{' -> '.join(f'{w:,}' for w in d)}."]
        for i, cut in enumerate(chain.cuts):
            lines.append(f"  Cut {i + 1}: {where(chain.program, cut)}.")
        for i, plan in enumerate(self.plans):
            lines.append(f"  J_{i + 1} ({d[i + 1]:,} x {d[i]:,}) by {_side(plan)}: "
                         f"{_fmt(each[i])} ({plan.estimates[plan.mode][1]}).")
        lines.append(f"  Product in the order {_order_text(chain.split, len(d) - 1)} (the "
                     f"matrix-chain programme): {chain.muladds:,} multiply-adds, "
                     f"{_fmt(prod)} (modelled); {_fmt(total)} per Jacobian.")
        if self.measured is not None:
            parts = ", ".join(f"J_{i + 1} {_fmt(t)}" for i, t in enumerate(self.measured[:-1]))
            lines.append(f"  Measured (last call): {parts}, product "
                         f"{_fmt(self.measured[-1])}: {_fmt(sum(self.measured))}.")
        return lines


def _order_text(split, n):
    """The association ``split`` gives, as a parenthesized product: ``J_4 (J_3 (J_2 J_1))``."""
    def text(i, j):
        if i == j:
            return f"J_{i}"
        s = split[(i, j)]
        left, right = text(s + 1, j), text(i, s)
        wrap = [f"({t})" if " " in t else t for t in (left, right)]
        return f"{wrap[0]} {wrap[1]}"
    return text(1, n)


def _fmt(seconds):
    from .cost import _fmt as fmt
    return fmt(seconds)


def _side(plan):
    return (f"{plan.mode} ({plan.directions} direction(s) in {plan.n_chunks} sweep(s))")


def where(program, cut):
    """Where a cut is, in words: each of its values, an input or the equation computing it."""
    made = {e.out: (i, e) for i, e in enumerate(program.body)}
    n_eqns = len(program.body)
    parts = []
    for v in cut:
        size = int(np.prod(program.avals[v][1], dtype=np.int64))
        if v in made:
            i, e = made[v]
            parts.append(f"v{v} = {e.prim.name}(...), {size:,} values, equation {i + 1} "
                         f"of {n_eqns}")
        else:
            parts.append(f"input {program.invars.index(v)}, {size:,} values, read by g "
                         f"directly")
    return "; ".join(parts)


def mixed_plan(problem, prepare, max_memory, calibrate, replayed, chains=True):
    """``(mixed, seconds)``: the plan of ``problem`` through its narrowest cut (and, with
    ``chains``, the further cuts that pay: :func:`jacobians.chain.find_chain`) and its
    modelled cost, or ``(None, why)``. ``prepare``: the planner's prepare function (this
    module does not import the planner)."""
    from dualad import jit
    from dualad.extend import Assumed
    try:
        jf = jit(problem.f)
        jf.name = problem.name
        program = jf.program(*problem.args)
        assumed = Assumed.of(problem.f, problem.name)
    except (TypeError, RuntimeError, ValueError) as e:   # f cannot be recorded: no cut
        return None, f"not looked for: {problem.name}'s program could not be recorded ({e})"
    cut, why = find_bottleneck(program, problem.n, problem.m)
    if cut is None:
        return None, why
    pieces = find_chain(cut.program, cut.cut, MAX_PIECES if chains else 2)
    name = fname(problem.f)
    values, plans = list(problem.args), []
    for i, piece in enumerate(pieces):
        piece.__name__ = _piece_name(name, i, len(pieces))
        plans.append(_side_plan(problem, piece, values, prepare, max_memory, calibrate,
                                replayed))
        if i + 1 < len(pieces):
            values = piece.run(values)

    def remake(at):
        return mixed_plan(at, prepare, max_memory, calibrate, replayed, chains)
    mixed = Mixed(problem, Chain(cut, pieces), plans, assumed, remake)
    return mixed, mixed.seconds()[-1]


def _piece_name(name, i, count):
    """``f up to its cut`` and ``f after its cut`` for one cut; ``f, piece 2 of 4``."""
    if count == 2:
        return f"{name} up to its cut" if i == 0 else f"{name} after its cut"
    return f"{name}, piece {i + 1} of {count}"


def _side_plan(problem, side, args, prepare, max_memory, calibrate, replayed):
    """The planner's plan of one piece at ``args``, its result CSR when sparse."""
    inner = Problem(problem.api, side, list(args), tuple(range(len(args))))
    inner.mixed_side = True
    return prepare(inner, "auto", "auto", None, None, max_memory, "sparse", calibrate,
                   "worth", replayed=replayed)

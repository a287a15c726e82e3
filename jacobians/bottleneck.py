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

**Evaluating.** :class:`Mixed` holds a plan of ``h`` (at ``x``) and one of ``g`` (at the cut
values), both made by the planner's own ``prepare`` (each may be sparse), and multiplies
their CSR results. A call first checks what ``f``'s program assumed about its closure
(:class:`dualad.extend.Assumed`), and finds the cut again when that changed.
"""
from __future__ import annotations

__all__ = ["find_bottleneck", "Mixed", "mixed_plan", "worth_mixing", "MIN_SIZE", "ONE_SHOT"]

import time

import numpy as np

from ._common import Problem, fname
from .gathered import CutWay, _G
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
    than both (else a pure mode is no more sweeps than the cut's two sides)."""
    if program.guards:
        return None, (f"the program has {len(program.guards)} guard(s): f branches on a "
                      f"value, and g's replay could not check a decision taken in h")
    if len(program.outvars) != 1 or program.outvars[0].__class__ is not int:
        return None, "f's output is not one array computed from its inputs"
    program = program.pruned()
    order, sizes = _values(program)
    cut_vars, source_side = _min_cut(program, order, sizes, min(n, m) + 1)
    k = sum(sizes[v] for v in cut_vars)
    if k >= min(n, m):
        return None, (f"the narrowest cut between the inputs and the output has {k:,} "
                      f"values, no fewer than min(n, m) = {min(n, m):,}")
    consts = _constant_only(program)
    prefix = [e for e in program.body if e.out in source_side or e.out in consts]
    rest = [e for e in program.body if e.out not in source_side]
    return Cut(program, prefix, cut_vars, None, [], rest=rest), None


def _values(program):
    """The program's values in order (inputs, then equation outputs) and their sizes."""
    order = list(program.invars) + [e.out for e in program.body]
    sizes = {v: int(np.prod(program.avals[v][1], dtype=np.int64)) for v in order}
    return order, sizes


def _min_cut(program, order, sizes, big):
    """``(cut, source_side)``: the vertices of a minimum weight vertex cut nearest the
    inputs (in program order) and the values on the inputs' side of it (the cut's
    included), by a maximum flow on the node-split graph (see the module docstring)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order, maximum_flow
    index = {v: i for i, v in enumerate(order)}
    nv = len(order)
    source, sink = 2 * nv, 2 * nv + 1
    edges = {(2 * i, 2 * i + 1): min(sizes[v], big) for v, i in index.items()}
    for e in program.body:
        for a in e.ins:
            if a.__class__ is int:
                edges[(2 * index[a] + 1, 2 * index[e.out])] = big
    for v in program.invars:
        edges[(source, 2 * index[v])] = big
    edges[(2 * index[program.outvars[0]] + 1, sink)] = big
    rows, cols = np.array(list(edges)).T
    cap = sp.csr_matrix((np.fromiter(edges.values(), np.int32, len(edges)), (rows, cols)),
                        shape=(2 * nv + 2, 2 * nv + 2))
    flow = maximum_flow(cap, source, sink).flow
    residual = (cap - flow).tocsr()
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reached = np.zeros(2 * nv + 2, dtype=bool)
    reached[breadth_first_order(residual, source, directed=True,
                                return_predecessors=False)] = True
    cut = [v for v in order if reached[2 * index[v]] and not reached[2 * index[v] + 1]]
    side = {v for v in order if reached[2 * index[v]]}
    return cut, side


def _constant_only(program):
    """The equation outputs that read no input (constants of the program computed from
    constants): ``h`` and ``g`` each compute the ones they read."""
    dependent = set(program.invars)
    for e in program.body:
        if any(a.__class__ is int and a in dependent for a in e.ins):
            dependent.add(e.out)
    return {e.out for e in program.body} - dependent


class _H:
    """``h``: ``f`` up to its cut, a function of ``f``'s inputs returning the cut values (a
    tuple when there are several). Slots only, as :class:`jacobians.gathered._G`."""

    __slots__ = ("cut", "__name__")

    def __init__(self, cut, name):
        self.cut = cut
        self.__name__ = f"{name} up to its cut"

    def __call__(self, *inputs):
        values = self.cut.select(list(inputs))
        return values[0] if len(values) == 1 else tuple(values)


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


class Mixed(CutWay):
    r"""The Jacobian of ``problem`` as ``J_g J_h`` through a cut (see the module docstring).

    ``state``: ``(cut, h_plan, g_plan, assumed)``, replaced as one when the cut is found
    again (what ``f``'s program read outside its arguments changed). The plan treats it
    as its ``through`` (:meth:`jacobians.plan.Plan.go_mixed`), so it answers as an inner
    plan too: ``mode``, ``directions``, ``n_chunks``, ``_use_jit``... ``measured``: the
    seconds of the last call's parts ``(J_h, h and J_g, product)``."""

    kind = "mixed"
    mode = "mixed"
    ASSUMED = 3
    LOST = "a bottleneck to plan through"

    def __init__(self, problem, cut, h_plan, g_plan, assumed, remake):
        self.problem = problem
        self.state = (cut, h_plan, g_plan, assumed)
        self.remake = remake     # problem -> (Mixed or None, why): the cut found again
        self.jit = True
        self.refound = 0
        self.measured = None
        self.wins = False        # modelled cheaper than every dense way (set by the planner)

    cut = property(lambda self: self.state[0])
    h_plan = property(lambda self: self.state[1])
    g_plan = property(lambda self: self.state[2])
    inner = property(lambda self: self)

    @property
    def via(self):
        return f" (J_f = J_g J_h through a cut of {self.cut.selected:,} values)"

    @property
    def k(self):
        """The width of the cut: the rows of ``J_h``, the columns of ``J_g``."""
        return self.cut.selected

    directions = property(lambda self: self.h_plan.directions + self.g_plan.directions)
    n_chunks = property(lambda self: self.h_plan.n_chunks + self.g_plan.n_chunks)
    chunk_size = property(lambda self: max(self.h_plan.chunk_size, self.g_plan.chunk_size))
    bytes_per_direction = property(lambda self: max(self.h_plan.bytes_per_direction,
                                                    self.g_plan.bytes_per_direction))
    redetections = property(lambda self: self.h_plan.redetections
                            + self.g_plan.redetections)

    def _use_jit(self, jit):
        self.jit = jit
        self.h_plan._use_jit(jit)
        self.g_plan._use_jit(jit)

    def wait_compiled(self, timeout=None):
        """Whether both sides' replayed programs are ready (see ``Plan.wait_compiled``)."""
        return self.h_plan.wait_compiled(timeout) and self.g_plan.wait_compiled(timeout)

    def __call__(self, args):
        """``J_f`` (``m x n``: an array, or CSR when both factors are sparse) at plain
        ``args`` of the planned shapes."""
        cut, h_plan, g_plan, _ = self.current(args)
        xs = [np.asarray(a, dtype=np.float64) for a in args]
        t0 = time.perf_counter()
        jh = _flat(h_plan(*xs), h_plan)
        t1 = time.perf_counter()
        jg = _flat(g_plan(*cut.select(xs)), g_plan)
        t2 = time.perf_counter()
        out = product(jg, jh)
        self.measured = (t1 - t0, t2 - t1, time.perf_counter() - t2)
        return out

    def seconds(self):
        """``(J_h, J_g, product, total)``: the modelled (or timed) seconds per Jacobian."""
        h, g = self.h_plan, self.g_plan
        sh, sg = h.estimates[h.mode][0], g.estimates[g.mode][0]
        prod = _MULADD * self.problem.m * self.k * self.problem.n
        return sh, sg, prod, sh + sg + prod

    def describe(self):
        """Lines for ``explain()``: the cut, each side's plan and cost, the measured
        seconds of the last call."""
        c, h, g, p = self.cut, self.h_plan, self.g_plan, self.problem
        sh, sg, prod, total = self.seconds()
        lines = [f"Mixed mode (cross-country): the narrowest cut between {p.name}'s inputs "
                 f"and its output is k = {self.k:,} values ({where(c)}); J_f = J_g J_h, "
                 f"J_h ({self.k:,} x {p.n:,}) by {_side(h)}, J_g ({g.m:,} x {self.k:,}) by "
                 f"{_side(g)}, then their {p.m:,} x {self.k:,} x {p.n:,} product.",
                 f"  Estimated: J_h {_fmt(sh)} ({h.estimates[h.mode][1]}), J_g {_fmt(sg)} "
                 f"({g.estimates[g.mode][1]}), product {_fmt(prod)} (modelled): "
                 f"{_fmt(total)} per Jacobian."]
        if self.measured is not None:
            mh, mg, mp = self.measured
            lines.append(f"  Measured (last call): J_h {_fmt(mh)}, h and J_g {_fmt(mg)}, "
                         f"product {_fmt(mp)}: {_fmt(mh + mg + mp)}.")
        if self.refound:
            lines.append(f"  The cut was found again {self.refound} time(s) (what "
                         f"{p.name} reads outside its arguments changed).")
        return lines


def _fmt(seconds):
    from .cost import _fmt as fmt
    return fmt(seconds)


def _side(plan):
    return (f"{plan.mode} ({plan.directions} direction(s) in {plan.n_chunks} sweep(s))")


def where(cut):
    """Where the cut is, in words: each cut value, an input or the equation computing it."""
    program = cut.program
    made = {e.out: (i, e) for i, e in enumerate(program.body)}
    n_eqns = len(program.body)
    parts = []
    for v, size in zip(cut.cut, cut.sizes):
        if v in made:
            i, e = made[v]
            parts.append(f"v{v} = {e.prim.name}(...), {size:,} values, equation {i + 1} "
                         f"of {n_eqns}")
        else:
            parts.append(f"input {program.invars.index(v)}, {size:,} values, read by g "
                         f"directly")
    return "; ".join(parts)


def mixed_plan(problem, prepare, max_memory, calibrate, replayed):
    """``(mixed, seconds)``: the plan of ``problem`` through its narrowest cut and its
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
    h_plan = _side_plan(problem, _H(cut, fname(problem.f)), problem.args, prepare,
                        max_memory, calibrate, replayed)
    g_plan = _side_plan(problem, _G(cut, fname(problem.f), "cut"), cut.select(list(problem.args)),
                        prepare, max_memory, calibrate, replayed)

    def remake(at):
        return mixed_plan(at, prepare, max_memory, calibrate, replayed)
    mixed = Mixed(problem, cut, h_plan, g_plan, assumed, remake)
    return mixed, mixed.seconds()[3]


def _side_plan(problem, side, args, prepare, max_memory, calibrate, replayed):
    """The planner's plan of one side (``h`` or ``g``) at ``args``, its result CSR."""
    inner = Problem(problem.api, side, list(args), tuple(range(len(args))))
    inner.mixed_side = True
    return prepare(inner, "auto", "auto", None, None, max_memory, "sparse", calibrate,
                   "worth", replayed=replayed)

r"""A plan's Jacobian through the input gathers: ``J_f = J_g S`` (:mod:`jacobians.gathers`).

:func:`through_gathers` records ``f``'s program once (:func:`dualad.jit`), finds its cut
(the selections it starts with), and prepares an inner plan for ``g``, the rest of ``f`` as a
function of the selected values, with the planner's own ``prepare`` (passed in: this module
does not import the planner). :class:`Through` evaluates it: the selections of the new
point, the inner plan's compressed sweeps of ``g`` (its own detection, coloring, mode choice
and replay), then :class:`jacobians.gathers.Composition` into ``J_f``.

A call checks first what a replay of ``f``'s program would check (:mod:`dualad.interpreters.staging.assumed`:
its closure, globals, the containers it reaches) and that every index array of the
selections still holds its values (a closed-over ``obs`` changed in place); either change
finds the cut again at that call. Traced arguments (a plan called inside ``grad``/``jit``)
take the planner's traced path instead, on ``f`` with the composed pattern.
"""
from __future__ import annotations

__all__ = ["CutWay", "Through", "through_gathers", "worth_trying"]

import numpy as np

from . import cost
from ._common import Problem, fname
from .gathers import Composition, find_cut


def worth_trying(problem, census, mode, sparse, sparsity, output):
    """Whether to look for a cut: mode and sparsity left to the planner, a sparse result,
    every argument a float64 array differentiated in order, and a selection by an integer
    array (a gather) among the primitives the census counted."""
    if mode != "auto" or sparse is False or sparsity is not None or output == "dense":
        return False
    if problem.executor is not None or problem.nums != tuple(range(len(problem.args))):
        return False
    if not all(a.__class__ is np.ndarray and a.dtype == np.float64 for a in problem.args):
        return False
    return census.gathers > 0


class _G:
    """``g``, the rest of ``f`` after its cut (its selections, or mixed mode's bottleneck),
    as a function of the cut values (named after ``f`` and ``what`` was cut in the inner
    plan's messages). Slots only: a jit replay of the inner plan reads the cut as state
    fixed at its trace (the cut is replaced, not changed)."""

    __slots__ = ("cut", "__name__")

    def __init__(self, cut, name, what="selections"):
        self.cut = cut
        self.__name__ = f"{name} after its {what}"

    def __call__(self, *cuts):
        return self.cut.g(*cuts)


class CutWay:
    """What a plan through a cut of ``f``'s program checks at each call (this module's
    :class:`Through` and :class:`jacobians.bottleneck.Mixed`): the planned shapes, what the
    program read outside its arguments and the cut's index arrays, the cut found again
    when either changed. A subclass has ``problem``, ``state`` (the cut first, what ``f``
    read at ``state[ASSUMED]``), ``remake``, ``jit``, ``refound``, ``_use_jit`` and
    ``LOST`` (what its program no longer has, for the message)."""

    ASSUMED = 2
    LOST = "selections to plan through"

    def takes(self, problem):
        """Whether ``problem`` (this function at another point) has the planned arguments:
        as many, of the planned shapes (a call with more arguments takes the direct way)."""
        return len(problem.args) == len(self.problem.args) and \
            problem.in_shapes == self.problem.in_shapes

    def current(self, args):
        """The state to evaluate plain ``args`` with (found again when what it assumed
        changed); refuses ``args`` of other shapes."""
        p = self.problem
        shapes = [np.shape(a) for a in args]
        if shapes != p.in_shapes:
            raise ValueError(f"plan: {p.name} was planned for inputs of shapes {p.in_shapes}, "
                             f"got {shapes}: make a plan for the new shapes")
        state = self.state
        if not (state[self.ASSUMED].holds() and state[0].holds()):
            state = self._find_again(args)
        return state

    def _find_again(self, args):
        """What ``f``'s program read changed: record it again, find its cut, plan its
        parts; the new state."""
        again, why = self.remake(self.problem.with_point(args))
        if again is None:
            raise RuntimeError(
                f"plan({self.problem.name}): what {self.problem.name} reads outside its "
                f"arguments changed since the plan was made, and its program no longer has "
                f"{self.LOST} ({why}): make the plan again")
        again._use_jit(self.jit)
        self.state = again.state
        self.refound += 1
        return again.state


class Through(CutWay):
    """The Jacobian of ``problem`` as ``J_g S`` (see the module docstring).

    ``state``: ``(cut, inner, assumed, composition)``, replaced as one (a call reads it
    once, so a call in another thread never mixes two cuts): the
    :class:`jacobians.gathers.Cut`, the plan of ``g`` at the cut values, what ``f``'s
    program took from outside its arguments, and the
    :class:`jacobians.gathers.Composition` of the inner plan's current pattern."""

    def __init__(self, problem, cut, inner, assumed, remake):
        self.problem = problem
        self.state = (cut, inner, assumed,
                      Composition(inner.sparsity.pattern, cut.positions, problem.n))
        self.remake = remake     # problem -> (Through or None, why): the cut found again
        self.jit = True          # the inner plan's jit= (set by the plan)
        self.refound = 0

    @property
    def cut(self):
        return self.state[0]

    @property
    def inner(self):
        return self.state[1]

    def pattern(self):
        """The boolean pattern of ``J_f`` (the inner pattern composed with ``S``)."""
        return self.state[3].pattern()

    def _use_jit(self, jit):
        self.jit = jit
        self.inner._use_jit(jit)

    def __call__(self, args):
        """``J_f`` (CSR) at plain ``args`` of the planned shapes."""
        p = self.problem
        cut, inner, assumed, composition = self.current(args)
        jg = inner(*cut.select([np.asarray(a, dtype=np.float64) for a in args]))
        if not composition.matches(jg):    # the inner plan detected a new pattern
            composition = Composition(jg, cut.positions, p.n)
            self.state = (cut, inner, assumed, composition)
        return composition.csr(jg)

    def describe(self):
        """Lines for ``explain()``."""
        c, i = self.cut, self.inner
        return [f"Through the input selections: {self.problem.name} starts with "
                f"{len(c.prefix)} selection(s) (gathers, slices, reshapes) reading "
                f"{c.selected:,} values from its {self.problem.n:,} inputs, some more than "
                f"once; the Jacobian is J_g S, J_g that of the rest with respect to the "
                f"selected values ({i.m:,} x {i.n:,}, {i.sparsity.nnz:,} nonzeros), "
                f"evaluated by its own plan, then added into place (one gather per call).",
                f"  J_g: {i.mode}, {i.directions} direction(s) in {i.n_chunks} sweep(s) "
                f"({i.sparsity.source} pattern); finding the cut recorded "
                f"{self.problem.name}'s program once (one evaluation) and planning g "
                f"evaluated it {i.evaluations} time(s)."]


def _jit(problem):
    from dualad import jit
    jf = jit(problem.f)
    jf.name = problem.name
    return jf


def through_gathers(problem, prepare, max_memory, calibrate, replayed):
    """``(through, seconds)``: the plan of ``problem`` through its input selections and its
    modelled cost, or ``(None, why)``. ``prepare``: the planner's prepare function."""
    from dualad.extend import Assumed
    try:
        jf = _jit(problem)
        program = jf.program(*problem.args)
        assumed = Assumed.of(problem.f, problem.name)
    except (TypeError, RuntimeError, ValueError) as e:   # f cannot be recorded: no cut
        return None, f"not looked for: {problem.name}'s program could not be recorded ({e})"
    cut = find_cut(program, problem.in_shapes)
    if cut is None:
        return None, ("none: no guard-free program that selects some input entry more than "
                      "once before computing on it")
    cuts = cut.select(list(problem.args))
    g = _G(cut, fname(problem.f))
    inner_problem = Problem(problem.api, g, cuts, tuple(range(len(cuts))))
    inner = prepare(inner_problem, "auto", True, None, None, max_memory, "sparse", calibrate,
                    "always", replayed=replayed)
    seconds = inner.estimates[inner.mode][0] + cost.DECOMPRESS * inner.sparsity.nnz

    def remake(at):
        again, why = through_gathers(at, prepare, max_memory, calibrate, replayed)
        return again, why
    return Through(problem, cut, inner, assumed, remake), seconds

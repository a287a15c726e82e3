"""The planner: prepare a Jacobian once, evaluate it at many points, explain the choice.

``plan(f, x)`` looks at the function once — a census of its primitives, its
sparsity pattern (when worth detecting) and the colorings of that pattern —
and weighs five ways to get the Jacobian of ``F: R^n -> R^m``:

    forward               n directions, ceil(n / c) vector-mode JVP sweeps
    reverse               m cotangents, one tape and ceil(m / c) batched pullbacks
    sparse-forward        one direction per column color, then decompression
    sparse-reverse        one cotangent per row color, then decompression
    sparse-bidirectional  k1 forward directions and k2 cotangents of a star bicoloring
                          (:mod:`jacobians.bicoloring`), each entry read from one of them

A function that starts by gathering from its inputs may also be planned through the
gathers, ``J_f = J_g S`` (:mod:`jacobians.gathers`, :mod:`jacobians.gathered`): ``g``, the
rest, gets a plan of its own, and the cut is taken when modelled cheaper.

Each is first modelled from the census (:mod:`jacobians.cost`). Alternatives within
:data:`cost.CLOSE` of the best are timed on the function itself (one sweep of one chunk
each), but only when the best is modelled at :data:`cost.TIME_MIN_SECONDS` or more:
below that a wrong pick costs less than the timing. The cheapest wins; ``explain()``
says which, why, what every alternative would cost, what was timed (or why nothing
was) and how many times planning evaluated ``f``.

A dense result (``forward``/``reverse``, or ``output="dense"``) larger than
``max_memory`` is refused before anything is allocated (:mod:`jacobians.memory`); in
``mode="auto"`` with ``output="auto"`` the dense modes are then only marked infeasible.

``jacobian(f, x, mode="auto")`` is :func:`prepare` with ``output="dense"`` and
``detect="worth"``: the pattern is detected only when the modelled dense cost makes it
worth one pattern evaluation (:func:`cost.worth_detecting`).
"""
from __future__ import annotations

__all__ = ["ALTERNATIVES", "KIND", "Plan", "plan", "prepare"]

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from . import cost
from . import nested
from .acyclic_bicoloring import AcyclicBicoloring
from ._common import (DEFAULT_MAX_MEMORY, Problem, TracedOutput, counted, float_dtype,
                      holds_traced, untraced_kwargs)
from .distributed import Workers
from .bottleneck import mixed_plan, not_mixable, worth_mixing
from .gathered import through_gathers, worth_trying
from .memory import (BudgetTooSmall, Footprint, dense_bytes, dense_of, human_bytes,
                     largest_chunk, refuse_dense)
from .patterns import TooDense
from .planlog import planned
from .sparse import bicoloring_threshold, bidirectional_cost, colorings_for, \
    jacobian_colorings
from .sparsity import Sparsity, as_pattern, detect_jacobian

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .coloring import Coloring
from .sweeps import check_mode, chunk_for, forward_flat, get_census, note, result_dtype, \
    reverse_flat
from .validity import CheckedPattern
from dualad.extend import Replayed

ALTERNATIVES = ("forward", "reverse", "sparse-forward", "sparse-reverse",
                "sparse-bidirectional")
KIND = {"forward": "forward", "reverse": "reverse", "sparse-forward": "forward",
        "sparse-reverse": "reverse", "sparse-bidirectional": "bidirectional"}
_fmt = cost._fmt


class Plan:
    r"""A prepared Jacobian: ``plan(*args)`` evaluates it at new arguments of the same shapes.

    Made by :func:`plan`, which weighed the ways to the Jacobian of
    :math:`F: \mathbb{R}^n \to \mathbb{R}^m` once (forward, reverse, sparse-forward,
    sparse-reverse) and keeps the chosen ``mode``, its ``chunk_size`` and, for a sparse
    mode, the pattern with its coloring. Calling the plan runs only the sweeps (and, for a
    sparse mode, checks the pattern against the decisions ``f`` takes at the new point,
    detecting it again where they differ, so the result is never wrong). Called on traced
    values (inside ``dualad.grad``, ``jit``, ``vmap``, ...) it returns a traced result in
    the plan's mode. :meth:`explain` says what was chosen and why.

    Parameters
    ----------
    problem : object
        The function and the point it was planned at (internal).
    mode : str
        The chosen way: ``"forward"``, ``"reverse"``, ``"sparse-forward"``,
        ``"sparse-reverse"`` or ``"sparse-bidirectional"``.
    chunk : int
        Directions per sweep.
    census : jacobians.cost.Census
        The counted run of ``f``: primitives, values, flops, the time of one call.
    sparsity : jacobians.sparsity.Sparsity or None
        The detected (or given) pattern, if any.
    col, row : jacobians.coloring.Coloring or None
        The column and row colorings of the pattern, where computed.
    estimates : dict
        Each alternative's estimated seconds (or None) and how it was obtained.
    how : str
        Why the chosen mode won.
    notes : list of str
        What planning decided about the detection and the colorings.
    output : {"auto", "dense", "sparse"}
        What calling the plan returns.
    max_memory : int, optional
        Bytes of one sweep's tangents and of a dense result.
    timed : list of str, optional
        What was timed, or why nothing was.
    bic : jacobians.bicoloring.Bicoloring, optional
        The star bicoloring of the pattern, where computed.

    Attributes
    ----------
    mode : str
        The chosen way.
    chunk_size : int
        Directions per sweep.
    n, m : int
        Inputs and outputs (the flat Jacobian is ``m x n``).
    sparsity : jacobians.sparsity.Sparsity or None
        The pattern of a sparse mode (``sparsity.pattern``, a boolean CSR matrix).
    column_coloring, row_coloring : jacobians.coloring.Coloring or None
        The colorings considered.
    bicoloring : jacobians.bicoloring.Bicoloring or None
        The star bicoloring considered (forward colors of columns, reverse of rows).
    estimates : dict
        Alternative name to ``(seconds, source)``.

    See Also
    --------
    plan : Makes a plan.
    jacobian : Plans (``output="dense"``, ``detect="worth"``) and evaluates in one call.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def residual(x):
    ...     return x[1:] ** 2 - x[:-1]
    >>> p = jacobians.plan(residual, np.ones(50), mode="sparse-forward")
    >>> p
    Plan(residual: sparse-forward, n=50, m=49, 2 directions in 1 sweep(s))
    >>> J = p(np.arange(50.0))                  # a new point: only the sweeps run
    >>> print(J.shape, J.nnz)
    (49, 50) 98
    >>> print(J[:2, :4].toarray())
    [[-1.  2.  0.  0.]
     [ 0. -1.  4.  0.]]
    """

    problem: Problem
    mode: str
    chunk_size: int
    census: cost.Census
    sparsity: Sparsity | None
    column_coloring: Coloring | None
    row_coloring: Coloring | None
    estimates: dict[str, Any]
    how: str
    notes: list[str]
    output: str
    max_memory: int
    timed: list[str]
    planning: list[tuple[str, float, int]]
    n: int
    m: int
    checked: CheckedPattern | None
    bytes_per_direction: int
    replayed: Replayed | None

    def __init__(self, problem: Problem, mode: str, chunk: int, census: Any, sparsity: Any,
                 col: Any, row: Any, estimates: dict[str, Any], how: str, notes: list[str],
                 output: str, max_memory: int = DEFAULT_MAX_MEMORY,
                 timed: Any = None, bic: Any = None) -> None:
        self.problem = problem
        self.mode = mode
        self.chunk_size = chunk
        self.census = census
        self.sparsity = sparsity
        self.column_coloring, self.row_coloring = col, row
        self.bicoloring = bic
        self.estimates = estimates      # alternative -> (seconds or None, "timed"/"modelled"/why not)
        self.how = how
        self.notes = notes
        self.output = output
        self.max_memory = max_memory
        self.footprint = None     # the dense ways' whole-call model (set by prepare)
        self.dense_chunks = {}    # "forward"/"reverse" -> its own chunk (set by prepare)
        self.timed = timed or []        # lines: what was timed, or why nothing was
        self.planning = list(problem.__dict__.get("planning", ()))   # (what, s, evaluations)
        self.n, self.m = problem.n, problem.m
        # Sparse modes: the pattern is checked at every new point (jacobians.validity).
        self.checked = None
        if mode.startswith("sparse"):
            kind = KIND[mode]
            self.checked = CheckedPattern(kind, sparsity, {"forward": col, "reverse": row,
                                                           "bidirectional": bic}[kind])
        self.bytes_per_direction = census.bytes_per_direction(
            np.dtype(float_dtype(problem.dtype)).itemsize)
        self.replayed = None            # calls through dualad.jit: see _use_jit
        self.through = None             # jacobians.gathered.Through: see go_through

    def go_through(self, through: Any, seconds: float) -> None:
        """Evaluate through the input selections: ``J_f = J_g S`` (:mod:`jacobians.gathers`),
        ``J_g`` by ``through.inner``, the plan of the rest of ``f``; modelled at
        ``seconds``, less than the cheapest way on ``f`` itself.

        Parameters
        ----------
        through : jacobians.gathered.Through
            The cut and the inner plan.
        seconds : float
            Its modelled cost per Jacobian.
        """
        inner = through.inner
        direct, source = self.estimates[self.mode]
        at_least = "at least " if source.startswith("at least") else ""
        self.how = (f"through the input selections (J_g S, J_g by {inner.mode}) is modelled "
                    f"at {_fmt(seconds)}, {at_least}{direct / seconds:.2f}x cheaper than "
                    f"{self.mode} on {self.problem.name} itself, the cheapest way without "
                    f"the cut.")
        self.through, self.through_seconds = through, seconds
        # the direct way stays ready for calls the cut cannot take (other arguments)
        self.direct = (self.mode, self.chunk_size)
        self.mode, self.chunk_size = inner.mode, inner.chunk_size
        self.bytes_per_direction = inner.bytes_per_direction

    def go_mixed(self, mixed: Any, seconds: float) -> None:
        """Evaluate in mixed mode, ``J_f = J_g J_h`` through a cut of ``f``'s program
        (:mod:`jacobians.bottleneck`), each factor by its own plan; modelled at ``seconds``,
        less than the cheapest way on ``f`` itself.

        Parameters
        ----------
        mixed : jacobians.bottleneck.Mixed
            The cut and the plans of its two sides.
        seconds : float
            Its modelled cost per Jacobian.
        """
        best = min(self.estimates, key=lambda a: self.estimates[a][0])
        direct, source = self.estimates[best]
        at_least = "at least " if source.startswith("at least") else ""
        how = (f"mixed mode through {mixed.summary} ({mixed.product_text}, "
               f"{counted(mixed.directions, 'direction')}) is modelled at {_fmt(seconds)}, "
               f"{at_least}{direct / seconds:.2f}x cheaper than {best} on "
               f"{self.problem.name} itself, the cheapest way without the cut.")
        if direct <= seconds:       # mode="mixed" asked for it
            how = (f"mode='mixed' was asked for: mixed mode through {mixed.summary} "
                   f"({mixed.product_text}, {counted(mixed.directions, 'direction')}) is "
                   f"modelled at {_fmt(seconds)}, {best} on {self.problem.name} itself at "
                   f"{_fmt(direct)}.")
        self.go_through(mixed, seconds)
        self.how = how

    # --- numbers -------------------------------------------------------------------------
    def directions_of(self, alt: str) -> int | None:
        """The number of directions (seeds) alternative ``alt`` needs.

        Parameters
        ----------
        alt : {"forward", "reverse", "sparse-forward", "sparse-reverse", \
"sparse-bidirectional"}
            The alternative.

        Returns
        -------
        int or None
            ``n`` for forward, ``m`` for reverse, the number of colors for a sparse way
            (forward plus reverse colors for the bidirectional one), or None when that
            coloring was not computed.
        """
        coloring = {"sparse-forward": self.column_coloring,
                    "sparse-reverse": self.row_coloring,
                    "sparse-bidirectional": self.bicoloring}.get(alt)
        if alt in ("forward", "reverse"):
            return self.n if alt == "forward" else self.m
        return coloring.ncolors if coloring is not None else None

    def sweeps_of(self, alt: str) -> int:
        """The number of sweeps alternative ``alt`` runs per Jacobian.

        Parameters
        ----------
        alt : {"forward", "reverse", "sparse-forward", "sparse-reverse", \
"sparse-bidirectional"}
            The alternative.

        Returns
        -------
        int
            ``ceil(directions / chunk)``; for the bidirectional way its forward and its
            reverse sweeps added; 0 when that coloring was not computed.
        """
        if alt == "sparse-bidirectional" and self.bicoloring is not None:
            b, c = self.bicoloring, self.chunk_size
            return math.ceil(b.ncolors_forward / c) + math.ceil(b.ncolors_reverse / c)
        d = self.directions_of(alt)
        chunk = self.dense_chunks.get(alt) or self.chunk_size
        return math.ceil(d / chunk) if d else 0

    @property
    def directions(self) -> int:
        """The number of directions the chosen mode sweeps: ``n``, ``m`` or the colors.

        """
        if self.through is not None:
            return self.through.inner.directions
        return self.directions_of(self.mode)

    @property
    def n_chunks(self) -> int:
        """The number of sweeps per evaluation: ``ceil(directions / chunk_size)``.

        """
        if self.through is not None:
            return self.through.inner.n_chunks
        return max(1, self.sweeps_of(self.mode)) if self.directions else 0

    @property
    def sparse(self) -> bool:
        """Whether the chosen mode is a sparse (compressed) one.

        """
        return self.mode.startswith("sparse")

    @property
    def evaluations(self) -> int:
        """Evaluations of ``f`` spent on planning (census, detection, timing)."""
        return sum(e for _, _, e in self.planning)

    # --- evaluation ----------------------------------------------------------------------
    def evaluate(self, problem: Problem) -> tuple[Any, Problem]:
        """The flat Jacobian at ``problem``'s point, and the problem that computed it.

        The sweeps of the chosen mode; a sparse mode checks its pattern against the decisions
        ``f`` takes at this point first (and detects it again where they differ).

        Parameters
        ----------
        problem : jacobians._common.Problem
            The function and the point (the plan's own, or ``plan.problem.with_point(args)``).

        Returns
        -------
        flat : numpy.ndarray or scipy.sparse.csr_matrix
            The ``m x n`` Jacobian: an array for a dense mode, CSR for a sparse one.
        problem : jacobians._common.Problem
            The problem, its outputs set at this point.
        """
        chunk, mode = self.chunk_size, self.mode
        if self.through is not None:
            if self.through.takes(problem):
                return self.through(problem.args), problem
            mode, chunk = self.direct
            if not mode.startswith("sparse"):
                flat = (forward_flat if mode == "forward" else reverse_flat)(
                    problem, chunk, max_memory=self.max_memory)
                return flat, problem
            if self.checked.coloring is None:     # not colored when planned: now
                self.checked = CheckedPattern(KIND[mode], self.sparsity, colorings_for(
                    self.sparsity.pattern, KIND[mode])[KIND[mode] == "reverse"])
            return self.checked.evaluate(problem, chunk)
        if mode == "forward":
            return forward_flat(problem, chunk, max_memory=self.max_memory), problem
        if mode == "reverse":
            return reverse_flat(problem, chunk, max_memory=self.max_memory), problem
        flat, problem = self.checked.evaluate(problem, chunk)
        self._follow()
        return flat, problem

    def __call__(self, *args: Any) -> Any:
        if args and holds_traced(args):
            return self._traced(args)
        if self.through is not None:      # the inner plan replays
            return self._eager(args)
        replayed = self.replayed
        if replayed is None or not args:
            return self._eager(args)
        if not _plain_floats(args):       # lists, integers, float32...: as the sweeps take them
            args = tuple(self.problem.with_point(args).args)
        out = replayed(*args)
        if self.output == "sparse" and isinstance(out, np.ndarray):   # a dense mode's array
            import scipy.sparse as sp
            out = sp.csr_matrix(out.reshape(-1, self.n))   # (m may change with f's decisions)
        return out

    def _use_jit(self, jit):
        """Calls with plain arguments replay through :func:`dualad.jit` (``jit=True``): the
        first call of a signature traces :meth:`_traced` (the sweeps in the plan's mode, a
        sparse pattern detected there and guarded by ``f``'s decisions) and compiles it.
        Not for a plan with ``executor=`` (its sweeps run on workers)."""
        if jit not in (True, False, "numba"):
            raise TypeError(f"plan({self.problem.name}): jit= takes True or False (or "
                            f"'numba': the Numba backend), got {jit!r}")
        if self.through is not None:
            self.replayed = None
            self.through.jit = jit
            self.through.inner._use_jit(jit)
            return
        if not jit or self.problem.executor is not None:
            self.replayed = None
            return
        f, plan_ = self.problem.f, self

        def body(*args):
            # f is read here so that dualad.jit checks, before every replay, what f reads
            # (its closure, globals, the containers it reaches): the plan is not walked
            return plan_._replay_body(args, f)
        name = f"plan({self.problem.name})"
        self.replayed = Replayed(body, name)
        if jit == "numba":      # the same wrapper, its program compiled by Numba
            from dualad import jit as dualad_jit
            self.replayed.jitted = dualad_jit(body, backend="numba")
            self.replayed.jitted.name = name

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Wait until every replayed program has its final form (with ``jit="numba"``:
        Numba's compilation, run in the background); True at once for other plans.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most (default: as long as it takes).

        Returns
        -------
        bool
            Whether every program is ready.
        """
        if self.through is not None:
            return self.through.inner.wait_compiled(timeout)
        jitted = self.replayed.jitted if self.replayed is not None else None
        return True if jitted is None else jitted.wait_compiled(timeout)

    def _replay_body(self, args, f):
        """What the replay records (traced ``args``), or computes when it runs without jit."""
        assert f is self.problem.f
        if holds_traced(args):
            c = self.checked
            if c is not None and c.checked and _decides(self.sparsity):
                # a sparse pattern shaped by f's decisions is detected in every trace, at its
                # point; the traces after the first are the re-detections of the eager check
                self._traces = getattr(self, "_traces", 0) + 1
                if self._traces > 1:
                    c.redetections += 1
                    c.points += 1
            return self._traced(args, dense_ok=True)
        return self._eager(args)

    def _eager(self, args):
        problem = self.problem.with_point(args) if args else self.problem
        flat, problem = self.evaluate(problem)
        want_sparse = self.output == "sparse" or (self.output == "auto" and self.sparse)
        if want_sparse:
            import scipy.sparse as sp
            return flat if sp.issparse(flat) else sp.csr_matrix(flat)
        if not isinstance(flat, np.ndarray):
            flat = dense_of(flat)      # within max_memory: checked when planned
        return problem.structured(flat)

    def _traced(self, args, dense_ok=False):
        """The plan at traced arguments (under ``dualad.jit``, ``grad``, ``vmap``...): the
        traced path of :mod:`jacobians.nested` in the plan's mode and chunk size, its
        result traced too. Planning is not redone (the mode stays the plan's); a sparse
        mode detects the pattern at this call's primal values (once per trace under jit:
        the sweep guards the decisions it holds for), unless the plan was given one.
        ``dense_ok``: a dense mode with ``output="sparse"`` gives its dense array (the jit
        path's caller makes it CSR)."""
        p = self.problem
        if p.executor is not None:
            raise TypeError(
                f"plan({p.name}): this plan was made with executor= (its sweeps run on "
                f"workers) and was called inside a transformation (dualad.grad/jvp/vjp/vmap/"
                f"jit) on traced values, which cannot be shipped to workers: call it outside, "
                f"or make a plan without executor= for use inside")
        check = Problem(p.api, p.f, args, p.nums[0] if p.single else p.nums, traced_ok=True)
        if check.in_shapes != p.in_shapes:
            raise ValueError(f"plan: {p.name} was planned for inputs of shapes {p.in_shapes}, "
                             f"got {check.in_shapes}")
        argnums = p.nums[0] if p.single else p.nums
        want_sparse = self.output == "sparse" or (self.output == "auto" and self.sparse)
        mode, chunk = (self.mode, self.chunk_size) if self.through is None else self.direct
        if not mode.startswith("sparse"):
            if want_sparse and not dense_ok:
                raise TypeError(f"plan({p.name}, output='sparse') in mode {self.mode!r} on "
                                f"traced values: a dense sweep's traced result has no "
                                f"stored-value pattern. Plan with output='dense', or a sparse "
                                f"mode (sparse=True)")
            return nested.jacobian(p.f, *args, mode=mode, argnums=argnums,
                                   chunk_size=chunk, max_memory=self.max_memory,
                                   api="plan")
        # a pattern that took no decisions holds at every point: no detection in the trace
        given = None if _decides(self.sparsity) else self.sparsity.pattern
        way = KIND[mode]
        coloring = {"forward": self.column_coloring, "reverse": self.row_coloring,
                    "bidirectional": self.bicoloring}[way]
        direct = coloring is not None and not isinstance(coloring, AcyclicBicoloring)
        # the plan's own coloring, when its entries are read directly (a gather the jit
        # records); an acyclic bicoloring's substitution is not traced: colored again
        colored = (way, coloring) if given is not None and direct else None
        csr = nested.sparse_jacobian(p.f, *args, mode=way, argnums=argnums, sparsity=given,
                                     chunk_size=chunk, max_memory=self.max_memory,
                                     colored=colored)
        if want_sparse:
            return csr
        shapes = p.out_shapes
        if csr.shape[0] != p.m and len(shapes) == 1 and len(shapes[0]) == 1:
            shapes = [(csr.shape[0],)]    # f's output length follows its decisions (a mask)
        check.set_outputs(p.out_rebuild([np.zeros(s) for s in shapes]))
        return check.structured(csr.toarray())

    def _follow(self):
        """Take over a pattern the check detected again (and its coloring)."""
        c = self.checked
        if c.sparsity is not self.sparsity:
            self.sparsity = c.sparsity
            if c.kind == "forward":
                self.column_coloring = c.coloring
            elif c.kind == "reverse":
                self.row_coloring = c.coloring
            else:
                self.bicoloring = c.coloring
            self.m = c.sparsity.pattern.shape[0]

    @property
    def redetections(self) -> int:
        """Points at which the sparse pattern was detected again (its decisions differed)."""
        if self.through is not None:
            return self.through.inner.redetections
        return self.checked.redetections if self.checked is not None else 0

    # --- words ---------------------------------------------------------------------------
    def _memory_text(self):
        """The bytes of one evaluation: the whole call's :class:`Footprint` for a dense
        mode, else one sweep's tangents."""
        fp, B = self.footprint, min(self.chunk_size, self.directions or 1)
        if fp is not None and self.through is None and self.mode in ("forward", "reverse"):
            return (f"the whole call modelled at {human_bytes(getattr(fp, self.mode)(B))} "
                    f"of max_memory={human_bytes(self.max_memory)}")
        return f"one sweep's tangents ~{human_bytes(self.bytes_per_direction * B)}"

    def explain(self) -> str:
        """What the planner chose, why, and what every alternative would have cost.

        Lines, in order: the sizes (``n``, ``m``); the census of the function (primitives,
        values, flops, one call's time); whether a sparsity detection ran and what it found;
        the colorings; the chosen mode with its directions, sweeps and the memory of one sweep;
        why it won; each alternative's estimate (modelled or timed) or why it was not
        considered; what was timed, or why nothing was; how many evaluations of ``f``
        planning spent.

        Returns
        -------
        str
            The explanation, one fact a line.

        Examples
        --------
        >>> from dualad import jacobians
        >>> def loss(x):
        ...     return np.sum(x ** 2)
        >>> text = jacobians.plan(loss, np.ones(10000)).explain()
        >>> print(text.splitlines()[0])
        Jacobian plan for loss: n = 10000 inputs, m = 1 outputs (flat Jacobian 1 x 10000).
        >>> print(next(line for line in text.splitlines() if line.startswith("Chosen")))
        Chosen: reverse — 1 direction in 1 sweep(s) of up to ... per Jacobian.
        """
        c = self.census
        lines = [f"Jacobian plan for {self.problem.name}: n = {self.n} inputs, "
                 f"m = {self.m} outputs (flat Jacobian {self.m} x {self.n}).",
                 f"Function: {c.n_ops} primitives per evaluation, {c.elements} values, "
                 f"~{c.flops:.3g} flops" + (f"; one counted call {_fmt(c.t_plain)}."
                                           if c.t_plain else ".")]
        first = [t for t in self.notes if t.startswith("Sparsity detection:")]
        lines.extend(first)            # whether a detection was worth it, before its result
        if self.sparsity is not None:
            lines.append("Sparsity: " + self.sparsity.describe() + ".")
            for name, col in (("columns (forward)", self.column_coloring),
                              ("rows (reverse)", self.row_coloring)):
                if col is not None:
                    tried = ", ".join(f"{k} {v}" for k, v in col.tried.items())
                    lines.append(f"Coloring of {name}: {counted(col.ncolors, 'color')} by "
                                 f"{col.method} "
                                 f"(lower bound {col.lower_bound}"
                                 f"{', optimal' if col.optimal else ''}; tried: {tried}).")
            if self.bicoloring is not None:
                lines.append(self._bidirectional_line())
        lines.extend(t for t in self.notes if t not in first)
        if self.checked is not None:
            lines.append(self.checked.describe())
        est = self.estimates.get(self.mode, (None,))[0]
        via = ""
        if self.through is not None:
            lines.extend(self.through.describe())
            est, via = self.through_seconds, _via(self.through)
        lines.append(f"Chosen: {self.mode}{via} — {counted(self.directions, 'direction')} in "
                     f"{self.n_chunks} sweep(s) of up to {self.chunk_size} "
                     f"({self._memory_text()}); estimated {_fmt(est)} per Jacobian.")
        lines.append("Why: " + self.how)
        if self.problem.executor is not None:
            lines.append(self.problem.executor.describe(self.directions or 0, self.chunk_size,
                                                        KIND[self.mode] == "reverse"))
        lines.append("Estimated cost of each alternative:")
        for alt in ALTERNATIVES:
            seconds, source = self.estimates.get(alt, (None, "not considered"))
            d = self.directions_of(alt)
            chunks = f"{self.sweeps_of(alt)} sweep(s)" if d else ""
            mark = "  <- chosen" if alt == self.mode and not via else ""
            lines.append(f"  {alt:<20} {'' if d is None else d:>7} directions  {chunks:<12} "
                         f"{_fmt(seconds):>10}  ({source}){mark}")
        lines.extend(self.timed)
        if self.planning:
            steps = "; ".join(f"{what}: {e} evaluation(s), {_fmt(s)}"
                              for what, s, e in self.planning)
            lines.append(f"Planning evaluated {self.problem.name} {self.evaluations} "
                         f"time(s): {steps}.")
        else:
            lines.append(f"Planning evaluated {self.problem.name} 0 times (its census was "
                         f"cached from an earlier call).")
        return "\n".join(lines)

    def _bidirectional_line(self):
        """The bicoloring's split, against the one-sided colorings (or their bounds)."""
        b = self.bicoloring
        one_sided = []
        for name, col, bound in (("column", self.column_coloring, _bound(self.sparsity, 1)),
                                 ("row", self.row_coloring, _bound(self.sparsity, 0))):
            one_sided.append(f"{col.ncolors} ({name})" if col is not None else
                             f"at least {bound} ({name}, not colored)")
        tried = ", ".join(f"{k} {'abandoned' if v is None else v}" for k, v in b.tried.items())
        return (f"Bicoloring: bidirectional: {counted(b.ncolors_forward, 'forward color')} "
                f"+ {counted(b.ncolors_reverse, 'reverse color')} = "
                f"{counted(b.ncolors, 'direction')} instead of {' / '.join(one_sided)}; by "
                f"{b.method} (lower bound {b.lower_bound}"
                f"{', optimal' if b.optimal else ''}; tried: {tried}).")

    def __repr__(self) -> str:
        on = "" if self.problem.executor is None else f" on {self.problem.executor.name}"
        via = "" if self.through is None else _via(self.through)
        return (f"Plan({self.problem.name}: {self.mode}{via}, n={self.n}, m={self.m}, "
                f"{counted(self.directions, 'direction')} in "
                f"{self.n_chunks} sweep(s){on})")

    def _repr_html_(self) -> str:
        """Jupyter's view: :meth:`explain` as tables, beside the pattern's picture
        (:mod:`jacobians.notebook`)."""
        from .notebook import plan_html
        return plan_html(self, ALTERNATIVES)

    def plot(self, ax: Any = None) -> Any:
        """Draw the sparsity pattern, each entry in the color of the seed that recovers it.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: new axes of a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on. Needs matplotlib (``pip install "dualad[plot]"``).
        """
        from .notebook import plot_plan
        return plot_plan(self, ax)


def _via(through):
    """How a plan's ``through`` way is named after its mode (the gathers' or mixed)."""
    return getattr(through, "via", " through the input selections")


def _decides(sparsity):
    """Whether a detected pattern depends on decisions ``f`` took (comparisons, masks,
    branches: :mod:`jacobians.validity`); one with none holds at every point."""
    decisions = sparsity.decisions
    return decisions is not None and len(decisions) > 0


def _detect(problem, sparse, sparsity, max_memory, notes, budget=None):
    if sparse is False:
        notes.append("Sparsity: not considered (sparse=False).")
        return None
    if sparsity is not None:
        pattern = as_pattern(problem.api, sparsity, (problem.m, problem.n))
        return Sparsity(pattern, source="user-supplied")
    budget = budget or max(1_000_000, max_memory // 16)
    t0 = time.perf_counter()
    try:
        return detect_jacobian(problem, budget=budget)
    except TooDense as e:
        notes.append(f"Sparsity: detection stopped, {e}: the Jacobian is treated as dense.")
        return None
    finally:
        note(problem, "sparsity detection (one run on index-set patterns)",
             time.perf_counter() - t0, 1)


def plan(f: Callable[..., Any], *args: Any, mode: str = "auto",
         argnums: int | Sequence[int] = 0, sparse: str | bool = "auto", sparsity: Any = None,
         chunk_size: int | None = None, max_memory: int = DEFAULT_MAX_MEMORY,
         output: str = "auto", calibrate: bool = True, detect: str = "always",
         executor: Any = None, retries: int = 2, jit: bool | str | None = None) -> Plan:
    r"""Prepare the Jacobian of ``f`` at ``args``: choose how, once, and evaluate it many times.

    Five ways to the Jacobian of :math:`F: \mathbb{R}^n \to \mathbb{R}^m` are weighed:
    ``forward`` (``n`` one-hot directions in ``ceil(n / c)`` vector-mode JVP sweeps),
    ``reverse`` (``m`` one-hot cotangents, one tape and ``ceil(m / c)`` batched pullbacks),
    ``sparse-forward`` and ``sparse-reverse`` (one direction per column or row color of
    the detected pattern, then decompression) and ``sparse-bidirectional`` (the forward
    colors of a star bicoloring's columns and the reverse colors of its rows, each entry
    read from one of the two products). A census (one counted run of ``f``) gives
    each way's modelled cost; the sparsity pattern is detected and colored when
    ``sparse`` allows; alternatives modelled within 30x of the best are timed on ``f``
    itself (one sweep each) when the best is modelled at 20 ms or more. The cheapest
    wins. A dense result larger than ``max_memory`` is refused, or, with
    ``output="auto"``, the dense ways are only marked infeasible.

    Parameters
    ----------
    f : callable
        The function, ``f(*args)``, returning an array or a container of arrays.
    *args : array_like or container of array_like
        The point to plan at (plain values; a plan made outside a transformation may be
        called inside one).
    mode : str, optional
        ``"auto"`` (default), ``"forward"``, ``"reverse"``, ``"sparse-forward"``,
        ``"sparse-reverse"`` or ``"sparse-bidirectional"`` (also ``"bidirectional"``: a
        star bicoloring, forward and reverse sweeps together; docs/bicoloring.md), or
        ``"mixed"``: ``J_f`` as a product through bottleneck cuts of ``f``'s program,
        taken whatever the model says and refused when there is no cut (``"auto"``
        weighs it with the others; docs/mixed.md).
    argnums : int or tuple of int, optional
        Which positional arguments are differentiated (default 0).
    sparse : {"auto", True, False}, optional
        ``"auto"``: detect the pattern and weigh the sparse ways too; ``True``: sparse ways
        only; ``False``: dense only.
    sparsity : scipy.sparse matrix or array_like of bool, optional
        A given ``m x n`` pattern (skips the detection).
    chunk_size : int, optional
        Directions per sweep (default: as many as fit in ``max_memory``).
    max_memory : int, optional
        Bytes for one evaluation, everything it allocates counted (default 256 MiB): the
        dense result, the tape and every sweep's tangents or cotangents, as
        :func:`jacrev` counts them (docs/memory.md), so the chunk of each dense way is the
        most that fits and a way of which not one direction fits is infeasible. A
        pattern detection that could hold more index sets than ``max_memory`` is skipped
        while a dense way fits (unless a sparse mode was asked for), and with
        ``max_memory`` given the calls run the eager sweeps unless ``jit=True`` (a replayed program keeps every sweep's
        buffers, which the budget does not bound).
    output : {"auto", "dense", "sparse"}, optional
        What the plan returns: ``"auto"`` a SciPy CSR matrix for a sparse mode and an
        array ``out.shape + in.shape`` otherwise; ``"dense"`` always the array;
        ``"sparse"`` always CSR.
    calibrate : bool, optional
        Time close alternatives on ``f`` itself (default True; only when the best is
        modelled at 20 ms or more).
    detect : {"always", "worth"}, optional
        ``"always"`` (with ``sparse="auto"``): detect the pattern; ``"worth"``: only when
        the modelled dense cost pays for a detection, as :func:`jacobian` does, so
        ``plan(f, x, output="dense", detect="worth").explain()`` says what ``jacobian``
        would do.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Kept by the plan: every evaluation's chunks of directions are tasks on its workers.
        Planning runs in the calling process.
    retries : int, optional
        Resubmissions of a chunk lost with its worker (default 2).
    jit : bool or "numba", optional
        Calls replay through :func:`dualad.jit` (default: True, or False when
        ``max_memory`` is given): the first call with given
        shapes and dtypes traces the sweeps (a few times one eager call: the first-call
        cost) and compiles them; later calls run the program, its guards checked so a
        replay is never stale (a point where ``f`` takes another branch traces again, and a
        sparse pattern is detected again there). A function jit cannot trace runs without
        it after one ``JitFallbackWarning``. ``False``: every call runs the eager sweeps
        (under jit, ``Plan.redetections`` counts the traces after the first, each of which
        detects a decision-dependent pattern at its point). A side effect of
        ``f`` happens once per trace, not per call: see docs/jit.md. ``"numba"``: the
        replay is :func:`dualad.jit`'s with ``backend="numba"`` (the NumPy program answers
        until Numba has compiled it in the background, ``p.wait_compiled()``; seconds per
        program; faster than the NumPy replay on some programs, slower on others:
        3-4x faster on GradBench's first bundle-adjustment Jacobian swept with 14 colored
        forward directions, 1.2x slower on the default plan through its gathers (2
        reverse sweeps), 2-3x slower at its sizes 4-7: time both, bench/sparse_peers.py).
        Not used with ``executor=``.

    Returns
    -------
    Plan
        Call it, ``p(*args)``, for the Jacobian at new arguments of the same shapes;
        ``p.explain()`` for the reasons.

    Raises
    ------
    ValueError
        An unknown ``mode``, ``output`` or ``detect``; a sparse mode whose pattern could not
        be obtained; a dense result over ``max_memory``
        (``jacobians.memory.DenseTooLarge``).
    NotImplementedError
        ``plan`` called on traced values, inside a transformation (make the plan outside
        and call it inside).
    ImportError
        ``jit="numba"`` without Numba installed.

    See Also
    --------
    Plan : The prepared Jacobian.
    jacobian : Plan and evaluate in one call.
    sparse_jacobian : The sparse ways alone.

    Notes
    -----
    The cost model and what ``explain()`` reports are described in ``docs/planner.md``.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def loss(x):
    ...     return np.sum(x ** 2)
    >>> p = jacobians.plan(loss, np.ones(10000))
    >>> p
    Plan(loss: reverse, n=10000, m=1, 1 direction in 1 sweep(s))
    >>> print(p(np.arange(10000.0))[:5])
    [0. 2. 4. 6. 8.]
    """
    mode = check_mode("plan", "sparse-bidirectional" if mode == "bidirectional" else mode,
                      ("auto",) + ALTERNATIVES + ("mixed",))
    if output not in ("auto", "dense", "sparse"):
        raise ValueError(f"plan: output={output!r} is not one of 'auto', 'dense', 'sparse'")
    if detect not in ("always", "worth"):
        raise ValueError(f"plan: detect={detect!r} is not one of 'always', 'worth'")
    workers = None if executor is None else Workers("plan", executor, retries,
                                                    chunk_size is not None)
    try:
        problem = Problem("plan", f, args, argnums)
    except TracedOutput as e:   # inside a transformation: a prepared plan would do
        if executor is not None:
            untraced_kwargs("plan", f, {"executor": executor})
        raise TracedOutput(f"{e}. A prepared plan takes traced values: make it outside, "
                           f"p = plan(f, x0), and call p(x) inside") from None
    problem.executor = workers
    if jit is None:     # a replay's buffers are outside a budget the caller set
        jit = max_memory == DEFAULT_MAX_MEMORY
    p = prepare(problem, mode, sparse, sparsity, chunk_size, max_memory, output, calibrate,
                detect, replayed=jit in (True, "numba") and executor is None)
    planned(p)
    p._use_jit(jit)
    return p


def _plain_floats(args):
    """Whether every argument is a float64 array or a Python float (as the sweeps take them)."""
    for a in args:
        if not (a.__class__ is float or a.__class__ is np.ndarray and a.dtype == np.float64):
            return False
    return True


def prepare(problem, mode="auto", sparse="auto", sparsity=None, chunk_size=None,
            max_memory=DEFAULT_MAX_MEMORY, output="auto", calibrate=True, detect="always",
            replayed=False):
    """The :class:`Plan` of ``problem`` (see :func:`plan`). ``detect``: "always" (when
    ``sparse="auto"``) or "worth" (only when :func:`cost.worth_detecting` says so).
    ``replayed``: the plan's sweeps will replay through ``dualad.jit``, whose programs
    keep no one-hot seeds and run no checksums, so the dense modes are modelled by their
    whole arithmetic, and no eager sweep is timed (its order can differ from the replays':
    measured at 2000 -> 10, eager forward 0.5 ms against replayed forward 18 ms and
    replayed reverse 0.2 ms).

    The steps: count the primitives (a census, with the pattern when a sparse mode needs
    it anyway), refuse a dense result that cannot fit, model the dense modes, detect the
    pattern when asked or worth it, color it, model the compressed modes, then pick the
    cheapest (timing the close ones when that pays)."""
    if mode == "bidirectional":
        mode = "sparse-bidirectional"
    if mode == "mixed":
        return _mixed_asked(problem, sparsity, chunk_size, max_memory, output, calibrate,
                            replayed)
    if mode.startswith("sparse"):
        sparse = True
    notes = []
    census, sp_info = _census(problem, sparse, sparsity, max_memory, notes)
    chunk = chunk_for(problem, chunk_size, max_memory, census)
    dtype = result_dtype(problem)
    dense_ok = _dense_fits(problem, mode, sparse, output, max_memory, dtype)
    dirs = {"forward": problem.n, "reverse": problem.m}
    chunks, fp = _dense_chunks(problem, census, chunk_size, max_memory, dtype)
    estimates = _dense_estimates(census, dirs, chunks, fp, mode, sparse, replayed)
    through = None
    if sp_info is None and worth_trying(problem, census, mode, sparse, sparsity, output):
        through, sp_info = _through(problem, census, notes, max_memory, calibrate, replayed)
    if through is None and worth_mixing(problem, mode, sparsity, dense_ok, detect == "worth",
                                        census, estimates):
        through = _mixed(problem, notes, max_memory, calibrate, replayed, estimates)
    if sp_info is None and mode not in ("forward", "reverse") and not _mixed_wins(through):
        sp_info = _detect_if_worth(problem, census, estimates, sparse, sparsity, detect,
                                   dense_ok, max_memory, notes)
    if through is not None and sp_info is not None:
        if not dense_ok:
            _mark_dense_infeasible(estimates, problem, dtype)
        floor = _direct_floor(census, sp_info, chunk, estimates, replayed)
        if through[1] < floor:     # the direct ways cannot win: they are not colored
            return _through_only(problem, through, census, chunk, sp_info, estimates, notes,
                                 output, max_memory)
    if sparse is True and sp_info is None:
        raise ValueError(f"{problem.api}({problem.name}): a sparse mode was asked for but the "
                         f"pattern could not be obtained ({' '.join(notes)})")
    col, row, bic = _colorings(sp_info, mode, notes, census, chunk)
    nnz = sp_info.nnz if sp_info is not None else 0
    dirs.update({"sparse-forward": col.ncolors if col else None,
                 "sparse-reverse": row.ncolors if row else None,
                 "sparse-bidirectional": bic.ncolors if bic else None})
    _sparse_estimates(estimates, census, dirs, chunk, nnz, mode, sparse, replayed, bic)
    if not dense_ok:
        _mark_dense_infeasible(estimates, problem, dtype)
    chosen, how, timed = _choose(problem, estimates, dense_ok, max_memory, dtype, calibrate,
                                 dirs, chunk, nnz, replayed, bic)
    p = Plan(problem, chosen, chunks.get(chosen, chunk), census, sp_info, col, row,
             estimates, how, notes, output, max_memory, timed, bic=bic)
    p.footprint, p.dense_chunks = fp, chunks
    if through is not None:
        _weigh_through(p, through, chosen)
    return p


def _weigh_through(p, through, chosen):
    """Take the way through the input selections or mixed mode (``through``: the way and
    its modelled seconds) when modelled cheaper than ``chosen``; else say so."""
    way, seconds = through
    if seconds < p.estimates[chosen][0]:
        _go(p, through)
    elif getattr(way, "kind", None) == "mixed":
        p.notes.append(f"Mixed mode: through {way.summary} ({way.product_text}, "
                       f"{counted(way.directions, 'direction')}) is modelled at "
                       f"{_fmt(seconds)}, no cheaper than {chosen}: not taken.")
    else:
        p.notes.append(f"Input selections: through them (J_g S, J_g by {way.inner.mode}, "
                       f"{counted(way.inner.directions, 'direction')}) is modelled at "
                       f"{_fmt(seconds)}, no cheaper than {chosen}: not taken.")


def _go(p, through):
    """``p`` evaluates by ``through``: mixed mode or through the input selections."""
    if getattr(through[0], "kind", None) == "mixed":
        p.go_mixed(*through)
    else:
        p.go_through(*through)


def _mixed(problem, notes, max_memory, calibrate, replayed, estimates):
    """``(mixed, seconds)``: mixed mode through ``problem``'s narrowest cut
    (:mod:`jacobians.bottleneck`) and its modelled cost, or None (why in ``notes``). When
    it is modelled cheaper than every dense way, the sparsity detection is skipped (the
    module docstring of :mod:`jacobians.bottleneck` says what that can miss)."""
    t0 = time.perf_counter()
    mixed, seconds = mixed_plan(problem, prepare, max_memory, calibrate, replayed)
    note(problem, "recording the program to find a bottleneck (and planning its sides)",
         time.perf_counter() - t0, 1)
    if mixed is None:
        notes.append(f"Mixed mode: no cut: {seconds}.")
        return None
    mixed.wins = seconds < min(e for e, _ in estimates.values())
    if mixed.wins:
        notes.append(f"Sparsity detection: skipped: mixed mode through {mixed.summary} "
                     f"is modelled at {_fmt(seconds)}, cheaper than every "
                     f"dense way (a coloring of J_f, of rank at most k, would save little).")
    return mixed, seconds


def _mixed_asked(problem, sparsity, chunk_size, max_memory, output, calibrate, replayed):
    """The plan of ``mode="mixed"``: through ``f``'s bottleneck cuts whatever the model
    says of them (the dense ways are modelled for ``explain()``), refused with the reason
    when ``f`` has no cut or is not a function mixed mode takes."""
    why = not_mixable(problem, sparsity)
    notes = []
    if why is None:
        census, _ = _census(problem, False, None, max_memory, notes)
        chunk = chunk_for(problem, chunk_size, max_memory, census)
        dense_ok = _dense_fits(problem, "forward", False, output, max_memory,
                               result_dtype(problem))
        chunks, fp = _dense_chunks(problem, census, chunk_size, max_memory,
                                   result_dtype(problem))
        estimates = _dense_estimates(census, {"forward": problem.n, "reverse": problem.m},
                                     chunks, fp, "auto", False, replayed)
        through = _mixed(problem, notes, max_memory, calibrate, replayed, estimates)
        if through is None:
            why = "no cut was found: " + notes[-1].removeprefix("Mixed mode: no cut: ")
    if why is not None:
        raise ValueError(f"{problem.api}({problem.name}): mode='mixed' evaluates J_f as a "
                         f"product "
                         f"through a bottleneck of {problem.name}'s program, but {why} Use "
                         f"mode='auto' (it weighs mixed mode with the other ways) or "
                         f"'forward'/'reverse'.")
    alt = min(estimates, key=lambda a: estimates[a][0])
    p = Plan(problem, alt, chunk, census, None, None, None, estimates, "", notes, output,
             max_memory, ["Nothing timed: mode='mixed' was asked for."])
    _go(p, through)
    return p


def _mixed_wins(through):
    """Whether ``through`` is mixed mode modelled cheaper than every dense way."""
    return through is not None and getattr(through[0], "wins", False)


def _direct_floor(census, sp_info, chunk, estimates, replayed):
    """The least the ways on ``f`` itself can cost: the dense estimates, each one-sided
    coloring at its lower bound (the densest row or column), and, where the planner would
    make a bicoloring before them (both bounds over :func:`bicoloring_threshold`), one
    forward and one reverse direction. The one-sided floors are entered in ``estimates``
    as lower bounds (used when nothing is colored)."""
    floors = [e for e, _ in estimates.values() if math.isfinite(e)]
    decompress = sp_info.nnz * cost.DECOMPRESS
    for alt, axis in (("sparse-forward", 1), ("sparse-reverse", 0)):
        bound = _bound(sp_info, axis)
        seconds = cost.model(census, bound, chunk, KIND[alt], replayed=replayed) + decompress
        estimates[alt] = (seconds, f"at least: {bound} directions, the lower bound (not "
                                   f"colored)")
        floors.append(seconds)
    p = sp_info.pattern
    threshold = bicoloring_threshold(np.diff(p.indptr), np.bincount(p.indices,
                                                                     minlength=p.shape[1]))
    if min(_bound(sp_info, 1), _bound(sp_info, 0)) > threshold:
        floors.append(decompress + sum(cost.model(census, 1, chunk, k, replayed=replayed)
                                       for k in ("forward", "reverse")))
    return min(floors)


def _through_only(problem, through, census, chunk, sp_info, estimates, notes, output,
                  max_memory):
    """The plan through the input selections (or in mixed mode), when no way on ``f``
    itself can be modelled cheaper even at its lower bound (so ``J_f``'s pattern is not
    colored)."""
    way = "mixed mode" if getattr(through[0], "kind", None) == "mixed" else \
        "the way through the input selections"
    notes.append(f"Colorings of J_f skipped: {way} is modelled cheaper than every way on "
                 f"the function itself at its lower bound.")
    alts = estimates if way == "mixed mode" else ("sparse-forward", "sparse-reverse")
    alt = min(alts, key=lambda a: estimates[a][0])
    p = Plan(problem, alt, chunk, census, sp_info, None, None, estimates, "", notes, output,
             max_memory, ["Nothing timed: the lower bounds decided."])
    _go(p, through)
    return p


def _through(problem, census, notes, max_memory, calibrate, replayed):
    """``((through, seconds) or None, sp_info)``: the plan of ``problem`` through its input
    selections (:mod:`jacobians.gathered`) and, when ``g``'s pattern took no decisions,
    ``J_f``'s pattern composed from it (so ``f`` is not detected again to weigh the direct
    ways); else ``sp_info`` None."""
    through, seconds = through_gathers(problem, prepare, max_memory, calibrate, replayed)
    if through is None:
        notes.append(f"Input selections: {seconds}.")
        return None, None
    if _decides(through.inner.sparsity):
        return (through, seconds), None    # a pattern of this point only: detect f's own
    return (through, seconds), Sparsity(through.pattern(), source="composed (through the "
                                        "input selections)", census=census)


def _census(problem, sparse, sparsity, max_memory, notes):
    """``(census, sp_info)``: the primitive census of ``problem``; a sparse mode without
    a census yet gets it from the detection, which counts the primitives too (one
    evaluation of f instead of two; its time stands for the plain call's), and the
    detected pattern with it (else ``sp_info`` is None)."""
    sp_info = None
    census = get_census(problem, compute=not (sparse is True and sparsity is None))
    if census is None:
        sp_info = _detect(problem, sparse, None, max_memory, notes)
        census = sp_info.census if sp_info is not None else get_census(problem)
        if census.t_plain is None and sp_info is not None:
            census.t_plain = sp_info.seconds
    return census, sp_info


def _dense_fits(problem, mode, sparse, output, max_memory, dtype):
    """Whether the dense m x n result fits in ``max_memory``; refuses (raises) when it
    does not and a dense result or a dense mode was asked for."""
    dense_ok = dense_bytes(problem, dtype) <= max_memory
    if not dense_ok and (output == "dense" or mode in ("forward", "reverse") or
                         sparse is False):
        refuse_dense(problem.api, problem, max_memory, dtype)
    return dense_ok


def _dense_chunks(problem, census, chunk_size, max_memory, dtype):
    """``({"forward": B_f, "reverse": B_r}, footprint)``: the directions per sweep of each
    dense mode, ``chunk_size`` when given, else the most whose whole call (the
    :class:`Footprint`: the result, the tape, every sweep's tangents) stays within
    ``max_memory``; 0 where not one direction fits (a store-all reverse sweep: ``jacrev``
    recomputes within it). The footprint is the model (None with ``chunk_size``)."""
    if chunk_size is not None:
        return {"forward": int(chunk_size), "reverse": int(chunk_size)}, None
    fp = Footprint(problem, census, dtype)
    return {"forward": largest_chunk(fp.forward, max_memory, problem.n),
            "reverse": largest_chunk(fp.reverse, max_memory, problem.m)}, fp


def _dense_estimates(census, dirs, chunks, fp, mode, sparse, replayed):
    """``{alt: (seconds, "modelled")}`` for the dense modes asked for: the cost model of
    n one-hot tangents (forward) or m one-hot cotangents (reverse) in chunks of
    ``chunks[alt]``; infinite where not one direction fits in ``max_memory``."""
    estimates = {}
    for alt in ("forward", "reverse"):
        if mode in ("auto", alt) and sparse is not True:
            if chunks[alt] == 0:
                need = getattr(fp, alt)(1)
                estimates[alt] = (math.inf, f"infeasible: one {alt} direction needs "
                                            f"{human_bytes(need)} (the whole call, "
                                            f"docs/memory.md) > max_memory")
                continue
            estimates[alt] = (cost.model(census, dirs[alt], chunks[alt], alt,
                                         onehot=not replayed, replayed=replayed), "modelled")
    return estimates


def _detect_if_worth(problem, census, estimates, sparse, sparsity, detect, dense_ok,
                     max_memory, notes):
    """The sparsity pattern (or None): detected always, or with ``detect="worth"`` only
    when :func:`cost.worth_detecting` says the cheapest dense estimate leaves room for a
    compressed mode to win (the detection then runs within a budget)."""
    go, budget = True, None
    need = cost.detection_bytes(census, problem.n)
    if sparse == "auto" and sparsity is None and dense_ok and need > max_memory:
        notes.append(f"Sparsity detection: skipped: its index sets are modelled at up to "
                     f"{human_bytes(need)}, over max_memory, and a dense way fits "
                     f"(sparse=True detects anyway).")
        return None
    if detect == "worth" and sparse == "auto" and sparsity is None and dense_ok:
        go, why = cost.worth_detecting(census, min(e for e, _ in estimates.values()))
        notes.append(f"Sparsity detection: {'run' if go else 'skipped'}: {why}.")
        budget = cost.detection_budget(census, max_memory)
    return _detect(problem, sparse, sparsity, max_memory, notes, budget) if go else None


def _colorings(sp_info, mode, notes, census, chunk):
    """``(col, row, bic)``: the column, row and star bi- colorings of the pattern (None
    where not made), as the sparse mode asked for needs them
    (:func:`jacobians.sparse.jacobian_colorings`)."""
    if sp_info is None:
        return None, None, None
    way = {"sparse-forward": "forward", "sparse-reverse": "reverse",
           "sparse-bidirectional": "bidirectional"}.get(mode, "auto")
    col, row, bic = jacobian_colorings(sp_info.pattern, way, census, chunk)
    if way == "auto":
        for name, made, axis, densest in (("Column", col, 1, "the densest row"),
                                          ("Row", row, 0, "the densest column")):
            if made is None:
                other = "the bicoloring's" if bic is not None and (col or row) is None \
                    else "the best coloring's"
                notes.append(f"{name} coloring skipped: its lower bound "
                             f"({_bound(sp_info, axis)}, {densest}) is modelled no cheaper "
                             f"than {other} sweeps.")
        if bic is None:
            notes.append(_no_bicoloring(sp_info, col, row))
    return col, row, bic


def _no_bicoloring(sp_info, col, row):
    """Why auto mode has no bicoloring: not tried, or over its work budget."""
    if not sp_info.pattern.nnz:
        return "Bicoloring not tried: no entries."
    p = sp_info.pattern
    k = bicoloring_threshold(np.diff(p.indptr), np.bincount(p.indices, minlength=p.shape[1]))
    counts = [c.ncolors for c in (col, row) if c is not None]
    if min(_bound(sp_info, 1), _bound(sp_info, 0)) > k or (counts and min(counts) > k):
        return ("Bicoloring abandoned: no greedy pass finished within its work budget (twice "
                "the entries of the one-sided colorings' graphs).")
    return (f"Bicoloring not tried: a one-sided coloring needs at most {k} colors (5, or "
            f"twice the typical row or column count; the bounds: {_bound(sp_info, 1)} "
            f"column, {_bound(sp_info, 0)} row).")


def _bound(sparsity, axis):
    """The one-sided colorings' lower bound: the densest row (``axis=1``: columns are
    colored) or column (``axis=0``)."""
    p = sparsity.pattern
    if axis == 1:
        return int(np.diff(p.indptr).max(initial=0))
    return int(np.bincount(p.indices, minlength=1).max())


def _sparse_estimates(estimates, census, dirs, chunk, nnz, mode, sparse, replayed, bic=None):
    """Add the compressed modes to ``estimates``: one sweep per color plus the
    decompression of the nnz entries (the bidirectional way: its forward colors' sweeps
    plus its reverse colors'); under ``mode="auto"`` a coloring with as many colors as
    the dense mode has directions compresses nothing (infinite)."""
    for alt in ("sparse-forward", "sparse-reverse", "sparse-bidirectional"):
        if dirs[alt] is None or mode not in ("auto", alt):
            continue
        dense = dirs[KIND[alt]] if alt != "sparse-bidirectional" else \
            min(dirs["forward"], dirs["reverse"])
        if mode == "auto" and sparse is not True and dirs[alt] >= dense:
            estimates[alt] = (math.inf, "no compression: as many colors as dense directions")
            continue
        if alt == "sparse-bidirectional":
            seconds = bidirectional_cost(census, bic, chunk, replayed)
        else:
            seconds = cost.model(census, dirs[alt], chunk, KIND[alt], replayed=replayed)
        estimates[alt] = (seconds + nnz * cost.DECOMPRESS, "modelled")


def _mark_dense_infeasible(estimates, problem, dtype):
    """The dense modes' estimates made infinite: their result alone exceeds max_memory."""
    for alt in ("forward", "reverse"):
        if alt in estimates:
            estimates[alt] = (math.inf, f"infeasible: the dense result alone needs "
                                        f"{human_bytes(dense_bytes(problem, dtype))} > "
                                        f"max_memory")


def _choose(problem, estimates, dense_ok, max_memory, dtype, calibrate, dirs, chunk, nnz,
            replayed, bic=None):
    """``(chosen, how, timed)``: the cheapest feasible alternative (after timing the close
    ones, :func:`_settle`), the sentence saying why, and the timing lines; refuses when
    nothing is feasible."""
    feasible = {a: e for a, (e, _) in estimates.items() if math.isfinite(e)}
    if not feasible:
        refuse_dense(problem.api, problem, max_memory, dtype)
        raise BudgetTooSmall(
            f"{problem.api}({problem.name}): max_memory={int(max_memory):,} bytes is too "
            f"small for every way: " + "; ".join(f"{a} {why}" for a, (_, why) in
                                                 estimates.items()) +
            ". jacobians.jacrev(f, x, max_memory=...) recomputes within less "
            "(docs/memory.md); jacobians.jacobian does so by itself")
    infeasible = [a for a, (e, _) in estimates.items() if not math.isfinite(e)]
    if len(feasible) == 1:
        how = ("the only feasible alternative: " + ", ".join(infeasible) + " would need "
               f"the dense {problem.m} x {problem.n} result in memory.") \
            if not dense_ok and infeasible else "the only alternative asked for or left."
    else:
        how = "the cheapest modelled estimate."
    timed = _settle(problem, feasible, calibrate, dirs, chunk, nnz, estimates, replayed,
                    bic)
    if timed[0].startswith("Timed:"):
        how = "the cheapest estimate after timing (see 'Timed')."
    chosen, ratio = cost.pick({a: e for a, (e, _) in estimates.items()})
    if math.isfinite(ratio):
        how += f" {chosen} is {ratio:.2f}x cheaper than the runner-up."
    return chosen, how, timed


def _settle(problem, feasible, calibrate, dirs, chunk, nnz, estimates, replayed=False,
            bic=None):
    """Time the close alternatives when that can pay (see the module docstring); the
    lines ``explain()`` shows about it."""
    if len(feasible) < 2:
        return ["Nothing timed: only one alternative was left."]
    best = min(feasible.values())
    close = [a for a, e in feasible.items() if e <= cost.CLOSE * best]
    if not calibrate:
        return ["Nothing timed: calibrate=False (the cost model decided)."]
    if len(close) < 2:
        return [f"Nothing timed: the modelled estimates are more than {cost.CLOSE:g}x apart, "
                f"a clear call."]
    if best < cost.TIME_MIN_SECONDS:
        return [f"Nothing timed: {', '.join(close)} are within {cost.CLOSE:g}x, but the "
                f"cheapest is modelled at {_fmt(best)}, under {_fmt(cost.TIME_MIN_SECONDS)}: "
                f"timing would cost more than a wrong pick."]
    if replayed:
        return [f"Nothing timed: {', '.join(close)} are within {cost.CLOSE:g}x, but the "
                f"sweeps replay through dualad.jit (jit=True), whose order can differ from "
                f"timed eager sweeps: the cost model decided."]
    return _time(problem, close, dirs, chunk, nnz, estimates, bic)


def _parts(alt, dirs, bic):
    """``[(kind, directions)]``: the sweeps of ``alt`` by kind (the bidirectional way has
    a forward and a reverse part, either possibly empty)."""
    if alt == "sparse-bidirectional":
        return [(k, d) for k, d in (("forward", bic.ncolors_forward),
                                    ("reverse", bic.ncolors_reverse)) if d]
    return [(KIND[alt], dirs[alt])]


def _time(problem, alts, dirs, chunk, nnz, estimates, bic=None):
    """Time one sweep of each alternative, seeded as it will be (dense ones one-hot,
    compressed ones with general directions), of at most ``cost.TIME_DIRS`` directions:
    the estimate is that sweep times the sweeps of that size the alternative needs (so
    timing costs a fraction of the Jacobian, not one Jacobian per alternative); the
    bidirectional way adds its forward and its reverse part."""
    r = cost.TIME_REPEAT
    lines = [f"Timed: {', '.join(alts)} were modelled within {cost.CLOSE:g}x of each other, "
             f"so one sweep of each ran on {problem.name} itself (best of {r}):"]
    parts = [(a, kind, d, min(d, chunk, cost.TIME_DIRS)) for a in alts
             for kind, d in _parts(a, dirs, bic)]
    total = {a: (nnz * cost.DECOMPRESS if a.startswith("sparse") else 0.0) for a in alts}
    for a, _, d, b in (q for q in parts if q[1] == "forward"):
        sparse = a.startswith("sparse")
        t = cost.time_jvp(problem, b, onehot=not sparse)
        note(problem, f"timing {a} (one JVP of {b} directions)", t * r, r)
        total[a] += math.ceil(d / b) * t
        lines.append(f"  {a}: one JVP of {b} {'colored' if sparse else 'one-hot'} directions "
                     f"{_fmt(t)} ({r} evaluations of {problem.name}), x {math.ceil(d / b)}")
    rev = [q for q in parts if q[1] == "reverse"]
    if rev:   # one recorded tape, a pullback per alternative
        t_rec, pulls = cost.time_vjp(problem, [b for *_, b in rev],
                                     onehot=[not a.startswith("sparse") for a, *_ in rev])
        note(problem, "timing reverse (recording one tape)", t_rec * r, r)
        lines.append(f"  recording one tape {_fmt(t_rec)} ({r} evaluations of "
                     f"{problem.name})")
        for (a, _, d, b), t in zip(rev, pulls):
            total[a] += t_rec + math.ceil(d / b) * t
            lines.append(f"  {a}: one pullback of {b} cotangents {_fmt(t)} (no evaluation "
                         f"of {problem.name}), x {math.ceil(d / b)}")
    estimates.update((a, (t, "timed")) for a, t in total.items())
    return lines

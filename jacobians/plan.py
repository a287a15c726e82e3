"""The planner: prepare a Jacobian once, evaluate it at many points, explain the choice.

``plan(f, x)`` looks at the function once — a census of its primitives, its
sparsity pattern (when worth detecting) and the colorings of that pattern —
and weighs four ways to get the Jacobian of ``F: R^n -> R^m``:

    forward         n directions, ceil(n / c) vector-mode JVP sweeps
    reverse         m cotangents, one tape and ceil(m / c) batched pullbacks
    sparse-forward  one direction per column color, then decompression
    sparse-reverse  one cotangent per row color, then decompression

Each is first modelled from the census (:mod:`jacobians.cost`); those within
a factor of 3 of the best are then timed on the function itself (one sweep of
one chunk each) and the estimate is chunks x that time. The cheapest wins;
``explain()`` says which, why, and what every alternative would cost.
"""
from __future__ import annotations

import math

import numpy as np

from . import cost
from ._common import DEFAULT_MAX_MEMORY, Problem, float_dtype
from .dense import check_mode, chunk_for, forward_flat, get_census, reverse_flat
from .patterns import TooDense
from .sparse import colorings_for
from .sparsity import Sparsity, as_pattern, detect_jacobian
from .validity import CheckedPattern

ALTERNATIVES = ("forward", "reverse", "sparse-forward", "sparse-reverse")
_DECOMPRESS = 20e-9   # seconds per structural nonzero read back from a compressed product


def _fmt(seconds):
    if seconds is None or not math.isfinite(seconds):
        return "-"
    return f"{seconds * 1e6:.0f} us" if seconds < 1e-3 else \
        (f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s")


def _bytes(b):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if b < 1024 or unit == "TB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024


class Plan:
    """A prepared Jacobian: ``plan(*args)`` evaluates at new arguments of the same shapes."""

    def __init__(self, problem, mode, chunk, census, sparsity, col, row, estimates, how,
                 notes, output):
        self.problem = problem
        self.mode = mode
        self.chunk_size = chunk
        self.census = census
        self.sparsity = sparsity
        self.column_coloring, self.row_coloring = col, row
        self.estimates = estimates      # alternative -> (seconds or None, "timed"/"modelled"/why not)
        self.how = how
        self.notes = notes
        self.output = output
        self.n, self.m = problem.n, problem.m
        # Sparse modes: the pattern is checked at every new point (jacobians.validity).
        self.checked = None
        if mode.startswith("sparse"):
            kind = "forward" if mode == "sparse-forward" else "reverse"
            self.checked = CheckedPattern(kind, sparsity, col if kind == "forward" else row)
        self.bytes_per_direction = census.bytes_per_direction(
            np.dtype(float_dtype(problem.dtype)).itemsize)

    # --- numbers -------------------------------------------------------------------------
    def directions_of(self, alt):
        return {"forward": self.n, "reverse": self.m,
                "sparse-forward": self.column_coloring.ncolors if self.column_coloring else None,
                "sparse-reverse": self.row_coloring.ncolors if self.row_coloring else None}[alt]

    @property
    def directions(self):
        return self.directions_of(self.mode)

    @property
    def n_chunks(self):
        return max(1, math.ceil(self.directions / self.chunk_size)) if self.directions else 0

    @property
    def sparse(self):
        return self.mode.startswith("sparse")

    # --- evaluation ----------------------------------------------------------------------
    def __call__(self, *args):
        problem = self.problem.with_point(args) if args else self.problem
        chunk, mode = self.chunk_size, self.mode
        if mode == "forward":
            flat = forward_flat(problem, chunk)
        elif mode == "reverse":
            flat = reverse_flat(problem, chunk)
        else:
            flat, problem = self.checked.evaluate(problem, chunk)
            self._follow()
        want_sparse = self.output == "sparse" or (self.output == "auto" and self.sparse)
        if want_sparse:
            import scipy.sparse as sp
            return flat if sp.issparse(flat) else sp.csr_matrix(flat)
        if not isinstance(flat, np.ndarray):
            flat = flat.toarray()
        return problem.structured(flat)

    def _follow(self):
        """Take over a pattern the check detected again (and its coloring)."""
        c = self.checked
        if c.sparsity is not self.sparsity:
            self.sparsity = c.sparsity
            if c.kind == "forward":
                self.column_coloring = c.coloring
            else:
                self.row_coloring = c.coloring
            self.m = c.sparsity.pattern.shape[0]

    @property
    def redetections(self):
        """Points at which the sparse pattern was detected again (its decisions differed)."""
        return self.checked.redetections if self.checked is not None else 0

    # --- words ---------------------------------------------------------------------------
    def explain(self):
        c = self.census
        lines = [f"Jacobian plan for {self.problem.name}: n = {self.n} inputs, "
                 f"m = {self.m} outputs (flat Jacobian {self.m} x {self.n}).",
                 f"Function: {c.n_ops} primitives per evaluation, {c.elements} values, "
                 f"~{c.flops:.3g} flops" + (f"; one plain call {_fmt(c.t_plain)}."
                                           if c.t_plain else ".")]
        if self.sparsity is not None:
            lines.append("Sparsity: " + self.sparsity.describe() + ".")
            for name, col in (("columns (forward)", self.column_coloring),
                              ("rows (reverse)", self.row_coloring)):
                if col is not None:
                    tried = ", ".join(f"{k} {v}" for k, v in col.tried.items())
                    lines.append(f"Coloring of {name}: {col.ncolors} colors by {col.method} "
                                 f"(lower bound {col.lower_bound}"
                                 f"{', optimal' if col.optimal else ''}; tried: {tried}).")
        lines.extend(self.notes)
        if self.checked is not None:
            lines.append(self.checked.describe())
        est = self.estimates[self.mode][0]
        lines.append(f"Chosen: {self.mode} — {self.directions} directions in "
                     f"{self.n_chunks} sweep(s) of up to {self.chunk_size} (one sweep's "
                     f"tangents ~{_bytes(self.bytes_per_direction * min(self.chunk_size, self.directions or 1))}); "
                     f"estimated {_fmt(est)} per Jacobian.")
        lines.append("Why: " + self.how)
        lines.append("Estimated cost of each alternative:")
        for alt in ALTERNATIVES:
            seconds, source = self.estimates.get(alt, (None, "not considered"))
            d = self.directions_of(alt)
            chunks = f"{math.ceil(d / self.chunk_size)} sweep(s)" if d else ""
            mark = "  <- chosen" if alt == self.mode else ""
            lines.append(f"  {alt:<15} {'' if d is None else d:>7} directions  {chunks:<12} "
                         f"{_fmt(seconds):>10}  ({source}){mark}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"Plan({self.problem.name}: {self.mode}, n={self.n}, m={self.m}, "
                f"{self.directions} directions in {self.n_chunks} sweep(s))")


def _consider_sparse(problem, sparse, sparsity, max_memory, notes):
    if sparse is False:
        notes.append("Sparsity: not considered (sparse=False).")
        return None
    if sparsity is not None:
        pattern = as_pattern("plan", sparsity, (problem.m, problem.n))
        return Sparsity(pattern, source="user-supplied")
    budget = max(1_000_000, max_memory // 16)
    try:
        return detect_jacobian(problem, budget=budget)
    except TooDense as e:
        notes.append(f"Sparsity: detection stopped, {e}: the Jacobian is treated as dense.")
        return None


def plan(f, *args, mode="auto", argnums=0, sparse="auto", sparsity=None, chunk_size=None,
         max_memory=DEFAULT_MAX_MEMORY, output="auto", calibrate=True):
    """Prepare the Jacobian of ``f`` at ``args`` (see the module docstring).

    ``mode``: "auto", "forward", "reverse", "sparse-forward", "sparse-reverse".
    ``sparse``: "auto" (detect and weigh), True (only sparse modes), False (dense only).
    ``sparsity``: a given m x n pattern (skips detection). ``output``: "auto"
    (scipy CSR for sparse modes, arrays ``out.shape + in.shape`` otherwise), "dense"
    or "sparse". ``calibrate``: time close alternatives on the function itself.
    """
    allowed = ("auto",) + ALTERNATIVES
    mode = check_mode("plan", mode, allowed)
    if output not in ("auto", "dense", "sparse"):
        raise ValueError(f"plan: output={output!r} is not one of 'auto', 'dense', 'sparse'")
    problem = Problem("plan", f, args, argnums)
    census = get_census(problem)
    chunk = chunk_for(problem, chunk_size, max_memory, census)
    notes = []
    if mode.startswith("sparse"):
        sparse = True
    sp_info = None if mode in ("forward", "reverse") else \
        _consider_sparse(problem, sparse, sparsity, max_memory, notes)
    if sparse is True and sp_info is None:
        raise ValueError(f"plan({problem.name}): a sparse mode was asked for but the pattern "
                         f"could not be obtained ({' '.join(notes)})")
    col = row = None
    if sp_info is not None:
        col, row = colorings_for(sp_info.pattern, {"sparse-forward": "forward",
                                                   "sparse-reverse": "reverse"}.get(mode, "auto"))
        if row is None and mode == "auto":
            notes.append("Row coloring skipped: it cannot use fewer colors than the column "
                         "coloring (its lower bound, the largest column count, is no smaller).")
    nnz = sp_info.nnz if sp_info is not None else 0
    dirs = {"forward": problem.n, "reverse": problem.m,
            "sparse-forward": col.ncolors if col else None,
            "sparse-reverse": row.ncolors if row else None}
    kind = {"forward": "forward", "reverse": "reverse", "sparse-forward": "forward",
            "sparse-reverse": "reverse"}
    itemsize = np.dtype(float_dtype(problem.dtype)).itemsize
    dense_bytes = problem.n * problem.m * itemsize
    estimates = {}
    for alt in ALTERNATIVES:
        if dirs[alt] is None:
            continue
        if mode != "auto" and alt != mode:
            continue
        if alt in ("forward", "reverse") and sparse is True:
            continue
        if alt in ("forward", "reverse") and dense_bytes > max_memory and sp_info is not None \
                and mode == "auto":
            estimates[alt] = (math.inf, f"infeasible: the dense result alone needs "
                                        f"{_bytes(dense_bytes)} > max_memory")
            continue
        if alt.startswith("sparse") and mode == "auto" and sparse is not True and \
                dirs[alt] >= dirs[kind[alt]]:
            estimates[alt] = (math.inf, "no compression: as many colors as dense directions")
            continue
        extra = nnz * _DECOMPRESS if alt.startswith("sparse") else 0.0
        estimates[alt] = (cost.model(census, dirs[alt], chunk, kind[alt]) + extra, "modelled")
    feasible = {a: e for a, (e, _) in estimates.items() if math.isfinite(e)}
    if not feasible:
        raise ValueError(f"plan({problem.name}): no feasible way to compute the Jacobian "
                         f"within max_memory={max_memory}")
    infeasible = [a for a, (e, _) in estimates.items() if not math.isfinite(e)]
    if len(feasible) == 1:
        how = ("the only feasible alternative: " + ", ".join(infeasible) + " would need "
               f"the dense {problem.m} x {problem.n} result in memory.") if infeasible else \
            "the only alternative asked for."
    else:
        how = "the cheapest modelled estimate."
    if calibrate and len(feasible) > 1:
        best = min(feasible.values())
        close = [a for a, e in feasible.items() if e <= cost.CLOSE * best]
        if len(close) > 1:
            _time(problem, close, dirs, kind, chunk, nnz, estimates)
            how = (f"the cheapest estimate after timing one sweep of each of "
                   f"{', '.join(close)} on the function itself (the others are modelled "
                   f"and more than {cost.CLOSE:g}x the best).")
        feasible = {a: e for a, (e, _) in estimates.items() if math.isfinite(e)}
    chosen = min(feasible, key=feasible.get)
    if len(feasible) > 1:
        ranked = sorted(feasible.values())
        how += f" {chosen} is {ranked[1] / max(ranked[0], 1e-12):.2f}x cheaper than the runner-up."
    return Plan(problem, chosen, chunk, census, sp_info, col, row, estimates, how, notes, output)


def _time(problem, alts, dirs, kind, chunk, nnz, estimates):
    """Time one sweep of each alternative, seeded as it will be: dense ones one-hot,
    compressed (sparse) ones with general directions."""
    fwd = [a for a in alts if kind[a] == "forward"]
    rev = [a for a in alts if kind[a] == "reverse"]
    for a in fwd:
        b = min(dirs[a], chunk)
        sparse = a.startswith("sparse")
        t = cost.time_jvp(problem, b, onehot=not sparse)
        extra = nnz * _DECOMPRESS if sparse else 0.0
        estimates[a] = (math.ceil(dirs[a] / chunk) * t + extra, "timed")
    if rev:   # one recorded tape, a pullback per alternative
        t_rec, pulls = cost.time_vjp(problem, [min(dirs[a], chunk) for a in rev],
                                     onehot=[not a.startswith("sparse") for a in rev])
        for a, t in zip(rev, pulls):
            extra = nnz * _DECOMPRESS if a.startswith("sparse") else 0.0
            estimates[a] = (t_rec + math.ceil(dirs[a] / chunk) * t + extra, "timed")

"""The cost model: what one sweep of a function costs, learned from the function itself.

A *census* runs ``f`` once through a counting interpreter and records, per
primitive, the number of calls, the sizes of the values it makes and an
estimate of its arithmetic (``flops``: elementwise ~ one per output element
and traced argument, ``matmul`` ~ 2pqr, ``einsum`` ~ its index space,
decompositions ~ size^1.5). From it, for B directions swept in chunks of c
(s = ceil(B / c) sweeps) over K primitives:

    forward  ≈ s · (K · o_jvp + t_f)             + B · W_fwd
    reverse  ≈ (K · o_rec + t_f) + s · K · o_vjp + B · W_rev · ρ + (1 + s) · C · β

with W the per-direction work (the census' flops at τ each, those of products,
matmul and einsum, at τ_blas: one BLAS call carries the whole batch), t_f the plain call,
o_* the interpreter's cost per primitive, C the bytes of the plain arrays f reads (which
a reverse sweep fingerprints when it records its tape and at every pullback, β a byte:
:mod:`dualad.interpreters.reverse.versions`) and τ, ρ, β machine constants (the defaults below were measured
on a laptop-class x86 core and checked on the 2-core VM of issue 31). A dense Jacobian
seeds its sweeps one-hot, so there W_fwd and W_rev are what one such direction costs,
not the whole arithmetic (:mod:`jacobians.seeded`: the tangents stay one-hot through the
elementwise part of f next to the inputs, the cotangents through the part next to the
outputs, and a product against a constant matrix is a gather); compressed (sparse)
sweeps are charged W, the census' whole arithmetic. Close calls, within :data:`CLOSE`,
whose best is modelled at :data:`TIME_MIN_SECONDS` or more, are settled by timing one
batched JVP and one VJP of the function itself, seeded as the sweeps will be
(:func:`time_jvp`, :func:`time_vjp`); :func:`pick` makes the choice from either kind
of estimate (a prepared plan that measures its own sweeps can call it again).

The census also sizes the chunks: one direction needs about
``itemsize · Σ sizes of the values`` bytes of tangents (forward) or
cotangents (reverse, where the tape keeps them all alive). It is the planner's only
evaluation of ``f`` on a first call that needs no more: its own time stands for
``t_f`` (it is the plain call plus a few microseconds per primitive), so ``f`` is not
called a second time to time it. Every time the planner takes is read by
:class:`Stopwatch`: the lesser of the wall time and the process's CPU time over the call,
so a call that waited while another process ran (two test jobs on two cores: a 0.2 ms
census read as 5 ms) is not charged the wait, and one whose products ran on several
BLAS threads is not charged their sum. (A function that sleeps or waits on I/O is
charged only its computing.) A census timed across a full garbage collection or a first
import (each read, never changed, before and after) is charged the lesser of its reading
and its modelled time, ``n_ops · O_CENSUS`` plus its arithmetic: in a long-lived process a
full collection can cost ten times a small ``f``, which read as ``f``'s own time would make
every detection look dear.

What the planner spends to learn more is itself modelled, and spent only where it can
pay back:

- Sparsity detection (``mode="auto"`` of ``jacobian``/``hessian``) costs one run of
  ``f`` on index-set patterns, modelled as :func:`model_detection`. It is done only when
  the cheaper dense estimate is at least :data:`DETECT_MIN_SECONDS` and at least
  :data:`DETECT_RATIO` times the modelled detection: a problem whose dense Jacobian is
  trivially cheap never pays for a pattern.
- Timing (settling alternatives within :data:`CLOSE` of each other) costs about two
  runs of each timed sweep; it is done only when the cheapest alternative is modelled at
  :data:`TIME_MIN_SECONDS` or more. Below that, a wrong pick costs less than the timing.
"""
from __future__ import annotations

__all__ = ["O_JVP", "O_REC", "O_VJP", "O_REPLAY", "TAU", "RHO", "TAU_BLAS", "BYTE_CHECK",
           "CLOSE", "TIME_MIN_SECONDS",
           "TIME_REPEAT", "TIME_DIRS", "O_PAT", "PAT_ELEMENT", "HESSIAN_PATTERN", "PAT_PAIR",
           "DETECT_MIN_SECONDS", "DETECT_RATIO", "DETECT_ENTRIES", "O_CENSUS",
           "KEPT_CONSTANT_BYTES", "flops", "Census", "census",
           "model", "work_per_direction", "seeded_work", "pick", "model_hessian", "model_detection",
           "worth_detecting", "detection_bytes", "detection_budget", "Stopwatch", "best_of",
           "time_jvp", "time_vjp"]

import gc
import math
import sys
import time

import numpy as np

from dualad.extend import PrimalBox, Trace, flatten, shape_of

from .rules import JOINT_LIMIT
from .seeded import SeedFlow

# Interpreter constants (seconds): per primitive in a forward sweep, per recorded
# primitive, per primitive of a backward sweep; seconds per flop of tangent work;
# the backward sweep's work per direction relative to the forward one.
O_JVP, O_REC, O_VJP, TAU, RHO = 12e-6, 5e-6, 14e-6, 1.0e-9, 1.3
# Seconds per byte of the plain arrays f reads (its constants) that a reverse sweep
# fingerprints: vjp checksums each once when the tape is recorded and again at every
# pullback (dualad.interpreters.reverse.versions: CRC-32 at ~0.8 ns a byte, measured), so a data matrix of a few
# MB costs reverse mode milliseconds that forward mode does not pay.
BYTE_CHECK = 0.6e-9
# A dualad.jit replay's cost per primitive relative to the eager interpreter's O_* (a
# generated line and a NumPy call, ~1 us, against ~12 us of dispatch and taping).
O_REPLAY = 0.1
# Seconds per flop of matmul/einsum work: a batch of tangents through a product is one
# BLAS call (measured ~3e10 flop/s on one core: a 1000 x 1000 matmul Jacobian).
TAU_BLAS = 5e-11

# Alternatives modelled within this factor of the cheapest are settled by timing. The
# model charges every direction the census' whole work W; dense Jacobians seed one-hot
# (dualad.core.onehot), which makes the first linear map a gather, so the modelled ratio of
# forward to reverse can be off by about the width of that map: a wide margin.
CLOSE = 30.0

# Timing is spent only on a close call whose cheapest alternative is modelled at least
# this long (seconds); repeats per timed sweep (the best is kept).
TIME_MIN_SECONDS = 0.02
TIME_REPEAT = 2
# Directions in a timed sweep at most: the estimate scales it to all of them (a timed
# sweep of the whole chunk would cost as much as the Jacobian itself).
TIME_DIRS = 128

# Sparsity detection in mode="auto": the pattern run costs ~ O_PAT per primitive and
# PAT_ELEMENT per element of every value (index sets of a few entries each; measured on
# banded and stencil residuals), plus the plain call; the gradient's pattern (Hessians)
# ~ HESSIAN_PATTERN times that (measured 6-14x on Rosenbrock, n = 200 to 20000). Detected only when the cheaper dense estimate is at least
# DETECT_MIN_SECONDS and DETECT_RATIO times the modelled detection.
O_PAT, PAT_ELEMENT, HESSIAN_PATTERN = 10e-6, 40e-9, 12.0
# A product's pattern enumerates its index space (the pairs where a constant operand is
# nonzero, up to rules.JOINT_LIMIT; past it the conservative rule is cheap): ~2 us a pair
# (measured: a dense 1000 x 1000 matmul's pattern takes 1.5 s).
PAT_PAIR = 2e-6
DETECT_MIN_SECONDS = 2e-3
DETECT_RATIO = 4.0
DETECT_ENTRIES = 32
# Seconds per primitive of the census' counting interpreter: with the census' arithmetic,
# the modelled time of a counted call, used in place of a measured one that a full
# garbage collection or a first import ran inside (in a long-lived process with a large
# heap, one full collection takes tens of milliseconds: ten times a small f).
O_CENSUS = 12e-6


# The process CPU clock is used only where it is fine-grained (Linux, macOS: ns; on
# Windows it ticks every 15.6 ms, and the wall clock alone is read).
_CPU_CLOCK_FINE = time.get_clock_info("process_time").resolution <= 1e-6


class Stopwatch:
    """Seconds a piece of work took: min(wall time, the process's CPU time) since the
    stopwatch was made (module docstring). Wall time over-counts a call that waited for
    the processor; CPU time over-counts one that ran on several threads at once; neither
    under-counts a call that computes all the while, so the lesser is its cost.

    Examples
    --------
    >>> from dualad.jacobians.cost import Stopwatch
    >>> watch = Stopwatch()
    >>> _ = sum(range(1000))
    >>> 0.0 <= watch.seconds() < 1.0
    True
    """

    __slots__ = ("wall", "cpu")

    def __init__(self):
        self.wall = time.perf_counter()
        self.cpu = time.process_time() if _CPU_CLOCK_FINE else None

    def seconds(self):
        """Seconds since the stopwatch was made (the lesser of wall and CPU time)."""
        wall = time.perf_counter() - self.wall
        if self.cpu is None:
            return wall
        return min(wall, time.process_time() - self.cpu)


class _Counted(PrimalBox):
    """A value on the census trace: its primal and its number in the census' SeedFlow;
    ``_live``: its elements while alive (counted in :attr:`Census.live`), 0 for an input."""

    __slots__ = ("vid", "_live")

    def __init__(self, trace, primal, vid, live=0):
        self._trace = trace
        self.primal = primal
        self.vid = vid
        self._live = live

    def __del__(self):
        if self._live:
            self._trace.census.live -= self._live


def _size(x):
    if x.__class__ is np.ndarray:
        return x.size
    return math.prod(shape_of(x))


def flops(prim, primals, ans, params, out=None):
    """Arithmetic estimate of one call (see the module docstring); ``out``: the elements
    of ``ans``, when known."""
    name = prim.name
    if name == "matmul":
        a = shape_of(primals[0])
        return 2.0 * _size(ans) * a[-1]
    if name == "einsum":
        sizes = {}
        for sub, x in zip(params["subs"], primals):
            for c, d in zip(sub, shape_of(x)):
                sizes[c] = max(sizes.get(c, 1), d)
        return float(math.prod(sizes.values())) * max(1, len(primals) - 1)
    if out is None:
        outs = ans if isinstance(ans, (tuple, list)) else (ans,)
        out = sum(_size(o) for o in outs)
    if prim.elementwise or prim.derivs is not None:
        return float(out) * max(1, len(primals))
    inp = sum(_size(p) for p in primals)
    if prim.linear or name in ("max", "min", "prod"):
        return float(max(out, inp))
    return float(max(out, inp)) ** 1.5  # decompositions, solves: ~ n^3 for n x n


DECOMPRESS = 20e-9   # seconds per structural nonzero read back from a compressed product
#: A reverse recording (``dualad.vjp``, ``grad``) keeps a copy of the bytes of every plain
#: array operand of at most this size while ``f`` runs, to catch an in-place change inside
#: ``f`` (``dualad.interpreters.reverse.versions.CONSTANT_BYTES``, mirrored here: the
#: planner sees only public names; tests/jacobians/test_memory_accounting.py checks the two
#: agree). :attr:`Census.kept_bytes` counts them: :mod:`jacobians.memory` charges them to
#: every reverse sweep's recording.
KEPT_CONSTANT_BYTES = 1 << 20

def _array_index(idx):
    """Whether a ``getitem`` index holds an integer array (a gather, not a slice)."""
    parts = idx if idx.__class__ is tuple else (idx,)
    return any(isinstance(i, np.ndarray) and i.dtype.kind in "iu" for i in parts)


class Census:
    """Operation counts of one evaluation of ``f`` (see :func:`census`)."""

    def __init__(self):
        self.n_ops = 0          # primitives applied to traced values (what a sweep visits)
        self.elements = 0       # Σ sizes of their values
        self.flops = 0.0        # Σ arithmetic estimates
        self.blas_flops = 0.0   # the part of it in products (matmul, einsum)
        self.pairs = 0          # Σ index spaces of products (what their patterns enumerate)
        self.by_prim = {}       # name -> calls
        self.t_plain = None     # seconds of one plain call of f
        self.flow = None        # seeded.SeedFlow of a census run (None: counted elsewhere)
        self.const_bytes = 0    # bytes of the distinct plain arrays f's primitives read
        self.kept_bytes = 0     # the part of it a reverse recording copies (KEPT_CONSTANT_BYTES)
        self.gathers = 0        # selections by an integer array (x[idx]): jacobians.gathers
        self.live = 0           # elements of the values alive now (while the census runs)
        self.peak_live = 0      # the most alive at once: what a forward sweep holds
        self.largest = 0        # elements of the largest single value

    def count(self, prim, primals, ans, params):
        """Count one call of ``prim`` on traced values (``ans``: its value or values);
        returns its arithmetic estimate."""
        self.n_ops += 1
        name = prim.name
        by_prim = self.by_prim
        by_prim[name] = by_prim.get(name, 0) + 1
        if name == "gather" or name == "getitem" and _array_index(params.get("idx")):
            self.gathers += 1
        out = sum(_size(a) for a in ans) if isinstance(ans, (tuple, list)) else _size(ans)
        self.elements += out
        w = flops(prim, primals, ans, params, out)
        self.flops += w
        if name == "matmul" or name == "einsum":
            self.blas_flops += w
            joint = w / 2 if prim.name == "matmul" else w / max(1, len(primals) - 1)
            if joint <= JOINT_LIMIT:
                self.pairs += int(joint)
        return w

    def bytes_per_direction(self, itemsize=8):
        return max(1, self.elements) * itemsize

    def chunk_size(self, max_memory, itemsize=8):
        """Directions per sweep that keep one sweep's tangents within ``max_memory``."""
        return max(1, int(max_memory // self.bytes_per_direction(itemsize)))

    def __repr__(self):
        return (f"Census({self.n_ops} primitives, {self.elements} elements, "
                f"{self.flops:.3g} flops)")


class _CensusTrace(Trace):
    __slots__ = ("census", "flow", "consts")

    def __init__(self):
        super().__init__()
        self.census = Census()
        self.flow = self.census.flow = SeedFlow()
        self.consts = {}        # id -> a plain array operand (kept: its id stays its own)

    def process(self, prim, args, params):
        primals, ins, traced, consts = [], [], [], False
        for i, a in enumerate(args):
            if a.__class__ is _Counted and a._trace is self:
                primals.append(a.primal)
                ins.append(a.vid)
                traced.append(i)
            else:
                primals.append(a)
                consts = consts or a.__class__ is np.ndarray
        ans = prim(*primals, **params)
        if prim.zero_derivative:
            return ans
        w = self.census.count(prim, primals, ans, params)
        if consts:
            for a in args:
                if a.__class__ is np.ndarray and id(a) not in self.consts:
                    self.consts[id(a)] = a
                    self.census.const_bytes += a.nbytes
                    if 0 < a.nbytes <= KEPT_CONSTANT_BYTES and not a.dtype.hasobject:
                        self.census.kept_bytes += a.nbytes
        if isinstance(ans, (tuple, list)):
            vids = self.flow.op(prim, ins, primals, traced, [shape_of(a) for a in ans], w)
            return type(ans)(self._made(a, v) for a, v in zip(ans, vids))
        return self._made(ans, self.flow.op(prim, ins, primals, traced, (shape_of(ans),), w)[0])

    def _made(self, primal, vid):
        """A new traced value, counted alive until its box is collected."""
        size = _size(primal)
        c = self.census
        c.live += size
        if c.live > c.peak_live:
            c.peak_live = c.live
        if size > c.largest:
            c.largest = size
        return _Counted(self, primal, vid, size)


def census(problem):
    """Run ``problem``'s function once through the counting interpreter, timed by a
    :class:`Stopwatch` (its time stands for the plain call's: see the module docstring).
    Returns the :class:`Census` and the (plain) output."""
    trace = _CensusTrace()
    leaves = [_Counted(trace, x, trace.flow.leaf(shape_of(x))) for x in problem.leaves]
    before = _interruptions()
    watch = Stopwatch()
    try:
        out = problem.fun(*problem.rebuild_inputs(leaves))
    finally:
        trace.alive = False
    c = trace.census
    c.t_plain = watch.seconds()
    if _interruptions() != before:     # timed across a full collection or an import
        c.t_plain = min(c.t_plain, c.n_ops * O_CENSUS + work_per_direction(c))
    o_leaves, rebuild = flatten(out)
    trace.flow.outputs = [o.vid for o in o_leaves if isinstance(o, _Counted) and o._trace is trace]
    out = rebuild([o.primal if isinstance(o, _Counted) else o for o in o_leaves])
    return trace.census, out


def _interruptions():
    """What, besides ``f``'s own work, can charge a call milliseconds of CPU time: the
    number of full (oldest-generation) garbage collections so far and of modules
    imported. Read only: the collector and the import system are left as they are."""
    return gc.get_stats()[-1]["collections"], len(sys.modules)


def model(c, n_dirs, chunk, mode, onehot=False, replayed=False):
    """Modelled seconds for ``n_dirs`` directions in chunks of ``chunk`` (see module doc);
    ``onehot``: the sweeps are seeded one-hot (a dense Jacobian's), so a direction costs
    :func:`seeded_work`, not the census' whole arithmetic. ``replayed``: the sweeps run as
    ``dualad.jit`` programs: the per-primitive costs ``O_*`` scaled by :data:`O_REPLAY`, no
    checksums of constants, and a sweep's own evaluation of ``f`` is its arithmetic (the
    census' measured call is the interpreter's)."""
    if n_dirs == 0:
        return 0.0
    sweeps = math.ceil(n_dirs / max(1, chunk))
    overhead = O_REPLAY if replayed else 1.0
    t_f = work_per_direction(c) + c.n_ops * O_JVP * overhead if replayed else \
        (c.t_plain or 0.0)
    work = seeded_work(c, mode) if onehot else work_per_direction(c)
    if mode == "forward":
        return sweeps * (c.n_ops * O_JVP * overhead + t_f) + n_dirs * work
    checks = 0.0 if replayed else (1 + sweeps) * getattr(c, "const_bytes", 0) * BYTE_CHECK
    return (c.n_ops * O_REC * overhead + t_f) + sweeps * c.n_ops * O_VJP * overhead + \
        n_dirs * work * RHO + checks


def work_per_direction(c):
    """Seconds of tangent arithmetic per direction: products at BLAS speed, the rest at
    :data:`TAU` a flop."""
    blas = getattr(c, "blas_flops", 0.0)
    return (c.flops - blas) * TAU + blas * TAU_BLAS


def seeded_work(c, mode):
    """Seconds of tangent (``mode="forward"``) or cotangent (``"reverse"``) arithmetic per
    direction of a sweep seeded one-hot (:mod:`jacobians.seeded`); a census counted
    without the flow (during a pattern detection) gives :func:`work_per_direction`."""
    flow = getattr(c, "flow", None)
    if flow is None:
        return work_per_direction(c)
    fwd, rev = flow.work(TAU, TAU_BLAS)
    return fwd if mode == "forward" else rev


def model_hessian(c, n_dirs, chunk):
    """Modelled seconds of ``n_dirs`` Hessian-vector products by forward-over-reverse in
    chunks of ``chunk``: per sweep a tape of f and its backward sweep, both carried forward
    (each primitive's JVP twice), and per direction ~ (2 + ρ) times f's work."""
    if n_dirs == 0:
        return 0.0
    sweeps = math.ceil(n_dirs / max(1, chunk))
    t_f = c.t_plain or 0.0
    per_sweep = c.n_ops * (O_REC + O_VJP + 2 * O_JVP) + 2 * t_f
    return sweeps * per_sweep + n_dirs * work_per_direction(c) * (2 + RHO)


def model_detection(c, hessian=False):
    """Modelled seconds of one sparsity detection (see the module docstring)."""
    t = (c.t_plain or 0.0) + c.n_ops * O_PAT + c.elements * PAT_ELEMENT + \
        getattr(c, "pairs", 0) * PAT_PAIR
    return t * HESSIAN_PATTERN if hessian else t


def worth_detecting(c, dense_seconds, hessian=False):
    """``(yes, why)``: is a sparsity detection worth its cost against ``dense_seconds``,
    the cheaper dense estimate? (the thresholds of the module docstring)."""
    det = model_detection(c, hessian)
    if dense_seconds < DETECT_MIN_SECONDS:
        return False, (f"the dense result is modelled at {_fmt(dense_seconds)}, under "
                       f"{_fmt(DETECT_MIN_SECONDS)}: trivially cheap, no pattern detected")
    if dense_seconds < DETECT_RATIO * det:
        return False, (f"a pattern detection (modelled {_fmt(det)}) would cost more than "
                       f"1/{DETECT_RATIO:g} of the dense result (modelled "
                       f"{_fmt(dense_seconds)})")
    return True, (f"the dense result is modelled at {_fmt(dense_seconds)}, at least "
                  f"{DETECT_RATIO:g}x a pattern detection (modelled {_fmt(det)})")


def detection_bytes(c, n):
    """An upper bound of the index sets a pattern detection of ``f`` holds: every value's
    elements (``c.elements``), each with at most ``min(n, DETECT_ENTRIES)`` int64 indices
    before the detection calls the pattern dense, and a CSR row pointer per element."""
    return 8 * max(1, int(c.elements)) * (min(int(n), DETECT_ENTRIES) + 1)


def detection_budget(c, max_memory):
    """The entries any one pattern may hold in an auto-mode detection: DETECT_ENTRIES per
    element of ``f``'s values (a Jacobian denser than that cannot pay for compression;
    stopping early bounds what the detection costs), within ``max_memory / 16``."""
    return int(min(max(100_000, DETECT_ENTRIES * c.elements), max(1_000_000, max_memory // 16)))


def pick(seconds, current=None, margin=1.0):
    """The alternative to use, from ``seconds`` (alternative -> estimated or measured
    seconds; ``None`` or ``inf`` for one that cannot run): ``(name, ratio)``, ``ratio``
    the runner-up's seconds over the winner's (``inf`` when it is the only one).

    The one decision rule of the planner, for modelled, timed or measured numbers alike:
    a prepared plan that times its own sweeps (eager or replayed by ``dualad.jit``, whose
    forward/reverse ratio differs from the eager one) calls it again with those. With
    ``current``, the current choice is kept unless another is at least ``margin`` times
    cheaper, so noisy measurements do not flip a plan back and forth.

    Examples
    --------
    >>> from dualad.jacobians.cost import pick
    >>> pick({"forward": 2e-3, "reverse": 3e-3})
    ('forward', 1.5)
    >>> pick({"forward": 2e-3, "reverse": 1.9e-3}, current="forward", margin=1.1)
    ('forward', 0.95)
    """
    ok = {a: s for a, s in seconds.items() if s is not None and math.isfinite(s)}
    if not ok:
        raise ValueError("pick: no alternative has a finite cost")
    best = min(ok, key=ok.get)
    if current in ok and ok[current] <= margin * ok[best]:
        best = current
    others = [s for a, s in ok.items() if a != best]
    ratio = min(others) / max(ok[best], 1e-12) if others else math.inf
    return best, ratio


def _fmt(seconds):
    if seconds is None or not math.isfinite(seconds):
        return "-"
    return f"{seconds * 1e6:.0f} us" if seconds < 1e-3 else \
        (f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s")


def best_of(fn, repeat=2):
    """The least time of ``repeat`` calls of ``fn()`` (each read by a :class:`Stopwatch`),
    in seconds: the call's cost with the least interference from the rest of the
    machine."""
    best = math.inf
    for _ in range(repeat):
        watch = Stopwatch()
        fn()
        best = min(best, watch.seconds())
    return best


def time_jvp(problem, dirs, repeat=TIME_REPEAT, onehot=False):
    """Seconds of one batched JVP of ``problem`` with ``dirs`` directions (best of
    ``repeat``). ``onehot``: rows of the identity kept one-hot, as a dense Jacobian seeds
    its sweeps (:mod:`dualad.core.onehot`: cheaper than general directions); otherwise random
    directions, as compressed (sparse) sweeps have."""
    import dualad
    dtype = problem.dtype if problem.dtype.kind == "f" else np.dtype(float)
    if onehot:
        seeds = problem.onehot_tangent_seeds(0, dirs, dtype)
    else:
        rng = np.random.default_rng(0)
        seeds = problem.tangent_seeds(rng.standard_normal((dirs, problem.n)).astype(dtype))
    return best_of(lambda: dualad.jvp(problem.fun, problem.primals(), seeds), repeat)


def time_vjp(problem, dirs_list, repeat=TIME_REPEAT, onehot=False):
    """Seconds of recording one tape, and of one batched pullback for each batch size
    in ``dirs_list`` (best of ``repeat``); ``onehot`` as in :func:`time_jvp`, for all of
    them or (a sequence) for each."""
    import dualad
    rng = np.random.default_rng(0)
    dtype = problem.dtype if problem.dtype.kind == "f" else np.dtype(float)
    holder = {}

    def record():
        holder["pb"] = dualad.vjp(problem.fun, *problem.primals())[1]
    t_record = best_of(record, repeat)
    pulls = []
    kinds = onehot if isinstance(onehot, (list, tuple)) else [onehot] * len(dirs_list)
    for dirs, onehot in zip(dirs_list, kinds):
        if onehot:
            cts = problem.onehot_cotangent_seeds(0, dirs, dtype)
        else:
            cts = problem.cotangent_seeds(rng.standard_normal((dirs, problem.m)).astype(dtype))
        pulls.append(best_of(lambda: holder["pb"](cts), repeat))
    return t_record, pulls

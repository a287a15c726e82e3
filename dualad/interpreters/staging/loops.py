"""Loop rolling: a body repeated in a recorded program, compiled once as a Python loop.

A trace records a Python ``for`` over time steps as the step's equations N times (and
the reverse sweep of ``grad`` as the step's adjoint N times). Generating and compiling
N copies costs time linear in N with a large constant (the passes, Python's
``compile``), while the copies differ only in which variables they read. This module
finds such runs and replaces each by ONE loop equation whose body, a sub-program, is
compiled once (:func:`compile_rolled`); the driver is a Python ``for`` calling it.

A run is ``n >= 2`` consecutive blocks of ``P`` items (equations and guards) with the
same structural key item by item (primitive, parameters, the inputs' types, shapes and
dtypes; a guard's kind and expected value), found from the periodicity of the keys
(linear: a histogram of the distances between equal keys gives the candidate periods).
The keys only propose; every input of every item of every block is then checked
(:func:`_classify`): it must read, in every block, the same kind of thing:

- a value the same block computed at the same position (``local``);
- a value the previous block computed at one position (``carry``; block 0 reads its
  initial value, any atom from before the run);
- one variable from before the run, the same in every block (``invariant``);
- a constant equal in every block (bitwise: ``-0.0`` is not ``0.0``), or a constant
  of the same type, shape and dtype in every block (a per-block constant: the loop
  reads its ``k``-th entry of a list);
- a variable from before the run, another per block (the loop reads it from a list:
  an earlier rolled loop's per-block outputs, read forward or backward, or the values
  packed into one list).

Anything else (a value two blocks back, a parameter that changes per block) ends the
run at that block; a run left with fewer than 2 blocks stays unrolled. An item whose
inputs are all invariant computes the same value in every block: it is computed once,
before the loop (as the unrolled program's common subexpressions did). Guards stay in
the body: a failed guard makes the driver return and the program return RETRACE.

Each block runs the same primitives on the same values as the unrolled program, so the
rolled program's results are bitwise the unrolled one's. The program kept for
``jitted.program()`` and for calls under a transformation is the unrolled one.
"""
from __future__ import annotations

import numpy as np

from .codegen import compile_program
from .loopbuild import _Builder
from .program import Eqn, Guard
from .trace import _aval

__all__ = ["roll", "compile_rolled", "MIN_ROLLED", "MIN_BODY"]

# Roll a run only when it covers at least this many items, with a body of at least
# MIN_BODY items: a short run costs more as a loop (one call per block) than unrolled.
MIN_ROLLED = 256
MIN_BODY = 8
# Candidate periods tried (the most frequent distances between equal keys).
_CANDIDATES = 32
# Shrinkings of one proposed run before it is left unrolled.
_RETRIES = 8


def _fkey(v):
    """A value as a hashable key that tells apart what ``==`` does not (``-0.0``, NaN,
    ``1`` and ``True``)."""
    c = v.__class__
    if c is int:
        return v
    if c is tuple:
        if all(x.__class__ is int for x in v):
            return v
        return (tuple, tuple([_fkey(x) for x in v]))
    if c is slice:
        return (slice, _fkey(v.start), _fkey(v.stop), _fkey(v.step))
    if c is float or c is complex or isinstance(v, (np.floating, np.complexfloating)):
        return (c, repr(v))
    if v is None or c is bool or c is str or isinstance(v, (np.integer, np.bool_)):
        return (c, v)
    return ("id", id(v))   # arrays, functions, dtypes: by identity


def _params_key(params):
    return tuple([(k, _fkey(v)) for k, v in params.items()]) if params else ()


def _item_keys(body, avals):
    """One int per item: equal ints for equal structural keys (primitive, parameters, the
    inputs' types, shapes and dtypes; a guard's kind and expected value)."""
    aval_ids = {}
    vid = {v: aval_ids.setdefault(av, len(aval_ids)) for v, av in avals.items()}
    const_ids = {}
    param_ids = {}   # id(params) -> its key: a trace records one dict per distinct value
    ids = {}
    out = []
    for it in body:
        if it.__class__ is Guard:
            key = ("g", it.kind, _fkey(it.expected), vid[it.var])
        else:
            sig = []
            for a in it.ins:
                if a.__class__ is int:
                    sig.append(vid[a])
                else:
                    c = const_ids.get(id(a))
                    if c is None:
                        c = const_ids[id(a)] = ("c", _aval(a.value))
                    sig.append(c)
            params = it.params
            if params:
                pk = param_ids.get(id(params))   # (the body keeps the dicts alive)
                if pk is None:
                    pk = param_ids[id(params)] = _params_key(params)
            else:
                pk = ()
            key = (id(it.prim), pk, tuple(sig))
        out.append(ids.setdefault(key, len(ids)))
    return out


def _slots(item):
    return (item.var,) if item.__class__ is Guard else item.ins


def _periods(h, deep=1):
    """The most frequent distances between equal keys (at least MIN_BODY); ``deep > 1``:
    also between a key and its 2nd, ... ``deep``-th next occurrence (a key met several
    times per block)."""
    order = np.argsort(h, kind="stable")
    d = np.concatenate([(order[k:] - order[:-k])[h[order[k:]] == h[order[:-k]]]
                        for k in range(1, min(deep, len(h) - 1) + 1)] or [order[:0]])
    if not d.size:
        return []
    small = d < MIN_BODY   # a short period: blocks of several periods (unrolled by m)
    d[small] *= -(-MIN_BODY // d[small])
    counts = np.bincount(d)
    top = np.argsort(counts, kind="stable")[::-1][:_CANDIDATES]
    return [int(p) for p in top if counts[p] >= 2]


def _stretches(h, p, min_rolled):
    """``(start, blocks)`` of the maximal runs of period ``p`` in ``h``."""
    m = np.concatenate(([False], h[:-p] == h[p:], [False]))
    edges = np.flatnonzero(m[1:] != m[:-1])
    out = []
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
        blocks = (b - a) // p + 1
        if blocks >= 2 and blocks * p >= min_rolled:
            out.append((a, blocks))
    return out


def _candidates(keys, min_rolled, deep=False):
    """Runs ``(start, period, blocks)`` proposed by the keys, non-overlapping (two
    rounds: the second looks at what the first left)."""
    h = np.array(keys, dtype=np.int64)
    chosen = []
    for _ in range(2):
        runs = []
        for p in _periods(h, 4 if deep else 1):
            runs.extend((blocks * p, -p, a, p, blocks)
                        for a, blocks in _stretches(h, p, min_rolled))
        if not runs:
            break
        runs.sort(reverse=True)
        for _, _, a, p, blocks in runs:
            b = a + blocks * p
            if all(b <= s or a >= s + q * n for s, q, n in chosen):
                chosen.append((a, p, blocks))
        for a, p, blocks in chosen:   # covered: keys that match nothing
            h[a:a + p * blocks] = -np.arange(1, p * blocks + 1) - a
    chosen.sort()
    return chosen


class _Run:
    """One classified run: ``start``, ``period``, ``blocks`` and per template slot
    ``(position, slot index) -> class`` (see :func:`_classify`)."""

    __slots__ = ("start", "period", "blocks", "slots", "hoisted", "single", "list_use",
                 "xs", "xs_key", "carries", "lists_var")

    def __init__(self, start, period, blocks):
        self.start, self.period, self.blocks = start, period, blocks
        self.slots = {}


# Array constants up to this many bytes are compared by content (their bytes, so -0.0 is
# not 0.0), larger ones by identity: equal masks and seeds made afresh in every block
# (the reverse sweep makes one per step) then stay one constant of the body.
_CONTENT_BYTES = 1 << 16


def _const_key(v):
    if _scalar(v):
        return _fkey(v)
    if v.__class__ is np.ndarray and v.nbytes <= _CONTENT_BYTES and not v.dtype.hasobject:
        return ("array", v.shape, v.dtype.str, v.tobytes())
    return ("id", id(v))


def _scalar(v):
    return v.__class__ in (float, int, bool, complex) or isinstance(v, np.generic)


def _join(cl, j, kind, key, atom):
    """Slot ``j``'s class so far (``cl[j]``) joined with this block's ``atom`` of ``kind``
    ("outside": ``key`` the variable; "const": its :func:`_const_key`): False when the kinds
    differ; the key becomes None once it differs between blocks (another variable or
    constant per block, read from a list); the atoms are kept in block order."""
    c = cl[j]
    if c is None:
        cl[j] = [kind, key, [atom]]
        return True
    if c.__class__ is int or c[0] != kind:   # (an int: a local or carry, see _classify)
        return False
    if c[1] != key:
        c[1] = None
    c[2].append(atom)
    return True


def _classify(run, body, pos_of, h):
    """Check every slot of every block; the number of blocks that verify (from block 0),
    and ``run.slots`` filled: ``{(position, slot): class}``, a class being ``["local",
    offset]``, ``["carry", offset, initial atom]``, ``["const", key or None (per block),
    atoms]`` or ``["outside", variable or None (per block), atoms]``. Returns 0 when
    block 0 itself does not fit."""
    s, p, n = run.start, run.period, run.blocks
    get = pos_of.get
    classes = [None] * p
    # block 1 decides each slot's class; blocks 2.. must agree; block 0 is checked last
    for k in range(1, n):
        base = s + k * p
        prev = base - p
        for i in range(p):
            if h[base + i] != h[s + i]:   # (equal ids: equal keys)
                return k
            item = body[base + i]
            ins = (item.var,) if item.__class__ is Guard else item.ins
            cl = classes[i]
            if cl is None:
                cl = classes[i] = [None] * len(ins)
            for j, a in enumerate(ins):
                if a.__class__ is int:
                    q = get(a, -1)
                    if q >= prev:
                        # a local (offset q - base >= 0) or a carry (q - base < 0), as one
                        # int while the blocks are checked: no list per input per block
                        c = cl[j]
                        if c is None:
                            cl[j] = q - base
                        elif c != q - base:
                            return k
                    elif q >= s:
                        return k     # two blocks back or more: not a loop of period p
                    elif not _join(cl, j, "outside", a, a):
                        return k
                elif not _join(cl, j, "const", _const_key(a.value), a):
                    return k
    for cl in classes:
        for j, c in enumerate(cl):
            if c.__class__ is int:
                cl[j] = ["local", c] if c >= 0 else ["carry", c + p]
    # block 0: locals at the same offsets; a carry's initial value from before the run;
    # an invariant the same variable; constants of the same class
    slots = {}
    for i in range(p):
        item = body[s + i]
        for j, a in enumerate(_slots(item)):
            cls = classes[i][j]
            slots[(i, j)] = cls
            kind = cls[0]
            if kind == "local":
                if a.__class__ is not int or get(a, -1) != s + cls[1]:
                    return 0
            elif kind == "carry":
                if a.__class__ is int and get(a, -1) >= s:
                    return 0
                cls.append(a)                       # [carry, offset, init]
            elif kind == "const":
                if a.__class__ is int:
                    return 0
                if cls[1] is not None and cls[1] != _const_key(a.value):
                    cls[1] = None
                cls[2].insert(0, a)
            else:   # outside
                if a.__class__ is not int or get(a, -1) >= s:
                    return 0
                if cls[1] is not None and cls[1] != a:
                    cls[1] = None
                cls[2].insert(0, a)
    run.slots = slots
    return n


def _verified(run, body, pos_of, h, min_rolled):
    """``(run, rest)``: the run shrunk to the blocks that verify (None if fewer than 2),
    and the blocks after the first block that did not, to try on their own (or None)."""
    rest = None
    for _ in range(_RETRIES):   # (bounded: each try is linear in the run's length)
        if run.blocks < 2 or run.blocks * run.period < min_rolled:
            return None, rest
        good = _classify(run, body, pos_of, h)
        if good == run.blocks:
            return run, rest
        if good == 0:   # block 0 does not fit: start one block later
            run = _Run(run.start + run.period, run.period, run.blocks - 1)
        else:
            if rest is None:
                rest = (run.start + good * run.period, run.period, run.blocks - good)
            run = _Run(run.start, run.period, good)
    return None, rest


def roll(prog, compile_body=None, min_rolled=None):
    """``(program, bodies)``: ``prog`` with its repeated runs replaced by loop equations
    (see the module docstring), and the loop bodies' ``(name, source)``. ``prog``
    itself when nothing is rolled. ``compile_body(sub_program, name) -> (function,
    source)`` compiles a body (default :func:`compile_rolled`); ``min_rolled``: the
    fewest items a run must cover (the Numba backend rolls shorter runs: its compile time
    grows with the program's length, much faster than Python's)."""
    body = prog.body
    deep = min_rolled is not None   # (a caller's threshold: also the deeper search)
    min_rolled = MIN_ROLLED if min_rolled is None else min_rolled
    if len(body) < min_rolled:
        return prog, []
    avals = prog.avals
    h = _item_keys(body, avals)
    cands = _candidates(h, min_rolled, deep)
    if not cands:
        return prog, []
    pos_of = {it.out: q for q, it in enumerate(body) if it.__class__ is Eqn}
    runs = []
    todo = list(reversed(cands))
    while todo:
        a, p, blocks = todo.pop()
        if runs and a < runs[-1].start + runs[-1].period * runs[-1].blocks:
            continue
        run, rest = _verified(_Run(a, p, blocks), body, pos_of, h, min_rolled)
        if run is not None:
            runs.append(run)
        if rest is not None and (not todo or rest[0] + rest[1] * rest[2] <= todo[-1][0]):
            todo.append(rest)
    if not runs:
        return prog, []
    return _Builder(prog, runs, pos_of, compile_body or compile_rolled).build()


def compile_rolled(prog, name="replay"):
    """``(function, source)`` as :func:`~dualad.interpreters.staging.codegen.compile_program`, with the
    repeated runs of ``prog`` rolled into loops (the loop bodies' sources appended)."""
    rolled, bodies = roll(prog)
    fn, source = compile_program(rolled, name=name)
    for body_name, body_source in bodies:
        source += f"\n# {body_name}: the body of a rolled loop (see dualad.interpreters.staging.loops)\n" + \
            body_source
    return fn, source

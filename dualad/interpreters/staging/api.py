"""``dualad.jit``: trace a function once per input signature, replay the program after.

The first call with a given signature (the arguments' structure, each array's shape and
dtype, the values of static arguments) runs ``f`` under a :class:`JitTrace`, which
records a straight-line program of registry primitives with a guard for every fact
Python control flow took from a traced value; the program is compiled to Python source
(:mod:`dualad.interpreters.staging.codegen`). Later calls with that signature run the compiled program.
A failed guard means ``f`` would take another path: the call traces again and keeps
both programs (up to ``max_traces``; past that ``f`` runs without jit for that signature,
with a warning naming the guard that kept failing). A replay is never a stale program.

Called with traced values (inside ``grad``, ``jvp``, ``vmap``, the planner, another
``jit``), the program is run through the primitives (:mod:`dualad.interpreters.staging.replay`), so every
transformation composes with jit in either order.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import time
import traceback
import warnings
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypeVar, overload

import numpy as np

from ...core.tracer import Box, CONCRETE
from ...core import tree
from ...frontend.objects import traced_outputs
from .codegen import RETRACE
from .loops import compile_rolled
from . import numba_tier
from .program import Const, Program
from .replay import fresh, run as replay_run
from .transformed import applies, example, transformed
from .assumed import Assumed
from .signature import (_fast_key, _identity_statics, _leaf_key, _leaf_where, _positional,
                        _static, _structure, _traced_positional)
from .sharing import SharedNodeWritten
from .trace import ClosesOverTraced, JitBox, JitTrace, peek
from . import tracelog

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

# Jitted[P, R]: called with the function's parameters, it returns the function's result.
_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = ["jit", "Jitted", "JitRetraceWarning"]   # the public names (Compiled, MAX_SIGNATURES: internal)

CONCRETE.add(JitBox)

_PACKAGE = os.path.dirname(os.path.abspath(sys.modules["dualad"].__file__)) + os.sep  # the package root

# Signatures (shapes, dtypes, static values) one jitted function keeps programs for; past
# this the oldest is dropped (a function called with ever new shapes does not grow memory).
MAX_SIGNATURES = 64


class JitRetraceWarning(UserWarning):
    """A jitted function kept failing its guards and now runs without jit for that signature.

    A program recorded by :func:`dualad.jit` holds a guard for every fact Python
    control flow took from a traced value (``if x > 0``). When the guards fail again
    and again for one signature (more than ``max_traces`` traces), the function runs
    as plain Python for that signature from then on: still correct, no longer
    compiled. The message names the guards and the lines that asked. Write
    value-dependent branches as selections (``np.where``, ``np.maximum``), pass the
    values that choose the path as static arguments, or raise ``max_traces``.
    """


class Compiled:
    """One program for one signature: the compiled replay, its source, the program, and
    the output structure. Under the Numba backend also its ``tier`` ("pending", "numba",
    "kernels", "numpy": :mod:`dualad.interpreters.staging.numba_tier`) and ``done``, an event set when
    its Numba compilation ended (None for the NumPy backend)."""

    __slots__ = ("fn", "source", "program", "rebuild", "warm", "transformed", "numba",
                 "tier", "done", "job", "reason", "__weakref__")

    def __init__(self, program, rebuild, backend=None, compile="background"):
        self.program = program
        self.numba = self.tier = self.done = self.job = self.reason = None
        if backend == "numba" and compile == "now":
            # the whole program compiled by Numba at the first call, or a fallback
            from .numba_mode import NumbaReplay
            self.numba = NumbaReplay(program)
            self.fn, self.source = self.numba.fn, self.numba.source
            self.tier = "pending"
        else:                    # repeated runs rolled into loops (dualad.interpreters.staging.loops)
            self.fn, self.source = compile_rolled(program, name=program.name)
            if backend == "numba":   # ... until Numba is ready (dualad.interpreters.staging.numba_tier)
                self.tier = "pending"
                self.source = numba_tier.PENDING + self.source
                self.done = threading.Event()
        self.rebuild = rebuild
        self.warm = backend == "numba"
        self.transformed = None   # its primitive under transformations (.transformed)

    def warm_up(self, inputs, expected=None):
        """After the first call (``inputs``, and ``expected``, the traced call's output
        leaves): under ``compile="background"`` queue the Numba compilation
        (:mod:`dualad.interpreters.staging.numba_tier`); under ``compile="now"`` compile here, for the
        operands' exact types and layouts, so no later call pays it (the whole-program
        replay must agree with ``expected``, else it falls back:
        :mod:`dualad.interpreters.staging.numba_mode`)."""
        if self.done is not None:
            numba_tier.submit(self, inputs, expected)
            return
        if self.numba is not None:
            self.fn, self.source = self.numba.first_call(inputs, expected)
            self.tier = numba_tier.MODES[self.numba.mode]
            if self.numba.mode == "whole":
                return    # (first_call ran it)
        try:
            with np.errstate(all="ignore"):
                self.fn(*inputs)
        except Exception:  # noqa: BLE001, S110 - a later call raises it from f's own line
            pass


class _Entry:
    """The programs of one signature, newest first, and how often it was traced."""

    __slots__ = ("programs", "traces", "eager")

    def __init__(self):
        self.programs = []
        self.traces = 0
        self.eager = False


def _holding(entry, inputs):
    """``(compiled, outputs)`` of the newest program of ``entry`` whose assumptions about
    the closure, globals, defaults and reachable containers hold now (see
    :mod:`dualad.interpreters.staging.assumed`) and whose guards hold at ``inputs``; None when none does."""
    # (no copy of the list: a program another thread inserts meanwhile may be skipped or
    # seen twice, and every program run checks its own assumptions and guards)
    programs = entry.programs
    for k, item in enumerate(programs):
        compiled, assumed = item
        if assumed.holds():
            try:
                out = compiled.fn(*inputs)
            except Exception as e:  # noqa: BLE001 - shown from f's own line, see _ReplayRaised
                raise _ReplayRaised(e, compiled) from None
            if out is not RETRACE:
                if k:
                    _to_front(programs, item)
                return compiled, out
    return None


def _to_front(programs, item):
    """The program that held goes first: the next call, likely on the same path (an outer
    solver's next step, the same loop trip count), replays it without first running the
    others up to a failing guard (a nested solve repeated from its start ran every older
    program nearly to its end first). The oldest-used is the one ``max_traces`` drops."""
    try:
        programs.remove(item)
    except ValueError:     # another thread moved it meanwhile
        return
    programs.insert(0, item)


class _ReplayRaised(Exception):
    """A compiled replay raised ``error``. The call runs ``f`` again without jit, so the
    exception the user sees comes from the line of their code that raised it (a frame of
    generated code would point nowhere): see :meth:`Jitted._rerun`."""

    def __init__(self, error, compiled):
        super().__init__(error)
        self.error, self.compiled = error, compiled


def _first(out):
    return out[0]


class Jitted(Generic[_P, _R]):
    """The callable :func:`dualad.jit` returns: a function with its cache of programs.

    Calling it runs the compiled program of the call's signature (the arguments'
    structure, each array's shape and dtype, the static arguments' values), tracing
    ``fun`` first when no program's guards hold. ``source`` and ``program`` show
    what was recorded; ``cache_info`` and ``clear_cache`` inspect and reset the
    cache. Made by :func:`dualad.jit`, which documents the arguments.

    Parameters
    ----------
    fun : callable
        The function to trace and replay.
    static_argnums : int or tuple of int, default ()
        Positional arguments that are part of the cache key instead of traced.
    static_argnames : str or tuple of str, default ()
        Keyword arguments that are part of the cache key instead of traced.
    max_traces : int, default 8
        Programs kept per signature; past that many traces the function runs
        without jit for that signature (with a :class:`dualad.JitRetraceWarning`).
    backend : {None, "numpy", "numba"}, default None
        The code generator: NumPy calls, or the program compiled with Numba.
    compile : {"background", "now"}, default "background"
        When the Numba backend compiles: on a background thread while the NumPy
        backend's program runs, or at the first call.

    See Also
    --------
    dualad.jit : The decorator that makes it.

    Examples
    --------
    >>> square = dualad.jit(lambda x: x * x)
    >>> print(square(np.array([1.0, 2.0])))
    [1. 4.]
    >>> list(square.cache_info().values())   # one signature, traced once
    [1]
    >>> square.clear_cache()
    >>> square.cache_info()
    {}
    """

    name: str
    backend: str | None
    compile: str
    fun: Callable[_P, _R]
    static_argnums: frozenset[int]
    static_argnames: frozenset[str]
    max_traces: int

    def __init__(self, fun: Callable[_P, _R], static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), max_traces: int = 8,
                 backend: Literal["numpy", "numba"] | None = None,
                 compile: Literal["background", "now"] = "background") -> None:
        if not callable(fun):
            raise TypeError(f"dualad.jit: expected a function, got {type(fun).__name__!r}")
        self.name = getattr(fun, "__name__", type(fun).__name__)
        self.backend = _backend(backend, self.name)
        self.compile = _when(compile, self.name)
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.fun = fun
        self.static_argnums = frozenset(static_argnums)
        self.static_argnames = frozenset(static_argnames)
        self.max_traces = int(max_traces)
        self._cache = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, fun, updated=())

    # -- signature ---------------------------------------------------------------------
    def _split(self, args, kwargs):
        """``(key, dynamic leaves, traced flags, rebuild(leaves) -> (args, kwargs), any
        boxed)``."""
        if not kwargs and not self.static_argnums:
            key = _fast_key(args)
            if key is not None:
                return key, list(args), [True] * len(args), _positional, False
        statics = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                statics.append((i, _static(a, f"static argument {i} of {self.name}")))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self.static_argnames:
                statics.append((k, _static(v, f"static argument {k!r} of {self.name}")))
            else:
                dyn_kwargs[k] = v
        leaves, rebuild_tree = tree.flatten((dyn_args, dyn_kwargs))
        keys = []
        traced = []
        boxed = False
        for j, x in enumerate(leaves):
            try:
                k, t = _leaf_key(x, "")
            except TypeError:   # again, naming the leaf by its path: argument 0.w
                _leaf_key(x, _leaf_where(self.name, args, self.static_argnums, dyn_kwargs, j))
                raise
            if k is None:
                boxed = True
            keys.append(k)
            traced.append(t)
        structure = _structure(rebuild_tree, self.name)
        key = (structure, tuple(keys), tuple(statics))
        n = len(args)

        def rebuild(new_leaves):
            new_args, new_kwargs = rebuild_tree(new_leaves)
            it = iter(new_args)
            full = [args[i] if i in self.static_argnums else next(it) for i in range(n)]
            new_kwargs.update({k: kwargs[k] for k in kwargs if k in self.static_argnames})
            return full, new_kwargs
        return key, leaves, traced, rebuild, boxed

    # -- calling -----------------------------------------------------------------------
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        key = None if kwargs or self.static_argnums else _fast_key(args)
        if key is not None:   # positional arrays and floats only: the common case, fast
            entry = self._cache.get(key)
            if entry is not None and not entry.eager:
                try:
                    hit = _holding(entry, args)
                except _ReplayRaised as r:
                    return self._rerun(r, args, kwargs)
                if hit is not None:
                    return hit[0].rebuild(hit[1])
                # every program failed its guards (or assumed another closure): trace,
                # without running them all again on the general path below
                _, leaves, traced, rebuild, _ = self._split(args, kwargs)
                return self._trace_call(key, leaves, traced, rebuild)
        elif not kwargs and not self.static_argnums and _traced_positional(args):
            # positional arrays, floats and traced values (grad(jit(f))): no flattening
            return self._call_traced(None, list(args), [True] * len(args), _positional)
        key, leaves, traced, rebuild, boxed = self._split(args, kwargs)
        if boxed:
            return self._call_traced(key, leaves, traced, rebuild)
        entry = self._cache.get(key)
        if entry is not None:
            if entry.eager:
                a, k = rebuild(leaves)
                return self.fun(*a, **k)
            try:
                hit = _holding(entry, [x for x, t in zip(leaves, traced) if t])
            except _ReplayRaised as r:
                return self._rerun(r, args, kwargs)
            if hit is not None:
                return hit[0].rebuild(hit[1])
        return self._trace_call(key, leaves, traced, rebuild)

    def _rerun(self, raised, args, kwargs):
        """The compiled replay raised (``raised.error``): run ``f`` itself, so the exception
        comes from the user's own line (a frame of generated code names no line of theirs),
        with a note saying so. ``f``'s side effects happen, as in any call without jit."""
        try:
            out = self.fun(*args, **kwargs)
        except Exception as e:
            if e.__context__ is raised:   # ours, not f's: no "during handling of ..."
                e.__context__ = None
            e.add_note(_rerun_note(self.name, raised.error, e))
            raise
        return out   # f did not raise: its value is the answer

    def _trace_call(self, key, leaves, traced, rebuild):
        """Trace ``f`` at these arguments, keep the program, return its results."""
        with self._lock:
            entry = self._cache.get(key)
            if entry is None:
                if len(self._cache) >= MAX_SIGNATURES:   # bounded: the oldest goes
                    del self._cache[next(iter(self._cache))]
                entry = self._cache[key] = _Entry()
            entry.traces += 1
            thrashing = entry.traces > self.max_traces
        if thrashing:
            self._give_up(entry)
            a, k = rebuild(leaves)
            return self.fun(*a, **k)
        tracelog.traced(self.name, entry, leaves, traced)
        try:
            compiled, out_values = self._trace(leaves, traced, rebuild)
            if compiled.warm:
                compiled.warm_up([x for x, t in zip(leaves, traced) if t], out_values)
            # what the program assumed, as the trace left it (a counter f increments
            # while traced is not a change): checked before every replay
            assumed = Assumed.of(self.fun, self.name, _identity_statics(key))
        except ClosesOverTraced:
            self._untrace(key, entry)
            tracelog.runs_eagerly(self.name, "it closes over a traced value (this call)")
            a, k = rebuild(leaves)
            return self.fun(*a, **k)
        except BaseException:
            self._untrace(key, entry)   # f raised: no program, and no count toward thrashing
            raise
        with self._lock:
            entry.programs.insert(0, (compiled, assumed))
            del entry.programs[self.max_traces:]
        return compiled.rebuild(out_values)

    def _untrace(self, key, entry):
        with self._lock:
            entry.traces -= 1
            if not entry.traces and not entry.programs and self._cache.get(key) is entry:
                del self._cache[key]

    def _trace(self, leaves, traced, rebuild):
        try:
            return self._trace_once(leaves, traced, rebuild, True)
        except SharedNodeWritten:   # an in-place write on a tape: trace without sharing
            return self._trace_once(leaves, traced, rebuild, False)

    def _trace_once(self, leaves, traced, rebuild, shares):
        trace = JitTrace(shares)
        boxes = [trace.input(x) if t else x for x, t in zip(leaves, traced)]
        a, k = rebuild(boxes)
        invars = [b.var for b in boxes if b.__class__ is JitBox]
        try:
            out = traced_outputs(self.fun(*a, **k))   # np.array([x, y]): one traced array
            self._check_unwritten(boxes, invars)
        finally:
            trace.stop()
        out_leaves, out_rebuild = tree.flatten(out)
        if tree.is_leaf(out) and not hasattr(out, "__dualad_flatten__"):
            out_rebuild = _first   # one leaf: no rebuilding
        out_leaves, out_rebuild = _open_leaves(out_leaves, out_rebuild)   # sparse results
        outvars = []
        values = []
        boxes_of = {}
        for j, y in enumerate(out_leaves):
            if y.__class__ is JitBox and y._trace is trace:
                v = y.var
                if boxes_of.setdefault(v, y) is not y and trace.avals[v][0] is np.ndarray:
                    # two arrays f computed alike, one variable (JitTrace shares): two again
                    w = trace.recompute(v)
                    if w is not None:
                        outvars.append(w)
                        values.append(y.val.copy())
                        continue
                outvars.append(v)
                values.append(y.val)
            elif isinstance(y, Box):
                raise ClosesOverTraced("output")
            elif callable(y) and not isinstance(y, type):
                raise TypeError(
                    f"dualad.jit({self.name}): output leaf {j} is a function "
                    f"({getattr(y, '__qualname__', type(y).__name__)}); a program returns "
                    f"arrays and numbers, and a closure made during the trace (a pullback "
                    f"from vjp, say) would hold that one trace's values. Call it inside the "
                    f"jitted function and return its result")
            else:
                y = _numeric(y)
                outvars.append(Const(y))
                values.append(fresh(y))   # the program keeps y: the caller gets a copy
        prog = Program(invars, trace.body, outvars, trace.avals, self.name).pruned()
        return Compiled(prog, out_rebuild, self.backend, self.compile), tuple(values)

    def _check_unwritten(self, boxes, invars):
        """An argument written in place (``x[i] = v``, ``x += v``) stands for a new value
        (dualad.frontend.inplace) which a replay could not give back to the caller's array."""
        now = [b for b in boxes if b.__class__ is JitBox]
        for j, (b, v) in enumerate(zip(now, invars)):
            if b.var != v:
                raise TypeError(
                    f"dualad.jit({self.name}): traced argument {j} (shape {b.shape}) was "
                    f"written in place (x[idx] = v, x += v, out=x); a replay cannot change the "
                    f"caller's array. Write into a copy (y = x.copy(); y[idx] = v) or "
                    f"functionally (y = x.at[idx].set(v)) and return it")

    def _give_up(self, entry):
        if entry.eager:
            return
        entry.eager = True
        tracelog.gave_up(self.name, entry)
        for c, _ in list(entry.programs):
            numba_tier.cancel(c, "not compiled: the function runs without jit here")
        guards = [g for c, _ in entry.programs for g in c.program.guards]
        where = sorted({g.describe() for g in guards})[:3]
        changed = sorted({w for _, a in entry.programs for w in [a.changed()] if w})[:3]
        also = (f" Between traces, values it read from outside its arguments changed: "
                f"{'; '.join(changed)} (pass values that change between calls as "
                f"arguments).") if changed else ""
        warnings.warn(
            f"dualad.jit({self.name}) traced {entry.traces - 1} times for the same argument "
            f"shapes and dtypes: each replay failed a guard, i.e. the function took another "
            f"path through Python control flow on traced values, or read a traced value "
            f"itself, or something it read outside its arguments changed. Guards recorded: "
            f"{'; '.join(where) or 'none'}.{also} It now runs without "
            f"jit for this signature. Write value-dependent branches as selections "
            f"(np.where, np.maximum), pass values that choose the path as static arguments "
            f"(static_argnums=...), or raise max_traces", JitRetraceWarning, stacklevel=4)

    def _call_traced(self, key, leaves, traced, rebuild):
        """Called with traced values: the program of the primal values' signature applied
        as ONE primitive with compiled rules (:mod:`dualad.interpreters.staging.transformed`), or, under
        an enclosing jit trace and for the programs that module leaves out, run through
        the primitives, so the enclosing transformations see them. The program is chosen
        (and traced, when none holds) at the primal values, with the same checks as a
        plain call: the closure and globals it assumed, then its guards."""
        inputs = [x for x, t in zip(leaves, traced) if t]
        one = applies(inputs)
        primals = [peek(x) if isinstance(x, Box) else x for x in leaves]
        batched = any(p is None for p in primals)
        if batched and one:   # vmap: the program of one example's signature
            primals = [example(x) for x in leaves]
        if all(p is not None for p in primals):
            a, k = rebuild(primals)
            pkey = None if k or self.static_argnums else _fast_key(a)
            if pkey is None:
                pkey = self._split(a, k)[0]
            at = None if batched else [p for p, t in zip(primals, traced) if t]
            for attempt in range(2):
                entry = self._cache.get(pkey)
                if entry is not None and entry.eager:
                    break             # thrashed at this signature: f runs
                programs = [] if entry is None else [
                    c for c, assumed in list(entry.programs) if assumed.holds()]
                for compiled in programs:
                    t = transformed(compiled, Jitted) if one else None
                    if t is not None:
                        try:
                            out = t.bind(inputs, at)
                        except Exception:  # noqa: BLE001 - f raises it from its own line
                            a, k = rebuild(leaves)
                            return self.fun(*a, **k)
                        if out is not RETRACE:
                            return compiled.rebuild(out)
                        if batched:   # a guard under vmap: f itself says what to write
                            break
                        continue
                    if batched:
                        break
                    try:
                        out = replay_run(compiled.program, inputs)
                    except Exception:  # noqa: BLE001 - f raises it again from its own line
                        out = None
                    if out is None:
                        a, k = rebuild(leaves)
                        return self.fun(*a, **k)
                    if out is not RETRACE:
                        return compiled.rebuild(out)
                else:
                    if attempt == 0:
                        self(*a, **k)     # traces the path these primal values take
                    continue
                break
        a, k = rebuild(leaves)
        return self.fun(*a, **k)

    # -- inspection --------------------------------------------------------------------
    def _compiled_for(self, args, kwargs):
        key, leaves, traced, rebuild, boxed = self._split(args, kwargs)
        if boxed:
            raise TypeError(f"{self.name}.source/program: give plain arrays, not traced values")
        entry = self._cache.get(key)
        if entry is not None and not entry.eager:
            try:
                hit = _holding(entry, [x for x, t in zip(leaves, traced) if t])
            except _ReplayRaised as r:   # the program is there; its replay raises here
                return r.compiled
            if hit is not None:
                return hit[0]
        self._trace_call(key, leaves, traced, rebuild)
        entry = self._cache[key]
        if entry.eager or not entry.programs:
            raise RuntimeError(f"dualad.jit({self.name}): no program for these arguments "
                               f"(it runs without jit: see the JitRetraceWarning)")
        return entry.programs[0][0]

    def source(self, *args: _P.args, **kwargs: _P.kwargs) -> str:
        """Return the generated Python source of the program for these arguments.

        The program is traced now if it was not yet; for ``jit(grad(f))`` it is the
        adjoint program written out.

        Parameters
        ----------
        *args : array_like
            Plain arguments, as for a call.
        **kwargs : dict, optional
            Keyword arguments, as for a call.

        Returns
        -------
        str
            The source of the compiled replay function.

        Raises
        ------
        TypeError
            If an argument is a traced value.
        RuntimeError
            If the function runs without jit for this signature.
        """
        return self._compiled_for(args, kwargs).source

    def program(self, *args: _P.args, **kwargs: _P.kwargs) -> Program:
        """Return the recorded program (its equations and guards) for these arguments.

        Parameters
        ----------
        *args : array_like
            Plain arguments, as for a call.
        **kwargs : dict, optional
            Keyword arguments, as for a call.

        Returns
        -------
        dualad.interpreters.staging.program.Program
            The program; its ``str`` lists the equations and guards.

        Raises
        ------
        TypeError
            If an argument is a traced value.
        RuntimeError
            If the function runs without jit for this signature.
        """
        return self._compiled_for(args, kwargs).program

    def clear_cache(self) -> None:
        """Forget every program, so the next call traces again.

        Needed after mutating an array the function closed over and computed from
        at trace time (rebinding a name it reads, or a change inside a list, dict or
        object it can reach, is detected by itself: :mod:`dualad.interpreters.staging.assumed`).
        Numba compilations still queued for the forgotten programs are skipped.
        """
        with self._lock:
            gone = [c for e in self._cache.values() for c, _ in e.programs]
            self._cache.clear()
        for c in gone:
            numba_tier.cancel(c, "not compiled: clear_cache() dropped the program")

    def cache_info(self, tiers: bool = False) -> dict[Hashable, Any]:
        """Return how often the function was traced, per signature, or what replays.

        Parameters
        ----------
        tiers : bool, default False
            Give, instead of the trace counts, each signature's programs' tiers,
            newest first: ``"numpy"`` (the NumPy backend), ``"pending"`` (the Numba
            backend still compiling in the background: the NumPy backend's program
            runs), ``"numba"`` (the whole program compiled by Numba), or
            ``"kernels: <why>"`` / ``"numpy: <why>"`` (the Numba backend's fallbacks,
            and why the whole program is not compiled).

        Returns
        -------
        dict
            ``{signature: number of traces}`` so far, one entry per cached
            signature (structure, shapes, dtypes, static values); with ``tiers``,
            ``{signature: [tier, ...]}``.
        """
        if tiers:
            return {k: [numba_tier.tier_of(c) for c, _ in list(e.programs)]
                    for k, e in list(self._cache.items())}
        return {k: e.traces for k, e in self._cache.items()}

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Block until every program of this function has its final replay.

        The Numba backend compiles on a background thread (``compile="background"``,
        the default) while the NumPy backend's program answers calls. For benchmarks
        and tests: time replays after this returned True. (JAX's ``block_until_ready``
        waits for values; this waits for compilation.)

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most, in all; None waits as long as it takes.

        Returns
        -------
        bool
            True when no compilation of this function's programs is pending (also
            for the NumPy backend, and after a fallback: ``cache_info(tiers=True)``
            and ``source()`` say which), False when ``timeout`` passed first.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        for e in list(self._cache.values()):
            for c, _ in list(e.programs):
                if c.done is None:
                    continue
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not c.done.wait(left):
                    return False
        return True

    # a jitted method: bind like a function
    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<dualad.jit of {self.fun!r}>"

    def _repr_html_(self) -> str:
        """Jupyter's view: each traced signature's program listing and size
        (:mod:`dualad.interpreters.staging.notebook`)."""
        from .notebook import jitted_html
        return jitted_html(self)


def _rerun_note(name, error, raised):
    """The note added to the exception ``f`` raised when run again after its replay raised
    ``error``: where in the user's code (the innermost frame outside dualad)."""
    where = ""
    for frame in reversed(traceback.extract_tb(raised.__traceback__)):
        if not frame.filename.startswith(_PACKAGE) and not frame.filename.startswith("<dualad"):
            where = f" at {frame.filename}:{frame.lineno} in {frame.name}"
            break
    again = "" if type(raised) is type(error) else \
        f" (the replay raised {type(error).__name__}: {error})"
    return (f"dualad.jit({name}): the compiled replay raised; {name} was run again without "
            f"jit to show where: raised{where}{again}")


def _numeric(y):
    """An object array of plain numbers among the outputs (``np.min`` of ``np.array([x,
    0.5])`` whose entries all came out plain) as the numeric array ``f`` gives for plain
    inputs, where NumPy would have built it from numbers in the first place."""
    if isinstance(y, np.ndarray) and y.dtype.hasobject and y.size and all(
            isinstance(e, (int, float, complex, np.number, np.bool_)) for e in y.flat):
        return np.array(y.tolist())
    return y


def _open_leaves(leaves, rebuild):
    """Output leaves that are structured traced values (a traced sparse matrix: objects
    with ``__dualad_flatten__() -> (parts, rebuild)``) opened into their parts, so the
    program returns the parts and the call rebuilds the object from the replayed ones."""
    if not any(hasattr(y, "__dualad_flatten__") for y in leaves):
        return leaves, rebuild
    flat, pieces = [], []
    for y in leaves:
        if hasattr(y, "__dualad_flatten__"):
            parts, part_rebuild = y.__dualad_flatten__()
            pieces.append((len(parts), part_rebuild))
            flat.extend(parts)
        else:
            pieces.append((1, None))
            flat.append(y)

    def rebuild_all(values):
        values, out, k = list(values), [], 0
        for count, part_rebuild in pieces:
            out.append(values[k] if part_rebuild is None else part_rebuild(values[k:k + count]))
            k += count
        return rebuild(out)
    return flat, rebuild_all


def _backend(backend, name):
    """``backend`` checked: None (NumPy) or "numba" (whose import is checked now)."""
    if backend is None or backend == "numpy":
        return None
    if backend == "numba":
        from .numba_backend import require_numba
        require_numba(name)
        return "numba"
    raise ValueError(f"dualad.jit({name}): backend={backend!r} is not one of "
                     f"'numpy' (the default) and 'numba'")


def _when(compile, name):
    """``compile=`` checked: "background" or "now"."""
    if isinstance(compile, str) and compile in ("background", "now"):
        return compile
    raise ValueError(f"dualad.jit({name}): compile={compile!r} is not one of 'background' "
                     f"(the default: the Numba backend compiles on a background thread while "
                     f"the NumPy backend's program answers; jitted.wait_compiled() waits for "
                     f"it) and 'now' (compile at the first call)")


@overload
def jit(fun: Callable[_P, _R], *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), max_traces: int = 8,
        backend: Literal["numpy", "numba"] | None = None,
        compile: Literal["background", "now"] = "background") -> Jitted[_P, _R]: ...
@overload
def jit(fun: None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), max_traces: int = 8,
        backend: Literal["numpy", "numba"] | None = None,
        compile: Literal["background", "now"] = "background"
        ) -> Callable[[Callable[_P, _R]], Jitted[_P, _R]]: ...
def jit(fun: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), max_traces: int = 8,
        backend: Literal["numpy", "numba"] | None = None,
        compile: Literal["background", "now"] = "background"
        ) -> Jitted[..., Any] | Callable[[Callable[..., Any]], Jitted[..., Any]]:
    """Trace ``fun`` once per input signature and replay the compiled program afterwards.

    ``jit(f)(*args)`` equals ``f(*args)``. The first call with a given signature
    (the arguments' structure, each array's shape and dtype, the static
    arguments' values) runs ``f`` on traced values, recording a straight-line
    program of primitives, with a guard for every fact Python control flow took
    from a traced value; the program is compiled to Python source. Later calls
    with that signature run the program, skipping the Python overhead of ``f``
    and of the transformations inside it (``jit(grad(f))`` replays the adjoint
    program). A failed guard traces again; a replay is never a stale program.
    Called with traced values (inside ``grad``, ``vmap``, another ``jit``), the
    program runs through the primitives, so every transformation composes with
    ``jit`` in either order.

    Parameters
    ----------
    fun : callable, optional
        The function. Omitted, ``jit`` returns a decorator, for
        ``@jit(static_argnums=1)``.
    static_argnums : int or tuple of int, default ()
        Positional arguments that are part of the cache key instead of traced
        (they must be hashable): values that choose the path through ``f``.
    static_argnames : str or tuple of str, default ()
        Keyword arguments that are part of the cache key instead of traced.
    max_traces : int, default 8
        Programs kept per signature; past that many traces (guards that keep
        failing) ``f`` runs without jit for that signature, with a
        :class:`dualad.JitRetraceWarning`.
    backend : {None, "numpy", "numba"}, default None
        ``"numba"``: the whole program compiled with Numba as one function
        (``pip install "dualad[numba]"``; repeated blocks as loops), or, for a
        program it cannot compile, groups of three or more elementwise float64
        operations as Numba kernels and the rest NumPy (the reason is at the top
        of ``source()``; docs/jit.md). None or ``"numpy"``: NumPy calls only.
        Chosen per function; nothing process-wide changes.
    compile : {"background", "now"}, default "background"
        For ``backend="numba"``: ``"background"`` runs the NumPy backend's
        program from the first call on while Numba compiles the whole program
        on one background thread, and swaps it in once its first replay agreed
        with the traced call (``wait_compiled()`` waits for it;
        ``cache_info(tiers=True)`` and ``source()`` say what runs). ``"now"``
        compiles at the first call, which then takes as long as Numba does.
        The NumPy backend compiles at the first call either way.

    Returns
    -------
    Jitted or callable
        The jitted function (with ``source``, ``program``, ``cache_info`` and
        ``clear_cache``), or a decorator making one when ``fun`` is omitted.

    Raises
    ------
    TypeError
        If ``fun`` is not callable; when called, if ``f`` writes into a traced
        argument in place or returns a function.
    ImportError
        If ``backend="numba"`` and Numba is not installed.
    ValueError
        If ``backend`` or ``compile`` is not one of the above.

    See Also
    --------
    dualad.vmap : Batch a function in one pass.
    dualad.JitRetraceWarning : Warned when the guards keep failing.

    Notes
    -----
    Arrays and floating scalars are traced; Python ints, bools, strings and
    other hashable leaves are static (part of the cache key). Side effects of
    ``f`` (printing, appending to a list, reading a global) happen when it is
    traced, not on replays, as in JAX; computations on values ``f`` closed over
    run once, at trace time.

    Examples
    --------
    >>> @dualad.jit
    ... def f(x):
    ...     return np.sum(np.sin(x) ** 2)
    >>> x = np.array([0.5, 1.0])
    >>> print(np.isclose(f(x), np.sum(np.sin(x) ** 2)))
    True
    >>> print(f.source(x))
    def f(v0):
        v1 = np.sin(v0)
        v2 = np.square(v1)
        v3 = add_reduce(v2, (0,), None, None, False)
        return (v3,)
    >>> print(np.allclose(dualad.grad(f)(x), np.sin(2 * x)))
    True

    A new shape traces again; the same one replays:

    >>> _ = f(np.ones(3)), f(np.zeros(3))
    >>> sorted(f.cache_info().values())
    [1, 1]
    """
    if fun is None:
        return lambda f: Jitted(f, static_argnums, static_argnames, max_traces, backend,
                                compile)
    return Jitted(fun, static_argnums, static_argnames, max_traces, backend, compile)

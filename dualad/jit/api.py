"""``dualad.jit``: trace a function once per input signature, replay the program after.

The first call with a given signature (the arguments' structure, each array's shape and
dtype, the values of static arguments) runs ``f`` under a :class:`JitTrace`, which
records a straight-line program of registry primitives with a guard for every fact
Python control flow took from a traced value; the program is compiled to Python source
(:mod:`dualad.jit.codegen`). Later calls with that signature run the compiled program.
A failed guard means ``f`` would take another path: the call traces again and keeps
both programs (up to ``max_traces``; past that ``f`` runs without jit for that signature,
with a warning naming the guard that kept failing). A replay is never a stale program.

Called with traced values (inside ``grad``, ``jvp``, ``vmap``, the planner, another
``jit``), the program is run through the primitives (:mod:`dualad.jit.replay`), so every
transformation composes with jit in either order.
"""
from __future__ import annotations

import functools
import threading
import warnings

import numpy as np

from ..tracer import Box, CONCRETE
from .. import tree
from .codegen import RETRACE, compile_program
from .program import Program
from .replay import run as replay_run
from .trace import ClosesOverTraced, JitBox, JitTrace, peek

CONCRETE.add(JitBox)

_SCALARS = (float, complex, np.float64, np.float32, np.complex128, np.complex64,
            np.float16, np.longdouble, np.clongdouble)


class JitRetraceWarning(UserWarning):
    """A jitted function kept failing its guards: it now runs without jit for that
    signature (see the message for the guard and the line that asked)."""


class Compiled:
    """One program for one signature: the compiled replay, its source, the program, and
    the output structure."""

    __slots__ = ("fn", "source", "program", "rebuild")

    def __init__(self, program, rebuild):
        self.program = program
        self.fn, self.source = compile_program(program, name=_identifier(program.name))
        self.rebuild = rebuild


def _identifier(name):
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return s if s and not s[0].isdigit() else "f_" + s


class _Entry:
    """The programs of one signature, newest first, and how often it was traced."""

    __slots__ = ("programs", "traces", "eager", "last_guard")

    def __init__(self):
        self.programs = []
        self.traces = 0
        self.eager = False
        self.last_guard = None


def _leaf_key(x, where):
    """A leaf's part of the signature, and whether it is traced."""
    kind = x.__class__
    if kind is np.ndarray:
        if x.dtype.hasobject:
            raise TypeError(f"{where} is an object array (dtype=object); dualad.jit traces "
                            f"numeric arrays: build it with np.stack or np.array of numbers")
        return (kind, x.shape, x.dtype.str), True
    if kind in _SCALARS or isinstance(x, np.generic) and x.dtype.kind in "fc":
        return kind, True
    if isinstance(x, np.generic):   # an integer or boolean NumPy scalar: traced too
        return kind, True
    if isinstance(x, Box):
        return None, True
    try:
        hash(x)
    except TypeError:
        raise TypeError(
            f"{where} is {type(x).__name__!r}, which dualad.jit can neither trace (it traces "
            f"arrays and numbers) nor use as a static argument (not hashable). Pass arrays "
            f"or numbers, or containers (tuple, list, dict) of them") from None
    return ("static", kind, x), False


def _env(fun):
    """The objects ``fun``'s code reads from its closure and its globals: the program
    assumed them, so a rebinding (``lr = 0.01`` after the trace) must trace again."""
    code = getattr(fun, "__code__", None)
    if code is None:
        return ()
    cells = fun.__closure__ or ()
    g = fun.__globals__
    try:
        env = [c.cell_contents for c in cells]
    except ValueError:   # an empty cell (a variable of the enclosing scope not yet bound)
        env = [c.cell_contents for c in cells if _filled(c)]
    env += [g[n] for n in code.co_names if n in g]
    return env


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _same_env(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is not y:
            return False
    return True


class Jitted:
    """The callable :func:`jit` returns (see the module docstring)."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), max_traces=8):
        if not callable(fun):
            raise TypeError(f"dualad.jit: expected a function, got {type(fun).__name__!r}")
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.fun = fun
        self.static_argnums = frozenset(static_argnums)
        self.static_argnames = frozenset(static_argnames)
        self.max_traces = int(max_traces)
        self.name = getattr(fun, "__name__", type(fun).__name__)
        self._cache = {}
        self._fast = {}    # _fast_key(args) -> the _Entry of _cache for those arguments
        self._lock = threading.Lock()
        functools.update_wrapper(self, fun, updated=())

    # -- signature ---------------------------------------------------------------------
    def _split(self, args, kwargs):
        """``(key, dynamic leaves, rebuild(leaves) -> (args, kwargs), any boxed)``."""
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
            k, t = _leaf_key(x, f"{self.name}: argument leaf {j}")
            if k is None:
                boxed = True
            keys.append(k)
            traced.append(t)
        structure = _structure((dyn_args, dyn_kwargs))
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
    def __call__(self, *args, **kwargs):
        if not kwargs and not self.static_argnums:    # fast path: plain arrays and floats
            fkey = _fast_key(args)
            entry = self._fast.get(fkey) if fkey is not None else None
            if entry is not None and not entry.eager:
                env = _env(self.fun)
                for compiled, cenv in list(entry.programs):
                    if _same_env(cenv, env):
                        out = compiled.fn(*args)
                        if out is not RETRACE:
                            return compiled.rebuild(out)
            elif fkey is not None:
                out = self._call(args, kwargs)
                entry = self._cache.get(self._split(args, kwargs)[0])
                if entry is not None:
                    self._fast[fkey] = entry
                return out
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        key, leaves, traced, rebuild, boxed = self._split(args, kwargs)
        if boxed:
            return self._call_traced(key, leaves, traced, rebuild)
        env = _env(self.fun)
        entry = self._cache.get(key)
        if entry is not None:
            if entry.eager:
                a, k = rebuild(leaves)
                return self.fun(*a, **k)
            inputs = [x for x, t in zip(leaves, traced) if t]
            for compiled, cenv in list(entry.programs):
                if not _same_env(cenv, env):
                    continue
                out = compiled.fn(*inputs)
                if out is not RETRACE:
                    return compiled.rebuild(out)
        return self._trace_call(key, leaves, traced, rebuild, env)

    def _trace_call(self, key, leaves, traced, rebuild, env):
        """Trace ``f`` at these arguments, keep the program, return its results."""
        with self._lock:
            entry = self._cache.setdefault(key, _Entry())
            entry.traces += 1
            thrashing = entry.traces > self.max_traces
        if thrashing:
            self._give_up(entry)
            a, k = rebuild(leaves)
            return self.fun(*a, **k)
        try:
            compiled, out_values = self._trace(leaves, traced, rebuild)
        except ClosesOverTraced:
            with self._lock:
                entry.traces -= 1
            a, k = rebuild(leaves)
            return self.fun(*a, **k)
        with self._lock:
            entry.programs.insert(0, (compiled, env))
            del entry.programs[self.max_traces:]
        return compiled.rebuild(out_values)

    def _trace(self, leaves, traced, rebuild):
        trace = JitTrace()
        boxes = [trace.input(x) if t else x for x, t in zip(leaves, traced)]
        a, k = rebuild(boxes)
        try:
            out = self.fun(*a, **k)
        finally:
            trace.stop()
        out_leaves, out_rebuild = tree.flatten(out)
        outvars = []
        values = []
        for j, y in enumerate(out_leaves):
            if y.__class__ is JitBox and y._trace is trace:
                outvars.append(y.var)
                values.append(y.val)
            elif isinstance(y, Box):
                raise ClosesOverTraced("output")
            else:
                from .program import Const
                outvars.append(Const(y))
                values.append(y)
        invars = [b.var for b in boxes if b.__class__ is JitBox]
        prog = Program(invars, trace.body, outvars, trace.avals, self.name).pruned()
        return Compiled(prog, out_rebuild), tuple(values)

    def _give_up(self, entry):
        if entry.eager:
            return
        entry.eager = True
        guards = [g for c, _ in entry.programs for g in c.program.guards]
        where = sorted({g.describe() for g in guards})[:3]
        warnings.warn(
            f"dualad.jit({self.name}) traced {entry.traces - 1} times for the same argument "
            f"shapes and dtypes: each replay failed a guard, i.e. the function took another "
            f"path through Python control flow on traced values, or read a traced value "
            f"itself. Guards recorded: {'; '.join(where) or 'none'}. It now runs without "
            f"jit for this signature. Write value-dependent branches as selections "
            f"(np.where, np.maximum), pass values that choose the path as static arguments "
            f"(static_argnums=...), or raise max_traces", JitRetraceWarning, stacklevel=4)

    def _call_traced(self, key, leaves, traced, rebuild):
        """Called with traced values: run the program through the primitives, so the
        enclosing transformations see them (tracing one from the primal values first)."""
        entry = self._cache.get(key_of_primals(self, leaves, traced, rebuild))
        programs = [] if entry is None or entry.eager else [c for c, _ in entry.programs]
        if not programs:
            primals = [peek(x) if isinstance(x, Box) else x for x in leaves]
            if all(p is not None for p in primals):
                a, k = rebuild(primals)
                self(*a, **k)     # traces (or finds) the program at the primal values
                entry = self._cache.get(key_of_primals(self, leaves, traced, rebuild))
                if entry is not None and not entry.eager:
                    programs = [c for c, _ in entry.programs]
        inputs = [x for x, t in zip(leaves, traced) if t]
        for compiled in programs:
            out = replay_run(compiled.program, inputs)
            if out is not RETRACE:
                return compiled.rebuild(out)
        a, k = rebuild(leaves)
        return self.fun(*a, **k)

    # -- inspection --------------------------------------------------------------------
    def _compiled_for(self, args, kwargs):
        key, leaves, traced, rebuild, boxed = self._split(args, kwargs)
        if boxed:
            raise TypeError(f"{self.name}.source/program: give plain arrays, not traced values")
        env = _env(self.fun)
        entry = self._cache.get(key)
        if entry is not None:
            inputs = [x for x, t in zip(leaves, traced) if t]
            for compiled, cenv in entry.programs:
                if _same_env(cenv, env) and compiled.fn(*inputs) is not RETRACE:
                    return compiled
        self._trace_call(key, leaves, traced, rebuild, env)
        entry = self._cache[key]
        if entry.eager or not entry.programs:
            raise RuntimeError(f"dualad.jit({self.name}): no program for these arguments "
                               f"(it runs without jit: see the JitRetraceWarning)")
        return entry.programs[0][0]

    def source(self, *args, **kwargs):
        """The generated Python source of the program for these arguments (traced now if
        it was not yet): for ``jit(grad(f))``, the adjoint program written out."""
        return self._compiled_for(args, kwargs).source

    def program(self, *args, **kwargs):
        """The recorded :class:`~dualad.jit.program.Program` for these arguments (its
        ``str`` lists the equations and guards)."""
        return self._compiled_for(args, kwargs).program

    def clear_cache(self):
        """Forget every program (e.g. after mutating an array the function closed over
        and computed from at trace time)."""
        with self._lock:
            self._cache.clear()
            self._fast.clear()

    def cache_info(self):
        """``{signature: number of traces}`` so far."""
        return {k: e.traces for k, e in self._cache.items()}

    def __get__(self, obj, objtype=None):   # a jitted method: bind like a function
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<dualad.jit of {self.fun!r}>"


def key_of_primals(jitted, leaves, traced, rebuild):
    """The cache key the same call with the primal values would have."""
    primals = [peek(x) if isinstance(x, Box) else x for x in leaves]
    if any(p is None for p in primals):
        return None
    a, k = rebuild(primals)
    return jitted._split(a, k)[0]


def _fast_key(args):
    """A key for positional arguments that are all plain arrays or float scalars (every
    one traced: the program's inputs are the arguments themselves), else None."""
    key = []
    for a in args:
        c = a.__class__
        if c is np.ndarray:
            if a.dtype.hasobject:
                return None
            key.append((a.shape, a.dtype))
        elif c is float or c is np.float64:
            key.append(c)
        else:
            return None
    return tuple(key)


def _static(value, where):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"dualad.jit: {where} must be hashable (it is part of the cache key), "
                        f"got {type(value).__name__!r}") from None
    return (type(value), value)


def _structure(t):
    if isinstance(t, (tuple, list)):
        return (type(t), tuple(_structure(x) for x in t))
    if isinstance(t, dict):
        return (dict, tuple((k, _structure(v)) for k, v in t.items()))
    return None


def jit(fun=None, *, static_argnums=(), static_argnames=(), max_traces=8):
    """``f`` traced once per input signature and replayed afterwards.

    ``jit(f)(*args)`` equals ``f(*args)``: arrays and floating scalars are traced;
    Python ints, bools, strings and other hashable leaves are static (part of the cache
    key, as are ``static_argnums``/``static_argnames``). Side effects of ``f`` (printing,
    appending to a list, reading a global) happen when it is traced, not on replays, as
    in JAX; computations on values ``f`` closed over run once, at trace time. Use as
    ``jit(f)``, ``@jit`` or ``@jit(static_argnums=1)``.
    """
    if fun is None:
        return lambda f: Jitted(f, static_argnums, static_argnames, max_traces)
    return Jitted(fun, static_argnums, static_argnames, max_traces)

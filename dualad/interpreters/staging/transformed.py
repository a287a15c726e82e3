"""A jitted function called under a transformation: ONE primitive with compiled rules.

``grad(jit(f))``, ``jvp(jit(f))``, ``vmap(jit(f))``: the program recorded for the call's
signature (:mod:`dualad.interpreters.staging.api`) is applied as one primitive, ``jit(f)``, whose

- value is the compiled program (the outputs as one value: the single output leaf, or
  the leaves of one dtype packed into one 1-D array, as :mod:`dualad.transforms.scan.rules` packs);
- VJP, for a first-order reverse call (the arguments are tape values over plain arrays)
  with a real one-element output, comes from ONE compiled program run at the call, the
  forward and its gradient with respect to the traced arguments
  (``jit(value_and_grad(program))``): the rule then scales that gradient by the output's
  cotangent (``x̄ = ȳ · ∇y``, exact: the output is one real number). Otherwise the VJP is
  the jitted pullback ``jit(x, ȳ ↦ vjp(program)(ȳ))``, cached per set of differentiated
  inputs;
- JVP is the jitted ``jit(x, ẋ ↦ jvp(program)(ẋ))``, per set of inputs with a tangent;
- vmap rule is ``jit(vmap(program))``, per pattern of batched inputs.

Each rule is a :class:`~dualad.interpreters.staging.api.Jitted` of a function that replays the program
through the primitives under ``vjp``/``jvp``/``vmap`` (:mod:`dualad.interpreters.staging.replay`). Plain
arguments run its compiled program; traced ones (``grad(grad(jit(f)))``, ``jvp`` of
``grad``, a jit trace) call it as a jitted function again, which is this module's
primitive once more: the rules compose to any order. The outer tape records one node for
the call, where the replay of the program (the route for what this module does not
cover: guards on whole values, integer outputs, outputs of several dtypes) records every
primitive of it.

The program is chosen at the primal values, by running its compiled form: a program whose
guards fail there is not applied (the caller traces again); a ``bool``/``int`` guard's
fact is logged as a decision, as the replay's ``bool()`` of a traced value logs it.
"""
from __future__ import annotations

import math

import numpy as np

from ...transforms.api import jvp, value_and_grad, vjp
from ...ops import concatenate, index, reshape
from ...core.primitive import Primitive
from ...core.values import is_staged, replays_programs
from ..reverse.tape import Var
from ...core.tracer import Box, PLAIN_TYPES, note_decision, shape_of, unguarded_value
from ..batching.vmap import vmap
from .codegen import RETRACE, compile_program
from .split import Split, _GuardFailed, _at, _replay

__all__ = ["Transformed", "transformed", "applies", "example", "ENABLED", "Split"]

# True: a jitted call under a transformation is this module's one primitive; set to False
# (bench/jit_under_grad.py does, to time the replay in the same run) for the replay
# through the primitives everywhere. Read at every call; nothing else changes it.
ENABLED = [True]

_NDARRAY = np.ndarray


def _inexact(dtype):
    return dtype is not None and np.dtype(dtype).kind in "fc"


class _Call:
    """One application's state (its ``call=`` parameter): the inputs it was bound at,
    the outputs and the gradient computed there, and which inputs were differentiated."""

    __slots__ = ("inputs", "outs", "grads", "wanted", "back")

    def __init__(self, inputs, outs, grads, wanted, back=None):
        self.inputs, self.outs, self.grads, self.wanted = inputs, outs, grads, wanted
        self.back = back    # (the compiled backward program, the residuals), or None


def transformed(compiled, make_jit):
    """The :class:`Transformed` of one compiled program (made once, kept on it), or None
    when the program is replayed instead: a guard on a whole value (the program read a
    value as a constant, which a derivative level must not see), an output leaf that is
    not inexact, or output leaves of several dtypes."""
    t = compiled.transformed
    if t is None:
        t = Transformed.of(compiled, make_jit)
        compiled.transformed = t if t is not None else False
    return t or None


def applies(leaves):
    """Whether a call with these traced argument leaves takes this module's primitive:
    not when a jit trace records one of them (an enclosing ``jit`` inlines the program's
    replay and compiles the whole, as ``jit(grad(f))`` does), nor when a Taylor series is
    among them (the program's primitives take their Taylor rules: as one primitive, its
    jitted JVP program would be nested once per order)."""
    return ENABLED[0] and not is_staged(leaves) and not replays_programs(leaves)


class Transformed:
    """The primitive of one compiled program and its rules' jitted programs."""

    __slots__ = ("prog", "fn", "name", "n_in", "out_avals", "single", "pack_dtype",
                 "prim", "make_jit", "_vg", "_vjp", "_jvp", "_vmap", "guards", "__weakref__")

    @classmethod
    def of(cls, compiled, make_jit):
        prog = compiled.program
        if any(g.kind == "equal" for g in prog.guards):
            return None
        avals = []
        for a in prog.outvars:
            if a.__class__ is int:
                kind, shape, dtype = prog.avals[a]
            else:
                v = a.value
                shape, dtype = np.shape(v), np.result_type(v)
            if not _inexact(dtype):
                return None
            avals.append((tuple(shape), np.dtype(dtype)))
        if not avals or len({d for _, d in avals}) > 1:
            return None
        return cls(compiled, avals, make_jit)

    def __init__(self, compiled, out_avals, make_jit):
        prog = compiled.program
        self.prog = prog
        self.fn = compiled.fn
        self.name = prog.name
        self.n_in = len(prog.invars)
        self.out_avals = out_avals
        self.single = len(out_avals) == 1
        self.pack_dtype = out_avals[0][1]
        self.make_jit = make_jit
        self.guards = [g for g in prog.guards]
        self._vg, self._vjp, self._jvp, self._vmap = {}, {}, {}, {}
        prim = Primitive(f"jit({self.name})", self._impl)
        in_avals = [prog.avals[v] for v in prog.invars]
        prim.nondiff_argnums = tuple(i for i, (_, _, d) in enumerate(in_avals)
                                     if not _inexact(d))

        def vjp_all(ct, ans, *args, call, wanted=None):
            return self._vjp_all(ct, ans, args, call, wanted)
        vjp_all.takes_wanted = True
        prim.def_all(jvp=lambda tangents, ans, *args, call: self._jvp_all(tangents, args), vjp=vjp_all)
        prim.defbatch(lambda args, batched, call: self._batch(args, batched))
        self.prim = prim

    # -- the value -------------------------------------------------------------------------
    def value(self, leaves):
        """The primitive's value from the output leaves (plain or traced)."""
        if self.single:
            return leaves[0]
        lead = ()
        return concatenate([reshape(v, lead + (-1,)) for v in leaves], axis=-1) \
            if any(isinstance(v, Box) for v in leaves) else \
            np.concatenate([np.ravel(np.asarray(v, self.pack_dtype)) for v in leaves])

    def leaves(self, value):
        """The output leaves from the primitive's value (plain or traced)."""
        if self.single:
            return [value]
        out, start = [], 0
        for shape, _ in self.out_avals:
            n = math.prod(shape)
            out.append(reshape(index(value, (Ellipsis, slice(start, start + n))),
                               shape_of(value)[:-1] + shape))
            start += n
        return out

    def _impl(self, *args, call):
        if call.outs is not None and len(args) == len(call.inputs) and all(
                a is b for a, b in zip(args, call.inputs)):
            return call.outs
        out = self.fn(*args)
        if out is RETRACE:
            raise ValueError(
                f"dualad.jit({self.name}): the program applied under a transformation was "
                f"asked for values at which its guards do not hold (Python control flow "
                f"on them would take another path)")
        return self.value(out)

    # -- binding ---------------------------------------------------------------------------
    def bind(self, inputs, primals):
        """The output leaves of the program applied to ``inputs`` (traced), with
        ``primals`` the plain values under them (None when vmap hides them); RETRACE
        when its guards do not hold at ``primals``."""
        grads = None
        wanted = None
        if primals is None:
            if self.guards:
                return RETRACE
            call = _Call((), None, None, None)
        else:
            wanted = self._first_order_reverse(inputs)
            back = None
            if wanted is None:
                outs = self.fn(*primals)
                if outs is RETRACE:
                    return RETRACE
                outs = self.value(outs)
            elif self._scalar:
                vg = self._value_and_grad(wanted, primals)
                res = vg(*primals)
                if res is RETRACE:
                    return RETRACE
                outs, grads = res[0], res[1:]
            else:
                split = self._split(wanted, primals)
                if split is None:
                    outs = self.fn(*primals)
                else:
                    outs = split.forward(*primals)
                if outs is RETRACE:
                    return RETRACE
                if split is not None:
                    k = len(self.out_avals)
                    back = (split, outs[k:])
                    outs = outs[:k]
                outs = self.value(outs)
            for g in self.guards:   # the facts the program relied on, as decisions
                note_decision(inputs, g.kind, g.expected)
            call = _Call(tuple(primals), outs, grads, wanted, back)
        return self.leaves(self.prim(*inputs, call=call))

    def _first_order_reverse(self, inputs):
        """The positions of the tape values of ONE tape over plain values, when every
        traced input is one; else None."""
        trace = None
        wanted = []
        for i, x in enumerate(inputs):
            if type(x) in PLAIN_TYPES:
                continue
            if x.__class__ is not Var or isinstance(x.value, Box):
                return None
            if trace is None:
                trace = x._trace
            elif x._trace is not trace:
                return None
            wanted.append(i)
        return tuple(wanted) or None

    @property
    def _scalar(self):
        """One real output of one element: its VJP is the cotangent times its gradient."""
        if not self.single:
            return False
        shape, dtype = self.out_avals[0]
        return dtype.kind == "f" and math.prod(shape) == 1

    def _split(self, wanted, primals):
        """The :class:`Split` of ``vjp(program)`` for these differentiated inputs (made at
        the first call, kept; None when it cannot be split)."""
        key = ("split", wanted)
        split = self._vg.get(key, False)
        if split is False:
            try:
                split = Split.of(self, wanted, primals)
            except _GuardFailed:
                split = None
            self._vg[key] = split
        return split

    def _value_and_grad(self, wanted, primals):
        """The compiled ``x -> (y, ∂y/∂x_i for i in wanted)`` at ``primals``'s signature."""
        key = wanted   # (one compiled program: one signature)
        fn = self._vg.get(key)
        if fn is None:
            prog, n = self.prog, self.n_in

            def forward_and_gradient(*xs):
                restricted = _at(prog, xs, wanted)

                def f(*w):
                    return restricted(*w)[0]
                y, g = value_and_grad(f, argnums=tuple(range(len(wanted))))(
                    *[xs[i] for i in wanted])
                return (y,) + tuple(g)
            forward_and_gradient.__name__ = f"value_and_grad({self.name})"
            program = self.make_jit(forward_and_gradient).program(*primals)
            fn = compile_program(program, name=forward_and_gradient.__name__)[0]
            self._vg[key] = fn
        return fn

    # -- reverse ---------------------------------------------------------------------------
    def _vjp_all(self, ct, ans, args, call, wanted):
        wanted = tuple(wanted) if wanted is not None else tuple(
            i for i, a in enumerate(args) if isinstance(a, Box))
        grads = call.grads
        if grads is not None and (wanted == call.wanted or set(wanted) <= set(call.wanted)):
            # x̄_i = ȳ ∂y/∂x_i: the output is one real number, its gradient computed already
            kind = ct.__class__
            if kind is float or kind is np.float64 or kind is np.float32:
                scale = float(ct)
            elif kind is _NDARRAY and ct.dtype.kind == "f" and ct.shape == \
                    self.out_avals[0][0]:
                scale = ct.item()
            else:
                scale = None
            if scale is not None and all(a is b for a, b in zip(args, call.inputs)):
                out = [None] * len(args)
                for i, g in zip(call.wanted, grads):
                    # (the gradient itself once; a second sweep of a kept tape, a copy)
                    out[i] = (g.copy() if call.outs is None and g.__class__ is _NDARRAY
                              else g) if scale == 1.0 else g * scale
                call.outs = None
                if len(wanted) < len(call.wanted):
                    for i in call.wanted:
                        if i not in wanted:
                            out[i] = None
                return out
        back = call.back
        if back is not None and (wanted == call.wanted or set(wanted) <= set(call.wanted)) \
                and all(a is b for a, b in zip(args, call.inputs)):
            cts = back[0].backward(back[1], self.leaves(ct) if type(ct) in PLAIN_TYPES
                                   else None)
            if cts is not None:
                out = [None] * len(args)
                for i, g in zip(call.wanted, cts):
                    if i in wanted:
                        out[i] = g
                return out
        ct = _plain(ct)
        if self.out_avals[0][1].kind != "c" and np.result_type(unguarded_value(ct)).kind == "c":
            ct = ct.real   # a real output's cotangent is real (docs/complex.md)
        pull = self._pullback(wanted)
        cts = pull(*args, ct)
        out = [None] * len(args)
        for i, g in zip(wanted, cts):
            out[i] = g
        return out

    def _pullback(self, wanted):
        """``jit((x..., ȳ) -> the cotangents of x_i, i in wanted)``."""
        pull = self._vjp.get(wanted)
        if pull is None:
            prog, t = self.prog, self

            def pullback(*leaves):
                xs, ct = list(leaves[:-1]), leaves[-1]

                _, back = vjp(_at(prog, xs, wanted), *[xs[i] for i in wanted])
                return tuple(back(tuple(t.leaves(ct))))
            pullback.__name__ = f"vjp({self.name})"
            pull = self._vjp[wanted] = self.make_jit(pullback)
        return pull

    # -- forward ---------------------------------------------------------------------------
    def _jvp_all(self, tangents, args):
        which = tuple(i for i, t in enumerate(tangents) if t is not None)
        push = self._jvp.get(which)
        if push is None:
            prog, t = self.prog, self

            def pushforward(*leaves):
                n = len(leaves) - len(which)
                xs, ts = list(leaves[:n]), leaves[n:]

                restricted = _at(prog, xs, which)

                def f(*w):
                    return t.value(restricted(*w))
                return jvp(f, tuple(xs[i] for i in which), tuple(ts))[1]
            pushforward.__name__ = f"jvp({self.name})"
            push = self._jvp[which] = self.make_jit(pushforward)
        return push(*args, *[_plain(tangents[i]) for i in which])

    # -- vmap ------------------------------------------------------------------------------
    def _batch(self, args, batched):
        batched = tuple(batched)
        mapped = self._vmap.get(batched)
        if mapped is None:
            prog, t = self.prog, self

            def per_example(*xs):
                return t.value(_replay(prog, list(xs)))
            per_example.__name__ = self.name
            mapped = self._vmap[batched] = self.make_jit(
                vmap(per_example, in_axes=tuple(0 if b else None for b in batched)))
        return mapped(*args)


def _plain(t):
    """A tangent or cotangent as a jitted function takes it: a structured batch (one-hot,
    scaled directions) as its dense array."""
    if isinstance(t, Box) or type(t) in PLAIN_TYPES:
        return t
    return np.asarray(t)


def example(x):
    """A plain value of ``x``'s (per-example) shape with no guard: the primal under every
    box; under ``vmap`` the first example."""
    plain = unguarded_value(x)
    if not isinstance(x, Box):
        return plain
    extra = np.ndim(plain) - len(x.shape)
    return np.asarray(plain)[(0,) * extra] if extra > 0 else plain

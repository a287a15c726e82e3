"""The participants: one object per AD tool (and plain NumPy), each giving the same few
spellings to bench/gradbench/gb_evals.py -- its array namespace, a gradient, a
forward-over-reverse JVP, a jit -- each the tool's own best way to say it:

- ``dualad``: ``dualad.grad`` / ``dualad.jvp`` on the NumPy program, eager;
- ``dualad.jit``: the same under ``dualad.jit`` (pure NumPy), the ode and lstm time steps in
  ``dualad.scan`` (as jax.jit's): under jit one loop equation whose step is traced once
  (docs/scan.md), so the first call does not trace every step;
- ``dualad.jit+numba``: under ``dualad.jit(..., backend="numba")`` (the whole program
  compiled by Numba on a background thread while the NumPy program answers; needs
  ``pip install "dualad[numba]"``); :meth:`DualadPeer.compiled` waits for it; its time
  steps stay a Python loop (rolled into loops Numba compiles with the rest);
- ``autograd``: ``autograd.grad`` / ``autograd.make_jvp`` on the program over
  ``autograd.numpy``;
- ``jax.jit``: ``jax.jit`` of ``jax.grad`` / ``jax.jvp`` (as GradBench's JAX tool), float64;
  the ode and lstm time steps in ``jax.lax.scan`` (GradBench's JAX ode so; unrolled, jax.jit
  compiles for minutes);
- ``torch``: eager, ``torch.autograd.grad`` for a gradient (the tape GradBench's PyTorch
  tool drives with ``backward()``), ``torch.func.jvp`` of ``torch.func.grad`` for kmeans'
  Hessian diagonal (GradBench's tool: ``vjp`` + ``vhp``);
- ``numpy``: the plain program, primal only (the ``x f`` reference).

The nested evals (particle, saddle; bench/gradbench/gb_nested.py) use ``fgrad`` for a
reverse-mode gradient (torch: ``torch.func.grad``) and ``fwd_grad`` for a forward-mode one
(a JVP per unit vector; torch: ``torch.func.jvp``); the solver is Python and the peer's jit
wraps its objective and gradient (dualad.jit), except jax.jit, which gets the whole solve as
one jitted program of loop primitives (``JaxPeer.nested``).

A peer whose package does not import is None from :func:`make` (the runner says so).
"""
from __future__ import annotations

import importlib

import numpy as np


class Peer:
    name = "?"
    jitted = False
    xp = np
    scan = None      # a loop primitive the ode and lstm steps run in (jax.lax.scan)

    def arr(self, a):
        return np.asarray(a, dtype=np.float64)

    def grad(self, f, argnums=0):
        raise NotImplementedError(f"{self.name} has no gradient here")

    def fgrad(self, f, argnums=0):
        """A gradient that composes with :meth:`jvp` (forward over reverse)."""
        return self.grad(f, argnums)

    def jvp(self, f, primals, tangents):
        raise NotImplementedError(f"{self.name} has no jvp here")

    def fwd_grad(self, f):
        """The gradient of ``f`` (a vector's scalar function) by forward mode: one JVP per
        unit vector, stacked (GradBench's ``grad_f`` in the nested evals)."""
        def g(x):
            eye = self.arr(np.eye(x.shape[0]))
            return self.xp.stack([self.jvp(f, (x,), (eye[i],))[1]
                                  for i in range(x.shape[0])])
        return g

    def jit(self, fn):
        return fn

    def block(self, out):
        return out

    def to_numpy(self, out):
        if isinstance(out, (tuple, list)):
            return tuple(self.to_numpy(o) for o in out)
        return np.asarray(out, dtype=np.float64)


class NumPyPeer(Peer):
    name = "numpy"


# The jitted functions each DualadPeer made since its last compiled(), by id(peer): kept
# off the peer, whose attributes the objectives' closures reach (a change there is a
# change jit's assumptions check, so every program would trace again).
_MADE = {}


class DualadPeer(Peer):
    def __init__(self, jitted, backend=None):
        import dualad
        self.d = dualad
        self.jitted = jitted
        self.backend = backend
        self.name = ("dualad.jit" + (f"+{backend}" if backend else "")) if jitted else "dualad"
        if jitted and not backend:
            # the ode and lstm time steps in dualad.scan: under jit one loop equation, its
            # step traced once (first call of lstm (4, 1024) 0.9 s instead of 18 s, replay
            # within 5%); not for eager dualad (the same Python loop) nor for the Numba
            # backend (it compiles the unrolled program: 11x faster replay than the loop)
            self.scan = dualad.scan

    def grad(self, f, argnums=0):
        return self.d.grad(f, argnums=argnums)

    def jvp(self, f, primals, tangents):
        return self.d.jvp(f, primals, tangents)

    def jit(self, fn):
        if not self.jitted:
            return fn
        j = self.d.jit(fn, backend=self.backend) if self.backend else self.d.jit(fn)
        _MADE.setdefault(id(self), []).append(j)
        return j

    def compiled(self):
        """Wait until every function jitted since the last call has its final replay
        (the Numba backend compiles in the background): ``(all ready, fallbacks)``,
        the fallbacks being the tiers that are not ``"numba"`` ("kernels: why", ...)."""
        made = _MADE.pop(id(self), [])
        ready = all([j.wait_compiled() for j in made])
        tiers = {t for j in made for ts in j.cache_info(tiers=True).values() for t in ts}
        return ready, sorted(t for t in tiers if t not in ("numba", "numpy"))


class AutogradPeer(Peer):
    name = "autograd"

    def __init__(self):
        import autograd
        import autograd.numpy as anp
        self.ag, self.xp = autograd, anp

    def grad(self, f, argnums=0):
        return self.ag.grad(f, argnums)

    def jvp(self, f, primals, tangents):
        (x,), (v,) = primals, tangents
        return self.ag.make_jvp(f)(x)(v)


class JaxPeer(Peer):
    name = "jax.jit"
    jitted = True

    def __init__(self):
        import jax
        jax.config.update("jax_enable_x64", True)
        self.jax, self.xp, self.scan = jax, jax.numpy, jax.lax.scan

    def arr(self, a):
        return self.jax.numpy.asarray(np.asarray(a, dtype=np.float64))

    def grad(self, f, argnums=0):
        return self.jax.grad(f, argnums=argnums)

    def jvp(self, f, primals, tangents):
        return self.jax.jvp(f, primals, tangents)

    def jit(self, fn):
        return self.jax.jit(fn)

    @property
    def lax(self):
        return self.jax.lax

    def nested(self, module, function, inp):
        """particle / saddle as one jax.jit of the whole solve (gb_nested's loop-primitive
        spelling: while_loop, cond, and a bounded scan where a reverse derivative goes)."""
        import gb_nested as N
        if module == "particle":
            run, x = self.jit(N.lax_particle(self, function)), self.arr([float(inp["w"])])
        else:
            run, x = self.jit(N.lax_saddle(self, function)), self.arr(inp["start"])
        return lambda: run(x)

    def block(self, out):
        return self.jax.block_until_ready(out)


class TorchPeer(Peer):
    name = "torch"

    def __init__(self):
        import torch
        self.torch = self.xp = torch

    def arr(self, a):
        return self.torch.from_numpy(np.array(a, dtype=np.float64))

    def grad(self, f, argnums=0):
        torch = self.torch
        many = isinstance(argnums, tuple)
        nums = argnums if many else (argnums,)

        def g(*args):
            args = [a.detach().requires_grad_(True) if i in nums else a
                    for i, a in enumerate(args)]
            out = torch.autograd.grad(f(*args), [args[i] for i in nums])
            return tuple(out) if many else out[0]
        return g

    def fgrad(self, f, argnums=0):
        return self.torch.func.grad(f, argnums=argnums)

    def jvp(self, f, primals, tangents):
        return self.torch.func.jvp(f, primals, tangents)

    def to_numpy(self, out):
        if isinstance(out, (tuple, list)):
            return tuple(self.to_numpy(o) for o in out)
        return out.detach().numpy().astype(np.float64) if hasattr(out, "detach") \
            else np.asarray(out, dtype=np.float64)


ORDER = ("numpy", "dualad", "dualad.jit", "dualad.jit+numba", "autograd", "jax.jit", "torch")
_MAKERS = {"numpy": NumPyPeer, "dualad": lambda: DualadPeer(False),
           "dualad.jit": lambda: DualadPeer(True),
           "dualad.jit+numba": lambda: DualadPeer(True, "numba"), "autograd": AutogradPeer,
           "jax.jit": JaxPeer, "torch": TorchPeer}
_PACKAGE = {"autograd": "autograd", "jax.jit": "jax", "torch": "torch",
            "dualad.jit+numba": "numba"}


def make(name):
    """The peer ``name``, or (None, why) when its package does not import."""
    pkg = _PACKAGE.get(name)
    if pkg is not None:
        try:
            importlib.import_module(pkg)
        except Exception as exc:  # noqa: BLE001 - the runner prints why
            return None, f"{pkg} not importable ({type(exc).__name__}: {exc})"
    return _MAKERS[name](), ""

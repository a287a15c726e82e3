"""Trace once and replay, by default: the wrapper of every prepared derivative.

The helpers a researcher calls many times with the same shapes (a planner's ``Plan``,
``jacobians.optimize.gradient``/``hessian_fn``/``jacobian_fn``..., an ODE's ``jac``, the
derivatives inside ``dualad.scipy.integrate`` and ``custom_root``) wrap their derivative
function ``d`` in :class:`Replayed`. A call runs ``dualad.jit(d)``: the first call with a
signature traces ``d`` and compiles it, later calls replay the program (its guards checked,
so a replay is never stale; see :mod:`dualad.interpreters.staging.api`).

Falling back. ``d`` may do what a trace cannot follow, though it runs without jit: when the
jitted call raises, ``d`` runs without jit on the same arguments.

* ``d`` raises too: that error is raised (the one the user had before jit was the default),
  and nothing changes.
* ``d`` returns: its value is the answer, and this wrapper runs without jit from now on
  for arguments of that signature (shapes, dtypes), after one :class:`JitFallbackWarning`
  (the first time any signature falls back) naming the function and what jit said.

A function whose guards keep failing already falls back inside ``dualad.jit`` (with a
:class:`dualad.JitRetraceWarning`). ``jit=False`` opts out: every call runs ``d`` itself.

What changes for a function with side effects: under jit, ``f`` runs when a signature is
traced, not at every call (a counter ``f`` increments, a print, a list it appends to see the
trace only). docs/jit.md says this in one place.
"""
from __future__ import annotations

import warnings

from .api import Jitted
from . import tracelog

__all__ = ["Replayed", "JitFallbackWarning"]


class JitFallbackWarning(UserWarning):
    """A prepared derivative could not be traced by ``dualad.jit`` and runs without it.

    Warned once per prepared object (a plan, a ``jacobians.optimize`` helper), the first
    time a call's trace fails while the function itself runs; calls with those argument
    shapes and types run without jit from then on, with the same values. Pass ``jit=False``
    to the helper to choose that and silence the warning.
    """


class Replayed:
    """``fun`` through ``dualad.jit``, falling back to ``fun`` itself (see the module).

    A call runs the program traced for its signature (tracing ``fun`` on the first call
    of a signature); when that raises and ``fun`` itself does not, ``fun``'s value is
    returned and the signature runs without jit from then on, after one
    :class:`JitFallbackWarning`; when ``fun`` raises too, its own error is raised.

    Parameters
    ----------
    fun : callable
        The derivative function to replay (arrays and floats in, arrays out).
    name : str
        How messages name it, e.g. ``"jacobian_fn(rhs)"``.
    jit : bool, default True
        ``False`` runs ``fun`` at every call.

    Attributes
    ----------
    fell_back : str or None
        ``None`` while every signature uses the jit path; else what the first failed
        trace raised.
    fallbacks : dict
        ``{signature: what the trace raised}`` for the signatures (shapes, dtypes) that
        run without jit. A call of another signature still tries jit: one odd call (an
        integer array, an argument jit cannot take) does not slow down the others.
    """

    __slots__ = ("fun", "name", "jitted", "fell_back", "fallbacks", "__weakref__")

    def __init__(self, fun, name, jit=True):
        if jit not in (True, False):
            raise TypeError(f"{name}: jit= takes True or False, got {jit!r}")
        self.fun = fun
        self.name = name
        self.jitted = Jitted(fun) if jit else None
        if jit:
            self.jitted.name = name    # messages and the program name the helper
        self.fell_back = None
        self.fallbacks = {}

    def __call__(self, *args):
        jitted = self.jitted
        if jitted is None:
            return self.fun(*args)
        if self.fallbacks and self._key(args) in self.fallbacks:
            return self.fun(*args)
        try:
            return jitted(*args)
        except Exception as e:   # noqa: BLE001  (decided below: run without jit)
            jit_error = e
        try:
            out = self.fun(*args)
        except Exception as e:
            e.__context__ = None      # the user's own error, as without jit
            raise
        self._fall_back(jit_error, self._key(args))
        return out

    def _key(self, args):
        """The jit signature of ``args`` (arguments jit cannot key share one)."""
        try:
            return self.jitted._split(args, {})[0]
        except TypeError:
            return "unkeyable arguments"

    def _fall_back(self, error, key):
        what = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        first = self.fell_back is None
        self.fallbacks[key] = what
        if not first:
            return
        self.fell_back = what
        tracelog.runs_eagerly(self.name, f"could not trace it ({what[:300]})", tracelog.WARNING)
        warnings.warn(
            f"{self.name}: dualad.jit could not trace it ({what[:300]}), though it runs "
            f"without jit; for arguments of these shapes and types it now runs without jit "
            f"(slower, same values). Pass jit=False to choose this yourself and silence this "
            f"warning", JitFallbackWarning, stacklevel=3)

    def cache_info(self):
        """Return the jitted function's traces per signature.

        Returns
        -------
        dict
            ``{signature: number of traces}`` (``{}`` without jit).
        """
        return {} if self.jitted is None else self.jitted.cache_info()

    def __repr__(self):
        how = ("without jit" if self.jitted is None else
               f"fell back to eager: {self.fell_back}" if self.fell_back else "jit")
        return f"<Replayed {self.name} ({how})>"

"""PyTorch's keyword spellings on :class:`dualad.autograd.Variable`'s reductions.

A Variable's methods are NumPy's (``x.sum(axis=1, keepdims=True)``, from
:mod:`dualad.frontend.dispatch`); code written for PyTorch or OneFlow spells the same reductions
``x.sum(dim=1, keepdim=True)``. On a Variable ``dim`` is ``axis`` and ``keepdim`` is
``keepdims``; where PyTorch's result differs from NumPy's for the same call the PyTorch
spelling gets PyTorch's meaning or an error, never NumPy's result under PyTorch's name:

- ``x.max(dim=d)`` / ``x.min(dim=d)`` return ``(values, indices)`` as PyTorch does (a
  named tuple; ``indices`` a plain integer array), where ``x.max(axis=d)`` is NumPy's
  values alone;
- ``x.std(dim=d)`` / ``x.var(dim=d)`` (or ``keepdim=``): PyTorch divides by n - 1 by
  default, NumPy by n; the call must say which (``correction=``, ``unbiased=`` or
  ``ddof=``).

Giving both spellings of one argument (``axis=`` and ``dim=``) raises, naming both. The
functional face (traced values inside ``dualad.grad``) keeps NumPy's keywords only: there
``x`` stands for a NumPy array, which has no ``dim=``.
"""
from __future__ import annotations

from collections import namedtuple

from .core.tracer import Box, shape_of

__all__ = ["install", "MaxMin"]

MaxMin = namedtuple("MaxMin", ["values", "indices"])   # PyTorch's torch.return_types.max

# The reductions (and axis-taking methods) a Variable has, with PyTorch's spelling.
_METHODS = ("sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod",
            "argmax", "argmin", "all", "any", "squeeze")
_ARG = {"max": "argmax", "min": "argmin"}


def _both(name, x, first, second):
    return TypeError(f"Variable.{name}: both {first} and {second} were given (shape "
                     f"{shape_of(x)}); dim/keepdim are PyTorch's names for NumPy's "
                     f"axis/keepdims: pass one of them")


def _numpy_keywords(name, x, args, kwargs):
    """``kwargs`` with ``dim``/``keepdim`` renamed ``axis``/``keepdims``."""
    kwargs = dict(kwargs)
    if "dim" in kwargs:
        dim = kwargs.pop("dim")
        if "axis" in kwargs:
            raise _both(name, x, f"axis={kwargs['axis']!r}", f"dim={dim!r}")
        if args:
            raise _both(name, x, f"a positional axis {args[0]!r}", f"dim={dim!r}")
        kwargs["axis"] = tuple(dim) if isinstance(dim, list) else dim
    if "keepdim" in kwargs:
        keepdim = kwargs.pop("keepdim")
        if "keepdims" in kwargs:
            raise _both(name, x, f"keepdims={kwargs['keepdims']!r}", f"keepdim={keepdim!r}")
        kwargs["keepdims"] = keepdim
    return kwargs


def _ddof(name, x, kwargs, torch_spelled):
    """std/var: PyTorch's ``correction=``/``unbiased=`` as NumPy's ``ddof=``; with ``dim=``
    and none of the three, an error (the two libraries' defaults differ)."""
    given = [k for k in ("ddof", "correction", "unbiased") if k in kwargs]
    if len(given) > 1:
        raise TypeError(f"Variable.{name}: both {given[0]}= and {given[1]}= were given (shape "
                        f"{shape_of(x)}); they say the same thing (ddof=1 is correction=1 is "
                        f"unbiased=True): pass one")
    if "correction" in kwargs:
        kwargs["ddof"] = kwargs.pop("correction")
    elif "unbiased" in kwargs:
        kwargs["ddof"] = 1 if kwargs.pop("unbiased") else 0
    elif torch_spelled:
        raise TypeError(f"Variable.{name}(dim=...) on shape {shape_of(x)}: PyTorch's {name} "
                        f"divides by n - 1 by default (correction=1), NumPy's by n (ddof=0); "
                        f"say which: correction=1 (or unbiased=True) for PyTorch's, ddof=0 "
                        f"for NumPy's")
    return kwargs


def _method(name):
    def method(self, *args, **kwargs):
        base = getattr(Box, name)   # NumPy's method (installed by dualad.frontend.dispatch)
        if not kwargs:
            return base(self, *args)
        torch_spelled = "dim" in kwargs or "keepdim" in kwargs
        if torch_spelled:
            kwargs = _numpy_keywords(name, self, args, kwargs)
        if name in ("std", "var"):
            kwargs = _ddof(name, self, dict(kwargs), torch_spelled)
        if name in _ARG and torch_spelled and kwargs.get("axis") is not None:
            arg = getattr(Box, _ARG[name])
            return MaxMin(base(self, **kwargs), arg(self, **kwargs))
        return base(self, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = f"Variable.{name}"
    method.__doc__ = (f"``x.{name}(...)``: NumPy's ``x.{name}``, PyTorch's ``dim=``/``keepdim=`` "
                      f"accepted too (dualad._autograd_methods).")
    return method


def install(cls):
    """Give ``cls`` (Variable) the methods of :data:`_METHODS` with both spellings."""
    for name in _METHODS:
        setattr(cls, name, _method(name))

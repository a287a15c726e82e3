"""JAX's keywords of ``jacfwd``, ``jacrev``, ``jacobian`` and ``hessian``: ``has_aux``, ``holomorphic``.

``has_aux=True``: ``f(*args)`` returns ``(out, aux)``; the result is ``(J, aux)``, with
``J`` the Jacobian (or Hessian) of ``out`` alone and ``aux`` the value ``f`` returned
beside it, not differentiated (as ``jax.jacfwd(f, has_aux=True)``). ``f`` is evaluated
once more, on the point itself, for ``aux`` (the sweeps see ``out`` only).

``holomorphic=True``: the differentiated arguments must be complex; the Jacobian is then
the complex one, ``d out / d z`` (dualad differentiates complex code holomorphically
always: ``docs/complex.md``). ``holomorphic=False`` (default) changes nothing.

``allow_int=True`` (``jax.jacrev``'s): refused, naming what to write instead (integer
inputs have no derivative here); ``allow_int=False`` changes nothing.
"""
from __future__ import annotations

import numpy as np

from dualad.extend import flatten

__all__ = ["with_jax_keywords"]


def with_jax_keywords(api, name, public, f, args, kwargs):
    """``public(f, *args, **kwargs)`` with JAX's ``has_aux``, ``holomorphic`` and
    ``allow_int`` taken out of ``kwargs`` and applied."""
    kwargs = dict(kwargs)
    has_aux = kwargs.pop("has_aux", False)
    holomorphic = kwargs.pop("holomorphic", False)
    if kwargs.pop("allow_int", False):
        raise TypeError(
            f"jacobians.{api}({name}, allow_int=True): integer inputs have no derivative "
            f"in dualad (JAX gives float0 zeros); cast them (x.astype(float)) or leave them "
            f"out of argnums")
    return _applied((api, name), public, f, args, kwargs, has_aux, holomorphic)


def _applied(names, public, f, args, kwargs, has_aux, holomorphic):
    api, name = names
    if not args:
        def curried(*a):
            return _applied(names, public, f, a, kwargs, has_aux, holomorphic)
        curried.__name__ = f"{api}({name})"
        return curried
    if holomorphic:
        _check_complex(names, args, kwargs.get("argnums", 0))
    if not has_aux:
        return public(f, *args, **kwargs)
    aux = _aux_pair(names, f(*args))[1]

    def out_of(*a):
        return _aux_pair(names, f(*a))[0]
    out_of.__name__ = name
    return public(out_of, *args, **kwargs), aux


def _aux_pair(names, res):
    api, name = names
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        got = f"a {type(res).__name__}" + (f" of {len(res)} item(s)"
                                           if isinstance(res, (tuple, list)) else "")
        raise ValueError(f"jacobians.{api}({name}, has_aux=True): {name} must return "
                         f"a pair (output, aux), got {got}; return `out, aux`, or drop "
                         f"has_aux=True")
    return res


def _check_complex(names, args, argnums):
    api, name = names
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not 0 <= i < len(args):
            continue   # the planner names the bad argnums
        for leaf in flatten(args[i])[0]:
            if not np.iscomplexobj(leaf):
                raise TypeError(
                    f"jacobians.{api}({name}, holomorphic=True): argument {i} has "
                    f"dtype {np.asarray(leaf).dtype}, not complex; give complex inputs "
                    f"(x.astype(complex)) or drop holomorphic=True")

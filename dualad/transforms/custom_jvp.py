r"""``custom_jvp``: a function with a JVP rule of its own, as in JAX.

The rule is the pushforward :math:`(x, \dot x) \mapsto (f(x),\ \dot y = \sum_i
\partial f/\partial x_i\,\dot x_i)`; reverse mode transposes it (one sweep through the
rule at :math:`\dot x = 0`). The machinery shared with ``custom_vjp``: :mod:`.custom_rules`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .api import vjp as _vjp
from ..core.tree import describe, flatten_like
from .custom_rules import (F, P, R, CustomFunction, as_dtype, is_inexact, pack, tangent_dtype,
                           tree_add, tree_zeros, zero_tangent)

__all__ = ["custom_jvp"]


class custom_jvp(CustomFunction[P, R]):
    r"""A function with its own JVP rule, for every transformation (JAX's ``custom_jvp``).

    Decorate :math:`f`, then give its rule with :meth:`defjvp` (or one tangent map per
    argument with :meth:`defjvps`). The rule receives the primal arguments and their
    tangents, pytrees like the arguments, and returns ``(primal_out, tangent_out)``:
    :math:`(f(x),\ \sum_i \partial f/\partial x_i\,\dot x_i)`. Forward mode calls it;
    reverse mode transposes it (the tangent output must be linear in the tangents, as a
    JVP is); the rule itself, written in NumPy calls, is differentiated for higher
    orders. A call outside any transformation just runs ``fun``.

    Parameters
    ----------
    fun : callable
        The function: positional arguments (pytrees of arrays, or the
        ``nondiff_argnums`` ones), a pytree of arrays out. Keyword arguments of a call
        are bound to positions by ``fun``'s signature.
    nondiff_argnums : tuple of int, optional
        Positions of arguments that are not differentiated (ints, strings, callables,
        constant arrays); the rule receives them first: ``jvp(*nondiff, primals,
        tangents)``.

    Returns
    -------
    custom_jvp
        The function, called like ``fun``.

    See Also
    --------
    custom_vjp : The reverse-mode counterpart.
    dualad.primitive : Rules for a primitive (``defjvp``/``defvjp``/``defderiv``).

    Examples
    --------
    :math:`\log(1 + e^x)` with the stable derivative :math:`\sigma(x)`:

    >>> @dualad.custom_jvp
    ... def softplus(x):
    ...     return np.logaddexp(0.0, x)
    >>> @softplus.defjvp
    ... def softplus_jvp(primals, tangents):
    ...     (x,), (x_dot,) = primals, tangents
    ...     return softplus(x), x_dot / (1.0 + np.exp(-x))
    >>> print(float(dualad.grad(softplus)(0.0)))
    0.5
    >>> print(float(dualad.grad(dualad.grad(softplus))(0.0)))
    0.25
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: int | Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self._jvps: tuple[Any, ...] | None = None

    def defjvp(self, jvp: F) -> F:
        """Give the JVP rule; usable as a decorator.

        Parameters
        ----------
        jvp : callable
            ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``:
            ``primals`` and ``tangents`` are tuples with one entry per differentiable
            positional argument (pytrees like it); ``tangent_out`` has the output's
            structure and shapes and is linear in ``tangents``.

        Returns
        -------
        callable
            ``jvp`` itself.
        """
        if not callable(jvp):
            raise TypeError(f"custom_jvp function '{self.name}': defjvp expects a function "
                            f"jvp(primals, tangents), got {type(jvp).__name__}")
        self.jvp, self._jvps = jvp, None
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        r"""Give the JVP rule as one tangent map per differentiable argument.

        Parameters
        ----------
        *jvps : callable or None
            ``jvps[i](t_i, primal_out, *primals)``: argument :math:`i`'s contribution
            :math:`\partial f/\partial x_i\,\dot x_i` to the output tangent (``None``:
            the argument does not move the output). The contributions are summed.

        Returns
        -------
        None
        """
        if self.nondiff_argnums:
            raise TypeError(f"custom_jvp function '{self.name}': defjvps cannot be used with "
                            f"nondiff_argnums (as in JAX); give one rule with defjvp")
        self._jvps = tuple(jvps)

        def jvp(*args):
            primals, tangents = args
            out = self.fun(*primals)
            if len(self._jvps) != len(primals):
                raise TypeError(f"custom_jvp function '{self.name}': defjvps was given "
                                f"{len(self._jvps)} rule(s) but the call has "
                                f"{len(primals)} differentiable argument(s): give one rule "
                                f"(or None) per argument")
            total = None
            for rule, t in zip(self._jvps, tangents):
                if rule is None:
                    continue
                contrib = rule(t, out, *primals)
                total = contrib if total is None else tree_add(total, contrib)
            if total is None:
                total = tree_zeros(out)
            return out, total
        jvp.__name__ = f"{self.name}_jvps"
        self.jvp = jvp

    def _has_rule(self):
        return self.jvp is not None

    def _define_hint(self):
        return f"decorate its rule with @{self.name}.defjvp (jvp(primals, tangents))"

    def _rule_functions(self):
        return (self.jvp,) if self._jvps is None else self._jvps

    def _primal(self, *leaves, call):
        return self._record_output(call, self.fun(*call.all_args(leaves)), "the function")

    def _tangent(self, call, leaves, tangents):
        """The packed output tangent the rule gives for full (zero-filled) ``tangents``."""
        primals = call.diff_args(leaves)
        tans = call.diff_args(tangents)
        res = self.jvp(*call.nondiff_values(), primals, tans)
        if res is None:
            raise TypeError(f"custom_jvp function '{self.name}': its JVP rule returned None "
                            f"(a missing return statement?); return (primal_out, "
                            f"tangent_out)")
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"custom_jvp function '{self.name}': its JVP rule must return a "
                            f"pair (primal_out, tangent_out), got {describe(res)}")
        primal_out, tangent_out = res
        rebuild, shapes, dtypes = call.out
        like = rebuild([0.0] * len(shapes))
        p_leaves = self._leaves_like(like, primal_out, "primal output of its JVP rule")
        t_leaves = self._leaves_like(like, tangent_out, "tangent output of its JVP rule")
        self._check_like(p_leaves, shapes, dtypes, "primal output", "the function's output")
        if any(t is None for t in t_leaves):
            t_leaves = [np.zeros(s, tangent_dtype(d)) if t is None else t
                        for t, s, d in zip(t_leaves, shapes, dtypes)]
        self._check_like(t_leaves, shapes, dtypes, "tangent output", "the function's output")
        self._check_levels(t_leaves, list(leaves) + list(tangents))
        return pack([as_dtype(t, d) for t, d in zip(t_leaves, dtypes)])

    def _leaves_like(self, like, tree, what):
        try:
            return flatten_like(like, tree, f"custom_jvp function '{self.name}'", what,
                                like_name="the function's output")
        except ValueError as e:
            raise TypeError(str(e)) from None

    def _jvp_all(self, tangents, ans, *leaves, call):
        full = [zero_tangent(v) if t is None else t for t, v in zip(tangents, leaves)]
        return self._tangent(call, leaves, full)

    def _vjp_all(self, ct, ans, *leaves, call):
        """The transpose of the (linear) JVP rule: one reverse sweep through it at zero
        tangents, seeded with the output cotangent ``ct``."""
        diff = [k for k, v in enumerate(leaves) if is_inexact(v)]
        zeros = [zero_tangent(v) for v in leaves]

        def linear(*ts):
            full = list(zeros)
            for k, t in zip(diff, ts):
                full[k] = t
            return self._tangent(call, leaves, full)

        if not diff:
            return [None] * len(leaves)
        _, pullback = _vjp(linear, *(zeros[k] for k in diff))
        cts = pullback(ct)
        out = [None] * len(leaves)
        for k, c in zip(diff, cts):
            out[k] = c
        return out

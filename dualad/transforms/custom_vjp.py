r"""``custom_vjp``: a function with a VJP rule of its own (``fwd``, ``bwd``), as in JAX.

``bwd(residuals, ct)`` gives one cotangent :math:`\bar x_i = (\partial f/\partial
x_i)^T \bar y` per positional argument; reverse mode only. The machinery shared with
``custom_jvp``: :mod:`.custom_rules`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..core.tracer import shape_of, unguarded_value
from ..core.tree import describe, flatten, flatten_like
from .custom_rules import P, R, CustomFunction, as_dtype, holds_box, is_inexact, unpack

__all__ = ["custom_vjp"]


class custom_vjp(CustomFunction[P, R]):
    r"""A function with its own VJP rule, for reverse mode (JAX's ``custom_vjp``).

    Decorate :math:`f`, then give :meth:`defvjp` two functions: ``fwd(*args)`` returns
    ``(primal_out, residuals)`` (any pytree the pullback needs), and ``bwd(residuals,
    ct)`` returns a tuple with one cotangent :math:`\bar x_i = (\partial f/\partial
    x_i)^T \bar y` per differentiable positional argument (a pytree like it, or
    ``None`` for a zero). ``grad``, ``vjp``, ``jacrev``, ``vmap``, ``jit`` and
    ``checkpoint`` use it; forward mode (``jvp``, ``jacfwd``) raises (use
    :class:`custom_jvp`). A ``bwd`` written in NumPy calls is differentiated again under
    reverse-over-reverse (``jacrev(grad(f))``). A call outside any transformation just
    runs ``fun``.

    Parameters
    ----------
    fun : callable
        The function: positional arguments (pytrees of arrays, or the
        ``nondiff_argnums`` ones), a pytree of arrays out.
    nondiff_argnums : tuple of int, optional
        Positions of arguments that are not differentiated; ``fwd`` receives every
        argument in its place, ``bwd`` receives them first: ``bwd(*nondiff, residuals,
        ct)``, and returns cotangents for the others only.

    Returns
    -------
    custom_vjp
        The function, called like ``fun``.

    See Also
    --------
    custom_jvp : The forward-mode rule, which reverse mode transposes.
    dualad.Function : The PyTorch-style spelling.

    Examples
    --------
    A gradient clipped to norm 1 on the way back:

    >>> @dualad.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def clip_fwd(x):
    ...     return x, None
    >>> def clip_bwd(res, ct):
    ...     return (ct / np.maximum(1.0, np.linalg.norm(ct)),)
    >>> clip_gradient.defvjp(clip_fwd, clip_bwd)
    >>> print(dualad.grad(lambda x: np.sum(3.0 * clip_gradient(x)))(np.zeros(2)))
    [0.70710678 0.70710678]
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: int | Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Give the VJP rule as a forward pass and a backward pass.

        Parameters
        ----------
        fwd : callable
            ``fwd(*args) -> (primal_out, residuals)``, with the same arguments as the
            function (nondiff ones included, in place).
        bwd : callable
            ``bwd(*nondiff_args, residuals, ct) -> cotangents``: a tuple with one entry
            per differentiable positional argument, a pytree like that argument (or
            ``None`` for a zero); ``ct`` has the output's structure.

        Returns
        -------
        None
        """
        for what, fn in (("fwd", fwd), ("bwd", bwd)):
            if not callable(fn):
                raise TypeError(f"custom_vjp function '{self.name}': defvjp expects "
                                f"functions fwd and bwd, got {type(fn).__name__} as {what}")
        self.fwd, self.bwd = fwd, bwd

    def _has_rule(self):
        return self.fwd is not None

    def _define_hint(self):
        return f"call {self.name}.defvjp(fwd, bwd)"

    def _rule_functions(self):
        return (self.fwd, self.bwd)

    def _forward(self, call, leaves):
        """(packed output, residuals) from ``fwd`` on ``leaves``."""
        res = self.fwd(*call.all_args(leaves))
        if res is None:
            raise TypeError(f"custom_vjp function '{self.name}': its fwd returned None (a "
                            f"missing return statement?); return (primal_out, residuals)")
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"custom_vjp function '{self.name}': its fwd must return a pair "
                            f"(primal_out, residuals), got {describe(res)}")
        return res

    def _primal(self, *leaves, call):
        out, residuals = self._forward(call, leaves)
        packed = self._record_output(call, out, "fwd")
        if holds_box(residuals):
            raise self._closure_error(None)
        call.saved = (leaves, residuals)
        return packed

    def _jvp_all(self, tangents, ans, *leaves, call):
        raise TypeError(f"can't apply forward-mode differentiation (jvp, jacfwd, hessian's "
                        f"forward pass) to '{self.name}', a custom_vjp function: it has only "
                        f"a reverse-mode rule. Use reverse mode (grad, vjp, jacrev, "
                        f"jacobian(f, mode='rev'), hessian(f, mode='reverse-over-reverse')), "
                        f"or define '{self.name}' with dualad.custom_jvp instead, whose rule "
                        f"serves both modes")

    def _vjp_all(self, ct, ans, *leaves, call):
        saved = call.saved
        if saved is not None and len(saved[0]) == len(leaves) and all(
                a is b for a, b in zip(saved[0], leaves)):
            residuals = saved[1]          # fwd ran on these very (plain) values
        else:                             # traced by an outer level: run fwd at that level
            _, residuals = self._forward(call, leaves)
        rebuild, shapes, dtypes = call.out
        ct_tree = unpack(call, ct)
        cts = self.bwd(*call.nondiff_values(), residuals, ct_tree)
        if cts is None:
            raise TypeError(f"custom_vjp function '{self.name}': its bwd returned None (a "
                            f"missing return statement?); return a tuple with one "
                            f"cotangent per differentiable argument")
        diff_args = call.diff_args(leaves)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,) if len(diff_args) == 1 else cts
        if not isinstance(cts, (tuple, list)) or len(cts) != len(diff_args):
            got = len(cts) if isinstance(cts, (tuple, list)) else describe(cts)
            raise TypeError(f"custom_vjp function '{self.name}': its bwd returned {got} "
                            f"cotangent(s), but '{self.name}' has {len(diff_args)} "
                            f"differentiable argument(s): return a tuple with one cotangent "
                            f"(or None) per argument")
        full = []
        for i, (c, arg) in enumerate(zip(cts, diff_args)):
            a_leaves = flatten(arg)[0]
            if c is None:
                full.extend([None] * len(a_leaves))
                continue
            try:
                c_leaves = flatten_like(arg, c, f"custom_vjp function '{self.name}'",
                                        f"the cotangent bwd returned for argument {i}",
                                        like_name=f"argument {i}")
            except ValueError as e:
                raise TypeError(str(e)) from None
            full.extend(c_leaves)
        picked = [full[k] for k in call.slots]
        shapes_in = [shape_of(v) for v in leaves]
        dtypes_in = [np.result_type(unguarded_value(v)) for v in leaves]
        self._check_like(picked, shapes_in, dtypes_in, "cotangent", "the argument")
        self._check_levels(picked, list(leaves) + [ct] + flatten(residuals)[0])
        return [None if c is None or not is_inexact(v) else as_dtype(c, d)
                for c, v, d in zip(picked, leaves, dtypes_in)]


# -- helpers ----------------------------------------------------------------------------

"""Custom rules: the ``primitive`` decorator and PyTorch-style ``Function``.

A user's primitive is interpreted exactly like a built-in one::

    @dualad.primitive
    def logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    logsumexp.defvjp(lambda g, ans, x: g * np.exp(x - ans))
    logsumexp.defjvp(lambda t, ans, x: np.sum(t * np.exp(x - ans), axis=-1))

Rules receive the tangent ``t`` (or cotangent ``g``), the output ``ans`` and
the inputs. Written with NumPy calls on their arguments, rules are
differentiable again. For elementwise scalar functions one derivative per
argument gives both rules: ``f.defderiv(lambda ans, x: cos(x))``.

Every rule given to ``defjvp``/``defvjp`` is checked when it runs (see
:func:`rule_guard`): a cotangent must have its argument's shape and a tangent
the output's, or the error names the primitive, the argument and both shapes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ..core.tracer import primal_value, shape_of
from ..core.primitive import Primitive

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["primitive", "Function", "FunctionCtx", "rule_guard"]


@overload
def primitive(fn: Callable[..., Any], *, name: str | None = None,
              sympy: Callable[..., Any] | None = None) -> Primitive: ...
@overload
def primitive(fn: None = None, *, name: str | None = None,
              sympy: Callable[..., Any] | None = None
              ) -> Callable[[Callable[..., Any]], Primitive]: ...
def primitive(fn: Callable[..., Any] | None = None, *, name: str | None = None,
              sympy: Callable[..., Any] | None = None
              ) -> Primitive | Callable[[Callable[..., Any]], Primitive]:
    r"""Declare ``fn``, a function of plain arrays, as a primitive with its own rules.

    The returned :class:`dualad.extend.Primitive` computes ``fn`` on plain values
    and is interpreted like a built-in one by every transformation, which then
    never looks inside ``fn``: its derivatives come from the rules you attach.
    With :math:`y = f(x_0, x_1, \dots)` (``ans``), the rule for argument
    :math:`i` is

    - ``prim.defvjp(rule_0, rule_1, ...)``, reverse mode:
      ``rule_i(g, ans, *args) =`` :math:`\bar y \, \partial f/\partial x_i`, the
      cotangent of argument :math:`i`, in that argument's shape (summed over the
      axes broadcasting added);
    - ``prim.defjvp(rule_0, rule_1, ...)``, forward mode:
      ``rule_i(t, ans, *args) =`` :math:`\partial f/\partial x_i \, \dot x_i`, a
      tangent of the output (forward mode sums the arguments' contributions);
    - ``prim.defderiv(d_0, d_1, ...)``, for an elementwise function: the partial
      derivatives ``d_i(ans, *args) =`` :math:`\partial y/\partial x_i`, from
      which both rules are built.

    ``None`` from a rule stands for a zero. Every rule is checked when it runs: a
    cotangent of the wrong shape (a forgotten sum over broadcast axes, say) or a
    complex result of a real map raises an error naming the primitive, the
    argument and both shapes. Rules written with NumPy calls on their arguments
    are themselves differentiable, so higher derivatives work. A direction with
    no rule raises ``NotImplementedError`` when a transformation needs it.

    Parameters
    ----------
    fn : callable, optional
        The function of plain arrays (its arguments positional, the
        differentiable ones first). Omitted, ``primitive`` returns a decorator,
        for ``@dualad.primitive(name=...)``.
    name : str, optional
        The primitive's name in error messages and reports; default ``fn``'s
        qualified name.
    sympy : callable, optional
        ``sympy(sp, *args)`` builds the same value from SymPy objects, for the
        symbolic oracle (:mod:`dualad.verification`).

    Returns
    -------
    dualad.extend.Primitive or callable
        The primitive, called like ``fn`` and carrying ``defjvp``, ``defvjp``
        and ``defderiv``; or a decorator making one, when ``fn`` is omitted.

    See Also
    --------
    dualad.Function : The PyTorch-style class with ``forward``/``backward``.
    dualad.verification.check_grads : Check the rules against finite differences.

    Examples
    --------
    A numerically stable log-sum-exp with hand-written rules,
    :math:`\partial/\partial x_i \log\sum_j e^{x_j} = e^{x_i - y}`:

    >>> @dualad.primitive
    ... def logsumexp(x):
    ...     m = np.max(x)
    ...     return m + np.log(np.sum(np.exp(x - m)))
    >>> _ = logsumexp.defvjp(lambda g, ans, x: g * np.exp(x - ans))
    >>> _ = logsumexp.defjvp(lambda t, ans, x: np.sum(t * np.exp(x - ans), axis=-1))
    >>> x = np.array([0.0, np.log(3.0)])
    >>> print(dualad.grad(logsumexp)(x))
    [0.25 0.75]
    >>> y, dy = dualad.jvp(logsumexp, (x,), (np.array([1.0, 0.0]),))
    >>> print(float(np.round(dy, 12)))
    0.25

    An elementwise function by its derivative, differentiable twice:

    >>> @dualad.primitive
    ... def cube(x):
    ...     return x ** 3
    >>> _ = cube.defderiv(lambda ans, x: 3 * x ** 2)
    >>> print(float(dualad.grad(cube)(2.0)), float(dualad.derivative(cube, 2)(2.0)))
    12.0 12.0
    """
    if fn is None:
        return lambda f: primitive(f, name=name, sympy=sympy)
    # Every defjvp/defvjp rule is wrapped in a shape check (see rule_guard).
    prim = Primitive(name or getattr(fn, "__qualname__", repr(fn)), fn, sympy=sympy,
                     rule_guard=rule_guard, wraps=fn, doc=fn.__doc__)
    # Rules written for one direction are mapped over batches of tangents/cotangents
    # (vector mode, batched sweeps); defderiv's rules broadcast and switch this back on.
    prim.batch_rules = False
    return prim


def rule_guard(prim: Primitive, rule: Callable[..., Any], argnum: int,
               kind: str) -> Callable[..., Any]:
    """``rule`` (a user's JVP or VJP rule for argument ``argnum``) checked on every call.

    The contract (the same as :class:`Function`'s ``backward``/``jvp``):

    - a VJP returns the cotangent of argument ``argnum`` in that argument's shape (behind
      the cotangent's batch axes, if the rule is given any): a rule that forgot to sum
      over broadcast axes, or returns a scalar for an array, raises;
    - a JVP returns a tangent of the output's shape (behind the tangent's batch axes);
    - ``None`` is a zero; the dtype is free (float32 or float64), and a complex
      cotangent of a real argument is accepted when the output is complex (its real
      part is the cotangent, under the pairing ⟨u, v⟩ = Re Σ u·v), but a real
      primitive's rule that turns a real (co)tangent complex raises.

    The check compares two shape tuples (works on boxes too: ``shape_of``), negligible
    next to the rule itself."""
    def checked_vjp(ct, ans, *args, **params):
        g = rule(ct, ans, *args, **params)
        if g is None or type(ans) in _CONTAINERS:
            return g
        x = args[argnum]
        want, nb = _behind_batch(ct, ans, x)   # x's shape, behind ct's batch axes
        got = g.shape if type(g) is _ARRAY else shape_of(g)
        if got != want:
            raise ValueError(_shape_message(prim.name, "VJP", argnum, got, want, shape_of(x), nb))
        if type(g) is _ARRAY and g.dtype.kind == "c" or type(g) in _COMPLEX:
            _check_kind(prim.name, "VJP", argnum, g, ct, x, ans)
        return g

    def checked_jvp(t, ans, *args, **params):
        out = rule(t, ans, *args, **params)
        if out is None or type(ans) in _CONTAINERS:
            return out
        x = args[argnum]
        want, nb = _behind_batch(t, x, ans)    # the output's shape, behind t's batch axes
        got = out.shape if type(out) is _ARRAY else shape_of(out)
        if got != want:
            raise ValueError(_shape_message(prim.name, "JVP", argnum, got, want, shape_of(ans),
                                            nb))
        if type(out) is _ARRAY and out.dtype.kind == "c" or type(out) in _COMPLEX:
            _check_kind(prim.name, "JVP", argnum, out, t, ans, x)
        return out

    checked = checked_vjp if kind == "vjp" else checked_jvp
    checked.__wrapped__ = rule
    return checked


def _behind_batch(seed, primal, target):
    """The shape a rule must return, and the number of batch axes: ``target``'s shape
    behind the leading axes ``seed`` (a tangent or cotangent) has beyond ``primal``'s
    (the value it perturbs). Plain arrays are read directly: the guard runs every call."""
    want = target.shape if type(target) is _ARRAY else shape_of(target)
    nb = (seed.ndim if type(seed) is _ARRAY else len(shape_of(seed))) - \
        (primal.ndim if type(primal) is _ARRAY else len(shape_of(primal)))
    return (shape_of(seed)[:nb] + want if nb else want), nb


def _shape_message(name, kind, argnum, got, want, primal_shape, nb):
    what, of = ("cotangent", f"argument {argnum}") if kind == "VJP" else \
        ("tangent", "the output")
    batch = f" behind the {nb} batch axes {want[:nb]}" if nb else ""
    hint = ""
    if kind == "VJP" and len(got) >= len(want) and _broadcasts_to(want, got):
        hint = (f" Argument {argnum} was broadcast against the others: sum the cotangent "
                f"over the broadcast axes (np.sum(g, axis=...), keepdims where the argument "
                f"has size 1) before returning it.")
    elif kind == "JVP" and _broadcasts_to(got, want):
        hint = f" Broadcast it to the output's shape: np.broadcast_to(..., {primal_shape})."
    return (f"the {kind} rule of primitive '{name}' for argument {argnum} returned a {what} "
            f"of shape {got}, but {of} has shape {primal_shape}: return a {what} of shape "
            f"{want}, the shape of {of}{batch}.{hint}")


_CONTAINERS = (tuple, list)   # several outputs: their rule returns a container


# Plain complex values: their kind is checked (a traced value's at the level where the
# rule runs on plain ones). Tested by ``type``: the guard runs on every rule call.
_COMPLEX = (complex, np.complex128, np.complex64)
_ARRAY = np.ndarray


def _broadcasts_to(small, big):
    try:
        return np.broadcast_shapes(small, big) == tuple(big)
    except ValueError:
        return False


def _is_complex(v):
    dtype = getattr(v, "dtype", None)
    if dtype is None:
        return type(v) is complex
    return getattr(dtype, "kind", "") == "c"


def _check_kind(name, kind, argnum, out, seed, primal, other):
    """A rule of a real map (real seed, real primal, real other side) cannot return a
    complex value: that is a bug in the rule, not an imaginary part riding along."""
    if _is_complex(out) and not (_is_complex(seed) or _is_complex(primal)
                                  or _is_complex(other)):
        what = "cotangent" if kind == "VJP" else "tangent"
        dtype = getattr(out, "dtype", "complex")
        raise TypeError(f"the {kind} rule of primitive '{name}' for argument {argnum} returned "
                        f"a complex {what} (dtype {dtype})"
                        f" for a real argument, output and seed: return a real {what} "
                        f"(np.real(...) if the imaginary part is known to vanish)")


class FunctionCtx:
    """The context object ``forward`` hands to ``backward`` and ``jvp``.

    Tensors saved with :meth:`save_for_backward` come back from
    :attr:`saved_tensors` as the inputs and output *of the level being
    differentiated*, so a ``backward`` written with NumPy operations is
    differentiable again (second order), as in PyTorch. A fresh context is made
    for every call of :meth:`dualad.Function.apply`.

    See Also
    --------
    dualad.Function : The class whose static methods receive it.

    Examples
    --------
    >>> class Square(dualad.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors   # the input, as the level being differentiated sees it
    ...         return 2 * x * g
    >>> print(float(dualad.grad(Square.apply)(3.0)))
    6.0
    >>> print(float(dualad.grad(dualad.grad(Square.apply))(3.0)))   # backward differentiated
    2.0
    """

    def __init__(self) -> None:
        self._saved = ()
        self._raw_inputs = ()
        self._raw_output = None
        self._view = None
        self._marked = ()     # mark_non_differentiable's: the output, or nothing

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep values computed in ``forward`` for ``backward`` and ``jvp``.

        Parameters
        ----------
        *tensors : array_like
            The inputs, the output or other values of ``forward``; a later call
            replaces the saved ones.
        """
        self._saved = tensors

    def mark_non_differentiable(self, *args: Any) -> None:
        """Declare ``forward``'s output not differentiable (PyTorch's marker).

        As in PyTorch, the output then carries no derivative: reverse mode sends
        zero cotangents to the inputs without calling ``backward``, forward mode
        gives a zero tangent without calling ``jvp``. Typical use: an output of
        indices or counts.

        Parameters
        ----------
        *args : array_like
            The output of ``forward``, the very object it returns. (A Function
            has one output: marking anything else raises ValueError when
            ``forward`` returns.)
        """
        self._marked = self._marked + args

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The values given to :meth:`save_for_backward`, as a tuple.

        Inside ``backward``/``jvp`` an input or the output saved in ``forward``
        comes back as the value of the level being differentiated (a traced value
        under a higher-order transformation), so rules stay differentiable.

        Returns
        -------
        tuple
            The saved values, in the order given.
        """
        if self._view is None:
            return self._saved
        vals, ans = self._view
        out = []
        for s in self._saved:
            if s is self._raw_output:
                out.append(ans)
                continue
            for raw, v in zip(self._raw_inputs, vals):
                if s is raw:
                    out.append(v)
                    break
            else:
                out.append(s)
        return tuple(out)


class Function:
    r"""Base class of PyTorch-style custom operations with hand-written derivatives.

    Subclass it with static methods ``forward(ctx, *inputs)`` (the value, on plain
    arrays) and ``backward(ctx, grad_output)`` returning one cotangent
    :math:`\bar y\,\partial y/\partial x_i` per input (or ``None`` for a zero),
    and optionally ``jvp(ctx, *tangents)`` returning the output tangent
    :math:`\sum_i \partial y/\partial x_i\,\dot x_i` for forward mode; then call
    ``MyFunction.apply(*inputs)``. The class becomes one primitive that every
    transformation interprets (``grad``, ``jvp``, ``vmap``, ``jit``, the
    imperative :mod:`dualad.autograd` tape). ``ctx`` is a
    :class:`dualad.autograd.FunctionCtx`:
    ``ctx.save_for_backward(...)`` in ``forward``, ``ctx.saved_tensors`` in the
    rules. A ``backward`` written with NumPy operations is differentiable again.

    A gradient of the wrong shape, or the wrong number of gradients, raises an
    error naming the class and the input; forward mode through a class without
    ``jvp`` raises ``NotImplementedError``.

    See Also
    --------
    dualad.primitive : The functional spelling (``defvjp``/``defjvp``).
    dualad.autograd.grad : The imperative gradient, as in PyTorch.

    Examples
    --------
    >>> class Exp(dualad.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = np.exp(x)
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (y,) = ctx.saved_tensors
    ...         return g * y
    >>> print(float(Exp.apply(0.0)), float(dualad.grad(Exp.apply)(0.0)))
    1.0 1.0

    ``backward`` used NumPy operations, so a second derivative works too:

    >>> print(float(dualad.grad(dualad.grad(Exp.apply))(0.0)))
    1.0
    """

    _prim = None

    if TYPE_CHECKING:
        # What a subclass defines, with its own parameters: any signature overrides these.
        forward: Callable[..., Any]
        backward: Callable[..., Any]
    else:
        @staticmethod
        def forward(ctx, *inputs):  # pragma: no cover - abstract
            """Compute the output from plain arrays; a subclass defines it.

            Parameters
            ----------
            ctx : FunctionCtx
                The context; save what the rules need with ``ctx.save_for_backward``.
            *inputs : array_like
                The arguments given to :meth:`apply`, as plain values.

            Returns
            -------
            array_like
                The output.
            """
            raise NotImplementedError

        @staticmethod
        def backward(ctx, *grad_outputs):  # pragma: no cover - abstract
            """Pull the output's cotangent back to the inputs; a subclass defines it.

            Parameters
            ----------
            ctx : FunctionCtx
                The context ``forward`` filled.
            *grad_outputs : array_like
                The output's cotangent (one), possibly with leading batch axes.

            Returns
            -------
            array_like or tuple
                One cotangent per input of ``forward``, each with its input's shape
                (``None`` for a zero); a single value for a single input.
            """
            raise NotImplementedError

    @classmethod
    def _primitive(cls):
        prim = cls.__dict__.get("_prim")
        if prim is None:
            prim = Primitive(cls.__name__, _forward_impl(cls), function_class=cls)
            prim.def_all(jvp=_function_jvp(cls), vjp=_function_vjp(cls))
            prim.batch_rules = False  # backward/jvp are written for one direction
            cls._prim = prim
        return prim

    @classmethod
    def apply(cls, *inputs: Any) -> Any:
        """Call the operation on ``inputs``, recorded by every active transformation.

        Parameters
        ----------
        *inputs : array_like
            Arrays, numbers or traced values, passed to ``forward``.

        Returns
        -------
        array_like
            ``forward``'s output (a traced value under a transformation).
        """
        return cls._primitive()(*inputs, ctx=FunctionCtx())

    def __call__(self, *inputs: Any) -> Any:
        return type(self).apply(*inputs)


def _forward_impl(cls):
    def impl(*inputs, ctx):
        ctx._raw_inputs = inputs
        ctx._marked = ()        # one ctx may see several forward calls (vmap's loop)
        out = cls.forward(ctx, *inputs)
        ctx._raw_output = out
        if not all(m is out for m in ctx._marked):
            raise ValueError(
                f"{cls.__name__}.forward: ctx.mark_non_differentiable was given a value "
                f"that forward does not return (a Function has one output, and only it "
                f"can be marked): pass the returned array itself, or leave the call "
                f"out and return a zero gradient from backward")
        return out
    return impl


def _function_vjp(cls):
    def vjp_all(ct, ans, *vals, ctx):
        if ctx._marked:                      # ctx.mark_non_differentiable(output)
            return tuple(None for _ in vals)
        ctx._view = (vals, ans)
        try:
            grads = cls.backward(ctx, ct)
        finally:
            ctx._view = None
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        if len(grads) != len(vals):
            raise TypeError(f"{cls.__name__}.backward returned {len(grads)} gradient(s), but "
                            f"{cls.__name__}.forward took {len(vals)} input(s): return one "
                            f"gradient (or None) per input")
        nb = len(shape_of(ct)) - len(shape_of(ans))
        for i, (g, v) in enumerate(zip(grads, vals)):
            if g is not None and shape_of(g) != shape_of(ct)[:nb] + shape_of(v):
                raise ValueError(f"{cls.__name__}.backward returned a gradient of shape "
                                 f"{shape_of(g)} for input {i} of shape {shape_of(v)}: " +
                                 _shape_message(cls.__name__, "VJP", i, shape_of(g),
                                                shape_of(ct)[:nb] + shape_of(v),
                                                shape_of(v), nb).split(": ", 1)[1])
        return grads
    return vjp_all


def _function_jvp(cls):
    def jvp_all(tangents, ans, *vals, ctx):
        rule = getattr(cls, "jvp", None)
        if rule is None and not ctx._marked:
            raise NotImplementedError(
                f"{cls.__name__} has no jvp: it is a Function with only a backward rule, so "
                f"forward mode cannot push tangents through it. Define a static "
                f"{cls.__name__}.jvp(ctx, *tangents), or use reverse mode")
        ref = next(t for t in tangents if t is not None)
        nb = len(shape_of(ref)) - len(shape_of(vals[tangents.index(ref)]))
        batch = shape_of(ref)[:nb]
        if ctx._marked:                      # ctx.mark_non_differentiable(output)
            return np.zeros(batch + shape_of(ans), dtype=np.result_type(primal_value(ans)))
        tangents = [t if t is not None else np.zeros(batch + shape_of(v))
                    for t, v in zip(tangents, vals)]
        ctx._view = (vals, ans)
        try:
            out = rule(ctx, *tangents)
        finally:
            ctx._view = None
        if out is not None and not isinstance(ans, (tuple, list)) and \
                shape_of(out) != batch + shape_of(ans):
            raise ValueError(f"{cls.__name__}.jvp returned a tangent of shape "
                             f"{shape_of(out)}, but the output has shape {shape_of(ans)}: "
                             f"return a tangent of shape {batch + shape_of(ans)}, the shape of "
                             f"the output" + (f" behind the batch axes {batch}" if batch else ""))
        return out
    return jvp_all

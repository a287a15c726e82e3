"""The functional face, as in HIPS autograd and JAX: jvp, vjp, grad, hvp.

    jvp(f, x, ẋ)   = (f(x), J ẋ)                 one forward sweep
    vjp(f, x)      = (f(x), ū ↦ ūᵀ J)            one recorded sweep, swept back per call
    grad(f)(x)     = ∇f(x) = Jᵀ 1                for scalar f
    hvp(f, x, v)   = ∇²f(x) v = ∂/∂ε ∇f(x + εv)  forward-over-reverse

A tangent (cotangent) may carry one leading batch axis beyond its primal's
(output's) shape: the whole batch of directions goes through ONE sweep.
"""
from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ..interpreters.forward.dual import Dual, JVPTrace, LazyJVPTrace
from ..core.onehot import OneHotBatch
from ..core.scaled import dense
from ..interpreters.reverse.sweep import backward_sweep
from ..interpreters.reverse.tape import Var, VJPTrace
from ..frontend.objects import holds_boxes, to_traced, traced_outputs
from ..core.tracer import Box, primal_value, shape_of, unguarded_value
from ..core.tree import describe, flatten, flatten_like, is_leaf, leaves_with_path, tree_map
from ..frontend.inplace import raise_assignment_error
from ..interpreters.reverse.versions import Constants, Stamps
from ..core.array_types import input_error, refused_kind

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Protocol, TypeAlias, TypeVar

    _X = TypeVar("_X")        # the differentiated argument's type: its gradient's type
    _R = TypeVar("_R")        # the function's output type
    _Aux = TypeVar("_Aux")    # has_aux=True: the auxiliary output's type
    _R_co = TypeVar("_R_co", covariant=True)
    _Aux_co = TypeVar("_Aux_co", covariant=True)
    # An array type: a derivative of an array (batched or not) is an array of the same type.
    # As in NumPy's own annotations, a 0-d result comes back as a NumPy scalar of its dtype.
    _A = TypeVar("_A", bound="np.ndarray[Any, Any]")
    # Any other primal: a number, a NumPy scalar, a container (pytree) of them.
    _NotArray: TypeAlias = (float | complex | np.generic | tuple[Any, ...] | list[Any]
                            | dict[Any, Any])

    # What grad(f) and value_and_grad(f) return (argnums=0): the gradient has the type of
    # the first argument (a float's gradient is a np.float64, a float; a list's a list).
    class _Grad(Protocol):
        def __call__(self, x: _X, /, *args: Any, **kwargs: Any) -> _X: ...

    class _GradAux(Protocol[_Aux_co]):
        def __call__(self, x: _X, /, *args: Any, **kwargs: Any) -> tuple[_X, _Aux_co]: ...

    class _ValueAndGrad(Protocol[_R_co]):
        def __call__(self, x: _X, /, *args: Any, **kwargs: Any) -> tuple[_R_co, _X]: ...

    class _ValueAndGradAux(Protocol[_R_co, _Aux_co]):
        def __call__(self, x: _X, /, *args: Any,
                     **kwargs: Any) -> tuple[tuple[_R_co, _Aux_co], _X]: ...

__all__ = ["jvp", "vjp", "grad", "value_and_grad", "hvp", "check_input",
           "check_output", "transposed_rule"]


# No gc.disable() around sweeps: the collector's switch is process-wide, and a pause in one
# thread undid a user's gc.disable() made in another. Long tapes pay for it (each recorded
# scalar operation leaves two GC-tracked objects, and full collections walk them): the 10^5-
# iteration scalar chain takes 57% more instructions (2-3x the wall time) than with the
# collector off, Rosenbrock 17% (BENCHMARKS.md). Users who want that speed may switch the
# collector off themselves (gc.disable()/gc.enable() around their call).


#: The reverse sweeps under a memory budget (``max_memory=``), filled in by
#: :mod:`dualad.transforms.remat_sweep` when dualad is imported: it records ``f`` with
#: :func:`dualad.jit`, whose staging layer itself builds on this module.
BUDGETED: dict[str, Callable[..., Any]] = {}


def _fname(f):
    return getattr(f, "__name__", type(f).__name__)


def check_input(api: str, argnum: int, x: Any, where: str = "",
                fname: str | None = None) -> Any:
    """Check a differentiable input and return it as a floating array.

    What ``grad``, ``jvp`` and ``vjp`` do to each argument they differentiate; a
    transformation of one's own (the planner's) does the same so users meet the same
    errors. A 0-d input becomes a NumPy scalar (cheaper scalar arithmetic); an object
    array of an outer trace's values (``np.array([x, y])``) is restacked into one traced
    array.

    Parameters
    ----------
    api : str
        The transformation's name, for the message (``"grad"``).
    argnum : int
        The argument's position, for the message.
    x : array_like or Box
        The input.
    where : str, optional
        More of the argument's path, for the message (``"['w']"``).
    fname : str, optional
        The differentiated function's name, for the message.

    Returns
    -------
    numpy.ndarray or numpy.generic or Box
        ``x`` as a floating or complex array (a traced value unchanged).

    Raises
    ------
    TypeError
        If ``x`` is ``None``, a string, an object array, or of any dtype but floating and
        complex (integer, boolean, text, dates, bfloat16); the message names ``api``, the
        argument, its dtype and shape, and says to cast to a floating dtype. Also for an
        ``np.matrix`` or a masked array (``np.ma``), whose arithmetic dualad does not
        follow (:mod:`dualad.core.array_types`): the message says what to pass instead.

    Examples
    --------
    >>> from dualad.extend import check_input
    >>> check_input("grad", 0, [1.0, 2.0])
    array([1., 2.])
    >>> check_input("grad", 0, np.arange(3))
    Traceback (most recent call last):
    ...
    TypeError: grad: argument 0 has dtype int... integer and boolean inputs are not ...
    """
    if isinstance(x, Box):
        kind = x.dtype.kind
        if kind not in "fc":   # an integer array mapped by vmap, say
            raise TypeError(f"{api}: argument {argnum}{where} has dtype {x.dtype} and "
                            f"(per-example) shape {x.shape}; integer and boolean inputs are "
                            f"not differentiable. Cast it to a floating dtype first, e.g. "
                            f"x.astype(float)")
        return x
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{api}: argument {argnum}{where} is {type(x).__name__} {x!r}; "
                        f"differentiable inputs are floating-point arrays or Python floats")
    if type(x) is not np.ndarray:   # an np.matrix or a masked array: refused
        kind = refused_kind(x)
        if kind is not None:
            raise input_error(kind, api, argnum, x, where, fname)
    arr = np.asarray(x)
    if arr.dtype == object:
        if arr.ndim and holds_boxes(arr):   # np.array([x, y]) of an outer trace's values
            return to_traced(arr)
        raise TypeError(f"{api}: argument {argnum}{where} is an object array of shape "
                        f"{arr.shape}; differentiable inputs are floating-point arrays")
    if arr.dtype.kind not in "fc":  # floating or complex
        raise _dtype_error(api, argnum, arr, where)
    # 0-d inputs become NumPy scalars: scalar arithmetic on them is several times cheaper.
    return arr[()] if arr.ndim == 0 else arr


def _dtype_error(api, argnum, arr, where):
    """The TypeError for an input of a dtype that is not NumPy's floating or complex."""
    dtype = arr.dtype
    head = f"{api}: argument {argnum}{where} has dtype {dtype} and shape {arr.shape}; "
    if dtype.kind in "iub":
        what = "integer and boolean inputs are not differentiable"
    elif dtype.kind == "V" and dtype.fields is None and dtype.name.startswith(("float", "bfloat")):
        # ml_dtypes' bfloat16, float8_*, ... (told by name: ml_dtypes is not imported)
        return TypeError(head + f"{dtype.name} (an extension dtype, from ml_dtypes) is not "
                         f"supported: dualad differentiates NumPy's own floating dtypes "
                         f"(float16, float32, float64, longdouble) and complex ones. Cast it "
                         f"first, e.g. x.astype(np.float32), and cast the result back if "
                         f"needed")
    else:
        what = "only floating-point and complex inputs are differentiable"
    return TypeError(head + f"{what}. Cast it to a floating dtype first, e.g. x.astype(float)")


def _as_direction(api, what, i, v, like):
    """A tangent/cotangent as an array of its primal's dtype; refuse a lossy cast."""
    if v is None:
        raise TypeError(f"{api}: {what} {i} is None; pass an array of its primal's shape "
                        f"{shape_of(like)} (np.zeros_like(x) for no perturbation)")
    arr = np.asarray(v)
    dtype = np.result_type(unguarded_value(like))
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{api}: {what} {i} has dtype {arr.dtype} and shape {arr.shape}; it "
                        f"must be numeric")
    if np.issubdtype(arr.dtype, np.complexfloating) and not np.issubdtype(dtype,
                                                                          np.complexfloating):
        raise TypeError(f"{api}: {what} {i} is complex ({arr.dtype}, shape {arr.shape}) but its "
                        f"primal is real ({dtype}); casting would drop the imaginary part")
    return arr.astype(dtype, copy=False) if np.issubdtype(dtype, np.inexact) else arr


def _note_leaf(e, what, tree, name):
    """Note on ``e`` where leaf ``what`` ("leaf 3": counted over all of ``tree``'s leaves)
    sits: ``(leaf 1 is primals[0].w)``, when ``tree`` is a container."""
    i = int(what.rsplit(" ", 1)[1])
    if not is_leaf(tree):
        paths = leaves_with_path(tree)
        if i < len(paths):
            e.add_note(f"({what} is {name}{paths[i][0]})")


def _zeros(shape, like):
    dtype = unguarded_value(like).dtype if hasattr(unguarded_value(like), "dtype") else float
    return np.zeros(shape, dtype=dtype if np.issubdtype(dtype, np.inexact) else float)


def _batch_of(api, what, value, primal, i):
    ps, vs = shape_of(primal), shape_of(value)
    if vs == ps:
        return ()
    if len(vs) == len(ps) + 1 and vs[1:] == ps:
        return vs[:1]
    batched = "(B, " + ", ".join(map(str, ps)) + ")" if ps else "(B,)"
    raise ValueError(f"{api}: {what} {i} has shape {vs}, but its primal has shape {ps}; it "
                     f"must have shape {ps}, or {batched} for a batch of B "
                     f"directions swept at once")


def check_output(api: str, f: Callable[..., Any], out: object) -> None:
    """Refuse what ``f`` can only have returned by mistake, which would otherwise give an
    all-zero derivative: None (a missing ``return``) and, from grad's scalar function, a
    string or a generator. A constant output stays legitimate (its derivative is zero), and
    jvp/vjp outputs may hold non-array leaves beside the arrays."""
    if out is None:
        raise TypeError(f"{api}: {_fname(f)} returned None; did it forget to `return`? Return "
                        f"the arrays to differentiate")
    if api == "grad" and (isinstance(out, (str, bytes)) or inspect.isgenerator(out)):
        raise TypeError(f"grad: {_fname(f)} returned a {type(out).__name__}, which has no "
                        f"derivative; return a floating-point scalar (a generator must be "
                        f"consumed first, e.g. np.sum(dualad.numpy.stack(list(gen))))")


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _check_arity(api, f, given, error):
    """``primals`` (a tuple or list) are ``f``'s positional arguments, one per entry, as
    in JAX. A list meant as one array, ``hvp(f, [1.0, 2.0], ...)``, calls a one-argument
    ``f`` with two: on the TypeError that follows, raise one that says how the primals
    were read and what to write (checked only then: a signature costs microseconds)."""
    if not isinstance(given, (tuple, list)):
        return
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):      # a builtin or ufunc without a signature
        return
    n = len(given)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in positional)
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    if required <= n and (varargs or n <= len(positional)):
        return
    kind = type(given).__name__
    takes = (f"{required} to {len(positional)}" if required != len(positional)
             else f"{len(positional)}") + (" or more" if varargs else "")
    if n < required:
        what = ": give primals and tangents one entry per argument"
    else:
        what = (f". For one array argument pass an array, "
                f"np.array({'[...]' if kind == 'list' else '(...)'}); for one {kind} "
                f"argument wrap it, (p,), and the tangents alike, (v,)")
    raise TypeError(f"{api}: primals is a {kind} of {n} entr{'y' if n == 1 else 'ies'}, read "
                    f"as {n} positional argument(s) of {_fname(f)} (one per entry, as in "
                    f"JAX), but {_fname(f)} takes {takes}{what}") from error


# --- forward mode -------------------------------------------------------------------
@overload
def jvp(f: Callable[..., _A], primals: Any, tangents: Any, *,
        lazy: bool = False) -> tuple[_A, _A]: ...
@overload
def jvp(f: Callable[..., _R], primals: Any, tangents: Any, *,
        lazy: bool = False) -> tuple[_R, Any]: ...
def jvp(f: Callable[..., Any], primals: Any, tangents: Any, *,
        lazy: bool = False) -> tuple[Any, Any]:
    r"""Evaluate ``f`` and its Jacobian-vector product in one forward sweep.

    Returns :math:`\bigl(f(x),\; J_f(x)\,v\bigr)`, where :math:`x` are the
    ``primals``, :math:`v` the ``tangents`` and :math:`J_f(x)` the Jacobian of
    ``f`` at :math:`x`. Each primitive pushes its input tangents forward with its
    JVP rule (dual numbers, :math:`\dot y = \partial f/\partial x \cdot \dot x`),
    so the cost is a small multiple of one evaluation of ``f`` and no tape is kept.

    Parameters
    ----------
    f : callable
        The function, called as ``f(*primals)``. It may return an array, a number
        or a tuple/list/dict (a pytree) of them.
    primals : tuple or array_like
        The point :math:`x`: a tuple with one entry per positional argument of
        ``f`` (each an array, a float or a pytree of them); a single non-tuple
        value stands for a one-argument call. Integer and boolean inputs are not
        differentiable and raise.
    tangents : tuple or array_like
        The direction :math:`v`, with the structure of ``primals``; each leaf has
        its primal's shape, or ``(B, *primal.shape)`` to push B directions
        through the one sweep (the output tangents then get the same leading
        axis). Use ``np.zeros_like(x)`` for an argument that is not perturbed.
    lazy : bool, default False
        Push a tangent forward only if an output's tangent depends on it (the
        same result, without the work on values no output needs, at the cost of
        keeping every intermediate value until the sweep ends). Worth it when
        ``f`` computes more than it returns, as a gradient does
        (forward-over-reverse: :func:`dualad.hvp`).

    Returns
    -------
    primals_out : object
        ``f(*primals)``, with ``f``'s output structure.
    tangents_out : object
        :math:`J_f(x)\,v`, with the output's structure and shapes (behind the
        batch axis B when the tangents carry one). An output that does not
        depend on the inputs gets a zero tangent.

    Raises
    ------
    TypeError
        If an input is an integer, boolean, string or ``None``; if a tangent is
        ``None``, not numeric, or complex for a real primal; if ``f`` returns
        ``None``.
    ValueError
        If the numbers of primals and tangents differ, or a tangent's shape is
        neither its primal's nor ``(B, *primal.shape)`` with one B for all.

    See Also
    --------
    dualad.vjp : The reverse-mode product :math:`u^T J_f(x)`.
    dualad.derivative : Higher derivatives in one Taylor-mode sweep.
    dualad.hvp : Hessian-vector products (forward over reverse).

    Examples
    --------
    >>> y, dy = dualad.jvp(np.sin, (0.0,), (1.0,))
    >>> print(float(y), float(dy))
    0.0 1.0

    A batch of directions (here the identity: the whole Jacobian) in one sweep:

    >>> x = np.array([1.0, 2.0])
    >>> y, J = dualad.jvp(lambda x: x ** 2, (x,), (np.eye(2),))
    >>> print(y)
    [1. 4.]
    >>> print(J)
    [[2. 0.]
     [0. 4.]]
    """
    given = primals
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    p_leaves, rebuild = flatten(primals)
    t_leaves = flatten_like(primals, tangents, "jvp", "tangents")
    trace = None
    batch = None
    boxed = []
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        try:
            p = check_input("jvp", i, p, fname=_fname(f))
            t = t if isinstance(t, (Box, OneHotBatch)) else _as_direction("jvp", "tangent", i, t, p)
            b = _batch_of("jvp", "tangent", t, p, i)
        except (TypeError, ValueError) as e:
            _note_leaf(e, f"leaf {i}", primals, "primals")
            raise
        if batch is not None and b != batch:
            raise ValueError(f"jvp: tangent {i} has batch shape {b} but an earlier tangent "
                             f"has {batch}; all tangents need the same batch axis")
        batch = b
        if trace is None:
            trace = LazyJVPTrace(batch) if lazy else JVPTrace()
        boxed.append(Dual(trace, p, t))
    if trace is None:
        trace = JVPTrace()
    try:
        out = traced_outputs(f(*rebuild(boxed)))   # np.array([x, y]) restacked: objects
    except TypeError as e:                         # was it called with the wrong arguments?
        _check_arity("jvp", f, given, e)
        raise
    except ValueError as e:
        raise_assignment_error("jvp", _fname(f), e)
        raise
    finally:
        trace.stop()
    check_output("jvp", f, out)
    o_leaves, o_rebuild = flatten(out)
    outs, tans = [], []
    for o in o_leaves:
        if isinstance(o, Dual) and o._trace is trace:
            outs.append(o.primal)
            tans.append(dense(trace.force(o) if lazy else o.tangent))   # plain arrays out
        else:
            outs.append(o)
            tans.append(_zeros(batch + shape_of(o), o))
    return o_rebuild(outs), o_rebuild(tans)


# --- reverse mode -------------------------------------------------------------------
def _trace_inputs(api, trace, args, argnums, fname=None):
    leaves_per_arg = {}
    args = list(args)
    for i in argnums:
        leaves, rebuild = flatten(args[i])
        vars_ = [trace.new_leaf(x) for x in _checked(api, i, args[i], leaves, fname)]
        leaves_per_arg[i] = (vars_, rebuild)
        args[i] = rebuild(vars_)
    return args, leaves_per_arg


def _checked(api, i, tree, leaves, fname):
    """``check_input`` of each leaf of argument ``i``; a refused leaf is named by its path
    (``argument 0.layers[1].w``: fields of named tuples and dataclasses by name)."""
    try:
        return [check_input(api, i, x, fname=fname) for x in leaves]
    except TypeError:
        if len(leaves) > 1 or leaves[0] is not tree:
            for path, x in leaves_with_path(tree):
                check_input(api, i, x, path, fname=fname)
        raise


def _cotangents(results, vars_, batch):
    return [results[v] if v in results else _zeros(batch + shape_of(v.value), v.value)
            for v in vars_]


@overload
def vjp(f: Callable[[_A], _R], primal: _A, /) -> tuple[_R, Callable[[Any], tuple[_A]]]: ...
# Other primals (none, a number, a container, several): cotangents of unknown types. Kept
# apart from the first overload so that mypy does not answer Any for an array of Any dtype.
@overload
def vjp(f: Callable[..., _R], /) -> tuple[_R, Callable[[Any], tuple[()]]]: ...
@overload
def vjp(f: Callable[..., _R], primal: _NotArray, /
        ) -> tuple[_R, Callable[[Any], tuple[Any]]]: ...
@overload
def vjp(f: Callable[..., _R], primal: Any, primal2: Any, /, *primals: Any
        ) -> tuple[_R, Callable[[Any], tuple[Any, ...]]]: ...
def vjp(f: Callable[..., Any], *primals: Any, max_memory: int | None = None
        ) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    r"""Evaluate ``f`` on a tape and return its value and its pullback.

    Returns :math:`\bigl(f(x),\; u \mapsto u^T J_f(x)\bigr)`: the forward pass
    records every primitive on a tape once, and each call of the pullback sweeps
    a cotangent :math:`u` back through that tape (reverse mode), giving the
    vector-Jacobian product for every primal at a small multiple of the cost of
    ``f``. The pullback may be called many times; the tape is kept for it.

    The tape owns its arrays: the primals are copied into it and the outputs
    returned are copies, so modifying either in place changes nothing; another
    array the forward pass saved (a closed-over constant) modified in place
    before a pullback call makes that call raise.

    Parameters
    ----------
    f : callable
        The function, called as ``f(*primals)``; it may return an array, a
        number or a tuple/list/dict (a pytree) of them.
    *primals : array_like
        The point :math:`x`, one entry per positional argument of ``f`` (arrays,
        floats or pytrees of them; floating or complex dtypes).
    max_memory : int, optional
        A budget in bytes for what the reverse sweep keeps (tape, checkpoints,
        cotangents). ``f`` is then recorded as a program and each pullback call
        recomputes the values a schedule chose not to store (see
        :func:`dualad.remat_plan` and docs/remat.md); the results are the same.

    Returns
    -------
    primals_out : object
        ``f(*primals)``, with ``f``'s output structure (plain arrays).
    pullback : callable
        ``pullback(u)`` returns a tuple with one cotangent :math:`u^T J` per
        primal, each with its primal's structure and shapes. ``u`` has the
        output's structure; a leaf of shape ``(B, *out.shape)`` sweeps B
        cotangents back at once (the results then get the leading axis B).

    Raises
    ------
    TypeError
        If an input is an integer, boolean, string or ``None``, ``f`` returns
        ``None``, or a cotangent is ``None``, not numeric, or complex for a real
        output.
    ValueError
        If a cotangent's structure or shape does not match ``f``'s output.
    RuntimeError
        If an array the forward pass saved was modified in place before a
        pullback call.

    See Also
    --------
    dualad.grad : The gradient of a scalar function (one pullback of 1).
    dualad.jvp : The forward-mode product :math:`J_f(x)\,v`.

    Examples
    --------
    >>> y, pullback = dualad.vjp(lambda x: x ** 2, np.array([1.0, 2.0]))
    >>> print(y)
    [1. 4.]
    >>> (xbar,) = pullback(np.array([1.0, 1.0]))
    >>> print(xbar)
    [2. 4.]

    Rows of the Jacobian, all in one sweep (a batch of cotangents):

    >>> (J,) = pullback(np.eye(2))
    >>> print(J)
    [[2. 0.]
     [0. 4.]]
    """
    if max_memory is not None:
        return BUDGETED["vjp"](f, primals, max_memory)
    trace = VJPTrace(tape=True)
    trace.constants = Constants("vjp", _fname(f))
    primals = tuple(_copied(p) for p in primals)
    args, per_arg = _trace_inputs("vjp", trace, primals, range(len(primals)), _fname(f))
    try:
        out = traced_outputs(f(*args))
    except ValueError as e:
        raise_assignment_error("vjp", _fname(f), e)
        raise
    finally:
        tape = trace.stop()
    trace.constants.check()
    trace.constants = None     # the copies are no longer needed
    check_output("vjp", f, out)
    stamps = Stamps.of_tape(tape)
    o_leaves, o_rebuild = flatten(out)
    values = [o.value if isinstance(o, Var) and o._trace is trace else o for o in o_leaves]
    returned = [v.copy() if isinstance(v, np.ndarray) else v for v in values]

    def pullback(cotangent: Any) -> tuple[Any, ...]:
        stamps.check("vjp pullback")
        c_leaves = flatten_like(out, cotangent, "vjp pullback", "the cotangent",
                                like_name=f"{_fname(f)}'s output")
        seeds, batch = [], None
        for i, (o, c) in enumerate(zip(o_leaves, c_leaves)):
            try:
                c = c if isinstance(c, (Box, OneHotBatch)) else \
                    _as_direction("vjp pullback", "cotangent", i, c, values[i])
                b = _batch_of("vjp pullback", "cotangent", c, values[i], i)
            except (TypeError, ValueError) as e:
                _note_leaf(e, f"cotangent {i}", out, "the cotangent")
                raise
            if batch is not None and b != batch:
                raise ValueError(f"vjp pullback: cotangent {i} has batch shape {b} but an "
                                 f"earlier one has {batch}")
            batch = b
            if isinstance(o, Var) and o._trace is trace:
                seeds.append((o, c))
        wanted = {v for vars_, _ in per_arg.values() for v in vars_}
        results = backward_sweep(seeds, trace=trace, retain_graph=True, wanted=wanted,
                                 tape=tape)
        grads = []
        for i in range(len(primals)):
            vars_, rebuild = per_arg[i]
            grads.append(rebuild(_cotangents(results, vars_, batch)))
        return tuple(grads)

    return o_rebuild(returned), pullback


def transposed_rule(rule: Callable[..., Any], kind: str, argnum: int) -> Callable[..., Any]:
    """The rule of the other direction, as the transpose of ``rule`` (a linear map of its
    first argument): a JVP ``t ↦ J t`` from a VJP ``u ↦ Jᵀ u`` (and back) by one reverse
    sweep through the rule, seeded with the tangent (cotangent). Made only when a
    hand-written rule replaces one that ``defderiv`` built from a partial derivative
    (see :meth:`dualad.core.primitive.Primitive._hand_rule`)."""
    def transposed(w, ans, *args, **params):
        if kind == "vjp":      # w: a tangent of an argument; the rule maps output -> argument
            zero = np.zeros(shape_of(ans), np.result_type(unguarded_value(ans), np.float64))
        else:                  # w: a cotangent of the output; the rule maps argument -> output
            arg = args[argnum]
            zero = np.zeros(shape_of(arg), np.result_type(unguarded_value(arg), np.float64))
        _, pullback = vjp(lambda s: rule(s, ans, *args, **params), zero)
        return pullback(w)[0]
    return transposed




def _copied(primal):
    """``primal`` with its arrays copied: the tape's own, whatever the caller does next."""
    leaves, rebuild = flatten(primal)
    if not any(isinstance(x, np.ndarray) for x in leaves):
        return primal
    # (subok: an np.matrix or a masked array stays one, for check_input to refuse)
    return rebuild([np.array(x, subok=True) if isinstance(x, np.ndarray) else x
                    for x in leaves])


def _normalize_argnums(api, argnums, nargs, f):
    single = isinstance(argnums, (int, np.integer))
    if not single and not (isinstance(argnums, (tuple, list)) and
                           all(isinstance(a, (int, np.integer)) for a in argnums)):
        raise TypeError(f"{api}: argnums must be an int or a tuple of ints (the positions of "
                        f"the arguments of {_fname(f)} to differentiate), got {argnums!r}")
    nums = (int(argnums),) if single else tuple(int(a) for a in argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{api}: argnums={argnums!r} is out of range: {_fname(f)} was "
                             f"called with {nargs} positional argument(s)")
    return single, tuple(a % nargs for a in nums)


# argnums=0, the default: the gradient has the type of the argument it is called with.
# (An int argnums is another overload; mypy calls the two overlapping, harmlessly: the first
# that matches wins.) Other argnums: one gradient per listed argument, of unknown types.
@overload
def value_and_grad(f: Callable[..., tuple[_R, _Aux]], argnums: Literal[0] = 0, *,
                   has_aux: Literal[True], holomorphic: bool = False
                   ) -> _ValueAndGradAux[_R, _Aux]: ...
@overload
def value_and_grad(f: Callable[..., _R], argnums: Literal[0] = 0,  # type: ignore[overload-overlap]
                   has_aux: Literal[False] = False, holomorphic: bool = False
                   ) -> _ValueAndGrad[_R]: ...
@overload
def value_and_grad(f: Callable[..., _R], argnums: int, has_aux: Literal[False] = False,
                   holomorphic: bool = False) -> Callable[..., tuple[_R, Any]]: ...
@overload
def value_and_grad(f: Callable[..., _R], argnums: tuple[int, ...] | list[int],
                   has_aux: Literal[False] = False, holomorphic: bool = False
                   ) -> Callable[..., tuple[_R, tuple[Any, ...]]]: ...
@overload
def value_and_grad(f: Callable[..., tuple[_R, _Aux]], argnums: int, has_aux: Literal[True],
                   holomorphic: bool = False) -> Callable[..., tuple[tuple[_R, _Aux], Any]]: ...
@overload
def value_and_grad(f: Callable[..., tuple[_R, _Aux]], argnums: tuple[int, ...] | list[int],
                   has_aux: Literal[True], holomorphic: bool = False
                   ) -> Callable[..., tuple[tuple[_R, _Aux], tuple[Any, ...]]]: ...
# has_aux given as a plain bool (not a literal): the result's structure is not known. (The
# two spellings, keyword and positional, leave the default call to the overloads above only:
# mypy answers Any where two overloads match an argument holding Any.)
@overload
def value_and_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool,
                   holomorphic: bool = False) -> Callable[..., tuple[Any, Any]]: ...
@overload
def value_and_grad(f: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
                   holomorphic: bool = False) -> Callable[..., tuple[Any, Any]]: ...
def value_and_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False,
                   max_memory: int | None = None) -> Callable[..., tuple[Any, Any]]:
    r"""Return a function computing ``f``'s value and gradient in one reverse sweep.

    The returned function maps ``*args`` to
    :math:`\bigl(f(x),\; \nabla f(x)\bigr)` with
    :math:`\nabla f(x) = J_f(x)^T \cdot 1`: the forward pass records ``f`` on a
    tape and one backward sweep seeded with 1 gives the derivative with respect
    to every argument in ``argnums``, at a small multiple of the cost of ``f``
    whatever the number of inputs. Complex numbers follow JAX (see
    ``holomorphic``).

    Parameters
    ----------
    f : callable
        The function to differentiate. It must return a real scalar (one
        element: shape ``()``, ``(1,)``, ...), or, with ``has_aux=True``, a pair
        ``(scalar, aux)``. Keyword arguments given to the returned function are
        passed on to ``f`` and are not differentiated.
    argnums : int or tuple of int, default 0
        Which positional arguments to differentiate with respect to (negative
        numbers count from the end). An int gives one gradient, with that
        argument's structure and shapes; a tuple gives a tuple of gradients, one
        per listed argument, in that order. The other arguments are constants.
        Each differentiated argument may be an array, a float, or a
        tuple/list/dict (a pytree) of them.
    has_aux : bool, default False
        If True, ``f`` returns ``(value, aux)``: only ``value`` is
        differentiated and ``aux`` (any structure: diagnostics, intermediate
        results) is handed back beside the result, as plain values.
    holomorphic : bool, default False
        If True, ``f`` maps complex inputs to a complex scalar and the result is
        the complex derivative :math:`f'(z)`. If False (the default), ``f`` must
        be real-valued; a complex input :math:`z = x + iy` then gets
        :math:`\partial f/\partial x - i\,\partial f/\partial y`, the conjugate
        of the steepest-ascent direction (for :math:`|z|^2` it is
        :math:`2\bar z`), as in JAX.
    max_memory : int, optional
        A budget in bytes for what the reverse sweep keeps (tape, checkpoints,
        cotangents; not the inputs or the gradient). ``f`` is recorded once as a
        program and a schedule stores some values and recomputes the others so the
        modelled peak stays within it, with the fewest recomputed flops
        (:func:`dualad.remat_plan` shows it; docs/remat.md). The result is the
        same; ``has_aux``/``holomorphic`` and functions ``jit`` cannot record run
        the ordinary sweep with a ``RematWarning``.

    Returns
    -------
    callable
        ``value_and_grad_f(*args, **kwargs)`` returning ``(value, gradient)``,
        or ``((value, aux), gradient)`` with ``has_aux=True``. ``gradient`` is
        one gradient for an int ``argnums`` and a tuple of them for a tuple.

    Raises
    ------
    TypeError
        When the returned function is called: if ``f`` returns a non-scalar, a
        container, ``None``, a complex value without ``holomorphic=True``, or
        with ``has_aux=True`` something other than a pair; if a differentiated
        argument is an integer, boolean, string or ``None`` (cast it with
        ``x.astype(float)``); if ``argnums`` is not an int or a tuple of ints.
    ValueError
        If ``argnums`` is out of range for the arguments given.

    See Also
    --------
    dualad.grad : The gradient alone.
    dualad.vjp : The reverse sweep for non-scalar outputs.

    Examples
    --------
    >>> value, g = dualad.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    >>> print(float(value), g)
    5.0 [2. 4.]
    >>> (value, aux), g = dualad.value_and_grad(lambda x: (x ** 2, x ** 3), has_aux=True)(2.0)
    >>> print(float(value), float(aux), float(g))
    4.0 8.0 4.0
    """

    def value_and_grad_f(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        if max_memory is not None:
            return BUDGETED["value_and_grad"](f, argnums, has_aux, args, kwargs, holomorphic,
                                              max_memory)
        return _value_and_grad(f, argnums, has_aux, args, kwargs, holomorphic)

    value_and_grad_f.__name__ = f"value_and_grad({_fname(f)})"
    return value_and_grad_f


def _check_holomorphic_inputs(f, per_arg):
    for i, (vars_, _) in per_arg.items():
        for v in vars_:
            dtype = np.result_type(unguarded_value(v.value))
            if dtype.kind != "c":
                raise TypeError(
                    f"grad(holomorphic=True): argument {i} of {_fname(f)} has dtype {dtype} "
                    f"and shape {shape_of(v.value)}; holomorphic differentiation needs complex "
                    f"inputs. Cast it first, e.g. x.astype(complex), or drop holomorphic=True "
                    f"for a real input")


def _check_output_dtype(f, dtype, holomorphic):
    if holomorphic and dtype.kind != "c":
        raise TypeError(f"grad(holomorphic=True): {_fname(f)} returned dtype {dtype}; a "
                        f"holomorphic function's output is complex. For a real-valued "
                        f"function of complex inputs, use grad without holomorphic=True")
    if not holomorphic and dtype.kind == "c":
        raise TypeError(f"grad: {_fname(f)} returned a complex value (dtype {dtype}); grad "
                        f"needs a real-valued output. Pass holomorphic=True for a holomorphic "
                        f"function (the result is then f'(z)); for a real loss take np.real "
                        f"or np.abs of the output; for other complex outputs use dualad.vjp")


def _value_and_grad(f, argnums, has_aux, args, kwargs, holomorphic=False):
    single, nums = _normalize_argnums("grad", argnums, len(args), f)
    trace = VJPTrace(tape=True)
    trace.constants = Constants("grad", _fname(f))
    args, per_arg = _trace_inputs("grad", trace, args, nums, _fname(f))
    if holomorphic:
        _check_holomorphic_inputs(f, per_arg)
    try:
        out = traced_outputs(f(*args, **kwargs))
    except ValueError as e:
        raise_assignment_error("grad", _fname(f), e)
        raise
    finally:
        tape = trace.stop()
    trace.constants.check()
    trace.constants = None     # the copies are no longer needed
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("grad(has_aux=True): f must return a pair (value, aux)")
        out, aux = out
        aux = tree_map(lambda a: a._inner if isinstance(a, Box) and a._trace is trace else a,
                       aux)   # aux leaves as values (of the level below), not dead tracers
    check_output("grad", f, out)
    if not is_leaf(out) or math.prod(shape_of(out)) != 1:
        shape = f"a container ({describe(out)})" if not is_leaf(out) else \
            f"shape {shape_of(out)}"
        raise TypeError(f"grad: {_fname(f)} must return a scalar (one element: shape (), "
                        f"(1,), ...), got {shape}. For non-scalar outputs use dualad.vjp, or "
                        f"jacobians.jacobian for the whole Jacobian")
    value = out.value if isinstance(out, Var) and out._trace is trace else out
    out_dtype = np.result_type(unguarded_value(value))
    if out_dtype.kind not in "fc":
        raise TypeError(f"grad: {_fname(f)} returned dtype "
                        f"{np.result_type(unguarded_value(value))}, which is not differentiable")
    if out_dtype.kind == "c" or holomorphic:
        _check_output_dtype(f, out_dtype, holomorphic)
    results = {}
    if isinstance(out, Var) and out._trace is trace:
        # a one-element output of shape (1,) or (1, 1) is seeded with ones of its shape
        seed = np.ones(shape_of(out), dtype=np.result_type(unguarded_value(value)))[()]
        wanted = {v for vars_, _ in per_arg.values() for v in vars_}
        results = backward_sweep([(out, seed)], trace=trace, wanted=wanted, tape=tape)
    grads = tuple(per_arg[i][1](_cotangents(results, per_arg[i][0], ())) for i in nums)
    g = grads[0] if single else grads
    return ((value, aux), g) if has_aux else (value, g)


# As value_and_grad: with argnums=0 the gradient has the type of the argument it is called
# with; other argnums give gradients of unknown types.
@overload
def grad(f: Callable[..., tuple[Any, _Aux]], argnums: Literal[0] = 0, *,
         has_aux: Literal[True], holomorphic: bool = False) -> _GradAux[_Aux]: ...
@overload
def grad(f: Callable[..., Any], argnums: Literal[0] = 0,  # type: ignore[overload-overlap]
         has_aux: Literal[False] = False, holomorphic: bool = False) -> _Grad: ...
@overload
def grad(f: Callable[..., Any], argnums: int, has_aux: Literal[False] = False,
         holomorphic: bool = False) -> Callable[..., Any]: ...
@overload
def grad(f: Callable[..., Any], argnums: tuple[int, ...] | list[int],
         has_aux: Literal[False] = False, holomorphic: bool = False
         ) -> Callable[..., tuple[Any, ...]]: ...
@overload
def grad(f: Callable[..., tuple[Any, _Aux]], argnums: int, has_aux: Literal[True],
         holomorphic: bool = False) -> Callable[..., tuple[Any, _Aux]]: ...
@overload
def grad(f: Callable[..., tuple[Any, _Aux]], argnums: tuple[int, ...] | list[int],
         has_aux: Literal[True], holomorphic: bool = False
         ) -> Callable[..., tuple[tuple[Any, ...], _Aux]]: ...
@overload
def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool,
         holomorphic: bool = False) -> Callable[..., Any]: ...
@overload
def grad(f: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
         holomorphic: bool = False) -> Callable[..., Any]: ...
def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, max_memory: int | None = None) -> Callable[..., Any]:
    r"""Return the gradient function ``x -> grad f(x)`` of a scalar-valued ``f``.

    :math:`\nabla f(x) = J_f(x)^T \cdot 1`, computed by one reverse sweep: the
    forward pass records every primitive ``f`` calls on a tape, and the backward
    sweep pulls the seed 1 back through each primitive's VJP rule. The cost is a
    small multiple of one evaluation of ``f``, whatever the number of inputs.
    Gradients of gradients work to any order (the rules are differentiable).

    Parameters
    ----------
    f : callable
        The function to differentiate. It must return a real scalar (one
        element: shape ``()``, ``(1,)``, ...), or, with ``has_aux=True``, a pair
        ``(scalar, aux)``. Keyword arguments given to the returned function are
        passed on to ``f`` and are not differentiated.
    argnums : int or tuple of int, default 0
        Which positional arguments to differentiate with respect to (negative
        numbers count from the end). An int gives one gradient, with that
        argument's structure and shapes; a tuple gives a tuple of gradients, one
        per listed argument, in that order. The other arguments are constants.
        Each differentiated argument may be an array, a float, or a
        tuple/list/dict (a pytree) of them.
    has_aux : bool, default False
        If True, ``f`` returns ``(value, aux)``: only ``value`` is
        differentiated and ``aux`` (any structure: diagnostics, intermediate
        results) is handed back beside the result, as plain values.
    holomorphic : bool, default False
        If True, ``f`` maps complex inputs to a complex scalar and the result is
        the complex derivative :math:`f'(z)`. If False (the default), ``f`` must
        be real-valued; a complex input :math:`z = x + iy` then gets
        :math:`\partial f/\partial x - i\,\partial f/\partial y`, the conjugate
        of the steepest-ascent direction (for :math:`|z|^2` it is
        :math:`2\bar z`), as in JAX.
    max_memory : int, optional
        A budget in bytes for what the reverse sweep keeps (tape, checkpoints,
        cotangents; not the inputs or the gradient). ``f`` is recorded once as a
        program and a schedule stores some values and recomputes the others so the
        modelled peak stays within it, with the fewest recomputed flops
        (:func:`dualad.remat_plan` shows it; docs/remat.md). The result is the
        same; ``has_aux``/``holomorphic`` and functions ``jit`` cannot record run
        the ordinary sweep with a ``RematWarning``.

    Returns
    -------
    callable
        ``grad_f(*args, **kwargs)`` returning the gradient (with the structure,
        shapes and dtypes of the differentiated argument; a tuple of them for a
        tuple ``argnums``), or ``(gradient, aux)`` with ``has_aux=True``.

    Raises
    ------
    TypeError
        When the returned function is called: if ``f`` returns a non-scalar, a
        container, ``None``, a complex value without ``holomorphic=True``, or
        with ``has_aux=True`` something other than a pair; if a differentiated
        argument is an integer, boolean, string or ``None`` (cast it with
        ``x.astype(float)``); if ``argnums`` is not an int or a tuple of ints.
    ValueError
        If ``argnums`` is out of range for the arguments given.

    See Also
    --------
    dualad.value_and_grad : The value and the gradient together.
    dualad.vjp : The reverse sweep for non-scalar outputs.
    dualad.hvp : Hessian-vector products.
    dualad.autograd.grad : The imperative (PyTorch-style) spelling.

    Notes
    -----
    Python control flow on traced values works (each call records the path it
    took). A function with no derivative rule raises an error naming it rather
    than dropping the derivative.

    Examples
    --------
    >>> df = dualad.grad(lambda x: np.sum(x ** 2))
    >>> print(df(np.array([1.0, 2.0, 3.0])))
    [2. 4. 6.]

    ``argnums`` picks the arguments; a tuple gives one gradient each:

    >>> f = lambda x, y: x * np.sin(y)
    >>> dx, dy = dualad.grad(f, argnums=(0, 1))(2.0, 0.0)
    >>> print(float(dx), float(dy))
    0.0 2.0

    ``has_aux=True`` hands back a second output undifferentiated:

    >>> g, aux = dualad.grad(lambda x: (x ** 2, {"cube": x ** 3}), has_aux=True)(2.0)
    >>> print(float(g), float(aux["cube"]))
    4.0 8.0

    Second derivatives, and a real function of a complex input:

    >>> print(np.isclose(dualad.grad(dualad.grad(np.sin))(0.5), -np.sin(0.5)))
    True
    >>> print(dualad.grad(lambda z: np.abs(z) ** 2)(1 + 2j))
    (2-4j)
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic, max_memory)

    def grad_f(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    grad_f.__name__ = f"grad({_fname(f)})"
    return grad_f


@overload
def hvp(f: Callable[[_A], Any], primals: _A, tangents: Any) -> _A: ...
@overload
def hvp(f: Callable[..., Any], primals: _NotArray, tangents: Any) -> Any: ...
def hvp(f: Callable[..., Any], primals: Any, tangents: Any) -> Any:
    r"""Compute the Hessian-vector product of a scalar function by forward-over-reverse.

    :math:`H v = \nabla^2 f(x)\, v = \frac{\partial}{\partial \varepsilon}
    \nabla f(x + \varepsilon v)\big|_{\varepsilon=0}`: one forward sweep
    (:func:`dualad.jvp`) through the reverse sweep of :func:`dualad.grad`, at a
    small multiple of one gradient's cost and without forming :math:`H`.

    Parameters
    ----------
    f : callable
        A scalar-valued function of its positional arguments.
    primals : array_like or tuple
        The point :math:`x`: one array (a one-argument ``f``) or a tuple with
        one entry per argument.
    tangents : array_like or tuple
        The vector :math:`v`, with the structure of ``primals``. A leading axis
        B (shape ``(B, *x.shape)``) gives B products at once.

    Returns
    -------
    array_like or tuple
        :math:`H v` with the structure of ``primals`` (for a tuple, the blocks
        :math:`\sum_j H_{ij} v_j` for each argument i).

    Raises
    ------
    TypeError
        If an input is not floating point, or ``f`` does not return a scalar.
    ValueError
        If a tangent's shape matches neither its primal's nor
        ``(B, *primal.shape)``.

    See Also
    --------
    dualad.grad : The gradient.
    dualad.jvp : The forward sweep used here.

    Examples
    --------
    For :math:`f(x) = \sum x_i^3` the Hessian is :math:`\mathrm{diag}(6 x)`:

    >>> f = lambda x: np.sum(x ** 3)
    >>> x = np.array([1.0, 2.0])
    >>> print(dualad.hvp(f, x, np.array([1.0, 0.0])))
    [6. 0.]
    >>> print(dualad.hvp(f, x, np.eye(2)))
    [[ 6.  0.]
     [ 0. 12.]]
    """
    single = not isinstance(primals, (tuple, list))
    given = primals
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    for i, p in enumerate(primals):
        for leaf in flatten(p)[0]:
            check_input("hvp", i, leaf, fname=_fname(f))
    g = grad(f, argnums=tuple(range(len(primals))))
    try:
        out = jvp(g, primals, tangents, lazy=True)[1]   # f's own output tangent is not needed
    except TypeError as e:                              # wrong arguments for f?
        _check_arity("hvp", f, given, e)
        raise
    return out[0] if single else out

"""The functional face, as in HIPS autograd and JAX: jvp, vjp, grad, hvp, derivative.

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

import numpy as np

from .forward import Dual, JVPTrace, LazyJVPTrace
from .onehot import OneHotBatch
from .scaled import dense
from .sweep import backward_sweep
from .tape import Var, VJPTrace
from .objects import holds_boxes, to_traced, traced_outputs
from .tracer import Box, primal_value, shape_of, unguarded_value
from .primitive import DERIVED_RULES
from .tree import flatten, flatten_like, tree_map
from .versions import Stamps


# No gc.disable() around sweeps: the collector's switch is process-wide, and a pause in one
# thread undid a user's gc.disable() made in another. Long tapes pay for it (each recorded
# scalar operation leaves two GC-tracked objects, and full collections walk them): the 10^5-
# iteration scalar chain takes 57% more instructions (2-3x the wall time) than with the
# collector off, Rosenbrock 17% (BENCHMARKS.md). Users who want that speed may switch the
# collector off themselves (gc.disable()/gc.enable() around their call).


def _fname(f):
    return getattr(f, "__name__", type(f).__name__)


def check_input(api, argnum, x, where=""):
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

    Returns
    -------
    numpy.ndarray or numpy.generic or Box
        ``x`` as a floating or complex array (a traced value unchanged).

    Raises
    ------
    TypeError
        If ``x`` is ``None``, a string, an object array, or of an integer or boolean
        dtype; the message names ``api``, the argument, its dtype and shape, and says to
        cast to a floating dtype.

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
    arr = np.asarray(x)
    if arr.dtype == object:
        if arr.ndim and holds_boxes(arr):   # np.array([x, y]) of an outer trace's values
            return to_traced(arr)
        raise TypeError(f"{api}: argument {argnum}{where} is an object array of shape "
                        f"{arr.shape}; differentiable inputs are floating-point arrays")
    if arr.dtype.kind not in "fc":  # floating or complex
        raise TypeError(f"{api}: argument {argnum}{where} has dtype {arr.dtype} and shape "
                        f"{arr.shape}; integer and boolean inputs are not differentiable. "
                        f"Cast it to a floating dtype first, e.g. x.astype(float)")
    # 0-d inputs become NumPy scalars: scalar arithmetic on them is several times cheaper.
    return arr[()] if arr.ndim == 0 else arr


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


def check_output(api, f, out):
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


# --- forward mode -------------------------------------------------------------------
def jvp(f, primals, tangents, *, lazy=False):
    """``(f(*primals), J·tangents)`` in one forward sweep.

    ``primals`` and ``tangents`` are tuples of matching structure. A tangent of
    shape ``(B, *primal.shape)`` pushes B directions through one sweep and the
    output tangent gets the same leading axis.

    ``lazy=True`` pushes a tangent forward only if an output's tangent depends
    on it (:class:`dualad.forward.LazyJVPTrace`): the same result, without the
    work on values no output needs, at the cost of keeping every intermediate
    value until the sweep ends. Worth it when ``f`` computes more than it
    returns, as a gradient does (forward-over-reverse: ``hvp``, ``hessian``).
    """
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    p_leaves, rebuild = flatten(primals)
    t_leaves = flatten_like(primals, tangents, "jvp", "tangents")
    trace = None
    batch = None
    boxed = []
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        p = check_input("jvp", i, p)
        t = t if isinstance(t, (Box, OneHotBatch)) else _as_direction("jvp", "tangent", i, t, p)
        b = _batch_of("jvp", "tangent", t, p, i)
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


def derivative(f, order=1):
    """The ``order``-th derivative of a scalar (or elementwise) function, by
    nesting forward sweeps: ``derivative(np.sin, 3)(1.0) == -cos(1.0)``."""
    if int(order) != order or order < 0:
        raise ValueError(f"derivative: order must be a non-negative integer, got {order!r}")

    def d1(g):
        def dg(x):
            x = check_input("derivative", 0, x)
            return jvp(g, (x,), (np.ones(shape_of(x), dtype=unguarded_value(x).dtype),))[1]
        return dg

    g = f
    for _ in range(int(order)):
        g = d1(g)
    return g


# --- reverse mode -------------------------------------------------------------------
def _trace_inputs(api, trace, args, argnums):
    leaves_per_arg = {}
    args = list(args)
    for i in argnums:
        leaves, rebuild = flatten(args[i])
        vars_ = [trace.new_leaf(check_input(api, i, x)) for x in leaves]
        leaves_per_arg[i] = (vars_, rebuild)
        args[i] = rebuild(vars_)
    return args, leaves_per_arg


def _cotangents(results, vars_, batch):
    return [results[v] if v in results else _zeros(batch + shape_of(v.value), v.value)
            for v in vars_]


def vjp(f, *primals):
    """``(f(*primals), pullback)``; ``pullback(ū)`` returns ``ūᵀ J`` for each primal.

    ``ū`` has the output's structure; a leaf of shape ``(B, *out.shape)``
    sweeps B cotangents back at once. The pullback may be called many times.

    The tape owns its arrays (dualad.versions): the primals are copied into it and
    the outputs returned are copies, so modifying either in place changes nothing;
    another array the forward pass saved (a closed-over constant) modified in place
    before a pullback call makes that call raise RuntimeError.
    """
    trace = VJPTrace(tape=True)
    primals = tuple(_copied(p) for p in primals)
    args, per_arg = _trace_inputs("vjp", trace, primals, range(len(primals)))
    try:
        out = traced_outputs(f(*args))
    finally:
        tape = trace.stop()
    check_output("vjp", f, out)
    stamps = Stamps.of_tape(tape)
    o_leaves, o_rebuild = flatten(out)
    values = [o.value if isinstance(o, Var) and o._trace is trace else o for o in o_leaves]
    returned = [v.copy() if isinstance(v, np.ndarray) else v for v in values]

    def pullback(cotangent):
        stamps.check("vjp pullback")
        c_leaves = flatten_like(out, cotangent, "vjp pullback", "the cotangent",
                                like_name=f"{_fname(f)}'s output")
        seeds, batch = [], None
        for i, (o, c) in enumerate(zip(o_leaves, c_leaves)):
            c = c if isinstance(c, (Box, OneHotBatch)) else \
                _as_direction("vjp pullback", "cotangent", i, c, values[i])
            b = _batch_of("vjp pullback", "cotangent", c, values[i], i)
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


def transposed_rule(rule, kind, argnum):
    """The rule of the other direction, as the transpose of ``rule`` (a linear map of its
    first argument): a JVP ``t ↦ J t`` from a VJP ``u ↦ Jᵀ u`` (and back) by one reverse
    sweep through the rule, seeded with the tangent (cotangent). Made only when a
    hand-written rule replaces one that ``defderiv`` built from a partial derivative
    (see :meth:`dualad.primitive.Primitive._hand_rule`)."""
    def transposed(w, ans, *args, **params):
        if kind == "vjp":      # w: a tangent of an argument; the rule maps output -> argument
            zero = np.zeros(shape_of(ans), np.result_type(unguarded_value(ans), np.float64))
        else:                  # w: a cotangent of the output; the rule maps argument -> output
            arg = args[argnum]
            zero = np.zeros(shape_of(arg), np.result_type(unguarded_value(arg), np.float64))
        _, pullback = vjp(lambda s: rule(s, ans, *args, **params), zero)
        return pullback(w)[0]
    return transposed


DERIVED_RULES.transpose = transposed_rule   # what Primitive._hand_rule builds with


def _copied(primal):
    """``primal`` with its arrays copied: the tape's own, whatever the caller does next."""
    leaves, rebuild = flatten(primal)
    if not any(isinstance(x, np.ndarray) for x in leaves):
        return primal
    return rebuild([np.array(x) if isinstance(x, np.ndarray) else x for x in leaves])


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


def value_and_grad(f, argnums=0, has_aux=False, holomorphic=False):
    """A function returning ``(f(*args), ∇_{argnums} f(*args))`` for scalar ``f``.

    Complex numbers follow JAX (docs/complex.md). ``f`` must return a real
    scalar; complex inputs then get ∂f/∂x − i ∂f/∂y (the conjugate of the
    steepest-ascent direction: for |z|² it is 2·conj(z)). With
    ``holomorphic=True``, ``f`` maps complex inputs to a complex scalar and the
    result is the complex derivative f'(z).
    """

    def value_and_grad_f(*args, **kwargs):
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
    args, per_arg = _trace_inputs("grad", trace, args, nums)
    if holomorphic:
        _check_holomorphic_inputs(f, per_arg)
    try:
        out = traced_outputs(f(*args, **kwargs))
    finally:
        tape = trace.stop()
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("grad(has_aux=True): f must return a pair (value, aux)")
        out, aux = out
        aux = tree_map(lambda a: a._inner if isinstance(a, Box) and a._trace is trace else a,
                       aux)   # aux leaves as values (of the level below), not dead tracers
    check_output("grad", f, out)
    if isinstance(out, (tuple, list, dict)) or math.prod(shape_of(out)) != 1:
        shape = "a container" if isinstance(out, (tuple, list, dict)) else \
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


def grad(f, argnums=0, has_aux=False, holomorphic=False):
    """The gradient function ``x ↦ ∇f(x)`` of a scalar-valued ``f`` (one reverse sweep).

    For complex inputs see :func:`value_and_grad`: a real ``f`` gives
    ∂f/∂x − i ∂f/∂y, and ``holomorphic=True`` gives f'(z) of a complex ``f``.
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    grad_f.__name__ = f"grad({_fname(f)})"
    return grad_f


def hvp(f, primals, tangents):
    """Hessian-vector product ``∇²f(x)·v`` by forward-over-reverse: one forward
    sweep through one reverse sweep, a small multiple of one gradient's cost.
    A leading batch axis on the tangents gives several products at once."""
    single = not isinstance(primals, (tuple, list))
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    for i, p in enumerate(primals):
        for leaf in flatten(p)[0]:
            check_input("hvp", i, leaf)
    g = grad(f, argnums=tuple(range(len(primals))))
    out = jvp(g, primals, tangents, lazy=True)[1]   # f's own output tangent is never needed
    return out[0] if single else out

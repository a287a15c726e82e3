"""``vmap``: the batching interpreter over the op registry, with JAX's semantics.

``vmap(f, in_axes, out_axes)(*args)`` is ``f`` mapped over an axis of its arguments,

    vmap(f)(X)[b] = f(X[b])         for each b < B,

computed in one pass over the batch: each primitive call on batched values runs the
primitive's *batching rule* once on the whole batch instead of B times.

The interpreter is a pair (:mod:`dualad.core.tracer`): a :class:`BatchTrace` of batch size
``size`` and its values, :class:`~dualad.interpreters.batching.tracer.BatchTracer`, whose value one level
down carries the batch axis at position 0, always, and whose ``shape`` is the
per-example one. A batching rule is

    rule(args, batched, **params) -> out

``args`` the primitive's positional arguments one level down (plain arrays or boxes of
lower traces), ``batched[i]`` True when ``args[i]`` carries the leading batch axis; the
output (each element of a tuple output) carries the leading batch axis. Rules are written
with registry operations, so they run on lower traces' boxes: vmap of grad, grad of
vmap, vmap of vmap. :func:`batching_rule` gives a primitive's rule: the one it declares
(:meth:`Primitive.defbatch <dualad.core.primitive.Primitive.defbatch>`), else one derived from
its declarations (:mod:`dualad.interpreters.batching.rules`): broadcasting for elementwise primitives, the
``batched=`` parameters of a linear primitive's :meth:`def_linear`, else a loop over the
batch (always correct, B calls; :func:`is_looped` says which).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from ...frontend.inplace import raise_assignment_error
from ...frontend.objects import traced_outputs
from ...ops.core.linear import broadcast_to_p, transpose_p
from ...core.tracer import Box, Trace, shape_of
from ...core.tree import describe, flatten
from ...core.tree_nodes import child_keys, is_registered, node
from .rules import batching_rule, is_looped, looped_call_at, run_rule
from .tracer import BatchTracer, per_example_at

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    import numpy as np

    _R = TypeVar("_R")
    _A = TypeVar("_A", bound="np.ndarray[Any, Any]")   # an array output: batched, an array

__all__ = ["vmap", "BatchTrace", "BatchTracer", "batching_rule", "is_looped"]


class BatchTrace(Trace):
    """The batching interpreter of ``dualad.vmap``, for a batch of ``size`` examples.

    Interprets each primitive applied to its :class:`BatchTracer` values by the
    primitive's batching rule (:func:`batching_rule`): the values one level down carry
    the batch axis at 0, and the output does too. Under a derivative transformation the
    tangents and cotangents of batched values are batched as well, so vmap composes with
    grad, jvp and vjp in either order.

    Parameters
    ----------
    size : int
        The batch size (the length of the mapped axis).
    level : int, optional
        The trace's level (default: a fresh one, :func:`new_level`).

    Attributes
    ----------
    size : int
        As given.

    See Also
    --------
    BatchTracer : Its traced values.
    dualad.vmap : The transformation for users.
    """

    __slots__ = ("size",)

    def __init__(self, size, level=None):
        super().__init__(level)
        self.size = size

    def escaped(self, prim, args):
        """Build the error for a call of ``prim`` on a batched value after vmap returned.

        Parameters
        ----------
        prim : Primitive
            The primitive called on the escaped value.
        args : tuple
            The call's positional arguments.

        Returns
        -------
        EscapedTracerError
            The error to raise, naming the batch size, the level and the primitive.
        """
        from ...core.tracer import EscapedTracerError
        return EscapedTracerError(
            f"a batched value of vmap (batch size {self.size}, trace level {self.level}) "
            f"escaped the vmap call that made it and was used afterwards in primitive "
            f"'{prim.name}'. Return it from the mapped function instead of storing it (in "
            f"a list or global)")

    # The interpreter query (dualad.core.values): one call per example.
    def per_example(self, fn, name, args, kwargs):
        """Call a function of plain values on each example of this batch.

        What :func:`dualad.core.values.per_example` asks of the top batch: ``fn`` on
        each example's plain values (a lower vmap's batch still batched), the results
        stacked along this trace's batch axis.

        Parameters
        ----------
        fn : callable
            A function of plain values.
        name : str
            The name error messages use.
        args : sequence
            Its positional arguments, traced or plain.
        kwargs : dict
            Its keyword arguments, traced or plain.

        Returns
        -------
        BatchTracer or tuple
            One result per example, as values of this trace.
        """
        return per_example_at(self, fn, name, args, kwargs)

    def looped_call(self, fn, args, kwargs):
        """Call a differentiable function on each example of this batch.

        What :func:`dualad.core.values.looped_call` asks of the top batch: ``fn`` on
        registry slices of each example (derivative boxes under the batch kept), the
        results stacked.

        Parameters
        ----------
        fn : callable
            A function written with registry operations.
        args : sequence
            Its positional arguments, traced or plain.
        kwargs : dict
            Its keyword arguments, traced or plain.

        Returns
        -------
        BatchTracer or tuple or list
            One result per example, as values of this trace.
        """
        return looped_call_at(self, fn, args, kwargs)

    def process(self, prim, args, params):
        """Apply ``prim``'s batching rule to this trace's tracers and box the output.

        Parameters
        ----------
        prim : Primitive
            The primitive called.
        args : tuple
            Its positional arguments: BatchTracers of this trace (batched) and other
            values (shared by every example).
        params : dict
            Its keyword parameters.

        Returns
        -------
        BatchTracer or tuple or list
            The output, batch axis first one level down (each element of a tuple or list
            output boxed).

        Raises
        ------
        EscapedTracerError
            If the vmap call has returned.
        """
        if not self.alive:
            raise self.escaped(prim, args)
        vals = []
        batched = []
        for a in args:
            if isinstance(a, BatchTracer) and a._trace is self:
                vals.append(a.val)
                batched.append(True)
            else:
                vals.append(a)
                batched.append(False)
        out = run_rule(prim, vals, tuple(batched), params)
        if isinstance(out, (tuple, list)):
            return type(out)(BatchTracer(self, o) for o in out)
        return BatchTracer(self, out)


def _fname(f):
    return getattr(f, "__name__", type(f).__name__)


def _check_axes_spec(api, spec, what):
    leaves, _ = flatten(spec)
    for a in leaves:
        if a is not None and not (isinstance(a, int) and not isinstance(a, bool)):
            raise TypeError(f"{api}: {what} must hold ints or None (the axis of each array to "
                            f"map over, None for one shared by every example), got {a!r} in "
                            f"{spec!r}")


def _axes_per_leaf(api, spec, tree, what, path):
    """The axis of each leaf of ``tree`` (flatten order) from ``spec``, a prefix of
    ``tree``: an int or None applies to the whole subtree under it."""
    if spec is None or isinstance(spec, int):
        return [spec] * len(flatten(tree)[0])
    level = node(spec)
    if level is None:
        raise TypeError(f"{api}: {what}{path} must be an int, None, or a tuple/list/dict (or "
                        f"registered pytree node) of them, got {spec!r}")
    kind, _, specs = level
    names = child_keys(*level)
    at = node(tree)
    if kind is dict:
        if not isinstance(tree, dict) or set(spec) != set(tree):
            raise ValueError(f"{api}: {what}{path} is a dict with keys {sorted(map(str, spec))} "
                             f"but the value there is {describe(tree)}; give one entry per "
                             f"key (or one int/None for the whole value)")
        out = []
        for k in tree:    # the tree's key order: the order flatten visits
            out += _axes_per_leaf(api, spec[k], tree[k], what, f"{path}[{k!r}]")
        return out
    same = isinstance(tree, (tuple, list)) if issubclass(kind, (tuple, list)) and \
        not is_registered(kind) else type(tree) is kind
    if not same or at is None or len(at[2]) != len(specs):
        raise ValueError(f"{api}: {what}{path} is {describe(spec)} but the value there is "
                         f"{describe(tree)}; give one entry per item (or one int/None for "
                         f"the whole value)")
    out = []
    for s_, t, name in zip(specs, at[2], names):
        out += _axes_per_leaf(api, s_, t, what, path + name)
    return out


def _leaf_names(tree, prefix):
    """A readable name of each leaf of ``tree`` (flatten order): ``argument 1['w']``,
    ``argument 0.w`` (a registered class's or named tuple's field)."""
    level = node(tree)
    if level is None:
        return [prefix]
    return [n for t, key in zip(level[2], child_keys(*level))
            for n in _leaf_names(t, prefix + key)]


def _is_array_leaf(x):
    return isinstance(x, Box) or hasattr(x, "shape") or isinstance(x, (int, float, complex))


def _move_axis(x, src, dst):
    """``x`` with axis ``src`` moved to ``dst`` (registry transpose: lower boxes too)."""
    if src == dst:
        return x
    nd = len(shape_of(x))
    order = [i for i in range(nd) if i != src]
    order.insert(dst, src)
    return transpose_p(x, axes=tuple(order))


# The mapped function takes the batched arguments (an array where f took a float), so its
# parameters are not f's; an array output stays an array (with the batch axis).
@overload
def vmap(f: Callable[..., _A], in_axes: Any = 0, out_axes: Any = 0, *,
         axis_size: int | None = None) -> Callable[..., _A]: ...
@overload
def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, *,
         axis_size: int | None = None) -> Callable[..., Any]: ...
def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, *,
         axis_size: int | None = None) -> Callable[..., Any]:
    r"""Map ``f`` over an axis of its arguments, in one batched pass (JAX's ``vmap``).

    ``vmap(f)(X)[b] = f(X[b])`` for each :math:`b < B`, computed in one pass
    over the whole batch: each primitive call on batched values runs the
    primitive's batching rule once instead of B times (elementwise primitives
    broadcast, linear algebra batches its matrices; a primitive without a rule
    falls back to a loop, which is always correct). Composes with ``grad``,
    ``jvp``, ``vjp``, ``hvp``, ``checkpoint``, ``jit`` and itself, in any order:
    ``vmap(grad(f))`` is per-example gradients.

    Parameters
    ----------
    f : callable
        The per-example function; it may return an array, a number or a pytree.
    in_axes : int, None or tuple, default 0
        The axis to map over in each positional argument: an int (every
        argument; negative counts from the end), None (the argument is shared by
        every example), or a tuple/list with one entry per positional argument,
        each an int, None, or a prefix tree (tuple/list/dict) of that argument,
        e.g. ``in_axes=(None, 0)`` maps the second argument only and
        ``({'w': None, 'b': 0},)`` the key ``'b'`` of a dict argument. Keyword
        arguments are mapped along axis 0.
    out_axes : int, None or tuple, default 0
        Where the batch axis goes in each output, in the same forms over the
        output's tree; None only for an output that does not depend on a mapped
        input.
    axis_size : int, optional
        The batch size, needed only when no argument is mapped.

    Returns
    -------
    callable
        The batched function, taking the batched arguments.

    Raises
    ------
    ValueError
        When called: mapped arguments of different batch sizes, an axis out of
        range, a 0-d argument given an axis, no mapped argument and no
        ``axis_size``, or ``out_axes=None`` for an output that varies.
    TypeError
        If ``in_axes``/``out_axes`` hold something other than ints and None, or
        ``f`` returns None. Python control flow on a batched value
        (``if x > 0``) raises too: write ``np.where``.

    See Also
    --------
    dualad.jit : Trace once, replay the compiled program.
    dualad.grad : Compose them: ``vmap(grad(f))``.

    Examples
    --------
    >>> X = np.arange(6.0).reshape(3, 2)
    >>> print(dualad.vmap(lambda x: np.sum(x ** 2))(X))
    [ 1. 13. 41.]

    ``in_axes=None`` shares an argument between the examples:

    >>> w = np.array([1.0, -1.0])
    >>> print(dualad.vmap(np.dot, in_axes=(None, 0))(w, X))
    [-1. -1. -1.]

    Per-example gradients, :math:`\nabla_x \sum_i \sin x_i = \cos x`:

    >>> G = dualad.vmap(dualad.grad(lambda x: np.sum(np.sin(x))))(X)
    >>> print(np.allclose(G, np.cos(X)))
    True
    """
    _check_axes_spec("vmap", in_axes, "in_axes")
    _check_axes_spec("vmap", out_axes, "out_axes")
    if isinstance(in_axes, dict):
        raise TypeError(f"vmap({_fname(f)}): in_axes must be an int, None, or a tuple/list "
                        f"with one entry per positional argument; got a dict (put it inside "
                        f"a tuple: in_axes=({in_axes!r},) for a dict argument)")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise ValueError(f"vmap({_fname(f)}): axis_size must be a non-negative int, got "
                         f"{axis_size!r}")

    def vmapped(*args: Any, **kwargs: Any) -> Any:
        return _vmap_call(f, in_axes, out_axes, axis_size, args, kwargs)

    vmapped.__name__ = f"vmap({_fname(f)})"
    vmapped.__wrapped__ = f
    return vmapped


# ``dualad.vmap`` is this function (the package exports it over the module's name): the
# interface's other names are reachable from it too, ``dualad.interpreters.batching.vmap.batching_rule(prim)``.
vmap.batching_rule = batching_rule
vmap.is_looped = is_looped
vmap.BatchTrace = BatchTrace
vmap.BatchTracer = BatchTracer


def _vmap_call(f, in_axes, out_axes, axis_size, args, kwargs):
    name = f"vmap({_fname(f)})"
    if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
        raise ValueError(f"{name}: in_axes has {len(in_axes)} entries but {_fname(f)} was "
                         f"called with {len(args)} positional argument(s); give one entry "
                         f"per argument (None for an argument shared by every example)")
    tree = (tuple(args), kwargs)
    axes = _axes_per_leaf(name, in_axes, tree[0], "in_axes", "") + \
        _axes_per_leaf(name, 0, kwargs, "in_axes", "")
    leaves, rebuild = flatten(tree)
    names = [n for i, a in enumerate(args) for n in _leaf_names(a, f"argument {i}")] + \
        [n for k, v in kwargs.items() for n in _leaf_names(v, f"keyword argument {k!r}")]
    size, first = axis_size, None
    moved = []
    for leaf, ax, lname in zip(leaves, axes, names):
        if ax is None or leaf is None:
            moved.append((leaf, None))
            continue
        if not _is_array_leaf(leaf):
            raise TypeError(f"{name}: {lname} is a {type(leaf).__name__}, which has no axis "
                            f"{ax} to map over; give it in_axes None, or pass an array")
        shape = shape_of(leaf)
        if not shape:
            raise ValueError(f"{name}: {lname} is 0-d (a scalar) but in_axes asks to map it "
                             f"along axis {ax}; give it in_axes None, or pass an array with "
                             f"the batch axis")
        if not -len(shape) <= ax < len(shape):
            raise ValueError(f"{name}: in_axes {ax} is out of range for {lname} of shape "
                             f"{shape} ({len(shape)} dimension(s))")
        ax %= len(shape)
        n = shape[ax]
        if size is None:
            size, first = n, (lname, ax)
        elif n != size:
            other = f"{first[0]} has {size} along axis {first[1]}" if first else \
                f"axis_size is {size}"
            raise ValueError(f"{name}: {lname} has size {n} along axis {ax} but {other}; "
                             f"every mapped argument needs the same batch size")
        moved.append((leaf, ax))
    if size is None:
        nones = [lname for leaf, ax, lname in zip(leaves, axes, names)
                 if leaf is None and ax is not None]
        if nones:    # vmap(f)(None): most likely a missing array, not an optional argument
            raise TypeError(f"{name}: {', '.join(nones)} is None and no other argument is "
                            f"mapped, so there is nothing to map over; pass an array with the "
                            f"batch axis (None is kept only beside mapped arrays, as an "
                            f"unused optional argument)")
        raise ValueError(f"{name}: in_axes maps no argument (every in_axes is None), so the "
                         f"batch size is unknown; pass axis_size=B, or map an argument")
    trace = BatchTrace(size)
    boxed = [leaf if ax is None else BatchTracer(trace, _move_axis(leaf, ax, 0))
             for leaf, ax in moved]
    try:
        call_args, call_kwargs = rebuild(boxed)
        out = traced_outputs(f(*call_args, **call_kwargs))
    except ValueError as e:
        raise_assignment_error(name, _fname(f), e)
        raise
    finally:
        trace.stop()
    if out is None:
        raise TypeError(f"{name}: {_fname(f)} returned None; did it forget to `return`? "
                        f"Return the arrays to map")
    return _unbatch_outputs(name, trace, out, out_axes)


def _unbatch_outputs(name, trace, out, out_axes):
    o_leaves, o_rebuild = flatten(out)
    if node(out_axes) is not None:
        axes = _axes_per_leaf(name, out_axes, out, "out_axes", "")
    else:
        axes = [out_axes] * len(o_leaves)
    results = []
    for i, (o, ax) in enumerate(zip(o_leaves, axes)):
        batched = isinstance(o, BatchTracer) and o._trace is trace
        if ax is None:
            if batched:
                raise ValueError(f"{name}: out_axes is None for output {i}, but it depends on "
                                 f"the mapped inputs (per-example shape {o.shape}): it differs "
                                 f"from example to example. Give it an out_axes (0), or "
                                 f"return a value shared by every example there")
            results.append(o)
            continue
        if o is None:
            results.append(o)
            continue
        if batched:
            val = o.val
        else:   # the same for every example: broadcast along the batch axis
            shape = shape_of(o)
            val = broadcast_to_p(o, shape=(trace.size,) + shape)
        nd = len(shape_of(val))
        if not -nd <= ax < nd:
            raise ValueError(f"{name}: out_axes {ax} is out of range for output {i}, of "
                             f"per-example shape {shape_of(val)[1:]} ({nd - 1} dimension(s), "
                             f"so {nd} with the batch axis)")
        results.append(_move_axis(val, 0, ax % nd))
    return o_rebuild(results)

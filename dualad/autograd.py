"""The imperative face, as PyTorch and OneFlow users know it.

Variables that require grad, ``backward`` accumulating into ``.grad``, ``grad``
returning gradients, and ``Function`` for custom rules::

    from dualad.autograd import Variable
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    np.sum(x ** 2).backward()
    x.grad          # array([2., 4.])


``Variable(x, requires_grad=True)`` is a leaf on one process-wide tape; every
operation on it records there. ``y.backward()`` sweeps back and *accumulates*
into ``leaf.grad``; :func:`grad` returns gradients instead. With
``create_graph=True`` the sweep runs the VJP rules on the tape itself, so the
gradients are Variables that can be differentiated again.

A Variable's methods are NumPy's (``x.sum(axis=1, keepdims=True)``); its reductions
(``sum``, ``mean``, ``prod``, ``max``, ``min``, ``std``, ``var``, ``cumsum``, ``cumprod``,
``argmax``, ``argmin``, ``all``, ``any``, ``squeeze``) also take PyTorch's and OneFlow's
``dim=`` and ``keepdim=``, as ``axis=`` and ``keepdims=``::

    x.exp().sum(dim=1)                 # OneFlow's example
    values, indices = x.max(dim=1)     # with dim=, max and min return both, as PyTorch
    x.std(dim=1, correction=1)         # PyTorch's n - 1; ddof=0 for NumPy's n

Where the two libraries' defaults differ, PyTorch's spelling must say which it means:
``x.std(dim=1)`` without ``correction=``, ``unbiased=`` or ``ddof=`` raises (PyTorch
divides by n - 1, NumPy by n), and so does ``x.var(keepdim=True)``; ``x.std()`` with no
keyword is NumPy's (ddof=0). Both spellings of one argument (``axis=`` and ``dim=``,
``keepdims=`` and ``keepdim=``) raise, naming both. Inside the functional
transformations (``dualad.grad``) a traced value stands for a NumPy array and takes
NumPy's keywords only.

PyTorch's graph habits, with PyTorch's semantics (docs/coming_from_pytorch.md has the
names side by side with PyTorch's and OneFlow's)::

    x.requires_grad_()                  # a leaf, in place; a computed Variable: detach()
    h = y.register_hook(lambda g: g * 2)   # replaces y's gradient in every sweep; h.remove()
    y.retain_grad()                     # backward keeps y.grad (a non-leaf's .grad warns)
    y.grad_fn.name(), y.grad_fn.next_functions   # 'MulBackward', ((AccumulateGrad, 0), ...)
    graph_of(y).to_dot()                # the recorded graph, drawn by dualad.teaching
    grad(y, [x, b], materialize_grads=True)      # zeros, not None, for an unused b
    with record_backward() as rec: ...  # rec.steps: primitive, shapes, seconds per node

Hooks, retained gradients and recordings are shown each node's cotangent by the one
reverse sweep (:mod:`dualad.interpreters.reverse.hooks`); without them the sweep runs as
it always did. A leaf's gradient has the leaf's dtype (a float32 leaf used with float64
data gets a float32 ``.grad``), as in PyTorch. ``Variable(x, requires_grad=True)`` refuses an
``np.matrix`` and a masked array, whose arithmetic dualad does not follow
(docs/sharp_bits.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .transforms.api import check_input
from ._autograd_methods import install as _install_torch_keywords
from ._autograd_hooks import GraphHabits, RemovableHandle  # noqa: F401  (part of this namespace)
from .transforms.custom import Function, FunctionCtx  # noqa: F401  (part of this namespace)
from .transforms.stop import StopGradientPrimitive
from .interpreters.reverse.sweep import backward_sweep
from .interpreters.reverse.tape import Var, VJPTrace
from .interpreters.reverse.hooks import watch_for
from .core.tracer import Box, primal_value, shape_of
from .core.lazy import attach as _attach
from .interpreters.reverse.versions import check_graph, stamp_node

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Variable", "backward", "grad", "Function", "FunctionCtx", "graph_of",
           "record_backward", "BackwardStep", "RemovableHandle"]

# Loaded on first use: the graph's teaching trace and the recording of backward steps
# (which imports logging).
__getattr__, __dir__ = _attach(__name__, attributes={
    "graph_of": "dualad._autograd_graph", "record_backward": "dualad._autograd_record",
    "BackwardStep": "dualad._autograd_record"})


class Variable(GraphHabits, Var):
    r"""A value on the imperative tape; ``.grad`` holds the accumulated gradients.

    As a PyTorch tensor: a leaf made with ``requires_grad=True`` records every
    operation computed from it (NumPy functions, operators, indexing) on one
    process-wide tape, and :meth:`backward` sweeps back from a result,
    *accumulating* :math:`\bar y^T \partial y/\partial x` into every reachable
    leaf's ``.grad`` (``None`` until the first sweep). Operations on Variables that
    do not require grad give constant Variables and record nothing. Modifying a
    leaf's array in place between the forward pass and ``backward`` raises there.

    Parameters
    ----------
    value : array_like
        The value (a plain array or number, not a traced value); with
        ``requires_grad=True`` it must be floating point (or complex).
    requires_grad : bool, default False
        Whether operations on it are recorded and its gradient is accumulated.
    _trace, _prim, _args, _params, _vals, _parents : object, optional
        Internal: set by the tape for an operation's result, never by users.

    Attributes
    ----------
    grad : numpy.ndarray or None
        The accumulated gradient.
    requires_grad : bool
        Whether the Variable is on the graph (set in place with :meth:`requires_grad_`).
    grad_fn : BackwardNode or None
        The recorded operation that computed it (``None`` for a leaf), with ``.name()``
        and ``.next_functions`` as PyTorch's.
    retains_grad : bool
        Whether :meth:`backward` keeps this computed Variable's gradient
        (:meth:`retain_grad`); hooks: :meth:`register_hook`.

    See Also
    --------
    dualad.autograd.grad : Gradients returned instead of accumulated.
    dualad.grad : The functional spelling.

    Examples
    --------
    >>> from dualad.autograd import Variable
    >>> x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    >>> y = np.sum(x ** 2)
    >>> y.backward()
    >>> print(x.grad)
    [2. 4.]
    >>> np.sum(x ** 2).backward()   # gradients accumulate
    >>> print(x.grad)
    [4. 8.]
    """

    # (``requires_grad``, ``grad``, ``grad_fn``, ``register_hook``, ``retain_grad``:
    # dualad._autograd_hooks.GraphHabits; hooks and retained gradients are kept by id in
    # dualad.interpreters.reverse.hooks, so a recorded operation's node stays its size)
    __slots__ = ("_requires_grad", "_grad", "stamps")
    _requires_grad: bool
    _grad: Any         # the accumulated gradient: None, an array, or a Variable (create_graph)
    stamps: Any

    def __init__(self, value: Any, requires_grad: bool = False, *, _trace: Any = None,
                 _prim: Any = None, _args: Any = None, _params: Any = None, _vals: Any = None,
                 _parents: Any = ()) -> None:
        if _trace is not None:  # created by the tape for an operation's result
            super().__init__(_trace, value, _prim, _args, _params, _vals, _parents)
            self._requires_grad = True
            self._grad = None
            # Fingerprints of the writable arrays this node saved (dualad.interpreters.reverse.versions), which
            # backward compares: a leaf's storage is shared with the caller's array.
            self.stamps = stamp_node(self, Variable) if _vals is not None else None
            return
        if isinstance(value, Box):
            raise TypeError("Variable: wrap a plain array, not a traced value")
        # (checked before np.asarray, which would make an np.matrix a plain array)
        arr = check_input("Variable", 0, value) if requires_grad else np.asarray(value)
        super().__init__(_TAPE, arr)
        self._requires_grad = bool(requires_grad)
        self._grad = None
        self.stamps = None

    @property
    def is_leaf(self) -> bool:
        """Whether the Variable was made by the user rather than computed by an operation.

        Returns
        -------
        bool
            True for a leaf (its ``.grad`` is accumulated by :meth:`backward`).
        """
        return self.prim is None

    @property
    def data(self) -> Any:
        """The value, as a plain array.

        A leaf's is its storage (writable, shared with the array it was made from;
        modifying it between a forward pass and ``backward`` raises there). An
        operation's result gives a read-only view: the tape's VJP rules read it.

        Returns
        -------
        numpy.ndarray or scalar
            The value.
        """
        value = primal_value(self.value)
        if self.prim is not None and isinstance(value, np.ndarray) and value.flags.writeable:
            value = value.view()
            value.flags.writeable = False
        return value

    def numpy(self) -> np.ndarray[Any, Any]:
        """Return a copy of the value as a NumPy array.

        Returns
        -------
        numpy.ndarray
            A new array, not shared with the tape.
        """
        return np.array(primal_value(self.value))

    def detach(self) -> Variable:
        """Return the value as a new constant Variable (as PyTorch's ``Tensor.detach``).

        It shares the array, does not require grad and is on no graph, so nothing
        computed from it reaches this Variable's leaves (its derivative is zero).
        Inside a functional transformation ``x.detach()`` is
        :func:`dualad.stop_gradient` ``(x)``.

        Returns
        -------
        Variable
            A constant Variable holding the same array.
        """
        return Variable(primal_value(self.value))

    def __copy__(self):
        return self.__deepcopy__({}) if self.is_leaf else self

    def __deepcopy__(self, memo):
        """A leaf copies into a new, independent leaf (as a PyTorch tensor does); a computed
        Variable is a value on the tape, so its copy is itself and keeps its derivative."""
        if not self.is_leaf:
            return self
        new = Variable(np.array(primal_value(self.value)), self.requires_grad)
        new.grad = None if self._grad is None else np.array(self._grad)
        return new

    def zero_grad(self) -> None:
        """Reset the accumulated gradient ``.grad`` to ``None``."""
        self._grad = None

    def backward(self, grad: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False) -> None:
        """Sweep back from this Variable, accumulating into the leaves' ``.grad``.

        ``x.grad += gradᵀ ∂self/∂x`` for every leaf ``x`` with ``requires_grad``;
        the same as :func:`dualad.autograd.backward` ``([self], [grad])``.

        Parameters
        ----------
        grad : array_like, optional
            The seed (cotangent) of this Variable's shape; only a real scalar
            may omit it (the seed is then 1).
        retain_graph : bool, optional
            Keep the tape for another sweep; default ``create_graph``.
        create_graph : bool, default False
            Record the sweep itself, so the gradients are Variables that can be
            differentiated again.
        """
        backward([self], None if grad is None else [grad], retain_graph, create_graph)

    def __repr__(self) -> str:
        rg = ", requires_grad=True" if self.requires_grad else ""
        return f"Variable({primal_value(self.value)!r}{rg})"


_install_torch_keywords(Variable)   # x.sum(dim=1, keepdim=True): dualad._autograd_methods


class _ImperativeTrace(VJPTrace):
    """The process-wide tape: records only what depends on a requires_grad leaf."""

    __slots__ = ()

    def process(self, prim, args, params):
        for a in args:
            if isinstance(a, Variable) and a._trace is self and a._requires_grad:
                if prim.__class__ is StopGradientPrimitive:   # stop_gradient(v): v.detach()
                    break
                return super().process(prim, args, params)
        plain = [a.value if isinstance(a, Variable) and a._trace is self else a for a in args]
        out = prim(*plain, **params)
        # Constants in, a constant Variable out (as a tensor without grad in PyTorch).
        return out if isinstance(out, (Box, tuple, list)) else Variable(out)


def _box(trace, value, prim=None, args=None, params=None, vals=None, parents=()):
    return Variable(value, _trace=trace, _prim=prim, _args=args, _params=params, _vals=vals,
                    _parents=parents)


# Level 0: below every functional transformation, which nests above it.
_TAPE = _ImperativeTrace(level=0, box_type=_box)


def _seeds(api, outputs, grad_outputs, batched):
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif not isinstance(grad_outputs, (tuple, list)):
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"{api}: {len(outputs)} outputs but {len(grad_outputs)} grad_outputs")
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Variable) or not out.requires_grad:
            raise RuntimeError(f"{api}: output {i} (shape {shape_of(out)}) does not require "
                               f"grad and has no grad_fn: nothing on it was computed from a "
                               f"Variable with requires_grad=True")
        oshape = shape_of(out)
        if g is None:
            if oshape != ():
                raise RuntimeError(f"{api}: grad can be implicitly created only for scalar "
                                   f"outputs; output {i} has shape {oshape}, pass "
                                   f"grad_outputs/gradient of that shape")
            if np.iscomplexobj(primal_value(out)):  # as PyTorch: no implicit complex seed
                raise RuntimeError(f"{api}: grad can be implicitly created only for real scalar "
                                   f"outputs; output {i} is complex "
                                   f"({primal_value(out).dtype}). Pass grad_outputs/gradient "
                                   f"(1+0j gives the holomorphic derivative f'(z)), or "
                                   f"differentiate a real loss such as np.abs(y) ** 2")
            g = np.ones((), dtype=primal_value(out).dtype)
        if not isinstance(g, Box):
            g, odtype = np.asarray(g), np.result_type(primal_value(out))
            if g.dtype.kind == "c" and odtype.kind != "c":   # as the functional vjp refuses
                raise TypeError(f"{api}: grad_outputs[{i}] is complex ({g.dtype}, shape "
                                f"{g.shape}) but output {i} is real ({odtype}, shape {oshape}); "
                                f"casting would drop the imaginary part. Pass a real seed, "
                                f"or seed the real and imaginary parts in two calls")
            g = g.astype(odtype, copy=False)
        gshape = shape_of(g)
        want = gshape[1:] if batched else gshape
        if want != oshape or (batched and not gshape):
            rule = (f"with is_grads_batched=True grad_outputs[{i}] must have shape (B, *"
                    f"outputs[{i}].shape) = (B, {', '.join(map(str, oshape))})"
                    if batched else f"grad_outputs[{i}] must have the output's shape {oshape}")
            raise ValueError(f"{api}: grad_outputs[{i}] has shape {gshape}, but {rule}")
        seeds.append((out, g))
    if batched and len({shape_of(g)[0] for _, g in seeds}) > 1:
        raise ValueError(f"{api}: batched grad_outputs disagree on the batch size B")
    return seeds


def _stamps_of(node):
    return getattr(node, "stamps", None)   # None on a node that is not a Variable


def backward(tensors: Variable | Sequence[Variable], grad_tensors: Any = None,
             retain_graph: bool | None = None, create_graph: bool = False) -> None:
    r"""Sweep back from ``tensors``, accumulating their gradients into the leaves' ``.grad``.

    For every leaf :math:`x` with ``requires_grad`` reachable from the outputs
    :math:`y_i`, ``x.grad`` grows by :math:`\sum_i \bar y_i^T\,\partial y_i/\partial x`
    (``grad_tensors`` are the :math:`\bar y_i`): one reverse sweep over the
    process-wide tape, as ``torch.autograd.backward``.

    Parameters
    ----------
    tensors : Variable or sequence of Variable
        The outputs to differentiate.
    grad_tensors : array_like or sequence of array_like, optional
        One seed per output, of its shape; ``None`` (or a ``None`` entry) seeds a
        real scalar output with 1.
    retain_graph : bool, optional
        Keep the tape for another sweep; default ``create_graph``.
    create_graph : bool, default False
        Record the sweep, so the accumulated gradients are Variables that can be
        differentiated again.

    Raises
    ------
    RuntimeError
        If an output does not require grad, a non-scalar or complex output has no
        seed, or a saved array was modified in place since the forward pass.
    ValueError
        If the numbers of outputs and seeds differ, or a seed has the wrong shape.
    TypeError
        If a seed is complex for a real output.

    See Also
    --------
    dualad.autograd.grad : Gradients returned instead of accumulated.

    Examples
    --------
    >>> from dualad.autograd import Variable, backward
    >>> a = Variable(2.0, requires_grad=True)
    >>> b = Variable(3.0, requires_grad=True)
    >>> backward([a * b])
    >>> print(float(a.grad), float(b.grad))
    3.0 2.0
    """
    seeds = _seeds("backward", tensors, grad_tensors, False)
    check_graph("backward", seeds, _stamps_of)
    retain = create_graph if retain_graph is None else retain_graph
    results = _sweep(seeds, watch_for(seeds, None, True, create_graph), create_graph, retain, None)
    for leaf, g in results.items():
        if leaf._requires_grad:
            leaf._grad = g if leaf._grad is None else leaf._grad + g


def _sweep(seeds, watch, create_graph, retain, wanted):
    """The one reverse sweep over the imperative tape, with the ``watch`` of hooks,
    retained gradients and recording (None: none apply); a step still being timed when
    the sweep ends (or raises) is closed."""
    try:
        return backward_sweep(seeds, trace=_TAPE, create_graph=create_graph,
                              retain_graph=retain, wanted=wanted, watch=watch)
    finally:
        if watch is not None and watch.open is not None:
            watch.close()


def grad(outputs: Variable | Sequence[Variable], inputs: Variable | Sequence[Variable],
         grad_outputs: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[Any, ...]:
    r"""Return the gradients of ``outputs`` with respect to ``inputs``, without accumulating.

    The result for input :math:`x_j` is
    :math:`\sum_i \bar y_i^T\,\partial y_i/\partial x_j` (``grad_outputs`` are the
    :math:`\bar y_i`), by one reverse sweep over the imperative tape, as
    ``torch.autograd.grad``; ``.grad`` attributes are left alone.

    Parameters
    ----------
    outputs : Variable or sequence of Variable
        The outputs :math:`y_i`.
    inputs : Variable or sequence of Variable
        Leaves (or intermediate Variables) with ``requires_grad``.
    grad_outputs : array_like or sequence of array_like, optional
        One seed per output, of its shape; omitted for a real scalar output (1).
    retain_graph : bool, optional
        Keep the tape for another sweep; default ``create_graph``.
    create_graph : bool, default False
        Record the sweep, so the gradients are Variables that can be
        differentiated again (higher order).
    allow_unused : bool, optional
        Return ``None`` for an input the outputs do not depend on instead of
        raising. Default: ``materialize_grads`` (as PyTorch).
    is_grads_batched : bool, default False
        ``grad_outputs[i]`` has shape ``(B, *outputs[i].shape)`` and every result
        ``(B, *inputs[j].shape)``: B vector-Jacobian products in one batched sweep.
    materialize_grads : bool, default False
        Return zeros (the input's shape, or ``(B, *shape)`` with ``is_grads_batched``,
        and dtype; a plain array) for an unused input instead of ``None``: its
        gradient is zero. Implies ``allow_unused``; with ``allow_unused=False`` it
        raises.

    Returns
    -------
    tuple
        One gradient per input (plain arrays, or Variables with
        ``create_graph=True``; ``None`` for an unused input with
        ``allow_unused=True``, zeros with ``materialize_grads=True``).

    Raises
    ------
    RuntimeError
        If an input does not require grad, an input is unused (without
        ``allow_unused``), an output does not require grad, or a non-scalar
        output has no seed.
    ValueError
        If a seed has the wrong shape, the batched seeds disagree on B, or
        ``materialize_grads=True`` comes with ``allow_unused=False``.

    See Also
    --------
    dualad.autograd.backward : Accumulate into ``.grad`` instead.
    dualad.grad : The functional spelling.

    Examples
    --------
    >>> from dualad.autograd import Variable, grad
    >>> x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    >>> (g,) = grad(np.sum(x ** 3), x, create_graph=True)
    >>> print(g.numpy())
    [ 3. 12.]
    >>> (h,) = grad(np.sum(g), x)   # the Hessian's row sums, 6x
    >>> print(h)
    [ 6. 12.]
    >>> w = Variable(np.ones(2), requires_grad=True)
    >>> print(grad(np.sum(x * 2.0), [x, w], materialize_grads=True)[1])   # w is unused
    [0. 0.]
    """
    if allow_unused is None:
        allow_unused = bool(materialize_grads)
    elif materialize_grads and not allow_unused:
        raise ValueError("grad: materialize_grads=True gives zeros for unused inputs, which "
                         "allow_unused=False forbids; leave allow_unused out (or pass True)")
    single = not isinstance(inputs, (tuple, list))
    inputs = [inputs] if single else list(inputs)
    for j, x in enumerate(inputs):
        if not isinstance(x, Variable) or not x.requires_grad:
            raise RuntimeError(f"grad: inputs[{j}] (shape {shape_of(x)}) does not require grad")
    seeds = _seeds("grad", outputs, grad_outputs, is_grads_batched)
    check_graph("grad", seeds, _stamps_of)
    retain = create_graph if retain_graph is None else retain_graph
    wanted = set(inputs)
    results = _sweep(seeds, watch_for(seeds, wanted, False, create_graph), create_graph, retain,
                     wanted)
    out = []
    for j, x in enumerate(inputs):
        g = results.get(x)
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: inputs[{j}] (shape {shape_of(x)}) was not used to "
                                   f"compute the outputs; pass allow_unused=True to get None, "
                                   f"or materialize_grads=True to get zeros")
            if materialize_grads:
                g = _zeros_for(x, seeds, is_grads_batched)
        out.append(g)
    return tuple(out)


def _zeros_for(x, seeds, batched):
    """The gradient of an unused input: zeros of its shape (behind the batch axis B) and
    dtype."""
    value = primal_value(x.value)
    shape = shape_of(value)
    if batched:
        shape = (shape_of(seeds[0][1])[0],) + shape
    return np.zeros(shape, dtype=np.result_type(value))

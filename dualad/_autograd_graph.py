"""The recorded graph seen as PyTorch shows it: ``grad_fn`` nodes and ``next_functions``.

Every Variable computed from one that requires grad is a node of the imperative tape
(:mod:`dualad.interpreters.reverse.tape`); ``v.grad_fn`` presents that node as PyTorch
presents a tensor's ``grad_fn``:

- a :class:`BackwardNode` named after the primitive that made ``v``, in PyTorch's style
  (``multiply`` -> ``MulBackward``, ``sin`` -> ``SinBackward``; PyTorch appends an
  overload number, ``MulBackward0``, which dualad's names do not carry);
- ``node.next_functions``: one ``(node, output_index)`` pair per operand, in the order of
  the primitive's arguments: the :class:`BackwardNode` of a computed operand, an
  :class:`AccumulateGrad` (with ``.variable``, the leaf) for a leaf that requires grad,
  ``(None, 0)`` for a constant (a number, an array, a Variable that does not require
  grad). ``output_index`` is always 0: each dualad node has one output.

Walking ``next_functions`` from ``y.grad_fn`` visits the graph ``backward`` sweeps.
:func:`graph_of` lays the same graph out as a teaching trace (:mod:`dualad.teaching`:
text, Markdown, LaTeX, Graphviz DOT and PNG, with the adjoint of every node).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .core.tracer import Box, shape_of

__all__ = ["BackwardNode", "AccumulateGrad", "graph_of", "backward_name"]

# dualad's primitive names that PyTorch abbreviates or names otherwise in its nodes.
_TORCH_NAMES = {"multiply": "Mul", "subtract": "Sub", "divide": "Div", "negative": "Neg",
                "power": "Pow", "absolute": "Abs", "getitem": "Index", "copy": "Clone",
                "cast": "ToCopy", "broadcast_to": "Expand", "transpose": "Permute",
                "matmul": "Matmul"}

_FREED = ("the graph behind this Variable was freed by a backward sweep; pass "
          "retain_graph=True to that backward (or grad) call to walk it afterwards")


def backward_name(prim_name: str) -> str:
    """PyTorch's style of node name for a primitive: ``"multiply"`` -> ``"MulBackward"``,
    ``"log1p"`` -> ``"Log1pBackward"``, ``"sort_permute"`` -> ``"SortPermuteBackward"``."""
    stem = _TORCH_NAMES.get(prim_name)
    if stem is None:
        stem = "".join(part[:1].upper() + part[1:] for part in prim_name.split("_"))
    return stem + "Backward"


class _Node:
    __slots__ = ()

    def name(self) -> str:
        """The node's name, as ``torch.autograd.graph.Node.name()``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.name()} of a Variable of shape {shape_of(self._of())}>"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._of() is self._of()

    def __hash__(self) -> int:
        return hash((type(self), id(self._of())))


class AccumulateGrad(_Node):
    """The node of a leaf that requires grad: the sweep accumulates into ``variable.grad``.

    Attributes
    ----------
    variable : Variable
        The leaf.
    next_functions : tuple
        Empty: the graph ends here.
    """

    __slots__ = ("variable",)
    next_functions = ()

    def __init__(self, variable: Any) -> None:
        self.variable = variable

    def _of(self):
        return self.variable

    def name(self) -> str:
        """``"AccumulateGrad"``."""
        return "AccumulateGrad"


class BackwardNode(_Node):
    """The recorded operation that computed a Variable (its ``grad_fn``).

    Made by ``Variable.grad_fn``; two nodes for the same Variable compare equal.

    Attributes
    ----------
    primitive : str
        The dualad primitive's name (``"multiply"``).
    """

    __slots__ = ("_output",)

    def __init__(self, output: Any) -> None:
        self._output = output

    def _of(self):
        return self._output

    @property
    def primitive(self) -> str:
        """The name of the primitive that computed the Variable."""
        return self._output.prim.name

    def name(self) -> str:
        """PyTorch's style of name: ``MulBackward`` (see :func:`backward_name`)."""
        return backward_name(self._output.prim.name)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """``((node, 0), ...)``: one pair per operand of the primitive, in argument order.

        Raises
        ------
        RuntimeError
            If a backward sweep without ``retain_graph=True`` freed the graph.
        """
        out = self._output
        if out.args is None:
            raise RuntimeError(f"{self.name()}.next_functions: {_FREED}")
        return tuple((_node_of(a, out), 0) for j, a in enumerate(out.args)
                     if j in out.parents or _is_operand(a))


def _is_operand(a):
    """A positional argument that is a value (a number, an array, a traced value), not
    structure (an index, an axis, a dtype, None)."""
    return isinstance(a, (Box, np.ndarray, np.generic, float, int, complex)) \
        and not isinstance(a, bool)


def _node_of(a, out):
    if not (isinstance(a, Box) and getattr(a, "_trace", None) is out._trace) \
            or not a.requires_grad:
        return None
    return AccumulateGrad(a) if a.prim is None else BackwardNode(a)


def graph_of(output: Any, seed: Any = None) -> Any:
    r"""The graph recorded behind ``output``, as a teaching trace.

    The same nodes that ``output.grad_fn`` and its ``next_functions`` lead to, laid out
    as :func:`dualad.teaching.trace` lays out a function: the primal rows (every
    node's formula and value), then the adjoint trace the registry's VJP rules compute
    from the seed :math:`\bar y` (default: ones of the output's shape), then each leaf's
    gradient. The result renders as text, Markdown, LaTeX, Graphviz DOT
    (``.to_dot()``) and PNG (``.plot(path)``). Nothing is accumulated into ``.grad``
    and the graph is left as it was.

    Parameters
    ----------
    output : Variable
        A Variable computed from Variables that require grad.
    seed : array_like, optional
        :math:`\bar y`, of the output's shape.

    Returns
    -------
    dualad.teaching.EvaluationTrace
        Mode ``"reverse"``; the leaves (inputs first, then constants) are named
        ``x_1 .. x_n`` when they require grad and ``c_1 ..`` otherwise.

    Raises
    ------
    ValueError
        If ``output`` is a leaf or does not require grad (there is no graph).
    RuntimeError
        If a backward sweep without ``retain_graph=True`` freed the graph.

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.autograd import Variable, graph_of
    >>> x = Variable(2.0, requires_grad=True)
    >>> y = x * np.sin(x)
    >>> et = graph_of(y)
    >>> print(et.to_dot().splitlines()[3])
      "v_0" [label="v_0 = 2.000\nv̄_0 = 0.077"];
    """
    from .teaching.recorded import recorded_trace
    grad_fn = getattr(output, "grad_fn", None)
    if grad_fn is None:
        raise ValueError(f"graph_of: the output (shape {shape_of(output)}) has no recorded "
                         f"graph: it is a leaf or does not require grad; compute it from a "
                         f"Variable made with requires_grad=True")
    return recorded_trace(output, seed, freed=f"graph_of: {_FREED}")

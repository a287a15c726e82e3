"""PyTorch's graph habits on :class:`dualad.autograd.Variable`: ``requires_grad_``,
``retain_grad``, ``register_hook`` and ``grad_fn``.

They are kept in a mixin, :class:`GraphHabits`, so that :mod:`dualad.autograd` stays
readable whole; the hooks run inside the one reverse sweep, shown each node's cotangent
by :mod:`dualad.interpreters.reverse.hooks`.

Semantics (PyTorch's, from its documentation of ``Tensor.register_hook``,
``Tensor.retain_grad`` and the autograd notes on backward hooks):

- ``hook(grad)`` is called with the gradient of the sweep's outputs with respect to the
  Variable, summed over all its uses, once per sweep that reaches it; a returned value
  replaces the gradient (what flows on to the inputs, and what a leaf accumulates into
  ``.grad``); hooks run in the order they were registered, each given what the one
  before it returned; a retained gradient is stored after all hooks ran.
- Under :func:`dualad.autograd.grad` hooks fire on the inputs asked for and on the
  nodes through which one of them is reached, never on other leaves.
- ``.grad`` of a non-leaf Variable is ``None`` unless ``retain_grad()`` was called, and
  reading it then warns (a ``UserWarning``, as PyTorch's); :func:`~dualad.autograd.grad`
  never writes ``.grad``, retained or not.
"""
from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np

from .interpreters.reverse.hooks import HOOKS, RETAINED, unwatch_if_idle, watch
from .core.tracer import shape_of

__all__ = ["GraphHabits", "RemovableHandle"]

_handle_ids = itertools.count().__next__


class RemovableHandle:
    """The handle :meth:`GraphHabits.register_hook` returns, to remove the hook.

    ``handle.remove()`` removes it; a second ``remove()`` does nothing.

    Parameters
    ----------
    variable : Variable
        The Variable the hook is registered on.
    hid : int
        The hook's key in the Variable's hooks.
    """

    __slots__ = ("variable", "id")

    def __init__(self, variable, hid):
        self.variable = variable
        self.id = hid

    def remove(self) -> None:
        """Remove the hook; the Variable's later sweeps no longer call it."""
        v = self.variable
        hooks = v._hooks_or_none()
        if hooks is not None and self.id in hooks:
            del hooks[self.id]
            unwatch_if_idle(v)

    def __repr__(self) -> str:
        return f"<RemovableHandle of a hook on a Variable of shape {shape_of(self.variable)}>"


class GraphHabits:
    """The mixin: needs the slots ``_requires_grad`` and ``_grad`` and the tape node's
    ``prim`` (None for a leaf); hooks and retained gradients are kept by id in
    ``dualad.interpreters.reverse.hooks`` (forgotten when the Variable is freed)."""

    __slots__ = ()

    @property
    def requires_grad(self) -> bool:
        """Whether operations on the Variable are recorded and its gradient is computed.

        Setting it is :meth:`requires_grad_`, with the same checks.
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Any:
        """Set whether this leaf requires grad, in place; returns the Variable itself.

        As ``torch.Tensor.requires_grad_``: a leaf may be switched either way (switching
        it on checks its value is floating point or complex, as ``Variable(...,
        requires_grad=True)`` does); a computed Variable always requires grad, so
        ``requires_grad_(True)`` on it does nothing and ``requires_grad_(False)`` raises:
        use :meth:`detach` for a constant copy.

        Raises
        ------
        RuntimeError
            For ``requires_grad_(False)`` on a computed Variable.
        TypeError
            For ``requires_grad_(True)`` on an integer, boolean or object value, or a
            ``requires_grad`` that is not a bool.
        """
        if not isinstance(requires_grad, (bool, int, np.bool_)):
            raise TypeError(f"Variable.requires_grad_: requires_grad must be a bool, got "
                            f"{type(requires_grad).__name__} (Variable of shape "
                            f"{shape_of(self)})")
        requires_grad = bool(requires_grad)
        if self.prim is not None:
            if not requires_grad:
                raise RuntimeError(
                    f"Variable.requires_grad_(False): you can only change requires_grad of "
                    f"leaf Variables; this one (shape {shape_of(self)}) was computed by "
                    f"'{self.prim.name}'. For a constant copy of it that is on no graph, "
                    f"use v.detach()")
            return self
        if requires_grad and not self._requires_grad:
            from .transforms.api import check_input
            self.value = check_input("Variable.requires_grad_", 0, self.value)
        self._requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Any:
        """The accumulated gradient: ``None``, an array, or a Variable (``create_graph``).

        A leaf's is accumulated by every ``backward``; a computed Variable's only after
        :meth:`retain_grad` (reading it otherwise warns and gives ``None``).
        """
        if self.prim is not None and not self.retains_grad:
            warnings.warn(
                f"Variable.grad of a non-leaf Variable (shape {shape_of(self)}, computed by "
                f"'{self.prim.name}') is read, but backward does not store it there; call "
                f"v.retain_grad() before backward to keep it, or use "
                f"dualad.autograd.grad(outputs, v)", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        """Whether backward stores this computed Variable's gradient in ``.grad``."""
        return id(self) in RETAINED

    def retain_grad(self) -> None:
        """Have ``backward`` store this computed Variable's gradient in ``.grad``.

        Accumulated across ``backward`` calls (as a leaf's is), after the Variable's
        hooks ran; a leaf's gradient is always kept, so on a leaf it does nothing.
        ``dualad.autograd.grad`` never writes ``.grad``.

        Raises
        ------
        RuntimeError
            If the Variable does not require grad.
        """
        if not self._requires_grad:
            raise RuntimeError(f"Variable.retain_grad: this Variable (shape "
                               f"{shape_of(self)}) does not require grad, so it has no "
                               f"gradient to keep")
        if self.prim is None:
            return
        watch(self)
        RETAINED.add(id(self))

    def register_hook(self, hook: Any) -> RemovableHandle:
        r"""Call ``hook(grad)`` whenever a sweep computes this Variable's gradient.

        ``grad`` is :math:`\sum_i \bar y_i^T \partial y_i/\partial v`, the gradient of the
        sweep's outputs with respect to this Variable (shape ``v.shape``; with
        ``is_grads_batched``, ``(B, *v.shape)``; a Variable under ``create_graph=True``).
        The hook must not modify ``grad``; it returns ``None`` or a new gradient of the
        same shape, which replaces ``grad``: it is what flows on to the Variable's inputs
        and, for a leaf, what is accumulated into ``.grad``. Several hooks run in the
        order they were registered, each given the previous one's result.

        Parameters
        ----------
        hook : callable
            ``hook(grad) -> array or None``.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` removes the hook.

        Raises
        ------
        RuntimeError
            If the Variable does not require grad.
        TypeError
            If ``hook`` is not callable.

        Examples
        --------
        >>> import numpy as np
        >>> from dualad.autograd import Variable
        >>> v = Variable(np.array([0.0, 0.0, 0.0]), requires_grad=True)
        >>> h = v.register_hook(lambda grad: grad * 2)   # double the gradient
        >>> v.backward(np.array([1.0, 2.0, 3.0]))
        >>> print(v.grad)
        [2. 4. 6.]
        >>> h.remove()
        """
        if not callable(hook):
            raise TypeError(f"Variable.register_hook: hook must be callable, got "
                            f"{type(hook).__name__} (Variable of shape {shape_of(self)})")
        if not self._requires_grad:
            raise RuntimeError(f"Variable.register_hook: cannot register a hook on a "
                               f"Variable that does not require grad (shape "
                               f"{shape_of(self)}); make it with requires_grad=True or call "
                               f"v.requires_grad_() first")
        watch(self)
        hid = _handle_ids()
        HOOKS.setdefault(id(self), {})[hid] = hook
        return RemovableHandle(self, hid)

    def _hooks_or_none(self):
        return HOOKS.get(id(self))

    @property
    def grad_fn(self) -> Any:
        """The node of the recorded graph that made this Variable, or ``None``.

        ``None`` for a leaf and for a Variable that does not require grad; otherwise a
        ``BackwardNode`` named after the primitive, as
        PyTorch's (``MulBackward`` for ``multiply``), whose ``next_functions`` lead to
        the inputs' nodes (see ``dualad._autograd_graph``).
        """
        if self.prim is None or not self._requires_grad:
            return None
        from ._autograd_graph import BackwardNode
        return BackwardNode(self)

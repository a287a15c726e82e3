"""The one registry of pytree nodes: which Python objects are containers of leaves.

A *pytree* is a value built from containers whose leaves are arrays (or numbers). The
containers are fixed here, once, for every transformation: tuples, lists, dicts and
named tuples (built in, as in JAX), and the classes a user registers with
:func:`register` (a flatten and an unflatten function, as
``jax.tree_util.register_pytree_node``) or :func:`register_dataclass` (a dataclass whose
data fields are children and whose meta fields are static). Anything else is a leaf.

A node is read one level at a time by :func:`node`: ``(kind, aux, children)``, where
``aux`` is the static part (a dict's keys, a registered class's auxiliary data), which
:mod:`dualad.core.tree` keeps in the tree's structure (so ``jit`` retraces when it
changes); :func:`child_keys` names the children for error messages (``.w``, ``[1]``,
``['b']``).

Registration is a user's explicit action on the user's own class: it changes how that
class is read, nothing else. Builtins, NumPy arrays and named tuples cannot be
registered (they are leaves or containers already), and a class registers once.
"""
from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["node", "child_keys", "build", "register", "register_dataclass", "is_registered"]


class _Node(NamedTuple):
    flatten: Callable[[Any], Any]
    unflatten: Callable[[Any, tuple], Any]
    fields: tuple[str, ...] | None    # the children's names, when known (dataclasses)


_NODES: dict[type, _Node] = {}
_LOCK = threading.Lock()
# Leaves or containers already: registering them would change every transformation's
# reading of every user's values, not one class's.
_BUILTIN = (tuple, list, dict, np.ndarray, np.generic, int, float, complex, bool, str,
            bytes, type(None), set, frozenset)


def node(tree: Any) -> tuple[type, Any, Sequence[Any]] | None:
    """One level of ``tree``: ``(kind, aux, children)``, or None for a leaf."""
    reg = _NODES.get(type(tree))
    if reg is not None:
        return _registered(tree, reg)
    if isinstance(tree, (tuple, list)):
        return type(tree), None, tree
    if isinstance(tree, dict):
        aux = tuple(tree)
        return dict, aux, [tree[k] for k in aux]
    return None


def child_keys(kind: type, aux: Any, children: Sequence[Any]) -> list[str]:
    """How a path names each child of a node (:func:`node`'s triple): ``.w`` for the
    fields of named tuples and registered dataclasses, ``['b']`` for dict keys, ``[1]``
    for other children."""
    reg = _NODES.get(kind)
    fields = reg.fields if reg is not None else \
        (getattr(kind, "_fields", None) if issubclass(kind, tuple) else None)
    if fields is not None:
        return [f".{f}" for f in fields]
    if kind is dict:
        return [f"[{k!r}]" for k in aux]
    return [f"[{i}]" for i in range(len(children))]


def _registered(tree, reg):
    out = reg.flatten(tree)
    if not (isinstance(out, (tuple, list)) and len(out) == 2
            and isinstance(out[0], (tuple, list))):
        raise TypeError(
            f"dualad.tree: the flatten function registered for {type(tree).__name__} "
            f"returned {type(out).__name__}, not (children, aux_data): return a tuple whose "
            f"first item is a list or tuple of the children")
    return type(tree), out[1], out[0]


def build(kind: type, aux: Any, children: list[Any]) -> Any:
    """The container of ``kind`` with ``aux`` and ``children`` (the inverse of :func:`node`)."""
    reg = _NODES.get(kind)
    if reg is not None:
        out = reg.unflatten(aux, tuple(children))
        if out is None:
            raise TypeError(f"dualad.tree: the unflatten function registered for "
                            f"{kind.__name__} returned None; it must return the rebuilt "
                            f"object (did it forget to `return`?)")
        return out
    if kind is dict:
        return dict(zip(aux, children))
    if kind is tuple:
        return tuple(children)
    if issubclass(kind, tuple):
        return kind(*children) if hasattr(kind, "_fields") else tuple(children)
    return kind(children)


def is_registered(cls: type) -> bool:
    """Whether ``cls`` was registered with :func:`register` or :func:`register_dataclass`."""
    return cls in _NODES


def register(nodetype: type, flatten: Callable[[Any], tuple[Sequence[Any], Any]],
             unflatten: Callable[[Any, Sequence[Any]], Any]) -> None:
    """Make instances of ``nodetype`` pytree nodes for every transformation.

    As ``jax.tree_util.register_pytree_node``: ``flatten(obj) -> (children, aux_data)``,
    where ``children`` is a list or tuple of the values that are themselves pytrees
    (arrays, containers) and ``aux_data`` the static part (hashable: ``jit`` keys its
    cache on it, so a new ``aux_data`` retraces); ``unflatten(aux_data, children)``
    rebuilds an object from them. ``unflatten(*flatten(obj)[::-1])`` must equal ``obj``.

    Parameters
    ----------
    nodetype : type
        The user's class (exactly this class: subclasses register on their own).
    flatten, unflatten : callable
        As above.

    Raises
    ------
    TypeError
        ``nodetype`` is not a class, is a builtin container or leaf type (tuple, list, dict,
        a NumPy array, a number, None), a named tuple (already a node), or ``flatten``
        or ``unflatten`` is not callable.
    ValueError
        ``nodetype`` is registered already.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad
    >>> class Affine:
    ...     def __init__(self, w, b):
    ...         self.w, self.b = w, b
    >>> dualad.tree.register(Affine, lambda a: ((a.w, a.b), None),
    ...                      lambda aux, children: Affine(*children))
    >>> g = dualad.grad(lambda p: np.sum(p.w * 3.0 + p.b))(Affine(np.ones(2), 1.0))
    >>> print(g.w, g.b)
    [3. 3.] 2.0
    """
    cls = nodetype
    _check_class(cls, "register")
    for what, fn in (("flatten", flatten), ("unflatten", unflatten)):
        if not callable(fn):
            raise TypeError(f"dualad.tree.register: {what} must be callable, got "
                            f"{type(fn).__name__} (for {cls.__name__})")
    _add(cls, _Node(flatten, unflatten, None), "register")


def _check_class(cls, api):
    if not isinstance(cls, type):
        raise TypeError(f"dualad.tree.{api}: nodetype must be a class, got {type(cls).__name__}"
                        f" {cls!r}")
    if cls in _BUILTIN or issubclass(cls, np.ndarray):
        raise TypeError(
            f"dualad.tree.{api}: {cls.__name__} is built in (tuples, lists, dicts and named "
            f"tuples are containers already; arrays and numbers are leaves): register your "
            f"own class, or wrap the value in one")
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        raise TypeError(f"dualad.tree.{api}: {cls.__name__} is a named tuple, a pytree "
                        f"node already (its fields are its children): no registration needed")


def _add(cls, entry, api):
    with _LOCK:
        if cls in _NODES:
            raise ValueError(
                f"dualad.tree.{api}: {cls.__qualname__} is registered already; a class "
                f"registers once (every transformation reads it the first way): define the "
                f"other reading on a subclass or a new class")
        _NODES[cls] = entry


def register_dataclass(nodetype: type | None = None, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Any:
    """Make a dataclass a pytree node: data fields are children, meta fields static.

    As ``jax.tree_util.register_dataclass``. Without ``data_fields`` and ``meta_fields``
    they are read from the dataclass: a field declared with
    ``dataclasses.field(metadata={"static": True})`` is a meta field, every other field
    (with ``init=True``) a data field. Given, the two lists (and ``drop_fields``, fields
    left out of both, not passed to the constructor) must name every ``init`` field once.
    Meta fields are part of the tree's structure: hashable, compared by ``==``, and a
    ``jit``-compiled function retraces when they change. Usable as a decorator.

    Parameters
    ----------
    nodetype : type
        A class decorated with ``@dataclasses.dataclass``.
    data_fields, meta_fields : sequence of str, optional
        The children and the static fields, in this order; both or neither.
    drop_fields : sequence of str, optional
        Fields that are neither (``init=False`` fields, recomputed by ``__post_init__``).

    Returns
    -------
    type
        ``nodetype`` itself (so ``@register_dataclass`` decorates).

    Examples
    --------
    >>> import dataclasses
    >>> import numpy as np
    >>> import dualad
    >>> @dualad.tree.register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: np.ndarray
    ...     activation: str = dataclasses.field(default="tanh", metadata={"static": True})
    >>> dualad.tree.leaves(Layer(np.ones(2)))
    [array([1., 1.])]
    """
    cls = nodetype
    if cls is None:
        return lambda c: register_dataclass(c, data_fields, meta_fields, drop_fields)
    _check_class(cls, "register_dataclass")
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"dualad.tree.register_dataclass: {cls.__name__} is not a dataclass: "
                        f"decorate it with @dataclasses.dataclass first (below this "
                        f"decorator), or use dualad.tree.register(cls, flatten, unflatten)")
    data, meta = _dataclass_fields(cls, data_fields, meta_fields, tuple(drop_fields))
    _add(cls, _Node(lambda obj: (tuple(getattr(obj, f) for f in data),
                                 tuple(getattr(obj, f) for f in meta)),
                    lambda aux, children: cls(**dict(zip(data, children)),
                                              **dict(zip(meta, aux))),
                    data), "register_dataclass")
    return cls


def _dataclass_fields(cls, data, meta, drop):
    fields = [f for f in dataclasses.fields(cls) if f.init]
    if data is None and meta is None:
        meta = tuple(f.name for f in fields if f.metadata.get("static", False)
                     and f.name not in drop)
        data = tuple(f.name for f in fields if f.name not in meta and f.name not in drop)
        return data, meta
    if data is None or meta is None:
        raise TypeError(f"dualad.tree.register_dataclass: give both data_fields and "
                        f"meta_fields for {cls.__name__}, or neither (then fields with "
                        f"metadata={{'static': True}} are meta, the others data)")
    data, meta = tuple(data), tuple(meta)
    named = list(data) + list(meta) + list(drop)
    init = [f.name for f in fields]
    if sorted(named) != sorted(init):
        missing = [n for n in init if n not in named]
        extra = [n for n in named if n not in init or named.count(n) > 1]
        raise ValueError(
            f"dualad.tree.register_dataclass: data_fields, meta_fields and drop_fields "
            f"must name each init field of {cls.__name__} ({init}) once; missing "
            f"{missing}, unknown or repeated {sorted(set(extra))}")
    return data, meta

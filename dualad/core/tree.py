"""Nested containers of arrays (pytrees): flatten and rebuild.

The containers are those of :mod:`dualad.core.tree_nodes`, the one registry: tuples,
lists, dicts, named tuples and the classes users register. Every transformation reads
its arguments and results through these functions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .tree_nodes import build, child_keys, is_registered, node

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["flatten", "unflatten", "is_leaf", "leaves", "leaves_with_path", "structure", "TreeDef", "tree_map", "describe",
           "flatten_like"]


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
            ) -> tuple[list[Any], TreeDef]:
    """Return the leaves of a tree in order, and a function that rebuilds it from new leaves.

    Transformations take and return trees of arrays (the primals, tangents and
    cotangents of several arguments): they flatten a tree to its leaves, work on those,
    and rebuild a tree of the same structure (of tangents, of cotangents) from the
    results.

    Parameters
    ----------
    tree : object
        Nested tuples (named tuples too), lists, dicts and registered classes
        (:func:`dualad.tree.register`); anything else is a leaf.
    is_leaf : callable, optional
        ``is_leaf(node) -> bool``: a node for which it is true is taken as one leaf,
        not opened (as JAX's ``is_leaf=``).

    Returns
    -------
    leaves : list
        The leaves, depth first (dicts in their key order).
    rebuild : TreeDef
        The structure; ``rebuild(new_leaves)`` (or ``unflatten(rebuild, new_leaves)``)
        is the tree with ``new_leaves`` in place of the leaves.

    See Also
    --------
    tree_map : Map a function over the leaves.

    Examples
    --------
    >>> from dualad.extend import flatten
    >>> leaves, rebuild = flatten({"a": (1.0, 2.0), "b": [3.0]})
    >>> leaves
    [1.0, 2.0, 3.0]
    >>> rebuild([10, 20, 30])
    {'a': (10, 20), 'b': [30]}
    """
    leaves = []
    spec = _flatten(tree, leaves) if is_leaf is None else _flatten_upto(tree, leaves, is_leaf)
    return leaves, TreeDef(spec, len(leaves))


class TreeDef:
    """A tree's structure without its leaves: call it with new leaves to rebuild the tree.

    ``treedef(new_leaves)`` and ``unflatten(treedef, new_leaves)`` are the same (JAX's
    ``PyTreeDef``). Two structures are equal (and hash alike) when their containers, dict
    keys, named-tuple types and registered classes' auxiliary data are equal: ``jit`` keys
    its cache on it, so a registered node with new auxiliary data is traced again.

    Parameters
    ----------
    spec : tuple or None
        The nested ``(kind, aux, children)`` description :func:`flatten` builds; None is
        a leaf.
    num_leaves : int
        How many leaves the structure holds.
    """
    __slots__ = ("spec", "num_leaves")

    def __init__(self, spec, num_leaves):
        self.spec = spec
        self.num_leaves = num_leaves

    def __call__(self, new):
        return _unflatten(self.spec, iter(new))

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self.spec == other.spec

    def __hash__(self):
        return hash(self.spec)

    def __repr__(self):
        return f"TreeDef({_show(self.spec)})"


def _show(spec):
    if spec is None:
        return "*"
    kind, aux, children = spec
    inner = ", ".join(_show(c) for c in children)
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {_show(c)}" for k, c in zip(aux, children)) + "}"
    if kind is list:
        return f"[{inner}]"
    if kind is tuple:
        return f"({inner}{',' if len(children) == 1 else ''})"
    return f"{kind.__name__}[{aux!r}]({inner})" if is_registered(kind) else \
        f"{kind.__name__}({inner})"


_PLAIN_LEAVES = frozenset((np.ndarray, float, np.float64))


def _flatten(tree, leaves):
    kind = tree.__class__
    if kind in _PLAIN_LEAVES:    # arrays and floats (never registered): flatten is hot
        leaves.append(tree)
        return None
    if kind is tuple or kind is list:
        return (kind, None, tuple([_flatten(t, leaves) for t in tree]))
    if kind is dict:
        aux = tuple(tree)
        return (dict, aux, tuple([_flatten(tree[k], leaves) for k in aux]))
    level = node(tree)    # named tuples, other subclasses, registered classes
    if level is None:
        leaves.append(tree)
        return None
    kind, aux, children = level
    return (kind, aux, tuple([_flatten(t, leaves) for t in children]))


def _flatten_upto(tree, leaves, is_leaf):
    level = None if is_leaf(tree) else node(tree)
    if level is None:
        leaves.append(tree)
        return None
    kind, aux, children = level
    return (kind, aux, tuple([_flatten_upto(t, leaves, is_leaf) for t in children]))


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    kind, aux, children = spec
    items = [_unflatten(s, it) for s in children]
    if kind is tuple:
        return tuple(items)
    return items if kind is list else build(kind, aux, items)


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Map a function over the leaves of one or several trees of the same structure.

    The trees of a transformation (primals, tangents, cotangents of several arguments)
    share one structure: this applies a leafwise operation to all of them at once, such
    as adding two trees of cotangents.

    Parameters
    ----------
    fn : callable
        ``fn(leaf, *leaves_of_rest)``, called once per leaf.
    tree : object
        Nested tuples, lists and dicts (see :func:`flatten`); its structure is the
        result's.
    *rest : object
        More trees with ``tree``'s structure, whose leaves are passed alongside.
    is_leaf : callable, optional
        Nodes of ``tree`` for which ``is_leaf(node)`` is true are passed whole to ``fn``
        (see :func:`flatten`).

    Returns
    -------
    object
        A tree of ``tree``'s structure holding ``fn``'s results.

    Raises
    ------
    ValueError
        A tree of ``rest`` has another number of leaves than ``tree``.

    See Also
    --------
    flatten : The leaves and the function rebuilding a tree.

    Examples
    --------
    >>> from dualad.extend import tree_map
    >>> tree_map(lambda x, y: x + y, (1.0, [2.0]), (10.0, [20.0]))
    (11.0, [22.0])
    """
    leaves, rebuild = flatten(tree, is_leaf)
    others = [flatten(r, is_leaf)[0] for r in rest]
    for i, other in enumerate(others):
        if len(other) != len(leaves):
            raise ValueError(f"tree_map: tree {i + 1} of rest has {len(other)} leaf(s) but the "
                             f"first tree has {len(leaves)} ({rebuild!r}); give trees of one "
                             f"structure")
    return rebuild([fn(x, *ys) for x, *ys in zip(leaves, *others)])


def unflatten(treedef: TreeDef, leaves: Any) -> Any:
    """Build the tree of structure ``treedef`` holding ``leaves``.

    As ``jax.tree_util.tree_unflatten(treedef, leaves)``; the same as ``treedef(leaves)``:
    the containers (and registered classes, through their ``unflatten``) are rebuilt
    around the new leaves, in :func:`flatten`'s order.

    Parameters
    ----------
    treedef : TreeDef
        A structure, from :func:`flatten` or :func:`structure`.
    leaves : iterable
        As many leaves as the structure holds.

    Returns
    -------
    object
        The tree.

    Raises
    ------
    ValueError
        The count of ``leaves`` is not ``treedef.num_leaves``.
    TypeError
        ``treedef`` is not a :class:`TreeDef`.

    Examples
    --------
    >>> import dualad
    >>> leaves, treedef = dualad.tree.flatten({"a": 1.0, "b": (2.0, 3.0)})
    >>> dualad.tree.unflatten(treedef, [10.0, 20.0, 30.0])
    {'a': 10.0, 'b': (20.0, 30.0)}
    """
    if not isinstance(treedef, TreeDef):
        raise TypeError(f"dualad.tree.unflatten: treedef must be the structure "
                        f"dualad.tree.flatten returned, got {type(treedef).__name__}")
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"dualad.tree.unflatten: {treedef!r} has {treedef.num_leaves} "
                         f"leaf(s) but {len(leaves)} were given")
    return treedef(leaves)


def is_leaf(tree: Any) -> bool:
    """Tell whether ``tree`` is a leaf: not a container of the registry.

    Tuples, lists, dicts, named tuples and registered classes are containers (even
    empty); anything else (arrays, numbers, None, strings) is a leaf.

    Parameters
    ----------
    tree : object
        Any value.

    Returns
    -------
    bool
        True for a leaf.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad
    >>> dualad.tree.is_leaf(np.ones(3)), dualad.tree.is_leaf((np.ones(3),))
    (True, False)
    """
    return node(tree) is None


def leaves_with_path(tree: Any) -> list[tuple[str, Any]]:
    """List each leaf of ``tree`` with its path, depth first.

    The path is written as Python reads it, ``".layers[1].w"``: fields of named tuples
    and registered dataclasses by name, dict entries by key, other children by position.
    As ``jax.tree_util.tree_leaves_with_path``, with the path a string (JAX gives key
    objects). Error messages of the transformations use the same paths.

    Parameters
    ----------
    tree : object
        A pytree.

    Returns
    -------
    list of (str, object)
        ``(path, leaf)`` pairs in :func:`flatten`'s order.

    Examples
    --------
    >>> import dualad
    >>> dualad.tree.leaves_with_path({"w": [1.0, 2.0], "b": 3.0})
    [("['w'][0]", 1.0), ("['w'][1]", 2.0), ("['b']", 3.0)]
    """
    out = []
    _with_path(tree, "", out)
    return out


def _with_path(tree, path, out):
    level = node(tree)
    if level is None:
        out.append((path, tree))
        return
    for child, key in zip(level[2], child_keys(*level)):
        _with_path(child, path + key, out)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """List the leaves of ``tree``, depth first.

    As ``jax.tree_util.tree_leaves``: ``flatten(tree)[0]``.

    Parameters
    ----------
    tree : object
        A pytree.
    is_leaf : callable, optional
        Nodes for which ``is_leaf(node)`` is true are leaves (see :func:`flatten`).

    Returns
    -------
    list
        The leaves, dicts in their key order.

    Examples
    --------
    >>> import dualad
    >>> dualad.tree.leaves({"a": (1.0, [2.0]), "b": 3.0})
    [1.0, 2.0, 3.0]
    """
    return flatten(tree, is_leaf)[0]


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeDef:
    """Return the structure of ``tree`` without its leaves.

    As ``jax.tree_util.tree_structure``: ``flatten(tree)[1]``. Structures compare equal
    when the containers, dict keys and registered classes' auxiliary data are.

    Parameters
    ----------
    tree : object
        A pytree.
    is_leaf : callable, optional
        Nodes for which ``is_leaf(node)`` is true are leaves (see :func:`flatten`).

    Returns
    -------
    TreeDef
        The structure (callable on new leaves).

    Examples
    --------
    >>> import dualad
    >>> dualad.tree.structure((1.0, {"b": 2.0}))
    TreeDef((*, {'b': *}))
    >>> dualad.tree.structure((1.0, {"b": 2.0})) == dualad.tree.structure((5.0, {"b": 6.0}))
    True
    """
    return flatten(tree, is_leaf)[1]


def describe(tree: object) -> str:
    """A pytree's container or leaf, for error messages: 'a list of 3 item(s)'."""
    if isinstance(tree, (tuple, list)) and not is_registered(type(tree)):
        return f"a {type(tree).__name__} of {len(tree)} item(s)"
    if isinstance(tree, dict) and not is_registered(type(tree)):
        return f"a dict with keys {sorted(map(str, tree))}"
    level = node(tree)
    if level is not None:
        return f"a {type(tree).__name__} (registered pytree node) of {len(level[2])} child(ren)"
    return f"an array of shape {getattr(tree, 'shape', ())}" if hasattr(tree, "shape") else \
        f"a {type(tree).__name__}"


def flatten_like(like: Any, tree: Any, api: str, what: str, path: str = "",
                 leaf: Callable[[Any], Any] | None = None,
                 like_name: str = "its primal") -> list[Any]:
    """Leaves of ``tree`` taken at the leaves of ``like`` (which has the same containers).

    Where ``like`` has a leaf (an array), the matching part of ``tree`` is one leaf even if
    it is a list of numbers (``[1., 0, 0]`` as a tangent of an array of shape (3,)), made an
    array by ``leaf``. Containers must match (a registered class: the same class and
    auxiliary data): a mismatch is a ValueError naming the path (``.w``, ``[1]``, ``['b']``).
    """
    out = []
    _flatten_like(like, tree, out, (api, what, like_name), path, leaf)
    return out


def _same_level(like_level, tree):
    kind, aux, children = like_level
    if kind is dict:
        return isinstance(tree, dict) and len(tree) == len(children) and set(tree) == set(aux)
    if issubclass(kind, (tuple, list)) and not is_registered(kind):
        return isinstance(tree, (tuple, list)) and len(tree) == len(children)
    level = node(tree) if type(tree) is kind else None
    return level is not None and level[1] == aux and len(level[2]) == len(children)


def _flatten_like(like, tree, out, names, path, leaf):
    level = node(like)
    if level is None:
        out.append(tree if leaf is None else leaf(tree))
        return
    if not _same_level(level, tree):
        api, what, like_name = names
        raise ValueError(
            f"{api}: {what}{path} is {describe(tree)} but {like_name} is "
            f"{describe(like)}; give it the same structure (a list or tuple of numbers "
            f"is a container of scalars, not an array: write np.array([...]) for one "
            f"array)")
    kind, _, children = level
    got = [tree[k] for k in level[1]] if kind is dict else \
        (list(tree) if not is_registered(kind) else node(tree)[2])
    for c, t, key in zip(children, got, child_keys(*level)):
        _flatten_like(c, t, out, names, path + key, leaf)

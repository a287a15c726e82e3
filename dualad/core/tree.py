"""Nested containers of arrays (tuples, lists, dicts): flatten and rebuild."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["flatten", "tree_map", "describe", "flatten_like"]


def flatten(tree: Any) -> tuple[list[Any], Callable[[Any], Any]]:
    """Return the leaves of a tree in order, and a function that rebuilds it from new leaves.

    Transformations take and return trees of arrays (the primals, tangents and
    cotangents of several arguments): they flatten a tree to its leaves, work on those,
    and rebuild a tree of the same structure (of tangents, of cotangents) from the
    results.

    Parameters
    ----------
    tree : object
        Nested tuples (named tuples too), lists and dicts; anything else is a leaf.

    Returns
    -------
    leaves : list
        The leaves, depth first (dicts in their key order).
    rebuild : callable
        ``rebuild(new_leaves)``: the tree's structure with ``new_leaves`` in place of
        the leaves.

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
    spec = _flatten(tree, leaves)
    return leaves, lambda new: _unflatten(spec, iter(new))


def _flatten(tree, leaves):
    if isinstance(tree, (tuple, list)):
        return (type(tree), [_flatten(t, leaves) for t in tree])
    if isinstance(tree, dict):
        keys = list(tree)
        return (dict, keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return None


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    if spec[0] is dict:
        return {k: _unflatten(s, it) for k, s in zip(spec[1], spec[2])}
    kind, children = spec
    items = [_unflatten(s, it) for s in children]
    return tuple(items) if kind is tuple else (kind(*items) if hasattr(kind, "_fields")
                                                else kind(items))


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
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

    Returns
    -------
    object
        A tree of ``tree``'s structure holding ``fn``'s results.

    See Also
    --------
    flatten : The leaves and the function rebuilding a tree.

    Examples
    --------
    >>> from dualad.extend import tree_map
    >>> tree_map(lambda x, y: x + y, (1.0, [2.0]), (10.0, [20.0]))
    (11.0, [22.0])
    """
    leaves, rebuild = flatten(tree)
    others = [flatten(r)[0] for r in rest]
    return rebuild([fn(x, *ys) for x, *ys in zip(leaves, *others)])


def describe(tree: object) -> str:
    """A pytree's container or leaf, for error messages: 'a list of 3 item(s)'."""
    if isinstance(tree, (tuple, list)):
        return f"a {type(tree).__name__} of {len(tree)} item(s)"
    if isinstance(tree, dict):
        return f"a dict with keys {sorted(map(str, tree))}"
    return f"an array of shape {getattr(tree, 'shape', ())}" if hasattr(tree, "shape") else \
        f"a {type(tree).__name__}"


def flatten_like(like: Any, tree: Any, api: str, what: str, path: str = "",
                 leaf: Callable[[Any], Any] | None = None,
                 like_name: str = "its primal") -> list[Any]:
    """Leaves of ``tree`` taken at the leaves of ``like`` (which has the same containers).

    Where ``like`` has a leaf (an array), the matching part of ``tree`` is one leaf even if
    it is a list of numbers (``[1., 0, 0]`` as a tangent of an array of shape (3,)), made an
    array by ``leaf``. Containers must match: a mismatch is a ValueError naming the path.
    """
    out = []
    _flatten_like(like, tree, out, (api, what, like_name), path, leaf)
    return out


def _flatten_like(like, tree, out, names, path, leaf):
    if isinstance(like, (tuple, list, dict)):
        same = isinstance(tree, dict) if isinstance(like, dict) else \
            isinstance(tree, (tuple, list))
        if not same or len(tree) != len(like) or (isinstance(like, dict) and
                                                     set(tree) != set(like)):
            api, what, like_name = names
            raise ValueError(
                f"{api}: {what}{path} is {describe(tree)} but {like_name} is "
                f"{describe(like)}; give it the same structure (a list or tuple of numbers "
                f"is a container of scalars, not an array: write np.array([...]) for one "
                f"array)")
        keys = list(like) if isinstance(like, dict) else range(len(like))
        for k in keys:
            _flatten_like(like[k], tree[k], out, names, f"{path}[{k!r}]", leaf)
        return
    out.append(tree if leaf is None else leaf(tree))

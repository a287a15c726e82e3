"""Nested containers of arrays (tuples, lists, dicts): flatten and rebuild."""
from __future__ import annotations

__all__ = ["flatten", "tree_map", "describe", "flatten_like"]


def flatten(tree):
    """Leaves of ``tree`` in order, and a function that rebuilds it from new leaves."""
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


def tree_map(fn, tree, *rest):
    leaves, rebuild = flatten(tree)
    others = [flatten(r)[0] for r in rest]
    return rebuild([fn(x, *ys) for x, *ys in zip(leaves, *others)])


def describe(tree):
    """A pytree's container or leaf, for error messages: 'a list of 3 item(s)'."""
    if isinstance(tree, (tuple, list)):
        return f"a {type(tree).__name__} of {len(tree)} item(s)"
    if isinstance(tree, dict):
        return f"a dict with keys {sorted(map(str, tree))}"
    return f"an array of shape {getattr(tree, 'shape', ())}" if hasattr(tree, "shape") else \
        f"a {type(tree).__name__}"


def flatten_like(like, tree, api, what, path="", leaf=None, like_name="its primal"):
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

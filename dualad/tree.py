"""Nested containers of arrays (tuples, lists, dicts): flatten and rebuild."""
from __future__ import annotations


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

"""Pytrees: the nested containers of arrays every transformation takes and returns.

The spellings of ``jax.tree_util`` (and ``jax.tree``), over the one registry of
containers that ``grad``, ``jvp``, ``vjp``, ``vmap``, ``jit``, ``scan``, ``while_loop``,
``checkpoint``, the custom rules, the planner and ``check_grads`` all read:

========================================  ==============================================
dualad.tree                               JAX
========================================  ==============================================
``flatten(tree) -> (leaves, treedef)``    ``jax.tree_util.tree_flatten``
``unflatten(treedef, leaves)``            ``jax.tree_util.tree_unflatten``
``leaves(tree)``                          ``jax.tree_util.tree_leaves``
``leaves_with_path(tree)``                ``jax.tree_util.tree_leaves_with_path``
``structure(tree)``                       ``jax.tree_util.tree_structure``
``map(fn, tree, *rest)``                  ``jax.tree_util.tree_map`` / ``jax.tree.map``
``is_leaf(x)``                            ``jax.tree_util.treedef_is_leaf`` (of a value)
``register(cls, flatten, unflatten)``     ``jax.tree_util.register_pytree_node``
``register_dataclass(cls, ...)``          ``jax.tree_util.register_dataclass``
========================================  ==============================================

Tuples, lists, dicts and named tuples are containers without registration (as in JAX);
any other object is a leaf unless its class is registered. ``flatten``, ``leaves``,
``structure`` and ``map`` take JAX's ``is_leaf=`` (nodes it accepts stay whole). Two differences from JAX:
``None`` is a leaf (a zero cotangent where dualad returns one), and a dict's children are
in its key order (JAX sorts the keys). Paths are strings (``".w[1]['b']"``), not key
objects. A ``treedef`` is also callable:
``treedef(new_leaves)`` rebuilds the tree, as the ``rebuild`` of ``dualad.extend.flatten``.
"""
from __future__ import annotations

from .core.tree import (TreeDef, flatten, is_leaf, leaves, leaves_with_path, structure,
                        tree_map as map, unflatten)
from .core.tree_nodes import register, register_dataclass

__all__ = ["flatten", "unflatten", "leaves", "leaves_with_path", "structure", "map",
           "is_leaf", "register", "register_dataclass", "TreeDef"]

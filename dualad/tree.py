"""Pytrees: the nested containers of arrays every transformation takes and returns.

The spellings of ``jax.tree_util`` (and ``jax.tree``), over the one registry of
containers that ``grad``, ``jvp``, ``vjp``, ``vmap``, ``jit``, ``scan``, ``while_loop``,
``checkpoint``, the custom rules, the planner and ``check_grads`` all read:

=====================================  ==========================================
dualad.tree                            JAX
=====================================  ==========================================
``flatten(tree) -> (leaves, treedef)``  ``jax.tree_util.tree_flatten``
``unflatten(treedef, leaves)``          ``jax.tree_util.tree_unflatten``
``leaves(tree)``                        ``jax.tree_util.tree_leaves``
``structure(tree)``                     ``jax.tree_util.tree_structure``
``map(fn, tree, *rest)``                ``jax.tree_util.tree_map`` / ``jax.tree.map``
``register(cls, flatten, unflatten)``   ``jax.tree_util.register_pytree_node``
``register_dataclass(cls, ...)``        ``jax.tree_util.register_dataclass``
=====================================  ==========================================

Tuples, lists, dicts and named tuples are containers without registration (as in JAX);
any other object is a leaf unless its class is registered. Two differences from JAX:
``None`` is a leaf (a zero cotangent where dualad returns one), and a dict's children are
in its key order (JAX sorts the keys). A ``treedef`` is also callable:
``treedef(new_leaves)`` rebuilds the tree, as the ``rebuild`` of ``dualad.extend.flatten``.
"""
from __future__ import annotations

from .core.tree import TreeDef, flatten, leaves, structure, tree_map as map, unflatten
from .core.tree_nodes import register, register_dataclass

__all__ = ["flatten", "unflatten", "leaves", "structure", "map", "register",
           "register_dataclass", "TreeDef"]

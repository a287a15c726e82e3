"""Cotangents with structural zeros: the entries a selection did not touch.

``y = np.sqrt(x)[1]`` sends back a cotangent of ``sqrt``'s output that is 0 in
entry 0: not a computed zero but a *structural* one, since the output does not
depend on that entry at all. Multiplied into √'s partial at ``x[0] = -1`` (nan)
it would give 0 · nan = nan, a derivative of something the output never used,
which forward mode (``jacfwd``: the tangent of ``y`` is ṫ[1] alone) does not
give. So the sweep keeps, next to such a cotangent, the mask of the entries that
were touched, and multiplies a partial only into those:
an untouched entry stays exactly 0 whatever the partial is there. Reverse mode
then agrees with forward mode and with the derivative of the function as written.
(The mask rides on the sweep's :class:`~dualad.interpreters.reverse.cotangents.IndexedCotangent`, the
pending-scatter cotangent that ``x[i]`` already makes, so the dense loop tests no
new class.)

Made by the selections, whose cotangent for an argument is, entry by entry,
either a sum of output-cotangent entries or a structural zero (:data:`SELECTIONS`:
``getitem``, so every index, slice, ``take``, ``take_along_axis``, ``compress``;
``where``, so ``select``, ``choose``; ``scatter_set``, so ``x.at[i].set(v)``),
and by the sparse scatter of ``x[i]`` cotangents (``IndexedCotangent``). The mask
of an argument is the rule itself applied to the mask of its cotangent (a 0/1
array): a selection's rule has no negative coefficients, so an entry is touched
exactly when the result is nonzero there. It passes through elementwise
primitives (same shape, touched where the cotangent was) and is dropped
(the cotangent made dense) where a primitive mixes entries (sums, products,
reshapes) or an operand was broadcast. A dense cotangent added to a masked one
touches every entry; two masked ones, the union.

Only structural zeros are treated so: a cotangent entry that is zero because of
the numbers (``(√x)²`` at 0: 2·√0 = 0 times √'s inf) keeps IEEE's 0 · inf = nan,
as forward mode gives. Dense cotangents (every ``np.sum`` loss without indexing)
never meet this code: the sweep tests one class per node.
"""
from __future__ import annotations

import numpy as np

from ..batched_rules import map_batch
from ...ops.core.elementwise import where
from ...ops.core.indexing import getitem
from ...ops.core.scatter import scatter_set
from ..forward.dual import Dual
from ...core.onehot import OneHotBatch
from .tape import Var
from ...core.rules import rule_table
from ...core.tracer import Box, primal_value, shape_of, unguarded_value

VJP = rule_table("vjp", per_argument=True)   # reverse mode's (interpreters/reverse/sweep.py)

__all__ = ["SELECTIONS", "select_product", "selected"]

_NDARRAY = np.ndarray

# primitive -> the arguments whose cotangent the rule selects (or scatters) from the output's
SELECTIONS = {getitem: (0,), where: (1, 2), scatter_set: (0,)}
_SHAPE_ONLY = (getitem, scatter_set)   # their masks read no value: also under jit


def select_product(ct, dv, touched):
    """``ct · dv`` where ``touched``, exactly 0 elsewhere (whatever ``dv`` is there).
    Plain arrays: one ufunc call that computes only the touched entries (so no 0 · inf
    warning either); traced values: ``where``, which selects tangents too."""
    if ct.__class__ is _NDARRAY and not hasattr(dv, "_trace"):
        shape = np.broadcast_shapes(ct.shape, np.shape(dv))
        if shape == touched.shape:
            out = np.zeros(shape, np.result_type(ct, dv))
            np.multiply(ct, dv, out=out, where=touched)
            return out
    return where(touched, ct * dv, 0.0)


def _eager(v):
    """Whether ``v`` is a plain value or a box of the eager interpreters (reverse,
    forward) over one, whose values may be read: not a staged (``jit``) value, whose
    reading would become a guard, nor a ``vmap`` batch, whose value has another shape."""
    while v.__class__ is Var or v.__class__ is Dual:
        v = v._inner
    return not isinstance(v, Box)


def _same_shape(v):
    """Whether ``v``'s value has ``v``'s shape (not a ``vmap`` batch)."""
    return not isinstance(v, Box) or shape_of(v) == np.shape(unguarded_value(v))


def selected(node, i, touched, ct):
    """The mask of argument ``i``'s cotangent for a selection ``node``: its rule applied
    to the 0/1 mask of the cotangent ``ct`` (all ones when ``touched`` is None, the
    one-hot positions for a :class:`~dualad.core.onehot.OneHotBatch` seed), on
    the primal values; None when the rule gives nothing, under ``vmap``, and for
    ``where`` under ``jit`` (whose mask, the condition, is a value of the program: the
    cotangents stay dense there). An index's mask reads shapes only, so is made under
    ``jit`` too, without a guard."""
    prim = node.prim
    rule = prim.rules[VJP].get(i)
    if rule is None:
        return None
    if prim in _SHAPE_ONLY:     # the mask depends on shapes and the index only
        if not all(_same_shape(a) for a in (node.value, *node.vals)):
            return None
        value = unguarded_value
    elif _eager(node.value) and all(_eager(a) for a in node.vals):
        value = primal_value
    else:
        return None
    shape = shape_of(ct)
    if touched is None and ct.__class__ is OneHotBatch:   # jacrev's seeds: e_k rows
        touched = ct._with(np.ones(shape_of(ct.val))).dense() != 0
    m = np.ones(shape) if touched is None else touched.astype(np.float64)
    ans = value(node.value)
    args = [value(a) for a in node.vals]
    params = node.params or {}
    nb = len(shape) - len(shape_of(ans))
    if nb and not prim.batch_rules:
        g = map_batch(rule, m, nb, ans, *args, **params)
    else:
        g = rule(m, ans, *args, **params)
    return None if g is None else np.asarray(g) != 0

r"""Taylor recurrences of the linear solves: one solve (or none) per order.

Through the fallback, ``solve``'s JVP rule (which solves again) nests one sub-tape per
order. The defining equations give each coefficient directly:

- :math:`Y = A^{-1}` (``inv``): :math:`\sum_{j=0}^k A_j Y_{k-j} = 0` for :math:`k \ge 1`, so
  :math:`Y_k = -Y_0 \sum_{j=1}^k A_j Y_{k-j}`: matrix products only;
- :math:`y = A^{-1} b` (``solve``): :math:`\sum_{j=0}^k A_j y_{k-j} = b_k`, so
  :math:`y_k = A_0^{-1}\bigl(b_k - \sum_{j=1}^k A_j y_{k-j}\bigr)`: one solve with
  :math:`A_0` per order, the right-hand side built as the JVP rule builds its own
  (:func:`dualad.ops.linalg._common.tangent_rhs`: a vector or a stack of matrices alike).
"""
from __future__ import annotations

from .rules import _acc, _get, _prim, _recurrence, _zeros_like

__all__: list[str] = []


@_recurrence("inv")
def _inv(node, k):
    mm = _prim("matmul")
    (a,), y = node.x, node.y
    total = None
    for j in range(1, k + 1):
        total = _acc(total, mm(a[j], y[k - j]))
    return -mm(y[0], total)


@_recurrence("solve")
def _solve(node, k):
    # the linear-algebra family loads on first use (never at import): so does this helper
    from ...ops.linalg._common import mm, tangent_rhs
    (a, b), y = node.x, node.y
    terms = [(_get(b, k), b[0], None)]
    for j in range(1, k + 1):
        aj = _get(a, j)
        if aj is not None:
            terms.append((aj, a[0], lambda t, yk=y[k - j]: -mm(t, yk)))
    rhs = tangent_rhs(y[0], *terms)
    if rhs is None:
        return _zeros_like(y[0])
    return _prim("solve")(a[0], rhs)

"""Two-operand contractions as one batched matrix product (BLAS), for einsum's value.

``np.einsum`` of two operands without ``optimize`` runs its own loops, no BLAS;
with ``optimize`` it calls ``tensordot`` only when no letter is shared by both
operands and the output (a batch letter). GMM's ``'ijk,mik->mij'`` and both of its
VJPs (``'mij,mik->ijk'``, ``'mij,ijk->mik'``) have one, and NumPy's loops took
half of the objective and of the gradient. Every two-operand contraction whose
letters are distinct within each operand is a batched matrix product:

    a: batch + m + k     b: batch + k + n     ->  matmul  ->  batch + m + n

(``batch``: letters in a, b and the output; ``k``: in a and b only, summed; ``m``,
``n``: in one operand and the output; a letter in one operand only is summed
first), transposed into the output's order. ``np.matmul`` runs a BLAS ``gemm`` per
batch entry for float and complex operands. Small contractions stay with
``np.einsum``, whose fixed cost is lower; the results agree to rounding (a BLAS
kernel sums in its own order, as it does for ``np.dot``).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["MIN_WORK", "contract2"]

# Multiply-adds from which the matrix product is faster than np.einsum's loops (measured
# on a 2-core VM, issue 31: at 80 the matmul route costs 2x einsum's ~4 µs; at 2·10^4,
# GMM d=2 k=5 N=1000, it is 10x faster).
MIN_WORK = 2048


@lru_cache(maxsize=512)
def _plan(sa, sb, out):
    """How ``sa,sb->out`` becomes a matmul: ``(sum_a, sum_b, perm_a, perm_b, nbatch, nm,
    nk, perm_out)``, or None when a letter repeats within an operand or the output."""
    if len(set(sa)) < len(sa) or len(set(sb)) < len(sb) or len(set(out)) < len(out):
        return None
    in_a, in_b, in_out = set(sa), set(sb), set(out)
    if not in_out <= in_a | in_b:
        return None
    sum_a = tuple(i for i, c in enumerate(sa) if c not in in_b and c not in in_out)
    sum_b = tuple(i for i, c in enumerate(sb) if c not in in_a and c not in in_out)
    sa = "".join(c for i, c in enumerate(sa) if i not in sum_a)
    sb = "".join(c for i, c in enumerate(sb) if i not in sum_b)
    batch = [c for c in out if c in in_a and c in in_b]
    summed = [c for c in sa if c in in_b and c not in in_out]
    m = [c for c in out if c in in_a and c not in in_b]
    n = [c for c in out if c in in_b and c not in in_a]
    res = batch + m + n
    return (sum_a, sum_b, tuple(sa.index(c) for c in batch + m + summed),
            tuple(sb.index(c) for c in batch + summed + n), len(batch), len(m), len(summed),
            tuple(res.index(c) for c in out))


def contract2(sa, sb, out, a, b):
    """``np.einsum(f'{sa},{sb}->{out}', a, b)`` as a batched matmul, or None where that
    route does not apply (not float/complex, too small, repeated letters, sizes that
    einsum would broadcast)."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            and a.dtype.kind in "fc" and b.dtype.kind in "fc"):
        return None
    plan = _plan(sa, sb, out)
    if plan is None:
        return None
    sum_a, sum_b, perm_a, perm_b, nbatch, nm, nk, perm_out = plan
    sizes = dict(zip(sa, a.shape))
    for c, s in zip(sb, b.shape):
        if sizes.setdefault(c, s) != s:
            return None               # einsum's size-1 broadcasting, or its error
    if math.prod(sizes.values()) < MIN_WORK:
        return None
    if sum_a:
        a = a.sum(axis=sum_a)
    if sum_b:
        b = b.sum(axis=sum_b)
    a = a.transpose(perm_a)
    b = b.transpose(perm_b)
    bs, ms, ks = a.shape[:nbatch], a.shape[nbatch:nbatch + nm], a.shape[nbatch + nm:]
    ns = b.shape[nbatch + nk:]
    p, mm, kk, nn = math.prod(bs), math.prod(ms), math.prod(ks), math.prod(ns)
    c = np.matmul(a.reshape(p, mm, kk), b.reshape(p, kk, nn))
    return c.reshape(bs + ms + ns).transpose(perm_out)

"""The dense result's memory: refused, before anything is allocated, when over ``max_memory``.

A dense Jacobian of ``F: R^n -> R^m`` is ``m · n · itemsize`` bytes, a Hessian
``n · n · itemsize``, whatever the mode that fills it. Both are refused with
:class:`DenseTooLarge` (a ``ValueError``) when that exceeds ``max_memory``; the message
names the function, the shapes, the bytes, the sparse call that gives only the
structural nonzeros (a ``scipy.sparse`` matrix), and the ``max_memory=`` that would allow
the dense array. The check runs as soon as ``m`` is known: after the census (``mode=
"auto"``, or a fixed mode without ``chunk_size``), or else after the first sweep, before
the result is allocated (that sweep's tangents are one chunk, within the sweep budget).
"""
from __future__ import annotations

__all__ = ["SPARSE_CALL", "DenseTooLarge", "BudgetTooSmall", "human_bytes", "dense_bytes",
           "refuse_dense", "dense_of", "Footprint", "largest_chunk", "symmetrize"]

import numpy as np

#: The public sparse call for each dense result.
SPARSE_CALL = {"jacobian": "sparse_jacobian", "hessian": "sparse_hessian"}


class DenseTooLarge(ValueError):
    """A dense Jacobian or Hessian larger than ``max_memory`` was asked for.

    Raised before any sweep runs, by ``jacobian``, ``jacfwd``, ``jacrev``, ``hessian``
    and ``plan`` when the ``m x n`` result (or one sweep's tangents) would not fit in
    ``max_memory``; the message gives the size and says what to call instead (a
    sparse Jacobian, ``jvp``/``vjp`` products, or a larger ``max_memory``).
    """


class BudgetTooSmall(ValueError):
    """``max_memory`` is too small for even one direction of any sweep this call can run
    (the message gives the modelled bytes and the least budget)."""


def human_bytes(b):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if b < 1024 or unit == "TB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024


def _shapes(shapes):
    shapes = [tuple(s) for s in shapes]
    return str(shapes[0]) if len(shapes) == 1 else "[" + ", ".join(map(str, shapes)) + "]"


def dense_bytes(problem, dtype, kind="jacobian"):
    rows = problem.m if kind == "jacobian" else problem.n
    return int(rows) * int(problem.n) * np.dtype(dtype).itemsize


def refuse_dense(api, problem, max_memory, dtype, kind="jacobian"):
    """Raise :class:`DenseTooLarge` if the dense ``kind`` ("jacobian" or "hessian") of
    ``problem`` (its outputs known) in ``dtype`` needs more than ``max_memory`` bytes."""
    need = dense_bytes(problem, dtype, kind)
    if need <= max_memory:
        return
    name, n = problem.name, problem.n
    if kind == "jacobian":
        what = (f"the dense Jacobian is {problem.m} x {n} (output shape "
                f"{_shapes(problem.out_shapes)}, input shape {_shapes(problem.in_shapes)})")
        gives = "a scipy.sparse CSR matrix of the flat Jacobian (m x n)"
    else:
        what = f"the dense Hessian is {n} x {n} (input shape {_shapes(problem.in_shapes)})"
        gives = "an exactly symmetric scipy.sparse CSR matrix (n x n)"
    argnums = "" if problem.single and problem.nums == (0,) else \
        f", argnums={problem.nums[0] if problem.single else problem.nums}"
    args = ", ".join("x" if i in problem.nums else f"arg{i}" for i in range(len(problem.args)))
    raise DenseTooLarge(
        f"{api}({name}): {what}: {need:,} bytes ({human_bytes(need)}) of "
        f"{np.dtype(dtype).name}, more than max_memory={int(max_memory):,} bytes "
        f"({human_bytes(max_memory)}); refused before anything was allocated. For only the "
        f"structural nonzeros use jacobians.{SPARSE_CALL[kind]}({name}, {args}{argnums}), "
        f"{gives}; to build the dense array anyway pass max_memory={need} (or more).")


def dense_of(matrix):
    """A dense array of the scipy.sparse ``matrix``: zeros, then its stored entries put in
    place (duplicates summed). Only the pages holding entries are written; scipy's
    ``toarray`` walks every row of the result (28 s against 1.6 s for a 20000 x 20000
    tridiagonal, measured)."""
    coo = matrix.tocoo()
    if not coo.has_canonical_format:
        coo.sum_duplicates()
    out = np.zeros(coo.shape, coo.dtype)
    out[coo.row, coo.col] = coo.data
    return out


# --- the whole call's bytes -------------------------------------------------------------------
class Footprint:
    r"""The modelled peak bytes of one dense call, everything it allocates counted.

    From the census of ``f`` (:class:`jacobians.cost.Census`), with ``s`` the itemsize of
    the result, ``E`` the elements of all the values one evaluation makes, ``A`` the most
    of them alive at once and ``a`` the largest one, ``K`` the bytes of the small constants
    a reverse recording copies (:data:`jacobians.cost.KEPT_CONSTANT_BYTES`), ``R`` the
    dense result and ``B`` the directions of one sweep:

    ``forward(B)``    ``R + s·((1 + B)·A + B·(3a + n + 2m))``: the result, the values alive
                      at once with their ``B`` tangents each, and per direction one rule's
                      temporaries (three arrays of the largest value), its seed and its
                      output tangent (and the row copied out of it into the result);
    ``reverse(B)``    ``R + s·(E + n + m) + max(K, B·s·(E + n + 2m))``: the result, the tape
                      (every value) and ``vjp``'s copies of the inputs and outputs, then the
                      larger of what the recording holds while ``f`` runs (the copies of the
                      small constants) and what one batched pullback holds (at most a
                      cotangent per value and direction, the seeds, the gradient rows and
                      their copy);
    ``hessian(B)``    ``R + T + K + 2(1 + B)·s·(E + n)``: forward over reverse, each value of
                      the gradient's tape and each cotangent carrying ``B`` tangents besides
                      its primal; ``T`` the block :func:`symmetrize` works in;
    ``budgeted(B, P)`` ``R + T + K + B·(P + s·(n + m))``: reverse sweeps that follow a
                      ``dualad.remat_plan`` of modelled peak ``P`` for one cotangent, pulled
                      back ``B`` at a time (the tape's values are shared, the cotangents
                      ``B``-fold: at most ``B·P``); ``T`` only for a Hessian.

    Every term is an upper bound of what the sweeps hold (a pullback frees each cotangent
    once propagated, so the reverse terms are loose); tests/jacobians/test_memory_accounting.py
    measures every call with ``tracemalloc``, planning included.
    """

    def __init__(self, problem, census, dtype, kind="jacobian"):
        s = self.s = np.dtype(dtype).itemsize
        self.n = int(problem.n)
        self.m = int(problem.m) if kind == "jacobian" else 1
        self.values = max(1, int(census.elements)) * s
        self.alive = max(1, int(getattr(census, "peak_live", census.elements))) * s
        self.largest = int(getattr(census, "largest", 0)) * s
        self.kept = int(getattr(census, "kept_bytes", 0))
        self.result = dense_bytes(problem, dtype, kind)
        self.kind = kind

    def forward(self, B):
        per = 3 * self.largest + self.s * (self.n + 2 * self.m)
        return self.result + (1 + B) * self.alive + B * per

    def reverse(self, B):
        tape = self.values + self.s * (self.n + self.m)
        per = self.values + self.s * (self.n + 2 * self.m)
        return self.result + tape + max(self.kept, B * per)

    def sym_block(self):
        """Bytes of the block :func:`symmetrize` works in (at most 1/8 of the result, or
        the whole of a result of at most 1 MiB)."""
        if self.kind != "hessian":
            return 0
        whole = self.n * self.n * self.s
        return whole if whole <= _SMALL else _sym_rows(self.n) * self.n * self.s

    def hessian(self, B):
        return self.result + self.sym_block() + self.kept + \
            2 * (1 + B) * (self.values + self.s * self.n)

    def budgeted(self, B, plan_peak):
        return self.result + self.sym_block() + self.kept + \
            B * (int(plan_peak) + self.s * (self.n + self.m))


def largest_chunk(peak, max_memory, most):
    """The largest ``B`` in ``[1, most]`` with ``peak(B) <= max_memory`` (``peak`` grows
    with ``B``), or 0 when not even one direction fits."""
    most = max(1, int(most))
    if peak(most) <= max_memory:     # the common case: every direction in one sweep
        return most
    if peak(1) > max_memory:
        return 0
    lo, hi = 1, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if peak(mid) <= max_memory:
            lo = mid
        else:
            hi = mid - 1
    return lo


_SMALL = 1 << 20     # bytes: a Hessian this small is symmetrized in one call


def _sym_rows(n):
    return max(1, min(n, n // 8, 4096))


def symmetrize(h):
    r"""``h ← h + hᵀ`` in place, for a square ``h``, one block of rows at a time.

    Block ``[i, i + k)`` of rows and the same block of columns are replaced by
    ``S = h[i:i+k, i:] + h[i:, i:i+k]ᵀ`` (and ``Sᵀ``), which reads only entries no
    earlier block wrote; the temporary is ``k x n`` (``k`` at most ``n / 8``), where
    ``np.add(h, h.T)`` would allocate a second ``n x n`` array. A Hessian of at most
    1 MiB is symmetrized in one ``np.add(h, h.T, out=h)`` (its temporary is as small).
    """
    n = h.shape[0]
    if h.nbytes <= _SMALL:      # one call: NumPy buffers the overlapping transpose itself
        return np.add(h, h.T, out=h)
    k = _sym_rows(n)
    for i in range(0, n, k):
        j = min(n, i + k)
        block = h[i:j, i:] + h[i:, i:j].T
        h[i:j, i:] = block
        h[i:, i:j] = block.T
    return h

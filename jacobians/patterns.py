"""Index-set patterns: for each element of an array, the inputs it may depend on.

A :class:`Pattern` is a boolean matrix in compressed-row form (``indptr``,
``indices``): row r lists the flat input indices element r of a value may
depend on. Rows may hold duplicates until :meth:`Pattern.compact` removes
them. Every operation is
vectorized NumPy over the stored entries, so a pattern of a value of size s
with k entries per row costs O(s k) memory, never O(s n).

    gather(P, src)        Q[e] = P[src[e]]        (src[e] = -1: the empty set)
    union(P_1, ..., P_k)  Q[e] = ∪_t P_t[e]
    group(P, out, src)    Q[o] = ∪_{(o, s) pairs} P[s]

Cost: every rule is O(entries it reads and writes). Unions deduplicate as they go (a
merge of the rows, scipy's sparse addition), so a row never carries an input twice into the next
rule; structural maps (concatenate, getitem) pad no narrow row to a wide neighbour's
width; a reduction's dense row is one row (its 1 x n entries), broadcast to many
elements only where a value really depends on it (then those are the Jacobian's own
entries). Not yet O(out): a value that is dense and then reduced again (``x -
mean(x)`` summed) materialises its dense intermediate.

The entry budget (:class:`Budget`) guards against patterns that are really dense: one
pattern may hold ``max(Budget.limit, Budget.per_element * rows)`` entries (20,000,000,
and 32 per element: a sparse value of any size passes). Past it :class:`TooDense` is
raised, saying how much was allowed and what to do (a larger ``budget=`` to
``jacobian_sparsity``, or the pattern given as ``sparsity=``); the planner catches it and
treats the Jacobian as dense.
"""
from __future__ import annotations

__all__ = ["TooDense", "Budget", "RUNNING", "Pattern", "sorted_columns", "union", "group",
           "vstack"]

import threading

import numpy as np
import scipy.sparse as sp

_INT = np.int64
UNIFORM_WIDTH = 16   # widest pattern kept in the uniform layout (a list of columns)


class TooDense(Exception):
    """A pattern would exceed the entry budget (:class:`Budget`): the Jacobian is too
    dense for index sets to pay, and the caller treats it as dense."""


class Budget:
    """What one pattern may hold during a detection: at most
    ``max(limit, per_element * rows)`` entries, ``rows`` the elements of the value.

    ``per_element`` lets a sparse value be as large as it is: a pattern with at most 32
    entries per element is sparse whatever its size (GradBench's bundle adjustment holds
    at most 15 per element, over 3.8 million elements at its size 14). It is
    ``cost.DETECT_ENTRIES``, the density past which ``mode="auto"`` judges that
    compression cannot pay. ``limit`` bounds the rest, values whose elements depend on
    many inputs (a dense block, a dense row): it is a memory bound, 20,000,000 int64
    entries being 160 MB of index arrays for one value, and a rule's operands and result
    are alive at once, so a detection stays within about a gigabyte.

    ``jacobian_sparsity`` and ``hessian_sparsity`` take ``budget=`` for ``limit``;
    ``plan`` and ``mode="auto"`` derive theirs from ``max_memory`` (``max_memory / 16``);
    ``sparse_jacobian`` and ``sparse_hessian`` use this class attribute (assign
    ``Budget.limit`` to raise it for them)."""

    limit = 20_000_000
    per_element = 32


class _Running(threading.local):
    """The ``limit`` of the detection running in this thread (None: ``Budget.limit``): a
    detection's ``budget=`` holds for its own thread only."""

    limit = None


RUNNING = _Running()


def _check(nnz, rows=0):
    limit = Budget.limit if RUNNING.limit is None else RUNNING.limit
    allowed = max(limit, Budget.per_element * rows)
    if nnz > allowed:
        raise TooDense(
            f"a pattern of {nnz:,} entries ({nnz / max(rows, 1):,.0f} per element over "
            f"{rows:,} elements) exceeds the detection budget of {allowed:,} (the larger of "
            f"budget={limit:,} and {Budget.per_element} per element): the Jacobian is "
            f"treated as dense. To detect it anyway pass a larger budget= to "
            f"jacobian_sparsity / hessian_sparsity (or raise "
            f"dualad.jacobians.patterns.Budget.limit) and hand the pattern to "
            f"sparse_jacobian / sparse_hessian / plan as sparsity=")


class Pattern:
    """Rows of input indices, in one of two layouts.

    *Uniform* (``cols`` a list of ``width`` arrays, each one entry per row): the
    entries of row r are ``cols[0][r], cols[1][r], ...``; a union is then the
    concatenation of two lists and a gather one take per column, all on
    contiguous arrays. *Compressed* (``indptr``, ``indices``): rows of any
    length. Entries equal to ``n`` are padding (the sentinel column, "no input"),
    dropped by :meth:`to_csr`.
    """

    __slots__ = ("_indptr", "_indices", "cols", "n", "clean", "rows", "sat")

    def __init__(self, indptr, indices, n, clean=False, cols=None, rows=None):
        self._indptr = indptr
        self._indices = indices
        self.cols = cols
        self.n = n              # number of inputs; the value n itself marks padding
        self.clean = clean      # no duplicate entries in a row
        self.rows = len(indptr) - 1 if indptr is not None else rows
        self.sat = None         # saturated: every row is exactly these inputs (dense values)

    @classmethod
    def uniform(cls, cols, rows, n, clean=False):
        return cls(None, None, n, clean, list(cols), rows)

    @property
    def width(self):
        return None if self.cols is None else len(self.cols)

    @property
    def indptr(self):
        if self._indptr is None:
            self._indptr = np.arange(self.rows + 1, dtype=_INT) * self.width
        return self._indptr

    @property
    def indices(self):
        if self._indices is None:
            self._indices = np.stack(self.cols, axis=1).ravel() if self.cols else \
                np.zeros(0, _INT)
        return self._indices

    @property
    def nnz(self):
        return self.rows * len(self.cols) if self.cols is not None else len(self._indices)

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def empty(cls, rows, n):
        return cls.uniform([], rows, n, True)

    @classmethod
    def seed(cls, size, offset, n):
        """Element i depends on input ``offset + i`` (an independent variable)."""
        return cls.uniform([np.arange(offset, offset + size, dtype=_INT)], size, n, True)

    @classmethod
    def full(cls, rows, cols, n):
        """Every row depends on every input in ``cols`` (the conservative fallback)."""
        cols = np.asarray(cols, _INT)
        _check(rows * len(cols), rows)
        if len(cols) <= UNIFORM_WIDTH:
            p = cls.uniform([np.full(rows, c, _INT) for c in cols], rows, n, True)
        else:   # one wide row repeated: compressed (a list of thousands of columns is slow)
            p = cls(np.arange(rows + 1, dtype=_INT) * len(cols), np.tile(cols, rows), n, True)
        p.sat = cols
        return p

    def saturate(self):
        """This pattern, marked saturated (every row the same inputs) when it is: the rows
        of dense values after a dense linear map. A saturated pattern passes through
        :func:`group` without enumerating its pairs' entries."""
        if self.sat is not None or self.cols is not None or self.rows == 0 or \
                self.nnz < 4 * self.rows:
            return self
        p = self.compact()
        deg = np.diff(p.indptr)
        width = int(deg[0])
        if width == 0 or not (deg == width).all():
            return p
        rows = p.indices.reshape(p.rows, width)
        if not (rows == rows[0]).all():
            return p
        first = rows[0][rows[0] < p.n]
        return Pattern.full(p.rows, first, p.n) if len(first) == width else p

    def columns(self):
        """The union of all rows: every input this value may depend on."""
        cols = np.unique(self.indices)
        return cols[cols < self.n]

    # --- operations ---------------------------------------------------------------------
    def gather(self, src):
        """``Q[e] = P[src[e]]``, ``src[e] < 0`` meaning the empty set."""
        src = np.asarray(src, _INT).ravel()
        valid = src >= 0
        all_valid = bool(valid.all())
        if self.cols is not None:
            _check(len(src) * len(self.cols), len(src))
            if all_valid:
                g = Pattern.uniform([c[src] for c in self.cols], len(src), self.n, self.clean)
                g.sat = self.sat
                return g
            s = np.where(valid, src, 0)
            return Pattern.uniform([np.where(valid, c[s], self.n) for c in self.cols], len(src),
                                   self.n, self.clean)
        deg = np.diff(self.indptr)
        width = int(deg[0]) if len(deg) else 0
        if all_valid and width and int(deg.min()) == int(deg.max()):
            # Rows of one width (most values: a residual's every element reads the same
            # kind of inputs): one take of whole rows, no per-entry positions.
            _check(len(src) * width, len(src))
            rows = self.indices.reshape(self.rows, width)[src]
            return Pattern(np.arange(len(src) + 1, dtype=_INT) * width, rows.ravel(), self.n,
                           self.clean)
        s = src if all_valid else np.where(valid, src, 0)
        counts = deg[s] if all_valid else np.where(valid, deg[s], 0)
        indptr = np.zeros(len(src) + 1, _INT)
        np.cumsum(counts, out=indptr[1:])
        total = int(indptr[-1])
        _check(total, len(src))
        pos = np.repeat(self.indptr[s] - indptr[:-1], counts) + np.arange(total, dtype=_INT)
        return Pattern(indptr, self.indices[pos], self.n, self.clean)

    def compact(self):
        """Remove duplicate entries (and columns of padding) from the rows."""
        if self.clean:
            return self
        if self.cols is not None:
            cols = list(self.cols)
            for j in range(1, len(cols)):   # a later repeat of an entry becomes padding
                for i in range(j):
                    cols[j] = np.where(cols[j] == cols[i], self.n, cols[j])
            cols = [c for c in cols if (c < self.n).any()]
            return Pattern.uniform(cols, self.rows, self.n, True)
        m = sp.csr_matrix((np.ones(len(self.indices), bool), self.indices, self.indptr),
                          shape=(self.rows, self.n + 1))
        m.sum_duplicates()
        return Pattern(m.indptr.astype(_INT), m.indices.astype(_INT), self.n, True)

    def to_csr(self):
        """The pattern as a canonical boolean scipy CSR matrix (rows x n), padding dropped."""
        if self.cols is not None:
            # Sort each row first (column by column: NumPy is slow along short rows): a
            # repeated entry is then next to its twin and becomes padding in one comparison
            # per column, and what remains of a sorted row stays sorted.
            cols = sorted_columns(self.cols)
            n = self.n
            if not self.clean:
                for j in range(len(cols) - 1, 0, -1):
                    repeat = cols[j] == cols[j - 1]
                    if repeat.any():
                        cols[j] = np.where(repeat, n, cols[j])
            valid = [c < n for c in cols]
            b = np.stack(cols, axis=1) if cols else np.zeros((self.rows, 0), _INT)
            if not all(v.all() for v in valid):
                counts = sum(v.astype(_INT) for v in valid)
                indptr = np.zeros(self.rows + 1, _INT)
                np.cumsum(counts, out=indptr[1:])
                indices = b[np.stack(valid, axis=1)]
            else:
                indptr, indices = np.arange(self.rows + 1, dtype=_INT) * b.shape[1], b.ravel()
            m = sp.csr_matrix((np.ones(len(indices), bool), indices, indptr),
                              shape=(self.rows, self.n))
            m.has_sorted_indices = True
            m.has_canonical_format = True
            return m
        keep = self.indices < self.n
        kept = np.zeros(self.nnz + 1, _INT)
        np.cumsum(keep, out=kept[1:])
        counts = kept[self.indptr[1:]] - kept[self.indptr[:-1]]
        indptr = np.zeros(self.rows + 1, _INT)
        np.cumsum(counts, out=indptr[1:])
        m = sp.csr_matrix((np.ones(int(indptr[-1]), bool), self.indices[keep], indptr),
                          shape=(self.rows, self.n))
        m.sum_duplicates()
        return m


def sorted_columns(cols):
    """The uniform columns ``cols`` with each row sorted, as a list of columns: a
    compare-exchange network over few columns (vectorized down the rows; NumPy's
    row-wise sort is slow for short rows)."""
    w = len(cols)
    if w > 8:
        b = np.sort(np.stack(cols, axis=1), axis=1)
        return [np.ascontiguousarray(b[:, j]) for j in range(w)]
    cols = list(cols)
    for r in range(w):  # odd-even transposition sort: w rounds suffice
        for j in range(r % 2, w - 1, 2):
            cols[j], cols[j + 1] = np.minimum(cols[j], cols[j + 1]), np.maximum(cols[j], cols[j + 1])
    return cols


def union(patterns):
    """Row-wise union of patterns with the same number of rows."""
    patterns = [p for p in patterns if p is not None]
    first = patterns[0]
    if all(p is first for p in patterns):
        return first
    patterns = [p for p in patterns if p.nnz] or patterns[:1]
    if len(patterns) == 1:
        return patterns[0]
    if all(p.sat is not None for p in patterns):   # saturated parts: one saturated union
        return Pattern.full(first.rows, np.unique(np.concatenate([p.sat for p in patterns])),
                            first.n)
    total = sum(p.nnz for p in patterns)
    _check(total, first.rows)
    if all(p.cols is not None for p in patterns):
        seen, cols = set(), []
        for p in patterns:   # the same column array twice (x * x) adds nothing
            for c in p.cols:
                if id(c) not in seen:
                    seen.add(id(c))
                    cols.append(c)
        result = Pattern.uniform(cols, first.rows, first.n)
        return result.compact() if len(cols) > 6 else result
    # Compressed (or mixed) parts: scipy's sparse addition unites two matrices row by row
    # in C in one pass, O(entries in) -- a merge of sorted rows, or an accumulator over
    # unsorted ones; either way no row keeps an input twice, so none carries duplicates
    # into the next rule (a product chain of k factors would carry each input k times).
    acc = _as_csr(patterns[0])
    for p in patterns[1:]:
        acc = acc + _as_csr(p)
    return Pattern(acc.indptr.astype(_INT), acc.indices.astype(_INT), first.n, True)


def _as_csr(p):
    """``p`` as a boolean scipy CSR matrix over n + 1 columns (padding kept as column n)."""
    return sp.csr_matrix((np.ones(p.nnz, bool), p.indices, p.indptr), shape=(p.rows, p.n + 1))


def group(p, rows_out, out_of_pair, src_of_pair):
    """``Q[o] = ∪ P[s]`` over the pairs ``(out_of_pair[k], src_of_pair[k])``."""
    out_of_pair = np.asarray(out_of_pair, _INT).ravel()
    src_of_pair = np.asarray(src_of_pair, _INT).ravel()
    if p.sat is not None:   # every source row is the same set: Q[o] is it, or empty
        receiving = np.zeros(rows_out, bool)
        receiving[out_of_pair[src_of_pair >= 0]] = True
        if receiving.all():
            return Pattern.full(rows_out, p.sat, p.n)
        return Pattern.full(1, p.sat, p.n).gather(np.where(receiving, 0, -1))
    order = np.argsort(out_of_pair, kind="stable")
    g = p.gather(src_of_pair[order])
    pair_ptr = np.zeros(rows_out + 1, _INT)
    np.cumsum(np.bincount(out_of_pair, minlength=rows_out), out=pair_ptr[1:])
    return Pattern(g.indptr[pair_ptr], g.indices, p.n, False).compact().saturate()


def vstack(patterns):
    """Rows of several patterns one after the other."""
    if len(patterns) == 1:
        return patterns[0]
    n = patterns[0].n
    widths = {p.width for p in patterns}
    rows = sum(p.rows for p in patterns)
    if len(widths) == 1 and None not in widths:
        w = widths.pop()
        return Pattern.uniform([np.concatenate([p.cols[j] for p in patterns]) for j in range(w)],
                               rows, n, all(p.clean for p in patterns))
    indptr = [np.zeros(1, _INT)]
    base = 0
    for p in patterns:
        indptr.append(p.indptr[1:] + base)
        base += p.nnz
    return Pattern(np.concatenate(indptr), np.concatenate([p.indices for p in patterns]),
                   n, all(p.clean for p in patterns))

"""Sparse matrices whose stored values are traced: ``csr_array((data, indices, indptr))``.

A :class:`TracedSparse` holds its stored values ``data`` (a traced 1-D array of length
nnz, or a plain one) at the coordinates ``(row, col)`` (plain integers, in the order of
the constructor's input; duplicates add, as in SciPy). Its products are compositions of
registry operations, each O(nnz) in both modes and to any order:

    y = M v      y[i] = Σ_{k: row_k = i} data_k v[col_k]      gather v[col], scale, scatter-add
                 ẏ = Ṁ v + M v̇;   v̄ = Mᵀ ȳ;   d̄ata_k = ȳ[row_k] · v[col_k]   (summed over
                 the columns of a matrix v): the cotangent lives on the stored positions only
    x Mᵀ ... :   the same with row and col exchanged (``M.T`` swaps them, no copy of data)

(gather, ``untake`` = scatter-add, and multiply carry the rules; the sparsity detector
reads them too). :mod:`.linalg`'s solvers take these matrices as well.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...ops.core.elementwise import multiply as _mul
from ...ops.core.indexing import getitem, untake
from ...ops.core.linear import sum_p as _sum
from ...ops.core.shape import concatenate, reshape, transpose
from ...core.recycle import Recycled
from ...core.tracer import Box, ndim_of, primal_value, shape_of, unguarded_value

__all__ = [
    "Structure", "apply", "TracedSparse", "csr_array", "csr_matrix", "csc_array",
    "csc_matrix", "coo_array", "coo_matrix", "multiply", "issparse"
]

_INT = np.int64


class Structure:
    """The coordinates of a sparse matrix's stored values: ``row``, ``col`` (int64, one per
    stored value, duplicates allowed) and ``shape``; its transpose and its canonical
    SciPy form are built once when asked for. ``operator``: a constant
    ``scipy.sparse.linalg.LinearOperator`` standing for the matrix (matrix-free solves;
    no stored values then, ``row`` and ``col`` empty). ``layout``: ``(format, indices,
    indptr)`` when it was built from a CSR/CSC form, which :meth:`compressed` reuses."""

    __slots__ = ("_row", "_col", "shape", "_T", "operator", "layout", "_canonical", "_protos",
                 "_copies", "__weakref__")

    def __init__(self, row, col, shape, transpose=None, operator=None, layout=None):
        # row and col None: read from layout when first asked for (a replayed CSR result
        # holds only its layout, 16 bytes less per stored value)
        self._row = None if row is None else np.asarray(row, _INT)
        self._col = None if col is None else np.asarray(col, _INT)
        self.shape = (int(shape[0]), int(shape[1]))
        self._T = transpose
        self.operator = operator
        self.layout = layout
        self._canonical = None
        self._protos = None      # (class, dtype) -> a built matrix's attributes (compressed)
        self._copies = None      # the Recycled pools of the index copies (compressed)

    def _coordinates(self):
        fmt, indices, indptr = self.layout
        majors = np.repeat(np.arange(len(indptr) - 1, dtype=_INT), np.diff(indptr))
        minors = indices.astype(_INT)
        self._row, self._col = (majors, minors) if fmt == "csr" else (minors, majors)

    @property
    def row(self):
        if self._row is None:
            self._coordinates()
        return self._row

    @property
    def col(self):
        if self._col is None:
            self._coordinates()
        return self._col

    @property
    def nnz(self):
        return len(self._row) if self._row is not None else len(self.layout[1])

    @property
    def T(self):
        if self._T is None:
            self._T = Structure(self.col, self.row, self.shape[::-1], self, self.operator)
        return self._T

    def matrix(self, data, fmt="csc"):
        """The plain SciPy matrix with stored values ``data`` (duplicates summed)."""
        coo = sp.coo_array((np.asarray(data), (self.row, self.col)), shape=self.shape)
        return coo.asformat(fmt)

    def compressed(self, data, spmatrix):
        """The SciPy matrix in ``layout``'s format with stored values ``data``, built on
        that layout directly (no COO round trip per call). Its index arrays are fresh
        copies (a caller's in-place edit, ``eliminate_zeros``, must not reach the next
        call's), int32 where they fit; its canonical flag is set when the layout was found
        sorted without duplicates. SciPy's constructor runs once per class and dtype (it
        checks the layout: ~20 us); later calls copy that matrix's attributes and replace
        its three arrays (what the constructor would store for this layout), the index
        copies written into arrays an earlier result no longer holds
        (:class:`dualad.core.recycle.Recycled`: no new pages per call)."""
        fmt, indices, indptr = self.layout
        data = np.asarray(data)
        cls = getattr(sp, f"{fmt}_{'matrix' if spmatrix else 'array'}")
        key = (cls, data.dtype)
        state = self._protos.get(key) if self._protos is not None else None
        if state is None or data.shape != (len(indices),):
            out = cls((data, indices.copy(), indptr.copy()), shape=self.shape)
            if self._canonical is None:
                self._canonical = _sorted_unique(indices, indptr)
            if self._canonical:
                out.has_canonical_format = True
            if out.data is data and out.indices.dtype == indices.dtype and \
                    out.indptr.dtype == indptr.dtype:   # stored as given: reusable
                state = {k: v for k, v in vars(out).items()
                         if k not in ("data", "indices", "indptr")}
                self._protos = {**(self._protos or {}), key: state}
            return out
        out = cls.__new__(cls)
        out.__dict__.update(state)
        if self._copies is None:
            self._copies = (Recycled(), Recycled())
        out.data = data
        out.indices, out.indptr = self._copies[0].copy(indices), self._copies[1].copy(indptr)
        return out

    def __repr__(self):
        return f"Structure(shape={self.shape}, nnz={self.nnz})"


def _small_index(a):
    """``a`` as int32 when its values fit (SciPy scans wider index arrays on every build)."""
    return a.astype(np.int32) if a.size == 0 or int(a.max()) < 2 ** 31 - 1 else a


def _sorted_unique(indices, indptr):
    """Whether every row (column) of a compressed layout lists strictly increasing indices."""
    if len(indices) < 2:
        return True
    rising = np.diff(indices) > 0
    rising[indptr[1:-1][(indptr[1:-1] > 0) & (indptr[1:-1] < len(indices))] - 1] = True
    return bool(rising.all())


def apply(data, struct, v, axis=-1):
    """``M ×_axis v`` for the sparse M of stored values ``data`` at ``struct``: along axis
    -1 (``M @ v`` for a vector v) or -2 (``M @ V`` column by column); ``data`` and ``v``
    may carry leading batch axes (tangents) that broadcast, traced or plain."""
    lead_v = (slice(None),) * (ndim_of(v) - (1 if axis == -1 else 2))
    if axis == -1:
        gathered = getitem(v, idx=lead_v + (struct.col,))               # (..., nnz)
        prod = _mul(data, gathered)
        ps = shape_of(prod)
        return untake(prod, idx=(slice(None),) * (len(ps) - 1) + (struct.row,),
                      shape=ps[:-1] + (struct.shape[0],))
    gathered = getitem(v, idx=lead_v + (struct.col, slice(None)))       # (..., nnz, k)
    prod = _mul(reshape(data, shape_of(data) + (1,)), gathered)
    ps = shape_of(prod)
    return untake(prod, idx=(slice(None),) * (len(ps) - 2) + (struct.row, slice(None)),
                  shape=ps[:-2] + (struct.shape[0], ps[-1]))


def _check_data(data, nnz, who):
    ds = shape_of(data)
    if len(ds) != 1 or ds[0] != nnz:
        raise ValueError(f"{who}: data must be a 1-D array of the {nnz} stored values, got "
                         f"shape {ds}")
    dt = np.result_type(unguarded_value(data))   # the dtype only: no jit guard
    if dt.kind not in "fc":
        raise TypeError(f"{who}: traced data of dtype {dt} is not differentiable; use a "
                        f"floating dtype")


class TracedSparse:
    """A 2-D sparse matrix whose stored values ``data`` may be traced (see the module
    docstring). ``format`` is the SciPy format it was built as ('csr', 'csc', 'coo');
    ``spmatrix`` whether it stands for a ``*_matrix`` (``*`` is then the matrix product,
    as in SciPy) or a ``*_array``."""

    __array_ufunc__ = None            # ndarray @ M: NumPy defers to M.__rmatmul__
    __array_priority__ = 200.0

    def __init__(self, data, struct, format="coo", spmatrix=False):
        _check_data(data, struct.nnz, f"{format}_{'matrix' if spmatrix else 'array'}")
        self.data = data
        self.struct = struct
        self.format = format
        self.spmatrix = spmatrix

    # --- what SciPy's matrices have ----------------------------------------------------
    @property
    def shape(self):
        return self.struct.shape

    ndim = 2

    @property
    def nnz(self):
        return self.struct.nnz

    @property
    def dtype(self):
        return np.result_type(unguarded_value(self.data))

    @property
    def row(self):
        return self.struct.row

    @property
    def col(self):
        return self.struct.col

    @property
    def T(self):
        fmt = {"csr": "csc", "csc": "csr"}.get(self.format, self.format)
        return TracedSparse(self.data, self.struct.T, fmt, self.spmatrix)

    def transpose(self, axes=None, copy=False):
        if axes is not None and tuple(axes) != (1, 0):
            raise ValueError(f"transpose: axes={axes!r}; a sparse matrix swaps its two axes")
        return self.T

    def tocsr(self, copy=False):
        return TracedSparse(self.data, self.struct, "csr", self.spmatrix)

    def tocsc(self, copy=False):
        return TracedSparse(self.data, self.struct, "csc", self.spmatrix)

    def tocoo(self, copy=False):
        return TracedSparse(self.data, self.struct, "coo", self.spmatrix)

    def __dualad_flatten__(self):
        """``([data], rebuild)``: how :func:`dualad.jit` returns a traced sparse matrix, as
        its stored values and the matrix rebuilt from the replayed ones (SciPy's own
        matrix, in this format, for plain values; a TracedSparse for traced ones)."""
        struct, fmt, spmatrix = self.struct, self.format, self.spmatrix

        def rebuild(leaves):
            (data,) = leaves
            if isinstance(data, Box):
                return TracedSparse(data, struct, fmt, spmatrix)
            if struct.layout is not None and struct.layout[0] == fmt:
                return struct.compressed(data, spmatrix)
            cls = sp.coo_matrix if spmatrix else sp.coo_array
            return cls((np.asarray(data), (struct.row, struct.col)),
                       shape=struct.shape).asformat(fmt)
        return [self.data], rebuild

    def primal(self):
        """The plain SciPy matrix of the primal values."""
        return self.struct.matrix(primal_value(self.data), self.format)

    def toarray(self, order=None, out=None):
        """The dense (traced) matrix: a scatter-add of the stored values."""
        if out is not None:
            raise TypeError("toarray(out=...) writes in place; use the returned value")
        return untake(self.data, idx=(self.struct.row, self.struct.col), shape=self.shape)

    todense = toarray

    def sum(self, axis=None, dtype=None, out=None):
        """Σ of the stored values (``axis=None``: a traced scalar, also what ``np.sum(M)``
        calls); ``axis=0`` / ``1`` the column / row sums (scatter-adds of the stored
        values) as a 1-D array, as a ``*_array`` gives. A ``*_matrix``'s axis sums are
        an ``np.matrix`` in SciPy, whose ``*`` a traced value cannot imitate: refused."""
        if dtype is not None or out is not None:
            raise TypeError(f"{self._name()}.sum: dtype= and out= are not supported on a "
                            f"traced sparse matrix; cast or store the returned value")
        if axis is None:
            return _sum(self.data, axis=(ndim_of(self.data) - 1,), keepdims=False)
        if axis not in (0, 1, -1, -2):
            raise ValueError(f"{self._name()}.sum: axis={axis!r}; a sparse matrix has axes "
                             f"0 and 1")
        if self.spmatrix:
            raise TypeError(f"{self._name()}.sum(axis={axis}): SciPy returns an np.matrix "
                            f"here, which a traced value cannot be; write "
                            f"M.toarray().sum(axis={axis}) (or M @ ones) for the sums")
        along = self.struct.col if axis in (0, -2) else self.struct.row
        size = self.shape[1] if axis in (0, -2) else self.shape[0]
        lead = (slice(None),) * (ndim_of(self.data) - 1)
        return untake(self.data, idx=lead + (along,),
                      shape=shape_of(self.data)[:-1] + (size,))

    def __neg__(self):
        return TracedSparse(-self.data, self.struct, self.format, self.spmatrix)

    def _scale(self, s):
        if ndim_of(s) != 0:
            raise TypeError(f"{self._name()} * an array of shape {shape_of(s)}: only a "
                            f"scalar scales a traced sparse matrix here; write "
                            f"M @ v for the product")
        return TracedSparse(_mul(self.data, s), self.struct, self.format, self.spmatrix)

    def __mul__(self, other):
        if ndim_of(other) == 0 and not hasattr(type(other), "tocsr"):
            return self._scale(other)
        if self.spmatrix:
            return self @ other
        return multiply(self, other)

    def __rmul__(self, other):
        if ndim_of(other) == 0 and not hasattr(type(other), "tocsr"):
            return self._scale(other)
        if self.spmatrix:
            return self.__rmatmul__(other)
        return self.__mul__(other)

    def __truediv__(self, other):
        if ndim_of(other) != 0:
            raise TypeError(f"{self._name()} / an array of shape {shape_of(other)}: only a "
                            f"scalar divides a traced sparse matrix here")
        return self._scale(1.0 / other)

    def _coo_parts(self, other, who):
        """(data, row, col) of ``other``, a traced or SciPy sparse matrix of this shape."""
        if isinstance(other, TracedSparse):
            parts = other.data, other.struct.row, other.struct.col
        elif sp.issparse(other):
            c = other.tocoo()
            parts = c.data, c.row, c.col
        else:
            raise TypeError(f"{self._name()} {who} a {type(other).__name__} of shape "
                            f"{shape_of(other)}: only a sparse matrix of the same shape; for a "
                            f"dense result write M.toarray() {who} x")
        if tuple(other.shape) != self.shape:
            raise ValueError(f"{self._name()} {who} a sparse matrix: shapes {self.shape} and "
                             f"{tuple(other.shape)} differ")
        return parts

    def __add__(self, other):
        """M + B: the stored values of both, side by side (coinciding coordinates add)."""
        d, r, c = self._coo_parts(other, "+")
        struct = Structure(np.concatenate([self.struct.row, r]),
                           np.concatenate([self.struct.col, c]), self.shape)
        return TracedSparse(concatenate([self.data, d]), struct, "coo", self.spmatrix)

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other if isinstance(other, TracedSparse) else -other.tocoo())

    def __rsub__(self, other):
        return (-self) + other

    def _name(self):
        return f"{self.format}_{'matrix' if self.spmatrix else 'array'}"

    # --- products ----------------------------------------------------------------------
    def _matmul(self, v):
        if hasattr(type(v), "tocsr"):
            raise TypeError(f"{self._name()} @ a sparse matrix: the product of two sparse "
                            f"matrices is not supported with traced values; multiply by "
                            f"its dense form (B.toarray()) or by vectors")
        nv = ndim_of(v)
        vs = shape_of(v)
        if nv == 0:
            raise ValueError("matmul: a scalar operand; use * to scale a sparse matrix")
        if nv > 2:
            raise ValueError(f"matmul: a traced sparse matrix times an array of shape {vs}; "
                             f"only vectors and matrices")
        k = vs[0]
        if k != self.shape[1]:
            raise ValueError(f"matmul: the sparse matrix of shape {self.shape} and the array "
                             f"of shape {vs} are not aligned: {self.shape[1]} != {k}")
        return apply(self.data, self.struct, v, axis=-1 if nv == 1 else -2)

    def _rmatmul(self, v):
        """``v @ M`` = (Mᵀ vᵀ)ᵀ."""
        if hasattr(type(v), "tocsr"):
            return self._matmul(v)          # raises: no sparse x sparse with traced values
        nv = ndim_of(v)
        if nv == 1:
            return self.T._matmul(v)
        if nv == 2:
            return transpose(self.T._matmul(transpose(v, (1, 0))), (1, 0))
        raise ValueError(f"matmul: an array of shape {shape_of(v)} times a traced sparse "
                         f"matrix; only vectors and matrices")

    def __matmul__(self, other):
        return self._matmul(other)

    def __rmatmul__(self, other):
        return self._rmatmul(other)

    def dot(self, other):
        if ndim_of(other) == 0 and not hasattr(type(other), "tocsr"):
            return self._scale(other)
        return self._matmul(other)

    def __array__(self, *args, **kwargs):
        raise TypeError(f"a {self._name()} with traced stored values cannot become a plain "
                        f"NumPy array (its derivative would be lost); use .toarray() for the "
                        f"dense traced matrix")

    def __repr__(self):
        return (f"<{self._name()} of shape {self.shape} with {self.nnz} stored values "
                f"{'(traced)' if isinstance(self.data, Box) else '(plain)'}>")


# --- constructors mirroring SciPy's ---------------------------------------------------------
def _structure(arg1, shape, fmt, who):
    """(data, Structure) from SciPy's constructor forms."""
    if not isinstance(arg1, tuple):
        raise TypeError(f"{who}: a traced matrix is built from its stored values: pass "
                        f"(data, indices, indptr) or (data, (row, col)) with a traced 1-D "
                        f"data, or a traced dense array's sparse form via "
                        f"{who}((A[rows, cols], (rows, cols)), shape=...)")
    if len(arg1) == 2:
        data, (row, col) = arg1[0], arg1[1]
        row, col = np.asarray(row, _INT).ravel(), np.asarray(col, _INT).ravel()
        if len(row) != len(col):
            raise ValueError(f"{who}: row and col have different lengths {len(row)}, {len(col)}")
        if shape is None:
            shape = (int(row.max(initial=-1)) + 1, int(col.max(initial=-1)) + 1)
        if len(row) and (row.min() < 0 or col.min() < 0 or row.max() >= shape[0]
                         or col.max() >= shape[1]):
            raise ValueError(f"{who}: a coordinate lies outside the shape {tuple(shape)}")
        return data, Structure(row, col, shape)
    if len(arg1) == 3:
        data, indices, indptr = arg1
        indices = np.asarray(indices, _INT).ravel()
        indptr = np.asarray(indptr, _INT).ravel()
        major = len(indptr) - 1
        if indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0):
            raise ValueError(f"{who}: indptr must start at 0, not decrease and end at "
                             f"len(indices) = {len(indices)}")
        minor = int(indices.max(initial=-1)) + 1
        if shape is None:
            shape = (major, minor) if fmt == "csr" else (minor, major)
        if len(indices) and indices.min() < 0:
            raise ValueError(f"{who}: negative indices")
        if major != shape[0 if fmt == "csr" else 1] or (len(indices) and indices.max() >=
                                                         shape[1 if fmt == "csr" else 0]):
            raise ValueError(f"{who}: indptr/indices do not fit the shape {tuple(shape)}")
        layout = (fmt, _small_index(indices), _small_index(indptr))
        return data, Structure(None, None, shape, layout=layout)
    raise TypeError(f"{who}: unsupported constructor argument (a tuple of length {len(arg1)})")


def _constructor(fmt, spmatrix):
    scipy_cls = getattr(sp, f"{fmt}_{'matrix' if spmatrix else 'array'}")
    who = scipy_cls.__name__

    def build(arg1, shape=None, dtype=None, copy=False, **kwargs):
        traced = isinstance(arg1, tuple) and len(arg1) in (2, 3) and isinstance(arg1[0], Box)
        if not traced:
            if isinstance(arg1, Box):
                raise TypeError(
                    f"{who}(x) of a traced dense array: which entries are stored would depend "
                    f"on its values; pass the stored values and their coordinates, "
                    f"{who}((x[rows, cols], (rows, cols)), shape=x.shape)")
            return scipy_cls(arg1, shape=shape, dtype=dtype, copy=copy, **kwargs)
        if kwargs:
            raise TypeError(f"{who}: keyword arguments {sorted(kwargs)} are not supported "
                            f"with traced data")
        data, struct = _structure(arg1, shape, fmt, who)
        if dtype is not None:
            data = data.astype(dtype)
        return TracedSparse(data, struct, fmt, spmatrix)
    build.__name__ = build.__qualname__ = who
    build.__doc__ = (f"``scipy.sparse.{who}``; with traced ``data`` in ``(data, indices, "
                     f"indptr)`` or ``(data, (row, col))`` a :class:`TracedSparse`, "
                     f"otherwise SciPy's own {who}.")
    return build


csr_array, csr_matrix = _constructor("csr", False), _constructor("csr", True)
csc_array, csc_matrix = _constructor("csc", False), _constructor("csc", True)
coo_array, coo_matrix = _constructor("coo", False), _constructor("coo", True)


def multiply(A, x):
    """The elementwise product of a sparse matrix (SciPy's or traced) and a dense ``x``
    (traced or not) that broadcasts to A's shape (sparray's ``A * x``, ``A.multiply(x)``):
    a sparse matrix with A's stored coordinates and values ``data_k · x[row_k, col_k]``
    (a gather of x, O(nnz), never the dense m × n product)."""
    if isinstance(A, TracedSparse):
        data, struct, fmt, spmatrix = A.data, A.struct, A.format, A.spmatrix
    elif sp.issparse(A) and A.ndim == 2:
        coo = A.tocoo()
        data, struct = coo.data, Structure(coo.row, coo.col, coo.shape)
        fmt, spmatrix = A.format, not isinstance(A, sp.sparray)
    else:
        raise TypeError(f"multiply: A must be a 2-D sparse matrix, got {type(A).__name__}")
    xs = shape_of(x)
    try:
        np.broadcast_shapes(xs, struct.shape)
    except ValueError:
        raise ValueError(f"multiply: x of shape {xs} does not broadcast to the sparse "
                         f"matrix's shape {struct.shape}") from None
    if len(xs) > 2:
        raise ValueError(f"multiply: x of shape {xs} would make the product 3-D")
    if not xs:
        values = x
    else:
        full = (1,) * (2 - len(xs)) + tuple(xs)
        idx = tuple(c if d > 1 else np.zeros_like(c) for c, d in
                    zip((struct.row, struct.col), full))
        values = getitem(reshape(x, full), idx=idx)
    if not (isinstance(x, Box) or isinstance(data, Box)):
        return A.multiply(x)                 # plain values: SciPy's own
    return TracedSparse(_mul(data, values), struct, fmt, spmatrix)


def issparse(x):
    """True for SciPy's sparse matrices and arrays and for :class:`TracedSparse`."""
    return sp.issparse(x) or isinstance(x, TracedSparse)


r"""Jacobians through the input gathers: preaccumulation at the selections ``f`` starts with.

Many sparse Jacobians come from code that first *selects* from its inputs and then computes
on the selections: bundle adjustment gathers each observation's camera and point
(``cams[obs[:, 0]]``), a finite-element residual gathers each element's nodes, a graph
model each edge's ends. Write the selections as a linear map ``S`` (each selected entry is
one input entry, so ``S`` is a 0/1 matrix with one 1 per row) and the rest as ``g``:

.. math::

    f = g \circ S, \qquad J_f = J_g(Sx)\, S .

``J_g`` is the Jacobian with respect to the selected values, and it is often far easier to
compress than ``J_f``. In bundle adjustment every residual row reads 15 selected values of
its own observation, so the three rows of one observation are the only rows that share a
column of ``J_g``: three reverse sweeps (a row coloring of 3 colors) recover it. ``J_f``
itself has no small row coloring (one camera is read by thousands of rows) and needs 14
forward colors. The product with ``S`` costs nothing to form: entry ``(i, c)`` of ``J_g``
lands at ``(i, pos[c])`` of ``J_f``, where ``pos[c]`` is the input entry selected value
``c`` is; entries that land on the same place add up (a row that reads one input twice).

This module finds ``S`` and ``g`` on the program :func:`dualad.jit` records of ``f``
(:func:`find_cut`): the *prefix* is every equation reachable from the inputs through
selections only (``getitem``, ``gather``, ``reshape``, ``transpose``, ``broadcast_to``,
``concatenate`` of selections), with no guard anywhere in the program (``f`` takes no
branch on a value) and with at least one selection by an integer array (slices alone,
a stencil's shifts, make ``J_g`` no easier to color than ``J_f``); the *cut* is the prefix
values the rest reads. ``pos`` is found by
running the prefix on the inputs' flat positions (integer arrays): a selection of
positions is the positions of the selection. The cut is only worth it when some input
entry is selected more than once (else ``J_g`` is ``J_f`` with its columns moved).
:class:`Composition` turns ``J_g`` (CSR) into ``J_f`` (CSR) with one gather (or one
``bincount`` where entries add up), its index arrays computed once per pattern.
"""
from __future__ import annotations

__all__ = ["Cut", "Composition", "find_cut", "SELECTIONS"]

import numpy as np

SELECTIONS = frozenset({"getitem", "gather", "reshape", "transpose", "broadcast_to",
                        "concatenate"})
_CONST_OK = frozenset({"gather"})     # index arrays may be constants of the program


class Cut:
    """``f = g ∘ S`` (see the module docstring).

    ``prefix``: the selection equations, in program order; ``cut``: the variables ``g``
    takes, in order; ``positions[k]``: an integer array of the shape of cut variable ``k``,
    the flat input position of each of its entries; ``program``: the whole program (its
    equations after the prefix are ``g``); ``indices``: ``[(array, copy)]`` the index arrays
    the prefix holds, with a copy taken when the cut was found (a closed-over index array
    changed in place since then makes the cut stale: :meth:`holds`); ``rest``: the
    equations of ``g`` (default: the program's after the prefix; a cut found elsewhere,
    :mod:`jacobians.bottleneck`, gives both sides an equation that reads constants only).
    ``positions`` is None for a cut that is not a selection (its values are computed)."""

    def __init__(self, program, prefix, cut, positions, indices, rest=None):
        self.program = program
        self.prefix = prefix
        self.cut = cut
        self.positions = positions
        self.indices = indices
        if rest is None:
            prefix_outs = {e.out for e in prefix}
            rest = [e for e in program.body if e.out not in prefix_outs]
        self.rest = rest
        self.dies = _last_reads(rest, program.outvars)

    @property
    def sizes(self):
        """The size of each cut value, in order (from the program's avals)."""
        return [int(np.prod(self.program.avals[v][1], dtype=np.int64)) for v in self.cut]

    @property
    def selected(self):
        """How many values ``g`` takes (the columns of ``J_g``)."""
        if self.positions is not None:
            return sum(int(p.size) for p in self.positions)
        return sum(self.sizes)

    def holds(self):
        """Whether every index array the prefix holds still has the values it had."""
        return all(np.array_equal(a, c) for a, c in self.indices)

    def select(self, inputs):
        """The cut values ``S x`` at the flat list of ``inputs`` (plain arrays)."""
        env = dict(zip(self.program.invars, inputs))
        for e in self.prefix:
            env[e.out] = e.prim(*[env[a] if a.__class__ is int else a.value for a in e.ins],
                                **e.params)
        return [env[v] for v in self.cut]

    def g(self, *cuts):
        """``g`` at the cut values (plain or traced): the equations after the prefix."""
        env = dict(zip(self.cut, cuts))
        get, drop, dies = env.__getitem__, env.pop, self.dies
        for k, e in enumerate(self.rest):
            env[e.out] = e.prim(*[get(a) if a.__class__ is int else a.value for a in e.ins],
                                **e.params)
            for v in dies.get(k, ()):
                drop(v)     # its last read: free it (a detection run's patterns are large)
        (out,) = self.program.outvars
        return get(out) if out.__class__ is int else np.array(out.value, copy=True)


def _last_reads(eqns, outvars):
    """``{k: [variables last read by eqns[k]]}``, the program's outputs never listed:
    ``g`` drops each value after its last read, as generated code does."""
    last = {}
    for k, e in enumerate(eqns):
        for a in e.ins:
            if a.__class__ is int:
                last[a] = k
    for v in outvars:
        last.pop(v, None)
    dies = {}
    for v, k in last.items():
        dies.setdefault(k, []).append(v)
    return dies


def find_cut(program, in_shapes):
    """The :class:`Cut` of ``program`` (inputs of ``in_shapes``, flattened in order), or
    None: no guard, one output, a prefix of selections, and some input entry selected more
    than once."""
    if program.guards or len(program.outvars) != 1 or program.outvars[0].__class__ is not int:
        return None
    offsets = np.cumsum([0] + [int(np.prod(s)) for s in in_shapes])
    itype = np.int32 if offsets[-1] < 2 ** 31 else np.int64     # positions: the cut's S
    pos = {v: np.arange(offsets[k], offsets[k + 1], dtype=itype).reshape(in_shapes[k])
           for k, v in enumerate(program.invars)}
    prefix, indices = [], []
    for e in program.body:
        name = e.prim.name
        if name not in SELECTIONS or not _selects(e, pos):
            continue
        args = [pos[a] if a.__class__ is int else a.value for a in e.ins]
        pos[e.out] = np.asarray(e.prim(*args, **e.params))
        prefix.append(e)
        indices += _index_arrays(e)
    used = _read_after(program, {e.out for e in prefix} | set(program.invars), prefix)
    cut = [v for v in list(program.invars) + [e.out for e in prefix] if v in used]
    # by first input position: J_g's columns then tend to follow J_f's (Composition.order)
    cut.sort(key=lambda v: int(pos[v].min(initial=offsets[-1])))
    if not cut or not indices:
        return None     # slices and reshapes only: a stencil's J_f colors as well as J_g
    positions = [pos[v] for v in cut]
    reads = np.bincount(np.concatenate([p.ravel() for p in positions]),
                        minlength=int(offsets[-1]))
    if reads.max(initial=0) <= 1:
        return None     # nothing selected twice: J_g is J_f with its columns moved
    return Cut(program, prefix, cut, positions, [(a, a.copy()) for a in indices])


def _selects(e, pos):
    """Whether equation ``e`` selects from prefix values only (its first input one; index
    arrays as constants only where the primitive takes them so)."""
    ins = e.ins
    if not ins or ins[0].__class__ is not int or ins[0] not in pos:
        return False
    for a in ins[1:]:
        if a.__class__ is int:
            if a not in pos or e.prim.name in _CONST_OK:
                return False
        elif e.prim.name not in _CONST_OK:
            return False
    return True


def _index_arrays(e):
    """The integer arrays equation ``e`` selects with (params and constant inputs)."""
    found = [a.value for a in e.ins[1:] if a.__class__ is not int]
    for v in e.params.values():
        found += list(v) if isinstance(v, tuple) else [v]
    return [a for a in found if isinstance(a, np.ndarray)]


def _read_after(program, prefix_vars, prefix):
    """The prefix variables read outside the prefix (by the rest, or as the output)."""
    inside = {id(e) for e in prefix}
    used = {a for e in program.body if e.__class__.__name__ == "Eqn" and id(e) not in inside
            for a in e.ins if a.__class__ is int and a in prefix_vars}
    used.update(a for a in program.outvars if a.__class__ is int and a in prefix_vars)
    return used


_BLOCK = 1 << 22     # entries of J_g per block of the composition's sort (memory ∝ block)


def _row_blocks(indptr, size):
    """``(r0, r1)`` row ranges of a CSR ``indptr`` covering every row, each holding at
    most ``size`` entries (or one row, where a row alone holds more)."""
    m, r0 = len(indptr) - 1, 0
    while r0 < m:
        r1 = int(np.searchsorted(indptr, indptr[r0] + size, side="right")) - 1
        r1 = min(m, max(r1, r0 + 1))
        yield r0, r1
        r0 = r1


class Composition:
    r"""``J_f = J_g S`` for one pattern of ``J_g`` (CSR) and the cut's positions: the CSR
    structure of ``J_f`` and, per call, its data in one gather (one ``bincount`` where
    several entries of a row land on one input).

    ``rows`` entries of ``J_g`` at ``(i, c)`` go to ``(i, pos[c])``; sorted by
    ``i * n + pos[c]`` that is CSR order. ``order`` is None when ``J_g``'s entries lie in
    that order already (each row's selected values in the order of their inputs, as in
    bundle adjustment): then ``J_f``'s data is ``J_g``'s own, no gather."""

    def __init__(self, pattern_g, positions, n):
        pos = np.concatenate([p.ravel() for p in positions])
        indptr, m = pattern_g.indptr, pattern_g.shape[0]
        nnz = int(indptr[-1])
        itype = np.int32 if max(nnz, n) < 2 ** 31 else np.int64
        self.shape = (m, n)
        self.g_indptr, self.g_indices = indptr, pattern_g.indices
        self.order = np.empty(nnz, itype)
        columns = np.empty(nnz, itype)
        first = np.empty(nnz, dtype=bool)
        counts = np.zeros(m, dtype=np.int64)
        moved = False
        for r0, r1 in _row_blocks(indptr, _BLOCK):    # rows are in order: sort within a block
            s, e = int(indptr[r0]), int(indptr[r1])
            rows = np.repeat(np.arange(r1 - r0, dtype=np.int64), np.diff(indptr[r0:r1 + 1]))
            cols = pos[pattern_g.indices[s:e]]
            keys = rows * n + cols
            if np.all(keys[1:] >= keys[:-1]):     # in order already (bundle adjustment)
                order = np.arange(e - s)
            else:
                order = np.argsort(keys, kind="stable")
                rows, cols = rows[order], cols[order]
                moved = True
            new = first[s:e]
            new[:1] = True
            new[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
            self.order[s:e] = order + s
            columns[s:e] = cols
            counts[r0:r1] = np.bincount(rows[new], minlength=r1 - r0)
        merged = not first.all()     # entries of one row that land on one input add up
        self.indices = columns[first] if merged else columns
        self.sums = None
        if merged:
            self.sums = np.empty(nnz, itype)
            self.sums[self.order] = np.cumsum(first) - 1
        if not moved:
            self.order = None   # J_g's entries are J_f's, in J_f's order: data is shared
        self.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(itype)
        self.copies = None      # the pools of the index copies each result gets (csr)

    def matches(self, jg):
        """Whether CSR ``jg`` has the pattern this composition was built for."""
        return (jg.indices is self.g_indices and jg.indptr is self.g_indptr) or (
            jg.shape[0] == self.shape[0] and np.array_equal(jg.indptr, self.g_indptr)
            and np.array_equal(jg.indices, self.g_indices))

    def data(self, data_g):
        """The data of ``J_f`` in CSR order from the data of ``J_g``."""
        if self.sums is None:
            return data_g if self.order is None else data_g[self.order]
        if np.iscomplexobj(data_g):
            return self.data(data_g.real) + 1j * self.data(data_g.imag)
        return np.bincount(self.sums, weights=data_g, minlength=self.indices.size)

    def csr(self, jg):
        """``J_f`` as a SciPy CSR matrix (its index arrays copies: the caller may keep it
        and edit them; each written into an array an earlier result no longer holds,
        :class:`dualad.extend.Recycled`; its data may be ``jg``'s own, which the caller
        hands over)."""
        import scipy.sparse as sp
        if self.copies is None:
            from dualad.extend import Recycled
            self.copies = (Recycled(), Recycled())
        return sp.csr_matrix((self.data(jg.data), self.copies[0].copy(self.indices),
                              self.copies[1].copy(self.indptr)), shape=self.shape)

    def pattern(self):
        """The boolean pattern of ``J_f``."""
        import scipy.sparse as sp
        return sp.csr_matrix((np.ones(self.indices.size, dtype=bool), self.indices,
                              self.indptr), shape=self.shape)

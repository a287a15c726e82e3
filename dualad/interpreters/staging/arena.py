"""One block of memory for a generated program's large arrays, laid out once and kept
between calls: static buffer assignment, as XLA does for a compiled program.

A large NumPy array is memory the C allocator maps from the kernel when it is made and
unmaps when it is freed (glibc maps every block above its threshold, at most 32 MiB, on
its own), so the kernel faults in and zeroes its pages again at the next call. A jitted
bundle-adjustment Jacobian of 3·10⁶ observations makes ~7 GB of such arrays per call,
a fraction of them alive at once; the page faults were half its time (the same replay
with the allocator keeping freed memory: 2.3 s against 6.5-7.6 s).

The code generator writes each large result of a ufunc, a reduction, a gather by rows,
a concatenation or a zero-filled buffer into ``slots[i]`` (``np.multiply(v7, v8,
out=slots[3])``), a view into one block. :func:`layout` places the slots in the block
from the source: a slot is busy from the line that writes it to the last line that reads
any variable that may share its memory (anything not written into a slot is taken to
share the memory of everything its line reads), and two slots share bytes only if their
lives do not overlap (first fit, largest first). A slot whose memory may reach an input
or an output gets no place in the block. Such a slot, when it is an output's, gets an
array of its own instead, kept after the call and given to a later call once nothing
outside holds it any more (its reference count is back to the pool's own): the caller's
``J = jitted(x)`` in a loop drops the last result as the next one is made, and the
next-but-one call writes into its memory rather than into pages the kernel must map,
zero and (on a virtual machine that reports free memory to its host) fetch again.

:class:`Arenas` hands each call a block (``acquire``) and takes it back after the
function returned (``release``), only when nothing outside holds a view of it: every view
of the block holds a reference to it, and anything keeping one of the slot views itself
holds a reference to that view, so the reference counts tell exactly. A call in
another thread, or a nested call, gets a block of its own. Memory: at most ``spare``
blocks are kept between calls (``jitted.clear_cache()`` drops them with the compiled
program); each is the program's peak of large live arrays, up to the fragmentation of
the layout. The block is alive for the whole call, where the arrays it replaces were
freed one by one, so it costs memory as well: a block of more than 64 MiB is made only
while the machine has four times its size available (``MemAvailable``), and kept after
a call only while it has twice its size; short of memory, a call makes and frees its
arrays as before (and faults their pages in again).
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from ...core.recycle import ALWAYS_KEPT, Recycled, available_memory
from .registers import DEFINITION, NAME, spans

__all__ = ["Arenas", "layout", "ALIGN"]

ALIGN = 64          # bytes: every slot starts at a multiple (a cache line; SIMD loads)
_SLOT = "slots["


def _find(parent, a):
    while parent.setdefault(a, a) != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def layout(lines, sizes, pinned, fresh=(), into=None):
    """``(offsets, total)``: the byte offset of each slot in one block (None: no place)
    and the block's size. ``lines``: the function's source lines, where slot ``i`` is
    written as ``slots[i]`` on the line defining its variable; ``sizes``: each slot's
    bytes; ``pinned``: the names of the inputs and outputs; ``fresh``: variables known
    to hold a new array (a ufunc's result); ``into``: ``{variable: the variable whose
    array it was written into}``. Any other variable may share the memory of everything
    its line reads."""
    n = len(sizes)
    into = into or {}
    parent = {}
    site = {}         # variable -> slot it was written into
    for ln in lines:
        code = ln.split("#", 1)[0]
        m = DEFINITION.match(code)
        if m is None:
            continue
        target, rhs = m.group(2), code[m.end():]
        _find(parent, target)
        if _SLOT in rhs:
            site[target] = int(rhs.split(_SLOT, 1)[1].split("]", 1)[0])
            continue
        if target in fresh:
            continue
        shared = [into[target]] if target in into else NAME.findall(rhs)
        for name in shared:      # may share the memory of what it reads
            ra, rb = _find(parent, target), _find(parent, name)
            if ra != rb:
                parent[ra] = rb
    life = spans(lines, parent)
    end = {}
    bad = set()
    for name, (_, last) in life.items():
        r = _find(parent, name)
        end[r] = max(end.get(r, -1), last)
        if name in pinned:
            bad.add(r)
    items = []
    for name, i in site.items():
        r = _find(parent, name)
        if r not in bad:
            items.append((-sizes[i], life[name][0], end[r], i))
    items.sort()
    offsets = [None] * n
    placed = []       # (start, end, offset, size)
    total = 0
    for neg, start, stop, i in items:
        size = -neg
        busy = sorted((o, o + s) for a, b, o, s in placed if a <= stop and start <= b)
        at = 0
        for lo, hi in busy:
            if at + size <= lo:
                break
            at = max(at, -(-hi // ALIGN) * ALIGN)
        offsets[i] = at
        placed.append((start, stop, at, size))
        total = max(total, at + size)
    return offsets, total


class Arenas:
    """The blocks of one compiled program: ``slots`` (shape, dtype) at ``offsets``."""

    def __init__(self, slots, offsets, total, spare=1, recycled=()):
        self.slots, self.offsets, self.total = slots, offsets, total
        self.spare = spare
        self.none = (None,) * len(slots)
        self._free = []
        self._lock = threading.Lock()
        self.recycled = {i: Recycled() for i in recycled}   # slots with arrays of their own

    def _new(self):
        block = np.empty(max(self.total, 1), np.uint8)
        views = tuple(None if off is None else
                      np.ndarray(shape, dtype, buffer=block, offset=off)
                      for (shape, dtype), off in zip(self.slots, self.offsets))
        rec = [block, views, None]
        del block
        rec[2] = _holders(rec)
        return rec

    def acquire(self):
        """A block no other call is using: ``[block, views, holders]``; or, when a new
        block above :data:`ALWAYS_KEPT` bytes would take more than a quarter of the memory
        available, ``[None, (None, ...), None]``: the call makes its arrays as before."""
        with self._lock:
            if self._free:
                return self._free.pop()
        if self.total > ALWAYS_KEPT and available_memory() < 4 * self.total:
            return [None, self.none, None]
        return self._new()

    def release(self, rec):
        """Take ``rec`` back for the next call unless something outside still holds a view
        of its block (then it is left to the garbage collector), or the machine is short
        of memory: a block above :data:`ALWAYS_KEPT` bytes is kept only while the memory
        available is at least twice its size (else it is freed now, before the caller goes
        on, as the arrays it replaces were)."""
        if rec[0] is None or _holders(rec) != rec[2]:
            return
        if self.total > ALWAYS_KEPT and available_memory() < 2 * self.total:
            return
        with self._lock:
            if len(self._free) < self.spare:
                self._free.append(rec)

    def clear(self):
        """Drop the kept blocks and the kept output arrays."""
        with self._lock:
            self._free = []
        for pool in self.recycled.values():
            pool.clear()

    def outputs(self, views):
        """``views`` with each recycled slot's array filled in (:class:`Recycled`): one this
        slot had at an earlier call that nothing outside holds any more, else a new one."""
        slots = list(views)
        for i, pool in self.recycled.items():
            slots[i] = pool.empty(*self.slots[i])
        return slots

    def wrap(self, fn):
        """``fn(*inputs, slots)`` as ``call(*inputs)``, each call with a block."""
        if all(off is None for off in self.offsets) and not self.recycled:
            none = self.none

            def call(*inputs):
                return fn(*inputs, none)
            call.__wrapped__ = fn
            return call
        acquire, release = self.acquire, self.release
        outputs = self.outputs if self.recycled else None

        def call(*inputs):
            rec = acquire()
            slots = rec[1] if outputs is None else outputs(rec[1])
            try:
                return fn(*inputs, slots)
            finally:
                slots = None     # its references to the views would hold the block
                release(rec)
        call.__wrapped__ = fn
        call.arenas = self
        return call


def _holders(rec):
    """The references to ``rec``'s block and to each of its views (the same code path at
    creation and at release): a view of the block made by the program, or one of the
    slot views themselves, kept by anything outside the call raises one of them."""
    return sys.getrefcount(rec[0]), tuple(
        0 if v is None else sys.getrefcount(v) for v in rec[1])

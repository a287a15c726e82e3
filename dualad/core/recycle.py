"""Large arrays handed out again once nothing outside holds them: where a result the caller
keeps gets its memory from, call after call.

A large NumPy array is memory the C allocator maps from the kernel when it is made and
unmaps when it is freed (glibc maps every block above its threshold, at most 32 MiB, on
its own), so every call that returns a new one pays for its pages again: the kernel
faults them in and zeroes them, and on a virtual machine that reports free memory to its
host (virtio-balloon free page reporting, ~2 s after the free) it fetches them from the
host first. A bundle-adjustment Jacobian of 10⁶ observations returns ~0.4 GB of such
arrays per call; between two calls a caller does other work (a sparse solve) and the
pages of the last result have gone back to the host by then: the sweep's call took
1.2-2.4 s, 0.2-0.5 s of it alone.

:class:`Recycled` keeps the arrays it handed out (at most ``keep``) and gives one back
when its reference count says only the pool holds it: every view of an array holds a
reference to it, and so does anything keeping it (a SciPy matrix, a memoryview), so the
count tells exactly when the caller has dropped it (``J = jac(x)`` in a loop drops the
last result as the next one is made: two arrays serve the whole loop). A recycled array
holds what the caller left in it: :meth:`Recycled.copy` writes its source over it.

Memory: up to ``keep`` arrays are kept per site after the caller dropped them. An array
above :data:`ALWAYS_KEPT` bytes is kept only when the machine had four times its size
available (``MemAvailable``) as it was made, as a jitted program's block of memory is;
short of memory, the site makes a new array as before.
"""
from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np

__all__ = ["Recycled", "available_memory", "ALWAYS_KEPT"]

ALWAYS_KEPT = 1 << 26    # bytes: memory up to this size is kept whatever memory is left


def available_memory():
    """Bytes of memory the machine can still give: Linux's ``MemAvailable`` (free memory
    plus the page cache it can drop), else the free pages, else unbounded."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return float("inf")


class Recycled:
    """The arrays one site hands out, given out again once nothing outside holds them.

    An array is free when its reference count is the pool's own: every view of it, and
    anything keeping it (a SciPy matrix, a memoryview), holds a reference. The
    ``J = jac(x)`` loop of a caller then needs two arrays for all its calls. Thread-safe.

    Parameters
    ----------
    keep : int, default 2
        How many arrays are kept: the caller's last result and one free for the next.

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.extend import Recycled
    >>> pool = Recycled()
    >>> a = pool.empty((3,), np.float64)
    >>> a is pool.empty((3,), np.float64)      # still held here: a new one
    False
    >>> b = a.__array_interface__["data"][0]; del a
    >>> pool.empty((3,), np.float64).__array_interface__["data"][0] == b
    True
    """

    __slots__ = ("keep", "_kept", "_lock")

    def __init__(self, keep=2):
        self.keep = keep
        self._kept = []          # [array, its reference count when only the pool holds it]
        self._lock = threading.Lock()

    def empty(self, shape, dtype):
        """An uninitialised array: a kept one nothing else holds, else a new one (kept,
        within the memory policy).

        Parameters
        ----------
        shape : tuple of int
            Its shape.
        dtype : numpy.dtype or type
            Its dtype.

        Returns
        -------
        numpy.ndarray
            A new view of an array no one else holds (a new object at every call:
            a weak reference to an earlier result dies with it); its values are what
            its last holder left.
        """
        shape, dtype = tuple(shape), np.dtype(dtype)
        with self._lock:
            kept = self._kept
            for entry in kept:
                a = entry[0]
                if sys.getrefcount(entry[0]) == entry[1] + 1 and a.shape == shape \
                        and a.dtype == dtype:
                    return a[...]
                del a
            size = math.prod(shape) * dtype.itemsize
            if size > ALWAYS_KEPT and available_memory() < 4 * size:
                return np.empty(shape, dtype)
            kept.append([np.empty(shape, dtype), 0])
            del kept[:-self.keep]
            kept[-1][1] = sys.getrefcount(kept[-1][0])
            return kept[-1][0][...]

    def copy(self, a):
        """A copy of ``a`` in a recycled array.

        Parameters
        ----------
        a : numpy.ndarray
            The array to copy.

        Returns
        -------
        numpy.ndarray
            An array of ``a``'s shape and dtype holding ``a``'s values, no one else's.
        """
        out = self.empty(a.shape, a.dtype)
        np.copyto(out, a)
        return out

    def clear(self):
        """Drop the kept arrays (the caller's are theirs)."""
        with self._lock:
            self._kept = []

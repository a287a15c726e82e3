"""Keep freed memory in the process heap instead of returning it to the OS at once.

A batched sweep allocates and frees many arrays of the same few sizes (the
tangents or cotangents of each operation, B directions at a time). With
glibc's default settings, heap memory above the top of the last live block is
handed back to the OS as soon as it exceeds a small threshold, and the next
allocation of the same size faults every page in again: on a 2-core VM a
200 x 200 vector-mode JVP spent two thirds of its time in page faults.
``mallopt(M_TOP_PAD, 64 MiB)`` keeps up to 64 MiB of slack at the top of the
heap, so a sweep reuses warm pages. It speeds up plain NumPy code in the same
process too (measured: ``E * x`` twice and a sum, E 200 x 200: 300 us -> 70 us).

This is a process-wide allocator setting (Linux with glibc only), so dualad
never applies it by itself: importing dualad leaves the allocator as it was.
Opt in explicitly, either by calling :func:`dualad.keep_heap` (from then on, for
the whole process) or by setting the environment variable
``DUALAD_KEEP_HEAP=1`` before importing dualad. It costs at most ``pad`` bytes
of resident memory. BENCHMARKS.md gives the vector-mode Jacobian and Hessian
times both ways (``python bench/run.py --keep-heap``).
"""
from __future__ import annotations

import ctypes
import os
import platform

__all__ = ["keep_heap", "TOP_PAD_BYTES"]

M_TOP_PAD = -2
TOP_PAD_BYTES = 64 * 2 ** 20

#: Whether the setting was applied in this process.
applied = False


def keep_heap(pad: int = TOP_PAD_BYTES) -> bool:
    """Ask glibc's malloc to keep ``pad`` bytes of freed memory at the top of the heap.

    Calls ``mallopt(M_TOP_PAD, pad)`` for the whole process: an explicit opt-in,
    never applied by importing dualad (or set ``DUALAD_KEEP_HEAP=1`` before the
    import). Batched sweeps allocate and free many arrays of the same few sizes;
    with the slack kept, the next allocation reuses warm pages instead of faulting
    every page in again (a 200 x 200 vector-mode JVP spent two thirds of its time
    in page faults without it). It costs at most ``pad`` bytes of resident
    memory, and it speeds up other NumPy code in the process too.

    Parameters
    ----------
    pad : int, default 64 MiB
        The slack, in bytes, kept at the top of the heap.

    Returns
    -------
    bool
        True if the setting was applied (Linux with glibc), False otherwise
        (other platforms: nothing changes).

    Examples
    --------
    The call changes the allocator of the whole process, so it is not run here:

    >>> dualad.keep_heap()   # doctest: +SKIP
    True

    Whether it was applied in this process:

    >>> import dualad.interpreters.reverse.heap
    >>> isinstance(dualad.interpreters.reverse.heap.applied, bool)
    True
    """
    global applied
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        applied = bool(libc.mallopt(M_TOP_PAD, int(pad)))
    except (OSError, AttributeError):
        applied = False
    return applied


if os.environ.get("DUALAD_KEEP_HEAP", "0") == "1":   # the user's explicit opt-in
    keep_heap()

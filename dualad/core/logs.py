"""dualad's loggers: one ``logging`` hierarchy under ``"dualad"``, silent by default.

Each part of the library that makes a decision a user may want to follow writes to its
own child of ``logging.getLogger("dualad")`` (docs/logging.md shows real output):

- ``"dualad.jacobians"``: the planner. One INFO line per plan (the mode chosen and why,
  the coloring and its number of colors, the chunk size); the estimated cost of every
  alternative at DEBUG.
- ``"dualad.jit"``: each trace and retrace of a jitted function with its reason and the
  arguments' signature (DEBUG for the first trace, INFO for a retrace), and each
  fallback to running the function without jit (WARNING, besides the
  :class:`dualad.JitRetraceWarning` already warned).
- ``"dualad.distributed"``: each chunk of an ``executor=`` sweep sent and finished
  (DEBUG), with its seconds, and each retry of a lost chunk (WARNING).
- ``"dualad.checkpoint"``: the schedule a checkpointed reverse sweep follows
  (``scan(checkpoints="binomial")``, ``while_loop``'s online snapshots, ``grad(...,
  max_memory=)``'s remat plan): snapshots, recomputation (INFO).
- ``"dualad.autograd"``: the imperative face's backward steps (``record_backward``).

The library adds one :class:`logging.NullHandler` to ``"dualad"`` (so an application
without logging configured sees nothing from it on stderr: ``logging.lastResort`` is
used only when no handler is found) and nothing else: it never sets a level, adds
another handler or touches the root logger. Turning the logs on is the application's
call (``logging.basicConfig(level=logging.INFO)``, or a level on one child). A message
that costs something to build is built only under ``logger.isEnabledFor(level)``, so a
disabled logger costs one method call where it is asked, and none on the hot paths (a
replayed jit call, a cached grad), which never log.

``import dualad`` does not import :mod:`logging` (about 5 ms): the first
:func:`logger` call does, and installs the NullHandler then, before any record can be
written.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = ["ROOT", "PARTS", "logger", "DEBUG", "INFO", "WARNING"]

#: logging's levels, for the library's call sites without importing logging with dualad
DEBUG, INFO, WARNING = 10, 20, 30

#: The name of the hierarchy's root logger.
ROOT = "dualad"

#: The children, ``"dualad.<part>"``, and what each says (docs/logging.md).
PARTS = {
    "jacobians": "planner decisions: the mode, the coloring, the chunk; costs at DEBUG",
    "jit": "traces and retraces with reason and signature; fallbacks without jit",
    "distributed": "executor= sweeps: chunks sent and finished, seconds, retries",
    "checkpoint": "checkpointing schedules: snapshots and recomputation",
    "autograd": "the imperative face: each backward step under record_backward()",
}


def logger(part: str) -> logging.Logger:
    """Return the library's logger of one part, ``logging.getLogger("dualad.<part>")``.

    The one way the library names its loggers (docs/logging.md): each part writes to its
    own child of ``"dualad"``, which carries no level and no handler of its own.

    Parameters
    ----------
    part : str
        One of ``"jacobians"``, ``"jit"``, ``"distributed"``, ``"checkpoint"``,
        ``"autograd"`` (:data:`PARTS`).

    Returns
    -------
    logging.Logger
        The same object as ``logging.getLogger("dualad." + part)``.

    Raises
    ------
    ValueError
        An unknown ``part``; the message lists the known ones.

    Examples
    --------
    >>> import logging
    >>> from dualad.extend import logger
    >>> logger("jit") is logging.getLogger("dualad.jit")
    True
    """
    if part not in PARTS:
        raise ValueError(f"dualad.extend.logger: unknown part {part!r}; the loggers are "
                         f"{', '.join(f'dualad.{p}' for p in PARTS)}")
    import logging
    if not _INSTALLED:
        _install_null_handler()
    return logging.getLogger(f"{ROOT}.{part}")


_INSTALLED = False
_LOCK = threading.Lock()


def _install_null_handler():
    """One :class:`logging.NullHandler` on ``"dualad"``, once per process (a reload of
    this module, or two threads asking at once, add none)."""
    global _INSTALLED
    import logging
    with _LOCK:
        root = logging.getLogger(ROOT)
        if not any(type(h) is logging.NullHandler for h in root.handlers):
            root.addHandler(logging.NullHandler())
        _INSTALLED = True

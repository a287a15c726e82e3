"""The teaching tools: the evaluation trace of a computation (:mod:`.evaltrace`) and its
text and plot renderings (:mod:`.evalrender`, :mod:`.evalplot`), the operation counter
(:mod:`.opcount`: elementary operations of a sweep, by name), the expression language of
the command line (:mod:`.expr`) and the ``dualad`` command itself (:mod:`.cli`).

Public names: :func:`count_ops` and :class:`OpCounter` (the paper reproductions count
with them); ``dualad.trace`` is the evaluation trace.
"""
from .opcount import OpCounter, count_ops  # noqa: F401

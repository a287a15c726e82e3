"""The teaching tools: the evaluation trace of a computation (:mod:`.evaltrace`) and its
text and plot renderings (:mod:`.evalrender`, :mod:`.evalplot`), the expression
language of the command line (:mod:`.expr`) and the ``dualad`` command itself
(:mod:`.cli`)."""
